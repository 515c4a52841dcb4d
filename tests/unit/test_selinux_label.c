/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "selinux_label.h"
#include "unit.h"

UNIT_TEST(mount_data_gets_context)
{
	char *d =
		ar_selinux_mount_data("mode=755,size=65536k", "tmpfs",
				      "system_u:object_r:container_file_t:s0");

	CHECK_STR_EQ(
		d,
		"mode=755,size=65536k,context=\"system_u:object_r:container_file_t:s0\"");
	free(d);
	d = ar_selinux_mount_data(NULL, "devpts", "a:b:c:s0:c1,c2");
	CHECK_STR_EQ(d, "context=\"a:b:c:s0:c1,c2\"");
	free(d);
}

/* mqueue's superblock is the IPC namespace's, set up before the mount:
 * a context= fails the mount with EINVAL on an SELinux host (seen in
 * tests/vm/test_selinux_vm.sh); its root is relabelled after the mount */
UNIT_TEST(mqueue_relabelled_after_mount)
{
	CHECK(ar_selinux_mount_data(NULL, "mqueue", "a:b:c:s0:c1,c2") == NULL);
	CHECK(ar_selinux_relabel_after_mount("mqueue"));
	CHECK(!ar_selinux_relabel_after_mount("tmpfs"));
	CHECK(!ar_selinux_relabel_after_mount(NULL));
}

UNIT_TEST(mount_data_unchanged)
{
	/* no label, empty label, filesystems without context=, own context= */
	CHECK(ar_selinux_mount_data("mode=755", "tmpfs", NULL) == NULL);
	CHECK(ar_selinux_mount_data("mode=755", "tmpfs", "") == NULL);
	CHECK(ar_selinux_mount_data(NULL, "proc", "a:b:c:s0") == NULL);
	CHECK(ar_selinux_mount_data(NULL, "sysfs", "a:b:c:s0") == NULL);
	CHECK(ar_selinux_mount_data(NULL, "cgroup2", "a:b:c:s0") == NULL);
	CHECK(ar_selinux_mount_data("context=\"x:y:z:s0\"", "tmpfs",
				    "a:b:c:s0") == NULL);
}

UNIT_TEST(empty_labels_are_a_no_op)
{
	struct ar_error err = AR_ERROR_INIT;

	CHECK_INT_EQ(ar_selinux_check_labels("c.json", NULL, NULL, &err), 0);
	CHECK_INT_EQ(ar_selinux_check_labels("c.json", "", "", &err), 0);
	CHECK_INT_EQ(ar_selinux_set_exec_label("", true, &err), 0);
	CHECK_INT_EQ(ar_selinux_set_exec_label(NULL, true, &err), 0);
}

/* crun and runc ignore labels on a host without SELinux. */
UNIT_TEST(label_without_selinux_is_ignored)
{
	struct ar_error err = AR_ERROR_INIT;

	if (ar_selinux_enabled())
		return; /* a host with SELinux checks the label instead */
	CHECK_INT_EQ(ar_selinux_check_labels("c.json", "u:r:t:s0", NULL, &err),
		     0);
	CHECK_INT_EQ(ar_selinux_check_labels("c.json", "", "u:o:t:s0", &err),
		     0);
	CHECK_INT_EQ(ar_selinux_set_exec_label("u:r:t:s0", false, &err), 0);
}

/* a failed exec into a label names it and the likely cause */
UNIT_TEST(exec_error_names_the_label)
{
	struct ar_error err = AR_ERROR_INIT;

	errno = EACCES;
	ar_selinux_exec_error(&err, "/bin/sh", "u:r:t:s0", true);
	CHECK(strstr(err.msg, "process.selinuxLabel `u:r:t:s0`") != NULL);
	CHECK(strstr(err.msg, "Permission denied") != NULL);
	ar_error_clear(&err);
	errno = EACCES;
	ar_selinux_exec_error(&err, "/bin/sh", "u:r:t:s0", false);
	CHECK(strstr(err.msg, "selinux") == NULL);
	ar_error_clear(&err);
	errno = ENOENT;
	ar_selinux_exec_error(&err, "/bin/sh", "u:r:t:s0", true);
	CHECK(strstr(err.msg, "selinux") == NULL);
	ar_error_clear(&err);
}

UNIT_MAIN()
