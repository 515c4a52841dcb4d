/* SPDX-License-Identifier: GPL-2.0-or-later */
/* config.json: the "process" object (also the `exec --process` file). */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/capability.h>

#include "oci_config.h"
#include "parse_parts.h"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#define OCI_SCHED_ISO 4 /* reserved by Linux, never implemented */

static int parse_gid(const struct jt_ctx *c, const struct jt_node *n,
		     const struct jt_path *p, void *items, size_t i, void *arg)
{
	(void)arg;
	return jt_as_u32(c, n, p, (uint32_t *)items + i);
}

static int parse_user(const struct jt_ctx *c, const struct jt_node *n,
		      const struct jt_path *p, struct oci_user *u)
{
	if (jt_member_u32_req(c, n, p, "uid", &u->uid) < 0 ||
	    jt_member_u32_req(c, n, p, "gid", &u->gid) < 0 ||
	    jt_member_opt_u32(c, n, p, "umask", &u->umask) < 0 ||
	    jt_member_string(c, n, p, "username", &u->username) < 0 ||
	    jt_member_list(c, n, p, "additionalGids",
			   sizeof(*u->additional_gids), parse_gid, NULL,
			   &u->additional_gids, &u->n_additional_gids) < 0)
		return -1;
	return 0;
}

static const char *const cap_set_names[OCI_CAP_NSETS] = {
	[OCI_CAP_BOUNDING] = "bounding",
	[OCI_CAP_EFFECTIVE] = "effective",
	[OCI_CAP_INHERITABLE] = "inheritable",
	[OCI_CAP_PERMITTED] = "permitted",
	[OCI_CAP_AMBIENT] = "ambient",
};

const char *oci_cap_set_name(enum oci_cap_set s)
{
	return (unsigned)s < OCI_CAP_NSETS ? cap_set_names[s] : "unknown";
}

static int parse_capabilities(const struct jt_ctx *c, const struct jt_node *n,
			      const struct jt_path *p,
			      struct oci_capabilities *caps)
{
	caps->present = true;
	for (int s = 0; s < OCI_CAP_NSETS; s++) {
		const struct jt_path *sp = JT_KEY(p, cap_set_names[s]);
		struct oci_strv *names = &caps->names[s];

		if (!jt_get(n, cap_set_names[s]))
			continue;
		if (jt_member_strv(c, n, p, cap_set_names[s], names) < 0)
			return -1;
		caps->set_present[s] = true;
		for (size_t i = 0; i < names->n; i++) {
			const char *name = names->v[i];
			char tmp[JT_SHORT_MAX];
			cap_value_t v;

			if (strncmp(name, "CAP_", 4) != 0 ||
			    cap_from_name(name, &v) < 0 || v < 0 || v > 63)
				return jt_fail(c, JT_IDX(sp, i),
					       "unknown capability \"%s\"",
					       jt_short(name, tmp,
							sizeof(tmp)));
			caps->mask[s] |= UINT64_C(1) << v;
		}
	}
	return 0;
}

static const struct oci_name_value rlimit_names[] = {
	{ "RLIMIT_AS", RLIMIT_AS },
	{ "RLIMIT_CORE", RLIMIT_CORE },
	{ "RLIMIT_CPU", RLIMIT_CPU },
	{ "RLIMIT_DATA", RLIMIT_DATA },
	{ "RLIMIT_FSIZE", RLIMIT_FSIZE },
	{ "RLIMIT_LOCKS", RLIMIT_LOCKS },
	{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
	{ "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "RLIMIT_NICE", RLIMIT_NICE },
	{ "RLIMIT_NOFILE", RLIMIT_NOFILE },
	{ "RLIMIT_NPROC", RLIMIT_NPROC },
	{ "RLIMIT_RSS", RLIMIT_RSS },
	{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
	{ "RLIMIT_RTTIME", RLIMIT_RTTIME },
	{ "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
	{ "RLIMIT_STACK", RLIMIT_STACK },
	{ NULL, 0 },
};

static int parse_rlimit(const struct jt_ctx *c, const struct jt_node *n,
			const struct jt_path *ip, void *items, size_t i,
			void *arg)
{
	struct oci_rlimit *rlimits = items, *r = &rlimits[i];
	const struct oci_name_value *nv;
	char tmp[JT_SHORT_MAX];

	(void)arg;
	if (jt_as_object(c, n, ip) < 0 ||
	    jt_member_string_req(c, n, ip, "type", &r->type) < 0 ||
	    jt_member_u64_req(c, n, ip, "soft", &r->soft) < 0 ||
	    jt_member_u64_req(c, n, ip, "hard", &r->hard) < 0)
		return -1;
	nv = oci_lookup_name(rlimit_names, r->type);
	if (!nv)
		return jt_fail(c, JT_KEY(ip, "type"),
			       "unknown rlimit type \"%s\"",
			       jt_short(r->type, tmp, sizeof(tmp)));
	r->resource = nv->value;
	for (size_t j = 0; j < i; j++)
		if (rlimits[j].resource == r->resource)
			return jt_fail(c, JT_KEY(ip, "type"),
				       "rlimit %s is set twice", r->type);
	if (r->soft > r->hard)
		return jt_fail(
			c, ip,
			"soft limit %llu is greater than hard limit %llu",
			(unsigned long long)r->soft,
			(unsigned long long)r->hard);
	return 0;
}

static const struct oci_name_value ioprio_classes[] = {
	{ "IOPRIO_CLASS_RT", 1 },
	{ "IOPRIO_CLASS_BE", 2 },
	{ "IOPRIO_CLASS_IDLE", 3 },
	{ NULL, 0 },
};

static int parse_io_priority(const struct jt_ctx *c, const struct jt_node *n,
			     const struct jt_path *p,
			     struct oci_io_priority *io)
{
	const struct oci_name_value *nv;
	struct oci_opt_i32 prio = { 0 };
	char tmp[JT_SHORT_MAX];

	if (jt_member_string_req(c, n, p, "class", &io->class_name) < 0 ||
	    jt_member_opt_i32(c, n, p, "priority", &prio) < 0)
		return -1;
	nv = oci_lookup_name(ioprio_classes, io->class_name);
	if (!nv)
		return jt_fail(c, JT_KEY(p, "class"),
			       "unknown I/O priority class \"%s\"",
			       jt_short(io->class_name, tmp, sizeof(tmp)));
	if (prio.set && (prio.v < 0 || prio.v > 7))
		return jt_fail(c, JT_KEY(p, "priority"),
			       "priority %d is out of range (0 to 7)",
			       (int)prio.v);
	io->set = true;
	io->klass = nv->value;
	io->priority = prio.v;
	return 0;
}

static const struct oci_name_value sched_policies[] = {
	{ "SCHED_OTHER", SCHED_OTHER },
	{ "SCHED_FIFO", SCHED_FIFO },
	{ "SCHED_RR", SCHED_RR },
	{ "SCHED_BATCH", SCHED_BATCH },
	{ "SCHED_ISO", OCI_SCHED_ISO },
	{ "SCHED_IDLE", SCHED_IDLE },
	{ "SCHED_DEADLINE", SCHED_DEADLINE },
	{ NULL, 0 },
};

static const struct oci_name_value sched_flags[] = {
	{ "SCHED_FLAG_RESET_ON_FORK", 0x01 },
	{ "SCHED_FLAG_RECLAIM", 0x02 },
	{ "SCHED_FLAG_DL_OVERRUN", 0x04 },
	{ "SCHED_FLAG_KEEP_POLICY", 0x08 },
	{ "SCHED_FLAG_KEEP_PARAMS", 0x10 },
	{ "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
	{ "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
	{ NULL, 0 },
};

uint64_t oci_sched_flag_value(const char *name)
{
	const struct oci_name_value *nv = oci_lookup_name(sched_flags, name);

	return nv ? (uint64_t)nv->value : 0;
}

static int parse_scheduler(const struct jt_ctx *c, const struct jt_node *n,
			   const struct jt_path *p, struct oci_scheduler *s)
{
	const struct oci_name_value *nv;
	char tmp[JT_SHORT_MAX];

	if (jt_member_string_req(c, n, p, "policy", &s->policy_name) < 0 ||
	    jt_member_opt_i32(c, n, p, "nice", &s->nice) < 0 ||
	    jt_member_opt_i32(c, n, p, "priority", &s->priority) < 0 ||
	    jt_member_strv(c, n, p, "flags", &s->flags) < 0 ||
	    jt_member_opt_u64(c, n, p, "runtime", &s->runtime) < 0 ||
	    jt_member_opt_u64(c, n, p, "deadline", &s->deadline) < 0 ||
	    jt_member_opt_u64(c, n, p, "period", &s->period) < 0)
		return -1;
	nv = oci_lookup_name(sched_policies, s->policy_name);
	if (!nv)
		return jt_fail(c, JT_KEY(p, "policy"),
			       "unknown scheduler policy \"%s\"",
			       jt_short(s->policy_name, tmp, sizeof(tmp)));
	s->policy = nv->value;
	for (size_t i = 0; i < s->flags.n; i++)
		if (!oci_lookup_name(sched_flags, s->flags.v[i]))
			return jt_fail(c, JT_IDX(JT_KEY(p, "flags"), i),
				       "unknown scheduler flag \"%s\"",
				       jt_short(s->flags.v[i], tmp,
						sizeof(tmp)));
	s->set = true;
	return 0;
}

static int check_cpu_list(const struct jt_ctx *c, const struct jt_path *p,
			  const char *s)
{
	char tmp[JT_SHORT_MAX];

	if (s && s[strspn(s, "0123456789, -")] != '\0')
		return jt_fail(c, p, "invalid CPU list \"%s\"",
			       jt_short(s, tmp, sizeof(tmp)));
	return 0;
}

int oci_parse_process(const struct jt_ctx *c, const struct jt_node *n,
		      const struct jt_path *p, struct oci_process *proc)
{
	const struct jt_node *sub;
	char tmp[JT_SHORT_MAX];

	proc->present = true;
	if (jt_member_bool(c, n, p, "terminal", &proc->terminal) < 0 ||
	    jt_member_strv(c, n, p, "args", &proc->args) < 0 ||
	    jt_member_string(c, n, p, "commandLine", &proc->command_line) < 0 ||
	    jt_member_strv(c, n, p, "env", &proc->env) < 0 ||
	    jt_member_string_req(c, n, p, "cwd", &proc->cwd) < 0 ||
	    jt_member_bool(c, n, p, "noNewPrivileges",
			   &proc->no_new_privileges) < 0 ||
	    jt_member_string(c, n, p, "apparmorProfile",
			     &proc->apparmor_profile) < 0 ||
	    jt_member_opt_i32(c, n, p, "oomScoreAdj", &proc->oom_score_adj) <
		    0 ||
	    jt_member_string(c, n, p, "selinuxLabel", &proc->selinux_label) < 0)
		return -1;
	if (proc->cwd[0] != '/')
		return jt_fail(c, JT_KEY(p, "cwd"),
			       "must be an absolute path, got \"%s\"",
			       jt_short(proc->cwd, tmp, sizeof(tmp)));
	if (proc->oom_score_adj.set &&
	    (proc->oom_score_adj.v < -1000 || proc->oom_score_adj.v > 1000))
		return jt_fail(c, JT_KEY(p, "oomScoreAdj"),
			       "%d is out of range (-1000 to 1000)",
			       (int)proc->oom_score_adj.v);

	if (jt_member_object(c, n, p, "consoleSize", &sub) < 0)
		return -1;
	if (sub) {
		const struct jt_path *sp = JT_KEY(p, "consoleSize");

		if (jt_member_u32_req(c, sub, sp, "height",
				      &proc->console_size.height) < 0 ||
		    jt_member_u32_req(c, sub, sp, "width",
				      &proc->console_size.width) < 0)
			return -1;
		proc->console_size.set = true;
	}
	if (jt_member_object(c, n, p, "user", &sub) < 0 ||
	    (sub && parse_user(c, sub, JT_KEY(p, "user"), &proc->user) < 0))
		return -1;
	if (jt_member_object(c, n, p, "capabilities", &sub) < 0 ||
	    (sub && parse_capabilities(c, sub, JT_KEY(p, "capabilities"),
				       &proc->capabilities) < 0))
		return -1;
	if (jt_member_list(c, n, p, "rlimits", sizeof(*proc->rlimits),
			   parse_rlimit, NULL, &proc->rlimits,
			   &proc->n_rlimits) < 0)
		return -1;
	if (jt_member_object(c, n, p, "ioPriority", &sub) < 0 ||
	    (sub && parse_io_priority(c, sub, JT_KEY(p, "ioPriority"),
				      &proc->io_priority) < 0))
		return -1;
	if (jt_member_object(c, n, p, "scheduler", &sub) < 0 ||
	    (sub && parse_scheduler(c, sub, JT_KEY(p, "scheduler"),
				    &proc->scheduler) < 0))
		return -1;
	if (jt_member_object(c, n, p, "execCPUAffinity", &sub) < 0)
		return -1;
	if (sub) {
		const struct jt_path *ap = JT_KEY(p, "execCPUAffinity");

		if (jt_member_string(c, sub, ap, "initial",
				     &proc->exec_cpu_affinity_initial) < 0 ||
		    jt_member_string(c, sub, ap, "final",
				     &proc->exec_cpu_affinity_final) < 0 ||
		    check_cpu_list(c, JT_KEY(ap, "initial"),
				   proc->exec_cpu_affinity_initial) < 0 ||
		    check_cpu_list(c, JT_KEY(ap, "final"),
				   proc->exec_cpu_affinity_final) < 0)
			return -1;
	}
	return 0;
}
