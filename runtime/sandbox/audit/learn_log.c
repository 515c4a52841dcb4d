/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * agentrun sandbox learn --from LOG (learn.h): an audit log's would-be
 * refusals (would_deny of --shadow) and allowlist refusals (proxy events
 * refused as "not in the allowlist") become allowlist entries, through
 * the --learn run's own rules (sb_learn_egress_event).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "audit.h"
#include "egress/egress_proxy.h"
#include "json_tree.h"
#include "learn.h"
#include "log.h"
#include "utils.h"

#define LOG_LINE_MAX (1024 * 1024)

static const char *str_of(const struct jt_node *o, const char *key)
{
	const struct jt_node *n = jt_get(o, key);

	if (!n || n->type != JT_STRING || strlen(n->u.str.s) != n->u.str.len)
		return NULL;
	return n->u.str.s;
}

static bool port_of(const struct jt_node *o, uint16_t *port)
{
	const struct jt_node *n = jt_get(o, "port");
	char *end;
	unsigned long v;

	if (!n || n->type != JT_NUMBER)
		return false;
	errno = 0;
	v = strtoul(n->u.str.s, &end, 10);
	if (errno || *end || v == 0 || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

/* One event: 1 when it is a would-be or an allowlist refusal (fed to l),
 * 0 when it is another event. */
static int take_event(struct sb_learn *l, const struct jt_node *ev,
		      char ***argv)
{
	const char *event = str_of(ev, "event"), *host, *reason, *kind;
	const struct jt_node *allowed;
	struct ar_egress_event e = { 0 };
	uint16_t port;

	if (!event)
		return 0;
	if (strcmp(event, "start") == 0 && !*argv) {
		const struct jt_node *a = jt_get(ev, "argv");
		size_t n = 0;

		if (a && a->type == JT_ARRAY) {
			*argv = ar_xcalloc(a->n + 1, sizeof(char *));
			jt_foreach(it, a) {
				if (it->type == JT_STRING)
					(*argv)[n++] = ar_xstrdup(it->u.str.s);
			}
		}
		return 0;
	}
	host = str_of(ev, "host");
	if (!host || !*host || !port_of(ev, &port))
		return 0;
	if (strcmp(event, "would_deny") == 0) {
		kind = str_of(ev, "kind");
		if (!kind || strcmp(kind, "net") != 0)
			return 0;
	} else if (strcmp(event, "proxy") == 0) {
		allowed = jt_get(ev, "allowed");
		reason = str_of(ev, "reason");
		/* refused by the rules, not by an address class or a limit */
		if (!allowed || allowed->type != JT_FALSE || !reason ||
		    !strstr(reason, "not in the allowlist"))
			return 0;
	} else {
		return 0;
	}
	e.proto = "learn";
	e.host = host;
	e.port = port;
	e.addr = str_of(ev, "address");
	e.allowed = true;
	sb_learn_egress_event(&e, l);
	return 1;
}

int sb_learn_from_log(const char *log, const char *profile, const char *home,
		      const char *workspace, FILE *out, struct ar_error *err)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	struct sb_learn *l;
	struct ar_jbuf b = { 0 };
	char **argv = NULL;
	size_t cap = 0, lineno = 0, found = 0, n;
	ssize_t len;
	int r = 0;

	f = fopen(log, "re");
	if (!f)
		return ar_error_set(err, errno, "sandbox learn: open `%s`",
				    log);
	l = sb_learn_new(home, workspace, NULL);
	while ((len = getline(&line, &cap, f)) >= 0) {
		struct ar_arena a = { 0 };
		struct ar_error je = AR_ERROR_INIT;
		struct jt_node *ev = NULL;
		bool last = len == 0 || line[len - 1] != '\n';

		lineno++;
		if (len > LOG_LINE_MAX) {
			r = ar_error_set_plain(
				err, EINVAL,
				"sandbox learn: %s:%zu: a line longer than %d bytes: not an audit log (docs/audit.md)",
				log, lineno, LOG_LINE_MAX);
			break;
		}
		while (len > 0 &&
		       (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (len == 0)
			continue;
		if (jt_parse(&a, line, (size_t)len, log, &ev, &je) < 0 ||
		    ev->type != JT_OBJECT) {
			oci_arena_free(&a);
			/* a run killed mid-line leaves its last line cut */
			if (last) {
				ar_warn("sandbox learn: %s:%zu: the last line is cut (a killed run?): skipped",
					log, lineno);
				break;
			}
			r = ar_error_set_plain(
				err, EINVAL,
				"sandbox learn: %s:%zu: not a JSON object: not an audit log (docs/audit.md)",
				log, lineno);
			break;
		}
		found += (size_t)take_event(l, ev, &argv);
		oci_arena_free(&a);
	}
	if (r == 0 && ferror(f))
		r = ar_error_set_plain(err, EIO,
				       "sandbox learn: read `%s`: an I/O error",
				       log);
	if (r == 0 && profile) {
		char *none[] = { (char *)log, NULL };

		r = sb_learn_write(l, profile, argv ? argv : none, err);
	}
	if (r == 0) {
		n = sb_learn_net_json(l, &b);
		if (!profile)
			fwrite(b.p, 1, b.len, out);
		fprintf(stderr,
			"agentrun: %zu would-be refusal%s in %s: %zu allowlist entr%s%s%s; review before use (docs/sandbox.md, \"Shadow mode\")\n",
			found, found == 1 ? "" : "s", log, n,
			n == 1 ? "y" : "ies", profile ? ", written to " : "",
			profile ? profile : "");
		ar_jbuf_free(&b);
	}
	if (argv) {
		for (size_t i = 0; argv[i]; i++)
			free(argv[i]);
		free(argv);
	}
	sb_learn_free(l);
	return r;
}
