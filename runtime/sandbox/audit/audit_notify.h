/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The seccomp user-notification listener of `agentrun sandbox --audit`
 * and `--learn` (audit_notify.c). Observation only, never a security
 * decision: every notification is answered SECCOMP_USER_NOTIF_FLAG_CONTINUE
 * (the syscall runs as if the listener did not exist) because what the
 * listener reads from the process's memory may change before the kernel
 * reads it (TOCTOU). The decisions are the sandbox's other layers.
 *
 * The rules are added to the sandbox's seccomp profile: the observed
 * syscalls leave the profile's unconditional SCMP_ACT_ALLOW rules and get
 * one SCMP_ACT_NOTIFY rule, so a syscall the profile denies stays denied
 * and is not observed. The runtime hands the listener fd to the config's
 * listenerPath, a unix socket of this process (a private directory under
 * /tmp), like any OCI seccomp agent; one thread here accepts it and
 * answers notifications until the sandbox's processes are gone.
 */
#ifndef AGENTRUN_AUDIT_NOTIFY_H
#define AGENTRUN_AUDIT_NOTIFY_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"

struct ar_audit;
struct sb_learn;
struct sb_protect;

/* What to observe: exec and connect (audit), file paths (learn: every
 * open and the calls that create, remove or rename), the calls that
 * write by path (audit: sb_fcall_write_names, audit_paths.h; an open
 * only with a write flag). */
enum {
	SB_NOTIFY_EXEC = 1,
	SB_NOTIFY_CONNECT = 2,
	SB_NOTIFY_PATHS = 4,
	SB_NOTIFY_WRITES = 8,
};

/* Move the syscalls of `what` from the profile's ALLOW rules into one
 * NOTIFY rule and set listenerPath. With SB_NOTIFY_WRITES but not
 * SB_NOTIFY_PATHS, open and openat get two rules each instead: ALLOW
 * without a write flag (no round trip for a read), NOTIFY with one. The
 * profile's conditional ALLOW rules on a moved syscall must be ones the
 * listener reproduces (a created or chmod'ed file's mode without
 * S_ISUID/S_ISGID, an open without O_CREAT/O_TMPFILE); another condition
 * is an error. Fails too when the profile already uses SCMP_ACT_NOTIFY
 * (the kernel allows one listener per filter chain) or has no seccomp
 * profile. */
int sb_notify_rules(struct oci_seccomp *sc, struct ar_arena *a, int what,
		    const char *listener_path, struct ar_error *err);

/* The attempts on protected paths the listener saw (its thread writes,
 * the caller reads after sb_notify_stop): how many events, and the first
 * SB_ATTEMPTS_NAMED distinct paths with the op of their first attempt. */
#define SB_ATTEMPTS_NAMED 3
struct sb_attempts {
	size_t n;
	bool more; /* a path beyond the named ones */
	size_t n_named;
	struct {
		char *path; /* malloc'd */
		const char *op; /* static */
	} named[SB_ATTEMPTS_NAMED];
};
void sb_attempts_free(struct sb_attempts *at);

struct sb_notify;

/* Listen on a fresh socket (audit and learn may be NULL) ... */
int sb_notify_start(struct ar_audit *audit, struct sb_learn *learn,
		    struct sb_notify **out, struct ar_error *err);
/* ... and start the thread, once the container process exists (from
 * on_spawn): the runtime clones the container process with a raw clone3,
 * which must not happen while another thread may hold a libc lock. */
int sb_notify_run(struct sb_notify *n, pid_t init_pid, char *const *init_argv,
		  struct ar_error *err);
/* --audit: each observed write-intent call whose path (resolved as the
 * kernel will, audit_paths.h) is a protected path of `p`
 * (sb_protect_attempt) gives a "protected_attempt" event and is counted
 * in *at. Call before sb_notify_run; p and at outlive the listener. */
void sb_notify_protect(struct sb_notify *n, const struct sb_protect *p,
		       struct sb_attempts *at);
const char *sb_notify_socket(const struct sb_notify *n);
/* Number of notifications answered (for tests and the debug log). */
unsigned long sb_notify_count(const struct sb_notify *n);
/* Stop the thread (after the sandbox exited; the debug log says how many
 * notifications it answered), remove the socket. */
void sb_notify_stop(struct sb_notify *n);

#endif
