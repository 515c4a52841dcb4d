/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device nodes in the container's /dev: the default set (null, zero, full,
 * random, urandom, tty), linux.devices, /dev/ptmx -> pts/ptmx, the
 * /dev/fd and std{in,out,err} symlinks, and /dev/console.
 *
 * As real root, nodes are made with mknod.  In a user namespace the kernel
 * refuses mknod of devices: a node of linux.devices the runtime made
 * (mount_premade.c, when it is root on the host) is moved in, else the
 * host's node is bind mounted over an empty file (as runc and crun do).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"
#include "mount_syscalls.h"
#include "mounts_internal.h"
#include "rootfs_path.h"
#include "utils.h"

struct dev_spec {
	const char *path;
	char type;
	int64_t major, minor;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	int premade; /* a detached bind of a node the runtime made, or -1 */
};

static const struct dev_spec default_devices[] = {
	{ "/dev/null", 'c', 1, 3, 0666, 0, 0, -1 },
	{ "/dev/zero", 'c', 1, 5, 0666, 0, 0, -1 },
	{ "/dev/full", 'c', 1, 7, 0666, 0, 0, -1 },
	{ "/dev/random", 'c', 1, 8, 0666, 0, 0, -1 },
	{ "/dev/urandom", 'c', 1, 9, 0666, 0, 0, -1 },
	{ "/dev/tty", 'c', 5, 0, 0666, 0, 0, -1 },
};

static bool device_configured(const struct oci_config *cfg, const char *path)
{
	_cleanup_free_ char *want = ar_clean_path(path);

	for (size_t i = 0; i < cfg->linux_.n_devices; i++) {
		_cleanup_free_ char *c =
			ar_clean_path(cfg->linux_.devices[i].path);

		if (strcmp(c, want) == 0)
			return true;
	}
	return false;
}

/* A mount in `mounts` has this destination (rootless podman
 * --privileged binds the host's nodes there itself). */
static bool mount_target(const struct oci_config *cfg, const char *path)
{
	_cleanup_free_ char *want = ar_clean_path(path);

	for (size_t i = 0; i < cfg->n_mounts; i++) {
		_cleanup_free_ char *c = NULL;

		if (!cfg->mounts[i].destination)
			continue;
		c = ar_clean_path(cfg->mounts[i].destination);
		if (strcmp(c, want) == 0)
			return true;
	}
	return false;
}

/* runc: no device setup at all when the config bind mounts a /dev. */
static bool dev_is_bind_mount(const struct oci_config *cfg)
{
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct oci_mount *m = &cfg->mounts[i];
		_cleanup_free_ char *c = NULL;
		if (!ar_mount_is_bind(m) || !m->destination)
			continue;
		c = ar_clean_path(m->destination);
		if (strcmp(c, "/dev") == 0)
			return true;
	}
	return false;
}

/* Split a path into an O_PATH fd of its (created) parent inside the root
 * and its last component. */
static int open_parent(struct ar_rootfs_ctx *ctx, const char *path,
		       char **name_out, struct ar_error *err)
{
	_cleanup_free_ char *clean = ar_clean_path(path);
	char *slash = strrchr(clean, '/');
	int fd;

	if (strcmp(clean, "/") == 0)
		return ar_error_set_plain(err, EINVAL,
					  "\"%s\" is not a file path", path);
	*slash = '\0';
	fd = ar_mkdir_p_in_root(ctx->rootfd, *clean ? clean : "/", 0755, err);
	if (fd < 0)
		return -1;
	*name_out = ar_xstrdup(slash + 1);
	return fd;
}

/* Remove whatever non-directory is at dirfd/name (never following it). */
static int remove_existing(int dirfd, const char *name)
{
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

static int bind_device(struct ar_rootfs_ctx *ctx, const struct dev_spec *d,
		       int dirfd, const char *name, struct ar_error *err)
{
	_cleanup_close_ int tfd = -1;
	_cleanup_close_ int mfd = -1;
	/* a device node needs neither; a setuid file bound from the host
	 * must not count as one */
	const struct ar_bind_attrs attrs = {
		.set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
		.userns_fd = -1,
	};
	mode_t want = d->type == 'b' ? S_IFBLK : S_IFCHR;
	struct stat st;

	if (stat(d->path, &st) < 0)
		return ar_error_set(
			err, errno,
			"device \"%s\": in a user namespace the host's node is bound (mknod is refused), and the host has none",
			d->path);
	if ((st.st_mode & S_IFMT) != want ||
	    major(st.st_rdev) != (unsigned int)d->major ||
	    minor(st.st_rdev) != (unsigned int)d->minor)
		return ar_error_set_plain(
			err, EINVAL,
			"device \"%s\": the host's node is not %c %lld:%lld (in a user namespace the host's node is bound, mknod is refused)",
			d->path, d->type == 'b' ? 'b' : 'c',
			(long long)d->major, (long long)d->minor);
	if (remove_existing(dirfd, name) < 0)
		return ar_error_set(err, errno, "remove \"%s\"", d->path);
	tfd = openat(dirfd, name,
		     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (tfd < 0)
		return ar_error_set(err, errno, "create \"%s\"", d->path);
	close(tfd);
	tfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0)
		return ar_error_set(err, errno, "open \"%s\"", d->path);
	if (ar_bind_fd(-1, d->path, tfd, false, &attrs, &mfd) < 0)
		return ar_error_set(err, errno, "bind device \"%s\"", d->path);
	return ar_check_inside_root(ctx, mfd, d->path, err);
}

/* The runtime's node (mount_premade.c) moved onto an empty file. */
static int attach_premade(struct ar_rootfs_ctx *ctx, const struct dev_spec *d,
			  int dirfd, const char *name, struct ar_error *err)
{
	_cleanup_close_ int tfd = -1;

	if (remove_existing(dirfd, name) < 0)
		return ar_error_set(err, errno, "remove \"%s\"", d->path);
	tfd = openat(dirfd, name,
		     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (tfd < 0)
		return ar_error_set(err, errno, "create \"%s\"", d->path);
	close(tfd);
	tfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0)
		return ar_error_set(err, errno, "open \"%s\"", d->path);
	if (ar_bind_tree_attach(d->premade, tfd, NULL) < 0)
		return ar_error_set(err, errno, "move the node of \"%s\"",
				    d->path);
	return ar_check_inside_root(ctx, d->premade, d->path, err);
}

static int mknod_device(const struct dev_spec *d, int dirfd, const char *name,
			struct ar_error *err)
{
	mode_t type = d->type == 'b' ? S_IFBLK :
		      d->type == 'p' ? S_IFIFO :
				       S_IFCHR;
	dev_t dev = d->type == 'p' ? 0 :
				     makedev((unsigned int)d->major,
					     (unsigned int)d->minor);
	mode_t old;
	int r;

	if (remove_existing(dirfd, name) < 0)
		return ar_error_set(err, errno, "remove \"%s\"", d->path);
	old = umask(0);
	r = mknodat(dirfd, name, type | (d->mode & 07777), dev);
	umask(old);
	if (r < 0)
		return ar_error_set(err, errno, "mknod \"%s\"", d->path);
	if (fchownat(dirfd, name, d->uid, d->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return ar_error_set(err, errno, "chown \"%s\"", d->path);
	return 0;
}

static int create_device(struct ar_rootfs_ctx *ctx, const struct dev_spec *d,
			 struct ar_error *err)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_free_ char *name = NULL;
	bool bind = ctx->opts->userns || ctx->opts->rootless;

	dirfd = open_parent(ctx, d->path, &name, err);
	if (dirfd < 0)
		return -1;
	if (d->premade >= 0)
		return attach_premade(ctx, d, dirfd, name, err);
	if (!bind || d->type == 'p') {
		struct ar_error lerr = AR_ERROR_INIT;

		if (mknod_device(d, dirfd, name, &lerr) == 0)
			return 0;
		if (lerr.code != EPERM || d->type == 'p') {
			*err = lerr;
			return -1;
		}
		ar_debug("%s; binding the host's node instead", lerr.msg);
	}
	return bind_device(ctx, d, dirfd, name, err);
}

static int dev_symlinks(struct ar_rootfs_ctx *ctx, struct ar_error *err)
{
	static const struct {
		const char *target, *name;
	} links[] = {
		{ "/proc/self/fd", "fd" },
		{ "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" },
		{ "/proc/self/fd/2", "stderr" },
	};
	_cleanup_close_ int devfd = -1;

	devfd = ar_mkdir_p_in_root(ctx->rootfd, "/dev", 0755, err);
	if (devfd < 0)
		return -1;
	for (size_t i = 0; i < AR_ARRAY_SIZE(links); i++)
		if (symlinkat(links[i].target, devfd, links[i].name) < 0 &&
		    errno != EEXIST)
			return ar_error_set(err, errno, "symlink /dev/%s",
					    links[i].name);

	if (device_configured(ctx->cfg, "/dev/ptmx"))
		return 0;
	if (remove_existing(devfd, "ptmx") < 0) {
		/* e.g. a bind mount over it: leave it alone */
		ar_debug("keeping /dev/ptmx: %s", strerror(errno));
		return 0;
	}
	if (symlinkat("pts/ptmx", devfd, "ptmx") < 0)
		return ar_error_set(err, errno, "symlink /dev/ptmx");
	return 0;
}

int ar_devices_setup(struct ar_rootfs_ctx *ctx, struct ar_error *err)
{
	const struct oci_linux *l = &ctx->cfg->linux_;

	if (dev_is_bind_mount(ctx->cfg))
		return 0;

	for (size_t i = 0; i < AR_ARRAY_SIZE(default_devices); i++) {
		/* what the config sets, as a device or a mount, wins */
		if (device_configured(ctx->cfg, default_devices[i].path) ||
		    mount_target(ctx->cfg, default_devices[i].path))
			continue;
		if (create_device(ctx, &default_devices[i], err) < 0)
			return ar_error_wrap(err, "default device");
	}
	for (size_t i = 0; i < l->n_devices; i++) {
		const struct oci_device *od = &l->devices[i];
		struct dev_spec d = {
			.path = od->path,
			.type = od->type,
			.major = od->major,
			.minor = od->minor,
			.mode = od->file_mode.set ? od->file_mode.v : 0666,
			.uid = od->uid.set ? od->uid.v : 0,
			.gid = od->gid.set ? od->gid.v : 0,
			.premade = ctx->opts->premade_devices ?
					   ctx->opts->premade_devices[i] :
					   -1,
		};

		if (!d.path || !*d.path)
			return ar_error_set_plain(
				err, EINVAL, "linux.devices[%zu]: no path", i);
		if (create_device(ctx, &d, err) < 0)
			return ar_error_wrap(err, "linux.devices[%zu]", i);
	}
	return dev_symlinks(ctx, err);
}

int ar_console_setup(struct ar_rootfs_ctx *ctx, struct ar_error *err)
{
	const char *console = ctx->opts->console_path;
	_cleanup_close_ int devfd = -1;
	_cleanup_close_ int tfd = -1;
	_cleanup_close_ int mfd = -1;
	struct stat st;

	if (!console)
		return 0;
	devfd = ar_mkdir_p_in_root(ctx->rootfd, "/dev", 0755, err);
	if (devfd < 0)
		return ar_error_wrap(err, "/dev/console");
	/* Never follow whatever the image put there. */
	if (fstatat(devfd, "console", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode) && unlinkat(devfd, "console", 0) < 0)
		return ar_error_set(err, errno, "remove /dev/console");
	tfd = ar_mount_target_in_root(ctx->rootfd, "/dev/console", false, err);
	if (tfd < 0)
		return ar_error_wrap(err, "/dev/console");
	if (ar_bind_fd(-1, console, tfd, false, NULL, &mfd) < 0)
		return ar_error_set(err, errno, "bind \"%s\" on /dev/console",
				    console);
	return ar_check_inside_root(ctx, mfd, "/dev/console", err);
}
