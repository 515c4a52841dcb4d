/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox's root directory itself: the generated etc/passwd and
 * etc/group and the host's merged-/usr links (bin -> usr/bin, ...);
 * everything else in it is a mount point.
 *
 * --print-bundle writes it into DIR/rootfs on disk. A run writes nothing
 * on the host: the root is a fresh tmpfs mounted over an empty directory
 * inside the sandbox's own mount namespace (as bubblewrap does), filled
 * by the container process from the entries computed here
 * (ar_create_opts.tmpfs_root, runtime/lib/rootfs_fill.c), so the ~20
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

#include "mounts.h"
#include "sandbox_etc.h"
#include "sandbox_rootfs.h"
#include "utils.h"

/* The list being built (malloc'd; copied into the arena at the end). */
struct sb_rootfs {
	struct ar_arena *a;
	struct ar_rootfs_entry *v;
	size_t n, cap;
};

static void add(struct sb_rootfs *r, const char *path, enum ar_rootfs_kind kind,
		mode_t mode, const char *data, bool optional)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->v = ar_xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	r->v[r->n++] =
		(struct ar_rootfs_entry){ path, kind, mode, data, optional };
}

static bool listed(const struct sb_rootfs *r, const char *path, size_t len)
{
	for (size_t i = 0; i < r->n; i++)
		if (strncmp(r->v[i].path, path, len) == 0 &&
		    r->v[i].path[len] == '\0')
			return true;
	return false;
}

/* "/a/b" made of plain names (no ".", "..", "//", trailing '/'), not
 * through one of the root's symlinks (the first n_links entries after
 * etc/passwd and etc/group): created below without following anything. */
static bool plain_dest(const struct sb_rootfs *r, size_t links_from,
		       size_t links_to, const char *d)
{
	size_t len = strlen(d), first;

	if (d[0] != '/' || len < 2 || len >= PATH_MAX)
		return false;
	for (const char *c = d + 1; c;
	     c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	first = strcspn(d + 1, "/");
	for (size_t i = links_from; i < links_to; i++)
		if (strlen(r->v[i].path) == first &&
		    strncmp(d + 1, r->v[i].path, first) == 0)
			return false;
	return true;
}

/*
 * The mount points of the mounts that land in the tmpfs root itself (not
 * below an earlier mount), made while filling it: the runtime's
 * RESOLVE_IN_ROOT lookup of each target then finds it at once instead of
 * walking and creating it component by component (~5 syscalls less per
 * mount, ~30 mounts). Same kinds as the runtime makes them: a directory,
 * or an empty file for a bind of a file; same modes. Optional entries:
 * anything unexpected is left to the runtime, which reports it.
 */
static void mount_points(struct sb_rootfs *r, size_t links_from,
			 size_t links_to, const struct oci_mount *mounts,
			 size_t n_mounts)
{
	for (size_t i = 0; i < n_mounts; i++) {
		const struct oci_mount *m = &mounts[i];
		const char *d = m->destination, *rel;
		bool dir = true, covered = false;
		struct stat st;

		if (!d || !plain_dest(r, links_from, links_to, d))
			continue;
		for (size_t j = 0; j < i && !covered; j++)
			covered = mounts[j].destination &&
				  ar_path_under(d, mounts[j].destination);
		if (covered)
			continue;
		if (ar_mount_is_bind(m)) {
			if (!m->source || stat(m->source, &st) < 0)
				continue;
			dir = S_ISDIR(st.st_mode);
		}
		rel = oci_arena_strdup(r->a, d + 1);
		for (const char *p = strchr(rel, '/'); p;
		     p = strchr(p + 1, '/'))
			if (!listed(r, rel, (size_t)(p - rel)))
				add(r,
				    oci_arena_strndup(r->a, rel,
						      (size_t)(p - rel)),
				    AR_ROOTFS_DIR, 0755, NULL, true);
		if (!listed(r, rel, strlen(rel)))
			add(r, rel, dir ? AR_ROOTFS_DIR : AR_ROOTFS_FILE,
			    dir ? 0755 : 0644, NULL, true);
	}
}

struct ar_rootfs_content sb_rootfs_content(struct ar_arena *a,
					   const struct ar_sandbox_host *h,
					   const struct oci_strv *etc_names,
					   const struct oci_strv *etc_texts,
					   const struct oci_mount *mounts,
					   size_t n_mounts)
{
	static const char *const links[] = { "bin",   "sbin",  "lib",
					     "lib32", "lib64", "libx32" };
	_cleanup_free_ char *passwd = ar_sandbox_passwd(h);
	_cleanup_free_ char *group = ar_sandbox_group(h);
	struct sb_rootfs r = { .a = a };
	struct ar_rootfs_entry *v;
	size_t links_from;

	add(&r, "etc", AR_ROOTFS_DIR, 0755, NULL, false);
	add(&r, "etc/passwd", AR_ROOTFS_FILE, 0644, oci_arena_strdup(a, passwd),
	    false);
	add(&r, "etc/group", AR_ROOTFS_FILE, 0644, oci_arena_strdup(a, group),
	    false);
	/* a profile's generated files, their directories first */
	for (size_t i = 0; etc_names && i < etc_names->n; i++) {
		const char *rel =
			oci_arena_printf(a, "etc/%s", etc_names->v[i]);

		for (const char *p = strchr(rel + 4, '/'); p;
		     p = strchr(p + 1, '/'))
			if (!listed(&r, rel, (size_t)(p - rel)))
				add(&r,
				    oci_arena_strndup(a, rel,
						      (size_t)(p - rel)),
				    AR_ROOTFS_DIR, 0755, NULL, false);
		if (!listed(&r, rel, strlen(rel)))
			add(&r, rel, AR_ROOTFS_FILE, 0644, etc_texts->v[i],
			    false);
	}
	/* Merged /usr: /bin -> usr/bin and friends, as on the host. */
	links_from = r.n;
	for (size_t i = 0; i < AR_ARRAY_SIZE(links); i++) {
		char host[32], target[256];
		ssize_t n;

		snprintf(host, sizeof(host), "/%s", links[i]);
		n = readlink(host, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		add(&r, links[i], AR_ROOTFS_SYMLINK, 0,
		    oci_arena_strdup(a, target), false);
	}
	mount_points(&r, links_from, r.n, mounts, n_mounts);
	v = oci_arena_calloc(a, r.n + 1, sizeof(*v));
	memcpy(v, r.v, r.n * sizeof(*v));
	free(r.v);
	return (struct ar_rootfs_content){ v, r.n };
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
