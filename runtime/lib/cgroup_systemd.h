/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd cgroup manager (--systemd-cgroup, --cgroup-manager=systemd):
 * a transient scope unit asked of systemd over D-Bus, as crun and runc do.
 *
 * sd-bus of libsystemd.so.0 is loaded (dlopen) only when this manager is
 * used: a cgroupfs start never loads it. Root talks to the system
 * instance (the system bus, else systemd's private socket
 * /run/systemd/private); rootless to the user's instance
 * (DBUS_SESSION_BUS_ADDRESS or $XDG_RUNTIME_DIR/bus, else
 * $XDG_RUNTIME_DIR/systemd/private).
 *
 * StartTransientUnit("prefix-name.scope", "fail") with Slice, Delegate=yes,
 * PIDs=[the container process], DefaultDependencies=no,
 * CollectMode=inactive-or-failed and the limits systemd can hold
 * (MemoryMax, MemoryLow, MemorySwapMax, CPUWeight, CPUQuotaPerSecUSec,
 * CPUQuotaPeriodUSec, TasksMax, IOWeight: cgroup.c converts them), then
 * waits for its job's JobRemoved. The unit and slice names come from
 * ar_cgroup_systemd_unit() (cgroup.c). cgroup.c writes every limit into the scope's
 * cgroup afterwards, as for cgroupfs. The unit goes away by itself when
 * its cgroup is empty (delete kills everything in it); StopUnit is sent
 * at delete for a scope that systemd still has.
 */
#ifndef AGENTRUN_CGROUP_SYSTEMD_H
#define AGENTRUN_CGROUP_SYSTEMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* true when this build has the systemd manager (sd-bus headers). */
bool ar_systemd_built(void);

/* A unit property with a uint64 value ("MemoryMax", ...). */
struct ar_systemd_prop {
	const char *name;
	uint64_t value;
};

struct ar_systemd_scope {
	const char *unit; /* "prefix-name.scope" */
	const char *slice; /* "system.slice" */
	const char *description;
	pid_t pid;
	bool rootless; /* the user's instance instead of the system's */
	/* the limits systemd holds, converted from linux.resources */
	const struct ar_systemd_prop *props;
	size_t n_props;
};

/* Start the scope with pid in it and wait for the job; 0, or -1 with
 * a message that says how to reach systemd or to use cgroupfs. */
int ar_systemd_start_scope(const struct ar_systemd_scope *s,
			   struct ar_error *err);

/* StopUnit(unit) when systemd still has it; a unit that is gone (or no
 * reachable systemd) is success. Waits for the job. */
int ar_systemd_stop_unit(const char *unit, bool rootless, struct ar_error *err);

/* After the cgroup was destroyed: StopUnit of the scope named by the
 * cgroup path's last component when it is a ".scope" (errors are
 * logged at debug level: the unit goes with its empty cgroup anyway). */
void ar_systemd_forget(const char *cgroup_path, bool rootless);

#endif
