/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox as an ordinary OCI config, built from its plan
 * (sandbox_plan.c: who the user is, where the workspace is, which host
 * paths show through), and the host facts the plan starts from.
 * Everything below (mounts, namespaces, seccomp, the lifecycle) is the
 * code every `agentrun run` uses.
 *
 * Identity: a keep-id user namespace maps the user's uid and gid to
 * themselves (one range of size 1: no newuidmap, no /etc/subuid needed).
 * The container process holds the capabilities of its own namespace
 * while it sets up the mounts and loses them at execve: it is not uid 0,
 * it has no ambient capabilities and the config clears every set. Files
 * it creates in the workspace belong to the user on the host; nothing is
 * ever re-owned. Host files of other owners show as nobody/nogroup.
 * Run by root, the same map keeps uid 0 (0 -> 0) and the empty capability
 * sets leave it root in name only: no CAP_DAC_OVERRIDE, no CAP_SYS_ADMIN,
 * in a namespace that owns nothing of the host.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landlock.h"
#include "log.h"
#include "net_loopback.h"
#include "profile.h"
#include "sandbox_config.h"
#include "sandbox_mounts.h"
#include "sandbox_nested.h"
#include "utils.h"

/* ---- the host ---- */

int ar_sandbox_host_detect(struct ar_sandbox_host *h, struct ar_error *err)
{
	struct passwd *pw;
	struct group *gr;
	const char *home;
	char buf[PATH_MAX];
	extern char **environ;

	memset(h, 0, sizeof(*h));
	h->uid = getuid();
	h->gid = getgid();
	h->environ = environ;
	h->etc = "/etc";
	h->proc = "/proc";
	pw = getpwuid(h->uid);
	h->user = pw ? ar_xstrdup(pw->pw_name) :
		       ar_xasprintf("user%u", (unsigned)h->uid);
	gr = getgrgid(h->gid);
	h->group = gr ? ar_xstrdup(gr->gr_name) : ar_xstrdup(h->user);
	h->shell = ar_xstrdup(
		pw && pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh");
	home = getenv("HOME");
	if (!home || home[0] != '/')
		home = pw ? pw->pw_dir : NULL;
	if (!home)
		return ar_error_set_plain(
			err, ENOENT,
			"sandbox: no home directory for uid %u ($HOME unset, no passwd entry)",
			(unsigned)h->uid);
	h->home = realpath(home, NULL);
	if (!h->home)
		h->home = ar_xstrdup(home); /* a home that does not exist */
	if (!getcwd(buf, sizeof(buf)))
		return ar_error_set(err, errno, "sandbox: current directory");
	h->cwd = ar_xstrdup(buf);
	return 0;
}

void ar_sandbox_host_release(struct ar_sandbox_host *h)
{
	free(h->user);
	free(h->group);
	free(h->home);
	free(h->shell);
	free(h->cwd);
	memset(h, 0, sizeof(*h));
}

static char **strv_dup(struct ar_arena *a, const char *const *v, size_t n)
{
	char **r = oci_arena_calloc(a, n + 1, sizeof(char *));

	for (size_t i = 0; i < n; i++)
		r[i] = oci_arena_strdup(a, v[i]);
	return r;
}

static void strv_set(struct ar_arena *a, struct oci_strv *out,
		     const char *const *v)
{
	size_t n = 0;

	while (v[n])
		n++;
	out->v = strv_dup(a, v, n);
	out->n = n;
}

static void kv_add(struct oci_config *cfg, struct oci_kv **items, size_t *cap,
		   const char *k, const char *v)
{
	struct oci_kv_list *l = &cfg->annotations;

	if (l->n >= *cap) { /* never write past the vector */
		*cap = (l->n + 4) * 2;
		*items = ar_xrealloc(*items, *cap * sizeof(**items));
	}
	(*items)[l->n].key = oci_arena_strdup(&cfg->arena, k);
	(*items)[l->n].value = oci_arena_strdup(&cfg->arena, v);
	l->n++;
	l->items = *items;
}

static void linux_part(struct oci_config *cfg, const struct ar_sandbox_host *h,
		       bool netns)
{
	struct ar_arena *a = &cfg->arena;
	struct oci_linux *l = &cfg->linux_;
	static const enum oci_ns_type types[] = {
		OCI_NS_USER, OCI_NS_MOUNT,  OCI_NS_PID,	    OCI_NS_IPC,
		OCI_NS_UTS,  OCI_NS_CGROUP, OCI_NS_NETWORK,
	};
	/* What the parser derives from the type: the config is handed to
	 * the runtime in memory, not re-read from a file. */
	static const int flags[] = {
		CLONE_NEWUSER, CLONE_NEWNS,	CLONE_NEWPID, CLONE_NEWIPC,
		CLONE_NEWUTS,  CLONE_NEWCGROUP, CLONE_NEWNET,
	};
	size_t n = netns ? AR_ARRAY_SIZE(types) : AR_ARRAY_SIZE(types) - 1;

	l->present = true;
	l->uid_mappings.items =
		oci_arena_calloc(a, 1, sizeof(struct oci_id_mapping));
	l->uid_mappings.items[0] = (struct oci_id_mapping){ h->uid, h->uid, 1 };
	l->uid_mappings.n = 1;
	l->gid_mappings.items =
		oci_arena_calloc(a, 1, sizeof(struct oci_id_mapping));
	l->gid_mappings.items[0] = (struct oci_id_mapping){ h->gid, h->gid, 1 };
	l->gid_mappings.n = 1;
	l->namespaces = oci_arena_calloc(a, n, sizeof(*l->namespaces));
	for (size_t i = 0; i < n; i++) {
		l->namespaces[i].type = types[i];
		l->namespaces[i].clone_flag = flags[i];
	}
	l->n_namespaces = n;
	strv_set(a, &l->masked_paths,
		 SB_OPTS("/proc/acpi", "/proc/asound", "/proc/kcore",
			 "/proc/keys", "/proc/latency_stats",
			 "/proc/timer_list", "/proc/timer_stats",
			 "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
			 "/sys/fs/selinux", "/sys/dev/block",
			 "/sys/devices/virtual/powercap"));
	strv_set(a, &l->readonly_paths,
		 SB_OPTS("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
			 "/proc/sysrq-trigger"));
}

/* The agent's oom_score_adj: SB_AGENT_OOM_SCORE_ADJ, or agentrun's own
 * when that is higher already. */
#define SB_AGENT_OOM_SCORE_ADJ 500

static int agent_oom_score_adj(void)
{
	_cleanup_close_ int fd =
		open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
	char buf[16];
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	long own;

	if (n <= 0)
		return SB_AGENT_OOM_SCORE_ADJ;
	buf[n] = '\0';
	own = strtol(buf, NULL, 10);
	return own > SB_AGENT_OOM_SCORE_ADJ && own <= 1000 ?
		       (int)own :
		       SB_AGENT_OOM_SCORE_ADJ;
}

static void process_part(struct oci_config *cfg,
			 const struct ar_sandbox_opts *o,
			 const struct ar_sandbox_host *h, const char *cwd)
{
	struct oci_process *p = &cfg->process;
	size_t n = 0;

	while (o->argv[n])
		n++;
	p->present = true;
	p->terminal = o->tty < 0 ?
			      isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) :
			      o->tty > 0;
	if (p->terminal) {
		struct winsize ws;

		if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row) {
			p->console_size.set = true;
			p->console_size.height = ws.ws_row;
			p->console_size.width = ws.ws_col;
		}
	}
	p->user.uid = h->uid;
	p->user.gid = h->gid;
	p->args.v = strv_dup(&cfg->arena, (const char *const *)o->argv, n);
	p->args.n = n;
	p->cwd = oci_arena_strdup(&cfg->arena, cwd);
	/* Every capability set present and empty: nothing survives. */
	p->capabilities.present = true;
	for (int i = 0; i < OCI_CAP_NSETS; i++) {
		p->capabilities.set_present[i] = true;
		p->capabilities.names[i].v =
			oci_arena_calloc(&cfg->arena, 1, sizeof(char *));
	}
	p->no_new_privileges = true;
	/* the OOM killer takes the agent before agentrun and its keeper,
	 * which run the end-of-run check (docs/sandbox.md, "A killed
	 * sandbox"): raised, never lowered (an unprivileged process may
	 * raise a score, not lower it) */
	p->oom_score_adj.set = true;
	p->oom_score_adj.v = agent_oom_score_adj();
}

static void mount_copy(struct ar_arena *a, struct oci_mount *to,
		       const struct oci_mount *from)
{
	const struct oci_id_mappings *maps[] = { &from->uid_mappings,
						 &from->gid_mappings };
	struct oci_id_mappings *out[] = { &to->uid_mappings,
					  &to->gid_mappings };

	memset(to, 0, sizeof(*to));
	to->destination = oci_arena_strdup(a, from->destination);
	to->type = from->type ? oci_arena_strdup(a, from->type) : NULL;
	to->source = from->source ? oci_arena_strdup(a, from->source) : NULL;
	to->options.v = strv_dup(a, (const char *const *)from->options.v,
				 from->options.n);
	to->options.n = from->options.n;
	for (size_t k = 0; k < 2; k++) {
		if (!maps[k]->n)
			continue;
		out[k]->items =
			oci_arena_calloc(a, maps[k]->n, sizeof(*out[k]->items));
		memcpy(out[k]->items, maps[k]->items,
		       maps[k]->n * sizeof(*out[k]->items));
		out[k]->n = maps[k]->n;
	}
}

int ar_sandbox_build_config(const struct sb_plan *p, struct oci_config **out,
			    struct ar_error *err)
{
	_cleanup_config_ struct oci_config *cfg = oci_config_new();
	_cleanup_free_ struct oci_kv *ann = NULL;
	const struct ar_sandbox_host *h = p->h;
	size_t ann_cap = 0;

	/* Nothing here is newer than runtime-spec 1.1 (rro, idmapped
	 * mounts); crun 1.8 refuses "1.2.0" (--print-bundle runs there). */
	cfg->oci_version = oci_arena_strdup(&cfg->arena, "1.1.0");
	cfg->hostname = oci_arena_strdup(&cfg->arena, "agentrun-sandbox");
	cfg->root.present = true;
	cfg->root.path = oci_arena_strdup(&cfg->arena, "rootfs");
	cfg->root.readonly = true;

	cfg->mounts = oci_arena_calloc(&cfg->arena, p->n_mounts + 1,
				       sizeof(*cfg->mounts));
	for (size_t i = 0; i < p->n_mounts; i++)
		mount_copy(&cfg->arena, &cfg->mounts[i], &p->mounts[i]);
	cfg->n_mounts = p->n_mounts;
	process_part(cfg, &p->o, h, p->cwd);
	cfg->process.env.v =
		strv_dup(&cfg->arena, (const char *const *)p->env.v, p->env.n);
	cfg->process.env.n = p->env.n;
	linux_part(cfg, h, p->net != AR_SANDBOX_NET_HOST);
	if (!p->seccomp_deferred &&
	    oci_seccomp_default(&cfg->arena, &cfg->linux_.seccomp, err) < 0)
		return ar_error_wrap(err, "sandbox");

	kv_add(cfg, &ann, &ann_cap, "run.agentrun.sandbox", "1");
	kv_add(cfg, &ann, &ann_cap, "run.agentrun.sandbox.workspace",
	       p->workspace);
	kv_add(cfg, &ann, &ann_cap, "run.agentrun.sandbox.net",
	       p->net == AR_SANDBOX_NET_HOST  ? "host" :
	       p->net == AR_SANDBOX_NET_ALLOW ? "allow" :
						"none");
	if (p->net != AR_SANDBOX_NET_HOST)
		kv_add(cfg, &ann, &ann_cap, AR_ANNOTATION_NET_LOOPBACK, "up");
	kv_add(cfg, &ann, &ann_cap, SB_ANNOTATION_PROTECTIONS, p->protections);
	if (p->landlock) {
		/* the record of the rules, for `state`, --print-bundle and a
		 * session's exec: the run itself gets them as data */
		_cleanup_free_ char *text =
			ar_landlock_rules_text(&p->landlock_rules);

		kv_add(cfg, &ann, &ann_cap, AR_ANNOTATION_LANDLOCK, text);
	}
	/* move the annotation vector into the arena */
	{
		struct oci_kv *items = oci_arena_calloc(
			&cfg->arena, cfg->annotations.n, sizeof(*items));

		memcpy(items, ann, cfg->annotations.n * sizeof(*items));
		cfg->annotations.items = items;
	}
	if (p->nested) {
		/* it adds its part to the protections annotation */
		char prot[sizeof(p->protections)];

		memcpy(prot, p->protections, sizeof(prot));
		if (sb_nested_apply(cfg, h, prot, sizeof(prot), err) < 0)
			return -1;
	}
	*out = ar_steal_ptr(&cfg);
	return 0;
}
