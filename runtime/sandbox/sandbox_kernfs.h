/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The host's kernel interfaces (/proc, /sys, cgroup, debugfs, ...) are
 * never bound into the sandbox (sandbox_kernfs.c). */
#ifndef AGENTRUN_SANDBOX_KERNFS_H
#define AGENTRUN_SANDBOX_KERNFS_H

#include <stdbool.h>

#include "error.h"

/* The name of a kernel interface file system for statfs's f_type
 * (proc, sysfs, cgroup, cgroup2, debugfs, ...), NULL for any other. */
const char *sb_kernfs_magic_name(long f_type);
/* Whether a mountinfo FSTYPE is one (and devtmpfs). */
bool sb_kernfs_type(const char *fstype);
/* Whether the text of a /proc/self/mountinfo has a kernel interface
 * mounted at PATH or below it; *mnt_out and *type_out (malloc'd, may be
 * NULL) name the first. */
bool sb_kernfs_below(const char *mountinfo, const char *path, char **mnt_out,
		     char **type_out);
/* Refuse (EPERM, the option and path named) binding REAL (GIVEN on the
 * command line, WHAT the option) when it is under /proc or /sys or on a
 * kernel interface file system, or when such a mount is below it (the
 * binds are recursive). */
int sb_kernfs_refuse(const char *what, const char *given, const char *real,
		     struct ar_error *err);

#endif
