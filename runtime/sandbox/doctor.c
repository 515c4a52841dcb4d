/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun doctor` checks (see doctor.h). Each check reads the kernel's
 * switches first (under e->proc, replaceable by tests) and then, where a
 * switch cannot tell the whole story (AppArmor profiles, filesystem
 * support), probes with the real syscalls in a throw-away child.
 */
#define _GNU_SOURCE
#include "doctor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landlock.h"
#include "log.h"
#include "utils.h"
#include "vm/vm.h"

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#define DOCTOR_MOUNT_ATTR_IDMAP 0x00100000

struct doctor_mount_attr {
	uint64_t attr_set;
	uint64_t attr_clr;
	uint64_t propagation;
	uint64_t userns_fd;
};

void ar_doctor_env_for(struct ar_doctor_env *e, uid_t uid, const char *user)
{
	const char *p = getenv("AGENTRUN_DOCTOR_PROC");

	memset(e, 0, sizeof(*e));
	e->proc = p && *p ? p : "/proc";
	e->etc = "/etc";
	e->uid = uid;
	e->user = user;
}

void ar_doctor_env_default(struct ar_doctor_env *e)
{
	struct passwd *pw = getpwuid(getuid());

	/* pw_name: static storage of libc */
	ar_doctor_env_for(e, getuid(), pw ? pw->pw_name : NULL);
}

/* First line of PROC/rel as an integer; false when absent/unreadable. */
static bool read_switch(const struct ar_doctor_env *e, const char *rel,
			long long *out)
{
	char path[PATH_MAX], buf[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", e->proc, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return ar_parse_i64(buf, out) == 0;
}

static void set(struct ar_doctor_result *r, enum ar_doctor_status st,
		const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set(struct ar_doctor_result *r, enum ar_doctor_status st,
		const char *fix, const char *fmt, ...)
{
	va_list ap;

	r->status = st;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	snprintf(r->fix, sizeof(r->fix), "%s", fix ? fix : "");
}

/* Run fn in a forked child; returns 0 when it exited 0, else the errno
 * it exited with (or EPERM when killed). */
static int probe(int (*fn)(const struct ar_doctor_env *),
		 const struct ar_doctor_env *e)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(fn(e));
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return errno;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return EPERM;
}

static int write_file(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(s);

	if (fd < 0 || write(fd, s, len) != (ssize_t)len)
		return -1;
	return 0;
}

/* In the child: a user namespace mapping our own ids. */
static int enter_own_userns(void)
{
	char buf[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (write_file("/proc/self/uid_map", buf) < 0)
		return -1;
	if (write_file("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
		return -1;
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	return write_file("/proc/self/gid_map", buf);
}

static int probe_userns(const struct ar_doctor_env *e)
{
	(void)e;
	return enter_own_userns() < 0 ? (errno ? errno : EPERM) : 0;
}

static int probe_overlay(const struct ar_doctor_env *e)
{
	static const char *const dirs[] = { "/tmp/l", "/tmp/u", "/tmp/w",
					    "/tmp/m" };

	(void)e;
	if (enter_own_userns() < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/tmp", "tmpfs", 0, "size=64k") < 0)
		return errno ? errno : EPERM;
	for (size_t i = 0; i < AR_ARRAY_SIZE(dirs); i++)
		if (mkdir(dirs[i], 0700) < 0)
			return errno;
	if (mount("overlay", "/tmp/m", "overlay", 0,
		  "lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w") < 0)
		return errno;
	return 0;
}

static void check_userns(const struct ar_doctor_env *e,
			 struct ar_doctor_result *r)
{
	long long v;
	int rc;

	r->id = "userns";
	r->name = "user namespaces";
	if (read_switch(e, "sys/user/max_user_namespaces", &v) && v == 0)
		return set(
			r, AR_DOCTOR_FAIL,
			"sudo sysctl -w user.max_user_namespaces=15000 (persist it in /etc/sysctl.d/)",
			"user.max_user_namespaces = 0: no user namespaces at all");
	if (e->uid != 0 &&
	    read_switch(e, "sys/kernel/unprivileged_userns_clone", &v) &&
	    v == 0)
		return set(
			r, AR_DOCTOR_FAIL,
			"sudo sysctl -w kernel.unprivileged_userns_clone=1 (persist it in /etc/sysctl.d/)",
			"kernel.unprivileged_userns_clone = 0: unprivileged user namespaces are disabled");
	if (e->no_probes)
		return set(r, AR_DOCTOR_OK, NULL,
			   "user namespaces enabled (not probed)");
	rc = probe(probe_userns, e);
	if (rc && e->uid != 0 &&
	    read_switch(e, "sys/kernel/apparmor_restrict_unprivileged_userns",
			&v) &&
	    v != 0)
		return set(
			r, AR_DOCTOR_FAIL,
			"load agentrun's AppArmor profile, which allows it user namespaces: sudo apparmor_parser -r /etc/apparmor.d/agentrun (make install puts it there; the source is contrib/apparmor/agentrun); or, for every program, sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
			"kernel.apparmor_restrict_unprivileged_userns = 1 (Ubuntu): AppArmor denies unprivileged user namespaces");
	if (rc)
		return set(
			r, AR_DOCTOR_FAIL,
			"check the kernel config (CONFIG_USER_NS) and any LSM policy restricting user namespaces",
			"creating a user namespace failed: %s", strerror(rc));
	set(r, AR_DOCTOR_OK, NULL, "a user namespace can be created%s",
	    e->uid ? " unprivileged" : "");
}

static bool has_subid_entry(const char *file, const struct ar_doctor_env *e)
{
	_cleanup_fclose_ FILE *f = fopen(file, "re");
	char line[512], uidstr[32];
	size_t ul = e->user ? strlen(e->user) : 0;

	if (!f)
		return false;
	snprintf(uidstr, sizeof(uidstr), "%u:", (unsigned)e->uid);
	while (fgets(line, sizeof(line), f)) {
		if ((ul && strncmp(line, e->user, ul) == 0 &&
		     line[ul] == ':') ||
		    strncmp(line, uidstr, strlen(uidstr)) == 0)
			return true;
	}
	return false;
}

static void check_subids(const struct ar_doctor_env *e,
			 struct ar_doctor_result *r)
{
	char su[PATH_MAX], sg[PATH_MAX];
	bool tools = ar_in_path("newuidmap") && ar_in_path("newgidmap");
	bool ids;

	r->id = "subids";
	r->name = "newuidmap/newgidmap and /etc/subuid";
	if (e->uid == 0)
		return set(r, AR_DOCTOR_SKIP, NULL,
			   "root writes id maps directly");
	snprintf(su, sizeof(su), "%s/subuid", e->etc);
	snprintf(sg, sizeof(sg), "%s/subgid", e->etc);
	ids = has_subid_entry(su, e) && has_subid_entry(sg, e);
	if (tools && ids)
		return set(
			r, AR_DOCTOR_OK, NULL,
			"newuidmap/newgidmap installed, ranges for %s in %s and %s",
			e->user ? e->user : "you", su, sg);
	set(r, AR_DOCTOR_WARN,
	    !tools ?
		    "sudo apt install uidmap (or your distribution's shadow-utils)" :
		    "sudo usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $USER",
	    "%s: optional, the sandbox's keep-id map needs neither (only mapping other ids does)",
	    !tools ? "newuidmap/newgidmap not installed" :
		     "no subordinate id range for you");
}

static void check_overlay(const struct ar_doctor_env *e,
			  struct ar_doctor_result *r)
{
	int rc = probe(probe_overlay, e);

	r->id = "overlay";
	r->name = "overlayfs in a user namespace";
	if (rc == 0)
		return set(r, AR_DOCTOR_OK, NULL,
			   "overlayfs mounts in a user namespace");
	set(r, AR_DOCTOR_WARN,
	    "a kernel >= 5.11 (overlayfs in user namespaces) is needed for --overlay",
	    "overlayfs in a user namespace failed (%s): --overlay unavailable",
	    strerror(rc));
}

static int idmap_probe_fd(const char *ws, int userns_fd)
{
	struct doctor_mount_attr attr = {
		.attr_set = DOCTOR_MOUNT_ATTR_IDMAP,
		.userns_fd = (uint64_t)userns_fd,
	};
	_cleanup_close_ int fd = (int)syscall(SYS_open_tree, AT_FDCWD, ws,
					      OPEN_TREE_CLONE | O_CLOEXEC);

	if (fd < 0)
		return errno;
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr,
		    sizeof(attr)) < 0)
		return errno;
	return 0;
}

/* A user namespace mapping 0..65535 to 100000.. (a child that unshares
 * and waits); *pid must be reaped by the caller. Returns the ns fd. */
static int idmap_userns(pid_t *pid, int *hold)
{
	char path[64];
	int go[2], ready[2], fd = -1;
	char c = 0;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	*pid = fork();
	if (*pid == 0) {
		close(go[1]);
		close(ready[0]);
		c = unshare(CLONE_NEWUSER) < 0 ? 1 : 0;
		(void)!write(ready[1], &c, 1);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	if (*pid > 0 && read(ready[0], &c, 1) == 1 && c == 0) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)*pid);
		if (write_file(path, "0 100000 65536\n") == 0) {
			snprintf(path, sizeof(path), "/proc/%d/gid_map",
				 (int)*pid);
			if (write_file(path, "0 100000 65536\n") == 0) {
				snprintf(path, sizeof(path), "/proc/%d/ns/user",
					 (int)*pid);
				fd = open(path, O_RDONLY | O_CLOEXEC);
			}
		}
	}
	close(ready[0]);
	*hold = go[1]; /* closing it lets the child go */
	return fd;
}

static void check_idmap(const struct ar_doctor_env *e,
			struct ar_doctor_result *r)
{
	char buf[PATH_MAX];
	const char *ws = e->workspace;
	_cleanup_close_ int nsfd = -1;
	int hold = -1, rc;
	pid_t pid = -1;

	r->id = "idmap";
	r->name = "idmapped mounts on the workspace";
	if (!ws)
		ws = getcwd(buf, sizeof(buf));
	if (e->uid != 0)
		return set(
			r, AR_DOCTOR_SKIP, NULL,
			"not used unprivileged (the keep-id map keeps your uid)");
	if (!ws)
		return set(r, AR_DOCTOR_WARN, NULL, "cannot probe: %m");
	nsfd = idmap_userns(&pid, &hold);
	rc = nsfd < 0 ? errno : idmap_probe_fd(ws, nsfd);
	if (hold >= 0)
		close(hold);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if (rc == 0)
		return set(r, AR_DOCTOR_OK, NULL,
			   "the filesystem of %s supports idmapped mounts", ws);
	set(r, AR_DOCTOR_WARN,
	    "idmapped mounts need kernel >= 5.12 and filesystem support (ext4, xfs, btrfs, tmpfs >= 6.3, ...)",
	    "idmapped mount of %s failed (%s): as root, a workspace owned by another user is not writable",
	    ws, strerror(rc));
}

static void check_seccomp(const struct ar_doctor_env *e,
			  struct ar_doctor_result *r)
{
	char path[PATH_MAX];

	r->id = "seccomp";
	r->name = "seccomp filters";
	snprintf(path, sizeof(path), "%s/sys/kernel/seccomp/actions_avail",
		 e->proc);
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL)
		return set(r, AR_DOCTOR_FAIL,
			   "use a kernel built with CONFIG_SECCOMP_FILTER",
			   "the kernel has no seccomp");
	if (access(path, R_OK) < 0)
		return set(r, AR_DOCTOR_FAIL,
			   "use a kernel built with CONFIG_SECCOMP_FILTER",
			   "%s missing: no seccomp filter support", path);
	set(r, AR_DOCTOR_OK, NULL, "seccomp filters available");
}

int ar_doctor_landlock_abi(void)
{
	return ar_landlock_abi();
}

static void check_landlock(const struct ar_doctor_env *e,
			   struct ar_doctor_result *r)
{
	int abi = ar_doctor_landlock_abi();

	(void)e;
	r->id = "landlock";
	r->name = "Landlock";
	if (abi > 0)
		return set(r, AR_DOCTOR_OK, NULL, "Landlock ABI %d", abi);
	set(r, AR_DOCTOR_WARN,
	    "boot with lsm=...,landlock (kernel >= 5.13, CONFIG_SECURITY_LANDLOCK)",
	    "Landlock unavailable (%s): the extra filesystem layer is off",
	    errno == EOPNOTSUPP ? "disabled at boot" : "not in this kernel");
}

static void check_cgroup(const struct ar_doctor_env *e,
			 struct ar_doctor_result *r)
{
	char path[PATH_MAX], line[1024], dir[PATH_MAX];
	_cleanup_fclose_ FILE *f = NULL;
	struct stat st;
	bool found = false;

	r->id = "cgroup";
	r->name = "cgroup v2 delegation";
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) < 0)
		return set(
			r, AR_DOCTOR_WARN,
			"boot with systemd.unified_cgroup_hierarchy=1",
			"no cgroup v2 at /sys/fs/cgroup: no resource limits");
	if (e->uid == 0)
		return set(r, AR_DOCTOR_OK, NULL, "root manages cgroups");
	snprintf(path, sizeof(path), "%s/self/cgroup", e->proc);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s",
				 line + 3);
			found = true;
		}
	}
	if (!found)
		return set(r, AR_DOCTOR_WARN, NULL,
			   "cannot read the cgroup of this process (%s)", path);
	if (stat(dir, &st) == 0 && st.st_uid == e->uid)
		return set(r, AR_DOCTOR_OK, NULL, "%s is delegated to you",
			   dir);
	set(r, AR_DOCTOR_WARN,
	    "run from a systemd user session (systemd-run --user --scope -p Delegate=yes agentrun sandbox ...)",
	    "%s is not delegated to you: no resource limits for the sandbox",
	    dir);
}

/* --vm (vm/vm.h): optional; says vm(kvm) or vm(tcg, slow) and why */
static void check_vm(const struct ar_doctor_env *e, struct ar_doctor_result *r)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_vm vm;

	(void)e;
	r->id = "vm";
	r->name = "sandbox --vm";
	if (ar_vm_probe(&vm, NULL, &err) < 0) {
		set(r, AR_DOCTOR_WARN, NULL, "unavailable: %s", err.msg);
	} else if (vm.kvm) {
		set(r, AR_DOCTOR_OK, NULL, "vm(kvm): kernel %s", vm.kernel);
	} else {
		set(r, AR_DOCTOR_OK, NULL, "vm(tcg, slow): %s; kernel %s",
		    vm.why_tcg, vm.kernel);
	}
	ar_vm_release(&vm);
}

void ar_doctor_check(const struct ar_doctor_env *e, enum ar_doctor_check c,
		     struct ar_doctor_result *r)
{
	memset(r, 0, sizeof(*r));
	switch (c) {
	case AR_DOCTOR_USERNS:
		return check_userns(e, r);
	case AR_DOCTOR_SUBIDS:
		return check_subids(e, r);
	case AR_DOCTOR_OVERLAY:
		return check_overlay(e, r);
	case AR_DOCTOR_IDMAP:
		return check_idmap(e, r);
	case AR_DOCTOR_SECCOMP:
		return check_seccomp(e, r);
	case AR_DOCTOR_LANDLOCK:
		return check_landlock(e, r);
	case AR_DOCTOR_VM:
		return check_vm(e, r);
	case AR_DOCTOR_CGROUP:
	case AR_DOCTOR_NCHECKS:
		break;
	}
	check_cgroup(e, r);
}

int ar_doctor_report(const struct ar_doctor_env *e, FILE *out)
{
	static const char *const tags[] = { "ok", "warn", "FAIL", "skip" };
	int fails = 0;

	for (int c = 0; c < AR_DOCTOR_NCHECKS; c++) {
		struct ar_doctor_result r;

		ar_doctor_check(e, (enum ar_doctor_check)c, &r);
		fprintf(out, "%-4s  %-8s  %s: %s", tags[r.status], r.id, r.name,
			r.detail);
		if (r.fix[0] && r.status != AR_DOCTOR_OK)
			fprintf(out, " -- fix: %s", r.fix);
		fputc('\n', out);
		fails += r.status == AR_DOCTOR_FAIL;
	}
	return fails;
}
