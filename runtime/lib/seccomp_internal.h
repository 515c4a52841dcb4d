/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by seccomp.c and seccomp_cache.c only. */
#ifndef AGENTRUN_SECCOMP_INTERNAL_H
#define AGENTRUN_SECCOMP_INTERNAL_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seccomp.h"

/* BPF programs are at most BPF_MAXINSNS (4096) instructions. */
#define AR_SECCOMP_BPF_MAX (4096 * sizeof(struct sock_filter))

struct ar_seccomp_filter {
	void *ctx; /* scmp_filter_ctx; NULL when loaded from the cache */
	struct sock_filter *bpf;
	size_t bpf_len; /* bytes */
	unsigned int flags; /* SECCOMP_FILTER_FLAG_* from the config */
	bool notify;
	bool from_cache;
	bool compact; /* bpf from seccomp_bpf.c, not libseccomp's export */
};

/* ar_seccomp_compile() with knobs for tests. */
struct ar_seccomp_compile_opts {
	uint32_t native; /* the architecture that decides which of the
			  * profile's run here; 0: seccomp_arch_native() */
	int x32; /* whether x32 syscalls work; -1: ar_seccomp_x32_runs() */
	bool libseccomp_only; /* always export libseccomp's program */
};

int ar_seccomp_compile_opts(const struct oci_seccomp *sc,
			    const struct ar_seccomp_compile_opts *o,
			    struct ar_seccomp_filter **out,
			    struct ar_error *err);

/* Whether this kernel runs x32 syscalls (only asked on x86_64).  Probed
 * once per process: prctl(PR_GET_SECCOMP), and, when no seccomp filter
 * is in force, getpid with the x32 bit (ENOSYS: no x32).  Under a filter
 * the probe could be fatal (an outer filter may kill on x32), so x32 is
 * then assumed to work. */
bool ar_seccomp_x32_runs(void);

/* Whether a profile's x32 section goes into the filter on an
 * architecture: everywhere but on an x86_64 kernel without x32. Decides
 * the program and is part of the cache key (seccomp_cache.c). */
bool ar_seccomp_x32_in_filter(uint32_t native);

#endif
