/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ar_rootfs_setup() for real, as root and rootless: a forked child enters
 * new mount/pid/ipc/uts (and, rootless, user) namespaces, sets up a rootfs
 * from a config built here, and checks from inside: /proc/self/mountinfo
 * flags, devices, masked and read-only paths, sysctl, /dev/console, and
 * that a symlinked mount target did not escape.  The parent then checks
 * that the host was left alone.
 *
 * Needs root (skipped otherwise).  The rootless case runs as uid 65534
 * with a one-id user namespace map, like an unprivileged user would.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "log.h"
#include "mount_syscalls.h"
#include "mounts.h"
#include "mounts_internal.h"
#include "oci_config.h"
#include "rootfs_path.h"
#include "unit.h"

#define NOBODY 65534

static char top[PATH_MAX];
static bool no_pivot; /* run the next case with --no-pivot */
static bool host_cgroup_v1; /* /sys/fs/cgroup/cpu is a v1 hierarchy */
static bool idmap_ok; /* the fs of top supports idmapped mounts */

/* Test allocations live as long as the process; keep them reachable so
 * LeakSanitizer does not count them. */
static void *kept[512];
static size_t n_kept;

static void *keep(void *p)
{
	if (n_kept < sizeof(kept) / sizeof(kept[0]))
		kept[n_kept++] = p;
	return p;
}

static __attribute__((format(printf, 1, 2))) char *xasprintf(const char *fmt,
							     ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return keep(s);
}

static __attribute__((format(printf, 1, 2))) void sh(const char *fmt, ...)
{
	char cmd[PATH_MAX * 4];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		printf("# command failed: %s\n", cmd);
}

/* ---- the test environment: top/{rootfs-root,rootfs-nobody,data,hostside} */

static void make_rootfs(const char *name, uid_t owner)
{
	sh("mkdir -p %s/%s/bin %s/%s/etc %s/%s/proc %s/%s/sys %s/%s/dev "
	   "%s/%s/tmpcopy",
	   top, name, top, name, top, name, top, name, top, name, top, name);
	sh("cp /bin/busybox %s/%s/bin/", top, name);
	sh("echo seed > %s/%s/tmpcopy/seed", top, name);
	/* a mount target that is an absolute symlink to a host dir */
	sh("ln -sfn %s/hostside %s/%s/escape", top, top, name);
	/* /dev/console prepared by the image as a symlink out */
	sh("ln -sfn /etc/passwd %s/%s/dev/console", top, name);
	sh("chown -R %d:%d %s/%s", (int)owner, (int)owner, top, name);
}

/* Can `top` be idmapped (tmpfs cannot before Linux 6.3)? */
static bool probe_idmap(void)
{
	static struct oci_id_mapping map = { 0, 1234, 1 };
	struct oci_id_mappings m = { &map, 1 };
	struct ar_error err = AR_ERROR_INIT;
	struct ar_mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP };
	int ns, tree;
	bool ok;

	ns = ar_idmap_userns_fd(&m, &m, &err);
	if (ns < 0)
		return false;
	tree = ar_sys_open_tree(AT_FDCWD, top,
				OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	a.userns_fd = (uint64_t)ns;
	ok = tree >= 0 &&
	     ar_sys_mount_setattr(tree, "", AT_EMPTY_PATH, &a) == 0;
	if (tree >= 0)
		close(tree);
	close(ns);
	return ok;
}

static bool setup_env(void)
{
	if (top[0])
		return true;
	snprintf(top, sizeof(top), "/tmp/ar-rootfs-setup-XXXXXX");
	if (!mkdtemp(top))
		return false;
	chmod(top, 0755);
	sh("mkdir -p %s/data/sub %s/hostside", top, top);
	sh("echo hello > %s/data/file", top);
	make_rootfs("rootfs-root", 0);
	make_rootfs("rootfs-nobody", NOBODY);
	host_cgroup_v1 = access("/sys/fs/cgroup/cpu/cgroup.procs", F_OK) == 0;
	idmap_ok = probe_idmap();
	if (!idmap_ok)
		printf("# idmapped mounts not supported on %s: not tested\n",
		       top);
	return true;
}

/* ---- the config ---- */

/* A NULL-terminated string vector that lives as long as the process. */
static struct oci_strv strv(const char *first, ...)
{
	struct oci_strv v = { keep(calloc(32, sizeof(char *))), 0 };
	va_list ap;

	va_start(ap, first);
	for (const char *s = first; s && v.n < 31; s = va_arg(ap, const char *))
		v.v[v.n++] = (char *)s;
	va_end(ap);
	return v;
}
#define STRV(...) strv(__VA_ARGS__, (const char *)NULL)

static struct oci_mount mounts[32];
static struct oci_device devices[4];

static void add_mount(size_t *n, const char *type, const char *src,
		      const char *dst, struct oci_strv opts)
{
	mounts[*n] = (struct oci_mount){
		.type = (char *)type,
		.source = (char *)src,
		.destination = (char *)dst,
		.options = opts,
	};
	(*n)++;
}

static void build_config(struct oci_config *cfg, bool rootless)
{
	size_t n = 0;

	memset(cfg, 0, sizeof(*cfg));
	cfg->root.path = "rootfs";
	cfg->root.readonly = true;
	add_mount(&n, "proc", "proc", "/proc",
		  STRV("nosuid", "noexec", "nodev"));
	add_mount(&n, "tmpfs", "tmpfs", "/dev",
		  STRV("nosuid", "strictatime", "mode=755", "size=65536k"));
	add_mount(&n, "devpts", "devpts", "/dev/pts",
		  STRV("nosuid", "noexec", "newinstance", "ptmxmode=0666",
		       "mode=0620", "gid=5"));
	add_mount(&n, "tmpfs", "shm", "/dev/shm",
		  STRV("nosuid", "noexec", "nodev", "mode=1777",
		       "size=65536k"));
	add_mount(&n, "mqueue", "mqueue", "/dev/mqueue",
		  STRV("nosuid", "noexec", "nodev"));
	add_mount(&n, "sysfs", "sysfs", "/sys",
		  STRV("nosuid", "noexec", "nodev", "ro"));
	add_mount(&n, "cgroup", "cgroup", "/sys/fs/cgroup",
		  STRV("nosuid", "noexec", "nodev", "relatime", "ro"));
	/* classic ro: only the top mount */
	add_mount(&n, "bind", xasprintf("%s/data", top), "/data",
		  STRV("rbind", "ro", "nosuid"));
	/* rro: every mount of the tree */
	add_mount(&n, NULL, xasprintf("%s/data", top), "/rdata",
		  STRV("rbind", "rro", "rprivate"));
	add_mount(&n, "none", xasprintf("%s/data/file", top), "/etc/hostfile",
		  STRV("bind", "ro"));
	/* through an absolute symlink to a host dir: must stay inside */
	add_mount(&n, "tmpfs", "tmpfs", "/escape/inner", STRV("nodev"));
	add_mount(&n, "tmpfs", "tmpfs", "/tmpcopy",
		  STRV("tmpcopyup", "mode=0755"));
	add_mount(&n, "tmpfs", "tmpfs", "/nosym",
		  STRV("nosymfollow", "noatime"));
	if (!rootless && idmap_ok) {
		static struct oci_id_mapping map = { 0, 1234, 1 };

		/* idmapped: what is root's on disk shows as 1234 */
		add_mount(&n, "bind", xasprintf("%s/data", top), "/idmapped",
			  STRV("bind", "idmap"));
		mounts[n - 1].uid_mappings.items = &map;
		mounts[n - 1].uid_mappings.n = 1;
		mounts[n - 1].gid_mappings.items = &map;
		mounts[n - 1].gid_mappings.n = 1;
	}
	cfg->mounts = mounts;
	cfg->n_mounts = n;

	devices[0] = (struct oci_device){ .path = "/dev/fuse",
					  .type = 'c',
					  .major = 10,
					  .minor = 229,
					  .file_mode = { true, 0640 },
					  .uid = { true, 0 },
					  .gid = { true, 0 } };
	devices[1] = (struct oci_device){ .path = "/dev/sub/myfifo",
					  .type = 'p',
					  .file_mode = { true, 0600 } };
	cfg->linux_.devices = devices;
	cfg->linux_.n_devices = 2;

	cfg->linux_.masked_paths = STRV("/proc/kcore", "/proc/keys",
					"/proc/timer_list", "/sys/firmware",
					"/proc/does-not-exist", "/proc/acpi");
	cfg->linux_.readonly_paths = STRV("/proc/sys", "/proc/bus",
					  "/proc/sysrq-trigger", "/proc/irq");
	{
		static struct oci_kv kv[] = { { "kernel.msgmax", "4242" } };

		cfg->linux_.sysctl.items = kv;
		cfg->linux_.sysctl.n = 1;
	}
	cfg->linux_.rootfs_propagation = "slave";
}

/* ---- checks from inside ---- */

struct mnt {
	char fstype[64];
	char opts[512]; /* per-mount options */
	char super[512]; /* superblock options */
};

/* The topmost mount at mountpoint `mp`. */
static bool find_mount(const char *mp, struct mnt *out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char point[PATH_MAX], opts[512], fstype[64], src[PATH_MAX],
			super[512];
		char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s %511s", point,
				    opts) != 2)
			continue;
		if (sscanf(dash + 3, "%63s %4095s %511s", fstype, src, super) !=
		    3)
			continue;
		if (strcmp(point, mp) != 0)
			continue;
		snprintf(out->fstype, sizeof(out->fstype), "%s", fstype);
		snprintf(out->opts, sizeof(out->opts), "%s", opts);
		snprintf(out->super, sizeof(out->super), "%s", super);
		found = true;
	}
	fclose(f);
	return found;
}

static bool has_opt(const char *list, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = list; p && *p;) {
		const char *end = strchrnul(p, ',');

		if ((size_t)(end - p) == n && strncmp(p, opt, n) == 0)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

#define CHECK_MOUNT(mp, type, opt)                                             \
	do {                                                                   \
		struct mnt _m;                                                 \
		bool _f = find_mount(mp, &_m);                                 \
		if (!_f)                                                       \
			printf("# no mount at %s\n", mp);                      \
		CHECK(_f);                                                     \
		if (_f && (type))                                              \
			CHECK_STR_EQ(_m.fstype, (const char *)(type));         \
		if (_f && (opt) && !has_opt(_m.opts, (opt)))                   \
			printf("# %s: \"%s\" not in %s\n", mp,                 \
			       (const char *)(opt), _m.opts);                  \
		if (_f && (opt))                                               \
			CHECK(has_opt(_m.opts, (opt)));                        \
	} while (0)

static void check_chardev(const char *path, unsigned int maj, unsigned int min)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		printf("# stat %s: %s\n", path, strerror(errno));
		CHECK(0);
		return;
	}
	CHECK(S_ISCHR(st.st_mode));
	CHECK_INT_EQ(major(st.st_rdev), maj);
	CHECK_INT_EQ(minor(st.st_rdev), min);
}

static void check_link(const char *path, const char *target)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	CHECK(n > 0);
	if (n > 0) {
		buf[n] = '\0';
		CHECK_STR_EQ(buf, target);
	}
}

static void inside_checks(bool rootless, dev_t console_rdev)
{
	char buf[256] = { 0 };
	struct stat st;
	int fd;

	CHECK(getcwd(buf, sizeof(buf)) && strcmp(buf, "/") == 0);
	CHECK(access("/bin/busybox", X_OK) == 0);

	CHECK_MOUNT("/", NULL, "ro");
	CHECK(mkdir("/newdir", 0755) < 0 && errno == EROFS);
	CHECK_MOUNT("/proc", "proc", "nosuid");
	CHECK_MOUNT("/proc", "proc", "noexec");
	CHECK_MOUNT("/proc", "proc", "nodev");
	CHECK_MOUNT("/dev", "tmpfs", "nosuid");
	CHECK_MOUNT("/dev/pts", "devpts", "noexec");
	CHECK_MOUNT("/dev/shm", "tmpfs", "nodev");
	CHECK_MOUNT("/dev/mqueue", NULL, "nosuid");
	CHECK_MOUNT("/sys", rootless ? NULL : "sysfs", "ro");
	if (rootless) {
		/* host cgroup tree bound recursively read-only */
		if (host_cgroup_v1)
			CHECK_MOUNT("/sys/fs/cgroup/cpu", "cgroup", "ro");
	}
	CHECK_MOUNT("/sys/fs/cgroup", rootless ? NULL : "cgroup2", "ro");
	CHECK_MOUNT("/data", NULL, "ro");
	CHECK_MOUNT("/data", NULL, "nosuid");
	CHECK_MOUNT("/data/sub", "tmpfs", "rw");
	CHECK_MOUNT("/rdata", NULL, "ro");
	CHECK_MOUNT("/rdata/sub", "tmpfs", "ro");
	CHECK_MOUNT("/etc/hostfile", NULL, "ro");
	CHECK_MOUNT("/nosym", "tmpfs", "nosymfollow");
	CHECK_MOUNT("/nosym", "tmpfs", "noatime");
	fd = open("/etc/hostfile", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd >= 0) {
		memset(buf, 0, sizeof(buf));
		CHECK(read(fd, buf, sizeof(buf) - 1) == 6);
		CHECK_STR_EQ(buf, "hello\n");
		close(fd);
	}

	/* the symlinked target: mounted inside the rootfs at the symlink's
	 * target path, reachable through the symlink */
	{
		char *inner = xasprintf("%s/hostside/inner", top);

		CHECK_MOUNT(inner, "tmpfs", "nodev");
		CHECK(stat("/escape/inner", &st) == 0 && S_ISDIR(st.st_mode));
		free(inner);
	}

	if (!rootless && idmap_ok) {
		CHECK(stat("/idmapped/file", &st) == 0);
		CHECK_INT_EQ(st.st_uid, 1234);
		CHECK_INT_EQ(st.st_gid, 1234);
		CHECK(stat("/data/file", &st) == 0 && st.st_uid == 0);
	}

	/* tmpcopyup */
	CHECK_MOUNT("/tmpcopy", "tmpfs", NULL);
	fd = open("/tmpcopy/seed", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd >= 0) {
		memset(buf, 0, sizeof(buf));
		CHECK(read(fd, buf, sizeof(buf) - 1) == 5);
		CHECK_STR_EQ(buf, "seed\n");
		close(fd);
	}

	/* devices */
	check_chardev("/dev/null", 1, 3);
	check_chardev("/dev/zero", 1, 5);
	check_chardev("/dev/full", 1, 7);
	check_chardev("/dev/random", 1, 8);
	check_chardev("/dev/urandom", 1, 9);
	check_chardev("/dev/tty", 5, 0);
	check_chardev("/dev/fuse", 10, 229);
	if (!rootless) {
		CHECK(stat("/dev/fuse", &st) == 0 &&
		      (st.st_mode & 07777) == 0640);
		CHECK(stat("/dev/null", &st) == 0 &&
		      (st.st_mode & 07777) == 0666);
	} else {
		CHECK_MOUNT("/dev/null", "devtmpfs", NULL);
	}
	CHECK(stat("/dev/sub/myfifo", &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK(stat("/dev/sub/myfifo", &st) == 0 &&
	      (st.st_mode & 07777) == 0600);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1);
	if (fd >= 0)
		close(fd);
	check_link("/dev/ptmx", "pts/ptmx");
	check_link("/dev/fd", "/proc/self/fd");
	check_link("/dev/stdin", "/proc/self/fd/0");
	check_link("/dev/stdout", "/proc/self/fd/1");
	check_link("/dev/stderr", "/proc/self/fd/2");
	CHECK(stat("/dev/pts/ptmx", &st) == 0 && S_ISCHR(st.st_mode));

	/* console */
	if (console_rdev) {
		CHECK(lstat("/dev/console", &st) == 0 && S_ISCHR(st.st_mode));
		CHECK(st.st_rdev == console_rdev);
	}

	/* sysctl, then /proc/sys read-only */
	fd = open("/proc/sys/kernel/msgmax", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd >= 0) {
		memset(buf, 0, sizeof(buf));
		CHECK(read(fd, buf, sizeof(buf) - 1) > 0);
		CHECK_STR_EQ(buf, "4242\n");
		close(fd);
	}
	CHECK_MOUNT("/proc/sys", "proc", "ro");
	fd = open("/proc/sys/kernel/msgmax", O_WRONLY | O_CLOEXEC);
	CHECK(fd < 0 && errno == EROFS);
	if (fd >= 0)
		close(fd);
	CHECK_MOUNT("/proc/irq", "proc", "ro");

	/* masked */
	CHECK_MOUNT("/proc/keys", "devtmpfs", NULL);
	CHECK_MOUNT("/proc/timer_list", "devtmpfs", NULL);
	fd = open("/proc/keys", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(read(fd, buf, sizeof(buf)) == 0);
		close(fd);
	}
	CHECK_MOUNT("/sys/firmware", "tmpfs", "ro");
	CHECK_MOUNT("/proc/acpi", "tmpfs", "ro");
	CHECK(access("/proc/does-not-exist", F_OK) < 0);
}

/* ---- running it ---- */

static int write_id_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int r = -1;

	if (fd >= 0) {
		r = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
		close(fd);
	}
	return r;
}

/* In the new pid namespace as pid 1: set up and check. */
static int container_main(bool rootless, const char *console)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config cfg;
	struct ar_rootfs_opts opts = {
		.userns = rootless,
		.rootless = rootless,
		.new_netns = false,
		.new_cgroupns = false,
		.new_mntns = true,
		.console_path = console,
		.bundle = top,
		.no_pivot = no_pivot,
	};
	dev_t console_rdev = 0;
	struct stat st;

	if (console && stat(console, &st) == 0)
		console_rdev = st.st_rdev;
	opts.rootfs = xasprintf("%s/%s", top,
				rootless ? "rootfs-nobody" : "rootfs-root");
	build_config(&cfg, rootless);

	/* a submount under the data dir, visible to the rbinds */
	if (mount("tmpfs", xasprintf("%s/data/sub", top), "tmpfs", 0, NULL) <
	    0) {
		printf("# mount data/sub: %s\n", strerror(errno));
		return 1;
	}
	if (ar_rootfs_setup(&cfg, &opts, &err) < 0) {
		printf("# ar_rootfs_setup: %s\n", err.msg);
		return 1;
	}
	inside_checks(rootless, console_rdev);
	fflush(stdout);
	return unit_current_failed ? 1 : 0;
}

static int run_in_namespaces(bool rootless, const char *console)
{
	int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
	pid_t pid;
	int status;

	if (rootless) {
		char map[64];

		if (setgroups(0, NULL) < 0 ||
		    setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY)) {
			printf("# drop to %d: %s\n", NOBODY, strerror(errno));
			return 1;
		}
		/* changing uid made us non-dumpable: /proc/self/uid_map
		 * would belong to root */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		if (unshare(CLONE_NEWUSER) < 0) {
			printf("# unshare(CLONE_NEWUSER): %s\n",
			       strerror(errno));
			return 77;
		}
		snprintf(map, sizeof(map), "0 %d 1\n", NOBODY);
		if (write_id_file("/proc/self/setgroups", "deny") < 0 ||
		    write_id_file("/proc/self/uid_map", map) < 0 ||
		    write_id_file("/proc/self/gid_map", map) < 0) {
			printf("# id maps: %s\n", strerror(errno));
			return 1;
		}
	}
	if (unshare(flags) < 0) {
		printf("# unshare: %s\n", strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		int r = container_main(rootless, console);

		fflush(stdout);
		_exit(r);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int run_case(bool rootless, const char *console)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		int r = run_in_namespaces(rootless, console);

		fflush(stdout);
		_exit(r);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void host_checks(const char *rootfs)
{
	char *p = xasprintf("%s/hostside/inner", top);
	char line[4096];
	FILE *f;

	/* the symlinked mount target was created inside the rootfs only */
	CHECK(access(p, F_OK) < 0);
	free(p);
	p = xasprintf("%s/%s%s/hostside/inner", top, rootfs, top);
	CHECK(access(p, F_OK) == 0);
	free(p);
	/* nothing of ours is mounted in the host's namespace */
	f = fopen("/proc/self/mountinfo", "re");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, top)) {
			printf("# leaked mount: %s", line);
			CHECK(0);
		}
	if (f)
		fclose(f);
	/* the image's /dev/console symlink did not get /etc/passwd covered */
	CHECK(access("/etc/passwd", R_OK) == 0);
}

UNIT_TEST(rootfs_as_root)
{
	char *console = NULL;
	int ptm, r;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	if (!setup_env())
		UNIT_SKIP("no temp dir");
	ptm = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (ptm >= 0 && grantpt(ptm) == 0 && unlockpt(ptm) == 0)
		console = ptsname(ptm);
	r = run_case(false, console);
	if (ptm >= 0)
		close(ptm);
	CHECK_INT_EQ(r, 0);
	host_checks("rootfs-root");
}

UNIT_TEST(rootfs_rootless)
{
	int r;

	if (geteuid() != 0)
		UNIT_SKIP("needs root (to become uid 65534)");
	if (!setup_env())
		UNIT_SKIP("no temp dir");
	r = run_case(true, NULL);
	if (r == 77)
		UNIT_SKIP("user namespaces not available");
	CHECK_INT_EQ(r, 0);
	host_checks("rootfs-nobody");
}

UNIT_TEST(rootfs_no_pivot)
{
	int r;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	if (!setup_env())
		UNIT_SKIP("no temp dir");
	/* a fresh rootfs: the one of the first case is already set up */
	make_rootfs("rootfs-root", 0);
	no_pivot = true;
	r = run_case(false, NULL);
	no_pivot = false;
	CHECK_INT_EQ(r, 0);
	host_checks("rootfs-root");
}

UNIT_TEST(rootfs_fallback_walk)
{
	int r;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	if (!setup_env())
		UNIT_SKIP("no temp dir");
	make_rootfs("rootfs-root", 0);
	/* every path resolved by the fd walk instead of openat2 */
	ar_rootfs_path_force_fallback(true);
	r = run_case(false, NULL);
	ar_rootfs_path_force_fallback(false);
	CHECK_INT_EQ(r, 0);
	host_checks("rootfs-root");
}

static void run_error_case(struct oci_config *cfg, const char *want)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_rootfs_opts opts = {
		.rootfs = xasprintf("%s/rootfs-root", top),
		.bundle = top,
		.new_mntns = true,
	};
	int p[2];
	pid_t pid;
	char msg[AR_ERROR_MSG_MAX] = { 0 };
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    ar_rootfs_setup(cfg, &opts, &err) == 0)
			_exit(1);
		if (write(p[1], err.msg, strlen(err.msg)) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], msg, sizeof(msg) - 1);
	close(p[0]);
	waitpid(pid, NULL, 0);
	CHECK(n > 0);
	CHECK_STR_CONTAINS(msg, want);
}

UNIT_TEST(errors_name_the_mount)
{
	struct oci_config cfg;
	size_t n = 0;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	if (!setup_env())
		UNIT_SKIP("no temp dir");
	memset(&cfg, 0, sizeof(cfg));
	add_mount(&n, "proc", "proc", "/proc", STRV("nosuid"));
	add_mount(&n, "nonexistentfs", "x", "/x", STRV("ro"));
	cfg.mounts = mounts;
	cfg.n_mounts = n;
	run_error_case(&cfg,
		       "mount \"x\" on \"/x\" (mounts[1]): No such device");

	n = 0;
	add_mount(&n, "bind", "/nonexistent-source-ar", "/y", STRV("bind"));
	cfg.n_mounts = n;
	run_error_case(&cfg, "(mounts[0])");

	/* a bind over something inside procfs is refused */
	n = 0;
	add_mount(&n, "proc", "proc", "/proc", STRV("nosuid"));
	add_mount(&n, "bind", "/etc/hostname", "/proc/self/environ",
		  STRV("bind"));
	cfg.n_mounts = n;
	run_error_case(&cfg, "inside procfs");

	/* a destination that resolves to the root itself */
	sh("ln -sfn / %s/rootfs-root/toroot", top);
	n = 0;
	add_mount(&n, "tmpfs", "tmpfs", "/toroot", STRV("nodev"));
	cfg.n_mounts = n;
	run_error_case(&cfg, "mount on \"/toroot\" (mounts[0]): resolves "
			     "to the root of the container");

	n = 0;
	cfg.n_mounts = 0;
	{
		static struct oci_kv kv[] = { { "net/../../x", "1" } };
		static struct oci_kv kv2[] = { { "kernel..msgmax", "1" } };

		cfg.linux_.sysctl.items = kv;
		cfg.linux_.sysctl.n = 1;
		run_error_case(&cfg, "invalid sysctl key \"net/../../x\"");
		cfg.linux_.sysctl.items = kv2;
		run_error_case(&cfg, "invalid sysctl key");
	}
}

UNIT_TEST(zz_cleanup)
{
	if (top[0])
		sh("rm -rf %s", top);
}

UNIT_MAIN()
