/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup_convert.h -- the pure cgroup v1 -> v2 value conversions
 * (cgroup_resources.c), apart from cgroup.h so that the systemd
 * properties (cgroup_systemd_props.c) use them without depending on the
 * cgroup manager that uses the properties.
 */
#ifndef AGENTRUN_CGROUP_CONVERT_H
#define AGENTRUN_CGROUP_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

/* Pure conversions, exported for the unit tests. */
/* cpu.shares (2..262144) -> cpu.weight (1..10000), linear like runc and
 * older crun: 1 + (shares - 2) * 9999 / 262142; 0 = unset -> 0. */
uint64_t ar_cgroup_shares_to_weight(uint64_t shares);
/* blkio.weight (10..1000) -> io.weight (1..10000):
 * 1 + (w - 10) * 9999 / 990; 0 -> 0. */
uint64_t ar_cgroup_blkio_to_io_weight(uint64_t w);
/* v1 memory+swap -> v2 memory.swap.max given the memory limit (like
 * runc/crun): swap -1 -> -1 (max); swap 0 -> *out 0 with *set false
 * (unset); else needs a real limit and swap >= limit; out = swap - limit.
 * `limit` is -1 for "max"/unset. */
int ar_cgroup_swap_to_v2(int64_t swap, int64_t limit, int64_t *out, bool *set,
			 struct ar_error *err);

#endif
