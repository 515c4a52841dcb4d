/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CLI's side of the control plane (control.h): `agentrun sandbox
 * requests [NAME] [--json]` and `agentrun sandbox answer NAME ID ANSWER`
 * talk to ROOT/.control/NAME.sock (control_proto.h).
 */
#define _GNU_SOURCE
#include "control.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "audit/audit.h"
#include "control_proto.h"
#include "json_tree.h"
#include "state.h"
#include "utils.h"

#define REPLY_MAX (1 << 20)
#define REPLY_TIMEOUT_MS 5000
#define GRANT_TIMEOUT_MS 60000

/* Connect to NAME's socket: the fd, or -1 with err. */
int ar_control_connect(const char *root, const char *name, struct ar_error *err)
{
	_cleanup_free_ char *dir = ar_xasprintf("%s/.control", root);
	_cleanup_free_ char *path = ar_xasprintf("%s/%s.sock", dir, name);
	_cleanup_close_ int dfd = -1;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, e;

	/* a name from a client (the web dashboard's requests too) never
	 * leaves ROOT/.control */
	if (ar_state_validate_id(name, err) < 0)
		return -1;
	if (strlen(path) < sizeof(sa.sun_path)) {
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	} else {
		dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return ar_error_set(err, errno, "control plane: `%s`",
					    dir);
		snprintf(sa.sun_path, sizeof(sa.sun_path),
			 "/proc/self/fd/%d/%s.sock", dfd, name);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ar_error_set(err, errno, "control plane: socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		close(fd);
		if (e == ENOENT || e == ECONNREFUSED)
			return ar_error_set_plain(
				err, ENOENT,
				"no sandbox named `%s` is running (agentrun sandbox list; agentrun sandbox requests)",
				name);
		return ar_error_set(err, e, "control plane: connect to `%s`",
				    path);
	}
	return fd;
}

/* Send one request line, read the reply line into *out (malloc'd,
 * NUL-ended, without its newline), waiting at most timeout_ms. */
static int ctl_call_wait(int fd, const char *req, char **out, int timeout_ms,
			 struct ar_error *err)
{
	size_t got = 0, cap = 4096;
	char *buf;

	*out = NULL;
	if (ar_write_all(fd, req, strlen(req)) < 0)
		return ar_error_set(err, errno, "control plane: send");
	buf = ar_xmalloc(cap);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *nl;
		ssize_t n;

		if (poll(&p, 1, timeout_ms) <= 0) {
			free(buf);
			return ar_error_set_plain(
				err, ETIMEDOUT,
				"control plane: no reply within %d ms",
				timeout_ms);
		}
		if (got + 1 >= cap) {
			if (cap >= REPLY_MAX) {
				free(buf);
				return ar_error_set_plain(
					err, EMSGSIZE,
					"control plane: reply too large");
			}
			cap *= 2;
			buf = ar_xrealloc(buf, cap);
		}
		n = read(fd, buf + got, cap - got - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return ar_error_set_plain(
				err, EPIPE,
				"control plane: the sandbox closed the connection without a reply");
		}
		got += (size_t)n;
		buf[got] = '\0';
		nl = strchr(buf, '\n');
		if (nl) {
			*nl = '\0';
			*out = buf;
			return 0;
		}
	}
}

int ar_control_call(int fd, const char *req, char **out, struct ar_error *err)
{
	return ctl_call_wait(fd, req, out, REPLY_TIMEOUT_MS, err);
}

static const char *str_of(const struct jt_node *o, const char *key)
{
	const struct jt_node *n = jt_get(o, key);

	return n && (n->type == JT_STRING || n->type == JT_NUMBER) ?
		       n->u.str.s :
		       NULL;
}

/* The reply's tree; -1 with err when it is not {"ok":true,...}. */
static int reply_parse(struct ar_arena *a, const char *line,
		       struct jt_node **root, struct ar_error *err)
{
	const struct jt_node *ok;

	if (jt_parse(a, line, strlen(line), "control reply", root, err) < 0)
		return -1;
	if ((*root)->type != JT_OBJECT)
		return ar_error_set_plain(
			err, EPROTO, "control plane: a reply not an object");
	ok = jt_get(*root, "ok");
	if (!ok || ok->type != JT_TRUE) {
		const char *msg = str_of(*root, "error");

		return ar_error_set_plain(err, EPERM, "%s",
					  msg ? msg : "control plane: refused");
	}
	return 0;
}

/* The names of the live control sockets of ROOT, sorted. */
char **ar_control_names(const char *root, size_t *n)
{
	_cleanup_free_ char *dir = ar_xasprintf("%s/.control", root);
	struct dirent **ents = NULL;
	char **v;
	int k;

	*n = 0;
	k = scandir(dir, &ents, NULL, alphasort);
	if (k < 0)
		return ar_xcalloc(1, sizeof(char *));
	v = ar_xcalloc((size_t)k + 1, sizeof(char *));
	for (int i = 0; i < k; i++) {
		size_t l = strlen(ents[i]->d_name);

		struct ar_error e = AR_ERROR_INIT;
		_cleanup_free_ char *name = NULL;

		if (ents[i]->d_name[0] != '.' && l > 5 &&
		    strcmp(ents[i]->d_name + l - 5, ".sock") == 0) {
			name = ar_xasprintf("%.*s", (int)(l - 5),
					    ents[i]->d_name);
			if (ar_state_validate_id(name, &e) == 0)
				v[(*n)++] = ar_steal_ptr(&name);
			ar_error_clear(&e);
		}
		free(ents[i]);
	}
	free(ents);
	return v;
}

static void print_text(FILE *out, const struct jt_node *reqs, bool *header)
{
	for (const struct jt_node *r = reqs->u.kids.first; r; r = r->next) {
		const char *addr = str_of(r, "address");
		const char *pid = str_of(r, "pid"), *exe = str_of(r, "exe");
		const char *from = str_of(r, "from");
		const char *expl = str_of(r, "explanation");
		_cleanup_free_ char *why = NULL;

		/* the agent's own request: its words, quoted by the sandbox
		 * (ar_quote: printable ASCII only) */
		if (from && strcmp(from, "agent") == 0)
			why = ar_xasprintf("asked by the agent: %s",
					   expl ? expl : "(no explanation)");

		if (!*header) {
			fprintf(out, "%-20s %-6s %-20s %-32s %-16s %-21s %s\n",
				"SANDBOX", "ID", "SINCE", "TARGET", "ADDRESS",
				"REASON", "PROCESS");
			*header = true;
		}
		fprintf(out, "%-20s %-6s %-20.19s %-32s %-16s %-21s %s%s%s\n",
			str_of(r, "sandbox") ? str_of(r, "sandbox") : "?",
			str_of(r, "id") ? str_of(r, "id") : "?",
			str_of(r, "since") ? str_of(r, "since") : "-",
			str_of(r, "target") ? str_of(r, "target") : "?",
			addr ? addr : "-",
			why		    ? why :
			str_of(r, "reason") ? str_of(r, "reason") :
					      "",
			pid ? pid : "-", exe ? " " : "", exe ? exe : "");
	}
}

int ar_sandbox_requests(const char *root, const char *name, bool json,
			FILE *out, struct ar_error *err)
{
	char **names;
	size_t n = 0;
	bool header = false, first = true;
	int rc = 0;

	if (name) {
		if (ar_state_validate_id(name, err) < 0)
			return -1;
		names = ar_xcalloc(2, sizeof(char *));
		names[0] = ar_xstrdup(name);
		n = 1;
	} else {
		names = ar_control_names(root, &n);
	}
	if (json)
		fputs("[", out);
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *line = NULL;
		_cleanup_close_ int fd = -1;
		struct ar_arena a = { 0 };
		struct ar_error e = AR_ERROR_INIT;
		struct jt_node *root_node = NULL;
		const struct jt_node *reqs;
		const char *s;
		char *end;

		fd = ar_control_connect(root, names[i], &e);
		if (fd < 0 ||
		    ar_control_call(fd, "{\"op\":\"requests\"}\n", &line, &e) <
			    0 ||
		    reply_parse(&a, line, &root_node, &e) < 0) {
			oci_arena_free(&a);
			if (name) { /* asked for: an error */
				*err = e;
				rc = -1;
			}
			continue; /* a stale socket of an ended sandbox */
		}
		reqs = jt_get(root_node, "requests");
		if (reqs && reqs->type == JT_ARRAY && json) {
			/* the array's items as the sandbox wrote them */
			s = strstr(line, "\"requests\":[");
			end = strrchr(line, ']');
			if (s && end && end > s + 12) {
				fprintf(out, "%s%.*s", first ? "" : ",",
					(int)(end - (s + 12)), s + 12);
				first = false;
			}
		} else if (reqs && reqs->type == JT_ARRAY) {
			print_text(out, reqs, &header);
		}
		oci_arena_free(&a);
	}
	if (json)
		fputs("]\n", out);
	else if (!header && rc == 0)
		fprintf(out, "no pending request%s%s\n", name ? " in " : "",
			name ? name : "");
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int ar_sandbox_answer(const char *root, const char *name, const char *id,
		      const char *answer, FILE *out, struct ar_error *err)
{
	return ar_sandbox_answer_via(root, name, id, answer, "cli", out, err);
}

int ar_sandbox_answer_via(const char *root, const char *name, const char *id,
			  const char *answer, const char *iface, FILE *out,
			  struct ar_error *err)
{
	_cleanup_free_ char *line = NULL;
	_cleanup_close_ int fd = -1;
	struct ar_jbuf req = { 0 };
	struct ar_arena a = { 0 };
	struct jt_node *node = NULL;
	int r;

	if (ar_state_validate_id(name, err) < 0)
		return -1;
	if (ctl_answer_parse(answer) == CTL_ANSWER_NONE)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox answer: `%s`: expected once, session, always or refuse",
			answer);
	if (!*id || strspn(id, "0123456789") != strlen(id))
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox answer: `%s`: expected a request ID (a number: agentrun sandbox requests %s)",
			id, name);
	fd = ar_control_connect(root, name, err);
	if (fd < 0)
		return ar_error_wrap(err, "sandbox answer");
	ar_jbuf_lit(&req, "{\"op\":\"answer\",\"id\":");
	ar_jbuf_cstr(&req, id);
	ar_jbuf_lit(&req, ",\"answer\":");
	ar_jbuf_cstr(&req, answer);
	ar_jbuf_lit(&req, ",\"interface\":");
	ar_jbuf_cstr(&req, iface);
	ar_jbuf_lit(&req, "}\n");
	r = ar_control_call(fd, req.p, &line, err);
	ar_jbuf_free(&req);
	if (r == 0)
		r = reply_parse(&a, line, &node, err);
	if (r == 0 && str_of(node, "diff"))
		fputs(str_of(node, "diff"), out);
	oci_arena_free(&a);
	if (r < 0)
		return ar_error_wrap(err, "sandbox answer %s %s", name, id);
	return 0;
}

int ar_sandbox_grant(const char *root, const char *name, bool revoke,
		     const char *kind, const char *target, bool force,
		     FILE *out, struct ar_error *err)
{
	const char *verb = revoke ? "revoke" : "allow";
	_cleanup_free_ char *line = NULL;
	_cleanup_free_ char *real = NULL;
	_cleanup_close_ int fd = -1;
	struct ar_jbuf req = { 0 };
	struct ar_arena a = { 0 };
	struct jt_node *node = NULL;
	int r;

	if (ar_state_validate_id(name, err) < 0)
		return -1;
	if (strcmp(kind, "net") != 0) {
		/* the path the user means, real (the sandbox checks it
		 * again: it is the one that mounts) */
		real = realpath(target, NULL);
		if (!real && !(revoke && target[0] == '/'))
			return ar_error_set(err, errno, "sandbox %s: --%s `%s`",
					    verb, kind, target);
		if (!real)
			real = ar_xstrdup(target);
	}
	fd = ar_control_connect(root, name, err);
	if (fd < 0)
		return ar_error_wrap(err, "sandbox %s", verb);
	ar_jbuf_lit(&req, "{\"op\":");
	ar_jbuf_cstr(&req, verb);
	ar_jbuf_lit(&req, ",\"kind\":");
	ar_jbuf_cstr(&req, kind);
	ar_jbuf_lit(&req, ",\"target\":");
	ar_jbuf_cstr(&req, real ? real : target);
	ar_jbuf_addf(&req, ",\"force\":%s,\"interface\":\"cli\"}\n",
		     force ? "true" : "false");
	/* a --rw grant looks for the protected paths of its tree first
	 * (SB_PROTECT_MAX_DIRS directories at most) */
	r = ctl_call_wait(fd, req.p, &line, GRANT_TIMEOUT_MS, err);
	ar_jbuf_free(&req);
	if (r == 0)
		r = reply_parse(&a, line, &node, err);
	if (r == 0 && str_of(node, "done"))
		fprintf(out, "%s: %s\n", name, str_of(node, "done"));
	oci_arena_free(&a);
	if (r < 0)
		return ar_error_wrap(err, "sandbox %s %s", verb, name);
	return 0;
}

/* One line of the policy: WHAT, the target, (FROM); the sandbox's
 * strings quoted (a host an agent asked for is the agent's). */
static void policy_line(FILE *out, const char *what, const char *target,
			const char *from)
{
	_cleanup_free_ char *t = ar_quote(target ? target : "?");

	fprintf(out, "  %-18s %-36s %s\n", what, t, from);
}

static void policy_text(FILE *out, const char *name, const struct jt_node *p)
{
	const struct jt_node *n, *x;
	const struct jt_node *egress = jt_get(p, "egress");
	const struct jt_node *ask = jt_get(p, "ask");

	fprintf(out, "sandbox %s: the network policy in force\n", name);
	if (!egress || egress->type != JT_TRUE) {
		fprintf(out,
			"  no egress proxy: the network is as --net says (none, or the host's)\n");
		return;
	}
	n = jt_get(p, "allow");
	for (x = n && n->type == JT_ARRAY ? n->u.kids.first : NULL; x;
	     x = x->next)
		if (x->type == JT_STRING)
			policy_line(out, "allow", x->u.str.s,
				    "(start: --net allow, profile)");
	n = jt_get(p, "secrets");
	for (x = n && n->type == JT_ARRAY ? n->u.kids.first : NULL; x;
	     x = x->next) {
		const struct jt_node *h = jt_get(x, "hosts");
		_cleanup_free_ char *what = ar_xasprintf(
			"secret %s",
			str_of(x, "name") ? str_of(x, "name") : "?");

		for (h = h && h->type == JT_ARRAY ? h->u.kids.first : NULL; h;
		     h = h->next)
			if (h->type == JT_STRING)
				policy_line(
					out, what, h->u.str.s,
					"(start: --secret; its value is never shown)");
	}
	n = jt_get(p, "grants");
	for (x = n && n->type == JT_ARRAY ? n->u.kids.first : NULL; x;
	     x = x->next) {
		_cleanup_free_ char *what = ar_xasprintf(
			"grant --%s",
			str_of(x, "kind") ? str_of(x, "kind") : "?");

		policy_line(out, what, str_of(x, "target"),
			    "(agentrun sandbox allow)");
	}
	n = jt_get(p, "session");
	for (x = n && n->type == JT_ARRAY ? n->u.kids.first : NULL; x;
	     x = x->next) {
		_cleanup_free_ char *from = ar_xasprintf(
			"(answer by uid %s, %s)",
			str_of(x, "uid") ? str_of(x, "uid") : "?",
			str_of(x, "interface") ? str_of(x, "interface") : "?");

		policy_line(out,
			    str_of(x, "answer") ? str_of(x, "answer") : "?",
			    str_of(x, "target"), from);
	}
	fprintf(out, "  anything else: %s\n",
		ask && ask->type == JT_TRUE ?
			"asked (--net ask: agentrun sandbox requests)" :
			"refused");
}

int ar_sandbox_policy(const char *root, const char *name, bool json, FILE *out,
		      struct ar_error *err)
{
	_cleanup_free_ char *line = NULL;
	_cleanup_close_ int fd = -1;
	struct ar_arena a = { 0 };
	struct jt_node *node = NULL;
	int r;

	fd = ar_control_connect(root, name, err);
	if (fd < 0)
		return ar_error_wrap(err, "sandbox policy");
	r = ar_control_call(fd, "{\"op\":\"policy\"}\n", &line, err);
	if (r == 0)
		r = reply_parse(&a, line, &node, err);
	if (r == 0 && json)
		fprintf(out, "%s\n", line);
	else if (r == 0)
		policy_text(out, name, node);
	oci_arena_free(&a);
	if (r < 0)
		return ar_error_wrap(err, "sandbox policy %s", name);
	return 0;
}
