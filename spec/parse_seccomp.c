/* SPDX-License-Identifier: GPL-2.0-or-later */
/* config.json: linux.seccomp. Actions and operators become enums;
 * architectures and flags stay strings (libseccomp resolves them). */
#include <string.h>

#include "oci_config.h"
#include "parse_parts.h"

static const struct oci_name_value seccomp_actions[] = {
	{ "SCMP_ACT_KILL", OCI_SCMP_ACT_KILL },
	{ "SCMP_ACT_KILL_PROCESS", OCI_SCMP_ACT_KILL_PROCESS },
	{ "SCMP_ACT_KILL_THREAD", OCI_SCMP_ACT_KILL_THREAD },
	{ "SCMP_ACT_TRAP", OCI_SCMP_ACT_TRAP },
	{ "SCMP_ACT_ERRNO", OCI_SCMP_ACT_ERRNO },
	{ "SCMP_ACT_TRACE", OCI_SCMP_ACT_TRACE },
	{ "SCMP_ACT_ALLOW", OCI_SCMP_ACT_ALLOW },
	{ "SCMP_ACT_LOG", OCI_SCMP_ACT_LOG },
	{ "SCMP_ACT_NOTIFY", OCI_SCMP_ACT_NOTIFY },
	{ NULL, 0 },
};

static const struct oci_name_value seccomp_ops[] = {
	{ "SCMP_CMP_NE", OCI_SCMP_CMP_NE },
	{ "SCMP_CMP_LT", OCI_SCMP_CMP_LT },
	{ "SCMP_CMP_LE", OCI_SCMP_CMP_LE },
	{ "SCMP_CMP_EQ", OCI_SCMP_CMP_EQ },
	{ "SCMP_CMP_GE", OCI_SCMP_CMP_GE },
	{ "SCMP_CMP_GT", OCI_SCMP_CMP_GT },
	{ "SCMP_CMP_MASKED_EQ", OCI_SCMP_CMP_MASKED_EQ },
	{ NULL, 0 },
};

static const char *name_of(const struct oci_name_value *t, int v)
{
	for (; t->name; t++)
		if (t->value == v)
			return t->name;
	return "unknown";
}

const char *oci_seccomp_action_name(enum oci_seccomp_action a)
{
	return name_of(seccomp_actions, (int)a);
}

const char *oci_seccomp_op_name(enum oci_seccomp_op op)
{
	return name_of(seccomp_ops, (int)op);
}

static int parse_enum(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key,
		      const struct oci_name_value *table, const char *what,
		      int *out)
{
	const struct oci_name_value *nv;
	char tmp[JT_SHORT_MAX], *s;

	if (jt_member_string_req(c, obj, p, key, &s) < 0)
		return -1;
	nv = oci_lookup_name(table, s);
	if (!nv)
		return jt_fail(c, JT_KEY(p, key), "unknown %s \"%s\"", what,
			       jt_short(s, tmp, sizeof(tmp)));
	*out = nv->value;
	return 0;
}

static int parse_arg(const struct jt_ctx *c, const struct jt_node *n,
		     const struct jt_path *ip, void *items, size_t i, void *arg)
{
	struct oci_seccomp_arg *a = (struct oci_seccomp_arg *)items + i;
	struct oci_opt_u64 two = { 0 };
	int op = 0;

	(void)arg;
	if (jt_as_object(c, n, ip) < 0 ||
	    jt_member_u32_req(c, n, ip, "index", &a->index) < 0 ||
	    jt_member_u64_req(c, n, ip, "value", &a->value) < 0 ||
	    jt_member_opt_u64(c, n, ip, "valueTwo", &two) < 0 ||
	    parse_enum(c, n, ip, "op", seccomp_ops, "operator", &op) < 0)
		return -1;
	if (a->index > 5)
		return jt_fail(c, JT_KEY(ip, "index"),
			       "argument index %u is out of range (0 to 5)",
			       a->index);
	a->value_two = two.v;
	a->op = (enum oci_seccomp_op)op;
	return 0;
}

static int parse_syscall(const struct jt_ctx *c, const struct jt_node *n,
			 const struct jt_path *p, void *items, size_t i,
			 void *arg)
{
	struct oci_seccomp_syscall *sc =
		(struct oci_seccomp_syscall *)items + i;
	const struct jt_node *args;
	int action = 0;

	(void)arg;
	if (jt_as_object(c, n, p) < 0)
		return -1;
	if (!jt_get(n, "names"))
		return jt_fail(c, JT_KEY(p, "names"),
			       "missing required property");
	if (jt_member_strv(c, n, p, "names", &sc->names) < 0 ||
	    parse_enum(c, n, p, "action", seccomp_actions, "seccomp action",
		       &action) < 0 ||
	    jt_member_opt_u32(c, n, p, "errnoRet", &sc->errno_ret) < 0 ||
	    jt_member_array(c, n, p, "args", &args) < 0)
		return -1;
	if (sc->names.n == 0)
		return jt_fail(c, JT_KEY(p, "names"), "must not be empty");
	sc->action = (enum oci_seccomp_action)action;
	if (args && jt_list(c, args, JT_KEY(p, "args"), sizeof(*sc->args),
			    parse_arg, NULL, &sc->args, &sc->n_args) < 0)
		return -1;
	return 0;
}

int oci_parse_seccomp(const struct jt_ctx *c, const struct jt_node *n,
		      const struct jt_path *p, struct oci_seccomp *s)
{
	int action = 0;

	if (parse_enum(c, n, p, "defaultAction", seccomp_actions,
		       "seccomp action", &action) < 0 ||
	    jt_member_opt_u32(c, n, p, "defaultErrnoRet",
			      &s->default_errno_ret) < 0 ||
	    jt_member_strv(c, n, p, "architectures", &s->architectures) < 0 ||
	    jt_member_strv(c, n, p, "flags", &s->flags) < 0 ||
	    jt_member_string(c, n, p, "listenerPath", &s->listener_path) < 0 ||
	    jt_member_string(c, n, p, "listenerMetadata",
			     &s->listener_metadata) < 0 ||
	    jt_member_list(c, n, p, "syscalls", sizeof(*s->syscalls),
			   parse_syscall, NULL, &s->syscalls,
			   &s->n_syscalls) < 0)
		return -1;
	s->default_action = (enum oci_seccomp_action)action;
	return 0;
}
