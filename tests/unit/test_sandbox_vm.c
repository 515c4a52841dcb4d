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

UNIT_MAIN()
