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
	char **v = ar_vm_argv(&vm, 1000, 1001, "/home/me/proj", cmd);
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
	v = ar_vm_argv(&vm, 0, 0, "/w", cmd);
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
	v = ar_vm_argv(&vm, 1, 1, "/w", cmd);
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
	v = ar_vm_argv(&vm, 1, 1, "/w", cmd);
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

UNIT_MAIN()
