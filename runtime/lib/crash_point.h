/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test hook for crash safety (tests/integration/test_crash.sh):
 * with AGENTRUN_TEST_CRASH_AT=<point> in the environment, the runtime
 * kills itself with SIGKILL when it reaches the named point, exactly as a
 * `kill -9` between two steps would.  A crash at any point must leave a
 * container that `state` reports sensibly and `delete --force` removes
 * completely (state directory, processes, mounts, cgroup).
 *
 * Always compiled in, not behind a configure option: a runtime that kills
 * itself on request of its own environment gives the caller nothing it
 * did not have (the caller can SIGKILL it anyway), and the make check of
 * every build -- release and sanitizer builds included -- exercises the
 * same binary that is shipped.  The cost when the variable is unset is one
 * getenv() per process (cached) and a pointer test per point.
 *
 * Points (named <command>-<step>; the list test_crash.sh walks):
 *   create-state-dir      the container directory exists, nothing in it
 *   create-fifo           the exec fifo exists, no container process yet
 *   create-cloned         the container process exists (before the maps);
 *                         with the cgroupfs manager it was born in its
 *                         cgroup, whose path state.json (no pid yet)
 *                         recorded before the mkdir
 *   create-maps           user namespace maps written; no cgroup yet with
 *                         systemd
 *   create-cgroup         the process is in its cgroup (systemd: its path
 *                         was recorded in state.json just before the mkdir)
 *   create-state-creating state.json records the pid ("creating")
 *   create-ready          the container process waits on the exec fifo,
 *                         state.json still says "creating"
 *   create-state-written  state.json final ("created"), before exit
 *   start-begin           start holds the lock, fifo not opened
 *   start-fifo-opened     the container process is released
 *   start-fifo-read       the byte is read, the fifo still exists
 *   start-fifo-removed    the fifo is gone, poststart hooks not run
 *   delete-killed         the container's processes are killed
 *   delete-cgroup-removed the cgroup is removed, the state is complete
 *   delete-state-partial  every file but state.json removed
 *   delete-state-removed  state.json removed, the directory is still there
 * and of `agentrun commit` (tests/integration/test_faults_commit.sh):
 *   commit-temp-written   a file's new content written and synced, not
 *                         yet linked into the workspace
 *   commit-half           half of the changes to put applied
 */
#ifndef AGENTRUN_CRASH_POINT_H
#define AGENTRUN_CRASH_POINT_H

#include <stdbool.h>

#define AR_CRASH_ENV "AGENTRUN_TEST_CRASH_AT"

/* The value of AGENTRUN_TEST_CRASH_AT, read once; NULL when unset. */
const char *ar_crash_point_target(void);

/* SIGKILL ourselves (never returns). */
__attribute__((noreturn)) void ar_crash_now(const char *point);

static inline void ar_crash_point(const char *point)
{
	const char *at = ar_crash_point_target();

	if (__builtin_expect(at != 0, 0) && __builtin_strcmp(at, point) == 0)
		ar_crash_now(point);
}

#endif
