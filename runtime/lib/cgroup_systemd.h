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

/* A unit property as D-Bus carries it: type is its signature ('t'
 * uint64, 'x' int64, 'u' uint32, 'i' int32, 'b' boolean in i, 's' string,
 * 'a' an array of strings "as"). */
#define AR_SD_PROP_NAME_MAX 64
struct ar_systemd_prop {
	char name[AR_SD_PROP_NAME_MAX];
	char type;
	uint64_t u; /* 't', 'u' */
	int64_t i; /* 'x', 'i', 'b' */
	char *s; /* 's' (owned) */
	char **strv; /* 'a': NULL-terminated (owned) */
};

/* A growing list of them (cgroup_systemd_props.c). */
struct ar_systemd_props {
	struct ar_systemd_prop *v;
	size_t n, cap;
};

struct ar_systemd_scope {
	const char *unit; /* "prefix-name.scope" */
	const char *slice; /* "system.slice" */
	const char *description;
	pid_t pid;
	bool rootless; /* the user's instance instead of the system's */
	/* the limits systemd holds (converted from linux.resources) */
	const struct ar_systemd_props *props;
	/* the org.systemd.property.* annotations: sent after agentrun's
	 * own properties, as runc does (the last one of a name wins) */
	const struct ar_systemd_props *annotations;
};

/* Start the scope with pid in it and wait for the job; 0, or -1 with
 * a message that says how to reach systemd or to use cgroupfs. */
int ar_systemd_start_scope(const struct ar_systemd_scope *s,
			   struct ar_error *err);

/* SetUnitProperties(unit, runtime=true, props): what `update` does, so
 * that systemd holds the new limits (a daemon-reload re-applies the
 * unit's properties to its cgroup). No reachable systemd is an error. */
int ar_systemd_set_props(const char *unit, bool rootless,
			 const struct ar_systemd_props *props,
			 struct ar_error *err);

/* The unit of a cgroup path: its last ".scope" component (a
 * run.oci.systemd.subgroup is the scope's child), malloc'ed; NULL when
 * there is none. */
char *ar_systemd_unit_of_path(const char *cgroup_path);

/* StopUnit(unit) when systemd still has it; a unit that is gone (or no
 * reachable systemd) is success. Waits for the job. */
int ar_systemd_stop_unit(const char *unit, bool rootless, struct ar_error *err);

/* After the cgroup was destroyed: StopUnit of the scope named by the
 * cgroup path's last component when it is a ".scope" (errors are
 * logged at debug level: the unit goes with its empty cgroup anyway). */
void ar_systemd_forget(const char *cgroup_path, bool rootless);

#endif
