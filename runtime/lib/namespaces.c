/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "namespaces.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "mounts.h"
#include "utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* The name of a namespace type under /proc/self/ns. */
static const char *const proc_ns_name[OCI_NS_NTYPES] = {
	[OCI_NS_PID] = "pid",	    [OCI_NS_NETWORK] = "net",
	[OCI_NS_MOUNT] = "mnt",	    [OCI_NS_IPC] = "ipc",
	[OCI_NS_UTS] = "uts",	    [OCI_NS_USER] = "user",
	[OCI_NS_CGROUP] = "cgroup", [OCI_NS_TIME] = "time",
};

/* fd (a namespace opened by path) is the runtime's own namespace of type
 * t. When /proc cannot tell, assume it is: nothing is written then. */
static bool is_runtime_ns(int fd, enum oci_ns_type t)
{
	char path[32];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", proc_ns_name[t]);
	if (fstat(fd, &a) < 0 || stat(path, &b) < 0)
		return true;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static const char *ns_path(const struct oci_config *cfg, enum oci_ns_type t)
{
	const struct oci_namespace *ns = oci_config_find_ns(cfg, t);

	return ns && ns->path ? ns->path : "";
}

/* Nothing is written into a namespace the container does not own. */
static int plan_check(const struct oci_config *cfg,
		      const struct ar_ns_plan *plan, struct ar_error *err)
{
	const char *file = cfg->filename ? cfg->filename : "config.json";

	if ((cfg->hostname || cfg->domainname) && !plan->has_uts)
		return ar_error_set_plain(
			err, EINVAL,
			"%s: hostname/domainname need a private UTS namespace (add {\"type\": \"uts\"} to linux.namespaces)",
			file);
	if ((cfg->hostname || cfg->domainname) && !plan->separate[OCI_NS_UTS])
		return ar_error_set_plain(
			err, EINVAL,
			"%s: hostname/domainname: the UTS namespace `%s` in linux.namespaces is the runtime's own (agentrun does not change a namespace it did not create)",
			file, ns_path(cfg, OCI_NS_UTS));
	return ar_sysctl_check(cfg, plan->separate, err);
}

int ar_ns_plan_init(const struct oci_config *cfg, struct ar_ns_plan *plan,
		    struct ar_error *err)
{
	const struct oci_linux *l = &cfg->linux_;
	bool time_new = false;

	memset(plan, 0, sizeof(*plan));
	for (int i = 0; i < OCI_NS_NTYPES; i++)
		plan->join_fd[i] = -1;
	plan->time_offsets = l->time_offset_boottime.set ||
			     l->time_offset_monotonic.set;

	for (size_t i = 0; i < l->n_namespaces; i++) {
		const struct oci_namespace *ns = &l->namespaces[i];

		if (ns->type == OCI_NS_UTS)
			plan->has_uts = true;
		if (ns->type == OCI_NS_PID)
			plan->own_pid = true;
		if (ns->path && *ns->path) {
			int fd;

			if (plan->join_fd[ns->type] >= 0)
				close(plan->join_fd[ns->type]);
			fd = open(ns->path, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				ar_error_set(
					err, errno,
					"linux.namespaces: open %s namespace `%s`",
					oci_ns_type_name(ns->type), ns->path);
				ar_ns_plan_release(plan);
				return -1;
			}
			plan->join_fd[ns->type] = fd;
			plan->separate[ns->type] = !is_runtime_ns(fd, ns->type);
			plan->slow = true;
			if (ns->type == OCI_NS_PID || ns->type == OCI_NS_TIME)
				plan->fork_again = true;
			continue;
		}
		plan->separate[ns->type] = true;
		switch (ns->type) {
		case OCI_NS_MOUNT:
			plan->new_mnt = true;
			break;
		case OCI_NS_USER:
			plan->new_user = true;
			break;
		case OCI_NS_NETWORK:
			plan->new_net = true;
			break;
		case OCI_NS_CGROUP:
			plan->new_cgroup = true;
			break;
		case OCI_NS_PID:
			plan->new_pid = true;
			break;
		case OCI_NS_TIME:
			time_new = true;
			break;
		default:
			break;
		}
		plan->clone_flags |= (unsigned long)ns->clone_flag;
	}
	if (plan->time_offsets && !time_new) {
		ar_ns_plan_release(plan);
		return ar_error_set_plain(
			err, EINVAL,
			"linux.timeOffsets need a new time namespace");
	}
	if (plan->time_offsets)
		plan->slow = true;
	/* A new cgroup namespace is made after GO, once the runtime has
	 * put the process into its cgroup, so that cgroup is its root. */
	plan->clone_flags &= ~(unsigned long)CLONE_NEWCGROUP;
	if (plan->slow) {
		plan->unshare_flags = plan->clone_flags &
				      ~(unsigned long)CLONE_NEWUSER;
		if (plan->unshare_flags & (CLONE_NEWPID | CLONE_NEWTIME))
			plan->fork_again = true;
	}
	if (plan_check(cfg, plan, err) < 0) {
		ar_ns_plan_release(plan);
		return -1;
	}
	return 0;
}

void ar_ns_plan_release(struct ar_ns_plan *plan)
{
	for (int i = 0; i < OCI_NS_NTYPES; i++) {
		if (plan->join_fd[i] >= 0)
			close(plan->join_fd[i]);
		plan->join_fd[i] = -1;
	}
}

pid_t ar_ns_clone(unsigned long flags, int cgroup_fd, bool *in_cgroup,
		  struct ar_error *err)
{
	struct clone_args args;
	long r = -1;

	*in_cgroup = false;
	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	if (cgroup_fd >= 0) {
		args.flags = flags | CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)cgroup_fd;
		r = syscall(SYS_clone3, &args, sizeof(args));
		if (r >= 0) {
			*in_cgroup = true;
			return (pid_t)r;
		}
		/* E2BIG/EINVAL: a kernel without CLONE_INTO_CGROUP; the
		 * rest (EACCES, EBUSY, ...) a cgroup the child cannot be
		 * born in: try again without, the move reports it */
		ar_debug("clone3 into the cgroup: %m; cloning, then moving");
		args.cgroup = 0;
	}
	args.flags = flags;
	r = syscall(SYS_clone3, &args, sizeof(args));
	if (r < 0 && errno == ENOSYS && !(flags & CLONE_NEWTIME))
		r = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (r < 0)
		return ar_error_set(
			err, errno,
			"create the container process (clone flags 0x%lx)",
			flags);
	return (pid_t)r;
}

static const int join_order[] = {
	OCI_NS_USER,	OCI_NS_CGROUP, OCI_NS_IPC,  OCI_NS_UTS,
	OCI_NS_NETWORK, OCI_NS_PID,    OCI_NS_TIME, OCI_NS_MOUNT,
};

int ar_ns_join(const struct ar_ns_plan *plan, struct ar_error *err)
{
	static const int nstype[OCI_NS_NTYPES] = {
		[OCI_NS_PID] = CLONE_NEWPID,
		[OCI_NS_NETWORK] = CLONE_NEWNET,
		[OCI_NS_MOUNT] = CLONE_NEWNS,
		[OCI_NS_IPC] = CLONE_NEWIPC,
		[OCI_NS_UTS] = CLONE_NEWUTS,
		[OCI_NS_USER] = CLONE_NEWUSER,
		[OCI_NS_CGROUP] = CLONE_NEWCGROUP,
		[OCI_NS_TIME] = CLONE_NEWTIME,
	};

	for (size_t i = 0; i < AR_ARRAY_SIZE(join_order); i++) {
		int t = join_order[i];

		if (plan->join_fd[t] < 0)
			continue;
		if (setns(plan->join_fd[t], nstype[t]) < 0)
			return ar_error_set(err, errno, "join the %s namespace",
					    oci_ns_type_name(t));
	}
	return 0;
}

int ar_ns_write_time_offsets(const struct oci_config *cfg, struct ar_error *err)
{
	const struct oci_linux *l = &cfg->linux_;
	char buf[128];
	int len = 0;
	_cleanup_close_ int fd = -1;

	if (l->time_offset_monotonic.set)
		len += snprintf(buf + len, sizeof(buf) - (size_t)len,
				"monotonic %lld %u\n",
				(long long)l->time_offset_monotonic.secs,
				l->time_offset_monotonic.nanosecs);
	if (l->time_offset_boottime.set)
		len += snprintf(buf + len, sizeof(buf) - (size_t)len,
				"boottime %lld %u\n",
				(long long)l->time_offset_boottime.secs,
				l->time_offset_boottime.nanosecs);
	if (len == 0)
		return 0;
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return ar_error_set(err, errno,
				    "open /proc/self/timens_offsets");
	if (write(fd, buf, (size_t)len) != len)
		return ar_error_set(err, errno,
				    "linux.timeOffsets: write `%.*s`", len - 1,
				    buf);
	return 0;
}

int ar_ns_unshare_rest(const struct oci_config *cfg,
		       const struct ar_ns_plan *plan, struct ar_error *err)
{
	if (plan->unshare_flags && unshare((int)plan->unshare_flags) < 0)
		return ar_error_set(
			err, errno,
			"create the namespaces (unshare flags 0x%lx)",
			plan->unshare_flags);
	if (plan->time_offsets && ar_ns_write_time_offsets(cfg, err) < 0)
		return -1;
	return 0;
}

int ar_ns_unshare_cgroup(const struct ar_ns_plan *plan, struct ar_error *err)
{
	if (plan->new_cgroup && unshare(CLONE_NEWCGROUP) < 0)
		return ar_error_set(err, errno, "create the cgroup namespace");
	return 0;
}

int ar_ns_set_hostname(const struct oci_config *cfg,
		       const struct ar_ns_plan *plan, struct ar_error *err)
{
	if ((cfg->hostname || cfg->domainname) && !plan->separate[OCI_NS_UTS])
		return ar_error_set_plain(
			err, EINVAL,
			"hostname/domainname need a UTS namespace of the container's own");
	if (cfg->hostname &&
	    sethostname(cfg->hostname, strlen(cfg->hostname)) < 0)
		return ar_error_set(err, errno, "hostname: set `%s`",
				    cfg->hostname);
	if (cfg->domainname &&
	    setdomainname(cfg->domainname, strlen(cfg->domainname)) < 0)
		return ar_error_set(err, errno, "domainname: set `%s`",
				    cfg->domainname);
	return 0;
}

int ar_ns_same_as_self(pid_t pid, const char *name)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
	if (stat(path, &a) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	if (stat(path, &b) < 0)
		return -1;
	return a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}
