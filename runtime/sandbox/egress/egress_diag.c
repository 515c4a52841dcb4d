/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The egress proxy's decisions while the sandbox runs (egress_diag.h). */
#define _GNU_SOURCE
#include "egress_diag.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

#define DIAG_NAMED 3 /* targets named in the summary */

struct ar_egress_diag {
	bool verbose;
	const char *audit_path;
	ar_egress_event_fn next;
	void *next_data;
	pthread_mutex_t lock; /* everything below */
	size_t n_blocked, n_targets;
	struct {
		char target[280];
		char why[200];
		size_t count;
	} named[DIAG_NAMED];
	/* --secret: requests sent without their value (or refused) */
	size_t n_withheld;
	char withheld_first[600]; /* "host:port (why: asked)" */
	/* --secret: placeholders sent to a host their secret does not
	 * list: the first line, said once at the end */
	size_t n_out;
	char out_first[700];
	int fd; /* the fallback log (no --log), -1 until the first line */
	bool fd_failed;
	char *path; /* the file holding the details */
	bool summarised;
};

struct ar_egress_diag *ar_egress_diag_new(bool verbose, const char *audit_path,
					  ar_egress_event_fn next,
					  void *next_data)
{
	struct ar_egress_diag *d = ar_xcalloc(1, sizeof(*d));

	d->verbose = verbose;
	d->audit_path =
		audit_path && strcmp(audit_path, "-") != 0 ? audit_path : NULL;
	d->next = next;
	d->next_data = next_data;
	d->fd = -1;
	pthread_mutex_init(&d->lock, NULL);
	return d;
}

void ar_egress_diag_free(struct ar_egress_diag *d)
{
	if (!d)
		return;
	if (d->fd >= 0)
		close(d->fd);
	free(d->path);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/* The --log file's path (for the summary), the other destination's name
 * (syslog, the journal), or NULL. */
static char *log_path(void)
{
	char proc[64], buf[4096];
	ssize_t n;

	if (ar_log_fd() < 0)
		return ar_log_destination() ? ar_xstrdup(ar_log_destination()) :
					      NULL;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", ar_log_fd());
	n = readlink(proc, buf, sizeof(buf) - 1);
	if (n <= 0)
		return ar_xstrdup("the --log file");
	buf[n] = '\0';
	return ar_xstrdup(buf);
}

/* $XDG_STATE_HOME/agentrun/egress.log (default ~/.local/state/...),
 * opened for appending; the directories are made 0700. */
static int fallback_open(struct ar_egress_diag *d)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	_cleanup_free_ char *dir = NULL;
	struct passwd *pw;

	if (!home || home[0] != '/') {
		pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (state && state[0] == '/')
		dir = ar_xasprintf("%s/agentrun", state);
	else if (home)
		dir = ar_xasprintf("%s/.local/state/agentrun", home);
	else
		return -1;
	if (ar_mkdir_p(dir, 0700) < 0)
		return -1;
	d->path = ar_xasprintf("%s/egress.log", dir);
	d->fd = open(d->path,
		     O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		     0600);
	if (d->fd < 0) {
		free(d->path);
		d->path = NULL;
		return -1;
	}
	return 0;
}

/* "host:port" ("[v6]:port") and the reason's middle part: what comes
 * after the dash, up to the advice. */
static void remember(struct ar_egress_diag *d, const struct ar_egress_event *ev)
{
	const char *dash = ev->reason ? strstr(ev->reason, " \xe2\x80\x94 ") :
					NULL;
	char target[280];
	size_t wl;

	if (ev->port == 0) /* a DNS name */
		snprintf(target, sizeof(target), "%s",
			 ev->host ? ev->host : "?");
	else
		snprintf(target, sizeof(target), "%s%s%s:%u",
			 strchr(ev->host ? ev->host : "", ':') ? "[" : "",
			 ev->host ? ev->host : "?",
			 strchr(ev->host ? ev->host : "", ':') ? "]" : "",
			 (unsigned)ev->port);
	d->n_blocked++;
	for (size_t i = 0; i < d->n_targets; i++) {
		if (strcmp(d->named[i].target, target) == 0) {
			d->named[i].count++;
			return;
		}
	}
	if (d->n_targets == DIAG_NAMED)
		return; /* among the "N more" */
	d->n_targets++;
	d->named[d->n_targets - 1].count = 1;
	memcpy(d->named[d->n_targets - 1].target, target, sizeof(target));
	if (!dash) {
		d->named[d->n_targets - 1].why[0] = '\0';
		return;
	}
	dash += 5;
	wl = strcspn(dash, ";");
	snprintf(d->named[d->n_targets - 1].why, sizeof(d->named[0].why),
		 "%.*s", (int)wl, dash);
}

static void remember_withheld(struct ar_egress_diag *d,
			      const struct ar_egress_event *ev)
{
	const char *dash = strstr(ev->reason, " \xe2\x80\x94 ");

	if (d->n_withheld++ > 0)
		return;
	snprintf(d->withheld_first, sizeof(d->withheld_first), "%s%s%s:%u (%s)",
		 strchr(ev->host, ':') ? "[" : "", ev->host,
		 strchr(ev->host, ':') ? "]" : "", (unsigned)ev->port,
		 dash ? dash + 5 : "");
}

static void write_line(int fd, const char *s)
{
	(void)!ar_write_all(fd, s, strlen(s));
}

void ar_egress_diag_event(const struct ar_egress_event *ev, void *data)
{
	struct ar_egress_diag *d = data;

	if (!ev->allowed && ev->reason) {
		char line[1200];

		pthread_mutex_lock(&d->lock);
		if (ev->placeholder_out && d->n_out++ == 0)
			snprintf(d->out_first, sizeof(d->out_first), "%s",
				 ev->reason);
		if (ev->withheld)
			remember_withheld(d, ev);
		else if (ev->denied)
			remember(d, ev);
		if (d->verbose) {
			snprintf(line, sizeof(line), "%s\n", ev->reason);
			write_line(STDERR_FILENO, line);
		}
		if (ar_log_has_destination()) {
			/* ar_log: info lines go to the destination only */
			ar_log(AR_LOG_INFO, "%s", ev->reason);
		} else if (!d->fd_failed &&
			   (d->fd >= 0 || fallback_open(d) == 0)) {
			char ts[40];
			time_t now = time(NULL);
			struct tm tm;

			gmtime_r(&now, &tm);
			strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
			snprintf(line, sizeof(line), "%s [%d] %s\n", ts,
				 (int)getpid(), ev->reason);
			write_line(d->fd, line);
		} else {
			d->fd_failed = true;
		}
		pthread_mutex_unlock(&d->lock);
	} else if (ev->allowed) {
		ar_debug("egress: %s %s:%u via %s allowed", ev->proto, ev->host,
			 (unsigned)ev->port, ev->addr ? ev->addr : "?");
	}
	if (d->next)
		d->next(ev, d->next_data);
}

/* Where the details are, for the summary lines: " — see FILE" */
static void see_where(struct ar_egress_diag *d, char *line, size_t size,
		      size_t o)
{
	_cleanup_free_ char *lp = log_path();
	const char *where = lp ? lp : d->audit_path ? d->audit_path : d->path;

	if (o >= size)
		return;
	if (where)
		snprintf(line + o, size - o, " \xe2\x80\x94 see %s", where);
	else
		snprintf(
			line + o, size - o,
			" \xe2\x80\x94 run with --verbose or --log FILE for each one");
}

void ar_egress_diag_summary(struct ar_egress_diag *d)
{
	char line[2048];
	size_t o, more;

	if (!d || d->summarised)
		return;
	d->summarised = true;
	if (d->n_out) {
		o = (size_t)snprintf(line, sizeof(line), "%s", d->out_first);
		if (d->n_out > 1 && o < sizeof(line))
			o += (size_t)snprintf(line + o, sizeof(line) - o,
					      " (%zu requests)", d->n_out);
		see_where(d, line, sizeof(line), o);
		ar_log_summary(line);
	}
	if (d->n_withheld) {
		o = (size_t)snprintf(
			line, sizeof(line),
			"agentrun: %zu request%s through a --secret connection %s not for its host and got no value: %s%s",
			d->n_withheld, d->n_withheld == 1 ? "" : "s",
			d->n_withheld == 1 ? "was" : "were", d->withheld_first,
			d->n_withheld > 1 ? " and others" : "");
		see_where(d, line, sizeof(line), o);
		ar_log_summary(line);
	}
	if (d->n_blocked == 0)
		return;
	o = (size_t)snprintf(line, sizeof(line),
			     "agentrun: %zu connection%s blocked:",
			     d->n_blocked, d->n_blocked == 1 ? "" : "s");
	more = d->n_blocked;
	for (size_t i = 0; i < d->n_targets && o < sizeof(line); i++) {
		more -= d->named[i].count;
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s %s%s%s%s",
				      i ? "," : "", d->named[i].target,
				      d->named[i].why[0] ? " (" : "",
				      d->named[i].why,
				      d->named[i].why[0] ? ")" : "");
		if (d->named[i].count > 1 && o < sizeof(line))
			o += (size_t)snprintf(line + o, sizeof(line) - o,
					      " %zu times", d->named[i].count);
	}
	if (more && o < sizeof(line))
		o += (size_t)snprintf(line + o, sizeof(line) - o,
				      " and %zu more", more);
	see_where(d, line, sizeof(line), o);
	ar_log_summary(line);
}
