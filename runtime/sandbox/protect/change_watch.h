/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The directories changed while the sandbox ran, told by the kernel
 * (fanotify, a filesystem mark) instead of found by reading every one:
 * the end-of-run check (host_exec_check.h) then reads only those. A
 * filesystem mark needs CAP_SYS_ADMIN in the initial user namespace
 * (agentrun run as root); without it, or when the kernel's queue
 * overflowed, the check walks the workspace as before.
 */
#ifndef AGENTRUN_SANDBOX_CHANGE_WATCH_H
#define AGENTRUN_SANDBOX_CHANGE_WATCH_H

#include <stdbool.h>
#include <stddef.h>

struct sb_watch;

/* Watch the filesystem holding the directory `dir` (a real path):
 * every directory an entry was made, removed, renamed, written, closed
 * after writing or had its attributes changed in, by any process, from
 * now on. NULL: not available here (not privileged, a filesystem
 * without file handles, an old kernel), said at debug level. */
struct sb_watch *sb_watch_start(const char *dir);

/* Stop watching (every process whose changes count has ended: their
 * events are all queued) and free w. 0: *out is the NULL-terminated
 * list of the changed directories at or below `under` (real paths,
 * sorted, each once; those since removed left out), *n their count.
 * -1: the changes are not all known (the queue overflowed, too many
 * directories, one that could not be opened): the caller must look
 * everywhere. */
int sb_watch_end(struct sb_watch *w, const char *under, char ***out, size_t *n);

/* The most distinct directories remembered: past it, look everywhere. */
#define SB_WATCH_MAX_DIRS 20000

#endif
