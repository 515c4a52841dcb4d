/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The workspace annotation, run.agentrun.workspace=HOSTPATH[:CTRPATH]
 * (see agent_hooks.h): one more bind mount at the end of `mounts`, plain
 * or idmapped, so that the container's process writes in the workspace as
 * the directory's owner. Nothing is ever chown'ed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_hooks.h"
#include "arena.h"
#include "log.h"
#include "utils.h"

#define WS_WHAT "annotations[\"" AR_ANNOTATION_WORKSPACE "\"]"

/* Shared with the whole system, or the system itself: never a workspace,
 * on the host or in the container. */
static const char *const system_dirs[] = {
	"/",	      "/bin",	   "/boot",  "/dev",	 "/dev/shm", "/etc",
	"/home",      "/lib",	   "/lib32", "/lib64",	 "/libx32",  "/media",
	"/mnt",	      "/opt",	   "/proc",  "/root",	 "/run",     "/sbin",
	"/srv",	      "/sys",	   "/tmp",   "/usr",	 "/usr/bin", "/usr/lib",
	"/usr/local", "/usr/sbin", "/var",   "/var/tmp", NULL,
};

/* Kernel interfaces: nothing below them either. */
static const char *const kernel_trees[] = { "/proc", "/sys", "/dev", NULL };

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' || !path[n]);
}

static const char *system_dir(const char *path)
{
	for (const char *const *d = system_dirs; *d; d++)
		if (strcmp(path, *d) == 0)
			return *d;
	for (const char *const *d = kernel_trees; *d; d++)
		if (under(path, *d))
			return *d;
	return NULL;
}

/* Absolute, no ".." component; returns the cleaned path (malloc'd) or
 * NULL with err set. `which` names the part ("HOSTPATH", "CTRPATH"). */
static char *check_path(const char *value, const char *p, size_t len,
			const char *which, struct ar_error *err)
{
	char *out, *o;
	const char *s = p, *end = p + len;

	if (len == 0) {
		ar_error_set_plain(err, EINVAL, "%s: \"%s\": %s is empty",
				   WS_WHAT, value, which);
		return NULL;
	}
	if (p[0] != '/') {
		ar_error_set_plain(err, EINVAL,
				   "%s: \"%s\": %s `%.*s` is not absolute",
				   WS_WHAT, value, which, (int)len, p);
		return NULL;
	}
	o = out = ar_xmalloc(len + 2);
	while (s < end) {
		const char *c;
		size_t n;

		while (s < end && *s == '/')
			s++;
		if (s == end)
			break;
		c = memchr(s, '/', (size_t)(end - s));
		n = c ? (size_t)(c - s) : (size_t)(end - s);
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			free(out);
			ar_error_set_plain(
				err, EINVAL,
				"%s: \"%s\": %s `%.*s` has a `..` component",
				WS_WHAT, value, which, (int)len, p);
			return NULL;
		}
		if (!(n == 1 && s[0] == '.')) {
			*o++ = '/';
			memcpy(o, s, n);
			o += n;
		}
		s += n;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

void ar_workspace_spec_free(struct ar_workspace_spec *s)
{
	free(s->host);
	free(s->ctr);
	s->host = s->ctr = NULL;
}

/* Refuse path (the HOSTPATH or CTRPATH of value, `what`) when it is or is
 * under a system directory; `why` says whose. */
static int refuse_system_dir(const char *value, const char *path,
			     const char *what, const char *why,
			     struct ar_error *err)
{
	const char *sys = system_dir(path);

	if (!sys)
		return 0;
	return ar_error_set_plain(err, EINVAL,
				  "%s: \"%s\": %s `%s` is %s%s, %s", WS_WHAT,
				  value, what, path,
				  strcmp(path, sys) ? "under " : "", sys, why);
}

int ar_workspace_parse(const char *value, struct ar_workspace_spec *out,
		       struct ar_error *err)
{
	const char *colon = strchr(value, ':');
	size_t hlen = colon ? (size_t)(colon - value) : strlen(value);
	_cleanup_free_ char *host = NULL, *ctr = NULL;

	memset(out, 0, sizeof(*out));
	if (colon && strchr(colon + 1, ':'))
		return ar_error_set_plain(
			err, EINVAL,
			"%s: \"%s\": more than one `:` (expected HOSTPATH[:CTRPATH])",
			WS_WHAT, value);
	host = check_path(value, value, hlen, "HOSTPATH", err);
	if (!host)
		return -1;
	if (colon)
		ctr = check_path(value, colon + 1, strlen(colon + 1), "CTRPATH",
				 err);
	else
		ctr = ar_xstrdup(host);
	if (!ctr)
		return -1;
	if (refuse_system_dir(
		    value, host, "HOSTPATH",
		    "shared with the whole system: use a project directory",
		    err) < 0 ||
	    refuse_system_dir(value, ctr, "CTRPATH",
			      "a system directory of the container", err) < 0)
		return -1;
	out->host = ar_steal_ptr(&host);
	out->ctr = ar_steal_ptr(&ctr);
	return 0;
}

/* id through a "containerID hostID size" map; false when unmapped. */
static bool map_id(const struct oci_id_mappings *m, uint32_t id, uint32_t *out)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct oci_id_mapping *e = &m->items[i];

		if (id >= e->container_id && id - e->container_id < e->size) {
			*out = e->host_id + (id - e->container_id);
			return true;
		}
	}
	return false;
}

/* The process's uid and gid as the runtime sees them (its own user
 * namespace). False when they cannot be known (a joined user namespace
 * without maps in the config). */
static int process_host_ids(const struct oci_config *cfg, uint32_t *uid,
			    uint32_t *gid, bool *known, struct ar_error *err)
{
	const struct oci_namespace *ns = oci_config_find_ns(cfg, OCI_NS_USER);
	const struct oci_user *u = &cfg->process.user;
	const struct oci_linux *l = &cfg->linux_;

	*known = true;
	*uid = u->uid;
	*gid = u->gid;
	if (!ns)
		return 0;
	if (ns->path && !l->uid_mappings.n) {
		*known = false;
		return 0;
	}
	if (!map_id(&l->uid_mappings, u->uid, uid) ||
	    !map_id(&l->gid_mappings, u->gid, gid))
		return ar_error_set_plain(
			err, EINVAL,
			"%s: process.user %u:%u is not mapped by linux.uidMappings/gidMappings",
			WS_WHAT, u->uid, u->gid);
	return 0;
}

static char **opts_v(struct ar_arena *a, bool idmap, size_t *n)
{
	static const char *const o[] = { "bind", "rw", "nosuid", "nodev",
					 "idmap" };
	char **v;

	*n = idmap ? 5 : 4;
	v = oci_arena_calloc(a, *n + 1, sizeof(char *));
	for (size_t i = 0; i < *n; i++)
		v[i] = oci_arena_strdup(a, o[i]);
	return v;
}

static void one_map(struct ar_arena *a, struct oci_id_mappings *m,
		    uint32_t on_disk, uint32_t process)
{
	struct oci_id_mapping *e = oci_arena_calloc(a, 1, sizeof(*e));

	/* idmapped mount: "inside" is the id on disk, "outside" the id
	 * of the process that sees it as its own */
	*e = (struct oci_id_mapping){ on_disk, process, 1 };
	m->items = e;
	m->n = 1;
}

static int add_mount(struct oci_config *cfg, const char *host, const char *ctr,
		     const struct stat *st, bool idmap, uint32_t uid,
		     uint32_t gid)
{
	struct ar_arena *a = &cfg->arena;
	struct oci_mount *v =
		oci_arena_calloc(a, cfg->n_mounts + 1, sizeof(*v));
	struct oci_mount *m = &v[cfg->n_mounts];

	if (cfg->n_mounts)
		memcpy(v, cfg->mounts, cfg->n_mounts * sizeof(*v));
	m->destination = oci_arena_strdup(a, ctr);
	m->type = oci_arena_strdup(a, "bind");
	m->source = oci_arena_strdup(a, host);
	m->options.v = opts_v(a, idmap, &m->options.n);
	if (idmap) {
		one_map(a, &m->uid_mappings, (uint32_t)st->st_uid, uid);
		one_map(a, &m->gid_mappings, (uint32_t)st->st_gid, gid);
	}
	cfg->mounts = v;
	cfg->n_mounts++;
	return 0;
}

int ar_hook_workspace(struct oci_config *cfg, bool rootless,
		      struct ar_error *err)
{
	const char *value = oci_config_annotation(cfg, AR_ANNOTATION_WORKSPACE);
	const char *file = cfg->filename ? cfg->filename : "config.json";
	struct ar_workspace_spec ws;
	_cleanup_free_ char *real = NULL;
	uint32_t uid, gid;
	bool known, idmap;
	struct stat st;
	int r = -1;

	if (!value)
		return 0;
	if (ar_workspace_parse(value, &ws, err) < 0)
		return ar_error_wrap(err, "%s", file);
	real = realpath(ws.host, NULL);
	if (!real) {
		ar_error_set(err, errno, "%s: %s: HOSTPATH `%s`", file, WS_WHAT,
			     ws.host);
		goto out;
	}
	if (stat(real, &st) < 0) {
		ar_error_set(err, errno, "%s: %s: HOSTPATH `%s`", file, WS_WHAT,
			     ws.host);
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		ar_error_set_plain(err, ENOTDIR,
				   "%s: %s: HOSTPATH `%s` is not a directory",
				   file, WS_WHAT, ws.host);
		goto out;
	}
	if (system_dir(real)) {
		ar_error_set_plain(
			err, EINVAL,
			"%s: %s: HOSTPATH `%s` is `%s`, shared with the whole system: use a project directory",
			file, WS_WHAT, ws.host, real);
		goto out;
	}
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const char *d = cfg->mounts[i].destination;
		_cleanup_free_ char *c = NULL;
		struct ar_error ignored = AR_ERROR_INIT;

		if (!d)
			continue;
		c = check_path(d, d, strlen(d), "", &ignored);
		if (c && strcmp(c, ws.ctr) == 0) {
			ar_error_set_plain(
				err, EEXIST,
				"%s: %s: CTRPATH `%s` is already the destination of mounts[%zu]",
				file, WS_WHAT, ws.ctr, i);
			goto out;
		}
	}
	if (process_host_ids(cfg, &uid, &gid, &known, err) < 0) {
		ar_error_wrap(err, "%s", file);
		goto out;
	}
	if (!known) {
		ar_warn("%s: joined user namespace without maps: `%s` is bound as is, files are created with the process's ids",
			WS_WHAT, real);
		uid = (uint32_t)st.st_uid;
		gid = (uint32_t)st.st_gid;
	}
	idmap = uid != (uint32_t)st.st_uid || gid != (uint32_t)st.st_gid;
	if (idmap && rootless) {
		ar_error_set_plain(
			err, EPERM,
			"%s: %s: `%s` belongs to %u:%u but the container's process runs as %u:%u; making it write as the owner needs an idmapped mount, which only root on the host can make: run the process as the owner (a keep-id mapping, e.g. podman --userns=keep-id)",
			file, WS_WHAT, ws.host, (unsigned)st.st_uid,
			(unsigned)st.st_gid, uid, gid);
		goto out;
	}
	ar_debug("%s: bind `%s` at `%s`%s", WS_WHAT, real, ws.ctr,
		 idmap ? " (idmapped: the owner's ids are the process's)" : "");
	r = add_mount(cfg, real, ws.ctr, &st, idmap, uid, gid);
out:
	ar_workspace_spec_free(&ws);
	return r;
}
