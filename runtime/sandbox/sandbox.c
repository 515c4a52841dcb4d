/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox`, end to end: host -> plan (sandbox_plan.c) ->
 * config (sandbox_config.c) -> preflight (the doctor checks the sandbox
 * depends on; the ones that fork a probe only after a failed start) ->
 * ar_container_run(), the path of every `agentrun run`, with the config
 * in memory and a tmpfs root that the container process fills from the
 * plan's entries (sandbox_rootfs.c): nothing is written on the host.
 * With --print-bundle the bundle is written to the user's directory
 * instead, and runs unchanged with `agentrun run` (or another runtime).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config_write.h"
#include "control/control.h"
#include "sandbox_grant.h"
#include "control/control_channel.h"
#include "sandbox_shadow.h"
#include "container.h"
#include "doctor.h"
#include "landlock.h"
#include "log.h"
#include "overlay/overlay.h"
#include "protect/placeholder.h"
#include "profile.h"
#include "protect/protect.h"
#include "protect/run_record.h"
#include "sandbox_audit.h"
#include "sandbox.h"
#include "sandbox_config.h"
#include "sandbox_egress.h"
#include "sandbox_gitconfig.h"
#include "sandbox_keep.h"
#include "sandbox_plan.h"
#include "sandbox_refusal.h"
#include "sandbox_rootfs.h"
#include "sandbox_worktree.h"
#include "session.h"
#include "ui/ui.h"
#include "utils.h"

/* ---- the bundle ---- */

/* --print-bundle DIR where the sandbox can write (the workspace, a --rw
 * directory): its command could rewrite config.json (a mount of the
 * host's / read-write) and the files the plan made there, and the next
 * run of the bundle, by crun or runc as much as by agentrun, would obey
 * it: the bundle must lie out of its reach */
static int bundle_out_of_reach(const struct sb_plan *p, const char *bundle,
			       struct ar_error *err)
{
	const char *in = NULL;

	if (ar_path_under(bundle, p->workspace))
		in = p->workspace;
	for (size_t i = 0; !in && i < p->n_mounts; i++) {
		const struct oci_mount *mt = &p->mounts[i];

		if (strcmp(mt->type, "bind") != 0 || !mt->source ||
		    !ar_path_under(bundle, mt->source))
			continue;
		if (oci_strv_has(&mt->options, "rw"))
			in = mt->source;
	}
	if (!in)
		return 0;
	return ar_error_set_plain(
		err, EPERM,
		"sandbox: --print-bundle `%s` is inside `%s`, which the sandbox's command can write: it could rewrite the bundle (config.json, the files made for it) that you run next; choose a directory outside it",
		bundle, in);
}

/* A new directory (0700), or an existing one without a bundle in it. */
static int prepare_dir(const char *dir, bool *made, struct ar_error *err)
{
	_cleanup_close_ int fd = -1;

	if (mkdir(dir, 0700) == 0) {
		*made = true;
		return 0;
	}
	if (errno != EEXIST)
		return ar_error_set(err, errno, "create bundle directory `%s`",
				    dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ar_error_set(err, errno, "bundle directory `%s`", dir);
	if (faccessat(fd, "config.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
	    faccessat(fd, "rootfs", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return ar_error_set_plain(
			err, EEXIST,
			"bundle directory `%s` already holds a bundle (config.json or rootfs)",
			dir);
	return 0;
}

int ar_sandbox_bundle_write(const struct oci_config *cfg,
			    const struct ar_rootfs_content *rootfs,
			    const char *dir, struct ar_error *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int rfd = -1;
	bool made = false;

	if (prepare_dir(dir, &made, err) < 0)
		return -1;
	path = ar_xasprintf("%s/rootfs", dir);
	if (mkdir(path, 0755) < 0)
		return ar_error_set(err, errno, "create `%s`", path);
	rfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return ar_error_set(err, errno, "open `%s`", path);
	if (ar_rootfs_fill(rfd, rootfs, err) < 0)
		return ar_error_wrap(err, "bundle `%s`", dir);
	return oci_config_write_file(cfg, dir, err);
}

/* ---- preflight ---- */

/* probes: also the checks that fork a probe process (user namespaces).
 * Before a run they are left out (a fork per start); after a failed run
 * they explain it. */
static int preflight(const struct ar_sandbox_host *h, const char *ws,
		     bool overlay, bool probes, struct ar_error *err)
{
	static const enum ar_doctor_check needed[] = { AR_DOCTOR_USERNS,
						       AR_DOCTOR_SECCOMP,
						       AR_DOCTOR_OVERLAY };
	size_t n = AR_ARRAY_SIZE(needed) - (overlay ? 0 : 1);
	struct ar_doctor_env e;

	ar_doctor_env_for(&e, h->uid, h->user);
	e.workspace = ws;
	e.no_probes = !probes;
	for (size_t i = 0; i < n; i++) {
		struct ar_doctor_result r;

		ar_doctor_check(&e, needed[i], &r);
		if (needed[i] == AR_DOCTOR_OVERLAY &&
		    r.status == AR_DOCTOR_WARN)
			r.status = AR_DOCTOR_FAIL; /* asked for: required */
		if (r.status == AR_DOCTOR_FAIL) {
			ar_error_clear(err);
			return ar_error_set_plain(
				err, EPERM,
				"sandbox: refusing to start without %s (doctor check `%s`): %s; fix: %s",
				r.name, r.id, r.detail, r.fix);
		}
	}
	return 0;
}

/* ---- run ---- */

/* What runs beside the container: the audit listener, the egress
 * proxy (each NULL when the plan has none) and the placeholders'
 * keeper. */
struct sb_beside {
	struct sb_observe *ob;
	struct sb_egress *egress;
	struct sb_placeholders *ph;
	struct sb_control *ctl;
	int *channel_fd; /* the agent channel's inner end, or -1 */
};

/* An --overlay run that changed nothing: its sandbox directory removed,
 * there is nothing to review (true when removed). */
static bool overlay_discard_if_empty(struct ar_overlay *ov)
{
	struct ar_changes c;
	struct ar_error e = AR_ERROR_INIT;
	bool empty;

	if (ar_overlay_changes(ov, &c, &e) < 0)
		return false;
	empty = c.n == 0;
	ar_changes_free(&c);
	return empty && ar_overlay_discard(ov, &e) == 0;
}

/* ar_create_opts.on_spawn: the container process exists in its
 * namespaces. The listener first (it sees the first exec), then the
 * proxy's sockets in the netns. */
static int on_spawn(pid_t pid, void *arg, struct ar_error *err)
{
	const struct sb_beside *b = arg;

	sb_placeholders_keep_pid(b->ph, pid);
	sb_control_set_pid(b->ctl, pid);
	if (b->ob && sb_observe_on_spawn(b->ob, pid, err) < 0)
		return -1;
	if (b->egress && sb_egress_on_spawn(b->egress, pid, err) < 0)
		return -1;
	/* the program has its end of the agent channel: ours goes, so the
	 * channel sees EOF when the last of the sandbox's copies closes */
	if (b->channel_fd && *b->channel_fd >= 0) {
		close(*b->channel_fd);
		*b->channel_fd = -1;
	}
	return sb_control_serve(b->ctl, err);
}

/* What a killed agentrun leaves to the placeholders' keeper
 * (placeholder.h): a plain run's end-of-run check, run once the
 * container has ended, and the commondir placeholders released. */
struct sb_orphan {
	struct sb_plan *plan;
	const struct ar_sandbox_host *h;
	int *fds;
	/* the keeper's copy: the live --rw grants it was told of */
	const struct sb_placeholders *ph;
	struct sb_run_record *rec;
};

static void orphan_check(void *arg)
{
	const struct sb_orphan *a = arg;
	struct sb_plan *p = a->plan;
	struct sb_hostexec_input hi = {
		.protect = &p->protect,
		.workspace = p->workspace,
		.home = a->h->home,
		.environ = a->h->environ,
		.rw = p->o.rw.v,
		.n_rw = p->o.rw.n,
		.late = a->ph->grants,
		.n_late = a->ph->n_grants,
	};

	sb_hostexec_check(&p->hostexec, &hi, NULL);
	sb_run_record_end(a->rec);
	sb_hostexec_release(&p->hostexec, false);
	/* and what agentrun would have removed at its end: the filtered
	 * git config copies and the CA directory of --secret (left in
	 * /tmp by every killed run before) */
	sb_gitconfig_release(&p->gitconfig, false);
	sb_keep_collect(&p->keep);
	sb_keep_release(&p->keep, false);
	sb_secrets_release(&p->secrets);
}

int ar_sandbox_run(const struct ar_sandbox_opts *o,
		   const struct ar_sandbox_run_opts *ro, int *exit_status,
		   struct ar_error *err)
{
	_cleanup_config_ struct oci_config *cfg = NULL;
	_cleanup_free_ char *bundle = NULL;
	_cleanup_free_ char *sess_config = NULL;
	_cleanup_free_ char *bundle_abs = NULL;
	struct ar_sandbox_run_opts ro_abs;
	struct ar_sandbox_host h;
	struct sb_plan plan;
	struct ar_create_opts co;
	struct sb_egress egress = { 0 };
	struct sb_observe ob = { 0 };
	struct sb_refusals refusals = { 0 };
	struct sb_placeholders ph = SB_PLACEHOLDERS_INIT;
	int channel_fd = -1;
	struct sb_shadow shadow;
	bool shadow_on = false;
	struct sb_run_record rec = SB_RUN_RECORD_INIT;
	struct sb_orphan orphan = { &plan, &h, NULL, &ph, &rec };
	struct sb_beside beside = { NULL, NULL, &ph, NULL, &channel_fd };
	struct sb_session sess = { .dir = NULL, .ready_fd = -1 };
	struct sb_control *ctl = NULL;
	struct sb_grant_ctx grant_ctx;
	const struct sb_plan *p = &plan;
	struct sb_watch *watch = NULL;
	bool named = o->name && !ro->print_bundle;
	bool remove_bundle = false, quiet, made_bundle = false;
	char id[64];
	int r;

	*exit_status = 1;
	memset(&plan, 0, sizeof(plan));
	sb_grant_init(&grant_ctx, NULL, NULL, NULL);
	plan.overlay.lock_fd = -1;
	if (ar_sandbox_host_detect(&h, err) < 0) {
		ar_sandbox_host_release(&h);
		return -1;
	}
	/* a run of this user whose agentrun and keeper were both killed:
	 * its end-of-run check, before anything else (run_record.h) */
	if (!ro->print_bundle) {
		_cleanup_free_ char *rdir =
			sb_run_record_dir(h.home, h.environ);

		sb_run_record_recover(rdir, h.home, h.environ);
	}
	/* --print-bundle: its directory first; the plan makes its files
	 * (filtered git config, keep copies, the CA) in it */
	r = ro->print_bundle ?
		    prepare_dir(ro->print_bundle, &made_bundle, err) :
		    0;
	if (r == 0 && ro->print_bundle) {
		/* config.json names the files by absolute paths */
		bundle_abs = realpath(ro->print_bundle, NULL);
		if (!bundle_abs) {
			r = ar_error_set(err, errno, "bundle directory `%s`",
					 ro->print_bundle);
		} else {
			ro_abs = *ro;
			ro_abs.print_bundle = bundle_abs;
			ro = &ro_abs;
		}
	}
	if (r == 0)
		r = sb_plan_make(&plan, o, &h, ro, err);
	if (r == 0 && ro->print_bundle)
		r = bundle_out_of_reach(p, ro->print_bundle, err);
	if (r == 0)
		r = ar_sandbox_build_config(p, &cfg, err);
	if (r == 0 && !ro->print_bundle)
		r = preflight(&h, p->workspace, o->overlay, false, err);
	if (r == 0 && named)
		r = sb_session_begin(&sess, ro->state_root, o->name, cfg,
				     p->observe, p->o.vm, err);
	if (r != 0) {
		if (plan.overlay.dir) {
			struct ar_error ignored = AR_ERROR_INIT;

			ar_overlay_discard(&plan.overlay, &ignored);
		}
		goto out;
	}
	if (ro->print_bundle) {
		if (p->net == AR_SANDBOX_NET_ALLOW)
			ar_warn("sandbox: --print-bundle: the egress proxy of --net allow runs only with `agentrun sandbox`; the bundle has the network namespace and the proxy variables, but nothing will listen on 127.0.0.1:%d",
				AR_EGRESS_PORT);
		r = ar_sandbox_bundle_write(cfg, &p->rootfs, ro->print_bundle,
					    err);
		sb_plan_keep_files(&plan);
		goto out;
	}
	if (p->workspace_home)
		ar_warn("sandbox: THE WORKSPACE IS YOUR HOME DIRECTORY `%s` (--workspace): the command can read and change every file in it except the never-share list and the protected paths (" AR_SANDBOX_DOC
			")",
			p->workspace);
	if (p->net == AR_SANDBOX_NET_HOST)
		ar_warn("sandbox: --net host: the sandbox shares the host's network; services on 127.0.0.1 and the local network (ssh, databases, dev servers, cloud metadata) are reachable");
	/* the terminal is the command's: the start lines only with
	 * --verbose (or in the --log destination) */
	quiet = !o->verbose && !ar_log_has_destination() &&
		isatty(STDERR_FILENO);
	if (!quiet)
		ar_log(AR_LOG_INFO,
		       "sandbox: workspace %s (%s); protections: %s",
		       p->workspace,
		       plan.overlay.dir ? "overlay" : "read-write",
		       oci_config_annotation(cfg, SB_ANNOTATION_PROTECTIONS));

	if (named && ro->detach) {
		r = sb_session_detach(&sess, ro->state_root, o->name,
				      exit_status, err);
		if (r < 0 && sess.ready_fd >= 0)
			goto out; /* the monitor */
		if (r != 0) {
			/* the caller: the monitor owns the session now */
			free(sess.dir);
			sess.dir = NULL;
			sb_plan_keep_files(&plan);
			if (r > 0) {
				r = 0;
				ar_log(AR_LOG_INFO,
				       "sandbox `%s` runs detached: `agentrun sandbox exec %s -- CMD` joins it, `agentrun sandbox stop %s` ends it",
				       o->name, o->name, o->name);
			}
			goto out;
		}
		/* the monitor holds the --overlay lock now (inherited) */
		ar_overlay_lock_owner(&plan.overlay);
	}
	snprintf(id, sizeof(id), "sandbox-%d-%lx", (int)getpid(),
		 (unsigned long)time(NULL));
	if (named)
		sess_config = ar_xasprintf("%s/config.json", sess.dir);
	/* No bundle on disk: the config is handed over in memory and the
	 * root is a tmpfs filled in the sandbox (sandbox_rootfs.c). */
	bundle = sb_root_mountpoint(h.uid, &remove_bundle);
	if (!bundle) {
		r = ar_error_set(err, errno,
				 "sandbox: create a directory in /tmp");
		goto out;
	}
	cfg->root.path = oci_arena_strdup(&cfg->arena, bundle);
	/* the control plane (control/control.h): every run has one; its
	 * memory only here (its socket while the container process sets
	 * up, its thread at the first client), before the keeper's fork
	 * below (writes after a fork pay its copy-on-write faults) */
	if (r == 0)
		r = sb_control_start(ro->state_root, named ? o->name : id,
				     o->ask_timeout, &ctl, err);
	/* the placeholders' mount points: made or joined, locked for the
	 * container's life (a keeper process past agentrun's own), before
	 * any thread exists; an --overlay run mounts none and only removes
	 * the ones a killed run left */
	for (size_t i = 0; r == 0 && i < p->protect.n; i++)
		if (p->protect.v[i].kind == SB_PROT_ABSENT)
			r = sb_placeholder_take(&ph, p->protect.v[i].path,
						!plan.overlay.dir,
						p->protect.v[i].file, err);
	/* a plain run: agentrun killed, its keeper runs the end-of-run
	 * check (docs/sandbox.md, "A killed sandbox") */
	if (r == 0 && plan.hostexec.armed) {
		_cleanup_free_ char *rdir =
			sb_run_record_dir(h.home, h.environ);
		size_t n = plan.hostexec.n_ph;

		/* and if the keeper dies too: the next start checks it */
		sb_run_record_begin(&rec, rdir, &plan.hostexec.start,
				    p->workspace, p->o.rw.v, p->o.rw.n);
		orphan.fds = ar_xcalloc(n + 2, sizeof(int));
		for (size_t i = 0; i < n; i++)
			orphan.fds[i] = plan.hostexec.ph[i].fd;
		if (rec.fd >= 0)
			orphan.fds[n++] = rec.fd;
		ph.orphan = orphan_check;
		ph.orphan_arg = &orphan;
		ph.orphan_fds = orphan.fds;
		ph.n_orphan_fds = n;
	}
	if (r == 0)
		sb_placeholders_keep(&ph);
	/* --audit/--learn (sandbox_audit.c), --net allow and --publish
	 * (sandbox_egress.c): started with the container process */
	if (r == 0 && p->observe) {
		r = sb_observe_start(&ob, p, cfg, err);
		beside.ob = &ob;
	}
	beside.ctl = ctl;
	if (r == 0 && o->profile)
		sb_control_set_profile(ctl, o->profile->filename);
	/* sandbox allow --ro/--rw: the checks of a start-time one */
	grant_ctx.workspace = p->workspace;
	grant_ctx.home = h.home;
	grant_ctx.keeper = &ph;
	grant_ctx.rec = &rec;
	if (r == 0) {
		sb_control_set_path_check(ctl, sb_grant_check, &grant_ctx);
		sb_control_set_path_done(ctl, sb_grant_done);
	}
	if (r == 0 && ob.audit)
		sb_control_set_audit(ctl, ob.audit);
	/* the agent channel: srt's, on fd 3 (control/control_channel.h) */
	if (r == 0 && p->agent_channel)
		r = sb_control_agent_channel(
			ctl, p->egress && p->policy.ask && !p->shadow,
			&channel_fd, err);
	/* the web dashboard's port is never shown inside (ui/ui.h) */
	if (r == 0 && p->egress)
		r = ar_ui_check_policy(ro->state_root, &p->policy, err);
	if (r == 0 && p->egress) {
		r = sb_egress_init(&egress, p, err);
		beside.egress = &egress;
		sb_observe_egress(&ob, &egress);
		sb_control_tap_egress(ctl, &egress.fn, &egress.fn_data);
		sb_control_set_policy(ctl, &p->policy, p->secrets.v,
				      p->secrets.n);
		egress.ask_fn = sb_control_ask;
		egress.ask_data = ctl;
		egress.grant_fn = sb_control_net_granted;
		egress.grant_data = ctl;
		/* --shadow: nothing waits, nothing is refused by the rules */
		if (p->shadow) {
			sb_shadow_init(&shadow, ctl);
			shadow_on = true;
			egress.ask_fn = sb_shadow_ask;
			egress.ask_data = &shadow;
		}
	}
	if (r == 0 && p->shadow)
		ar_warn("sandbox: SHADOW MODE (--shadow): THE NETWORK ALLOWLIST IS NOT ENFORCED: every destination it would refuse is allowed and recorded (would_deny); still enforced: loopback/private/metadata addresses, protected paths (git hooks and config, editor and agent config), the never-share list, Landlock, seccomp");
	if (r == 0 && p->net == AR_SANDBOX_NET_ALLOW && !quiet)
		ar_log(AR_LOG_INFO,
		       "sandbox: egress allowlist proxy on 127.0.0.1:%d inside (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), %zu pattern(s)%s%s%s%s",
		       AR_EGRESS_PORT, p->policy.n_rules,
		       egress.ups.tunnel.host[0] || egress.ups.http.host[0] ?
			       "; its connections through the upstream proxy " :
			       "",
		       egress.ups.tunnel.host[0] ? egress.ups.tunnel.shown :
						   egress.ups.http.shown,
		       egress.ups.tunnel.host[0] || egress.ups.http.host[0] ?
			       " from " :
			       "",
		       egress.ups.source && (egress.ups.tunnel.host[0] ||
					     egress.ups.http.host[0]) ?
			       egress.ups.source :
			       "");
	co = (struct ar_create_opts){
		.root = ro->state_root,
		.id = named ? o->name : id,
		.bundle = bundle,
		.rootless = -1,
		.cgroups_disabled = ro->cgroups_disabled,
		.config = cfg,
		.overlap = true,
		.config_file = sess_config,
		.tmpfs_root = &p->rootfs,
		.on_spawn = on_spawn,
		.on_spawn_arg = &beside,
		/* the control socket: its thread at the first client */
		.watch = sb_control_watch(ctl),
		.seccomp_default = p->seccomp_deferred,
		.landlock = p->landlock ? &p->landlock_rules : NULL,
		/* pid 1 an init: orphans reaped, ^Z stops the agent */
		.init = true,
		.pass_fd = channel_fd > 2 ? channel_fd : 0,
		.pass_fd_env = CTL_CHANNEL_ENV,
	};
	/* without --nested: refused namespaces are reported, naming it
	 * (not under --audit/--learn: their listener is the one a process
	 * may have) */
	refusals.verbose = o->verbose;
	if (!p->nested) {
		co.on_refusal = sb_refusal_event;
		co.on_refusal_arg = &refusals;
	}
	/* the end-of-run check's list of changed directories, from before
	 * the agent starts (root only: change_watch.h) */
	if (r == 0 && plan.hostexec.armed)
		watch = sb_watch_start(p->workspace);
	if (r == 0)
		r = ar_container_run(&co, exit_status, err);
	if (channel_fd >= 0)
		close(channel_fd);
	channel_fd = -1;
	sb_refusal_summary(&refusals);
	/* the profile's "keep" keys the agent CLI set inside, for the next
	 * run (sandbox_keep.h) */
	sb_keep_collect(&plan.keep);
	/* placeholders' mount points go (the last one out); late redirect
	 * files are reported */
	sb_placeholders_release(&ph);
	/* and the live --rw grants' (sandbox_grant.h) */
	sb_grant_end(&grant_ctx, ph.keeper <= 0);
	sb_protect_after_run(&p->protect);
	/* what the run left that the host would execute (a plain run) */
	if (plan.hostexec.armed) {
		size_t n_late = 0;
		struct sb_hostexec_dir *late =
			sb_grant_dirs(&grant_ctx, &n_late);
		struct sb_hostexec_input hi = {
			.protect = &p->protect,
			.workspace = p->workspace,
			.home = h.home,
			.environ = h.environ,
			.rw = p->o.rw.v,
			.n_rw = p->o.rw.n,
			.late = late,
			.n_late = n_late,
			.watch = watch,
		};
		watch = NULL;
		sb_hostexec_check(&plan.hostexec, &hi, NULL);
		sb_grant_dirs_free(late, n_late);
		sb_run_record_end(&rec);
		sb_worktrees_lost(p->workspace, &plan.hostexec.start);
	}
	/* pending decisions refused before the proxy stops (it waits for
	 * them); the stream goes on until the audit log's last line */
	sb_control_close(ctl);
	if (beside.egress)
		sb_egress_release(&egress);
	/* the proxy is gone: every would-be refusal is counted */
	if (shadow_on) {
		sb_shadow_summary(&shadow);
		sb_shadow_release(&shadow);
	}
	if (p->observe)
		r = sb_observe_finish(&ob, p, r, *exit_status, err);
	sb_control_free(ctl);
	ctl = NULL;
	if (remove_bundle)
		rmdir(bundle);
	/* Explain a failed start with the checks left out before it. */
	if (r < 0)
		preflight(&h, p->workspace, o->overlay, true, err);
	if (plan.overlay.dir && r == 0 &&
	    overlay_discard_if_empty(&plan.overlay))
		ar_log(AR_LOG_INFO,
		       "sandbox `%s`: the run changed nothing in the workspace: its overlay is discarded",
		       plan.overlay.name);
	else if (plan.overlay.dir)
		ar_log(AR_LOG_INFO,
		       "sandbox `%s`: the workspace is untouched; changes are kept in %s: review them with `agentrun changes %s` or `agentrun diff %s`, apply with `agentrun commit %s [PATHS...]`, drop with `agentrun discard %s`",
		       plan.overlay.name, plan.overlay.upper, plan.overlay.name,
		       plan.overlay.name, plan.overlay.name, plan.overlay.name);
out:
	sb_grant_release(&grant_ctx);
	sb_run_record_end(&rec);
	free(orphan.fds);
	if (sess.dir || sess.ready_fd >= 0)
		sb_session_end(&sess, r, *exit_status, err);
	sb_observe_release(&ob);
	sb_plan_release(&plan);
	/* a failed --print-bundle leaves no directory it made */
	if (r != 0 && made_bundle)
		rmdir(ro->print_bundle);
	ar_sandbox_host_release(&h);
	return r;
}
