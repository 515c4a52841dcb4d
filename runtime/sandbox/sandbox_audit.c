/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --audit and --learn in a sandbox run (sandbox_audit.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/audit_notify.h"
#include "audit/learn.h"
#include "log.h"
#include "overlay/overlay.h"
#include "protect/protect.h"
#include "sandbox_audit.h"
#include "sandbox_config.h"
#include "sandbox_egress.h"
#include "utils.h"

/* The protected paths of the run, one "protected" event. */
static void audit_protected(struct ar_audit *a, const struct sb_protect *p)
{
	static const char *const kinds[] = { "read-only", "pinned",
					     "placeholder", "watched" };
	struct ar_jbuf b = { 0 };

	if (!p)
		return;
	ar_audit_begin(&b, "protected");
	ar_jbuf_lit(&b, ",\"paths\":[");
	for (size_t i = 0; i < p->n; i++) {
		ar_jbuf_addf(&b, "%s{\"path\":", i ? "," : "");
		ar_jbuf_cstr(&b, p->v[i].path);
		ar_jbuf_addf(&b,
			     ",\"how\":\"%s\",\"why\":", kinds[p->v[i].kind]);
		ar_jbuf_cstr(&b, p->v[i].why);
		ar_jbuf_lit(&b, "}");
	}
	ar_jbuf_addf(&b, "],\"repositories\":%zu,\"truncated\":%s", p->repos,
		     p->truncated ? "true" : "false");
	ar_audit_emit(a, &b);
}

int sb_observe_start(struct sb_observe *ob, const struct sb_plan *p,
		     struct oci_config *cfg, struct ar_error *err)
{
	const struct ar_sandbox_opts *o = &p->o;
	int what = 0;

	clock_gettime(CLOCK_MONOTONIC, &ob->t0);
	ob->argv = o->argv;
	if (o->audit && ar_audit_open(o->audit, &ob->audit, err) < 0)
		return -1;
	if (o->learn)
		ob->learn = sb_learn_new(p->h->home, p->workspace, ob->audit);
	if (ob->audit)
		what |= SB_NOTIFY_EXEC | SB_NOTIFY_CONNECT | SB_NOTIFY_WRITES;
	if (ob->learn)
		what |= SB_NOTIFY_PATHS;
	if (sb_notify_start(ob->audit, ob->learn, &ob->notify, err) < 0)
		return -1;
	if (ob->audit && p->protect.n)
		sb_notify_protect(ob->notify, &p->protect, &ob->attempts);
	if (sb_notify_rules(cfg->linux_.seccomp, &cfg->arena, what,
			    sb_notify_socket(ob->notify), err) < 0)
		return -1;
	if (ob->audit) {
		ar_audit_start(ob->audit, o->argv, p->workspace,
			       oci_config_annotation(cfg,
						     SB_ANNOTATION_PROTECTIONS),
			       o->learn	 ? "learn" :
			       o->shadow ? "shadow" :
					   "enforce");
		audit_protected(ob->audit, &p->protect);
		if (!o->overlay) {
			sb_scan_take(p->workspace, &ob->before);
			ob->scanned = true;
		}
	}
	return 0;
}

int sb_observe_on_spawn(struct sb_observe *ob, pid_t pid, struct ar_error *err)
{
	return sb_notify_run(ob->notify, pid, ob->argv, err);
}

void sb_observe_egress(struct sb_observe *ob, struct sb_egress *e)
{
	if (ob->learn) {
		e->fn = sb_learn_egress_event;
		e->fn_data = ob->learn;
	} else if (ob->audit) {
		e->fn = ar_audit_egress_event;
		e->fn_data = ob->audit;
	}
}

/* One line on stderr (and in the --log file):
 *   agentrun: 2 attempts on protected paths: .git/hooks/pre-commit
 *   (open), .git/config (rename) — see FILE */
static void attempts_summary(const struct sb_attempts *at, const char *audit,
			     const char *ws)
{
	char line[2048];
	size_t o;

	if (at->n == 0)
		return;
	o = (size_t)snprintf(line, sizeof(line),
			     "agentrun: %zu attempt%s on protected paths:",
			     at->n, at->n == 1 ? "" : "s");
	for (size_t i = 0; i < at->n_named && o < sizeof(line); i++) {
		const char *p = at->named[i].path;
		_cleanup_free_ char *q = NULL; /* the agent's: quoted */

		if (ws && ar_path_under(p, ws) && strcmp(p, ws) != 0)
			p += strlen(ws) + (strcmp(ws, "/") != 0);
		q = ar_quote(p);
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s %s (%s)",
				      i ? "," : "", q, at->named[i].op);
	}
	if (at->more && o < sizeof(line))
		o += (size_t)snprintf(line + o, sizeof(line) - o,
				      " and other paths");
	if (o < sizeof(line))
		o += (size_t)snprintf(line + o, sizeof(line) - o,
				      " \xe2\x80\x94 see %s",
				      strcmp(audit, "-") == 0 ?
					      "the audit log above" :
					      audit);
	ar_log_summary(line);
}

int sb_observe_finish(struct sb_observe *ob, const struct sb_plan *p,
		      int run_rc, int exit_status, struct ar_error *err)
{
	const struct ar_sandbox_opts *o = &p->o;
	const struct ar_overlay *ov = &p->overlay;
	struct timespec t1;

	sb_notify_stop(ob->notify);
	ob->notify = NULL;
	if (ob->audit) {
		if (ov->dir)
			sb_audit_files_overlay(ob->audit, ov);
		else if (ob->scanned)
			sb_audit_files_scan(ob->audit, &ob->before,
					    p->workspace, &p->protect);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ar_audit_exit(ob->audit, run_rc < 0 ? -1 : exit_status,
			      (double)(t1.tv_sec - ob->t0.tv_sec) +
				      (double)(t1.tv_nsec - ob->t0.tv_nsec) /
					      1e9);
		attempts_summary(&ob->attempts, o->audit, p->workspace);
	}
	if (run_rc < 0)
		return run_rc; /* err says why the run failed */
	if (ob->learn) {
		if (sb_learn_write(ob->learn, o->learn, o->argv, err) < 0)
			return -1;
		ar_log(AR_LOG_INFO,
		       "sandbox: --learn: wrote %s; check it, then run with --profile %s",
		       o->learn, o->learn);
	}
	return 0;
}

void sb_observe_release(struct sb_observe *ob)
{
	sb_notify_stop(ob->notify);
	ob->notify = NULL;
	sb_learn_free(ob->learn);
	ob->learn = NULL;
	sb_attempts_free(&ob->attempts);
	ar_audit_close(ob->audit);
	ob->audit = NULL;
	if (ob->scanned)
		sb_scan_free(&ob->before);
	ob->scanned = false;
}
