/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SELinux labels: process.selinuxLabel (the exec context of the
 * container's process) and linux.mountLabel (context= of the container's
 * filesystem mounts). Written straight to the kernel's interfaces
 * (/proc/thread-self/attr/exec, selinuxfs), as libselinux's
 * setexeccon_raw() and security_check_context() do: no library, and
 * nothing at all on the start path when no label is configured.
 */
#ifndef AGENTRUN_SELINUX_LABEL_H
#define AGENTRUN_SELINUX_LABEL_H

#include <stdbool.h>

#include "error.h"
#include "oci_config.h"

/* SELinux is enabled on this host (selinuxfs mounted, a policy loaded). */
bool ar_selinux_enabled(void);

/* In the runtime, before anything is started: an invalid label for the
 * loaded policy is an error naming the file and the JSON path. On a host
 * without SELinux (or in a --without-selinux build) labels are ignored,
 * as crun and runc do. Empty or absent labels: nothing is checked.
 * `what` names the source for the message (the config's file name, or
 * "exec --process FILE"). */
int ar_selinux_check_labels(const char *what, const char *process_label,
			    const char *mount_label, struct ar_error *err);

/* In the container process, last before execve: set the exec context to
 * `label` (nothing if NULL or empty, or without SELinux). `enabled` is
 * ar_selinux_enabled() as the runtime saw it before the clone: the
 * container has no selinuxfs to ask. */
int ar_selinux_set_exec_label(const char *label, bool enabled,
			      struct ar_error *err);

/* The error of a failed execve(exe), called right after it (errno):
 * with a label applied, an EACCES or EPERM names the label and the likely
 * cause (the policy denies the transition or, under noNewPrivileges,
 * nnp_transition). */
int ar_selinux_exec_error(struct ar_error *err, const char *exe,
			  const char *label, bool enabled);

/* The fs-specific mount data for a mount of `type` with `label`:
 * "context=\"LABEL\"" appended to `data`, as a new string; NULL when
 * unchanged (no label, or a filesystem that takes no context=: proc,
 * sysfs, cgroup, binds; mqueue, relabelled after the mount instead). */
char *ar_selinux_mount_data(const char *data, const char *type,
			    const char *label);

/* A mount of `type` takes linux.mountLabel as a label set on its root
 * after the mount, not as context= (mqueue: the IPC namespace's
 * superblock exists before the mount, and refuses other mount options). */
bool ar_selinux_relabel_after_mount(const char *type);

/* Label the file open at `fd` (a mount's root, opened for reading) with
 * `label`, as runc does for mqueue; nothing without a label or SELinux.
 * `what` names it for the message. */
int ar_selinux_relabel_fd(int fd, const char *what, const char *label,
			  struct ar_error *err);

#endif
