/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/vm/vm.c: the kernel's version from its
 * name, the helper's argv, the mode in the start line; vm_cache.c: which
 * names are the kernel cache's own; vm_bundle.c: a plain bundle's config
 * rewritten for the vm handler, exec's process. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "utils.h"
#include "oci_config.h"
#include "rootfs_fill.h"
#include "vm/vm.h"
#include "vm/vm_bundle.h"
#include "vm/vm_proto.h"

UNIT_TEST(kernel_version)
{
	char *v = ar_vm_kernel_version("/boot/vmlinuz-6.1.0-57-amd64");

	CHECK_STR_EQ(v, "6.1.0-57-amd64");
	free(v);
	v = ar_vm_kernel_version("vmlinuz-6.12");
	CHECK_STR_EQ(v, "6.12");
	free(v);
	CHECK(ar_vm_kernel_version("/boot/vmlinuz-") == NULL);
	CHECK(ar_vm_kernel_version("/boot/bzImage") == NULL);
	CHECK(ar_vm_kernel_version("/boot/initrd.img-6.1") == NULL);
}

UNIT_TEST(helper_argv)
{
	struct ar_vm vm = { .kver = (char *)"6.1.0-57-amd64", .kvm = false };
	char *cmd[] = { (char *)"sh", (char *)"-c", (char *)"exit 7", NULL };
	struct ar_vm_user me = { .uid = 1000, .gid = 1001 }, root = { 0 },
			  one = { .uid = 1, .gid = 1 };
	uint32_t groups[] = { 5, 4294967295u };
	char **v = ar_vm_argv(&vm, &me, "/home/me/proj", NULL, cmd);
	const char *want[] = { "/bin/bash", AR_VM_LIB_DEST "/agentrun-vm",
			       "--accel",   "tcg",
			       "--kernel",  AR_VM_KERNEL_DEST,
			       "--kver",    "6.1.0-57-amd64",
			       "--user",    "1000:1001",
			       "--share",   "/home/me/proj",
			       "--",	    "sh",
			       "-c",	    "exit 7",
			       NULL };
	size_t i;

	for (i = 0; want[i]; i++)
		CHECK_STR_EQ(v[i], want[i]);
	CHECK(v[i] == NULL);
	ar_vm_argv_free(v);
	CHECK_STR_EQ(ar_vm_mode(&vm), "vm(tcg, slow)");
	vm.kvm = true;
	CHECK_STR_EQ(ar_vm_mode(&vm), "vm(kvm)");
	v = ar_vm_argv(&vm, &root, "/w", NULL, cmd);
	CHECK_STR_EQ(v[3], "kvm");
	CHECK_STR_EQ(v[9], "0:0");
	ar_vm_argv_free(v);
	/* the additional groups after a second colon */
	one.groups = groups;
	one.n_groups = 2;
	v = ar_vm_argv(&vm, &one, "/w", NULL, cmd);
	CHECK_STR_EQ(v[9], "1:1:5,4294967295");
	ar_vm_argv_free(v);
}

/* the options of the network, the other writable directories and the
 * cached kernel, before the command */
UNIT_TEST(helper_argv_net_rw_cache)
{
	struct ar_vm vm = { .kver = (char *)"6.1", .net = "allow" };
	struct ar_vm_user one = { .uid = 1, .gid = 1 };
	char *cmd[] = { (char *)"true", NULL };
	char sha[65];
	char **v;
	const char *want[] = { "--share",
			       "/w",
			       "--rw",
			       "/home/me/extra",
			       "--rw",
			       "/tmp/x",
			       "--net",
			       "allow",
			       "--vmlinux",
			       AR_VM_VMLINUX_DEST,
			       "--vmlinux-sha256",
			       sha,
			       "--",
			       "true",
			       NULL };
	size_t i;

	memset(sha, 'a', 64);
	sha[64] = '\0';
	vm.vmlinux = ar_xstrdup("/home/me/.cache/agentrun/vm/k.vmlinux");
	memcpy(vm.vmlinux_sha256, sha, sizeof(sha));
	ar_vm_add_rw(&vm, "/home/me/extra");
	ar_vm_add_rw(&vm, "/tmp/x");
	v = ar_vm_argv(&vm, &one, "/w", NULL, cmd);
	for (i = 0; want[i]; i++)
		CHECK_STR_EQ(v[10 + i], want[i]);
	CHECK(v[10 + i] == NULL);
	ar_vm_argv_free(v);
	vm.kver = NULL;
	ar_vm_release(&vm);
}

/* --publish: each inside port once, after the network's options */
UNIT_TEST(helper_argv_publish)
{
	struct ar_vm vm = { .kver = (char *)"6.1" };
	struct ar_vm_user one = { .uid = 1, .gid = 1 };
	char *cmd[] = { (char *)"true", NULL };
	char **v;
	size_t i;
	const char *want[] = { "/w",   "--publish", "8000", "--publish",
			       "1455", "--",	    "true", NULL };

	ar_vm_add_publish(&vm, 8000);
	ar_vm_add_publish(&vm, 1455);
	ar_vm_add_publish(&vm, 8000);
	CHECK(vm.n_publish == 2);
	v = ar_vm_argv(&vm, &one, "/w", NULL, cmd);
	for (i = 0; want[i]; i++)
		CHECK_STR_EQ(v[11 + i], want[i]);
	CHECK(v[11 + i] == NULL);
	ar_vm_argv_free(v);
	vm.kver = NULL;
	ar_vm_release(&vm);
}

/* the cache's names: KVER-DEV-INO-SIZE-SEC.NSEC.vmlinux and an unpack's
 * .KEY.PID; anything else is not agentrun's and is never removed */
UNIT_TEST(cache_names)
{
	char key[256];
	bool partial;

	CHECK(ar_vm_cache_name(
		"6.1.0-57-amd64-803-2a1f-3e5a40-1733400000.123456789.vmlinux",
		key, sizeof(key), &partial));
	CHECK_STR_EQ(key,
		     "6.1.0-57-amd64-803-2a1f-3e5a40-1733400000.123456789");
	CHECK(!partial);
	CHECK(ar_vm_cache_name(".6.1-803-2a1f-3e5a40-1733400000.000000000.4242",
			       key, sizeof(key), &partial));
	CHECK_STR_EQ(key, "6.1-803-2a1f-3e5a40-1733400000.000000000");
	CHECK(partial);
	/* not ours */
	CHECK(!ar_vm_cache_name("notes.txt", key, sizeof(key), &partial));
	CHECK(!ar_vm_cache_name("x.vmlinux", key, sizeof(key), &partial));
	CHECK(!ar_vm_cache_name("803-2a1f-3e5a40-1733400000.000000000.vmlinux",
				key, sizeof(key), &partial)); /* no KVER */
	CHECK(!ar_vm_cache_name("6.1-803-2a1f-3e5a40-17334.12.vmlinux", key,
				sizeof(key), &partial)); /* NSEC not 9 */
	CHECK(!ar_vm_cache_name(
		"6.1-80g-2a1f-3e5a40-1733400000.000000000.vmlinux", key,
		sizeof(key), &partial)); /* not hex */
	CHECK(!ar_vm_cache_name(
		".6.1-803-2a1f-3e5a40-1733400000.000000000.vmlinux", key,
		sizeof(key), &partial)); /* a dot name */
	CHECK(!ar_vm_cache_name(".6.1-803-2a1f-3e5a40-1733400000.000000000.x1",
				key, sizeof(key),
				&partial)); /* PID not digits */
	CHECK(!ar_vm_cache_name("6.1--2a1f-3e5a40-1733400000.000000000.vmlinux",
				key, sizeof(key), &partial)); /* empty DEV */
	CHECK(!ar_vm_cache_name(
		"6.1-803-2a1f-3e5a40-1733400000.000000000.vmlinux", key, 10,
		&partial)); /* too long for key */
}

/* vm_proto.c: a SPAWN goes through whole, every other byte string is
 * refused (the guest and the exec client are not trusted) */
UNIT_TEST(proto_spawn_round_trip)
{
	uint32_t groups[] = { 0, 27, 4294967294u };
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)"", NULL };
	char *env[] = { (char *)"A=1", (char *)"EMPTY=", NULL };
	struct ar_vm_spawn in = { .tty = true,
				  .rows = 40,
				  .cols = 120,
				  .cwd = (char *)"/w s",
				  .argv = argv,
				  .env = env },
			   out;
	struct ar_vm_buf b = { 0 };
	struct ar_vm_frame f;

	ar_vm_spawn_put(&b, 7, &in);
	CHECK(ar_vm_frame_next(&b, &f) == 1);
	CHECK(f.type == AR_VM_SPAWN && f.session == 7);
	CHECK(ar_vm_spawn_parse(f.payload, f.len, &out) == 0);
	CHECK(out.tty && out.rows == 40 && out.cols == 120);
	CHECK_STR_EQ(out.cwd, "/w s");
	CHECK_STR_EQ(out.argv[0], "sh");
	CHECK_STR_EQ(out.argv[2], "");
	CHECK(out.argv[3] == NULL);
	CHECK_STR_EQ(out.env[1], "EMPTY=");
	CHECK(out.env[2] == NULL);
	/* every shorter payload is malformed: a string cut, a count lying */
	for (size_t n = 0; n < f.len; n++) {
		struct ar_vm_spawn cut;

		CHECK(ar_vm_spawn_parse(f.payload, n, &cut) < 0);
		CHECK(cut.argv == NULL && cut.cwd == NULL);
	}
	ar_vm_spawn_free(&out);
	CHECK(ar_vm_frame_next(&b, &f) == 0);
	/* with a user: the flag, then uid and gid */
	in.has_user = true;
	in.user.uid = 1000;
	in.user.gid = 4294967295u;
	ar_vm_spawn_put(&b, 8, &in);
	CHECK(ar_vm_frame_next(&b, &f) == 1);
	CHECK(ar_vm_spawn_parse(f.payload, f.len, &out) == 0);
	CHECK(out.has_user && out.user.uid == 1000 &&
	      out.user.gid == 4294967295u);
	CHECK(out.user.n_groups == 0 && out.user.groups == NULL);
	CHECK(out.tty && out.rows == 40);
	CHECK_STR_EQ(out.cwd, "/w s");
	for (size_t n = 0; n < f.len; n++) {
		struct ar_vm_spawn cut;

		CHECK(ar_vm_spawn_parse(f.payload, n, &cut) < 0);
	}
	ar_vm_spawn_free(&out);
	/* and its additional groups: a count, then each */
	in.user.groups = groups;
	in.user.n_groups = 3;
	ar_vm_spawn_put(&b, 9, &in);
	CHECK(ar_vm_frame_next(&b, &f) == 1);
	CHECK(ar_vm_spawn_parse(f.payload, f.len, &out) == 0);
	CHECK(out.has_user && out.user.uid == 1000);
	CHECK_INT_EQ((int)out.user.n_groups, 3);
	CHECK(out.user.groups[0] == 0 && out.user.groups[1] == 27 &&
	      out.user.groups[2] == 4294967294u);
	CHECK_STR_EQ(out.argv[1], "-c");
	CHECK_STR_EQ(out.env[0], "A=1");
	for (size_t n = 0; n < f.len; n++) {
		struct ar_vm_spawn cut;

		CHECK(ar_vm_spawn_parse(f.payload, n, &cut) < 0);
		CHECK(cut.user.groups == NULL);
	}
	ar_vm_spawn_free(&out);
	ar_vm_buf_free(&b);
}

UNIT_TEST(proto_spawn_refused)
{
	/* flags rows cols argc envc, then cwd */
	static const char no_argv[] = "\0\0\0\0\0\0\0\0\0\0\0\0\0/\0";
	static const char huge[] = "\0\0\0\0\0\x7f\xff\xff\xff\0\0\0\0/\0";
	static const char trailing[] = "\0\0\0\0\0\0\0\0\1\0\0\0\0/\0sh\0x";
	static const char ok[] = "\0\0\0\0\0\0\0\0\1\0\0\0\0/\0sh\0";
	/* groups (flag 4) without a user (flag 2) */
	static const char groups_no_user[] =
		"\4\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\1\0\0\0\5/\0sh\0";
	/* a user with groups: a count of 0, a count over the cap, a count
	 * beyond the payload */
	static const char groups_none[] =
		"\6\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\1\0\0\0\1"
		"\0\0\0\0/\0sh\0";
	static const char groups_huge[] =
		"\6\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\1\0\0\0\1"
		"\0\0\x10\1\0\0\0\5/\0sh\0";
	static const char groups_past_end[] =
		"\6\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\1\0\0\0\1"
		"\0\0\0\3\0\0\0\5/\0sh\0";
	static const char groups_ok[] =
		"\6\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\1\0\0\0\1"
		"\0\0\0\1\0\0\0\5/\0sh\0";
	struct ar_vm_spawn s;

	CHECK(ar_vm_spawn_parse(no_argv, sizeof(no_argv) - 1, &s) < 0);
	CHECK(ar_vm_spawn_parse(huge, sizeof(huge) - 1, &s) < 0);
	CHECK(ar_vm_spawn_parse(trailing, sizeof(trailing) - 1, &s) < 0);
	CHECK(ar_vm_spawn_parse(ok, sizeof(ok) - 1, &s) == 0);
	CHECK_STR_EQ(s.argv[0], "sh");
	ar_vm_spawn_free(&s);
	CHECK(ar_vm_spawn_parse(groups_no_user, sizeof(groups_no_user) - 1,
				&s) < 0);
	CHECK(ar_vm_spawn_parse(groups_none, sizeof(groups_none) - 1, &s) < 0);
	CHECK(ar_vm_spawn_parse(groups_huge, sizeof(groups_huge) - 1, &s) < 0);
	CHECK(ar_vm_spawn_parse(groups_past_end, sizeof(groups_past_end) - 1,
				&s) < 0);
	CHECK(ar_vm_spawn_parse(groups_ok, sizeof(groups_ok) - 1, &s) == 0);
	CHECK(s.has_user && s.user.uid == 1 && s.user.gid == 1);
	CHECK(s.user.n_groups == 1 && s.user.groups[0] == 5);
	CHECK_STR_EQ(s.argv[0], "sh");
	ar_vm_spawn_free(&s);
}

/* vm-guest --user and vm-exec --user: "UID:GID[:G,G...]" */
UNIT_TEST(proto_user_spec)
{
	struct ar_vm_user u;
	_cleanup_free_ char *big = NULL, *over = NULL, *s = NULL;
	uint32_t g[AR_VM_MAX_GROUPS + 1];

	CHECK(ar_vm_user_parse("1000:1001", &u) == 0);
	CHECK(u.uid == 1000 && u.gid == 1001 && u.n_groups == 0 && !u.groups);
	ar_vm_user_free(&u);
	CHECK(ar_vm_user_parse("0:0:10,4294967295", &u) == 0);
	CHECK(u.uid == 0 && u.n_groups == 2 && u.groups[0] == 10 &&
	      u.groups[1] == 4294967295u);
	ar_vm_user_free(&u);
	CHECK(ar_vm_user_parse("1:2:", &u) == 0);
	CHECK(u.n_groups == 0);
	ar_vm_user_free(&u);
	CHECK(ar_vm_user_parse("1000", &u) < 0);
	CHECK(ar_vm_user_parse("1000:", &u) < 0);
	CHECK(ar_vm_user_parse("x:1", &u) < 0);
	CHECK(ar_vm_user_parse("1:4294967296", &u) < 0);
	CHECK(ar_vm_user_parse("1:2:3,x", &u) < 0);
	CHECK(u.groups == NULL);
	CHECK(ar_vm_user_parse("1:2:3,-4", &u) < 0);
	CHECK(ar_vm_user_parse("1:2:3:4", &u) < 0);
	/* the cap: AR_VM_MAX_GROUPS pass, one more is refused */
	for (uint32_t i = 0; i <= AR_VM_MAX_GROUPS; i++)
		g[i] = 4294967295u - i;
	big = ar_vm_user_format(7, 8, g, AR_VM_MAX_GROUPS);
	CHECK(strlen(big) < 128 * 1024); /* one argument of execve */
	CHECK(ar_vm_user_parse(big, &u) == 0);
	CHECK(u.n_groups == AR_VM_MAX_GROUPS &&
	      u.groups[AR_VM_MAX_GROUPS - 1] == g[AR_VM_MAX_GROUPS - 1]);
	ar_vm_user_free(&u);
	over = ar_vm_user_format(7, 8, g, AR_VM_MAX_GROUPS + 1);
	CHECK(ar_vm_user_parse(over, &u) < 0);
	s = ar_vm_user_format(4294967295u, 0, NULL, 0);
	CHECK_STR_EQ(s, "4294967295:0");
}

UNIT_TEST(proto_frames_in_pieces)
{
	struct ar_vm_buf w = { 0 }, r = { 0 };
	struct ar_vm_frame f;
	uint16_t rows, cols;
	int got = 0;

	ar_vm_frame_put(&w, AR_VM_STDOUT, 3, "hello", 5);
	ar_vm_resize_put(&w, 0, 24, 80);
	ar_vm_frame_put(&w, AR_VM_EOF, 1, NULL, 0);
	/* one byte at a time: a frame comes out once whole, never before */
	for (size_t i = 0; i < w.len; i++) {
		ar_vm_buf_append(&r, w.data + i, 1);
		while (ar_vm_frame_next(&r, &f) == 1) {
			got++;
			if (got == 1) {
				CHECK(i == AR_VM_FRAME_HDR + 5 - 1);
				CHECK(f.type == AR_VM_STDOUT && f.session == 3);
				CHECK(f.len == 5 &&
				      memcmp(f.payload, "hello", 5) == 0);
			} else if (got == 2) {
				CHECK(ar_vm_resize_parse(&f, &rows, &cols) ==
				      0);
				CHECK(rows == 24 && cols == 80);
			} else {
				CHECK(f.type == AR_VM_EOF && f.len == 0);
			}
		}
	}
	CHECK(got == 3);
	CHECK(ar_vm_buf_pending(&r) == 0);
	/* a length over the limit: refused at once, not waited for */
	ar_vm_buf_append(&r, "\xff\xff\xff\xff\x11\0\0\0\0", 9);
	CHECK(ar_vm_frame_next(&r, &f) < 0);
	ar_vm_buf_free(&w);
	ar_vm_buf_free(&r);
	CHECK(ar_vm_exit_code(3 << 8) == 3);
	CHECK(ar_vm_exit_code(9) == 128 + 9);
}

static struct oci_config *parse(const char *json)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *cfg = NULL;

	if (oci_config_parse(json, strlen(json), "config.json", &cfg, &err) < 0)
		fprintf(stderr, "%s\n", err.msg);
	return cfg;
}

/* an argument of the vector v after the option opt, with value want */
static bool has_arg(char **v, const char *opt, const char *want)
{
	for (size_t i = 0; v[i] && v[i + 1]; i++)
		if (strcmp(v[i], opt) == 0 && strcmp(v[i + 1], want) == 0)
			return true;
	return false;
}

static const struct oci_mount *find_mount(const struct oci_config *c,
					  const char *dest)
{
	for (size_t i = 0; i < c->n_mounts; i++)
		if (strcmp(c->mounts[i].destination, dest) == 0)
			return &c->mounts[i];
	return NULL;
}

/* exec in a container of the vm handler: vm-exec in the VMM's view as
 * the container's user, the directory and the exec's user passed on to
 * the guest; no annotation, no change */
UNIT_TEST(bundle_exec_process)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *c = parse(
		"{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
		"\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"user\":{\"uid\":5,\"gid\":6}},"
		"\"annotations\":{\"run.agentrun.handler\":\"vm\"}}");
	struct oci_process p;
	char *args[] = { (char *)"ls", (char *)"-l", NULL };
	uint32_t groups[] = { 10, 27 };

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(ar_vm_bundle_wanted(c));
	p = c->process;
	p.args.v = args;
	p.args.n = 2;
	p.cwd = (char *)"/work";
	p.user.uid = 1000;
	p.user.gid = 1001;
	p.user.additional_gids = groups;
	p.user.n_additional_gids = 2;
	CHECK_INT_EQ(ar_vm_bundle_exec(&p, c, &err), 0);
	CHECK_INT_EQ((int)p.args.n, 9);
	CHECK_STR_EQ(p.args.v[0], AR_VM_AGENT_DEST);
	CHECK_STR_EQ(p.args.v[1], "vm-exec");
	CHECK_STR_EQ(p.args.v[2], "--cwd");
	CHECK_STR_EQ(p.args.v[3], "/work");
	CHECK_STR_EQ(p.args.v[4], "--user");
	CHECK_STR_EQ(p.args.v[5], "1000:1001:10,27");
	CHECK_STR_EQ(p.args.v[6], "--");
	CHECK_STR_EQ(p.args.v[7], "ls");
	CHECK_STR_EQ(p.args.v[8], "-l");
	CHECK(p.args.v[9] == NULL);
	CHECK_STR_EQ(p.cwd, "/");
	/* vm-exec runs as the container's user: the exec's is the guest's */
	CHECK(p.user.uid == 5 && p.user.gid == 6);
	CHECK(p.user.n_additional_gids == 0);
	/* more groups than the guest takes: refused, named */
	p = c->process;
	p.user.additional_gids = ar_xcalloc(AR_VM_MAX_GROUPS + 1, 4);
	p.user.n_additional_gids = AR_VM_MAX_GROUPS + 1;
	CHECK_INT_EQ(ar_vm_bundle_exec(&p, c, &err), -1);
	CHECK_STR_CONTAINS(
		err.msg,
		"process.user.additionalGids: 4097 groups; the vm handler passes at most 4096");
	free(p.user.additional_gids);
	ar_error_clear(&err);
	oci_config_free(c);
	c = parse("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
		  "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"}}");
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(!ar_vm_bundle_wanted(c));
	p = c->process;
	CHECK_INT_EQ(ar_vm_bundle_exec(&p, c, &err), 0);
	CHECK_STR_EQ(p.args.v[0], "sh");
	oci_config_free(c);
}

/* a JSON string of s (quotes, backslashes and newlines escaped) */
static char *json_quote(const char *s)
{
	struct ar_vm_buf b = { 0 };

	ar_vm_buf_append(&b, "\"", 1);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			ar_vm_buf_append(&b, "\\", 1);
		if (*s == '\n')
			ar_vm_buf_append(&b, "\\n", 2);
		else
			ar_vm_buf_append(&b, s, 1);
	}
	ar_vm_buf_append(&b, "\"", 2);
	return b.data;
}

/* A bundle rewritten for the vm handler: QEMU's view (binds of the
 * root and of each bind's source), the guest's mounts in order with the
 * runtime's own options dropped, a mount under a guest tmpfs left to the
 * guest, a bind of /sys the guest's sysfs, the mount points made inside
 * the root even through an image's absolute link (attack: a naive
 * rootfs + destination would create a file of the host's /tmp). */
UNIT_TEST(bundle_config_rewrite)
{
	struct ar_error err = AR_ERROR_INIT;
	const struct ar_rootfs_content *content = NULL;
	char dir[] = "/tmp/agentrun-unit-vmb.XXXXXX";
	char outside[] = "/tmp/agentrun-unit-vmb-out.XXXXXX";
	_cleanup_free_ char *json = NULL, *rootfs = NULL, *link = NULL,
			    *hosts = NULL, *state = NULL, *p = NULL;
	struct oci_config *c;
	const struct oci_mount *m;
	char **a;
	struct stat st;

	setenv("AGENTRUN_VM_DIR", AGENTRUN_TOP_SRCDIR "/runtime/sandbox/vm", 1);
	{
		struct ar_vm vm;

		if (ar_vm_probe(&vm, NULL, &err) < 0) {
			ar_vm_release(&vm);
			UNIT_SKIP("no QEMU or guest kernel here");
		}
		ar_vm_release(&vm);
	}
	CHECK(mkdtemp(dir) != NULL);
	CHECK(mkdtemp(outside) != NULL);
	rootfs = ar_xasprintf("%s/rootfs", dir);
	state = ar_xasprintf("%s/state", dir);
	hosts = ar_xasprintf("%s/hosts", dir);
	CHECK(mkdir(rootfs, 0755) == 0 && mkdir(state, 0700) == 0);
	/* the kernel cache (vm_cache.c) in the test's directory */
	p = ar_xasprintf("%s/cache", dir);
	setenv("XDG_CACHE_HOME", p, 1);
	free(p);
	p = NULL;
	/* the image's /etc is a link to an absolute path */
	link = ar_xasprintf("%s/etc", rootfs);
	CHECK(symlink(outside, link) == 0);
	{
		FILE *f = fopen(hosts, "w");

		CHECK(f != NULL);
		if (f)
			fclose(f);
	}
	json = ar_xasprintf(
		"{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
		"\"hostname\":\"hn\","
		"\"process\":{\"args\":[\"sh\",\"-c\",\"true\"],\"cwd\":\"/w\",\"user\":{\"uid\":0,\"gid\":0}},"
		"\"mounts\":["
		"{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
		"{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"rprivate\"]},"
		"{\"destination\":\"/dev/shm\",\"type\":\"bind\",\"source\":\"%s\",\"options\":[\"rbind\",\"nosuid\"]},"
		"{\"destination\":\"/etc/hosts\",\"type\":\"bind\",\"source\":\"%s\",\"options\":[\"bind\",\"ro\"]},"
		"{\"destination\":\"/sys\",\"type\":\"none\",\"source\":\"/sys\",\"options\":[\"rbind\",\"nosuid\",\"ro\"]},"
		"{\"destination\":\"/sys/fs/cgroup\",\"type\":\"cgroup\",\"source\":\"cgroup\",\"options\":[\"ro\"]}],"
		"\"linux\":{\"namespaces\":[{\"type\":\"mount\"}],\"maskedPaths\":[\"/proc/kcore\"],\"readonlyPaths\":[\"/proc/sys\"],"
		"\"sysctl\":{\"net.ipv4.ping_group_range\":\"0 2147483647\",\"kernel/domainname\":\"d\"}},"
		"\"annotations\":{\"run.agentrun.handler\":\"vm\"}}",
		dir, hosts);
	c = parse(json);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_INT_EQ(ar_vm_bundle_config(c, dir, state, &content, &err), 0);
	if (err.msg[0])
		fprintf(stderr, "%s\n", err.msg);
	p = ar_xasprintf("%s/.vm-root", state);
	CHECK_STR_EQ(c->root.path, p);
	CHECK(content != NULL && content->n > 5);
	CHECK_STR_EQ(c->process.cwd, "/");
	a = c->process.args.v;
	CHECK_STR_EQ(a[1], AR_VM_LIB_DEST "/agentrun-vm");
	CHECK(has_arg(a, "--root-share", "/run/agentrun-vm-root"));
	CHECK(has_arg(a, "--binds", "/run/agentrun-vm-binds"));
	CHECK(has_arg(a, "--hostname", "hn"));
	CHECK(has_arg(a, "--cwd", "/w"));
	CHECK(has_arg(a, "--net", "host"));
	CHECK(has_arg(a, "--guest-mask", "/proc/kcore"));
	CHECK(has_arg(a, "--guest-ro", "/proc/sys"));
	/* the sysctls: the guest kernel's, none left for QEMU's namespaces */
	CHECK(has_arg(a, "--sysctl", "net.ipv4.ping_group_range 0 2147483647"));
	CHECK(has_arg(a, "--sysctl", "kernel/domainname d"));
	CHECK(c->linux_.sysctl.n == 0);
	CHECK(has_arg(a, "--guest-mount", "proc - - /proc"));
	/* rprivate is the runtime's, not mount(8)'s */
	CHECK(has_arg(a, "--guest-mount",
		      "tmpfs nosuid,strictatime,mode=755 - /dev"));
	/* under the guest's /dev: the guest makes the mount point */
	CHECK(has_arg(a, "--guest-mount", "bind - 0 /dev/shm"));
	/* through the image's link, inside the root */
	{
		_cleanup_free_ char *want =
			ar_xasprintf("bind ro 1 %s/hosts", outside);

		CHECK(has_arg(a, "--guest-mount", want));
	}
	CHECK(has_arg(a, "--guest-mount", "sysfs nosuid,ro - /sys"));
	CHECK(has_arg(a, "--guest-mount", "cgroup2 ro - /sys/fs/cgroup"));
	/* the command after the options */
	{
		size_t i = 0;

		while (a[i] && strcmp(a[i], "--") != 0)
			i++;
		CHECK(a[i] && strcmp(a[i + 1], "sh") == 0 &&
		      strcmp(a[i + 3], "true") == 0);
	}
	/* QEMU's view: the root read-only, each bind's source with its
	 * own options, no guest mount of the bundle's */
	m = find_mount(c, "/run/agentrun-vm-root");
	CHECK(m != NULL && strcmp(m->source, rootfs) == 0);
	CHECK(m && m->options.n == 2 && strcmp(m->options.v[1], "ro") == 0);
	m = find_mount(c, "/run/agentrun-vm-binds/1");
	CHECK(m != NULL && strcmp(m->source, hosts) == 0);
	CHECK(m && m->options.n == 2 && strcmp(m->options.v[1], "ro") == 0);
	CHECK(find_mount(c, "/run/agentrun-vm-binds/0") != NULL);
	CHECK(find_mount(c, "/dev/shm") == NULL);
	CHECK(find_mount(c, "/sys") == NULL);
	CHECK(find_mount(c, "/usr") != NULL);
	CHECK(find_mount(c, AR_VM_AGENT_DEST) != NULL);
	/* the mount points: in the root, never in the host's /tmp */
	free(p);
	p = ar_xasprintf("%s/hosts", outside);
	CHECK(lstat(p, &st) < 0);
	free(p);
	p = ar_xasprintf("%s%s/hosts", rootfs, outside);
	CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode));
	free(p);
	p = ar_xasprintf("%s/dev/shm", rootfs);
	CHECK(lstat(p, &st) < 0);
	oci_config_free(c);

	/* what the guest cannot mount, another handler: refused */
	free(json);
	json = ar_xstrdup(
		"{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
		"\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
		"\"mounts\":[{\"destination\":\"/o\",\"type\":\"overlay\",\"source\":\"x\"}],"
		"\"linux\":{\"namespaces\":[{\"type\":\"mount\"}]},"
		"\"annotations\":{\"run.agentrun.handler\":\"vm\"}}");
	c = parse(json);
	CHECK(c != NULL);
	if (c) {
		content = NULL;
		CHECK(ar_vm_bundle_config(c, dir, state, &content, &err) < 0);
		CHECK_STR_CONTAINS(err.msg,
				   "mounts[0]: type `overlay` at `/o`");
		oci_config_free(c);
	}
	/* a sysctl name that would lead out of /proc/sys, or a value that
	 * would end its line: refused, named */
	{
		static const char *const bad[][2] = {
			{ "kernel..x", "1" },	{ "kernel/../../etc/x", "1" },
			{ "/kernel/x", "1" },	{ "kernel.x.", "1" },
			{ "kernel.x y", "1" },	{ "", "1" },
			{ "kernel.x", "1\n2" },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			_cleanup_free_ char *key = NULL, *val = NULL,
					    *cj = NULL;

			key = json_quote(bad[i][0]);
			val = json_quote(bad[i][1]);
			cj = ar_xasprintf(
				"{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
				"\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
				"\"linux\":{\"namespaces\":[{\"type\":\"mount\"}],\"sysctl\":{%s:%s}},"
				"\"annotations\":{\"run.agentrun.handler\":\"vm\"}}",
				key, val);
			c = parse(cj);
			CHECK(c != NULL);
			if (!c)
				continue;
			content = NULL;
			ar_error_clear(&err);
			CHECK(ar_vm_bundle_config(c, dir, state, &content,
						  &err) < 0);
			CHECK_STR_CONTAINS(err.msg, "linux.sysctl[");
			oci_config_free(c);
		}
		ar_error_clear(&err);
	}
	c = parse("{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
		  "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
		  "\"linux\":{\"namespaces\":[{\"type\":\"mount\"}]},"
		  "\"annotations\":{\"run.agentrun.handler\":\"krun\"}}");
	CHECK(c != NULL);
	if (c) {
		CHECK(ar_vm_bundle_config(c, dir, state, &content, &err) < 0);
		CHECK_STR_CONTAINS(err.msg, "unknown handler `krun`");
		oci_config_free(c);
	}
	{
		_cleanup_free_ char *cmd =
			ar_xasprintf("rm -rf '%s' '%s'", dir, outside);

		CHECK(system(cmd) == 0);
	}
}

UNIT_MAIN()
