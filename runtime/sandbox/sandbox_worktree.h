/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Git worktrees the run made outside the workspace (sandbox_worktree.c). */
#ifndef AGENTRUN_SANDBOX_WORKTREE_H
#define AGENTRUN_SANDBOX_WORKTREE_H

#include <time.h>

/* After a plain run: each worktree entry of WS/.git/worktrees made at or
 * after `start` whose directory does not exist on the host (it was made
 * in the sandbox's own file system, outside the workspace, and is gone)
 * is said, with what to do. */
void sb_worktrees_lost(const char *ws, const struct timespec *start);

#endif
