/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The container-level cgroup commands: update, pause, resume, ps, events.
 * Each looks the container up in the state root, checks its status and
 * works on the cgroup recorded in state.json (cgroup_path).
 */
#ifndef AGENTRUN_CGROUP_CONTAINER_H
#define AGENTRUN_CGROUP_CONTAINER_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "oci_config.h"

/* Apply resources to a created/running/paused container. */
int ar_cgroup_container_update(const char *root, const char *id,
			       const struct oci_resources *r,
			       struct ar_error *err);

/* Freeze a running (or created) container / thaw a paused one. */
int ar_cgroup_container_pause(const char *root, const char *id,
			      struct ar_error *err);
int ar_cgroup_container_resume(const char *root, const char *id,
			       struct ar_error *err);

/* The container's processes: json = [pid,...]; else a table
 * "PID CMD" with each process's command line. */
int ar_cgroup_container_ps(const char *root, const char *id, bool json,
			   FILE *out, struct ar_error *err);

/* `events`: see ar_cgroup_events(). */
int ar_cgroup_container_events(const char *root, const char *id, bool stats,
			       int interval_ms, FILE *out,
			       struct ar_error *err);

#endif
