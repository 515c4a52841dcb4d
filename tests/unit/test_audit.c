/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the audit log (runtime/sandbox/audit/audit.c, audit_files.c,
 * audit_notify.c's rules, audit_paths.c's decoding and resolution) and
 * learn mode's profile (learn.c). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runtime/sandbox/audit/audit.h"
#include "../../runtime/sandbox/audit/audit_files.h"
#include "../../runtime/sandbox/audit/audit_notify.h"
#include "../../runtime/sandbox/audit/audit_paths.h"
#include "../../runtime/sandbox/egress/egress_policy.h"
#include "../../runtime/sandbox/egress/egress_proxy.h"
#include "../../runtime/sandbox/audit/learn.h"
#include "oci_config.h"
#include "profile.h"
#include "../../runtime/sandbox/sandbox.h"
#include "seccomp.h"
#include "unit.h"
#include "utils.h"

static char *json_of(const char *s, size_t n)
{
	struct ar_jbuf b = { 0 };

	ar_jbuf_str(&b, s, n);
	return b.p; /* malloc'd */
}

#define CHECK_JSON(in, want)                                                   \
	do {                                                                   \
		char *_j = json_of((in), sizeof(in) - 1);                      \
		CHECK_STR_EQ(_j, (want));                                      \
		free(_j);                                                      \
	} while (0)

UNIT_TEST(json_escapes_quotes_backslashes_controls)
{
	CHECK_JSON("plain", "\"plain\"");
	CHECK_JSON("say \"hi\"", "\"say \\\"hi\\\"\"");
	CHECK_JSON("a\\b", "\"a\\\\b\"");
	CHECK_JSON("l1\nl2\r\t", "\"l1\\nl2\\r\\t\"");
	CHECK_JSON("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	/* an embedded NUL stays inside the string */
	CHECK_JSON("a\0b", "\"a\\u0000b\"");
}

UNIT_TEST(json_utf8_valid_kept_invalid_replaced)
{
	CHECK_JSON("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		   "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	CHECK_JSON("bad\xff", "\"bad\\ufffd\"");
	/* overlong '/', a surrogate, above U+10FFFF, truncated */
	CHECK_JSON("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	CHECK_JSON("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK_JSON("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	CHECK_JSON("x\xe2\x82", "\"x\\ufffd\\ufffd\"");
	{
		struct ar_jbuf b = { 0 };

		ar_jbuf_cstr(&b, NULL);
		CHECK_STR_EQ(b.p, "null");
		ar_jbuf_free(&b);
	}
}

static char *read_all(const char *path)
{
	char *buf = ar_xcalloc(1, 65536);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t r = read(fd, buf, 65535);

		(void)r;
		close(fd);
	}
	return buf;
}

UNIT_TEST(audit_lines_start_exit_proxy)
{
	char path[] = "/tmp/ar-audit-XXXXXX";
	struct ar_error err = AR_ERROR_INIT;
	struct ar_audit *a = NULL;
	char *argv[] = { "sh", "-c", "echo \"x\"\nnext", NULL };
	struct ar_egress_event ev = {
		"connect", "evil.test", 443,
		NULL,	   false,	"agentrun: blocked evil.test:443",
		true,	   false,	NULL,
		false
	};
	_cleanup_free_ char *text = NULL;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	CHECK_INT_EQ(ar_audit_open(path, &a, &err), 0);
	ar_audit_start(a, argv, "/ws",
		       "userns(keep-id 1000:1000),netns(loopback only),seccomp",
		       "enforce");
	ar_audit_egress_event(&ev, a);
	ar_audit_exit(a, 3, 1.5);
	ar_audit_close(a);
	text = read_all(path);
	unlink(path);
	CHECK_STR_CONTAINS(text, "\"event\":\"start\",\"argv\":[\"sh\",\"-c\","
				 "\"echo \\\"x\\\"\\nnext\"]");
	CHECK_STR_CONTAINS(
		text,
		"\"protections\":[\"userns(keep-id 1000:1000)\",\"netns(loopback only)\",\"seccomp\"]");
	CHECK_STR_CONTAINS(
		text,
		"\"event\":\"proxy\",\"proto\":\"connect\",\"host\":\"evil.test\",\"port\":443,\"address\":null,\"allowed\":false");
	CHECK_STR_CONTAINS(
		text, "\"event\":\"exit\",\"status\":3,\"duration\":1.500}\n");
	/* one line per event */
	{
		size_t lines = 0;

		for (const char *p = text; *p; p++)
			lines += *p == '\n';
		CHECK_INT_EQ((int)lines, 3);
	}
	CHECK(ar_audit_open("/nonexistent-dir/x", &a, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "--audit `/nonexistent-dir/x`");
}

static void collect(char kind, const char *path, bool dir, void *data)
{
	char *out = data;
	size_t l = strlen(out);

	snprintf(out + l, 1024 - l, "%c %s%s\n", kind, path, dir ? "/" : "");
}

UNIT_TEST(scan_diff_added_modified_deleted_git_objects_skipped)
{
	char dir[] = "/tmp/ar-scan-XXXXXX";
	struct sb_scan before, after;
	char out[1024] = "";
	char p[256];
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/keep", dir);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && write(fd, "a", 1) == 1);
	close(fd);
	snprintf(p, sizeof(p), "%s/gone", dir);
	close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	snprintf(p, sizeof(p), "%s/.git", dir);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/.git/HEAD", dir);
	close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	snprintf(p, sizeof(p), "%s/.git/objects", dir);
	CHECK(mkdir(p, 0755) == 0);
	sb_scan_take(dir, &before);
	CHECK_INT_EQ((int)before.n, 5);

	snprintf(p, sizeof(p), "%s/keep", dir);
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	CHECK(fd >= 0 && write(fd, "bc", 2) == 2);
	close(fd);
	snprintf(p, sizeof(p), "%s/gone", dir);
	unlink(p);
	/* .git is scanned (config, hooks, refs), its object store not */
	snprintf(p, sizeof(p), "%s/.git/index", dir);
	close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	snprintf(p, sizeof(p), "%s/.git/objects/ab", dir);
	close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	snprintf(p, sizeof(p), "%s/new", dir);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/new/f", dir);
	close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	sb_scan_take(dir, &after);
	CHECK_INT_EQ((int)sb_scan_diff(&before, &after, collect, out), 5);
	CHECK_STR_EQ(out, "A .git/index\nD gone\nM keep\nA new/\nA new/f\n");
	sb_scan_free(&before);
	sb_scan_free(&after);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	CHECK(system(p) == 0);
}

UNIT_TEST(notify_rules_move_allowed_syscalls)
{
	struct ar_arena a;
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp *sc = NULL;
	bool notify_execve = false, allow_execve = false, allow_read = false;

	memset(&a, 0, sizeof(a));
	CHECK_INT_EQ(oci_seccomp_default(&a, &sc, &err), 0);
	CHECK_INT_EQ(sb_notify_rules(sc, &a, SB_NOTIFY_EXEC | SB_NOTIFY_CONNECT,
				     "/tmp/x/listener", &err),
		     0);
	CHECK_STR_EQ(sc->listener_path, "/tmp/x/listener");
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		for (size_t j = 0; j < sc->syscalls[i].names.n; j++) {
			const char *n = sc->syscalls[i].names.v[j];
			bool notify = sc->syscalls[i].action ==
				      OCI_SCMP_ACT_NOTIFY;

			if (strcmp(n, "execve") == 0) {
				notify_execve |= notify;
				allow_execve |= !notify;
			}
			if (strcmp(n, "read") == 0)
				allow_read |= !notify;
		}
	}
	CHECK(notify_execve);
	CHECK(!allow_execve);
	CHECK(allow_read);
	/* one listener per filter chain: a second time is refused */
	CHECK(sb_notify_rules(sc, &a, SB_NOTIFY_EXEC, "/tmp/y", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "listener");
	CHECK(sb_notify_rules(NULL, &a, SB_NOTIFY_EXEC, "/tmp/y", &err) < 0);
	oci_arena_free(&a);
}

/* The action and conditions of the rules naming `name` after
 * sb_notify_rules: bit 0 an unconditional NOTIFY, 1 a conditional
 * NOTIFY, 2 an unconditional ALLOW, 3 a conditional ALLOW. */
static int rules_for(const struct oci_seccomp *sc, const char *name)
{
	int m = 0;

	for (size_t i = 0; i < sc->n_syscalls; i++) {
		const struct oci_seccomp_syscall *s = &sc->syscalls[i];

		for (size_t j = 0; j < s->names.n; j++) {
			if (strcmp(s->names.v[j], name) != 0)
				continue;
			if (s->action == OCI_SCMP_ACT_NOTIFY)
				m |= s->n_args ? 2 : 1;
			else if (s->action == OCI_SCMP_ACT_ALLOW)
				m |= s->n_args ? 8 : 4;
		}
	}
	return m;
}

UNIT_TEST(notify_rules_writes_reads_stay_allowed)
{
	struct ar_arena a;
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp *sc = NULL;
	struct ar_seccomp_filter *f = NULL;

	memset(&a, 0, sizeof(a));
	CHECK_INT_EQ(oci_seccomp_default(&a, &sc, &err), 0);
	CHECK_INT_EQ(sb_notify_rules(sc, &a,
				     SB_NOTIFY_EXEC | SB_NOTIFY_CONNECT |
					     SB_NOTIFY_WRITES,
				     "/tmp/x/listener", &err),
		     0);
	/* open/openat: a read is allowed by the kernel, a write notified */
	CHECK_INT_EQ(rules_for(sc, "openat"), 2 | 8);
	CHECK_INT_EQ(rules_for(sc, "open"), 2 | 8);
	/* the rest: notified whatever the arguments; the profile's setid
	 * conditions (chmod, creat, mknod) are the listener's now */
	CHECK_INT_EQ(rules_for(sc, "unlinkat"), 1);
	CHECK_INT_EQ(rules_for(sc, "renameat2"), 1);
	CHECK_INT_EQ(rules_for(sc, "chmod"), 1);
	CHECK_INT_EQ(rules_for(sc, "fchmodat"), 1);
	CHECK_INT_EQ(rules_for(sc, "creat"), 1);
	CHECK_INT_EQ(rules_for(sc, "linkat"), 1);
	CHECK_INT_EQ(rules_for(sc, "symlinkat"), 1);
	CHECK_INT_EQ(rules_for(sc, "setxattr"), 1);
	/* a send opening a TCP connection (MSG_FASTOPEN) is notified, an
	 * ordinary send allowed by the kernel */
	CHECK_INT_EQ(rules_for(sc, "sendto"), 2 | 8);
	CHECK_INT_EQ(rules_for(sc, "sendmsg"), 2 | 8);
	CHECK_INT_EQ(rules_for(sc, "sendmmsg"), 2 | 8);
	CHECK_INT_EQ(rules_for(sc, "connect"), 1);
	/* reads, fd-based changes and what the profile refuses are not */
	CHECK_INT_EQ(rules_for(sc, "read"), 4);
	CHECK_INT_EQ(rules_for(sc, "stat") & 3, 0);
	CHECK_INT_EQ(rules_for(sc, "fchmod"), 8);
	CHECK_INT_EQ(rules_for(sc, "openat2"), 0);
	/* the result compiles (libseccomp: two actions on one syscall) */
	CHECK_INT_EQ(ar_seccomp_compile(sc, &f, &err), 0);
	CHECK(ar_seccomp_filter_needs_notify(f));
	ar_seccomp_filter_free(f);
	oci_arena_free(&a);

	/* learn mode sees every open */
	memset(&a, 0, sizeof(a));
	CHECK_INT_EQ(oci_seccomp_default(&a, &sc, &err), 0);
	CHECK_INT_EQ(sb_notify_rules(sc, &a, SB_NOTIFY_PATHS | SB_NOTIFY_WRITES,
				     "/tmp/x/listener", &err),
		     0);
	CHECK_INT_EQ(rules_for(sc, "openat"), 1);
	/* without connect events, sends stay as the profile has them */
	CHECK_INT_EQ(rules_for(sc, "sendto"), 4);
	oci_arena_free(&a);
}

UNIT_TEST(notify_rules_refuse_a_condition_the_listener_cannot_keep)
{
	struct ar_arena a;
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp *sc = NULL;

	memset(&a, 0, sizeof(a));
	CHECK_INT_EQ(oci_seccomp_default(&a, &sc, &err), 0);
	/* a rule allowing unlinkat only with dirfd 3 */
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		struct oci_seccomp_syscall *s = &sc->syscalls[i];

		if (s->action != OCI_SCMP_ACT_ALLOW || s->n_args == 0)
			continue;
		s->names.v[0] = (char *)"unlinkat";
		s->args[0].index = 0;
		s->args[0].value = 3;
		s->args[0].op = OCI_SCMP_CMP_EQ;
		break;
	}
	CHECK(sb_notify_rules(sc, &a, SB_NOTIFY_WRITES, "/tmp/x/l", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "`unlinkat` under a condition");
	oci_arena_free(&a);
}

UNIT_TEST(fcall_decode_paths_flags_follow)
{
	const char *p1 = "a/b", *p2 = "c";
	uint64_t args[6] = { 0 };
	struct sb_fcall fc;
	int mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	char *s;

	CHECK(mem >= 0);
	/* openat(AT_FDCWD, "a/b", O_RDONLY): no write */
	args[0] = (uint64_t)(int64_t)AT_FDCWD;
	args[1] = (uint64_t)(uintptr_t)p1;
	args[2] = O_RDONLY;
	CHECK(sb_fcall_decode("openat", args, mem, &fc));
	CHECK(!fc.write);
	CHECK_INT_EQ((int)fc.n, 1);
	CHECK_INT_EQ(fc.p[0].dfd, AT_FDCWD);
	CHECK(fc.p[0].follow);
	s = sb_read_str(mem, fc.p[0].addr);
	CHECK_STR_EQ(s, "a/b");
	free(s);
	/* O_WRONLY|O_CREAT|O_EXCL: a write that does not follow a link */
	args[2] = O_WRONLY | O_CREAT | O_EXCL;
	CHECK(sb_fcall_decode("openat", args, mem, &fc));
	CHECK(fc.write);
	CHECK(!fc.p[0].follow);
	CHECK_STR_EQ(fc.op_name, "open");
	args[2] = O_RDONLY | O_NOFOLLOW | O_TRUNC;
	CHECK(sb_fcall_decode("openat", args, mem, &fc));
	CHECK(fc.write);
	CHECK(!fc.p[0].follow);
	/* renameat2(5, "a/b", 6, "c", 0): two names, both moved */
	args[0] = 5;
	args[2] = 6;
	args[3] = (uint64_t)(uintptr_t)p2;
	args[4] = 0;
	CHECK(sb_fcall_decode("renameat2", args, mem, &fc));
	CHECK_INT_EQ((int)fc.n, 2);
	CHECK_INT_EQ(fc.p[0].dfd, 5);
	CHECK_INT_EQ(fc.p[1].dfd, 6);
	CHECK(fc.p[0].move && fc.p[1].move);
	CHECK_STR_EQ(fc.op_name, "rename");
	/* unlinkat with AT_REMOVEDIR is an rmdir */
	args[2] = AT_REMOVEDIR;
	CHECK(sb_fcall_decode("unlinkat", args, mem, &fc));
	CHECK_STR_EQ(fc.op_name, "rmdir");
	CHECK(!fc.p[0].move);
	/* symlink(target, linkpath): the link path only */
	args[0] = (uint64_t)(uintptr_t)p2;
	args[1] = (uint64_t)(uintptr_t)p1;
	CHECK(sb_fcall_decode("symlink", args, mem, &fc));
	CHECK_INT_EQ((int)fc.n, 1);
	CHECK(fc.p[0].addr == (uint64_t)(uintptr_t)p1);
	/* fchownat with AT_SYMLINK_NOFOLLOW; chmod follows; lchown not */
	args[4] = AT_SYMLINK_NOFOLLOW;
	CHECK(sb_fcall_decode("fchownat", args, mem, &fc));
	CHECK(!fc.p[0].follow);
	CHECK(sb_fcall_decode("chmod", args, mem, &fc));
	CHECK(fc.p[0].follow && fc.write);
	CHECK(sb_fcall_decode("lchown", args, mem, &fc));
	CHECK(!fc.p[0].follow);
	CHECK(!sb_fcall_decode("read", args, mem, &fc));
	close(mem);
}

UNIT_TEST(path_resolve_as_the_kernel)
{
	char tmpl[] = "/tmp/agentrun-unit-resolve-XXXXXX", cmd[128], *r;
	char *hooks, *want, *dir;
	int dfd;

	CHECK(mkdtemp(tmpl) != NULL);
	dir = realpath(tmpl, NULL); /* /tmp may be a link */
	CHECK(dir != NULL);
	if (!dir)
		return;
	hooks = ar_xasprintf("%s/.git/hooks", dir);
	CHECK(ar_mkdir_p(hooks, 0755) == 0);
	CHECK(chdir(dir) == 0);
	CHECK(symlink(".git/hooks", "h") == 0); /* relative */
	CHECK(symlink(hooks, "abs") == 0); /* absolute */
	CHECK(symlink(".git/hooks/pre-commit", "dangling") == 0);

	want = ar_xasprintf("%s/pre-commit", hooks);
	/* through a directory link, relative to the cwd */
	r = sb_path_resolve(getpid(), AT_FDCWD, "h/pre-commit", false);
	CHECK_STR_EQ(r, want);
	free(r);
	r = sb_path_resolve(getpid(), AT_FDCWD, "abs/../hooks/./pre-commit",
			    false);
	CHECK_STR_EQ(r, want);
	free(r);
	/* a link as the last component: followed only when asked (even
	 * when it dangles: O_CREAT creates the target) */
	r = sb_path_resolve(getpid(), AT_FDCWD, "dangling", true);
	CHECK_STR_EQ(r, want);
	free(r);
	free(want);
	want = ar_xasprintf("%s/dangling", dir);
	r = sb_path_resolve(getpid(), AT_FDCWD, "dangling", false);
	CHECK_STR_EQ(r, want);
	free(r);
	free(want);
	/* relative to a directory fd; an empty path is the fd itself */
	dfd = open(hooks, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0);
	want = ar_xasprintf("%s/x", hooks);
	r = sb_path_resolve(getpid(), dfd, "x", true);
	CHECK_STR_EQ(r, want);
	free(r);
	free(want);
	r = sb_path_resolve(getpid(), dfd, "", false);
	CHECK_STR_EQ(r, hooks);
	free(r);
	r = sb_path_resolve(getpid(), dfd, "..", false);
	want = ar_xasprintf("%s/.git", dir);
	CHECK_STR_EQ(r, want);
	free(r);
	free(want);
	close(dfd);
	/* a missing directory: the rest by name */
	want = ar_xasprintf("%s/no/such/x", dir);
	r = sb_path_resolve(getpid(), AT_FDCWD, "no/such/../such/x", true);
	CHECK_STR_EQ(r, want);
	free(r);
	free(want);
	/* lexical (learn mode): the link is not followed */
	want = ar_xasprintf("%s/h/pre-commit", dir);
	r = sb_path_lexical(getpid(), AT_FDCWD, "./h//pre-commit");
	CHECK_STR_EQ(r, want);
	free(r);
	free(want);
	CHECK(sb_path_resolve(getpid(), AT_FDCWD, NULL, true) == NULL);
	CHECK(chdir("/") == 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	free(hooks);
	free(dir);
}

UNIT_TEST(learn_writes_a_profile_that_parses)
{
	struct ar_error err = AR_ERROR_INIT;
	struct sb_learn *l = sb_learn_new("/home/me", "/home/me/ws", NULL);
	struct oci_profile *pf = NULL;
	struct ar_egress_event ev = { "connect",   "localhost", 8080,
				      "127.0.0.1", true,	NULL,
				      false,	   false,	NULL,
				      false };
	char dir[] = "/tmp/ar-learn-XXXXXX";
	char *argv[] = { "tool", "--x", NULL };
	_cleanup_free_ char *out = NULL;
	_cleanup_free_ char *text = NULL;
	char cmd[300];

	CHECK(mkdtemp(dir) != NULL);
	out = ar_xasprintf("%s/p.json", dir);
	/* defaults, the workspace, secrets and the home itself are no
	 * extras */
	CHECK(!sb_learn_is_extra(l, "/usr/bin/ls"));
	CHECK(!sb_learn_is_extra(l, "/etc/passwd"));
	CHECK(!sb_learn_is_extra(l, "/home/me/ws/src/x.c"));
	CHECK(!sb_learn_is_extra(l, "/home/me/.ssh/id_rsa"));
	CHECK(!sb_learn_is_extra(l, "/home/me"));
	CHECK(sb_learn_is_extra(l, "/home/me/.config/tool"));
	CHECK(sb_learn_is_extra(l, "/srv/data"));
	/* the test directory is under /tmp, a default: use its parent's
	 * real files through paths that exist everywhere */
	sb_learn_path(l, "/home/me/.ssh/config", false, false);
	sb_learn_path(l, "/nonexistent-learn/x", false, false);
	sb_learn_path(l, "/proc/self/status", false, false);
	sb_learn_egress_event(&ev, l);
	CHECK_INT_EQ(sb_learn_write(l, out, argv, &err), 0);
	text = read_all(out);
	CHECK_STR_CONTAINS(text, "\"ro\": []");
	CHECK_STR_CONTAINS(text, "\"rw\": []");
	CHECK_STR_CONTAINS(
		text,
		"\"net\": {\"allow\": [\"127.0.0.1:8080\", \"localhost:8080\"]}");
	CHECK_STR_CONTAINS(text, "from: tool --x");
	CHECK_INT_EQ(oci_profile_load_file(out, &pf, &err), 0);
	if (pf) {
		CHECK_INT_EQ((int)pf->net_allow.n, 2);
		oci_profile_free(pf);
	}
	sb_learn_free(l);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

UNIT_TEST(learn_policy_allows_every_class_but_metadata)
{
	struct ar_egress_policy p;
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(80) };

	memset(&p, 0, sizeof(p));
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	CHECK(ar_egress_addr_check(&p, (struct sockaddr *)&sin) ==
	      AR_ADDR_LOOPBACK);
	p.learn = true;
	CHECK(ar_egress_addr_check(&p, (struct sockaddr *)&sin) ==
	      AR_ADDR_PUBLIC);
	inet_pton(AF_INET, "10.1.2.3", &sin.sin_addr);
	CHECK(ar_egress_addr_check(&p, (struct sockaddr *)&sin) ==
	      AR_ADDR_PUBLIC);
	inet_pton(AF_INET, "169.254.169.254", &sin.sin_addr);
	CHECK(ar_egress_addr_check(&p, (struct sockaddr *)&sin) ==
	      AR_ADDR_METADATA);
}

UNIT_MAIN()
