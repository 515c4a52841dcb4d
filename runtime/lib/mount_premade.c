/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mounts the container process cannot make itself: the runtime makes them
 * as detached mounts before the clone, the clone inherits the fds, and the
 * container process only attaches them (mounts.c: move_mount onto the
 * target it resolved in its rootfs).
 *
 * Today these are the idmapped binds ("idmap"/"ridmap"). mount_setattr
 * with MOUNT_ATTR_IDMAP needs CAP_SYS_ADMIN in the user namespace that owns
 * the filesystem's superblock (the initial one for ext4, xfs, btrfs, a
 * host tmpfs) as well as in the idmap's user namespace. A container
 * process in a user namespace of its own never has the first, however
 * privileged the runtime is: it gets EPERM. The runtime, still in its
 * own namespaces, has both when it is root on the host.
 *
 * And the nodes of linux.devices in a user namespace started by root
 * (crun's `owner-device`): mknod is refused in a user namespace, and
 * binding the host's node keeps the host's owner (or fails where the
 * host has no such node). The runtime, root on the host, makes each node
 * in a tmpfs of its own (a detached mount nobody else sees), owned by the
 * host ids the configured uid/gid map to, and passes a detached bind of
 * it; the container process moves it onto the node's path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"
#include "mount_syscalls.h"
#include "mounts.h"
#include "mounts_internal.h"
#include "utils.h"

static bool wants_idmap(const struct oci_strv *o)
{
	return oci_strv_has(o, "idmap") || oci_strv_has(o, "ridmap");
}

static bool is_bind(const struct oci_mount *m, const struct ar_mount_flags *f)
{
	return f->bind || (m->type && (strcmp(m->type, "bind") == 0 ||
				       strcmp(m->type, "rbind") == 0));
}

static int premade_one(const struct oci_config *cfg, const char *bundle,
		       size_t i, const struct ar_mount_flags *mf, int *out,
		       struct ar_error *err)
{
	const struct oci_mount *m = &cfg->mounts[i];
	const struct oci_linux *l = &cfg->linux_;
	bool own = m->uid_mappings.n || m->gid_mappings.n;
	_cleanup_free_ char *source = ar_rootfs_host_path(bundle, m->source);
	_cleanup_close_ int userns_fd = -1;
	struct ar_bind_attrs a = { 0 };
	bool rec = (mf->flags & MS_REC) ||
		   (m->type && strcmp(m->type, "rbind") == 0);

	/* No maps of its own: the container's. */
	userns_fd = ar_idmap_userns_fd(
		own ? &m->uid_mappings : &l->uid_mappings,
		own ? &m->gid_mappings : &l->gid_mappings, err);
	if (userns_fd < 0)
		return ar_error_wrap(err, "mounts[%zu]", i);
	ar_mount_flags_to_attrs(mf, &a);
	a.idmap = true;
	a.idmap_recursive = mf->idmap_recursive;
	a.userns_fd = userns_fd;
	*out = ar_bind_tree_open(-1, source, rec, &a);
	if (*out >= 0)
		return 0;
	if (errno == EINVAL || errno == EPERM)
		return ar_error_set(
			err, errno,
			"idmapped bind of \"%s\" on \"%s\" (mounts[%zu]): %s",
			source, m->destination, i,
			errno == EINVAL ?
				"does its filesystem support idmapped mounts?" :
				"idmapped mounts of host filesystems need root on the host");
	return ar_error_set(err, errno,
			    "idmapped bind of \"%s\" on \"%s\" (mounts[%zu])",
			    source, m->destination, i);
}

int ar_premade_mounts_open(const struct oci_config *cfg, const char *bundle,
			   int **out, struct ar_error *err)
{
	int *fds = NULL;
	int r = 0;

	*out = NULL;
	for (size_t i = 0; i < cfg->n_mounts && r == 0; i++) {
		const struct oci_mount *m = &cfg->mounts[i];
		struct ar_mount_flags mf;

		if (!wants_idmap(&m->options) || !m->source || !*m->source)
			continue; /* not ours; mounts.c reports what is wrong */
		if (ar_mount_parse_options(&m->options, &mf, err) < 0) {
			r = ar_error_wrap(err, "mounts[%zu]", i);
			break;
		}
		if (mf.idmap && is_bind(m, &mf)) {
			if (!fds) {
				fds = ar_xmalloc(cfg->n_mounts * sizeof(*fds));
				for (size_t j = 0; j < cfg->n_mounts; j++)
					fds[j] = -1;
			}
			r = premade_one(cfg, bundle, i, &mf, &fds[i], err);
		}
		ar_mount_flags_free(&mf);
	}
	if (r < 0) {
		ar_premade_mounts_close(fds, cfg->n_mounts);
		return -1;
	}
	*out = fds;
	return 0;
}

void ar_premade_mounts_close(int *fds, size_t n)
{
	for (size_t i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
}

/* ---- device nodes (owner-device) ---- */

/* A container id through the mappings to the host's; false: unmapped. */
static bool map_id(const struct oci_id_mappings *m, uint32_t id, uint32_t *out)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct oci_id_mapping *e = &m->items[i];

		if (id >= e->container_id &&
		    (uint64_t)id - e->container_id < e->size) {
			*out = e->host_id + (id - e->container_id);
			return true;
		}
	}
	return false;
}

/* A small private tmpfs, detached: nobody but this process sees it. */
static int devices_tmpfs(void)
{
	_cleanup_close_ int fs = -1;

	fs = ar_sys_fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -1;
	if (ar_sys_fsconfig(fs, AR_FSCONFIG_SET_STRING, "mode", "0700", 0) <
		    0 ||
	    ar_sys_fsconfig(fs, AR_FSCONFIG_SET_STRING, "size", "64k", 0) < 0 ||
	    ar_sys_fsconfig(fs, AR_FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -1;
	return ar_sys_fsmount(fs, FSMOUNT_CLOEXEC,
			      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
}

/* One node made in dir, owned by the host ids of its uid/gid, and a
 * detached bind of it. Returns the fd; -1 on error; -2 when open_tree
 * says EINVAL: a kernel that cannot clone from a detached mount. */
static int premade_device(const struct oci_config *cfg, size_t i, int dir,
			  struct ar_error *err)
{
	const struct oci_device *od = &cfg->linux_.devices[i];
	uint32_t uid = od->uid.set ? (uint32_t)od->uid.v : 0;
	uint32_t gid = od->gid.set ? (uint32_t)od->gid.v : 0;
	mode_t mode = od->file_mode.set ? (mode_t)od->file_mode.v : 0666;
	mode_t type = od->type == 'b' ? S_IFBLK : S_IFCHR;
	uint32_t huid, hgid;
	char name[32];
	int fd;

	if (!map_id(&cfg->linux_.uid_mappings, uid, &huid))
		return ar_error_set_plain(
			err, EINVAL,
			"linux.devices[%zu] \"%s\": uid %u is not mapped by linux.uidMappings",
			i, od->path, uid);
	if (!map_id(&cfg->linux_.gid_mappings, gid, &hgid))
		return ar_error_set_plain(
			err, EINVAL,
			"linux.devices[%zu] \"%s\": gid %u is not mapped by linux.gidMappings",
			i, od->path, gid);
	snprintf(name, sizeof(name), "%zu", i);
	if (mknodat(dir, name, type | 0600,
		    makedev((unsigned int)od->major, (unsigned int)od->minor)) <
		    0 ||
	    fchownat(dir, name, huid, hgid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(dir, name, mode & 07777, 0) < 0)
		return ar_error_set(err, errno,
				    "linux.devices[%zu] \"%s\": make the node",
				    i, od->path);
	fd = ar_sys_open_tree(dir, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (fd < 0 && errno == EINVAL)
		return -2;
	if (fd < 0)
		return ar_error_set(err, errno,
				    "linux.devices[%zu] \"%s\": open_tree", i,
				    od->path);
	return fd;
}

int ar_premade_devices_open(const struct oci_config *cfg, bool new_userns,
			    bool rootless, int **out, struct ar_error *err)
{
	const struct oci_linux *l = &cfg->linux_;
	_cleanup_close_ int dir = -1;
	int *fds;

	*out = NULL;
	/* only where the container process cannot mknod and the runtime
	 * can: root on the host, a user namespace with the config's maps */
	if (!new_userns || rootless || geteuid() != 0 || !l->n_devices ||
	    !l->uid_mappings.n || !l->gid_mappings.n)
		return 0;
	dir = devices_tmpfs();
	if (dir < 0) {
		ar_debug(
			"linux.devices: no tmpfs of the runtime's (%s): the host's nodes are bound",
			strerror(errno));
		return 0;
	}
	fds = ar_xmalloc(l->n_devices * sizeof(*fds));
	for (size_t i = 0; i < l->n_devices; i++)
		fds[i] = -1;
	for (size_t i = 0; i < l->n_devices; i++) {
		const struct oci_device *od = &l->devices[i];

		/* a FIFO the container process makes itself; a bad entry is
		 * reported where the nodes are made (devices.c) */
		if (!od->path || !*od->path ||
		    (od->type != 'b' && od->type != 'c' && od->type != 'u'))
			continue;
		int fd = premade_device(cfg, i, dir, err);

		if (fd >= 0) {
			fds[i] = fd;
			continue;
		}
		ar_premade_mounts_close(fds, l->n_devices);
		if (fd == -1)
			return -1;
		/* EINVAL: open_tree cannot clone from a detached mount
		 * before Linux 6.15 or so: the host's nodes, as before */
		ar_debug(
			"linux.devices: this kernel cannot clone a node of a detached tmpfs: the host's nodes are bound");
		return 0;
	}
	*out = fds;
	return 0;
}
