/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loopback in a new network namespace. The kernel creates `lo` DOWN in
 * every new netns; a sandbox with --net none still wants 127.0.0.1 (local
 * servers, test runners, language servers). The container process brings
 * it up before pivot_root in every network namespace the runtime creates,
 * as crun does (needs CAP_NET_ADMIN over the netns: the container process
 * has it in the user namespace that owns the netns). The annotation
 *   run.agentrun.net.loopback = "up"
 * is still accepted (the default).
 */
#ifndef AGENTRUN_NET_LOOPBACK_H
#define AGENTRUN_NET_LOOPBACK_H

#include <stdbool.h>

#include "error.h"
#include "oci_config.h"

#define AR_ANNOTATION_NET_LOOPBACK "run.agentrun.net.loopback"

/* Set IFF_UP on "lo" of the current network namespace. */
int ar_net_loopback_up(struct ar_error *err);

/* `lo` up when the container has a new netns (`new_netns`); a no-op in a
 * joined or inherited one. An annotation value other than "up" is an
 * error naming it. */
int ar_net_loopback_apply(const struct oci_config *cfg, bool new_netns,
			  struct ar_error *err);

#endif
