/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Namespace creation refused inside a sandbox without --nested
 * (sandbox_refusal.c). The failing program says only "Operation not
 * permitted" (unshare, podman) or "No permissions to create new
 * namespace" (bubblewrap); the runtime observes each refusal
 * (runtime/lib/seccomp_refusal.h) and this names the way out: each one in
 * the --log file (and on stderr with --verbose) as it happens, and when
 * the command has exited, one line on stderr, as for blocked connections:
 *   agentrun: namespace creation refused 2 times (bwrap:
 *   clone(CLONE_NEWUSER|...)): rerun with --nested to let commands
 *   create namespaces (...)
 */
#ifndef AGENTRUN_SANDBOX_REFUSAL_H
#define AGENTRUN_SANDBOX_REFUSAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sb_refusals {
	bool verbose;
	unsigned long n;
	char first[160]; /* "bwrap: clone(CLONE_NEWUSER|CLONE_NEWNS)" */
};

/* An ar_refusal_fn; data: the struct sb_refusals. */
void sb_refusal_event(const char *comm, const char *syscall, uint64_t arg0,
		      uint64_t arg1, void *data);
/* The summary line, when something was refused. */
void sb_refusal_summary(const struct sb_refusals *r);

#endif
