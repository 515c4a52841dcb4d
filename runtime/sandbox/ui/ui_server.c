/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun ui` (ui.h): the listening socket on 127.0.0.1, the port
 * file, libmicrohttpd's daemon, and the checks every request passes
 * before ui_routes.c sees it (ui_auth.h).
 */
#define _GNU_SOURCE
#include "ui.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "ui_auth.h"
#include "ui_events.h"
#include "ui_mhd.h"
#include "ui_routes.h"
#include "utils.h"

#define BODY_MAX (64 * 1024)
#define CONNECTIONS_MAX 64

enum { ASSET_HTML, ASSET_JS, ASSET_CSS, ASSETS_N };
static const char *const asset_names[ASSETS_N] = { "index.html", "app.js",
						   "app.css" };
static const char *const asset_types[ASSETS_N] = {
	"text/html; charset=utf-8", "text/javascript; charset=utf-8",
	"text/css; charset=utf-8"
};

struct ui_srv {
	struct ui_auth auth;
	const char *root;
	char *asset[ASSETS_N];
	size_t asset_len[ASSETS_N];
};

struct ui_conn {
	struct ar_jbuf body;
	bool too_big;
	struct ui_session sess;
};

static int load_assets(struct ui_srv *s, const char *dir, struct ar_error *err)
{
	_cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return ar_error_set(
			err, errno,
			"ui: the page's files: `%s` (AGENTRUN_UI_DIR names another directory)",
			dir);
	for (int i = 0; i < ASSETS_N; i++)
		if (ar_read_file_at(dfd, asset_names[i], 1 << 20, &s->asset[i],
				    &s->asset_len[i], err) < 0)
			return ar_error_wrap(err, "ui: `%s/%s`", dir,
					     asset_names[i]);
	return 0;
}

static void add_common_headers(struct MHD_Response *resp)
{
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "Cross-Origin-Resource-Policy",
				"same-origin");
	MHD_add_response_header(resp, "Cross-Origin-Opener-Policy",
				"same-origin");
	MHD_add_response_header(
		resp, "Content-Security-Policy",
		"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
}

static enum MHD_Result send_buf(struct MHD_Connection *c, unsigned status,
				const char *type, const void *body, size_t len,
				const char *hname, const char *hval)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result r;

	if (!resp)
		return MHD_NO;
	add_common_headers(resp);
	MHD_add_response_header(resp, "Content-Type", type);
	if (hname)
		MHD_add_response_header(resp, hname, hval);
	r = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result send_reply(struct MHD_Connection *c,
				  struct ui_reply *rep)
{
	enum MHD_Result r = send_buf(c, rep->status, rep->type, rep->body,
				     rep->len, NULL, NULL);

	free(rep->body);
	return r;
}

static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status,
			      const char *msg)
{
	struct ui_reply rep = { 0 };

	ui_reply_error(&rep, status, msg);
	return send_reply(c, &rep);
}

static ssize_t stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
	ssize_t n = ui_stream_read(cls, buf, max);

	(void)pos;
	return n < 0 ? MHD_CONTENT_READER_END_WITH_ERROR : n;
}

static void stream_free(void *cls)
{
	ui_stream_free(cls);
}

static enum MHD_Result send_stream(struct ui_srv *s, struct MHD_Connection *c)
{
	struct ui_stream *st = ui_stream_new(s->root);
	struct MHD_Response *resp = MHD_create_response_from_callback(
		MHD_SIZE_UNKNOWN, 16 * 1024, stream_cb, st, stream_free);
	enum MHD_Result r;

	if (!resp) {
		ui_stream_free(st);
		return MHD_NO;
	}
	add_common_headers(resp);
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	r = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return r;
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static const char *query(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind,
				    const char *key, const char *value)
{
	unsigned *n = cls;

	(void)kind;
	(void)value;
	if (strcasecmp(key, "Host") == 0)
		n[0]++;
	else if (strcasecmp(key, "Origin") == 0)
		n[1]++;
	else if (strcasecmp(key, "X-CSRF-Token") == 0)
		n[2]++;
	return MHD_YES;
}

/* The checks of every request; 0 (and the session in conn) or the
 * response already queued (-1, with *ret). */
static int check(struct ui_srv *s, struct MHD_Connection *c, const char *url,
		 const char *method, struct ui_conn *conn, enum MHD_Result *ret)
{
	const char *origin = header(c, "Origin");
	const char *site = header(c, "Sec-Fetch-Site");
	const char *token = query(c, "token");
	const char *cookie;
	bool post = strcmp(method, "POST") == 0;
	unsigned n[3] = { 0 };

	/* one Host, at most one Origin and token: which of two would a
	 * check see, and which the browser meant? */
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, n);
	if (n[0] != 1 || n[1] > 1 || n[2] > 1) {
		*ret = refuse(c, n[0] != 1 ? 421 : 403,
			      "a repeated Host, Origin or X-CSRF-Token header");
		return -1;
	}
	/* DNS rebinding: a page of evil.example whose name now resolves
	 * to 127.0.0.1 sends Host: evil.example:PORT */
	if (!ui_auth_host_ok(&s->auth, header(c, "Host"))) {
		*ret = refuse(
			c, 421,
			"the Host header is not 127.0.0.1:PORT or localhost:PORT");
		return -1;
	}
	if ((origin && !ui_auth_origin_ok(&s->auth, origin)) ||
	    (site && strcmp(site, "same-origin") != 0 &&
	     strcmp(site, "none") != 0)) {
		*ret = refuse(c, 403, "a request from another origin");
		return -1;
	}
	if (!post && strcmp(method, "GET") != 0 &&
	    strcmp(method, "HEAD") != 0) {
		*ret = refuse(c, 405, "GET or POST only");
		return -1;
	}
	if (!post && strcmp(url, "/") == 0 && token) {
		struct ui_session sess;
		_cleanup_free_ char *cookie_hdr = NULL;
		const char *purpose = header(c, "Sec-Purpose");

		if (!purpose)
			purpose = header(c, "Purpose");
		/* the token is spent by a page load only: not by a HEAD, not
		 * by the browser's prefetch of a URL being typed */
		if (strcmp(method, "GET") != 0 ||
		    (purpose && strstr(purpose, "prefetch"))) {
			*ret = refuse(c, 403, "the link works for a page load");
			return -1;
		}
		if (!ui_auth_exchange(&s->auth, token, &sess)) {
			*ret = refuse(
				c, 403,
				"this link is not valid or was used already: start agentrun ui again for a new one");
			return -1;
		}
		cookie_hdr =
			ar_xasprintf("%s=%s; HttpOnly; SameSite=Strict; Path=/",
				     UI_COOKIE, sess.id);
		{
			struct MHD_Response *resp =
				MHD_create_response_from_buffer(
					0, (void *)"", MHD_RESPMEM_PERSISTENT);

			if (!resp) {
				*ret = MHD_NO;
				return -1;
			}
			add_common_headers(resp);
			MHD_add_response_header(resp, "Set-Cookie", cookie_hdr);
			MHD_add_response_header(resp, "Location", "/");
			*ret = MHD_queue_response(c, 303, resp);
			MHD_destroy_response(resp);
		}
		return -1;
	}
	cookie = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, UI_COOKIE);
	if (!ui_auth_session(&s->auth, cookie, &conn->sess)) {
		*ret = refuse(c, 403,
			      "no session: open the URL agentrun ui printed");
		return -1;
	}
	if (!post)
		return 0;
	if (!origin) {
		*ret = refuse(c, 403, "a POST without an Origin header");
		return -1;
	}
	if (!ui_auth_equal(header(c, "X-CSRF-Token"), conn->sess.csrf)) {
		*ret = refuse(c, 403, "a POST without the page's CSRF token");
		return -1;
	}
	{
		const char *type = header(c, "Content-Type");

		if (!type || strncmp(type, "application/json", 16) != 0) {
			*ret = refuse(c, 415, "expected application/json");
			return -1;
		}
	}
	return 0;
}

static enum MHD_Result route_get(struct ui_srv *s, struct MHD_Connection *c,
				 const char *url, struct ui_conn *conn)
{
	struct ui_reply rep = { 0 };

	if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)
		return send_buf(c, 200, asset_types[ASSET_HTML],
				s->asset[ASSET_HTML], s->asset_len[ASSET_HTML],
				NULL, NULL);
	for (int i = ASSET_JS; i < ASSETS_N; i++)
		if (url[0] == '/' && strcmp(url + 1, asset_names[i]) == 0)
			return send_buf(c, 200, asset_types[i], s->asset[i],
					s->asset_len[i], NULL, NULL);
	if (strcmp(url, "/api/session") == 0) {
		struct ar_jbuf b = { 0 };
		enum MHD_Result r;

		ar_jbuf_lit(&b, "{\"ok\":true,\"csrf\":");
		ar_jbuf_cstr(&b, conn->sess.csrf);
		ar_jbuf_addf(&b,
			     ",\"port\":%u,\"root\":", (unsigned)s->auth.port);
		ar_jbuf_cstr(&b, s->root);
		ar_jbuf_lit(&b, "}");
		r = send_buf(c, 200, "application/json", b.p, b.len, NULL,
			     NULL);
		ar_jbuf_free(&b);
		return r;
	}
	if (strcmp(url, "/api/events") == 0)
		return send_stream(s, c);
	if (strcmp(url, "/api/sandboxes") == 0)
		ui_api_sandboxes(s->root, &rep);
	else if (strcmp(url, "/api/policy") == 0)
		ui_api_policy(s->root, query(c, "name"), &rep);
	else if (strcmp(url, "/api/overlays") == 0)
		ui_api_overlays(&rep);
	else if (strcmp(url, "/api/changes") == 0)
		ui_api_changes(query(c, "name"), &rep);
	else if (strcmp(url, "/api/diff") == 0)
		ui_api_diff(query(c, "name"), query(c, "path"), &rep);
	else
		ui_reply_error(&rep, 404, "no such page");
	return send_reply(c, &rep);
}

static enum MHD_Result route_post(struct ui_srv *s, struct MHD_Connection *c,
				  const char *url, struct ui_conn *conn)
{
	struct ui_reply rep = { 0 };
	const char *b = conn->body.p ? conn->body.p : "";
	size_t n = conn->body.len;

	if (conn->too_big)
		ui_reply_error(&rep, 413, "request body too large");
	else if (strcmp(url, "/api/answer") == 0)
		ui_api_answer(s->root, s->auth.port, b, n, &rep);
	else if (strcmp(url, "/api/commit") == 0)
		ui_api_commit(b, n, &rep);
	else if (strcmp(url, "/api/discard") == 0)
		ui_api_discard(b, n, &rep);
	else
		ui_reply_error(&rep, 404, "no such action");
	return send_reply(c, &rep);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct ui_srv *s = cls;
	struct ui_conn *conn = *con_cls;
	enum MHD_Result ret = MHD_NO;

	(void)version;
	if (!conn) {
		conn = ar_xcalloc(1, sizeof(*conn));
		*con_cls = conn;
		if (check(s, c, url, method, conn, &ret) < 0)
			return ret;
		if (strcmp(method, "POST") == 0)
			return MHD_YES; /* the body comes next */
		return route_get(s, c, url, conn);
	}
	if (*upload_size) {
		if (conn->body.len + *upload_size > BODY_MAX)
			conn->too_big = true;
		else
			ar_jbuf_add(&conn->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	return route_post(s, c, url, conn);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct ui_conn *conn = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (conn) {
		ar_jbuf_free(&conn->body);
		explicit_bzero(&conn->sess, sizeof(conn->sess));
		free(conn);
		*con_cls = NULL;
	}
}

/* ROOT/.ui/port: "PORT PID\n" (ui_port.c reads it). */
static int write_port_file(const char *root, uint16_t port,
			   struct ar_error *err)
{
	_cleanup_free_ char *dir = ar_xasprintf("%s/.ui", root);
	_cleanup_free_ char *text =
		ar_xasprintf("%u %d\n", (unsigned)port, (int)getpid());
	_cleanup_close_ int dfd = -1;

	if (ar_mkdir_p(dir, 0700) < 0)
		return ar_error_set(err, errno, "ui: `%s`", dir);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return ar_error_set(err, errno, "ui: `%s`", dir);
	return ar_write_file_replace_at(dfd, "port", text, strlen(text), 0600,
					err);
}

static void remove_port_file(const char *root)
{
	_cleanup_free_ char *path = ar_xasprintf("%s/.ui/port", root);

	uint16_t port;
	pid_t pid;

	/* only ours: another dashboard may have started since */
	if (ar_ui_port_file(root, &port, &pid) == 0 && pid == getpid())
		unlink(path);
}

static int listen_loopback(uint16_t port, uint16_t *bound, struct ar_error *err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return ar_error_set(err, errno, "ui: socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		int e = errno;

		close(fd);
		return ar_error_set(err, e, "ui: listen on 127.0.0.1:%u",
				    (unsigned)port);
	}
	*bound = ntohs(sa.sin_port);
	return fd;
}

int ar_ui_serve(const struct ar_ui_opts *o, struct ar_error *err)
{
	struct ui_srv s = { .root = o->root };
	struct MHD_Daemon *d;
	const char *dir = o->assets;
	uint16_t port = 0, bound = 0;
	sigset_t set;
	int lfd, sig = 0, rc = -1;

	if (o->listen && ar_ui_parse_listen(o->listen, &port, err) < 0)
		return -1;
	if (!dir)
		dir = getenv("AGENTRUN_UI_DIR");
	if (!dir || !*dir)
		dir = AGENTRUN_UI_ASSETS;
	if (load_assets(&s, dir, err) < 0 || ui_mhd_load(err) < 0)
		goto out;
	/* SIGINT/SIGTERM waited for below, before any thread exists; a
	 * closed page's socket is an EPIPE, not a signal */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	/* a shell starts a background job with SIGINT ignored, and an
	 * ignored signal is dropped, not waited for: Ctrl-C and kill -INT
	 * stop the dashboard wherever it was started (SIGHUP as given:
	 * nohup keeps it running) */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	{
		struct sigaction old;

		if (sigaction(SIGHUP, NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaddset(&set, SIGHUP);
	}
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_loopback(port, &bound, err);
	if (lfd < 0)
		goto out;
	if (ui_auth_init(&s.auth, bound) < 0) {
		close(lfd);
		ar_error_set(err, errno, "ui: getrandom");
		goto out;
	}
	d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
		0, NULL, NULL, handle, &s, MHD_OPTION_LISTEN_SOCKET, lfd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTIONS_MAX,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
		MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
	if (!d) {
		close(lfd);
		ar_error_set_plain(err, EIO, "ui: libmicrohttpd did not start");
		goto out;
	}
	if (write_port_file(o->root, bound, err) < 0) {
		MHD_stop_daemon(d);
		goto out;
	}
	fprintf(o->out,
		"agentrun ui: open http://127.0.0.1:%u/?token=%s\n"
		"(the link works once; Ctrl-C stops the dashboard)\n",
		(unsigned)bound, s.auth.token);
	fflush(o->out);
	sigwait(&set, &sig);
	remove_port_file(o->root);
	MHD_stop_daemon(d);
	rc = 0;
out:
	for (int i = 0; i < ASSETS_N; i++)
		free(s.asset[i]);
	return rc;
}
