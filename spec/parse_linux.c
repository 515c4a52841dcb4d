/* SPDX-License-Identifier: GPL-2.0-or-later */
/* config.json: the "linux" object, except resources and seccomp which
 * have files of their own. */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>

#include "oci_config.h"
#include "parse_parts.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

static const struct {
	const char *name;
	int clone_flag;
} ns_types[OCI_NS_NTYPES] = {
	[OCI_NS_PID] = { "pid", CLONE_NEWPID },
	[OCI_NS_NETWORK] = { "network", CLONE_NEWNET },
	[OCI_NS_MOUNT] = { "mount", CLONE_NEWNS },
	[OCI_NS_IPC] = { "ipc", CLONE_NEWIPC },
	[OCI_NS_UTS] = { "uts", CLONE_NEWUTS },
	[OCI_NS_USER] = { "user", CLONE_NEWUSER },
	[OCI_NS_CGROUP] = { "cgroup", CLONE_NEWCGROUP },
	[OCI_NS_TIME] = { "time", CLONE_NEWTIME },
};

const char *oci_ns_type_name(enum oci_ns_type t)
{
	return (unsigned)t < OCI_NS_NTYPES ? ns_types[t].name : "unknown";
}

/* arg: bool seen[OCI_NS_NTYPES], the types of the items before. */
static int parse_namespace(const struct jt_ctx *c, const struct jt_node *n,
			   const struct jt_path *ip, void *items, size_t i,
			   void *arg)
{
	struct oci_namespace *ns = (struct oci_namespace *)items + i;
	bool *seen = arg;
	char tmp[JT_SHORT_MAX], *type;
	int t;

	if (jt_as_object(c, n, ip) < 0 ||
	    jt_member_string_req(c, n, ip, "type", &type) < 0 ||
	    jt_member_string(c, n, ip, "path", &ns->path) < 0)
		return -1;
	for (t = 0; t < OCI_NS_NTYPES; t++)
		if (strcmp(ns_types[t].name, type) == 0)
			break;
	if (t == OCI_NS_NTYPES)
		return jt_fail(c, JT_KEY(ip, "type"),
			       "unknown namespace type \"%s\"",
			       jt_short(type, tmp, sizeof(tmp)));
	if (seen[t])
		return jt_fail(c, JT_KEY(ip, "type"),
			       "duplicate namespace type \"%s\"", type);
	seen[t] = true;
	ns->type = (enum oci_ns_type)t;
	ns->clone_flag = ns_types[t].clone_flag;
	return 0;
}

static int parse_device(const struct jt_ctx *c, const struct jt_node *n,
			const struct jt_path *ip, void *items, size_t i,
			void *arg)
{
	struct oci_device *d = (struct oci_device *)items + i;
	char tmp[JT_SHORT_MAX], *type;

	(void)arg;
	if (jt_as_object(c, n, ip) < 0 ||
	    jt_member_string_req(c, n, ip, "type", &type) < 0 ||
	    jt_member_string_req(c, n, ip, "path", &d->path) < 0 ||
	    jt_member_opt_u32(c, n, ip, "fileMode", &d->file_mode) < 0 ||
	    jt_member_opt_u32(c, n, ip, "uid", &d->uid) < 0 ||
	    jt_member_opt_u32(c, n, ip, "gid", &d->gid) < 0)
		return -1;
	if (strlen(type) != 1 || !strchr("cbup", type[0]))
		return jt_fail(c, JT_KEY(ip, "type"),
			       "unknown device type \"%s\" (c, b, u or p)",
			       jt_short(type, tmp, sizeof(tmp)));
	d->type = type[0];
	if (d->type != 'p' &&
	    (jt_member_i64_req(c, n, ip, "major", &d->major) < 0 ||
	     jt_member_i64_req(c, n, ip, "minor", &d->minor) < 0))
		return -1;
	return 0;
}

static int parse_personality(const struct jt_ctx *c, const struct jt_node *n,
			     const struct jt_path *p, struct oci_personality *o)
{
	char tmp[JT_SHORT_MAX];

	if (jt_member_string(c, n, p, "domain", &o->domain) < 0 ||
	    jt_member_strv(c, n, p, "flags", &o->flags) < 0)
		return -1;
	if (o->domain && strcmp(o->domain, "LINUX") != 0 &&
	    strcmp(o->domain, "LINUX32") != 0)
		return jt_fail(
			c, JT_KEY(p, "domain"),
			"unknown personality domain \"%s\" (LINUX or LINUX32)",
			jt_short(o->domain, tmp, sizeof(tmp)));
	o->set = true;
	return 0;
}

static int parse_time_offset(const struct jt_ctx *c, const struct jt_node *obj,
			     const struct jt_path *p, const char *key,
			     struct oci_time_offset *o)
{
	const struct jt_path *kp = JT_KEY(p, key);
	struct oci_opt_i64 secs = { 0 };
	struct oci_opt_u32 ns = { 0 };
	const struct jt_node *n;

	if (jt_member_object(c, obj, p, key, &n) < 0)
		return -1;
	if (!n)
		return 0;
	if (jt_member_opt_i64(c, n, kp, "secs", &secs) < 0 ||
	    jt_member_opt_u32_max(c, n, kp, "nanosecs", 999999999, &ns) < 0)
		return -1;
	o->set = true;
	o->secs = secs.v;
	o->nanosecs = ns.v;
	return 0;
}

/* The spec lists the first four; runc and crun also take the recursive
 * spellings, and some generators write "" for "not set". */
static const char *const propagations[] = {
	"private", "shared", "slave",	    "unbindable", "rprivate",
	"rshared", "rslave", "runbindable", NULL,
};

static int check_propagation(const struct jt_ctx *c, const struct jt_path *p,
			     struct oci_linux *l)
{
	char tmp[JT_SHORT_MAX];

	if (!l->rootfs_propagation)
		return 0;
	if (!l->rootfs_propagation[0]) {
		l->rootfs_propagation = NULL;
		return 0;
	}
	for (size_t i = 0; propagations[i]; i++)
		if (strcmp(propagations[i], l->rootfs_propagation) == 0)
			return 0;
	return jt_fail(
		c, JT_KEY(p, "rootfsPropagation"),
		"unknown propagation \"%s\" (private, shared, slave or unbindable)",
		jt_short(l->rootfs_propagation, tmp, sizeof(tmp)));
}

int oci_parse_linux(const struct jt_ctx *c, const struct jt_node *n,
		    const struct jt_path *p, struct oci_linux *l)
{
	bool ns_seen[OCI_NS_NTYPES] = { false };
	const struct jt_node *sub;

	l->present = true;
	if (jt_member_string(c, n, p, "cgroupsPath", &l->cgroups_path) < 0 ||
	    jt_member_string(c, n, p, "rootfsPropagation",
			     &l->rootfs_propagation) < 0 ||
	    check_propagation(c, p, l) < 0 ||
	    jt_member_kv(c, n, p, "sysctl", &l->sysctl) < 0 ||
	    jt_member_strv(c, n, p, "maskedPaths", &l->masked_paths) < 0 ||
	    jt_member_strv(c, n, p, "readonlyPaths", &l->readonly_paths) < 0 ||
	    jt_member_string(c, n, p, "mountLabel", &l->mount_label) < 0 ||
	    oci_parse_id_mappings(c, n, p, "uidMappings", &l->uid_mappings) <
		    0 ||
	    oci_parse_id_mappings(c, n, p, "gidMappings", &l->gid_mappings) < 0)
		return -1;

	if (jt_member_list(c, n, p, "namespaces", sizeof(*l->namespaces),
			   parse_namespace, ns_seen, &l->namespaces,
			   &l->n_namespaces) < 0 ||
	    jt_member_list(c, n, p, "devices", sizeof(*l->devices),
			   parse_device, NULL, &l->devices, &l->n_devices) < 0)
		return -1;
	if (jt_member_object(c, n, p, "resources", &sub) < 0 ||
	    (sub && oci_parse_resources(c, sub, JT_KEY(p, "resources"),
					&l->resources) < 0))
		return -1;
	if (jt_member_object(c, n, p, "seccomp", &sub) < 0)
		return -1;
	if (sub) {
		l->seccomp = oci_arena_alloc(c->a, sizeof(*l->seccomp));
		if (oci_parse_seccomp(c, sub, JT_KEY(p, "seccomp"),
				      l->seccomp) < 0)
			return -1;
	}
	if (jt_member_object(c, n, p, "personality", &sub) < 0 ||
	    (sub && parse_personality(c, sub, JT_KEY(p, "personality"),
				      &l->personality) < 0))
		return -1;
	if (jt_member_object(c, n, p, "timeOffsets", &sub) < 0)
		return -1;
	if (sub) {
		const struct jt_path *tp = JT_KEY(p, "timeOffsets");

		if (parse_time_offset(c, sub, tp, "boottime",
				      &l->time_offset_boottime) < 0 ||
		    parse_time_offset(c, sub, tp, "monotonic",
				      &l->time_offset_monotonic) < 0)
			return -1;
	}
	if (jt_member_object(c, n, p, "intelRdt", &sub) < 0)
		return -1;
	l->intel_rdt_present = sub != NULL;
	return 0;
}
