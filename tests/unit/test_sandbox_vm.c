/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/vm/vm.c: the kernel's version from its
 * name, the helper's argv, the mode in the start line; vm_cache.c: which
 * names are the kernel cache's own. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "utils.h"
#include "vm/vm.h"
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
	char **v = ar_vm_argv(&vm, 1000, 1001, "/home/me/proj", NULL, cmd);
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
	v = ar_vm_argv(&vm, 0, 0, "/w", NULL, cmd);
	CHECK_STR_EQ(v[3], "kvm");
	CHECK_STR_EQ(v[9], "0:0");
	ar_vm_argv_free(v);
}

/* the options of the network, the other writable directories and the
 * cached kernel, before the command */
UNIT_TEST(helper_argv_net_rw_cache)
{
	struct ar_vm vm = { .kver = (char *)"6.1", .net = "allow" };
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
	v = ar_vm_argv(&vm, 1, 1, "/w", NULL, cmd);
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
	char *cmd[] = { (char *)"true", NULL };
	char **v;
	size_t i;
	const char *want[] = { "/w",   "--publish", "8000", "--publish",
			       "1455", "--",	    "true", NULL };

	ar_vm_add_publish(&vm, 8000);
	ar_vm_add_publish(&vm, 1455);
	ar_vm_add_publish(&vm, 8000);
	CHECK(vm.n_publish == 2);
	v = ar_vm_argv(&vm, 1, 1, "/w", NULL, cmd);
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
	ar_vm_buf_free(&b);
}

UNIT_TEST(proto_spawn_refused)
{
	/* flags rows cols argc envc, then cwd */
	static const char no_argv[] = "\0\0\0\0\0\0\0\0\0\0\0\0\0/\0";
	static const char huge[] = "\0\0\0\0\0\x7f\xff\xff\xff\0\0\0\0/\0";
	static const char trailing[] = "\0\0\0\0\0\0\0\0\1\0\0\0\0/\0sh\0x";
	static const char ok[] = "\0\0\0\0\0\0\0\0\1\0\0\0\0/\0sh\0";
	struct ar_vm_spawn s;

	CHECK(ar_vm_spawn_parse(no_argv, sizeof(no_argv) - 1, &s) < 0);
	CHECK(ar_vm_spawn_parse(huge, sizeof(huge) - 1, &s) < 0);
	CHECK(ar_vm_spawn_parse(trailing, sizeof(trailing) - 1, &s) < 0);
	CHECK(ar_vm_spawn_parse(ok, sizeof(ok) - 1, &s) == 0);
	CHECK_STR_EQ(s.argv[0], "sh");
	ar_vm_spawn_free(&s);
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

UNIT_MAIN()
