/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for live grants (runtime/sandbox/control/control_grant.c:
 * --net rules, their exactness, revoke, pending asks released; the
 * allow/revoke lines of control_proto.c) and the sandbox's checks of a
 * path grant (runtime/sandbox/sandbox_grant.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../runtime/sandbox/control/control_grant.h"
#include "../../runtime/sandbox/control/control_mount.h"
#include "../../runtime/sandbox/control/control_policy.h"
#include "../../runtime/sandbox/control/control_proto.h"
#include "../../runtime/sandbox/control/control_queue.h"
#include "../../runtime/sandbox/egress/egress_tls.h"
#include "../../runtime/sandbox/sandbox_grant.h"
#include "unit.h"
#include "utils.h"

static int net(struct ctl_grants *g, bool revoke, const char *target,
	       char *done, size_t dsize, struct ar_error *err)
{
	struct ctl_msg m = { .op = CTL_OP_GRANT, .revoke = revoke };

	snprintf(m.kind, sizeof(m.kind), "net");
	snprintf(m.target, sizeof(m.target), "%s", target);
	snprintf(m.iface, sizeof(m.iface), "cli");
	return ctl_grants_apply(g, &m, done, dsize, err);
}

UNIT_TEST(grant_net_rules_exactness_revoke)
{
	struct ctl_queue q;
	struct ctl_grants g;
	struct ar_error err = AR_ERROR_INIT;
	char done[512];
	bool exact;

	ctl_queue_init(&q, "t", 5);
	ctl_grants_init(&g, &q);
	/* no proxy: said, after the pattern is checked */
	CHECK(net(&g, false, "http://x", done, sizeof(done), &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "the allowlist takes hosts");
	ar_error_clear(&err);
	CHECK(net(&g, false, "pypi.org", done, sizeof(done), &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "no egress proxy");
	ar_error_clear(&err);
	g.egress = true;
	CHECK(net(&g, false, "ask", done, sizeof(done), &err) < 0);
	ar_error_clear(&err);
	CHECK(net(&g, false, "pypi.org", done, sizeof(done), &err) == 0);
	CHECK(net(&g, false, "*.example.com:443", done, sizeof(done), &err) ==
	      0);
	CHECK(net(&g, false, "127.0.0.1:8080", done, sizeof(done), &err) == 0);
	CHECK(net(&g, false, "10.0.0.1", done, sizeof(done), &err) == 0);
	CHECK(net(&g, false, "pypi.org", done, sizeof(done), &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "granted already");
	ar_error_clear(&err);
	/* names: not exact (the address classes hold) */
	CHECK(ctl_grants_net(&g, "pypi.org", 443, &exact) && !exact);
	CHECK(ctl_grants_net(&g, "a.example.com", 443, &exact) && !exact);
	CHECK(!ctl_grants_net(&g, "a.example.com", 80, &exact));
	CHECK(!ctl_grants_net(&g, "example.org", 443, &exact));
	/* the transparent DNS: any port of the name */
	CHECK(ctl_grants_net(&g, "a.example.com", 0, &exact) && !exact);
	/* an address literal with its port: exact; without: not */
	CHECK(ctl_grants_net(&g, "127.0.0.1", 8080, &exact) && exact);
	CHECK(!ctl_grants_net(&g, "127.0.0.1", 8081, &exact));
	CHECK(ctl_grants_net(&g, "10.0.0.1", 22, &exact) && !exact);
	/* revoke */
	CHECK(net(&g, true, "127.0.0.1:8080", done, sizeof(done), &err) == 0);
	CHECK_STR_CONTAINS(done, "established ones are not cut");
	CHECK(!ctl_grants_net(&g, "127.0.0.1", 8080, &exact));
	CHECK(net(&g, true, "127.0.0.1:8080", done, sizeof(done), &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "was not granted");
	ar_error_clear(&err);
	ctl_grants_release(&g);
	ctl_queue_release(&q);
}

struct asker {
	struct ctl_queue *q;
	bool granted;
	char reason[512];
};

static void *ask_main(void *arg)
{
	struct asker *a = arg;

	a->granted = ctl_queue_ask(a->q, "http", "pypi.org", 443, NULL,
				   a->reason, sizeof(a->reason));
	return NULL;
}

/* a's connection to pypi.org:443 asks, from thread *t: the number of
 * connections waiting, once there is one (5 s at most) */
static int ask_waiting(struct asker *a, pthread_t *t)
{
	int w = 0;

	CHECK(pthread_create(t, NULL, ask_main, a) == 0);
	for (int i = 0; i < 500 && w == 0; i++) {
		pthread_mutex_lock(&a->q->lock);
		w = a->q->n_waiting;
		pthread_mutex_unlock(&a->q->lock);
		usleep(10000);
	}
	return w;
}

UNIT_TEST(grant_net_releases_a_waiting_ask)
{
	struct ctl_queue q;
	struct ctl_grants g;
	struct ar_error err = AR_ERROR_INIT;
	struct asker a = { .q = &q };
	char done[512];
	pthread_t t;

	ctl_queue_init(&q, "t", 30);
	ctl_grants_init(&g, &q);
	g.egress = true;
	CHECK_INT_EQ(ask_waiting(&a, &t), 1);
	CHECK(net(&g, false, "*.org:443", done, sizeof(done), &err) == 0);
	CHECK_STR_CONTAINS(done, "pending requests it matches went through");
	pthread_join(t, NULL);
	CHECK(a.granted);
	ctl_grants_release(&g);
	ctl_queue_release(&q);
}

UNIT_TEST(revoke_net_forgets_a_session_answer)
{
	struct ctl_queue q;
	struct ctl_grants g;
	struct ar_error err = AR_ERROR_INIT;
	struct asker a = { .q = &q };
	char done[512], host[256], why[256];
	uint16_t port;
	pthread_t t;

	ctl_queue_init(&q, "t", 30);
	ctl_grants_init(&g, &q);
	g.egress = true;
	ask_waiting(&a, &t);
	CHECK(ctl_queue_answer(&q, 1, CTL_ANSWER_SESSION, 0, "cli", host,
			       sizeof(host), &port, why, sizeof(why)) == 0);
	pthread_join(t, NULL);
	CHECK(a.granted);
	CHECK_INT_EQ((int)q.n_session, 1);
	CHECK(net(&g, true, "pypi.org:443", done, sizeof(done), &err) == 0);
	CHECK_STR_CONTAINS(done, "session answer");
	CHECK_INT_EQ((int)q.n_session, 0);
	CHECK(net(&g, true, "pypi.org:443", done, sizeof(done), &err) < 0);
	ar_error_clear(&err);
	ctl_grants_release(&g);
	ctl_queue_release(&q);
}

/* {"op":"policy"}: the start's allowlist and `ask`, a secret by its
 * name and hosts only, the live grants, the session and always answers
 * with who gave them; revoke takes them out. */
UNIT_TEST(policy_reply_start_grants_answers)
{
	struct ctl_queue q;
	struct ctl_grants g;
	struct ctl_policy p = { 0 };
	struct ar_egress_policy pol = { 0 };
	struct ar_egress_secret sec = { .name = (char *)"API_TOKEN",
					.value = (char *)"s3cret-value",
					.placeholder =
						(char *)"agentrun-secret-ph" };
	struct ar_error err = AR_ERROR_INIT;
	struct asker a = { .q = &q };
	struct ar_jbuf b = { 0 };
	struct ctl_msg m;
	char done[512], host[256], why[256];
	const char *line = "{\"op\":\"policy\"}";
	uint16_t port;
	pthread_t t;

	CHECK(ctl_proto_parse(line, strlen(line), &m, why, sizeof(why)) == 0);
	CHECK(m.op == CTL_OP_POLICY);
	CHECK(ar_egress_policy_add(&pol, "pypi.org,*.npmjs.org:443,ask",
				   &err) == 0);
	CHECK(ar_egress_policy_add(&sec.hosts, "api.example.com", &err) == 0);
	ctl_queue_init(&q, "t", 30);
	ctl_grants_init(&g, &q);
	g.egress = true;
	ctl_policy_set(&p, &pol, &sec, 1);
	CHECK(net(&g, false, "granted.example:443", done, sizeof(done), &err) ==
	      0);
	ask_waiting(&a, &t);
	CHECK(ctl_queue_answer(&q, 1, CTL_ANSWER_ALWAYS, 0, "web", host,
			       sizeof(host), &port, why, sizeof(why)) == 0);
	pthread_join(t, NULL);
	CHECK(a.granted);
	ctl_policy_reply(&p, "t", "/p.json", &g, &q, &b);
	CHECK(b.len > 0 && b.p[b.len - 1] == '\n');
	CHECK_STR_CONTAINS(b.p, "{\"ok\":true,\"sandbox\":\"t\"");
	CHECK_STR_CONTAINS(b.p, "\"profile\":\"/p.json\"");
	CHECK_STR_CONTAINS(b.p, "\"egress\":true,\"ask\":true");
	CHECK_STR_CONTAINS(b.p, "\"allow\":[\"pypi.org\",\"*.npmjs.org:443\"]");
	CHECK_STR_CONTAINS(
		b.p,
		"\"secrets\":[{\"name\":\"API_TOKEN\",\"hosts\":[\"api.example.com\"]}]");
	CHECK(strstr(b.p, "s3cret-value") == NULL);
	CHECK(strstr(b.p, "agentrun-secret-ph") == NULL);
	CHECK_STR_CONTAINS(
		b.p,
		"\"grants\":[{\"kind\":\"net\",\"target\":\"granted.example:443\"}]");
	CHECK_STR_CONTAINS(
		b.p,
		"\"session\":[{\"target\":\"pypi.org:443\",\"answer\":\"always\",\"interface\":\"web\",\"uid\":0}]");
	ar_jbuf_free(&b);
	/* revoked: gone from the policy */
	CHECK(net(&g, true, "granted.example:443", done, sizeof(done), &err) ==
	      0);
	CHECK(net(&g, true, "pypi.org:443", done, sizeof(done), &err) == 0);
	ctl_policy_reply(&p, "t", NULL, &g, &q, &b);
	CHECK_STR_CONTAINS(b.p, "\"profile\":null");
	CHECK_STR_CONTAINS(b.p, "\"grants\":[],\"session\":[]}");
	ar_jbuf_free(&b);
	ctl_policy_release(&p);
	ar_egress_policy_release(&sec.hosts);
	ar_egress_policy_release(&pol);
	ctl_grants_release(&g);
	ctl_queue_release(&q);
}

UNIT_TEST(grant_proto_lines)
{
	struct ctl_msg m;
	char why[256];
	const char *ok =
		"{\"op\":\"revoke\",\"kind\":\"rw\",\"target\":\"/a b\",\"force\":true,\"interface\":\"cli\"}";

	CHECK(ctl_proto_parse(ok, strlen(ok), &m, why, sizeof(why)) == 0);
	CHECK(m.op == CTL_OP_GRANT && m.revoke && m.force);
	CHECK_STR_EQ(m.kind, "rw");
	CHECK_STR_EQ(m.target, "/a b");
	const char *bad[] = {
		"{\"op\":\"allow\",\"kind\":\"rx\",\"target\":\"/a\",\"interface\":\"cli\"}",
		"{\"op\":\"allow\",\"kind\":\"ro\",\"interface\":\"cli\"}",
		"{\"op\":\"allow\",\"kind\":\"ro\",\"target\":\"/a\",\"force\":1,\"interface\":\"cli\"}",
		"{\"op\":\"allow\",\"kind\":\"ro\",\"target\":\"/a\",\"interface\":\"web\"}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(ctl_proto_parse(bad[i], strlen(bad[i]), &m, why,
				      sizeof(why)) < 0);
}

/* A grant to a sandbox whose process has ended (a zombie, then a pid
 * that may be reused) is refused, never made in whatever has the pid. */
UNIT_TEST(grant_after_the_end_refused)
{
	struct ar_error err = AR_ERROR_INIT;
	pid_t pid = fork();
	int pidfd, fd = -1, st;

	if (pid == 0)
		_exit(0);
	CHECK(pid > 0);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	usleep(50000);
	CHECK(ctl_mount_add(pid, pidfd, "/tmp", false, NULL, &fd, &err) < 0);
	CHECK(fd < 0);
	ar_error_clear(&err);
	waitpid(pid, &st, 0);
	if (pidfd >= 0)
		close(pidfd);
}

static char *mk(const char *dir, const char *rel, bool file)
{
	char *p = ar_xasprintf("%s/%s", dir, rel);

	if (file) {
		int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		if (fd >= 0)
			close(fd);
	} else {
		ar_mkdir_p(p, 0700);
	}
	return p;
}

UNIT_TEST(grant_path_checks)
{
	char tmpl[] = "/tmp/ar-grant-XXXXXX";
	char *home = mkdtemp(tmpl);
	struct ar_error err = AR_ERROR_INIT;
	char **prot = NULL;
	bool hooks_ro = false, git_pin = false, parent_pin = false,
	     vscode_ph = false;
	struct stat st;

	CHECK(home != NULL);
	_cleanup_free_ char *ws = mk(home, "proj", false);
	_cleanup_free_ char *ssh = mk(home, ".ssh", false);
	_cleanup_free_ char *data = mk(home, "data", false);
	_cleanup_free_ char *hooks = mk(home, "data/r/.git/hooks", false);
	_cleanup_free_ char *cfg = mk(home, "data/r/.git/config", true);
	_cleanup_free_ char *vscode = ar_xasprintf("%s/data/.vscode", home);
	struct sb_grant_ctx x;

	sb_grant_init(&x, ws, home, NULL);

	/* the never-share list, itself or held; --force */
	CHECK(sb_grant_check(ssh, false, false, &prot, &x, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "never-share");
	ar_error_clear(&err);
	CHECK(sb_grant_check(home, false, false, &prot, &x, &err) < 0);
	ar_error_clear(&err);
	CHECK(sb_grant_check(ssh, false, true, &prot, &x, &err) == 0);
	/* the workspace, inside or holding it */
	_cleanup_free_ char *sub = mk(home, "proj/sub", false);
	CHECK(sb_grant_check(sub, true, false, &prot, &x, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "workspace");
	ar_error_clear(&err);
	CHECK(sb_grant_check("/proc/sys", false, false, &prot, &x, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "kernel interface");
	ar_error_clear(&err);
	/* --ro: nothing to protect; --rw: hooks read-only, .git pinned,
	 * and the directory on their way */
	CHECK(sb_grant_check(data, false, false, &prot, &x, &err) == 0);
	CHECK(prot == NULL);
	CHECK(sb_grant_check(data, true, false, &prot, &x, &err) == 0);
	CHECK(prot != NULL);
	for (size_t i = 0; prot && prot[i]; i++) {
		_cleanup_free_ char *r = ar_xasprintf("%s/r", data);
		_cleanup_free_ char *g = ar_xasprintf("%s/r/.git", data);

		hooks_ro |= prot[i][0] == 'r' &&
			    strcmp(prot[i] + 1, hooks) == 0;
		git_pin |= strcmp(prot[i] + 1, g) == 0;
		parent_pin |= prot[i][0] == 'p' && strcmp(prot[i] + 1, r) == 0;
		vscode_ph |= prot[i][0] == 'h' &&
			     strcmp(prot[i] + 1, vscode) == 0;
		/* parents first */
		if (i > 0)
			CHECK(strcmp(prot[i - 1] + 1, prot[i] + 1) <= 0);
	}
	for (size_t i = 0; prot && prot[i]; i++)
		free(prot[i]);
	free(prot);
	CHECK(hooks_ro);
	CHECK(git_pin);
	CHECK(parent_pin);
	/* a missing one: a placeholder, made now, gone when the grant
	 * fails (the last one out) */
	CHECK(vscode_ph);
	CHECK(lstat(vscode, &st) == 0 && S_ISDIR(st.st_mode));
	sb_grant_done(data, true, CTL_PATH_FAILED, &x);
	CHECK(lstat(vscode, &st) < 0 && errno == ENOENT);
	/* granted, then revoked: removed, still walked at the end */
	CHECK(sb_grant_check(data, true, false, &prot, &x, &err) == 0);
	for (size_t i = 0; prot && prot[i]; i++)
		free(prot[i]);
	free(prot);
	sb_grant_done(data, true, CTL_PATH_GRANTED, &x);
	CHECK(lstat(vscode, &st) == 0);
	sb_grant_done(data, true, CTL_PATH_REVOKED, &x);
	CHECK(lstat(vscode, &st) < 0 && errno == ENOENT);
	{
		size_t n = 0;
		struct sb_hostexec_dir *d = sb_grant_dirs(&x, &n);

		CHECK(n == 1);
		CHECK_STR_EQ(d[0].dir, data);
		sb_grant_dirs_free(d, n);
	}
	sb_grant_release(&x);
	(void)cfg;
	{
		_cleanup_free_ char *cmd = ar_xasprintf("rm -rf '%s'", home);

		CHECK(system(cmd) == 0);
	}
}

UNIT_MAIN()
