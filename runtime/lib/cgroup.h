/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup v2 support: where a container's cgroup lives, creating it (with
 * the controllers it needs enabled in its parents), applying
 * linux.resources, moving processes in, freezing, killing, stats, and
 * removing it again.
 *
 * Split by concern:
 *   cgroup.c            paths, managers, delegation, create/enter/destroy,
 *                       freeze, kill, pids
 *   cgroup_resources.c  linux.resources -> v2 interface files, and the pure
 *                       v1 -> v2 conversions
 *   cgroup_stats.c      cpu/memory/pids/io statistics, OOM counters, the
 *                       runc-compatible `events` JSON
 *   cgroup_devices.c    linux.resources.devices -> an eBPF device program
 *   cgroup_file.c       reading and writing interface files (below the
 *                       others: cgroup.c calls cgroup_resources.c, both
 *                       call cgroup_file.c)
 *
 * Only cgroup v2 is supported.  On hosts where /sys/fs/cgroup is a v1 or
 * hybrid layout, the v2 tree (/sys/fs/cgroup/unified) is used, with the
 * controllers it has (often none; see ar_cgroup_create()).  The v1
 * hierarchies are never touched.
 *
 * All functions that take a `path` take the absolute cgroupfs path as
 * stored in state.json (ar_cgroup_path()), e.g.
 * "/sys/fs/cgroup/agentrun/ID".  They refuse paths that are not on a
 * cgroup2 file system or that are the root of the hierarchy.
 */
#ifndef AGENTRUN_CGROUP_H
#define AGENTRUN_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cgroup_convert.h"
#include "cgroup_systemd_props.h"
#include "cgroup_file.h" /* AR_CG_MAX */
#include "error.h"
#include "oci_config.h"

/* Same values as enum ar_cgroup_manager of the CLI (runtime/cli/cli.h);
 * the library does not include CLI headers. */
enum ar_cgroup_mgr {
	AR_CGROUP_MGR_CGROUPFS = 0,
	AR_CGROUP_MGR_SYSTEMD,
	AR_CGROUP_MGR_DISABLED,
};

/* Opting into "run without the limits that cannot be applied" instead of
 * failing: the annotation set to "true", or the environment variable set
 * to "1" or "true". */
/* root's cgroups without a linux.cgroupsPath: <mount>/agentrun/<id>; the
 * parent is removed with its last container (ar_cgroup_destroy) */
#define AR_CGROUP_DEFAULT_PARENT "agentrun"

#define AR_CGROUP_IGNORE_ANNOTATION "run.agentrun.cgroup.ignore-unavailable"
#define AR_CGROUP_IGNORE_ENV "AGENTRUN_CGROUP_IGNORE_UNAVAILABLE"
#define AR_CGROUP_SYSTEMD_SUBGROUP_ANNOTATION "run.oci.systemd.subgroup"

/* Controllers, as a bit mask. */
enum ar_cgroup_ctrl {
	AR_CG_CPU = 1u << 0,
	AR_CG_CPUSET = 1u << 1,
	AR_CG_IO = 1u << 2,
	AR_CG_MEMORY = 1u << 3,
	AR_CG_PIDS = 1u << 4,
	AR_CG_HUGETLB = 1u << 5,
	AR_CG_RDMA = 1u << 6,
	AR_CG_MISC = 1u << 7,
};
/* Enabled for every container cgroup when available, so that stats,
 * `update` and OOM events work even when config.json sets no limit. */
#define AR_CG_DEFAULT (AR_CG_CPU | AR_CG_IO | AR_CG_MEMORY | AR_CG_PIDS)

struct ar_cgroup_opts {
	const char *id; /* container id (required) */
	const char *cgroups_path; /* linux.cgroupsPath; NULL = default */
	enum ar_cgroup_mgr manager;
	bool rootless;
	const struct oci_resources *resources; /* NULL = no limits */
	/* linux.devices: allowed by the device program */
	const struct oci_device *devices;
	size_t n_devices;
	bool ignore_unavailable; /* see AR_CGROUP_IGNORE_* */
	/* systemd manager: the annotation run.oci.systemd.subgroup (as
	 * crun): the container's cgroup is this child of the scope; NULL
	 * or "": the scope itself */
	const char *systemd_subgroup;
	/* systemd manager: the org.systemd.property.* annotations among
	 * these become unit properties (cgroup_systemd_props.h) */
	const struct oci_kv *annotations;
	size_t n_annotations;
	pid_t pid; /* > 0: move this process in; <= 0: none (use
		    * ar_cgroup_dirfd() with clone3 CLONE_INTO_CGROUP,
		    * or ar_cgroup_enter() later) */

	/* For tests; NULL in production. */
	const char *mount; /* cgroup2 mount to use instead of detecting it;
			    * also skips the file system type checks */
	const char *own_cgroup; /* our cgroup relative to the mount ("/a/b")
				 * instead of /proc/self/cgroup */
};

/* Fill id, cgroups_path, resources and ignore_unavailable from a config
 * (annotation and environment); the caller sets manager, rootless, pid. */
void ar_cgroup_opts_from_config(struct ar_cgroup_opts *o,
				const struct oci_config *cfg, const char *id);

struct ar_cgroup;

/*
 * Create the container's cgroup, enable the controllers it needs in its
 * parents (AR_CG_DEFAULT plus those the resources need, when available),
 * apply the resources and, when o->pid > 0, move that process in.
 *
 * Where (relative to the cgroup2 mount):
 *   manager disabled            no cgroup (limits: a warning, not an
 *                               error -- the user chose it, as in crun)
 *   root, no cgroupsPath        /agentrun/ID
 *   root, "/a/b" or "a/b"       /a/b
 *   rootless                    below the delegated base: our own cgroup,
 *                               or its parent when our own cgroup holds
 *                               processes (the "no internal processes"
 *                               rule forbids enabling controllers there)
 *                               and the parent is delegated to us too --
 *                               the container becomes our sibling.
 *                               No cgroupsPath: BASE/agentrun-ID; relative
 *                               "a/b": BASE/a/b; absolute: as root.
 *   "slice:prefix:name"         (systemd form, cgroupfs manager: mapped
 *                               the way systemd would lay it out:
 *                               a-b.slice -> /a.slice/a-b.slice, unit
 *                               prefix-name.scope inside it; an empty slice
 *                               is system.slice, or user.slice rootless;
 *                               rootless it is below the delegated base)
 *   systemd manager             a transient scope asked of systemd over
 *                               D-Bus (cgroup_systemd.h) with o->pid in it
 *                               (required): the plan has no path, make
 *                               starts the scope, reads its cgroup from
 *                               /proc/PID/cgroup and writes the limits and
 *                               the device program into it
 *
 * A cgroup is made whenever the v2 tree is writable, with or without
 * controllers (cgroup.procs, cgroup.freeze, cgroup.kill and the device
 * program need none).  When no usable cgroup exists (no cgroup2 mount,
 * a read-only or unwritable tree, or rootless without a delegated
 * subtree): with no limits requested, the container runs without a cgroup
 * (rootless: a warning, once); with limits or (not rootless) device rules
 * requested it is an error unless o->ignore_unavailable, then a warning.
 * Limits whose controller is missing behave the same way.
 * linux.resources.devices becomes an eBPF device program
 * (cgroup_devices.c) unless rootless: a user namespace cannot load one,
 * and the kernel refuses it mknod anyway (logged at debug level).  The
 * device program is not attached in a fake tree (o->mount set).
 *
 * On success *out is always set; ar_cgroup_path() is NULL when the
 * container runs without a cgroup.
 */
int ar_cgroup_create(const struct ar_cgroup_opts *o, struct ar_cgroup **out,
		     struct ar_error *err);

/* ar_cgroup_create() in two steps, so the caller can record the path
 * before the cgroup exists (crash safety: a runtime killed after the
 * mkdir leaves a cgroup that `delete --force` finds).
 * ar_cgroup_plan: everything up to the mkdir (where, which controllers,
 * the errors of missing ones); *out is always set on success and
 * ar_cgroup_path() is the planned path, or NULL when the container runs
 * without a cgroup. Nothing is made yet.
 * ar_cgroup_make: make it (same o), enable the controllers, apply the
 * resources and devices, move o->pid in. A tree found unwritable then
 * means no cgroup as above (0, ar_cgroup_path() NULL). On error the
 * path is NULL too: nothing of the plan is the container's. */
int ar_cgroup_plan(const struct ar_cgroup_opts *o, struct ar_cgroup **out,
		   struct ar_error *err);
int ar_cgroup_make(struct ar_cgroup *cg, const struct ar_cgroup_opts *o,
		   struct ar_error *err);

/* Absolute cgroupfs path (for state.json), NULL when none. */
const char *ar_cgroup_path(const struct ar_cgroup *cg);
/* O_RDONLY|O_DIRECTORY fd of the cgroup for clone3's CLONE_INTO_CGROUP
 * (owned by cg), -1 when none. */
int ar_cgroup_dirfd(const struct ar_cgroup *cg);
/* Frees the object; the cgroup itself stays (see ar_cgroup_destroy). */
void ar_cgroup_free(struct ar_cgroup *cg);
static inline void ar_cgroup_freep(struct ar_cgroup **cg)
{
	if (*cg)
		ar_cgroup_free(*cg);
}
#define _cleanup_cgroup_ __attribute__((cleanup(ar_cgroup_freep)))

/* Move pid into the cgroup (no-op without a cgroup). */
int ar_cgroup_enter(const struct ar_cgroup *cg, pid_t pid,
		    struct ar_error *err);
int ar_cgroup_enter_path(const char *path, pid_t pid, struct ar_error *err);

/* Kill everything left (cgroup.kill, else SIGKILL to each pid), wait until
 * it is empty, remove it and its child cgroups (retrying on EBUSY).
 * A path that does not exist any more is success. */
int ar_cgroup_destroy(const char *path, struct ar_error *err);

/* Write cgroup.freeze and wait (up to 10 s) for cgroup.events to report
 * "frozen 1" / "frozen 0". */
int ar_cgroup_freeze(const char *path, bool freeze, struct ar_error *err);
/* true when cgroup.events says "frozen 1". */
bool ar_cgroup_is_frozen(const char *path);

/* Signal every process of the cgroup and its descendants; SIGKILL uses
 * cgroup.kill when the kernel has it (5.14+). */
int ar_cgroup_kill_all(const char *path, int sig, struct ar_error *err);

/* Pids of the cgroup and its descendants (sorted, malloc'ed). */
int ar_cgroup_pids(const char *path, pid_t **out, size_t *n,
		   struct ar_error *err);

/* Apply (changed) resources to an existing cgroup, enabling controllers
 * in its parents as needed: `update`. */
int ar_cgroup_update(const char *path, const struct oci_resources *r,
		     struct ar_error *err);

/* ---- resources (cgroup_resources.c) ---- */

/* Controllers the resources need (unified keys included).  Fails on a
 * malformed unified key or a controller agentrun does not know. */
int ar_cgroup_resources_ctrls(const struct oci_resources *r, unsigned *mask,
			      struct ar_error *err);
/* true when r sets anything that is a limit (devices excluded). */
bool ar_cgroup_resources_any(const struct oci_resources *r);

/* Write r into the cgroup open at dirfd.  Groups whose controller is not
 * in `avail` are skipped with a warning (callers only pass a partial mask
 * after the user opted into ignoring unavailable controllers). */
int ar_cgroup_apply_resources(int dirfd, const struct oci_resources *r,
			      unsigned avail, struct ar_error *err);

/* linux.resources.unified key: a plain file name "controller.file", no
 * '/', not "." or "..".  *ctrl gets the controller bit (0 for cgroup.*
 * core files). */
int ar_cgroup_unified_key_check(const char *key, unsigned *ctrl,
				struct ar_error *err);
/* "memory" -> AR_CG_MEMORY; 0 when unknown. */
unsigned ar_cgroup_ctrl_from_name(const char *name, size_t len);
const char *ar_cgroup_ctrl_name(unsigned bit);

/* ---- devices (cgroup_devices.c) ---- */

struct bpf_insn;
/* The BPF_PROG_TYPE_CGROUP_DEVICE program for linux.resources.devices
 * `r` (may be NULL) and the linux.devices `devs` (always allowed), see
 * cgroup_devices.c; *out is malloc'ed. Fails on a malformed rule. */
int ar_cgroup_devices_program(const struct oci_resources *r,
			      const struct oci_device *devs, size_t n_devs,
			      struct bpf_insn **out, size_t *n_out,
			      struct ar_error *err);
/* Load it and attach it to the cgroup open at dirfd (needs CAP_BPF or
 * CAP_SYS_ADMIN on the host: not rootless). */
int ar_cgroup_devices_apply(int dirfd, const struct oci_resources *r,
			    const struct oci_device *devs, size_t n_devs,
			    struct ar_error *err);

/* ---- paths (cgroup.c) ---- */

/* The cgroup path relative to the mount ("/a/b") for cgroupsPath `cp`
 * (NULL = default).  `base` is the delegated base for rootless ("/" when
 * root). */
int ar_cgroup_resolve_path(const char *cp, const char *id, bool rootless,
			   const char *base, char **out, struct ar_error *err);
/* The cgroup2 mount point ("/sys/fs/cgroup" or "/sys/fs/cgroup/unified"),
 * NULL when there is none. */
const char *ar_cgroup_mount(void);
/* Our own cgroup from /proc/self/cgroup ("0::/x"), malloc'ed. */
int ar_cgroup_own(char **out, struct ar_error *err);

/* ---- stats (cgroup_stats.c) ---- */

struct ar_cgroup_io_stat {
	unsigned major, minor;
	uint64_t rbytes, wbytes, rios, wios, dbytes, dios;
};

struct ar_cgroup_stats {
	bool has_cpu;
	uint64_t cpu_usage_usec, cpu_user_usec, cpu_system_usec;
	uint64_t cpu_nr_periods, cpu_nr_throttled, cpu_throttled_usec;

	bool has_memory;
	uint64_t mem_current, mem_max, mem_peak;
	uint64_t swap_current, swap_max;
	uint64_t mem_anon, mem_file, mem_kernel;
	uint64_t ev_low, ev_high, ev_max, ev_oom, ev_oom_kill;

	bool has_pids;
	uint64_t pids_current, pids_max;

	struct ar_cgroup_io_stat *io;
	size_t n_io;

	char *memory_stat; /* memory.stat as read (runc's "raw"), or NULL */
};

int ar_cgroup_stats(const char *path, struct ar_cgroup_stats *out,
		    struct ar_error *err);
void ar_cgroup_stats_release(struct ar_cgroup_stats *s);

/* memory.events oom_kill (processes killed by the OOM killer in the
 * cgroup and below); 0 when the file is absent. */
int ar_cgroup_oom_count(const char *path, uint64_t *out, struct ar_error *err);

/* runc's `events` JSON: {"type":"stats","id":ID,"data":{...}} on one
 * line, ending in a newline (malloc'ed into *out). */
int ar_cgroup_stats_json(const char *id, const struct ar_cgroup_stats *s,
			 char **out, struct ar_error *err);

/* Stream events for `events`: one stats object every interval_ms (unless
 * stats_once: print one and return), and {"type":"oom","id":ID} whenever
 * memory.events oom_kill grows.  Stops when alive(ctx) returns false or
 * the cgroup is gone. */
int ar_cgroup_events(const char *path, const char *id, bool stats_once,
		     int interval_ms, bool (*alive)(void *ctx), void *ctx,
		     FILE *out, struct ar_error *err);

#endif
