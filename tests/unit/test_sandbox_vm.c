/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/vm/vm.c: the kernel's version from its
 * name, the helper's argv, the mode in the start line. */
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

UNIT_MAIN()
