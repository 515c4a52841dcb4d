/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Live grants of a running sandbox (control_grant.h). */
#define _GNU_SOURCE
#include "control_grant.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "control_mount.h"
#include "log.h"
#include "utils.h"

/* The missing protected paths of a --rw grant that exist now (the agent
 * made them): how many; the first in *first (malloc'd). */
static size_t created(const struct ctl_grant_mnt *mt, char **first)
{
	struct stat st;
	size_t n = 0;

	*first = NULL;
	for (size_t i = 0; i < mt->n_absent; i++) {
		if (lstat(mt->absent[i], &st) < 0)
			continue;
		if (n++ == 0)
			*first = ar_xstrdup(mt->absent[i]);
	}
	return n;
}

/* Free a grant's memory; at_end: the sandbox ends with it granted,
 * what the agent created among its missing protected paths is said. */
static void mnt_release(struct ctl_grant_mnt *mt, bool at_end)
{
	_cleanup_free_ char *first = NULL;
	size_t n = at_end ? created(mt, &first) : 0;

	if (n)
		ar_warn("sandbox: the agent created %zu watched protected path(s) in the --rw grant `%s`, such as `%s`: review them before your tools run them",
			n, mt->path, first);
	free(mt->path);
	if (mt->fd >= 0)
		close(mt->fd);
	for (size_t i = 0; i < mt->n_absent; i++)
		free(mt->absent[i]);
	free(mt->absent);
}

void ctl_grants_init(struct ctl_grants *g, struct ctl_queue *q)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	g->q = q;
	g->pidfd = -1;
}

void ctl_grants_set_pid(struct ctl_grants *g, pid_t pid)
{
	if (g->pidfd >= 0)
		close(g->pidfd);
	g->pid = pid;
	/* pidfd_open: O_CLOEXEC by itself */
	g->pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
}

void ctl_grants_release(struct ctl_grants *g)
{
	for (size_t i = 0; i < g->n_rules; i++)
		ar_egress_rule_release(&g->rules[i]);
	free(g->rules);
	for (size_t i = 0; i < g->n_mnts; i++)
		mnt_release(&g->mnts[i], true);
	free(g->mnts);
	if (g->pidfd >= 0)
		close(g->pidfd);
	pthread_mutex_destroy(&g->lock);
}

/* ---- --net ---- */

/* Whether rule r allows HOST:PORT (port 0: any port of the name). */
static bool rule_allows(const struct ar_egress_rule *r, const char *host,
			uint16_t port)
{
	struct ar_egress_policy one = { .rules = (struct ar_egress_rule *)r,
					.n_rules = 1 };

	if (port == 0)
		return ar_egress_name_allowed(&one, host);
	return ar_egress_host_allowed(&one, host, port);
}

bool ctl_grants_net(struct ctl_grants *g, const char *host, uint16_t port,
		    bool *exact)
{
	bool ok = false;

	*exact = false;
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->n_rules && !ok; i++) {
		const struct ar_egress_rule *r = &g->rules[i];

		if (!rule_allows(r, host, port))
			continue;
		ok = true;
		/* an address literal with its port: that address, whatever
		 * its class (as an answer to an ask of it) */
		*exact = r->family != 0 && r->port != 0 && port != 0;
	}
	pthread_mutex_unlock(&g->lock);
	return ok;
}

static bool same_rule(const struct ar_egress_rule *a,
		      const struct ar_egress_rule *b)
{
	return a->any == b->any && a->wildcard == b->wildcard &&
	       a->family == b->family && a->port == b->port &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0 &&
	       ((!a->name && !b->name) ||
		(a->name && b->name && strcmp(a->name, b->name) == 0));
}

static bool pending_match(const char *host, uint16_t port, void *data)
{
	return rule_allows(data, host, port);
}

static int net_apply(struct ctl_grants *g, const struct ctl_msg *m, char *done,
		     size_t dsize, struct ar_error *err)
{
	struct ar_egress_rule r;
	size_t i;

	if (strcmp(m->target, "ask") == 0)
		return ar_error_set_plain(
			err, EINVAL,
			"--net `ask`: expected a host pattern (HOST, *.DOMAIN, an address, each optionally with :PORT)");
	if (ar_egress_rule_parse(m->target, &r, err) < 0)
		return -1;
	if (!g->egress) {
		ar_egress_rule_release(&r);
		return ar_error_set_plain(
			err, EINVAL,
			"this sandbox has no egress proxy (it was started without --net allow=... or --net ask): a live --net grant needs one; restart it with --net allow=HOST");
	}
	pthread_mutex_lock(&g->lock);
	for (i = 0; i < g->n_rules; i++)
		if (same_rule(&g->rules[i], &r))
			break;
	if (!m->revoke && i == g->n_rules) {
		g->rules = ar_xrealloc(g->rules,
				       (g->n_rules + 1) * sizeof(*g->rules));
		g->rules[g->n_rules++] = r;
		memset(&r, 0, sizeof(r));
	} else if (m->revoke && i < g->n_rules) {
		ar_egress_rule_release(&g->rules[i]);
		memmove(&g->rules[i], &g->rules[i + 1],
			(g->n_rules - i - 1) * sizeof(*g->rules));
		g->n_rules--;
	} else if (m->revoke && ctl_queue_forget_session(g->q, m->target)) {
		/* not a live grant: a `session` answer of that HOST:PORT */
		pthread_mutex_unlock(&g->lock);
		ar_egress_rule_release(&r);
		snprintf(
			done, dsize,
			"revoked the session answer for %s: its next connection asks again; established ones are not cut",
			m->target);
		return 0;
	} else {
		pthread_mutex_unlock(&g->lock);
		ar_egress_rule_release(&r);
		if (m->revoke)
			return ar_error_set_plain(
				err, ENOENT,
				"--net `%s` was not granted (agentrun sandbox allow)",
				m->target);
		return ar_error_set_plain(err, EEXIST,
					  "--net `%s` is granted already",
					  m->target);
	}
	pthread_mutex_unlock(&g->lock);
	if (!m->revoke) {
		/* what waits on an ask it matches goes through */
		size_t n = ctl_queue_grant_matching(g->q, pending_match,
						    &g->rules[g->n_rules - 1]);

		snprintf(done, dsize, "granted --net %s%s", m->target,
			 n ? " (pending requests it matches went through)" :
			     "");
	} else {
		ctl_queue_forget_session(g->q, m->target);
		ar_egress_rule_release(&r);
		snprintf(
			done, dsize,
			"revoked --net %s: new connections are refused; established ones are not cut",
			m->target);
	}
	return 0;
}

/* ---- --ro / --rw ---- */

static ssize_t mnt_find(const struct ctl_grants *g, const char *path)
{
	for (size_t i = 0; i < g->n_mnts; i++)
		if (strcmp(g->mnts[i].path, path) == 0)
			return (ssize_t)i;
	return -1;
}

static int path_apply(struct ctl_grants *g, const struct ctl_msg *m, char *done,
		      size_t dsize, struct ar_error *err)
{
	bool rw = strcmp(m->kind, "rw") == 0;
	ssize_t at = mnt_find(g, m->target);
	_cleanup_free_ char *real = NULL;
	char **protect = NULL;
	size_t n_prot = 0, n_absent = 0, n_ph = 0;
	_cleanup_free_ char *absent = NULL;
	struct ctl_grant_mnt mt;
	int fd = -1, r;

	if (g->pid <= 0)
		return ar_error_set_plain(
			err, EAGAIN,
			"the sandbox's process is not running yet");
	if (m->target[0] != '/')
		return ar_error_set_plain(
			err, EINVAL, "--%s `%s`: expected an absolute path",
			m->kind, m->target);
	if (m->revoke) {
		if (at < 0)
			return ar_error_set_plain(
				err, ENOENT,
				"--%s `%s` was not granted (agentrun sandbox allow)",
				m->kind, m->target);
		_cleanup_free_ char *first = NULL;
		size_t n;

		if (ctl_mount_remove(g->pid, g->pidfd, g->mnts[at].fd,
				     m->target, err) < 0)
			return -1;
		/* detached: its placeholders can go (the last one out) */
		if (g->done)
			g->done(m->target, g->mnts[at].rw, CTL_PATH_REVOKED,
				g->check_data);
		n = created(&g->mnts[at], &first);
		mnt_release(&g->mnts[at], false);
		memmove(&g->mnts[at], &g->mnts[at + 1],
			(g->n_mnts - (size_t)at - 1) * sizeof(*g->mnts));
		g->n_mnts--;
		if (n)
			snprintf(
				done, dsize,
				"revoked --%s %s: detached; WARNING: the agent created %zu watched protected path(s) there, such as `%s`: review them before your tools run them",
				m->kind, m->target, n, first);
		else
			snprintf(done, dsize, "revoked --%s %s: detached",
				 m->kind, m->target);
		return 0;
	}
	if (at >= 0)
		return ar_error_set_plain(
			err, EEXIST,
			"`%s` is granted already (--%s); revoke it first",
			m->target, g->mnts[at].rw ? "rw" : "ro");
	real = realpath(m->target, NULL);
	if (!real)
		return ar_error_set(err, errno, "--%s `%s`", m->kind,
				    m->target);
	if (strcmp(real, m->target) != 0)
		return ar_error_set_plain(
			err, EINVAL,
			"--%s `%s`: expected a real path (it resolves to `%s`)",
			m->kind, m->target, real);
	if (!g->check)
		return ar_error_set_plain(err, ENOTSUP,
					  "this sandbox takes no path grant");
	if (g->check(real, rw, m->force, &protect, g->check_data, err) < 0)
		return -1;
	r = ctl_mount_add(g->pid, g->pidfd, real, rw,
			  (const char *const *)protect, &fd, err);
	mt = (struct ctl_grant_mnt){ .path = ar_xstrdup(real),
				     .rw = rw,
				     .fd = fd };
	for (size_t i = 0; protect && protect[i]; i++) {
		n_prot += protect[i][0] == 'r';
		n_ph += protect[i][0] == 'h';
		if (protect[i][0] == 'a') {
			if (n_absent++ == 0)
				absent = ar_xstrdup(protect[i] + 1);
			mt.absent = ar_xrealloc(
				mt.absent, (mt.n_absent + 1) * sizeof(char *));
			mt.absent[mt.n_absent++] = ar_xstrdup(protect[i] + 1);
		}
		free(protect[i]);
	}
	free(protect);
	if (g->done)
		g->done(real, rw, r < 0 ? CTL_PATH_FAILED : CTL_PATH_GRANTED,
			g->check_data);
	if (r < 0) {
		mnt_release(&mt, false);
		return ar_error_wrap(err, "--%s `%s`", m->kind, m->target);
	}
	g->mnts = ar_xrealloc(g->mnts, (g->n_mnts + 1) * sizeof(*g->mnts));
	g->mnts[g->n_mnts++] = mt;
	if (rw && (n_prot || n_ph || n_absent))
		snprintf(
			done, dsize,
			"granted --rw %s (%zu protected path(s) inside kept read-only, %zu missing one(s) held by a read-only placeholder%s%s%s)",
			real, n_prot, n_ph,
			n_absent ?
				"; watched, reported if the agent makes one: " :
				"",
			n_absent ? absent : "",
			n_absent > 1 ? " and others" : "");
	else
		snprintf(done, dsize, "granted --%s %s", m->kind, real);
	return 0;
}

int ctl_grants_apply(struct ctl_grants *g, const struct ctl_msg *m, char *done,
		     size_t dsize, struct ar_error *err)
{
	if (strcmp(m->kind, "net") == 0)
		return net_apply(g, m, done, dsize, err);
	return path_apply(g, m, done, dsize, err);
}

void ctl_grants_list(struct ctl_grants *g, struct ar_jbuf *b)
{
	bool first = true;

	ar_jbuf_lit(b, "[");
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->n_rules; i++, first = false) {
		ar_jbuf_addf(
			b, "%s{\"kind\":\"net\",\"target\":", first ? "" : ",");
		ar_jbuf_cstr(b, g->rules[i].text);
		ar_jbuf_lit(b, "}");
	}
	pthread_mutex_unlock(&g->lock);
	for (size_t i = 0; i < g->n_mnts; i++, first = false) {
		ar_jbuf_addf(b,
			     "%s{\"kind\":\"%s\",\"target\":", first ? "" : ",",
			     g->mnts[i].rw ? "rw" : "ro");
		ar_jbuf_cstr(b, g->mnts[i].path);
		ar_jbuf_lit(b, "}");
	}
	ar_jbuf_lit(b, "]");
}
