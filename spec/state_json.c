/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "state_json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "utils.h"

static void gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void gen_kv_str(yajl_gen g, const char *k, const char *v)
{
	gen_str(g, k);
	gen_str(g, v ? v : "");
}

static void gen_kv_int(yajl_gen g, const char *k, long long v)
{
	gen_str(g, k);
	yajl_gen_integer(g, v);
}

static void gen_kv_bool(yajl_gen g, const char *k, bool v)
{
	gen_str(g, k);
	yajl_gen_bool(g, v);
}

static void gen_freep(yajl_gen *g)
{
	if (*g)
		yajl_gen_free(*g);
}

int ar_state_json_generate(const struct ar_state *st, const char *status_name,
			   bool with_pid, bool with_private, char **out,
			   size_t *len, struct ar_error *err)
{
	_cleanup_(gen_freep) yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t blen;

	if (!g)
		return ar_error_set_plain(err, ENOMEM,
					  "state JSON: out of memory");
	yajl_gen_config(g, yajl_gen_validate_utf8, 0);
	yajl_gen_map_open(g);
	gen_kv_str(g, "ociVersion", "1.2.0");
	gen_kv_str(g, "id", st->id);
	if (status_name)
		gen_kv_str(g, "status", status_name);
	if (with_pid)
		gen_kv_int(g, "pid", st->pid);
	gen_kv_str(g, "bundle", st->bundle);
	if (st->n_annotations) {
		gen_str(g, "annotations");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < st->n_annotations; i++)
			gen_kv_str(g, st->annotations[i].key,
				   st->annotations[i].value);
		yajl_gen_map_close(g);
	}
	if (with_private) {
		gen_str(g, "agentrun");
		yajl_gen_map_open(g);
		gen_kv_int(g, "pid", st->pid);
		gen_str(g, "pidStart");
		{
			char num[32];
			int n = snprintf(num, sizeof(num), "%llu",
					 st->pid_start);
			yajl_gen_number(g, num, (size_t)n);
		}
		gen_kv_str(g, "rootfs", st->rootfs);
		gen_kv_str(g, "created", st->created);
		gen_kv_int(g, "owner", st->owner);
		if (st->cgroup_path)
			gen_kv_str(g, "cgroupPath", st->cgroup_path);
		gen_kv_bool(g, "systemdCgroup", st->systemd_cgroup);
		gen_kv_bool(g, "rootless", st->rootless);
		gen_kv_bool(g, "detached", st->detached);
		if (st->creating)
			gen_kv_bool(g, "creating", true);
		gen_kv_bool(g, "hasPoststopHooks", st->has_poststop_hooks);
		if (st->config_path)
			gen_kv_str(g, "configPath", st->config_path);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, &blen) != yajl_gen_status_ok)
		return ar_error_set_plain(err, EINVAL, "generate state JSON");
	*out = ar_xmalloc(blen + 1);
	memcpy(*out, buf, blen);
	(*out)[blen] = '\0';
	if (len)
		*len = blen;
	return 0;
}

static void tree_freep(yajl_val *v)
{
	if (*v)
		yajl_tree_free(*v);
}

static yajl_val get(yajl_val obj, const char *key, yajl_type type)
{
	const char *path[] = { key, NULL };

	return obj ? yajl_tree_get(obj, path, type) : NULL;
}

static char *dup_str(yajl_val obj, const char *key)
{
	yajl_val v = get(obj, key, yajl_t_string);

	return v ? ar_xstrdup(YAJL_GET_STRING(v)) : NULL;
}

static bool get_bool(yajl_val obj, const char *key)
{
	yajl_val v = get(obj, key, yajl_t_any);

	return v && YAJL_IS_TRUE(v);
}

int ar_state_json_parse(const char *json, const char *filename,
			struct ar_state **out, struct ar_error *err)
{
	char ebuf[256] = "";
	_cleanup_(tree_freep)
		yajl_val root = yajl_tree_parse(json, ebuf, sizeof(ebuf));
	_cleanup_(ar_state_freep) struct ar_state *st = NULL;
	yajl_val priv, v, ann;

	if (!root)
		return ar_error_set_plain(err, EINVAL, "%s: invalid JSON: %s",
					  filename, ebuf);
	if (!YAJL_IS_OBJECT(root))
		return ar_error_set_plain(err, EINVAL, "%s: expected an object",
					  filename);
	st = ar_xcalloc(1, sizeof(*st));
	st->id = dup_str(root, "id");
	st->bundle = dup_str(root, "bundle");
	if (!st->id || !st->bundle)
		return ar_error_set_plain(err, EINVAL,
					  "%s: missing id or bundle", filename);
	ann = get(root, "annotations", yajl_t_object);
	if (ann && ann->u.object.len) {
		size_t n = ann->u.object.len;

		st->annotations = ar_xcalloc(n, sizeof(*st->annotations));
		for (size_t i = 0; i < n; i++) {
			yajl_val val = ann->u.object.values[i];

			st->annotations[i].key =
				ar_xstrdup(ann->u.object.keys[i]);
			st->annotations[i].value = ar_xstrdup(
				YAJL_IS_STRING(val) ? YAJL_GET_STRING(val) :
						      "");
			st->n_annotations++;
		}
	}
	priv = get(root, "agentrun", yajl_t_object);
	if (!priv)
		return ar_error_set_plain(
			err, EINVAL, "%s: missing agentrun object", filename);
	v = get(priv, "pid", yajl_t_number);
	if (v && YAJL_IS_INTEGER(v))
		st->pid = (pid_t)YAJL_GET_INTEGER(v);
	v = get(priv, "pidStart", yajl_t_number);
	if (v) {
		unsigned long long ps;

		if (ar_parse_u64(YAJL_GET_NUMBER(v), &ps) == 0)
			st->pid_start = ps;
	}
	st->rootfs = dup_str(priv, "rootfs");
	st->created = dup_str(priv, "created");
	v = get(priv, "owner", yajl_t_number);
	if (v && YAJL_IS_INTEGER(v))
		st->owner = (uid_t)YAJL_GET_INTEGER(v);
	st->cgroup_path = dup_str(priv, "cgroupPath");
	st->systemd_cgroup = get_bool(priv, "systemdCgroup");
	st->rootless = get_bool(priv, "rootless");
	st->detached = get_bool(priv, "detached");
	st->creating = get_bool(priv, "creating");
	st->has_poststop_hooks = get_bool(priv, "hasPoststopHooks");
	st->config_path = dup_str(priv, "configPath");
	*out = ar_steal_ptr(&st);
	return 0;
}

void ar_state_free(struct ar_state *st)
{
	if (!st)
		return;
	free(st->id);
	free(st->bundle);
	free(st->rootfs);
	free(st->created);
	free(st->cgroup_path);
	free(st->config_path);
	for (size_t i = 0; i < st->n_annotations; i++) {
		free(st->annotations[i].key);
		free(st->annotations[i].value);
	}
	free(st->annotations);
	free(st);
}

int ar_seccomp_process_state_json(const char *oci_version, const char *metadata,
				  const char *state_json, char **out,
				  size_t *out_len, struct ar_error *err)
{
	_cleanup_(tree_freep) yajl_val state = NULL;
	_cleanup_(gen_freep) yajl_gen g = NULL;
	static const char *pid_path[] = { "pid", NULL };
	const unsigned char *buf;
	char ebuf[256];
	long long pid = 0;
	yajl_val pv;
	size_t len;

	if (!state_json)
		return ar_error_set_plain(
			err, EINVAL,
			"seccomp: listenerPath: no container state");
	state = yajl_tree_parse(state_json, ebuf, sizeof(ebuf));
	if (!state || !YAJL_IS_OBJECT(state))
		return ar_error_set_plain(
			err, EINVAL,
			"seccomp: listenerPath: invalid container state JSON");
	pv = yajl_tree_get(state, pid_path, yajl_t_number);
	if (pv && YAJL_IS_INTEGER(pv))
		pid = YAJL_GET_INTEGER(pv);

	g = yajl_gen_alloc(NULL);
	if (!g)
		return ar_error_set_plain(err, ENOMEM,
					  "yajl_gen_alloc: out of memory");
	yajl_gen_map_open(g);
	gen_kv_str(g, "ociVersion", oci_version);
	gen_str(g, "fds");
	yajl_gen_array_open(g);
	gen_str(g, "seccompFd");
	yajl_gen_array_close(g);
	gen_kv_int(g, "pid", pid);
	if (metadata && *metadata)
		gen_kv_str(g, "metadata", metadata);
	gen_str(g, "state");
	/* The state was validated above; yajl_gen_number copies its bytes
	 * verbatim, which embeds the object as is. */
	if (yajl_gen_number(g, state_json, strlen(state_json)) !=
	    yajl_gen_status_ok)
		return ar_error_set_plain(
			err, EINVAL,
			"seccomp: listenerPath: cannot embed the state");
	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
		return ar_error_set_plain(
			err, EINVAL,
			"seccomp: listenerPath: cannot generate the process state");
	*out = ar_xmalloc(len + 1);
	memcpy(*out, buf, len);
	(*out)[len] = '\0';
	*out_len = len;
	return 0;
}
