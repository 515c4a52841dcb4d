/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by seccomp.c and seccomp_cache.c only. */
#ifndef AGENTRUN_SECCOMP_INTERNAL_H
#define AGENTRUN_SECCOMP_INTERNAL_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>

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
};

#endif
