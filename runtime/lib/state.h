/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Container state on disk: one directory per container under the state
 * root (--root), holding state.json (written atomically: temp + fsync +
 * rename) and, while the container is "created", the exec fifo.
 *
 * Locking: every command that changes a container holds an flock on the
 * container directory (ar_state_lock); `create` makes the directory with
 * mkdirat, so a duplicate id fails atomically.
 */
#ifndef AGENTRUN_STATE_H
#define AGENTRUN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"
#include "state_json.h"

#define AR_ID_MAX 1024
#define AR_EXEC_FIFO "exec.fifo"
#define AR_STATE_FILE "state.json"
/* An empty file made once create/run has set the container up; until it
 * exists, state.json (written with "creating": true) reads as creating. */
#define AR_STATE_READY "ready"
/* comm of the container process from the clone to its execve (as runc's
 * "runc:[2:INIT]"): tells a process still waiting on the exec fifo from
 * one an interrupted `start` already let go. 15 characters at most. */
#define AR_INIT_COMM "agentrun:[init]"

enum ar_status {
	AR_STATUS_CREATING = 0,
	AR_STATUS_CREATED,
	AR_STATUS_RUNNING,
	AR_STATUS_STOPPED,
	AR_STATUS_PAUSED,
};

const char *ar_status_name(enum ar_status s);

/* Validate a container id: 1..AR_ID_MAX chars of [A-Za-z0-9_+.-],
 * not "." or "..", no "/". */
int ar_state_validate_id(const char *id, struct ar_error *err);

/* Open (and with create, make: mode 0700, parents too) the state root.
 * Returns a directory fd or -1. */
int ar_state_root_open(const char *root, bool create, struct ar_error *err);

/* Create the directory of a new container; fails with "container `ID`
 * already exists" when it does. Returns a directory fd or -1. */
int ar_state_dir_create(int rootfd, const char *id, struct ar_error *err);

/* Open the directory of an existing container; fails with "container `ID`
 * does not exist". Returns a directory fd or -1. */
int ar_state_dir_open(int rootfd, const char *id, struct ar_error *err);

/* flock() the container directory (LOCK_EX or LOCK_SH). 0 or -1. The lock
 * goes away with the fd. */
int ar_state_lock(int dirfd, bool exclusive, struct ar_error *err);

/* Write state.json atomically. */
int ar_state_write(int dirfd, const struct ar_state *st, struct ar_error *err);

/* The runtime has finished setting the container up: make AR_STATE_READY
 * (state.json, written "creating" with everything else already in it, is
 * not rewritten: on a disk-backed state root replacing it costs a data
 * flush and the freeing of the old blocks on every start). */
int ar_state_mark_ready(int dirfd, struct ar_error *err);

/* Read state.json of container `id` (from its directory fd). */
int ar_state_read(int dirfd, const char *id, struct ar_state **out,
		  struct ar_error *err);

/* The status right now: stopped if the process is gone (or the pid was
 * reused); creating while state.json says so and AR_STATE_READY is absent
 * (the runtime is still setting the container up, or was killed doing
 * it); created while the
 * exec fifo exists and the process has not exec'd yet (its comm is still
 * AR_INIT_COMM); paused when its cgroup is frozen; else running. */
enum ar_status ar_state_status(int dirfd, const struct ar_state *st);

/* An existing container, opened for a command on it: the state root and
 * its directory (locked shared, or exclusive), state.json and the status
 * now. */
struct ar_existing {
	int rootfd;
	int dirfd;
	struct ar_state *st;
	enum ar_status status;
};
/* Open id's state: "container `ID` does not exist" (ENOENT) when the
 * root, the directory or (after a moment's wait for a `run` that is
 * removing it) state.json is missing. e is always set, to release with
 * ar_existing_release() whatever the result. */
int ar_state_open_existing(const char *root, const char *id, bool exclusive,
			   struct ar_existing *e, struct ar_error *err);
void ar_existing_release(struct ar_existing *e);
#define _cleanup_existing_ __attribute__((cleanup(ar_existing_release)))

/* True when st->pid still is the container process. */
bool ar_state_pid_alive(const struct ar_state *st);

/* starttime (field 22) of /proc/PID/stat; 0 if unavailable. */
unsigned long long ar_proc_start_time(pid_t pid);

/* The OCI state JSON (runtime-spec "State"): ociVersion, id, status, pid
 * (omitted when stopped), bundle, annotations. Compact, '/' unescaped.
 * *out is malloc'ed. */
int ar_state_oci_json(const struct ar_state *st, enum ar_status status,
		      char **out, size_t *len, struct ar_error *err);

/* Remove the container directory and everything in it; state.json goes
 * last, so an interrupted removal still leaves the state to finish it. */
int ar_state_remove(int rootfd, const char *id, struct ar_error *err);

/* Ids of all containers under the root, sorted; NULL-terminated. */
int ar_state_list_ids(int rootfd, char ***ids_out, struct ar_error *err);

/* Current time in RFC 3339 with nanoseconds, UTC (malloc'ed). */
char *ar_rfc3339_now(void);

/* Write PID atomically to the --pid-file PATH (create, run and exec). */
int ar_write_pid_file(const char *path, pid_t pid, struct ar_error *err);

#endif
