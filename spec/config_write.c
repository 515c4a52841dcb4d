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

#include <yajl/yajl_gen.h>

#include "error.h"
#include "utils.h"

/* yajl_gen with a sticky failure flag, so the emitters stay linear. */
struct w {
	yajl_gen g;
	bool failed;
};

static void ck(struct w *w, yajl_gen_status st)
{
	if (st != yajl_gen_status_ok)
		w->failed = true;
}

static void s(struct w *w, const char *v)
{
	ck(w, yajl_gen_string(w->g, (const unsigned char *)v, strlen(v)));
}

static void k_s(struct w *w, const char *k, const char *v)
{
	if (!v)
		return;
	s(w, k);
	s(w, v);
}

static void k_u(struct w *w, const char *k, unsigned long long v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%llu", v);

	s(w, k);
	ck(w, yajl_gen_number(w->g, buf, (size_t)n));
}

static void k_i(struct w *w, const char *k, long long v)
{
	s(w, k);
	ck(w, yajl_gen_integer(w->g, v));
}

static void k_b(struct w *w, const char *k, bool v)
{
	s(w, k);
	ck(w, yajl_gen_bool(w->g, v));
}

static void mo(struct w *w)
{
	ck(w, yajl_gen_map_open(w->g));
}

static void mc(struct w *w)
{
	ck(w, yajl_gen_map_close(w->g));
}

static void ao(struct w *w)
{
	ck(w, yajl_gen_array_open(w->g));
}

static void ac(struct w *w)
{
	ck(w, yajl_gen_array_close(w->g));
}

static void k_strv(struct w *w, const char *k, const struct oci_strv *v)
{
	s(w, k);
	ao(w);
	for (size_t i = 0; i < v->n; i++)
		s(w, v->v[i]);
	ac(w);
}

/* Optional string vector: written only when non-empty. */
static void k_strv_opt(struct w *w, const char *k, const struct oci_strv *v)
{
	if (v->n)
		k_strv(w, k, v);
}

static void k_kv(struct w *w, const char *k, const struct oci_kv_list *l)
{
	if (!l->n)
		return;
	s(w, k);
	mo(w);
	for (size_t i = 0; i < l->n; i++)
		k_s(w, l->items[i].key, l->items[i].value);
	mc(w);
}

static void k_idmaps(struct w *w, const char *k,
		     const struct oci_id_mappings *m)
{
	if (!m->n)
		return;
	s(w, k);
	ao(w);
	for (size_t i = 0; i < m->n; i++) {
		mo(w);
		k_u(w, "containerID", m->items[i].container_id);
		k_u(w, "hostID", m->items[i].host_id);
		k_u(w, "size", m->items[i].size);
		mc(w);
	}
	ac(w);
}

static const char *const cap_set_keys[OCI_CAP_NSETS] = {
	[OCI_CAP_BOUNDING] = "bounding",
	[OCI_CAP_EFFECTIVE] = "effective",
	[OCI_CAP_INHERITABLE] = "inheritable",
	[OCI_CAP_PERMITTED] = "permitted",
	[OCI_CAP_AMBIENT] = "ambient",
};

static void w_process(struct w *w, const struct oci_process *p)
{
	const struct oci_user *u = &p->user;

	s(w, "process");
	mo(w);
	k_b(w, "terminal", p->terminal);
	if (p->console_size.set) {
		s(w, "consoleSize");
		mo(w);
		k_u(w, "height", p->console_size.height);
		k_u(w, "width", p->console_size.width);
		mc(w);
	}
	s(w, "user");
	mo(w);
	k_u(w, "uid", u->uid);
	k_u(w, "gid", u->gid);
	if (u->umask.set)
		k_u(w, "umask", u->umask.v);
	if (u->n_additional_gids) {
		s(w, "additionalGids");
		ao(w);
		for (size_t i = 0; i < u->n_additional_gids; i++)
			ck(w, yajl_gen_integer(w->g, u->additional_gids[i]));
		ac(w);
	}
	k_s(w, "username", u->username);
	mc(w);
	k_strv(w, "args", &p->args);
	k_strv_opt(w, "env", &p->env);
	k_s(w, "cwd", p->cwd ? p->cwd : "/");
	if (p->capabilities.present) {
		s(w, "capabilities");
		mo(w);
		for (int i = 0; i < OCI_CAP_NSETS; i++)
			if (p->capabilities.set_present[i])
				k_strv(w, cap_set_keys[i],
				       &p->capabilities.names[i]);
		mc(w);
	}
	if (p->n_rlimits) {
		s(w, "rlimits");
		ao(w);
		for (size_t i = 0; i < p->n_rlimits; i++) {
			mo(w);
			k_s(w, "type", p->rlimits[i].type);
			k_u(w, "hard", p->rlimits[i].hard);
			k_u(w, "soft", p->rlimits[i].soft);
			mc(w);
		}
		ac(w);
	}
	k_b(w, "noNewPrivileges", p->no_new_privileges);
	k_s(w, "apparmorProfile", p->apparmor_profile);
	if (p->oom_score_adj.set)
		k_i(w, "oomScoreAdj", p->oom_score_adj.v);
	k_s(w, "selinuxLabel", p->selinux_label);
	if (p->io_priority.set) {
		s(w, "ioPriority");
		mo(w);
		k_s(w, "class", p->io_priority.class_name);
		k_i(w, "priority", p->io_priority.priority);
		mc(w);
	}
	if (p->scheduler.set) {
		const struct oci_scheduler *sc = &p->scheduler;

		s(w, "scheduler");
		mo(w);
		k_s(w, "policy", sc->policy_name);
		if (sc->nice.set)
			k_i(w, "nice", sc->nice.v);
		if (sc->priority.set)
			k_i(w, "priority", sc->priority.v);
		k_strv_opt(w, "flags", &sc->flags);
		if (sc->runtime.set)
			k_u(w, "runtime", sc->runtime.v);
		if (sc->deadline.set)
			k_u(w, "deadline", sc->deadline.v);
		if (sc->period.set)
			k_u(w, "period", sc->period.v);
		mc(w);
	}
	if (p->exec_cpu_affinity_initial || p->exec_cpu_affinity_final) {
		s(w, "execCPUAffinity");
		mo(w);
		k_s(w, "initial", p->exec_cpu_affinity_initial);
		k_s(w, "final", p->exec_cpu_affinity_final);
		mc(w);
	}
	mc(w);
}

static void w_mounts(struct w *w, const struct oci_config *cfg)
{
	s(w, "mounts");
	ao(w);
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct oci_mount *m = &cfg->mounts[i];

		mo(w);
		k_s(w, "destination", m->destination);
		k_s(w, "type", m->type);
		k_s(w, "source", m->source);
		k_strv_opt(w, "options", &m->options);
		k_idmaps(w, "uidMappings", &m->uid_mappings);
		k_idmaps(w, "gidMappings", &m->gid_mappings);
		mc(w);
	}
	ac(w);
}

static void w_hooks(struct w *w, const struct oci_config *cfg)
{
	bool any = false;

	for (int i = 0; i < OCI_HOOK_NSTAGES; i++)
		any |= cfg->hooks[i].n > 0;
	if (!any)
		return;
	s(w, "hooks");
	mo(w);
	for (int i = 0; i < OCI_HOOK_NSTAGES; i++) {
		const struct oci_hook_list *l = &cfg->hooks[i];

		if (!l->n)
			continue;
		s(w, oci_hook_stage_name((enum oci_hook_stage)i));
		ao(w);
		for (size_t j = 0; j < l->n; j++) {
			mo(w);
			k_s(w, "path", l->items[j].path);
			k_strv_opt(w, "args", &l->items[j].args);
			k_strv_opt(w, "env", &l->items[j].env);
			if (l->items[j].timeout.set)
				k_i(w, "timeout", l->items[j].timeout.v);
			mc(w);
		}
		ac(w);
	}
	mc(w);
}

static void w_seccomp(struct w *w, const struct oci_seccomp *sc)
{
	s(w, "seccomp");
	mo(w);
	k_s(w, "defaultAction", oci_seccomp_action_name(sc->default_action));
	if (sc->default_errno_ret.set)
		k_u(w, "defaultErrnoRet", sc->default_errno_ret.v);
	k_strv_opt(w, "architectures", &sc->architectures);
	k_strv_opt(w, "flags", &sc->flags);
	k_s(w, "listenerPath", sc->listener_path);
	k_s(w, "listenerMetadata", sc->listener_metadata);
	s(w, "syscalls");
	ao(w);
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		const struct oci_seccomp_syscall *sy = &sc->syscalls[i];

		mo(w);
		k_strv(w, "names", &sy->names);
		k_s(w, "action", oci_seccomp_action_name(sy->action));
		if (sy->errno_ret.set)
			k_u(w, "errnoRet", sy->errno_ret.v);
		if (sy->n_args) {
			s(w, "args");
			ao(w);
			for (size_t j = 0; j < sy->n_args; j++) {
				mo(w);
				k_u(w, "index", sy->args[j].index);
				k_u(w, "value", sy->args[j].value);
				k_u(w, "valueTwo", sy->args[j].value_two);
				k_s(w, "op",
				    oci_seccomp_op_name(sy->args[j].op));
				mc(w);
			}
			ac(w);
		}
		mc(w);
	}
	ac(w);
	mc(w);
}

static void w_devices(struct w *w, const struct oci_linux *l)
{
	if (!l->n_devices)
		return;
	s(w, "devices");
	ao(w);
	for (size_t i = 0; i < l->n_devices; i++) {
		const struct oci_device *d = &l->devices[i];
		char type[2] = { d->type, '\0' };

		mo(w);
		k_s(w, "path", d->path);
		k_s(w, "type", type);
		if (d->type != 'p') {
			k_i(w, "major", d->major);
			k_i(w, "minor", d->minor);
		}
		if (d->file_mode.set)
			k_u(w, "fileMode", d->file_mode.v);
		if (d->uid.set)
			k_u(w, "uid", d->uid.v);
		if (d->gid.set)
			k_u(w, "gid", d->gid.v);
		mc(w);
	}
	ac(w);
}

static void w_linux(struct w *w, const struct oci_linux *l)
{
	s(w, "linux");
	mo(w);
	k_idmaps(w, "uidMappings", &l->uid_mappings);
	k_idmaps(w, "gidMappings", &l->gid_mappings);
	s(w, "namespaces");
	ao(w);
	for (size_t i = 0; i < l->n_namespaces; i++) {
		mo(w);
		k_s(w, "type", oci_ns_type_name(l->namespaces[i].type));
		k_s(w, "path", l->namespaces[i].path);
		mc(w);
	}
	ac(w);
	w_devices(w, l);
	k_s(w, "cgroupsPath", l->cgroups_path);
	k_s(w, "rootfsPropagation", l->rootfs_propagation);
	if (l->seccomp)
		w_seccomp(w, l->seccomp);
	k_kv(w, "sysctl", &l->sysctl);
	k_strv_opt(w, "maskedPaths", &l->masked_paths);
	k_strv_opt(w, "readonlyPaths", &l->readonly_paths);
	k_s(w, "mountLabel", l->mount_label);
	if (l->personality.set) {
		s(w, "personality");
		mo(w);
		k_s(w, "domain", l->personality.domain);
		k_strv_opt(w, "flags", &l->personality.flags);
		mc(w);
	}
	mc(w);
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

static void yajl_gen_freep(yajl_gen *g)
{
	if (*g)
		yajl_gen_free(*g);
}

int oci_config_to_json(const struct oci_config *cfg, char **out, size_t *len,
		       struct ar_error *err)
{
	_cleanup_(yajl_gen_freep) yajl_gen g = yajl_gen_alloc(NULL);
	struct w w = { .g = g };
	const unsigned char *buf;
	size_t blen;
	char *r;

	if (!g)
		return ar_error_set(err, ENOMEM, "yajl_gen_alloc");
	if (check_supported(cfg, err) < 0)
		return -1;
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "\t");
	yajl_gen_config(g, yajl_gen_escape_solidus, 0);
	yajl_gen_config(g, yajl_gen_validate_utf8, 1);

	mo(&w);
	k_s(&w, "ociVersion", cfg->oci_version ? cfg->oci_version : "1.2.0");
	w_process(&w, &cfg->process);
	if (cfg->root.present || cfg->root.path) {
		s(&w, "root");
		mo(&w);
		k_s(&w, "path", cfg->root.path);
		k_b(&w, "readonly", cfg->root.readonly);
		mc(&w);
	}
	k_s(&w, "hostname", cfg->hostname);
	k_s(&w, "domainname", cfg->domainname);
	w_mounts(&w, cfg);
	w_hooks(&w, cfg);
	k_kv(&w, "annotations", &cfg->annotations);
	w_linux(&w, &cfg->linux_);
	mc(&w);
	if (w.failed || yajl_gen_get_buf(g, &buf, &blen) != yajl_gen_status_ok)
		return ar_error_set_plain(
			err, EINVAL,
			"write config.json: JSON generation failed (invalid UTF-8 in a string?)");
	r = ar_xmalloc(blen + 2);
	memcpy(r, buf, blen);
	if (blen == 0 || r[blen - 1] != '\n')
		r[blen++] = '\n';
	r[blen] = '\0';
	*out = r;
	*len = blen;
	return 0;
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
