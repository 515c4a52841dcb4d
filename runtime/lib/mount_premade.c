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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "mounts.h"
#include "mounts_internal.h"
#include "utils.h"

static bool wants_idmap(const struct oci_strv *o)
{
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->v[i], "idmap") == 0 ||
		    strcmp(o->v[i], "ridmap") == 0)
			return true;
	return false;
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
