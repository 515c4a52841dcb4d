/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The container's root filesystem: the order of the steps
 * (ar_rootfs_setup) and every entry of `mounts`.
 *
 * Every target inside the rootfs is created and opened through the safe
 * resolver (rootfs_path.h) and mounted on its fd: bind mounts with the new
 * mount API (mount_fd.c), other filesystems with mount(2) on
 * "/proc/self/fd/N" of the host /proc (still there: this all happens
 * before pivot_root).  After each mount we check where it landed.
 */
#define _GNU_SOURCE
#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "log.h"
#include "mount_syscalls.h"
#include "mounts_internal.h"
#include "rootfs_fill.h"
#include "rootfs_path.h"
#include "selinux_label.h"
#include "utils.h"

char *ar_rootfs_host_path(const char *bundle, const char *root_path)
{
	if (root_path[0] == '/' || !bundle)
		return ar_xstrdup(root_path);
	return ar_xasprintf("%s/%s", bundle, root_path);
}

static bool streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* Paths inside /proc a bind or mount may cover (lxcfs and friends).
 * Anything else on procfs is refused: mounting over /proc entries is how
 * a config could hide or redirect kernel interfaces (CVE-2019-16884). */
static bool proc_target_allowed(const char *dest)
{
	static const char *const ok[] = {
		"/proc/cpuinfo", "/proc/diskstats",
		"/proc/meminfo", "/proc/stat",
		"/proc/swaps",	 "/proc/uptime",
		"/proc/loadavg", "/proc/slabinfo",
		"/proc/net/dev", "/proc/sys/kernel/ns_last_pid",
	};
	_cleanup_free_ char *c = ar_clean_path(dest);

	for (size_t i = 0; i < AR_ARRAY_SIZE(ok); i++)
		if (strcmp(c, ok[i]) == 0)
			return true;
	return false;
}

/* A destination other than "/" that resolves to the root itself (e.g. the
 * image made /proc a symlink to "/") would cover the whole rootfs. */
static int check_not_root(const struct ar_rootfs_ctx *ctx, int tfd,
			  const char *dest, size_t i, struct ar_error *err)
{
	_cleanup_free_ char *c = ar_clean_path(dest);
	struct stat a;

	if (strcmp(c, "/") == 0)
		return 0;
	if (fstat(tfd, &a) < 0)
		return ar_error_set(err, errno, "stat \"%s\" (mounts[%zu])",
				    dest, i);
	if (a.st_dev == ctx->root_dev && a.st_ino == ctx->root_ino)
		return ar_error_set_plain(
			err, ELOOP,
			"mount on \"%s\" (mounts[%zu]): resolves "
			"to the root of the container",
			dest, i);
	return 0;
}

static int check_proc_target(int tfd, const char *dest, size_t i,
			     struct ar_error *err)
{
	struct statfs sfs;

	if (fstatfs(tfd, &sfs) < 0)
		return ar_error_set(err, errno, "statfs \"%s\" (mounts[%zu])",
				    dest, i);
	if (sfs.f_type == PROC_SUPER_MAGIC && !proc_target_allowed(dest))
		return ar_error_set_plain(
			err, EPERM,
			"mount on \"%s\" (mounts[%zu]): target is "
			"inside procfs",
			dest, i);
	return 0;
}

static int mount_error(struct ar_error *err, int errnum, const char *what,
		       const char *dest, size_t i)
{
	return ar_error_set(err, errnum, "mount \"%s\" on \"%s\" (mounts[%zu])",
			    what, dest, i);
}

/* The target of mounts[i], resolved (and created as a directory or a
 * file) inside the root; never the root itself, nor a bad /proc target.
 * Returns its fd, or -1. */
static int open_target(struct ar_rootfs_ctx *ctx, const char *dest, bool is_dir,
		       size_t i, struct ar_error *err)
{
	_cleanup_close_ int tfd = -1;

	tfd = ar_mount_target_in_root(ctx->rootfd, dest, is_dir, err);
	if (tfd < 0)
		return ar_error_wrap(err, "mounts[%zu]", i);
	if (check_not_root(ctx, tfd, dest, i, err) < 0 ||
	    check_proc_target(tfd, dest, i, err) < 0)
		return -1;
	return ar_steal_fd(&tfd);
}

/* Attach a detached bind tree onto dest inside the root, with the
 * propagation of its attributes: one made just now from a host path
 * (bind_host_path), or one the runtime made before the clone (an
 * idmapped bind: see mount_premade.c). The target's kind (directory or
 * file) follows what is mounted, not a separate stat of the source. */
static int attach_tree(struct ar_rootfs_ctx *ctx, int tree, const char *source,
		       const char *dest, size_t i,
		       const struct ar_bind_attrs *a, struct ar_error *err)
{
	_cleanup_close_ int tfd = -1;
	struct stat st;

	if (fstat(tree, &st) < 0)
		return ar_error_set(err, errno,
				    "bind mount source \"%s\" (mounts[%zu])",
				    source, i);
	tfd = open_target(ctx, dest, S_ISDIR(st.st_mode), i, err);
	if (tfd < 0)
		return -1;
	if (ar_bind_tree_attach(tree, tfd, a) < 0)
		return mount_error(err, errno, source, dest, i);
	if (ar_check_inside_root(ctx, tree, dest, err) < 0)
		return ar_error_wrap(err, "mounts[%zu]", i);
	return 0;
}

/* Bind a host path onto dest inside the root. */
static int bind_host_path(struct ar_rootfs_ctx *ctx, const char *source,
			  const char *dest, size_t i, bool recursive,
			  const struct ar_bind_attrs *attrs,
			  struct ar_error *err)
{
	_cleanup_close_ int tree =
		ar_bind_tree_open(-1, source, recursive, attrs);

	if (tree < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == EACCES ||
		    errno == ELOOP)
			return ar_error_set(
				err, errno,
				"bind mount source \"%s\" (mounts[%zu])",
				source, i);
		return mount_error(err, errno, source, dest, i);
	}
	return attach_tree(ctx, tree, source, dest, i, attrs, err);
}

void ar_mount_flags_to_attrs(const struct ar_mount_flags *mf,
			     struct ar_bind_attrs *a)
{
	uint64_t set, clr;

	ar_ms_to_attrs(mf->flags, mf->clear, &set, &clr);
	a->set = set | mf->attr_set;
	a->clr = clr | mf->attr_clr;
	a->rec_set = mf->rec_attr_set;
	a->rec_clr = mf->rec_attr_clr;
	a->propagation = mf->propagation;
}

static int mount_bind_entry(struct ar_rootfs_ctx *ctx,
			    const struct oci_mount *m, size_t i,
			    const struct ar_mount_flags *mf,
			    struct ar_error *err)
{
	_cleanup_free_ char *source = NULL;
	_cleanup_close_ int userns_fd = -1;
	struct ar_bind_attrs a = { 0 };

	if (!m->source || !*m->source)
		return ar_error_set_plain(
			err, EINVAL,
			"mounts[%zu]: bind mount on \"%s\" has no "
			"source",
			i, m->destination);
	source = ar_rootfs_host_path(ctx->opts->bundle, m->source);
	ar_mount_flags_to_attrs(mf, &a);
	if (ctx->opts->premade && ctx->opts->premade[i] >= 0)
		return attach_tree(ctx, ctx->opts->premade[i], source,
				   m->destination, i, &a, err);
	if (mf->idmap) {
		const struct oci_linux *l = &ctx->cfg->linux_;
		bool own = m->uid_mappings.n || m->gid_mappings.n;

		/* No maps of its own: the container's. */
		userns_fd = ar_idmap_userns_fd(
			own ? &m->uid_mappings : &l->uid_mappings,
			own ? &m->gid_mappings : &l->gid_mappings, err);
		if (userns_fd < 0)
			return ar_error_wrap(err, "mounts[%zu]", i);
		a.idmap = true;
		a.idmap_recursive = mf->idmap_recursive;
		a.userns_fd = userns_fd;
	}
	return bind_host_path(ctx, source, m->destination, i,
			      (mf->flags & MS_REC) != 0, &a, err);
}

/* Remove "gid=N" from a comma separated option string (devpts in a user
 * namespace where gid 5 is not mapped). */
static char *strip_gid_option(const char *data)
{
	_cleanup_free_ char *copy = ar_xstrdup(data);
	char *out = ar_xcalloc(1, strlen(data) + 1);
	char *save = NULL;

	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "gid=", 4) == 0)
			continue;
		if (*out)
			strcat(out, ",");
		strcat(out, tok);
	}
	return out;
}

/* mount(2) of a filesystem on the target's fd. Returns 0 or -1 (errno). */
static int mount_fs_on_fd(int tfd, const char *source, const char *type,
			  unsigned long flags, const char *data)
{
	char p[AR_PROC_FD_PATH_MAX];

	ar_proc_fd_path(tfd, p);
	flags &= ~(unsigned long)(MS_BIND | MS_REC | MS_REMOUNT);
	return mount(source, p, type, flags, data);
}

/* linux.mountLabel on a filesystem that takes no context= (mqueue): the
 * new mount's root gets the label, as runc does. */
static int relabel_mount_root(struct ar_rootfs_ctx *ctx, const char *dest,
			      size_t i, struct ar_error *err)
{
	const char *label = ctx->cfg->linux_.mount_label;
	_cleanup_close_ int fd = -1;

	if (!label || !*label || !ar_selinux_enabled())
		return 0;
	fd = ar_open_in_root(ctx->rootfd, dest, O_RDONLY | O_DIRECTORY, 0, err);
	if (fd < 0 || ar_selinux_relabel_fd(fd, dest, label, err) < 0)
		return ar_error_wrap(err, "mounts[%zu]", i);
	return 0;
}

static int mount_fs_entry(struct ar_rootfs_ctx *ctx, const struct oci_mount *m,
			  size_t i, const char *type,
			  const struct ar_mount_flags *mf, const char *data,
			  struct ar_error *err)
{
	const char *dest = m->destination;
	const char *source = m->source && *m->source ? m->source : type;
	_cleanup_close_ int tfd = -1;
	_cleanup_close_ int mfd = -1;
	_cleanup_close_ int copy_src = -1;
	_cleanup_close_ int copy_dst = -1;
	_cleanup_free_ char *labeled = NULL;
	int r;

	tfd = open_target(ctx, dest, true, i, err);
	if (tfd < 0)
		return -1;
	if (mf->copy_up) {
		copy_src = openat(tfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (copy_src < 0)
			return ar_error_set(err, errno,
					    "tmpcopyup: open \"%s\" "
					    "(mounts[%zu])",
					    dest, i);
	}

	/* Without SELinux on the host the label is ignored (crun, runc). */
	if (ar_selinux_enabled())
		labeled = ar_selinux_mount_data(data, type,
						ctx->cfg->linux_.mount_label);
	if (labeled)
		data = labeled; /* linux.mountLabel: context= */
	r = mount_fs_on_fd(tfd, source, type, mf->flags, data);
	if (r < 0 && errno == EINVAL && streq(type, "devpts") && data &&
	    strstr(data, "gid=")) {
		_cleanup_free_ char *d2 = strip_gid_option(data);

		ar_debug("devpts on \"%s\": retrying without gid=", dest);
		r = mount_fs_on_fd(tfd, source, type, mf->flags, d2);
	}
	if (r < 0)
		return mount_error(err, errno, source, dest, i);
	if (ar_check_inside_root(ctx, tfd, dest, err) < 0)
		return ar_error_wrap(err, "mounts[%zu]", i);
	if (ar_selinux_relabel_after_mount(type) &&
	    relabel_mount_root(ctx, dest, i, err) < 0)
		return -1;

	if (!mf->propagation && !mf->rec_attr_set && !mf->rec_attr_clr &&
	    !mf->attr_set && !mf->attr_clr && !mf->copy_up)
		return 0;

	/* The new mount, through its path. */
	mfd = ar_open_in_root(ctx->rootfd, dest, O_PATH | O_DIRECTORY, 0, err);
	if (mfd < 0)
		return ar_error_wrap(err, "mounts[%zu]", i);
	{
		struct ar_mount_attr a = {
			.attr_set = mf->rec_attr_set,
			.attr_clr = mf->rec_attr_clr,
		};
		if ((a.attr_set || a.attr_clr) &&
		    ar_sys_mount_setattr(mfd, "", AT_EMPTY_PATH | AT_RECURSIVE,
					 &a) < 0)
			return mount_error(err, errno, source, dest, i);
		a.attr_set = mf->attr_set;
		a.attr_clr = mf->attr_clr;
		if ((a.attr_set || a.attr_clr) &&
		    ar_sys_mount_setattr(mfd, "", AT_EMPTY_PATH, &a) < 0)
			return mount_error(err, errno, source, dest, i);
	}
	if (mf->copy_up) {
		copy_dst = openat(mfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (copy_dst < 0 || ar_copy_tree(copy_src, copy_dst, err) < 0) {
			if (copy_dst < 0)
				ar_error_set(err, errno, "open \"%s\"", dest);
			return ar_error_wrap(err, "tmpcopyup (mounts[%zu])", i);
		}
	}
	if (mf->propagation) {
		struct ar_mount_attr a = {
			.propagation = mf->propagation & ~(unsigned long)MS_REC,
		};
		unsigned int fl = AT_EMPTY_PATH;

		if (mf->propagation & MS_REC)
			fl |= AT_RECURSIVE;
		if (ar_sys_mount_setattr(mfd, "", fl, &a) < 0)
			return mount_error(err, errno, source, dest, i);
	}
	return 0;
}

/* sysfs when the container has a user namespace but shares the host's
 * network namespace: the kernel refuses a new sysfs, so bind the host's
 * /sys (recursively, with the requested flags on every mount). */
static int sysfs_bind_fallback(struct ar_rootfs_ctx *ctx,
			       const struct oci_mount *m, size_t i,
			       const struct ar_mount_flags *mf,
			       struct ar_error *err)
{
	struct ar_bind_attrs a = { 0 };
	uint64_t set, clr;

	ar_ms_to_attrs(mf->flags, mf->clear, &set, &clr);
	a.rec_set = set | mf->rec_attr_set;
	a.rec_clr = clr | mf->rec_attr_clr;
	a.propagation = mf->propagation;
	return bind_host_path(ctx, "/sys", m->destination, i, true, &a, err);
}

static int cgroup_bind_fallback(struct ar_rootfs_ctx *ctx,
				const struct oci_mount *m, size_t i,
				const struct ar_mount_flags *mf,
				struct ar_error *err)
{
	struct ar_bind_attrs a = { 0 };
	uint64_t set, clr;

	ar_ms_to_attrs(mf->flags | MS_RDONLY, mf->clear & ~MS_RDONLY, &set,
		       &clr);
	a.rec_set = set;
	a.rec_clr = clr;
	return bind_host_path(ctx, "/sys/fs/cgroup", m->destination, i, true,
			      &a, err);
}

static int mount_cgroup_entry(struct ar_rootfs_ctx *ctx,
			      const struct oci_mount *m, size_t i,
			      const struct ar_mount_flags *mf,
			      struct ar_error *err)
{
	bool v1 = streq(m->type, "cgroup");
	struct ar_error lerr = AR_ERROR_INIT;

	if (ctx->opts->userns && !ctx->opts->new_cgroupns) {
		/* A cgroup2 mount would show the host's whole tree (and is
		 * refused anyway): bind the host's view read-only. */
		if (cgroup_bind_fallback(ctx, m, i, mf, &lerr) < 0)
			ar_debug("skipping cgroup mount on \"%s\": %s",
				 m->destination, lerr.msg);
		return 0;
	}
	/* Only ever cgroup2: the host's v1 hierarchies are never mounted
	 * into a container. v1 options do not apply to cgroup2. */
	if (mount_fs_entry(ctx, m, i, "cgroup2", mf, v1 ? NULL : mf->data,
			   &lerr) == 0)
		return 0;
	if (v1) {
		ar_warn("cgroup v1 mount on \"%s\" not supported, skipped: %s",
			m->destination, lerr.msg);
		return 0;
	}
	if (ctx->opts->userns) {
		ar_error_clear(&lerr);
		if (cgroup_bind_fallback(ctx, m, i, mf, &lerr) < 0)
			ar_debug("skipping cgroup mount on \"%s\": %s",
				 m->destination, lerr.msg);
		return 0;
	}
	*err = lerr;
	return -1;
}

static int mount_one(struct ar_rootfs_ctx *ctx, size_t i, struct ar_error *err)
{
	const struct oci_mount *m = &ctx->cfg->mounts[i];
	struct ar_mount_flags mf;
	struct ar_error lerr = AR_ERROR_INIT;
	const char *type = m->type;
	bool userns = ctx->opts->userns;
	int r;

	if (!m->destination || !*m->destination)
		return ar_error_set_plain(err, EINVAL,
					  "mounts[%zu]: no destination", i);
	if (ar_mount_parse_options(&m->options, &mf, err) < 0)
		return ar_error_wrap(err, "mounts[%zu]", i);
	if (mf.bind || streq(type, "bind") || streq(type, "rbind")) {
		if (streq(type, "rbind"))
			mf.flags |= MS_BIND | MS_REC;
		r = mount_bind_entry(ctx, m, i, &mf, err);
	} else if (mf.idmap) {
		r = ar_error_set_plain(
			err, ENOTSUP,
			"mount on \"%s\" (mounts[%zu]): idmap is only "
			"supported on bind mounts",
			m->destination, i);
	} else if (!type || !*type) {
		r = ar_error_set_plain(
			err, EINVAL, "mounts[%zu]: mount on \"%s\" has no type",
			i, m->destination);
	} else if (streq(type, "cgroup") || streq(type, "cgroup2")) {
		r = mount_cgroup_entry(ctx, m, i, &mf, err);
	} else if (streq(type, "sysfs") && userns && !ctx->opts->new_netns) {
		r = sysfs_bind_fallback(ctx, m, i, &mf, err);
	} else {
		r = mount_fs_entry(ctx, m, i, type, &mf, mf.data, &lerr);
		if (r < 0 && userns && lerr.code == EPERM &&
		    streq(type, "sysfs")) {
			ar_debug("sysfs refused, binding the host's /sys");
			r = sysfs_bind_fallback(ctx, m, i, &mf, err);
		} else if (r < 0 && userns &&
			   (lerr.code == EPERM || lerr.code == EINVAL) &&
			   streq(type, "mqueue") &&
			   access("/dev/mqueue", F_OK) == 0) {
			struct ar_bind_attrs a = { 0 };

			ar_debug("mqueue refused, binding the host's");
			ar_mount_flags_to_attrs(&mf, &a);
			r = bind_host_path(ctx, "/dev/mqueue", m->destination,
					   i, true, &a, err);
		} else if (r < 0) {
			*err = lerr;
		}
	}
	ar_mount_flags_free(&mf);
	return r;
}

static int prepare_rootfs(struct ar_rootfs_ctx *ctx, struct ar_error *err)
{
	const char *rootfs = ctx->opts->rootfs;
	struct stat st, host_st;

	if (!rootfs || rootfs[0] != '/')
		return ar_error_set_plain(err, EINVAL,
					  "root filesystem path \"%s\" is not "
					  "absolute",
					  rootfs ? rootfs : "");
	/* The runtime's own "/" (root.path "/", a symlink or a bind mount
	 * of it) as the root filesystem would turn every mount target and
	 * device node made below into a change of the host. */
	if (stat(rootfs, &st) == 0 && stat("/", &host_st) == 0 &&
	    st.st_dev == host_st.st_dev && st.st_ino == host_st.st_ino)
		return ar_error_set_plain(err, EINVAL,
					  "root filesystem \"%s\" is the "
					  "host's root directory",
					  rootfs);
	/* A mount point of its own, so pivot_root accepts it; or a fresh
	 * tmpfs that the caller fills (agentrun sandbox, as bubblewrap). */
	if (ctx->opts->tmpfs_root) {
		if (mount("tmpfs", rootfs, "tmpfs", MS_NOSUID | MS_NODEV,
			  "mode=0755") < 0)
			return ar_error_set(err, errno,
					    "mount a tmpfs root on \"%s\"",
					    rootfs);
	} else if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0) {
		return ar_error_set(err, errno,
				    "bind the root filesystem "
				    "\"%s\" onto itself",
				    rootfs);
	}
	ctx->rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ctx->rootfd < 0)
		return ar_error_set(err, errno, "open root filesystem \"%s\"",
				    rootfs);
	if (ctx->opts->tmpfs_root &&
	    ar_rootfs_fill(ctx->rootfd, ctx->opts->tmpfs_root, err) < 0)
		return -1;
	ctx->root_real = ar_fd_path(ctx->rootfd);
	if (!ctx->root_real)
		return ar_error_set(err, errno,
				    "resolve root filesystem "
				    "\"%s\"",
				    rootfs);
	if (fstat(ctx->rootfd, &st) < 0)
		return ar_error_set(err, errno, "stat root filesystem \"%s\"",
				    rootfs);
	ctx->root_dev = st.st_dev;
	ctx->root_ino = st.st_ino;
	ctx->private_root = ctx->opts->tmpfs_root != NULL;
	return 0;
}

/* A missing process.cwd is made, 0755, owned by the container's root (as
 * runc and crun), before the root may become read-only. */
static int make_cwd(struct ar_rootfs_ctx *ctx, struct ar_error *err)
{
	const char *cwd = ctx->cfg->process.cwd;
	int fd;

	if (!cwd || cwd[0] != '/' || !cwd[1])
		return 0;
	fd = ar_mkdir_p_in_root(ctx->rootfd, cwd, 0755, err);
	if (fd < 0) {
		/* e.g. through a symlink: the chdir and its check say why */
		ar_debug("process.cwd not made: %s", err->msg);
		ar_error_clear(err);
		return 0;
	}
	close(fd);
	return 0;
}

static int root_readonly(struct ar_rootfs_ctx *ctx, struct ar_error *err)
{
	struct ar_mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };

	if (ar_sys_mount_setattr(ctx->rootfd, "", AT_EMPTY_PATH, &a) < 0)
		return ar_error_set(err, errno,
				    "root.readonly: remount \"/\" read-only");
	return 0;
}

int ar_rootfs_setup(const struct oci_config *cfg,
		    const struct ar_rootfs_opts *opts, struct ar_error *err)
{
	struct ar_rootfs_ctx ctx = { .cfg = cfg, .opts = opts, .rootfd = -1 };
	int r = -1;

	if (!opts->new_mntns)
		return ar_enter_root_inherited(cfg, opts, err);
	if (ar_prepare_propagation(cfg, err) < 0)
		return -1;
	if (prepare_rootfs(&ctx, err) < 0)
		goto out;
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (mount_one(&ctx, i, err) < 0)
			goto out;
	if (ar_devices_setup(&ctx, err) < 0)
		goto out;
	if (make_cwd(&ctx, err) < 0)
		goto out;
	if (ar_console_setup(&ctx, err) < 0)
		goto out;
	if (opts->after_mounts &&
	    opts->after_mounts(opts->after_mounts_arg, err) < 0)
		goto out;
	/* Before readonlyPaths, which usually include /proc/sys. */
	if (ar_sysctl_apply(&ctx, err) < 0)
		goto out;
	if (ar_readonly_paths_apply(&ctx, err) < 0)
		goto out;
	if (ar_masked_paths_apply(&ctx, err) < 0)
		goto out;
	if (cfg->root.readonly && root_readonly(&ctx, err) < 0)
		goto out;
	if (ar_enter_root(&ctx, err) < 0)
		goto out;
	r = 0;
out:
	if (ctx.rootfd >= 0)
		close(ctx.rootfd);
	free(ctx.root_real);
	return r;
}
