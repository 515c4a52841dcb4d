/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox`, end to end: host -> config (sandbox_config.c) ->
 * preflight (the doctor checks the sandbox depends on; the ones that fork
 * a probe only after a failed start) -> ar_container_run(), the path of
 * every `agentrun run`, with the config in memory and a tmpfs root filled
 * in the sandbox (sandbox_rootfs.c): nothing is written on the host.
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
#include "container.h"
#include "doctor.h"
#include "landlock.h"
#include "log.h"
#include "overlay.h"
#include "profile.h"
#include "protect.h"
#include "sandbox_audit.h"
#include "sandbox.h"
#include "sandbox_config.h"
#include "sandbox_egress.h"
#include "sandbox_nested.h"
#include "sandbox_refusal.h"
#include "sandbox_rootfs.h"
#include "session.h"
#include "utils.h"

/* ---- the bundle ---- */

/* A new directory (0700), or an existing one without a bundle in it. */
static int prepare_dir(const char *dir, struct ar_error *err)
{
	_cleanup_close_ int fd = -1;

	if (mkdir(dir, 0700) == 0)
		return 0;
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
			    const struct ar_sandbox_host *h, const char *dir,
			    struct ar_error *err)
{
	_cleanup_free_ char *rootfs = NULL;
	_cleanup_close_ int rfd = -1;
	struct sb_rootfs content;
	int r;

	if (prepare_dir(dir, err) < 0)
		return -1;
	rootfs = ar_xasprintf("%s/rootfs", dir);
	if (mkdir(rootfs, 0755) < 0)
		return ar_error_set(err, errno, "create `%s`", rootfs);
	rfd = open(rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return ar_error_set(err, errno, "open `%s`", rootfs);
	sb_rootfs_init(&content, h, NULL);
	r = ar_rootfs_fill(rfd, &content.content, err);
	sb_rootfs_release(&content);
	if (r < 0)
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

/* --overlay: the sandbox directory, and a copy of the options pointing
 * at its layers. */
static int overlay_prepare(const struct ar_sandbox_opts *o,
			   const struct ar_sandbox_host *h,
			   struct ar_sandbox_opts *oo, struct ar_overlay *ov,
			   struct ar_error *err)
{
	_cleanup_free_ char *ws = NULL;

	if (ar_sandbox_workspace(o, h, &ws, err) < 0)
		return -1;
	/* holds the sandbox's lock until ar_overlay_release */
	if (ar_overlay_create(o->name, ws, ov, err) < 0)
		return -1;
	*oo = *o;
	oo->overlay_upper = ov->upper;
	oo->overlay_work = ov->work;
	return 0;
}

/* --nested: Landlock off (the kernel refuses mounts to a process under
 * Landlock); asking for both is an error. */
static int nested_opts(const struct ar_sandbox_opts **o,
		       struct ar_sandbox_opts *no, struct ar_error *err)
{
	const struct oci_profile *p = (*o)->profile;

	if ((*o)->landlock == 1 ||
	    ((*o)->landlock < 0 && p && p->landlock.set && p->landlock.v))
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --nested needs Landlock off (the kernel refuses every mount to a Landlock-restricted process, and a nested sandbox mounts); drop --landlock on (or the profile's \"landlock\": true)");
	*no = **o;
	no->landlock = 0;
	*o = no;
	return 0;
}

int ar_sandbox_run(const struct ar_sandbox_opts *o,
		   const struct ar_sandbox_run_opts *ro, int *exit_status,
		   struct ar_error *err)
{
	_cleanup_config_ struct oci_config *cfg = NULL;
	_cleanup_free_ char *bundle = NULL;
	struct ar_sandbox_host h;
	struct ar_sandbox_info info;
	struct ar_create_opts co;
	struct ar_landlock_rules ll;
	struct ar_sandbox_opts oo, lo, no;
	struct ar_overlay ov;
	struct sb_rootfs content;
	struct sb_egress egress = { 0 };
	struct sb_secrets secrets = { 0 };
	struct sb_observe ob = { 0 };
	struct sb_refusals refusals = { 0 };
	struct sb_session sess = { .dir = NULL, .ready_fd = -1 };
	_cleanup_free_ char *sess_config = NULL;
	bool named = o->name && !ro->print_bundle;
	bool nested = o->nested || (o->profile && o->profile->nested.set &&
				    o->profile->nested.v);
	bool remove_bundle = false, quiet, egress_on = false;
	char id[64];
	int r;

	*exit_status = 1;
	memset(&info, 0, sizeof(info));
	memset(&ov, 0, sizeof(ov));
	ov.lock_fd = -1;
	if (ar_sandbox_host_detect(&h, err) < 0) {
		ar_sandbox_host_release(&h);
		return -1;
	}
	if (o->overlay) {
		r = overlay_prepare(o, &h, &oo, &ov, err);
		o = &oo;
		if (r < 0)
			goto out;
	}
	/* --audit/--learn (sandbox_audit.c); nothing without them */
	r = sb_observe_wanted(o) ? sb_observe_opts(&ob, &o, &h, err) : 0;
	/* A plain run: the embedded seccomp profile is not parsed; the
	 * runtime loads it from its compiled-filter cache (parsed on a
	 * miss only). --print-bundle and --audit/--learn need it, and a
	 * session keeps the full config on disk for exec. */
	if (r == 0 && nested)
		r = nested_opts(&o, &no, err);
	if (r == 0 && !ro->print_bundle && !sb_observe_wanted(o) && !named &&
	    !nested) {
		lo = *o;
		lo.seccomp_deferred = true;
		o = &lo;
	}
	/* --secret: placeholders and the CA, in the options the config is
	 * built from */
	if (r == 0 && sb_secrets_wanted(o))
		r = sb_secrets_prepare(&secrets, &o, err);
	if (r == 0)
		r = ar_sandbox_build_config(o, &h, &cfg, &info, err);
	if (r == 0 && nested)
		r = sb_nested_apply(cfg, &h, info.protections,
				    sizeof(info.protections), err);
	if (r == 0 && !ro->print_bundle)
		r = preflight(&h, info.workspace, o->overlay, false, err);
	if (r == 0 && named)
		r = sb_session_begin(&sess, ro->state_root, o->name, cfg,
				     sb_observe_wanted(o), err);
	if (r != 0) { /* not only < 0: past here cfg is set */
		if (ov.dir) {
			struct ar_error ignored = AR_ERROR_INIT;

			ar_overlay_discard(&ov, &ignored);
		}
		goto out;
	}
	if (ro->print_bundle) {
		if (info.net_allow)
			ar_warn("sandbox: --print-bundle: the egress proxy of --net allow runs only with `agentrun sandbox`; the bundle has the network namespace and the proxy variables, but nothing will listen on 127.0.0.1:%d",
				AR_EGRESS_PORT);
		r = ar_sandbox_bundle_write(cfg, &h, ro->print_bundle, err);
		goto out;
	}
	if (info.workspace_home)
		ar_warn("sandbox: THE WORKSPACE IS YOUR HOME DIRECTORY `%s` (--workspace): the command can read and change every file in it except the never-share list and the protected paths (docs/sandbox.md)",
			info.workspace);
	if (info.net_host)
		ar_warn("sandbox: --net host: the sandbox shares the host's network; services on 127.0.0.1 and the local network (ssh, databases, dev servers, cloud metadata) are reachable");
	/* the terminal is the command's: the start lines only with
	 * --verbose (or in the --log file) */
	quiet = !o->verbose && ar_log_fd() < 0 && isatty(STDERR_FILENO);
	if (!quiet)
		ar_log(AR_LOG_INFO,
		       "sandbox: workspace %s (%s); protections: %s",
		       info.workspace, ov.dir ? "overlay" : "read-write",
		       info.protections);

	if (named && ro->detach) {
		r = sb_session_detach(&sess, ro->state_root, o->name,
				      exit_status, err);
		if (r < 0 && sess.ready_fd >= 0)
			goto out; /* the monitor */
		if (r != 0) {
			/* the caller: the monitor owns the session now */
			free(sess.dir);
			sess.dir = NULL;
			if (r > 0) {
				r = 0;
				ar_log(AR_LOG_INFO,
				       "sandbox `%s` runs detached: `agentrun sandbox exec %s -- CMD` joins it, `agentrun sandbox stop %s` ends it",
				       o->name, o->name, o->name);
			}
			goto out;
		}
		/* the monitor holds the --overlay lock now (inherited) */
		ar_overlay_lock_owner(&ov);
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
	sb_rootfs_init(&content, &h, cfg);
	memset(&co, 0, sizeof(co));
	co.root = ro->state_root;
	co.id = named ? o->name : id;
	co.bundle = bundle;
	co.rootless = -1;
	co.cgroups_disabled = ro->cgroups_disabled;
	co.config = cfg;
	co.config_file = sess_config;
	co.tmpfs_root = &content.content;
	co.seccomp_default = o->seccomp_deferred;
	/* without --nested: refused namespaces are reported, naming it
	 * (not under --audit/--learn: their listener is the one a process
	 * may have) */
	refusals.verbose = o->verbose;
	if (!nested) {
		co.on_refusal = sb_refusal_event;
		co.on_refusal_arg = &refusals;
	}
	ll = (struct ar_landlock_rules){ info.landlock_rules,
					 info.n_landlock_rules };
	co.landlock = info.landlock ? &ll : NULL;
	r = sb_observe_wanted(o) ?
		    sb_observe_start(&ob, o, &h, cfg, &info, err) :
		    0;
	/* --net allow, --publish: the proxy starts once the sandbox's
	 * netns exists */
	egress_on = info.net_allow || sb_egress_publish_wanted(o);
	if (r == 0 && egress_on)
		r = sb_egress_init(&egress, o, info.net_allow, info.net_host,
				   err);
	if (r == 0 && egress_on) {
		egress.secrets = secrets.n ? &secrets : NULL;
		sb_observe_egress(&ob, &egress);
		co.on_spawn = sb_egress_on_spawn;
		co.on_spawn_arg = &egress;
	}
	if (r == 0 && info.net_allow && !quiet) {
		ar_log(AR_LOG_INFO,
		       "sandbox: egress allowlist proxy on 127.0.0.1:%d inside (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), %zu pattern(s)",
		       AR_EGRESS_PORT, egress.policy.n_rules);
	}
	if (r == 0 && sb_observe_wanted(o)) {
		ob.next_on_spawn = co.on_spawn;
		ob.next_arg = co.on_spawn_arg;
		co.on_spawn = sb_observe_on_spawn;
		co.on_spawn_arg = &ob;
	}
	if (r == 0)
		r = ar_container_run(&co, exit_status, err);
	sb_refusal_summary(&refusals);
	/* placeholders' mount points go; late redirect files are reported */
	sb_protect_after_run(info.protect);
	if (egress_on)
		sb_egress_release(&egress);
	sb_secrets_release(&secrets);
	if (sb_observe_wanted(o))
		r = sb_observe_finish(&ob, o, &info, &ov, r, *exit_status, err);
	sb_rootfs_release(&content);
	if (remove_bundle)
		rmdir(bundle);
	/* Explain a failed start with the checks left out before it. */
	if (r < 0)
		preflight(&h, info.workspace, o->overlay, true, err);
	if (ov.dir)
		ar_log(AR_LOG_INFO,
		       "sandbox `%s`: the workspace is untouched; changes are kept in %s: review them with `agentrun changes %s` or `agentrun diff %s`, apply with `agentrun commit %s [PATHS...]`, drop with `agentrun discard %s`",
		       ov.name, ov.upper, ov.name, ov.name, ov.name, ov.name);
out:
	if (sess.dir || sess.ready_fd >= 0)
		sb_session_end(&sess, r, *exit_status, err);
	sb_observe_release(&ob);
	ar_sandbox_info_release(&info);
	ar_overlay_release(&ov);
	ar_sandbox_host_release(&h);
	return r;
}
