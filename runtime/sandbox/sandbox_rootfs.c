/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox's root directory itself: the generated etc/passwd and
 * etc/group and the host's merged-/usr links (bin -> usr/bin, ...);
 * everything else in it is a mount point.
 *
 * --print-bundle writes it into DIR/rootfs on disk. A run writes nothing
 * on the host: the root is a fresh tmpfs mounted over an empty directory
 * inside the sandbox's own mount namespace (as bubblewrap does), filled
 * by the container process (ar_create_opts.rootfs_populate), so the ~20
 * mount points are made in memory and vanish with the namespace. On a
 * disk-backed /run or /tmp that saves tens of milliseconds per start: no
 * mkdir/rmdir of a tree, no removal of directories that were mount
 * points in a namespace being torn down.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox_etc.h"
#include "sandbox_rootfs.h"
#include "utils.h"

void sb_rootfs_init(struct sb_rootfs *r, const struct ar_sandbox_host *h)
{
	static const char *const links[] = { "bin",   "sbin",  "lib",
					     "lib32", "lib64", "libx32" };

	memset(r, 0, sizeof(*r));
	r->passwd = ar_sandbox_passwd(h);
	r->group = ar_sandbox_group(h);
	/* Merged /usr: /bin -> usr/bin and friends, as on the host. */
	for (size_t i = 0; i < AR_ARRAY_SIZE(links); i++) {
		char host[32];
		ssize_t n;

		snprintf(host, sizeof(host), "/%s", links[i]);
		n = readlink(host, r->links[r->n_links].target,
			     sizeof(r->links[0].target) - 1);
		if (n <= 0)
			continue;
		r->links[r->n_links].target[n] = '\0';
		r->links[r->n_links++].name = links[i];
	}
}

void sb_rootfs_release(struct sb_rootfs *r)
{
	free(r->passwd);
	free(r->group);
	memset(r, 0, sizeof(*r));
}

static int write_at(int dfd, const char *name, const char *data,
		    struct ar_error *err)
{
	_cleanup_close_ int fd = openat(
		dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		0644);

	if (fd < 0 || ar_write_all(fd, data, strlen(data)) < 0)
		return ar_error_set(err, errno, "write rootfs/etc/%s", name);
	return 0;
}

int sb_rootfs_fill(int rfd, const struct sb_rootfs *r, struct ar_error *err)
{
	_cleanup_close_ int efd = -1;

	if (mkdirat(rfd, "etc", 0755) < 0)
		return ar_error_set(err, errno, "create rootfs/etc");
	efd = openat(rfd, "etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (efd < 0)
		return ar_error_set(err, errno, "open rootfs/etc");
	if (write_at(efd, "passwd", r->passwd, err) < 0 ||
	    write_at(efd, "group", r->group, err) < 0)
		return -1;
	for (size_t i = 0; i < r->n_links; i++)
		if (symlinkat(r->links[i].target, rfd, r->links[i].name) < 0)
			return ar_error_set(err, errno, "symlink rootfs/%s",
					    r->links[i].name);
	return 0;
}

static bool mount_is_bind(const struct oci_mount *m)
{
	if (m->type &&
	    (strcmp(m->type, "bind") == 0 || strcmp(m->type, "rbind") == 0))
		return true;
	for (size_t i = 0; i < m->options.n; i++)
		if (strcmp(m->options.v[i], "bind") == 0 ||
		    strcmp(m->options.v[i], "rbind") == 0)
			return true;
	return false;
}

/* "/a/b" made of plain names (no ".", "..", "//", trailing '/'), not
 * through one of the root's symlinks: created below without following
 * anything. */
static bool plain_dest(const struct sb_rootfs *r, const char *d)
{
	size_t len = strlen(d), first;

	if (d[0] != '/' || len < 2 || len >= PATH_MAX)
		return false;
	/* every component a plain name: no "", ".", ".." */
	for (const char *c = d + 1; c;
	     c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	first = strcspn(d + 1, "/");
	for (size_t i = 0; i < r->n_links; i++)
		if (strlen(r->links[i].name) == first &&
		    strncmp(d + 1, r->links[i].name, first) == 0)
			return false;
	return true;
}

/*
 * The mount points of the mounts that land in the tmpfs root itself (not
 * below an earlier mount), made while filling it: the runtime's
 * RESOLVE_IN_ROOT lookup of each target then finds it at once instead of
 * walking and creating it component by component (~5 syscalls less per
 * mount, ~30 mounts). Same kinds as the runtime makes them: a directory,
 * or an empty file for a bind of a file; same modes. The root is ours,
 * fresh and empty, and nothing of the container has run yet. Anything
 * unexpected is left to the runtime, which reports it.
 */
static void premake_mount_points(int rootfd, const struct sb_rootfs *r)
{
	const struct oci_mount *mounts = r->cfg ? r->cfg->mounts : NULL;
	size_t n = r->cfg ? r->cfg->n_mounts : 0;

	for (size_t i = 0; i < n; i++) {
		const struct oci_mount *m = &mounts[i];
		const char *d = m->destination;
		char rel[PATH_MAX];
		bool dir = true, covered = false;
		struct stat st;

		if (!d || !plain_dest(r, d))
			continue;
		for (size_t j = 0; j < i && !covered; j++)
			covered = mounts[j].destination &&
				  ar_path_under(d, mounts[j].destination);
		if (covered)
			continue;
		if (mount_is_bind(m)) {
			if (!m->source || stat(m->source, &st) < 0)
				continue;
			dir = S_ISDIR(st.st_mode);
		}
		snprintf(rel, sizeof(rel), "%s", d + 1);
		for (char *p = strchr(rel, '/'); p; p = strchr(p + 1, '/')) {
			*p = '\0';
			mkdirat(rootfd, rel, 0755);
			*p = '/';
		}
		if (dir) {
			mkdirat(rootfd, rel, 0755);
		} else {
			int fd = openat(rootfd, rel,
					O_WRONLY | O_CREAT | O_EXCL |
						O_NOFOLLOW | O_CLOEXEC,
					0644);

			if (fd >= 0)
				close(fd);
		}
	}
}

int sb_rootfs_populate(int rootfd, void *arg, struct ar_error *err)
{
	const struct sb_rootfs *r = arg;

	if (sb_rootfs_fill(rootfd, r, err) < 0)
		return -1;
	premake_mount_points(rootfd, r);
	return 0;
}

/* A directory of ours (not a link, owned by uid), or false. */
static bool own_dir(const char *path, uid_t uid)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid;
}

char *sb_root_mountpoint(uid_t uid, bool *remove)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	_cleanup_free_ char *dir = NULL;
	char *tmp;

	*remove = false;
	/* Only ever a mount point inside the sandbox's mount namespace:
	 * nothing is written into it, so one per user is kept and shared
	 * by concurrent sandboxes (each mounts its own tmpfs over it). */
	if (base && base[0] == '/' && own_dir(base, uid))
		dir = ar_xasprintf("%s/agentrun-sandbox-root", base);
	else
		dir = ar_xasprintf("/tmp/agentrun-sandbox-root-%u",
				   (unsigned)uid);
	if ((mkdir(dir, 0700) == 0 || errno == EEXIST) && own_dir(dir, uid))
		return ar_steal_ptr(&dir);
	/* Taken by someone else (a shared /tmp): a fresh one, removed
	 * after the run. */
	tmp = ar_xstrdup("/tmp/agentrun-sandbox-XXXXXX");
	if (!mkdtemp(tmp)) {
		free(tmp);
		return NULL;
	}
	*remove = true;
	return tmp;
}
