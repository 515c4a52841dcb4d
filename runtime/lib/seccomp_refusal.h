/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Refused namespace creation, observed (seccomp_refusal.c). The agent
 * profile refuses clone/unshare with namespace flags and setns with
 * EPERM; the program that fails says only "Operation not permitted" or
 * "No permissions to create new namespace". With these rules the same
 * calls go to a seccomp user notification instead, which the runtime
 * answers with the same EPERM (never CONTINUE: the listener takes no
 * security decision, and when it is gone the kernel fails the calls with
 * ENOSYS), and reports to the caller, who can name the way out
 * (`agentrun sandbox --nested`).
 */
#ifndef AGENTRUN_SECCOMP_REFUSAL_H
#define AGENTRUN_SECCOMP_REFUSAL_H

#include <stdint.h>
#include <sys/types.h>

#include "oci_config.h"

/* One refused call: the process (its name as the kernel has it, read
 * while the process waits in the call: "pid N" when it could not be), the
 * syscall name ("clone", "unshare", "setns") and its first two arguments
 * (clone/unshare: the flags; setns: the fd and the nstype). */
typedef void (*ar_refusal_fn)(const char *comm, const char *syscall,
			      uint64_t arg0, uint64_t arg1, void *data);

/* Add SCMP_ACT_NOTIFY rules for clone and unshare with any namespace
 * flag and for setns to a profile that refuses them (the agent profile:
 * its default action is ERRNO and its clone/unshare rules allow them only
 * without namespace flags). */
void ar_seccomp_refusal_rules(struct oci_seccomp *sc, struct ar_arena *a);

/* Receive one notification on the listener nfd, answer it EPERM and call
 * fn (may be NULL). Returns 0, or -1 when the listener is gone (every
 * process of the filter exited) or broken. */
int ar_seccomp_refusal_answer(int nfd, ar_refusal_fn fn, void *data);

/* "CLONE_NEWUSER|CLONE_NEWNS" for the namespace bits of flags. */
void ar_seccomp_ns_flags_str(uint64_t flags, char *buf, size_t len);

#endif
