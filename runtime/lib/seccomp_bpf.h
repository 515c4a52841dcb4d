/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A compact classic-BPF program for a seccomp profile, equivalent to the
 * one libseccomp 2.5 exports but a fraction of its size.
 *
 * libseccomp emits one JEQ per syscall, in a linear chain, per
 * architecture: the agent profile is ~1,100 instructions, and the kernel
 * verifies and JITs every one of them when the filter is loaded (the most
 * expensive step of starting a sandbox).  Here, per architecture, the
 * syscall numbers are a sorted list of intervals searched by a binary
 * tree of JGE: maximal runs of consecutive numbers with the same
 * unconditional action are one interval, numbers with argument
 * conditions a leaf of their own, the holes between them the default
 * action (a range is never merged across a number that the profile does
 * not name: a future syscall lands in today's hole).
 *
 * Only what is known to match libseccomp exactly is expressed (the
 * differential test tests/unit/test_seccomp_bpf.c compares both programs
 * with a BPF interpreter); anything else makes ar_sbpf_build() fail and
 * the caller exports libseccomp's program:
 *   - architectures x86_64, x32, x86, aarch64, arm (little endian);
 *   - per syscall number, all rules with the same action, either one
 *     unconditional rule (conditional ones with the same action are then
 *     redundant) or only conditional ones (ORed; the comparisons of one
 *     rule ANDed);
 *   - on x86, the socketcall/ipc multiplexing of libseccomp (a socket
 *     call is allowed as socketcall(arg0 == SYS_x) and as the direct
 *     syscall) for unconditional rules only.
 * Syscall names that resolve to a negative (pseudo) number on an
 * architecture are left out of its section, as libseccomp does.
 */
#ifndef AGENTRUN_SECCOMP_BPF_H
#define AGENTRUN_SECCOMP_BPF_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

#include <libseccomp.h>

/* Part of the cache key of compiled programs: bump it whenever the
 * generated code changes. */
#define AR_SBPF_VERSION "1"

struct ar_sbpf;

/* default_action and bad_arch_action are SECCOMP_RET_* values. */
struct ar_sbpf *ar_sbpf_new(uint32_t default_action, uint32_t bad_arch_action);
void ar_sbpf_free(struct ar_sbpf *b);

/* A libseccomp architecture token of the filter (SCMP_ARCH_*). */
void ar_sbpf_add_arch(struct ar_sbpf *b, uint32_t arch);

/* A rule as added to libseccomp: the syscall `name` (resolved like
 * seccomp_syscall_resolve_name() and translated per architecture the way
 * libseccomp translates it), the action, n comparisons ANDed.  name must
 * stay valid until ar_sbpf_build(). */
void ar_sbpf_add_rule(struct ar_sbpf *b, const char *name, uint32_t action,
		      const struct scmp_arg_cmp *cmps, size_t n);

/* The program (malloc'ed array of *len instructions), or -1 when the
 * profile has a shape this generator does not express (*why says which;
 * the caller then uses libseccomp's program). */
int ar_sbpf_build(struct ar_sbpf *b, struct sock_filter **out, size_t *len,
		  const char **why);

#endif
