/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * struct oci_config -> config.json. Key names and shapes follow
 * runtime-spec config.md / config-linux.md; the output parses back with
 * oci_config_parse() into an equal struct (tests/unit/test_sandbox_write.c).
 */
#define _GNU_SOURCE
#include "config_write.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "json_gen.h"
#include "utils.h"

static void k_strv(struct jgen *w, const char *k, const struct oci_strv *v)
{
	jg_str(w, k);
	jg_array_open(w);
	for (size_t i = 0; i < v->n; i++)
		jg_str(w, v->v[i]);
	jg_array_close(w);
}

/* Optional string vector: written only when non-empty. */
static void k_strv_opt(struct jgen *w, const char *k, const struct oci_strv *v)
{
	if (v->n)
		k_strv(w, k, v);
}

static void k_kv(struct jgen *w, const char *k, const struct oci_kv_list *l)
{
	if (!l->n)
		return;
	jg_str(w, k);
	jg_map_open(w);
	for (size_t i = 0; i < l->n; i++)
		jg_key_str(w, l->items[i].key, l->items[i].value);
	jg_map_close(w);
}

/* Writes the members of one object of a k_objects array. */
typedef void (*w_object_fn)(struct jgen *w, const void *item);

/* Key k and an array of the n objects at items (each `size` bytes), each
 * written by fn between its braces; nothing when n is 0 unless
 * `always`. */
static void k_objects(struct jgen *w, const char *k, const void *items,
		      size_t n, size_t size, bool always, w_object_fn fn)
{
	if (!n && !always)
		return;
	jg_str(w, k);
	jg_array_open(w);
	for (size_t i = 0; i < n; i++) {
		jg_map_open(w);
		fn(w, (const char *)items + i * size);
		jg_map_close(w);
	}
	jg_array_close(w);
}

static void w_idmap(struct jgen *w, const void *item)
{
	const struct oci_id_mapping *m = item;

	jg_key_u64(w, "containerID", m->container_id);
	jg_key_u64(w, "hostID", m->host_id);
	jg_key_u64(w, "size", m->size);
}

static void k_idmaps(struct jgen *w, const char *k,
		     const struct oci_id_mappings *m)
{
	k_objects(w, k, m->items, m->n, sizeof(*m->items), false, w_idmap);
}

static void w_rlimit(struct jgen *w, const void *item)
{
	const struct oci_rlimit *r = item;

	jg_key_str(w, "type", r->type);
	jg_key_u64(w, "hard", r->hard);
	jg_key_u64(w, "soft", r->soft);
}

static void w_process(struct jgen *w, const struct oci_process *p)
{
	const struct oci_user *u = &p->user;

	jg_str(w, "process");
	jg_map_open(w);
	jg_key_bool(w, "terminal", p->terminal);
	if (p->console_size.set) {
		jg_str(w, "consoleSize");
		jg_map_open(w);
		jg_key_u64(w, "height", p->console_size.height);
		jg_key_u64(w, "width", p->console_size.width);
		jg_map_close(w);
	}
	jg_str(w, "user");
	jg_map_open(w);
	jg_key_u64(w, "uid", u->uid);
	jg_key_u64(w, "gid", u->gid);
	if (u->umask.set)
		jg_key_u64(w, "umask", u->umask.v);
	if (u->n_additional_gids) {
		jg_str(w, "additionalGids");
		jg_array_open(w);
		for (size_t i = 0; i < u->n_additional_gids; i++)
			jg_check(w,
				 yajl_gen_integer(w->g, u->additional_gids[i]));
		jg_array_close(w);
	}
	jg_key_str(w, "username", u->username);
	jg_map_close(w);
	k_strv(w, "args", &p->args);
	k_strv_opt(w, "env", &p->env);
	jg_key_str(w, "cwd", p->cwd ? p->cwd : "/");
	if (p->capabilities.present) {
		jg_str(w, "capabilities");
		jg_map_open(w);
		for (int i = 0; i < OCI_CAP_NSETS; i++)
			if (p->capabilities.set_present[i])
				k_strv(w, oci_cap_set_name((enum oci_cap_set)i),
				       &p->capabilities.names[i]);
		jg_map_close(w);
	}
	k_objects(w, "rlimits", p->rlimits, p->n_rlimits, sizeof(*p->rlimits),
		  false, w_rlimit);
	jg_key_bool(w, "noNewPrivileges", p->no_new_privileges);
	jg_key_str(w, "apparmorProfile", p->apparmor_profile);
	if (p->oom_score_adj.set)
		jg_key_i64(w, "oomScoreAdj", p->oom_score_adj.v);
	jg_key_str(w, "selinuxLabel", p->selinux_label);
	if (p->io_priority.set) {
		jg_str(w, "ioPriority");
		jg_map_open(w);
		jg_key_str(w, "class", p->io_priority.class_name);
		jg_key_i64(w, "priority", p->io_priority.priority);
		jg_map_close(w);
	}
	if (p->scheduler.set) {
		const struct oci_scheduler *sc = &p->scheduler;

		jg_str(w, "scheduler");
		jg_map_open(w);
		jg_key_str(w, "policy", sc->policy_name);
		if (sc->nice.set)
			jg_key_i64(w, "nice", sc->nice.v);
		if (sc->priority.set)
			jg_key_i64(w, "priority", sc->priority.v);
		k_strv_opt(w, "flags", &sc->flags);
		if (sc->runtime.set)
			jg_key_u64(w, "runtime", sc->runtime.v);
		if (sc->deadline.set)
			jg_key_u64(w, "deadline", sc->deadline.v);
		if (sc->period.set)
			jg_key_u64(w, "period", sc->period.v);
		jg_map_close(w);
	}
	if (p->exec_cpu_affinity_initial || p->exec_cpu_affinity_final) {
		jg_str(w, "execCPUAffinity");
		jg_map_open(w);
		jg_key_str(w, "initial", p->exec_cpu_affinity_initial);
		jg_key_str(w, "final", p->exec_cpu_affinity_final);
		jg_map_close(w);
	}
	jg_map_close(w);
}

static void w_mount(struct jgen *w, const void *item)
{
	const struct oci_mount *m = item;

	jg_key_str(w, "destination", m->destination);
	jg_key_str(w, "type", m->type);
	jg_key_str(w, "source", m->source);
	k_strv_opt(w, "options", &m->options);
	k_idmaps(w, "uidMappings", &m->uid_mappings);
	k_idmaps(w, "gidMappings", &m->gid_mappings);
}

static void w_hook(struct jgen *w, const void *item)
{
	const struct oci_hook *h = item;

	jg_key_str(w, "path", h->path);
	k_strv_opt(w, "args", &h->args);
	k_strv_opt(w, "env", &h->env);
	if (h->timeout.set)
		jg_key_i64(w, "timeout", h->timeout.v);
}

static void w_hooks(struct jgen *w, const struct oci_config *cfg)
{
	bool any = false;

	for (int i = 0; i < OCI_HOOK_NSTAGES; i++)
		any |= cfg->hooks[i].n > 0;
	if (!any)
		return;
	jg_str(w, "hooks");
	jg_map_open(w);
	for (int i = 0; i < OCI_HOOK_NSTAGES; i++) {
		const struct oci_hook_list *l = &cfg->hooks[i];

		k_objects(w, oci_hook_stage_name((enum oci_hook_stage)i),
			  l->items, l->n, sizeof(*l->items), false, w_hook);
	}
	jg_map_close(w);
}

static void w_seccomp_arg(struct jgen *w, const void *item)
{
	const struct oci_seccomp_arg *a = item;

	jg_key_u64(w, "index", a->index);
	jg_key_u64(w, "value", a->value);
	jg_key_u64(w, "valueTwo", a->value_two);
	jg_key_str(w, "op", oci_seccomp_op_name(a->op));
}

static void w_syscall(struct jgen *w, const void *item)
{
	const struct oci_seccomp_syscall *sy = item;

	k_strv(w, "names", &sy->names);
	jg_key_str(w, "action", oci_seccomp_action_name(sy->action));
	if (sy->errno_ret.set)
		jg_key_u64(w, "errnoRet", sy->errno_ret.v);
	k_objects(w, "args", sy->args, sy->n_args, sizeof(*sy->args), false,
		  w_seccomp_arg);
}

static void w_seccomp(struct jgen *w, const struct oci_seccomp *sc)
{
	jg_str(w, "seccomp");
	jg_map_open(w);
	jg_key_str(w, "defaultAction",
		   oci_seccomp_action_name(sc->default_action));
	if (sc->default_errno_ret.set)
		jg_key_u64(w, "defaultErrnoRet", sc->default_errno_ret.v);
	k_strv_opt(w, "architectures", &sc->architectures);
	k_strv_opt(w, "flags", &sc->flags);
	jg_key_str(w, "listenerPath", sc->listener_path);
	jg_key_str(w, "listenerMetadata", sc->listener_metadata);
	k_objects(w, "syscalls", sc->syscalls, sc->n_syscalls,
		  sizeof(*sc->syscalls), true, w_syscall);
	jg_map_close(w);
}

static void w_device(struct jgen *w, const void *item)
{
	const struct oci_device *d = item;
	char type[2] = { d->type, '\0' };

	jg_key_str(w, "path", d->path);
	jg_key_str(w, "type", type);
	if (d->type != 'p') {
		jg_key_i64(w, "major", d->major);
		jg_key_i64(w, "minor", d->minor);
	}
	if (d->file_mode.set)
		jg_key_u64(w, "fileMode", d->file_mode.v);
	if (d->uid.set)
		jg_key_u64(w, "uid", d->uid.v);
	if (d->gid.set)
		jg_key_u64(w, "gid", d->gid.v);
}

static void w_namespace(struct jgen *w, const void *item)
{
	const struct oci_namespace *ns = item;

	jg_key_str(w, "type", oci_ns_type_name(ns->type));
	jg_key_str(w, "path", ns->path);
}

static void w_linux(struct jgen *w, const struct oci_linux *l)
{
	jg_str(w, "linux");
	jg_map_open(w);
	k_idmaps(w, "uidMappings", &l->uid_mappings);
	k_idmaps(w, "gidMappings", &l->gid_mappings);
	k_objects(w, "namespaces", l->namespaces, l->n_namespaces,
		  sizeof(*l->namespaces), true, w_namespace);
	k_objects(w, "devices", l->devices, l->n_devices, sizeof(*l->devices),
		  false, w_device);
	jg_key_str(w, "cgroupsPath", l->cgroups_path);
	jg_key_str(w, "rootfsPropagation", l->rootfs_propagation);
	if (l->seccomp)
		w_seccomp(w, l->seccomp);
	k_kv(w, "sysctl", &l->sysctl);
	k_strv_opt(w, "maskedPaths", &l->masked_paths);
	k_strv_opt(w, "readonlyPaths", &l->readonly_paths);
	jg_key_str(w, "mountLabel", l->mount_label);
	if (l->personality.set) {
		jg_str(w, "personality");
		jg_map_open(w);
		jg_key_str(w, "domain", l->personality.domain);
		k_strv_opt(w, "flags", &l->personality.flags);
		jg_map_close(w);
	}
	jg_map_close(w);
}

/* What the writer cannot render: refused, never dropped. */
static int check_supported(const struct oci_config *cfg, struct ar_error *err)
{
	const struct oci_linux *l = &cfg->linux_;
	const char *what = NULL;

	if (l->resources.present)
		what = "linux.resources";
	else if (l->time_offset_boottime.set || l->time_offset_monotonic.set)
		what = "linux.timeOffsets";
	else if (l->intel_rdt_present)
		what = "linux.intelRdt";
	if (what)
		return ar_error_set_plain(
			err, ENOTSUP,
			"write config.json: %s is not supported by the config writer",
			what);
	if (!cfg->process.present || !cfg->process.args.n)
		return ar_error_set_plain(
			err, EINVAL,
			"write config.json: process.args is empty");
	return 0;
}

int oci_config_to_json(const struct oci_config *cfg, char **out, size_t *len,
		       struct ar_error *err)
{
	_cleanup_jgen_ struct jgen w = { 0 };

	if (check_supported(cfg, err) < 0 || jg_init(&w, err) < 0)
		return -1;
	jg_map_open(&w);
	jg_key_str(&w, "ociVersion",
		   cfg->oci_version ? cfg->oci_version : "1.2.0");
	w_process(&w, &cfg->process);
	if (cfg->root.present || cfg->root.path) {
		jg_str(&w, "root");
		jg_map_open(&w);
		jg_key_str(&w, "path", cfg->root.path);
		jg_key_bool(&w, "readonly", cfg->root.readonly);
		jg_map_close(&w);
	}
	jg_key_str(&w, "hostname", cfg->hostname);
	jg_key_str(&w, "domainname", cfg->domainname);
	k_objects(&w, "mounts", cfg->mounts, cfg->n_mounts,
		  sizeof(*cfg->mounts), true, w_mount);
	w_hooks(&w, cfg);
	k_kv(&w, "annotations", &cfg->annotations);
	w_linux(&w, &cfg->linux_);
	jg_map_close(&w);
	return jg_finish(&w, "write config.json", out, len, err);
}

int oci_config_write_file(const struct oci_config *cfg, const char *dir,
			  struct ar_error *err)
{
	_cleanup_free_ char *json = NULL;
	_cleanup_close_ int dfd = -1;
	size_t len = 0;

	if (oci_config_to_json(cfg, &json, &len, err) < 0)
		return -1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ar_error_set(err, errno, "open bundle directory `%s`",
				    dir);
	if (ar_write_file_atomic_at(dfd, "config.json", json, len, 0644, err) <
	    0)
		return ar_error_wrap(err, "%s", dir);
	return 0;
}
