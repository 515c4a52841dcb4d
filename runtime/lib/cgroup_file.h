/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup v2 interface files (cgroup_file.c), for the runtime/lib/cgroup*.c
 * files; not for other users.
 */
#ifndef AGENTRUN_CGROUP_FILE_H
#define AGENTRUN_CGROUP_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define AR_CG_MAX UINT64_MAX /* "max" in a limit file */
/* The largest interface file (or /proc/self/cgroup) read. */
#define AR_CG_FILE_MAX (1u << 20)

/* One write(2) of `val` to `file` in the cgroup dirfd (O_TRUNC so a fake
 * tree of regular files holds exactly the value). */
int ar_cg_write(int dirfd, const char *file, const char *val,
		struct ar_error *err);
/* Several values, each its own write(2) on one open file (io.max,
 * hugetlb.*: the kernel takes one entry per write). */
int ar_cg_write_lines(int dirfd, const char *file, char *const *vals, size_t n,
		      struct ar_error *err);
/* Read a whole interface file (NUL terminated, malloc'ed). */
int ar_cg_read(int dirfd, const char *file, char **out, struct ar_error *err);
/* Read a single number or "max" (AR_CG_MAX). */
int ar_cg_read_u64(int dirfd, const char *file, uint64_t *out,
		   struct ar_error *err);
/* Value of `key` in a flat-keyed file ("key value\n..."); -1 if absent. */
int ar_cg_keyed(const char *buf, const char *key, uint64_t *out);
/* Open an existing cgroup by absolute path, checking that it is a
 * non-root directory of a cgroup2 file system (ar_cg_check). */
int ar_cg_open(const char *path, struct ar_error *err);
/* Whether the open directory dirfd (named path) is a container's cgroup:
 * on a cgroup2 file system, not the root of a hierarchy (EINVAL). A
 * cgroup removed since it was opened has no file left (a systemd manager
 * prunes an emptied scope at any moment): ENOENT, as if the open had come
 * after, never "the root". */
int ar_cg_check(int dirfd, const char *path, struct ar_error *err);
/* Whether the file `name` of the open cgroup dirfd is gone (ENOENT, or
 * ENODEV once the cgroup was removed): a removed cgroup has no file left. */
bool ar_cg_file_gone(int dirfd, const char *name);

#endif
