/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox's mount list as it is built (struct sb_mounts): every file
 * of runtime/sandbox/ that contributes mounts (sandbox_config.c,
 * sandbox_home.c, sandbox_etc.c, sandbox_egress.c) adds through here, and
 * sandbox_config.c moves the list into the config at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sandbox_mounts.h"
#include "utils.h"

void sb_mount_add(struct sb_mounts *m, const char *dest, const char *type,
		  const char *source, const char *const *options)
{
	struct oci_mount *mt;
	size_t n = 0;

	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->v = ar_xrealloc(m->v, m->cap * sizeof(*m->v));
	}
	mt = &m->v[m->n++];
	memset(mt, 0, sizeof(*mt));
	mt->destination = oci_arena_strdup(m->a, dest);
	mt->type = oci_arena_strdup(m->a, type);
	mt->source = oci_arena_strdup(m->a, source);
	while (options && options[n])
		n++;
	mt->options.v = oci_arena_calloc(m->a, n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		mt->options.v[i] = oci_arena_strdup(m->a, options[i]);
	mt->options.n = n;
}

void sb_bind_at(struct sb_mounts *m, const char *dest, const char *path,
		bool rw)
{
	struct stat st;

	if (rw)
		sb_mount_add(m, dest, "bind", path,
			     SB_OPTS("rbind", "rw", "nosuid", "nodev"));
	else if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
		/* A file has no submounts: "ro" says the same as "rro",
		 * and crun (1.8) fails "rro" on a file target (ENOTDIR). */
		sb_mount_add(m, dest, "bind", path,
			     SB_OPTS("bind", "ro", "nosuid", "nodev"));
	else
		sb_mount_add(m, dest, "bind", path,
			     SB_OPTS("rbind", "rro", "nosuid", "nodev"));
}

void sb_bind(struct sb_mounts *m, const char *path, bool rw)
{
	sb_bind_at(m, path, path, rw);
}

char *sb_lexical_path(const struct ar_sandbox_host *h, const char *p)
{
	_cleanup_free_ char *full = NULL;
	char *out;
	size_t n = 0;

	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0'))
		full = ar_xasprintf("%s%s", h->home, p + 1);
	else if (p[0] == '/')
		full = ar_xstrdup(p);
	else
		return NULL;
	out = ar_xmalloc(strlen(full) + 2);
	out[n++] = '/';
	for (const char *c = full; *c;) {
		const char *e;
		size_t len;

		while (*c == '/')
			c++;
		if (!*c)
			break;
		e = strchrnul(c, '/');
		len = (size_t)(e - c);
		if (len == 2 && c[0] == '.' && c[1] == '.') {
			while (n > 1 && out[n - 1] != '/')
				n--;
			if (n > 1)
				n--;
		} else if (!(len == 1 && c[0] == '.')) {
			if (n > 1)
				out[n++] = '/';
			memcpy(out + n, c, len);
			n += len;
		}
		c = e;
	}
	out[n] = '\0';
	return out;
}

void sb_hide(struct sb_mounts *m, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode))
		sb_mount_add(m, path, "tmpfs", "tmpfs",
			     SB_OPTS("ro", "nosuid", "nodev", "noexec",
				     "mode=0500", "size=4k"));
	else
		sb_mount_add(m, path, "bind", "/dev/null",
			     SB_OPTS("bind", "ro", "nosuid", "noexec"));
}

bool sb_mounts_show(const struct sb_mounts *m, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++) {
		const struct oci_mount *mt = &m->v[i];

		if (((strcmp(mt->type, "bind") == 0 &&
		      strcmp(mt->source, "/dev/null") != 0) ||
		     strcmp(mt->type, "overlay") == 0) &&
		    ar_path_under(path, mt->destination))
			return true;
	}
	return false;
}

bool sb_has_dest(const struct sb_mounts *m, const char *dest)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].destination, dest) == 0)
			return true;
	return false;
}

static size_t depth(const char *p)
{
	size_t d = 0;

	for (; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			d++;
	return d;
}

void sb_mounts_finish(struct sb_mounts *m, struct oci_mount **out,
		      size_t *n_out)
{
	size_t k = 0, maxd = 0;
	struct oci_mount *v;

	for (size_t i = 0; i < m->n; i++)
		if (depth(m->v[i].destination) > maxd)
			maxd = depth(m->v[i].destination);
	v = oci_arena_calloc(m->a, m->n + 1, sizeof(*v));
	for (size_t d = 0; d <= maxd; d++)
		for (size_t i = 0; i < m->n; i++)
			if (depth(m->v[i].destination) == d)
				v[k++] = m->v[i];
	*out = v;
	*n_out = k;
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

/* As root, a workspace owned by someone else (sudo agentrun sandbox in a
 * user's checkout): an idmapped bind shows the owner's files as root's
 * and what root creates lands with the owner's ids, so nothing needs
 * CAP_DAC_OVERRIDE and nothing on the host ends up owned by root. */
void sb_workspace_idmap(struct sb_mounts *m, const char *ws)
{
	struct oci_mount *mt = &m->v[m->n - 1];
	struct oci_id_mapping *u, *g;
	struct stat st;
	size_t n = mt->options.n;
	char **opts;

	if (stat(ws, &st) < 0 || (st.st_uid == 0 && st.st_gid == 0))
		return;
	opts = oci_arena_calloc(m->a, n + 2, sizeof(char *));
	memcpy(opts, mt->options.v, n * sizeof(char *));
	opts[n] = oci_arena_strdup(m->a, "idmap");
	mt->options.v = opts;
	mt->options.n = n + 1;
	/* Written as is to the idmap namespace's uid_map ("inside outside
	 * 1", as runc and crun do): the on-disk owner id is the inside id,
	 * uid 0 of the container (the only one it maps) the outside one. */
	u = oci_arena_calloc(m->a, 1, sizeof(*u));
	g = oci_arena_calloc(m->a, 1, sizeof(*g));
	*u = (struct oci_id_mapping){ (uint32_t)st.st_uid, 0, 1 };
	*g = (struct oci_id_mapping){ (uint32_t)st.st_gid, 0, 1 };
	mt->uid_mappings = (struct oci_id_mappings){ u, 1 };
	mt->gid_mappings = (struct oci_id_mappings){ g, 1 };
}

/* ---- paths ---- */

char *sb_path_join(struct ar_arena *a, const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *r = oci_arena_alloc(a, dl + nl + 2);

	/* the NUL comes with name (nl + 1) */
	/* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
	memcpy(r, dir, dl);
	r[dl] = '/';
	memcpy(r + dl + 1, name, nl + 1);
	return r;
}

char *sb_expand_path(const struct ar_sandbox_host *h, const char *p)
{
	_cleanup_free_ char *full = NULL;
	char *r;

	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0'))
		full = ar_xasprintf("%s%s", h->home, p + 1);
	else if (p[0] == '/')
		full = ar_xstrdup(p);
	else {
		errno = EINVAL;
		return NULL;
	}
	r = realpath(full, NULL);
	return r; /* errno from realpath */
}
