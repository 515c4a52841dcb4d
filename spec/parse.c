/* SPDX-License-Identifier: GPL-2.0-or-later */
/* config.json: the top level (ociVersion, root, mounts, hooks,
 * annotations, hostname) and file loading; the parts are parsed by
 * spec/parse_*.c. */
#define _GNU_SOURCE
#include "oci_config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "parse_parts.h"
#include "utils.h"

/* ---- root, mounts ---- */

static int parse_root(const struct jt_ctx *c, const struct jt_node *n,
		      const struct jt_path *p, struct oci_root *out)
{
	out->present = true;
	if (jt_member_string_req(c, n, p, "path", &out->path) < 0 ||
	    jt_member_bool(c, n, p, "readonly", &out->readonly) < 0)
		return -1;
	return 0;
}

static int parse_mount(const struct jt_ctx *c, const struct jt_node *n,
		       const struct jt_path *p, void *items, size_t i,
		       void *arg)
{
	struct oci_mount *m = (struct oci_mount *)items + i;

	(void)arg;
	if (jt_as_object(c, n, p) < 0 ||
	    jt_member_string_req(c, n, p, "destination", &m->destination) < 0 ||
	    jt_member_string(c, n, p, "type", &m->type) < 0 ||
	    jt_member_string(c, n, p, "source", &m->source) < 0 ||
	    jt_member_strv(c, n, p, "options", &m->options) < 0 ||
	    oci_parse_id_mappings(c, n, p, "uidMappings", &m->uid_mappings) <
		    0 ||
	    oci_parse_id_mappings(c, n, p, "gidMappings", &m->gid_mappings) < 0)
		return -1;
	return 0;
}

/* ---- hooks ---- */

static const char *const hook_stage_names[OCI_HOOK_NSTAGES] = {
	[OCI_HOOK_PRESTART] = "prestart",
	[OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
	[OCI_HOOK_CREATE_CONTAINER] = "createContainer",
	[OCI_HOOK_START_CONTAINER] = "startContainer",
	[OCI_HOOK_POSTSTART] = "poststart",
	[OCI_HOOK_POSTSTOP] = "poststop",
};

const char *oci_hook_stage_name(enum oci_hook_stage s)
{
	return (unsigned)s < OCI_HOOK_NSTAGES ? hook_stage_names[s] : "unknown";
}

static int parse_hook(const struct jt_ctx *c, const struct jt_node *n,
		      const struct jt_path *p, void *items, size_t i, void *arg)
{
	struct oci_hook *h = (struct oci_hook *)items + i;

	(void)arg;
	if (jt_as_object(c, n, p) < 0 ||
	    jt_member_string_req(c, n, p, "path", &h->path) < 0 ||
	    jt_member_strv(c, n, p, "args", &h->args) < 0 ||
	    jt_member_strv(c, n, p, "env", &h->env) < 0 ||
	    jt_member_opt_i32(c, n, p, "timeout", &h->timeout) < 0)
		return -1;
	if (h->path[0] != '/') {
		char tmp[JT_SHORT_MAX];

		return jt_fail(c, JT_KEY(p, "path"),
			       "must be an absolute path, got \"%s\"",
			       jt_short(h->path, tmp, sizeof(tmp)));
	}
	if (h->timeout.set && h->timeout.v < 1)
		return jt_fail(c, JT_KEY(p, "timeout"),
			       "timeout must be at least 1 second, got %d",
			       (int)h->timeout.v);
	return 0;
}

static int parse_hooks(const struct jt_ctx *c, const struct jt_node *n,
		       const struct jt_path *p, struct oci_config *cfg)
{
	for (int s = 0; s < OCI_HOOK_NSTAGES; s++) {
		struct oci_hook_list *l = &cfg->hooks[s];

		if (jt_member_list(c, n, p, hook_stage_names[s],
				   sizeof(*l->items), parse_hook, NULL,
				   &l->items, &l->n) < 0)
			return -1;
	}
	return 0;
}

/* ---- the document ---- */

static int parse_document(const struct jt_ctx *c, const struct jt_node *doc,
			  struct oci_config *cfg)
{
	const struct jt_node *n;

	if (jt_as_object(c, doc, NULL) < 0)
		return -1;
	if (jt_member_string_req(c, doc, NULL, "ociVersion",
				 &cfg->oci_version) < 0 ||
	    jt_member_string(c, doc, NULL, "hostname", &cfg->hostname) < 0 ||
	    jt_member_string(c, doc, NULL, "domainname", &cfg->domainname) <
		    0 ||
	    jt_member_kv(c, doc, NULL, "annotations", &cfg->annotations) < 0)
		return -1;

	if (jt_member_object(c, doc, NULL, "root", &n) < 0 ||
	    (n && parse_root(c, n, JT_KEY(NULL, "root"), &cfg->root) < 0))
		return -1;
	if (jt_member_list(c, doc, NULL, "mounts", sizeof(*cfg->mounts),
			   parse_mount, NULL, &cfg->mounts, &cfg->n_mounts) < 0)
		return -1;
	if (jt_member_object(c, doc, NULL, "hooks", &n) < 0 ||
	    (n && parse_hooks(c, n, JT_KEY(NULL, "hooks"), cfg) < 0))
		return -1;
	if (jt_member_object(c, doc, NULL, "process", &n) < 0 ||
	    (n && oci_parse_process(c, n, JT_KEY(NULL, "process"),
				    &cfg->process) < 0))
		return -1;
	if (jt_member_object(c, doc, NULL, "linux", &n) < 0 ||
	    (n &&
	     oci_parse_linux(c, n, JT_KEY(NULL, "linux"), &cfg->linux_) < 0))
		return -1;
	return 0;
}

struct oci_config *oci_config_new(void)
{
	return ar_xcalloc(1, sizeof(struct oci_config));
}

void oci_config_free(struct oci_config *cfg)
{
	if (!cfg)
		return;
	oci_arena_free(&cfg->arena);
	free(cfg);
}

typedef int (*doc_parser)(const struct jt_ctx *c, const struct jt_node *doc,
			  struct oci_config *cfg);

static int parse_with(doc_parser fn, const char *json, size_t len,
		      const char *filename, struct oci_config **out,
		      struct ar_error *err)
{
	_cleanup_config_ struct oci_config *cfg = oci_config_new();
	struct jt_node *doc;
	struct jt_ctx c;

	if (!filename)
		filename = "config.json";
	cfg->filename = oci_arena_strdup(&cfg->arena, filename);
	c = (struct jt_ctx){ &cfg->arena, cfg->filename, err };
	if (jt_parse(&cfg->arena, json, len, cfg->filename, &doc, err) < 0)
		return -1;
	if (fn(&c, doc, cfg) < 0)
		return -1;
	*out = ar_steal_ptr(&cfg);
	return 0;
}

int oci_config_parse(const char *json, size_t len, const char *filename,
		     struct oci_config **out, struct ar_error *err)
{
	return parse_with(parse_document, json, len, filename, out, err);
}

static int parse_process_document(const struct jt_ctx *c,
				  const struct jt_node *doc,
				  struct oci_config *cfg)
{
	if (jt_as_object(c, doc, NULL) < 0)
		return -1;
	return oci_parse_process(c, doc, NULL, &cfg->process);
}

static int parse_mounts_document(const struct jt_ctx *c,
				 const struct jt_node *doc,
				 struct oci_config *cfg)
{
	if (jt_as_array(c, doc, NULL) < 0)
		return -1;
	return jt_list(c, doc, NULL, sizeof(*cfg->mounts), parse_mount, NULL,
		       &cfg->mounts, &cfg->n_mounts);
}

int oci_mounts_parse(const char *json, size_t len, const char *filename,
		     struct oci_config **out_cfg, struct ar_error *err)
{
	return parse_with(parse_mounts_document, json, len,
			  filename ? filename : "mounts.json", out_cfg, err);
}

int oci_process_parse(const char *json, size_t len, const char *filename,
		      struct oci_config **out_cfg, struct ar_error *err)
{
	return parse_with(parse_process_document, json, len,
			  filename ? filename : "process.json", out_cfg, err);
}

int oci_config_load_file(const char *path, struct oci_config **out,
			 struct ar_error *err)
{
	_cleanup_free_ char *file = NULL;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len;

	if (stat(path, &st) < 0)
		return ar_error_set(err, errno, "stat `%s`", path);
	if (S_ISDIR(st.st_mode))
		file = ar_xasprintf("%s/config.json", path);
	else
		file = ar_xstrdup(path);
	/* a FIFO or device would block or never end */
	if (stat(file, &st) < 0)
		return ar_error_set(err, errno, "stat `%s`", file);
	if (!S_ISREG(st.st_mode))
		return ar_error_set_plain(err, EINVAL, "%s: not a regular file",
					  file);
	if (ar_read_file_at(AT_FDCWD, file, OCI_CONFIG_MAX_FILE_SIZE, &buf,
			    &len, err) < 0)
		return -1;
	return oci_config_parse(buf, len, file, out, err);
}

/* ---- lookups ---- */

const struct oci_namespace *oci_config_find_ns(const struct oci_config *cfg,
					       enum oci_ns_type t)
{
	for (size_t i = 0; i < cfg->linux_.n_namespaces; i++)
		if (cfg->linux_.namespaces[i].type == t)
			return &cfg->linux_.namespaces[i];
	return NULL;
}

bool oci_strv_has(const struct oci_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
			return true;
	return false;
}

const char *oci_config_annotation(const struct oci_config *cfg, const char *key)
{
	const char *v = NULL;

	/* the last one wins, like a JSON object with a repeated key */
	for (size_t i = 0; i < cfg->annotations.n; i++)
		if (strcmp(cfg->annotations.items[i].key, key) == 0)
			v = cfg->annotations.items[i].value;
	return v;
}

bool oci_config_annotation_on(const struct oci_config *cfg, const char *key)
{
	const char *v = oci_config_annotation(cfg, key);

	return v && strcmp(v, "0") != 0;
}
