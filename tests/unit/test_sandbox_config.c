/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/sandbox_config.c, sandbox_home.c and
 * spec/config_write.c: the config built from a fake host. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runtime/sandbox/protect/home_secrets.h"
#include "../../runtime/sandbox/sandbox_config.h"
#include "../../runtime/sandbox/sandbox_etc.h"
#include "../../runtime/sandbox/sandbox_kernfs.h"
#include "../../runtime/sandbox/sandbox_nested.h"
#include "../../runtime/sandbox/sandbox_plan.h"
#include "landlock.h"
#include "config_write.h"
#include "error.h"
#include "unit.h"
#include "utils.h"

static char tmpl[] = "/tmp/ar-sbx-unit-XXXXXX";
static char *top, home[512], proj[600], sub[700];
static char *fake_env[] = { "PATH=/usr/bin", "FOO_TOKEN=x", NULL };

static void touch(const char *rel)
{
	char p[1024];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", home, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

static void mk(const char *rel)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/%s", home, rel);
	mkdir(p, 0700);
}

static void setup_home(void)
{
	if (top)
		return;
	top = mkdtemp(tmpl);
	top = realpath(top, NULL);
	snprintf(home, sizeof(home), "%s/home", top);
	mkdir(home, 0700);
	mk(".ssh");
	touch(".ssh/id_ed25519");
	mk(".config");
	mk(".config/gcloud");
	touch(".config/gcloud/credentials.db");
	mk(".config/other");
	touch(".gitconfig");
	touch(".netrc");
	mk("proj");
	mk("proj/.git");
	mk("proj/sub");
	snprintf(proj, sizeof(proj), "%s/proj", home);
	snprintf(sub, sizeof(sub), "%s/proj/sub", home);
}

static void fake_host(struct ar_sandbox_host *h)
{
	setup_home();
	memset(h, 0, sizeof(*h));
	h->uid = 1234;
	h->gid = 2345;
	h->user = "alice";
	h->group = "staff";
	h->home = home;
	h->shell = "/bin/sh";
	h->cwd = sub;
	h->environ = fake_env;
	h->etc = "/etc";
	h->proc = "/proc";
}

static char *argv_true[] = { "true", NULL };

static struct oci_config *build(struct ar_sandbox_opts *o, struct ar_error *err)
{
	struct ar_sandbox_host h;
	struct sb_plan p;
	struct oci_config *cfg = NULL;

	fake_host(&h);
	if (!o->argv)
		o->argv = argv_true;
	if (sb_plan_make(&p, o, &h, NULL, err) < 0 ||
	    ar_sandbox_build_config(&p, &cfg, err) < 0)
		cfg = NULL;
	sb_plan_release(&p);
	return cfg;
}

/* index of the mount at dest (last one), -1 if none */
static long find_mount(const struct oci_config *c, const char *dest,
		       const char *type)
{
	long r = -1;

	for (size_t i = 0; i < c->n_mounts; i++)
		if (strcmp(c->mounts[i].destination, dest) == 0 &&
		    (!type || strcmp(c->mounts[i].type, type) == 0))
			r = (long)i;
	return r;
}

static bool has_opt(const struct oci_mount *m, const char *opt)
{
	for (size_t i = 0; i < m->options.n; i++)
		if (strcmp(m->options.v[i], opt) == 0)
			return true;
	return false;
}

static char *hp(const char *rel)
{
	static char b[4][1024];
	static int k;

	k = (k + 1) % 4;
	snprintf(b[k], sizeof(b[k]), "%s/%s", home, rel);
	return b[k];
}

UNIT_TEST(workspace_is_git_top)
{
	char *w;

	setup_home();
	w = ar_sandbox_find_workspace(sub);
	CHECK_STR_EQ(w, proj);
	free(w);
	w = ar_sandbox_find_workspace(home);
	CHECK_STR_EQ(w, home);
	free(w);
}

UNIT_TEST(secret_paths)
{
	CHECK(ar_sandbox_path_is_secret("/h", "/h/.ssh"));
	CHECK(ar_sandbox_path_is_secret("/h", "/h/.ssh/id_rsa"));
	CHECK(ar_sandbox_path_is_secret("/h", "/h/.config/gcloud"));
	CHECK(!ar_sandbox_path_is_secret("/h", "/h/.sshx"));
	CHECK(!ar_sandbox_path_is_secret("/h", "/h/.config"));
	CHECK(!ar_sandbox_path_is_secret("/h", "/h"));
}

UNIT_TEST(default_layout)
{
	struct ar_sandbox_opts o = { .tty = 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *c = build(&o, &err);
	long ih, iw, ig;

	CHECK(c != NULL);
	if (!c) {
		printf("# %s\n", err.msg);
		return;
	}
	ih = find_mount(c, home, "tmpfs");
	iw = find_mount(c, proj, "bind");
	ig = find_mount(c, hp(".gitconfig"), "bind");
	CHECK(ih >= 0 && iw > ih && ig > ih);
	CHECK(has_opt(&c->mounts[iw], "rw"));
	/* a file: "ro" (crun refuses "rro" on a file target) */
	CHECK(ig >= 0 && has_opt(&c->mounts[ig], "ro"));
	CHECK(find_mount(c, "/usr", "bind") >= 0);
	CHECK(has_opt(&c->mounts[find_mount(c, "/usr", "bind")], "rro"));
	CHECK(find_mount(c, "/tmp", "tmpfs") >= 0);
	/* nothing of the secrets is bound; the home tmpfs hides them */
	for (size_t i = 0; i < c->n_mounts; i++)
		CHECK(!c->mounts[i].source ||
		      !ar_sandbox_path_is_secret(home, c->mounts[i].source));
	CHECK_STR_EQ(c->process.cwd, sub);
	CHECK_INT_EQ(c->process.user.uid, 1234);
	CHECK_INT_EQ(c->linux_.uid_mappings.n, 1);
	CHECK_INT_EQ(c->linux_.uid_mappings.items[0].container_id, 1234);
	CHECK_INT_EQ(c->linux_.uid_mappings.items[0].host_id, 1234);
	CHECK_INT_EQ(c->linux_.gid_mappings.items[0].host_id, 2345);
	CHECK(oci_config_find_ns(c, OCI_NS_NETWORK) != NULL);
	CHECK(oci_config_find_ns(c, OCI_NS_USER) != NULL);
	CHECK_STR_EQ(oci_config_annotation(c, "run.agentrun.net.loopback"),
		     "up");
	CHECK(c->process.no_new_privileges);
	CHECK(c->linux_.seccomp != NULL);
	oci_config_free(c);
}

UNIT_TEST(parent_bind_still_hides_secret)
{
	const char *ro[] = { "~/.config" };
	struct ar_sandbox_opts o = { .tty = 0, .ro = { ro, 1 } };
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *c = build(&o, &err);
	long ib, ih;

	CHECK(c != NULL);
	if (!c) {
		printf("# %s\n", err.msg);
		return;
	}
	ib = find_mount(c, hp(".config"), "bind");
	ih = find_mount(c, hp(".config/gcloud"), "tmpfs");
	CHECK(ib >= 0 && ih > ib);
	CHECK(find_mount(c, hp(".config/other"), NULL) < 0);
	oci_config_free(c);
}

UNIT_TEST(home_as_workspace_hides_secrets)
{
	struct ar_sandbox_opts o = { .tty = 0, .workspace = "~" };
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *c = build(&o, &err);
	long iw;

	CHECK(c != NULL);
	if (!c) {
		printf("# %s\n", err.msg);
		return;
	}
	iw = find_mount(c, home, "bind");
	CHECK(iw >= 0);
	CHECK(find_mount(c, hp(".ssh"), "tmpfs") > iw);
	CHECK(find_mount(c, hp(".config/gcloud"), "tmpfs") > iw);
	/* a secret file: /dev/null over it */
	CHECK(find_mount(c, hp(".netrc"), "bind") > iw);
	CHECK_STR_EQ(c->mounts[find_mount(c, hp(".netrc"), "bind")].source,
		     "/dev/null");
	oci_config_free(c);
}

UNIT_TEST(secret_binds_refused)
{
	const char *rw[] = { "~/.ssh" };
	const char *ro[] = { "~/.ssh/id_ed25519" };
	struct ar_sandbox_opts o1 = { .tty = 0, .rw = { rw, 1 } };
	struct ar_sandbox_opts o2 = { .tty = 0, .ro = { ro, 1 } };
	struct ar_sandbox_opts o3 = { .tty = 0, .workspace = "~/.ssh" };
	struct ar_error err = AR_ERROR_INIT;

	CHECK(build(&o1, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, "never-share");
	ar_error_clear(&err);
	CHECK(build(&o2, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, "--ro");
	ar_error_clear(&err);
	CHECK(build(&o3, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, "never-share");
}

UNIT_TEST(shared_system_dirs_are_not_workspaces)
{
	struct ar_sandbox_opts o1 = { .tty = 0, .workspace = "/tmp" };
	struct ar_sandbox_opts o2 = { .tty = 0, .workspace = "/" };
	struct ar_error err = AR_ERROR_INIT;

	CHECK(build(&o1, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, "shared with the whole system");
	ar_error_clear(&err);
	CHECK(build(&o2, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, "`/`");
}

UNIT_TEST(missing_paths_are_errors)
{
	const char *ro[] = { "~/does-not-exist" };
	const char *hide[] = { "/nonexistent/x" };
	struct ar_sandbox_opts o1 = { .tty = 0, .ro = { ro, 1 } };
	struct ar_sandbox_opts o2 = { .tty = 0, .hide = { hide, 1 } };
	struct ar_error err = AR_ERROR_INIT;

	CHECK(build(&o1, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, "--ro `~/does-not-exist`");
	ar_error_clear(&err);
	CHECK(build(&o2, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, "--hide");
}

UNIT_TEST(hide_inside_workspace)
{
	const char *hide[] = { "~/proj/sub" };
	struct ar_sandbox_opts o = { .tty = 0, .hide = { hide, 1 } };
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *c = build(&o, &err);

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(find_mount(c, sub, "tmpfs") > find_mount(c, proj, "bind"));
	oci_config_free(c);
}

UNIT_TEST(net_host_shares_netns)
{
	struct ar_sandbox_opts o = { .tty = 0, .net = AR_SANDBOX_NET_HOST };
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *c = build(&o, &err);

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(oci_config_find_ns(c, OCI_NS_NETWORK) == NULL);
	CHECK(oci_config_annotation(c, "run.agentrun.net.loopback") == NULL);
	CHECK_STR_EQ(oci_config_annotation(c, "run.agentrun.sandbox.net"),
		     "host");
	oci_config_free(c);
}

UNIT_TEST(written_config_parses_back)
{
	struct ar_sandbox_opts o = { .tty = 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *c = build(&o, &err), *back = NULL;
	char *json = NULL;
	size_t len;

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(oci_config_to_json(c, &json, &len, &err) == 0);
	CHECK(json && oci_config_parse(json, len, "w.json", &back, &err) == 0);
	if (!back) {
		printf("# %s\n", err.msg);
		goto out;
	}
	CHECK_INT_EQ(back->n_mounts, c->n_mounts);
	for (size_t i = 0; i < c->n_mounts && i < back->n_mounts; i++) {
		CHECK_STR_EQ(back->mounts[i].destination,
			     c->mounts[i].destination);
		CHECK_INT_EQ(back->mounts[i].options.n, c->mounts[i].options.n);
	}
	CHECK_INT_EQ(back->linux_.n_namespaces, c->linux_.n_namespaces);
	CHECK_INT_EQ(back->process.env.n, c->process.env.n);
	CHECK_INT_EQ(back->process.args.n, 1);
	CHECK(back->process.capabilities.present);
	CHECK(back->process.capabilities.set_present[OCI_CAP_BOUNDING]);
	CHECK_INT_EQ(back->process.capabilities.mask[OCI_CAP_BOUNDING], 0);
	CHECK(back->linux_.seccomp != NULL);
	CHECK_INT_EQ(back->linux_.seccomp->n_syscalls,
		     c->linux_.seccomp->n_syscalls);
	CHECK_INT_EQ(back->annotations.n, c->annotations.n);
	CHECK_STR_EQ(oci_config_annotation(back, "run.agentrun.net.loopback"),
		     "up");
	CHECK(!strstr(json, "FOO_TOKEN"));
out:
	free(json);
	oci_config_free(back);
	oci_config_free(c);
}

UNIT_TEST(writer_refuses_what_it_cannot_render)
{
	struct oci_config *c = oci_config_new();
	struct ar_error err = AR_ERROR_INIT;
	char *json = NULL, *args[] = { "sh", NULL };
	size_t len;

	c->process.present = true;
	c->process.args.v = args;
	c->process.args.n = 1;
	c->linux_.resources.present = true;
	CHECK(oci_config_to_json(c, &json, &len, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "linux.resources");
	c->process.args.v = NULL;
	oci_config_free(c);
}

UNIT_TEST(passwd_and_group)
{
	struct ar_sandbox_host h;
	char *p, *g;

	fake_host(&h);
	p = ar_sandbox_passwd(&h);
	g = ar_sandbox_group(&h);
	CHECK_STR_CONTAINS(p, "alice:x:1234:2345:");
	CHECK_STR_CONTAINS(p, home);
	CHECK_STR_CONTAINS(g, "staff:x:2345:alice");
	free(p);
	free(g);
}

/* --nested: the user's subordinate ids (sandbox_nested.c) */
UNIT_TEST(nested_subid_ranges)
{
	struct sb_id_range r[4];
	const char *text = "# comment\n"
			   "other:200000:65536\n"
			   "alice:100000:65536\n"
			   "1000:300000:10\n"
			   "alice:bad:5\n"
			   "alice:400000:\n"
			   "alice:999:10\n" /* holds 1000 itself: left out */
			   "alice:500000:0\n"
			   "alice:600000:7";

	CHECK(sb_subid_ranges(text, "alice", 1000, r, 4) == 3);
	CHECK(r[0].start == 100000 && r[0].count == 65536);
	CHECK(r[1].start == 300000 && r[1].count == 10);
	CHECK(r[2].start == 600000 && r[2].count == 7);
	CHECK(sb_subid_ranges(text, "alice", 1000, r, 1) == 1);
	CHECK(sb_subid_ranges(text, "bob", 1001, r, 4) == 0);
	CHECK(sb_subid_ranges("alice:4294967295:2\n", "alice", 1, r, 4) == 0);
	CHECK(sb_subid_ranges(NULL, "alice", 1, r, 4) == 0);
}

UNIT_TEST(nested_id_map_goes_around_own_id)
{
	struct sb_id_range r[2] = { { 100000, 65536 }, { 300000, 10 } };
	struct oci_id_mapping m[8];
	size_t n = sb_nested_id_map(1000, r, 2, m, 8);

	CHECK(n == 4);
	CHECK(m[0].container_id == 1000 && m[0].host_id == 1000 &&
	      m[0].size == 1);
	CHECK(m[1].container_id == 0 && m[1].host_id == 100000 &&
	      m[1].size == 1000);
	CHECK(m[2].container_id == 1001 && m[2].host_id == 101000 &&
	      m[2].size == 64536);
	CHECK(m[3].container_id == 65537 && m[3].host_id == 300000 &&
	      m[3].size == 10);
	/* own id above every range: no split */
	n = sb_nested_id_map(70000, r, 1, m, 8);
	CHECK(n == 2 && m[1].container_id == 0 && m[1].size == 65536);
	/* own id 0: the ranges start at 1 */
	n = sb_nested_id_map(0, r, 1, m, 8);
	CHECK(n == 2 && m[1].container_id == 1 && m[1].size == 65536);
	/* room for the own id only */
	CHECK(sb_nested_id_map(1000, r, 2, m, 1) == 1);
}

/* --nested keeps /proc masked when the sandbox holds the host's root id
 * (sandbox_nested.c): /proc/sys obeys that id, not capabilities. */
UNIT_TEST(nested_holds_host_root)
{
	struct oci_id_mapping own[1] = { { 1000, 1000, 1 } };
	struct oci_id_mapping root[1] = { { 0, 0, 1 } };
	struct oci_id_mapping subs[2] = { { 1000, 1000, 1 },
					  { 0, 100000, 1000 } };
	struct oci_id_mapping low[1] = { { 5, 0, 10 } }; /* host 0..9 */
	struct oci_linux l;
	gid_t g_plain[2] = { 1000, 27 }, g_root[2] = { 1000, 0 };

	memset(&l, 0, sizeof(l));
	l.uid_mappings.items = own;
	l.uid_mappings.n = 1;
	l.gid_mappings.items = own;
	l.gid_mappings.n = 1;
	CHECK(!sb_nested_holds_host_root(&l, g_plain, 2));
	CHECK(!sb_nested_holds_host_root(&l, NULL, 0));
	CHECK(sb_nested_holds_host_root(&l, g_root, 2)); /* group root */
	l.uid_mappings.items = subs; /* container 0 is not host 0 */
	l.uid_mappings.n = 2;
	CHECK(!sb_nested_holds_host_root(&l, g_plain, 2));
	l.uid_mappings.items = root;
	l.uid_mappings.n = 1;
	CHECK(sb_nested_holds_host_root(&l, g_plain, 2));
	l.uid_mappings.items = own;
	l.gid_mappings.items = low; /* a range that holds host gid 0 */
	CHECK(sb_nested_holds_host_root(&l, g_plain, 2));
}

static bool strv_has(const struct oci_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return true;
	return false;
}

/* Started by root, --nested keeps the /proc masks and allows clone and
 * unshare only without CLONE_NEWCGROUP. */
UNIT_TEST(nested_as_root_keeps_proc_read_only)
{
	struct ar_sandbox_opts o = { .tty = 0, .nested = true };
	struct ar_error err = AR_ERROR_INIT;
	struct ar_sandbox_host h;
	struct sb_plan p;
	struct oci_config *c = NULL;
	int conditional = 0;

	fake_host(&h);
	h.uid = 0;
	h.gid = 0;
	o.argv = argv_true;
	CHECK(sb_plan_make(&p, &o, &h, NULL, &err) == 0);
	CHECK(ar_sandbox_build_config(&p, &c, &err) == 0);
	sb_plan_release(&p);
	if (!c)
		return;
	CHECK(strv_has(&c->linux_.readonly_paths, "/proc/sys"));
	CHECK(strv_has(&c->linux_.readonly_paths, "/proc/sysrq-trigger"));
	CHECK(strv_has(&c->linux_.masked_paths, "/proc/kcore"));
	for (size_t i = 0; i < c->linux_.seccomp->n_syscalls; i++) {
		const struct oci_seccomp_syscall *r =
			&c->linux_.seccomp->syscalls[i];

		for (size_t j = 0; j < r->names.n; j++) {
			bool cu = strcmp(r->names.v[j], "clone") == 0 ||
				  strcmp(r->names.v[j], "unshare") == 0;

			if (!cu || r->action != OCI_SCMP_ACT_ALLOW)
				continue;
			CHECK(r->n_args == 1); /* never a plain allow */
			if (r->n_args == 1 &&
			    r->args[0].value == CLONE_NEWCGROUP &&
			    r->args[0].value_two == 0)
				conditional++;
		}
	}
	CHECK(conditional == 2);
	CHECK_STR_CONTAINS(
		oci_config_annotation(c, "run.agentrun.sandbox.protections"),
		"/proc masked: host root");
	oci_config_free(c);
}

/* The host's kernel interfaces are never bound (sandbox_kernfs.c). */
UNIT_TEST(kernfs_below_reads_mountinfo)
{
	const char *mi =
		"22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
		"23 22 0:21 / /proc rw,nosuid shared:12 - proc proc rw\n"
		"24 22 0:22 / /sys rw shared:7 - sysfs sysfs rw\n"
		"25 24 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
		"40 22 0:40 / /srv/my\\040root/proc rw - proc proc rw\n"
		"41 22 0:41 / /srv/other rw - tmpfs tmpfs rw\n"
		"42 22 0:42 / /data/dev rw - devtmpfs udev rw\n"
		"bad line without separator\n";
	char *mnt = NULL, *type = NULL;

	CHECK(sb_kernfs_below(mi, "/srv", &mnt, &type));
	CHECK_STR_EQ(mnt, "/srv/my root/proc");
	CHECK_STR_EQ(type, "proc");
	free(mnt);
	free(type);
	CHECK(sb_kernfs_below(mi, "/srv/my root", NULL, NULL));
	CHECK(!sb_kernfs_below(mi, "/srv/other", NULL, NULL));
	CHECK(!sb_kernfs_below(mi, "/srv/my", NULL, NULL)); /* by name */
	CHECK(!sb_kernfs_below(mi, "/data", NULL, NULL)); /* nodev binds */
	CHECK(sb_kernfs_below(mi, "/", NULL, NULL));
	CHECK(sb_kernfs_below(mi, "/sys/fs", NULL, NULL));
	CHECK(!sb_kernfs_below("", "/", NULL, NULL));
	CHECK(sb_kernfs_type("cgroup") && sb_kernfs_type("debugfs"));
	CHECK(!sb_kernfs_type("tmpfs") && !sb_kernfs_type("devtmpfs"));
	CHECK_STR_EQ(sb_kernfs_magic_name(0x9fa0), "proc");
	CHECK_STR_EQ(sb_kernfs_magic_name(0x62656572), "sysfs");
	CHECK(sb_kernfs_magic_name(0xef53) == NULL); /* ext4 */
}

/* The plan: the allowlist parsed once (the config only says "allow"),
 * --learn's additions in its options, the Landlock rules that the
 * config's annotation records, the root's content. */
UNIT_TEST(plan_resolves_once)
{
	const char *allow[] = { "example.com", "10.0.0.1:5432" };
	struct ar_sandbox_opts o = { .tty = 0,
				     .argv = argv_true,
				     .net = AR_SANDBOX_NET_ALLOW,
				     .net_allow = { allow, 2 } };
	struct ar_error err = AR_ERROR_INIT;
	struct ar_sandbox_host h;
	struct oci_config *c = NULL;
	struct sb_plan p;
	bool passwd = false;

	fake_host(&h);
	CHECK(sb_plan_make(&p, &o, &h, NULL, &err) == 0);
	CHECK_INT_EQ(p.policy.n_rules, 2);
	CHECK(!p.policy.learn);
	CHECK(p.egress);
	CHECK_STR_EQ(p.workspace, proj);
	CHECK(ar_sandbox_build_config(&p, &c, &err) == 0);
	if (c) {
		CHECK_STR_EQ(oci_config_annotation(c,
						   "run.agentrun.sandbox.net"),
			     "allow");
		if (p.landlock) {
			char *t = ar_landlock_rules_text(&p.landlock_rules);

			CHECK_STR_EQ(oci_config_annotation(
					     c, AR_ANNOTATION_LANDLOCK),
				     t);
			free(t);
		}
		/* the config holds copies: it outlives the plan */
		CHECK_INT_EQ(c->n_mounts, p.n_mounts);
	}
	for (size_t i = 0; i < p.rootfs.n; i++)
		passwd |= strcmp(p.rootfs.v[i].path, "etc/passwd") == 0 &&
			  strstr(p.rootfs.v[i].data, "alice:x:1234:2345:");
	CHECK(passwd);
	sb_plan_release(&p);
	CHECK(c && strcmp(c->mounts[0].destination, "/proc") == 0);
	oci_config_free(c);
	/* a bad pattern fails the plan, naming it */
	allow[1] = "x:99999";
	CHECK(sb_plan_make(&p, &o, &h, NULL, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "x:99999");
	sb_plan_release(&p);
}

UNIT_TEST(plan_learn_adds_to_the_options)
{
	struct ar_sandbox_opts o = { .tty = 0,
				     .argv = argv_true,
				     .learn = "/tmp/learned.json" };
	struct ar_error err = AR_ERROR_INIT;
	struct ar_sandbox_host h;
	struct sb_plan p;

	fake_host(&h);
	CHECK(sb_plan_make(&p, &o, &h, NULL, &err) == 0);
	CHECK(p.observe);
	CHECK(p.net == AR_SANDBOX_NET_ALLOW);
	CHECK(p.policy.learn);
	CHECK_INT_EQ(p.policy.n_rules, 1);
	CHECK(p.o.ro.n > 0);
	CHECK(o.ro.n == 0); /* the caller's options are not changed */
	sb_plan_release(&p);
	o.net = AR_SANDBOX_NET_HOST;
	CHECK(sb_plan_make(&p, &o, &h, NULL, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "--net host");
	sb_plan_release(&p);
}

UNIT_TEST(zz_cleanup)
{
	char cmd[600];

	if (top) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		CHECK(system(cmd) == 0);
	}
}

UNIT_MAIN()
