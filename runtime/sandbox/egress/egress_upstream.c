/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The caller's upstream proxy (egress_upstream.h): its URL, NO_PROXY,
 * and the connections through it.
 */
#define _GNU_SOURCE
#include "egress_upstream.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "egress_policy.h"
#include "utils.h"

#define UPSTREAM_HEAD_MAX 8192

void ar_base64(const unsigned char *in, size_t n, char *out)
{
	static const char t[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = t[(v >> 18) & 63];
		out[o++] = t[(v >> 12) & 63];
		out[o++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = '\0';
}

/* Percent-decoding of n bytes into out (n + 1 bytes); false on a bad
 * escape or a NUL. */
static bool pct_decode(const char *s, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			out[o++] = s[i];
			continue;
		}
		if (i + 2 >= n)
			return false;
		if (!isxdigit((unsigned char)s[i + 1]) ||
		    !isxdigit((unsigned char)s[i + 2]))
			return false;
		char hex[3] = { s[i + 1], s[i + 2], 0 };
		int v = (int)strtol(hex, NULL, 16);

		if (v == 0)
			return false;
		out[o++] = (char)v;
		i += 2;
	}
	out[o] = '\0';
	return true;
}

void ar_upstream_release(struct ar_upstream *u)
{
	if (u->auth) {
		explicit_bzero(u->auth, strlen(u->auth));
		free(u->auth);
		u->auth = NULL;
	}
	u->host[0] = '\0';
	u->shown[0] = '\0';
	u->port = 0;
}

int ar_upstream_parse(const char *url, const char *what, struct ar_upstream *u,
		      struct ar_error *err)
{
	const char *s = url, *at, *end;
	size_t hl;

	memset(u, 0, sizeof(*u));
	if (strstr(s, "://")) {
		if (strncasecmp(s, "http://", 7) != 0)
			return ar_error_set_plain(
				err, EINVAL,
				"%s: only an http:// proxy is supported as the upstream (the egress proxy speaks HTTP CONNECT to it), got `%.*s://...`",
				what, (int)strcspn(s, ":"), s);
		s += 7;
	}
	end = s + strcspn(s, "/?#");
	if (*end && strcmp(end, "/") != 0)
		return ar_error_set_plain(
			err, EINVAL,
			"%s: expected http://[USER[:PASS]@]HOST[:PORT] without a path",
			what);
	at = memrchr(s, '@', (size_t)(end - s));
	if (at) {
		size_t n = (size_t)(at - s);
		_cleanup_free_ char *raw = ar_xmalloc(n + 1);
		_cleanup_free_ char *b64 = ar_xmalloc(4 * ((n + 2) / 3) + 1);

		if (!pct_decode(s, n, raw)) {
			explicit_bzero(raw, n);
			return ar_error_set_plain(
				err, EINVAL,
				"%s: a bad %%-escape in the credentials of the upstream proxy",
				what);
		}
		ar_base64((const unsigned char *)raw, strlen(raw), b64);
		u->auth = ar_xasprintf("Basic %s", b64);
		explicit_bzero(raw, n);
		explicit_bzero(b64, strlen(b64));
		s = at + 1;
	}
	hl = (size_t)(end - s);
	if (hl == 0 ||
	    !ar_egress_split_hostport(s, hl, u->host, sizeof(u->host), 1080,
				      &u->port) ||
	    u->port == 0) {
		ar_upstream_release(u);
		return ar_error_set_plain(
			err, EINVAL,
			"%s: expected http://[USER[:PASS]@]HOST[:PORT] (the host or port is malformed)",
			what);
	}
	snprintf(u->shown, sizeof(u->shown),
		 strchr(u->host, ':') ? "[%s]:%u" : "%s:%u", u->host,
		 (unsigned)u->port);
	return 0;
}

void ar_no_proxy_parse(const char *list, struct ar_no_proxy *np)
{
	memset(np, 0, sizeof(*np));
	if (!list)
		return;
	for (const char *s = list; *s;) {
		size_t n;
		char tok[300], *slash;

		s += strspn(s, ", \t");
		n = strcspn(s, ", \t");
		if (n == 0)
			break;
		snprintf(tok, sizeof(tok), "%.*s", (int)n, s);
		s += n;
		if (strcmp(tok, "*") == 0) {
			np->all = true;
			continue;
		}
		if (np->n == AR_UPSTREAM_NO_PROXY_MAX)
			continue;
		slash = strchr(tok, '/');
		if (slash) {
			char *e;
			long pl = strtol(slash + 1, &e, 10);
			int fam = strchr(tok, ':') ? AF_INET6 : AF_INET;

			*slash = '\0';
			if (tok[0] == '[' && tok[strlen(tok) - 1] == ']') {
				tok[strlen(tok) - 1] = '\0';
				memmove(tok, tok + 1, strlen(tok));
			}
			if (*e || slash[1] == '\0' || pl < 0 ||
			    pl > (fam == AF_INET ? 32 : 128) ||
			    inet_pton(fam, tok, np->v[np->n].addr) != 1)
				continue;
			np->v[np->n].cidr = true;
			np->v[np->n].family = fam;
			np->v[np->n].prefix = (int)pl;
			np->n++;
			continue;
		}
		/* [v6], v6 literal, or name[:port] */
		if (tok[0] == '[') {
			char *rb = strchr(tok, ']');

			if (!rb)
				continue;
			*rb = '\0';
			memmove(tok, tok + 1, strlen(tok));
		} else if (strchr(tok, ':') == strrchr(tok, ':')) {
			char *c = strchr(tok, ':');

			if (c)
				*c = '\0'; /* a port: ignored */
		}
		{
			char *name = tok;
			size_t l;

			while (*name == '.')
				name++;
			l = strlen(name);
			while (l && name[l - 1] == '.')
				name[--l] = '\0';
			if (!l || l >= sizeof(np->v[0].name))
				continue;
			for (size_t i = 0; i < l; i++)
				np->v[np->n].name[i] =
					(char)tolower((unsigned char)name[i]);
			np->v[np->n].name[l] = '\0';
			np->n++;
		}
	}
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, int bits)
{
	int full = bits / 8, rest = bits % 8;

	if (memcmp(a, b, (size_t)full) != 0)
		return false;
	if (!rest)
		return true;
	return ((a[full] ^ b[full]) & (0xff << (8 - rest))) == 0;
}

bool ar_no_proxy_match(const struct ar_no_proxy *np, const char *host)
{
	uint8_t a[16];
	int fam = 0;
	size_t hl = strlen(host);

	if (np->all)
		return true;
	if (inet_pton(AF_INET, host, a) == 1)
		fam = AF_INET;
	else if (inet_pton(AF_INET6, host, a) == 1)
		fam = AF_INET6;
	for (size_t i = 0; i < np->n; i++) {
		size_t nl = strlen(np->v[i].name);

		if (np->v[i].cidr) {
			if (fam == np->v[i].family &&
			    prefix_match(a, np->v[i].addr, np->v[i].prefix))
				return true;
			continue;
		}
		if (fam) {
			uint8_t b[16];

			if (inet_pton(fam, np->v[i].name, b) == 1 &&
			    memcmp(a, b, fam == AF_INET ? 4 : 16) == 0)
				return true;
			continue;
		}
		if (hl == nl && strcasecmp(host, np->v[i].name) == 0)
			return true;
		if (hl > nl && host[hl - nl - 1] == '.' &&
		    strcasecmp(host + hl - nl, np->v[i].name) == 0)
			return true;
	}
	return false;
}

static const char *env2(const char *lower, const char *upper)
{
	const char *v = getenv(lower);

	if (!v || !*v)
		v = getenv(upper);
	return v && *v ? v : NULL;
}

int ar_upstreams_init(struct ar_upstreams *ups, const char *url,
		      const char *what, struct ar_error *err)
{
	const char *t, *h, *np;

	memset(ups, 0, sizeof(*ups));
	np = env2("no_proxy", "NO_PROXY");
	ar_no_proxy_parse(np, &ups->no_proxy);
	if (url) {
		ups->source = what;
		if (ar_upstream_parse(url, what, &ups->tunnel, err) < 0 ||
		    ar_upstream_parse(url, what, &ups->http, err) < 0) {
			ar_upstreams_release(ups);
			return -1;
		}
		return 0;
	}
	ups->source = "the environment";
	t = env2("https_proxy", "HTTPS_PROXY");
	h = env2("http_proxy", "HTTP_PROXY");
	if (t && ar_upstream_parse(t,
				   getenv("https_proxy") ? "https_proxy" :
							   "HTTPS_PROXY",
				   &ups->tunnel, err) < 0)
		return -1;
	if (h && ar_upstream_parse(
			 h, getenv("http_proxy") ? "http_proxy" : "HTTP_PROXY",
			 &ups->http, err) < 0) {
		ar_upstreams_release(ups);
		return -1;
	}
	return 0;
}

void ar_upstreams_release(struct ar_upstreams *ups)
{
	ar_upstream_release(&ups->tunnel);
	ar_upstream_release(&ups->http);
}

static int connect_one(const struct addrinfo *ai, int timeout_ms)
{
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), e = 0, r;
	socklen_t len = sizeof(e);
	struct pollfd pfd;

	if (fd < 0)
		return -1;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			e = errno;
			goto fail;
		}
		pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
		do
			r = poll(&pfd, 1, timeout_ms);
		while (r < 0 && errno == EINTR);
		if (r == 0)
			e = ETIMEDOUT;
		else if (r < 0 ||
			 getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
			e = errno;
		if (e)
			goto fail;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	errno = e;
	return -1;
}

int ar_upstream_connect(const struct ar_upstream *u, int timeout_ms,
			char *reason, size_t size)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char ports[8];
	int r, fd = -1, e = 0;

	snprintf(ports, sizeof(ports), "%u", (unsigned)u->port);
	r = getaddrinfo(u->host, ports, &hints, &res);
	if (r != 0) {
		snprintf(
			reason, size,
			"agentrun: cannot reach the upstream proxy %s: cannot resolve it: %s",
			u->shown,
			r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return -1;
	}
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = connect_one(ai, timeout_ms);
		if (fd < 0)
			e = errno;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(reason, size,
			 "agentrun: cannot reach the upstream proxy %s: %s",
			 u->shown, strerror(e ? e : EHOSTUNREACH));
	return fd;
}

int ar_upstream_tunnel(const struct ar_upstream *u, const char *host,
		       uint16_t port, int timeout_ms, char *reason, size_t size)
{
	char req[1024], head[UPSTREAM_HEAD_MAX + 1], target[300];
	size_t hl = 0;
	int n, fd = ar_upstream_connect(u, timeout_ms, reason, size);
	struct timeval tv = { .tv_sec = timeout_ms / 1000 + 20 };
	const char *sp;

	if (fd < 0)
		return -1;
	snprintf(target, sizeof(target),
		 strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, (unsigned)port);
	n = snprintf(req, sizeof(req),
		     "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s%s%s\r\n", target,
		     target, u->auth ? "Proxy-Authorization: " : "",
		     u->auth ? u->auth : "", u->auth ? "\r\n" : "");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (n < 0 || (size_t)n >= sizeof(req) ||
	    ar_write_all(fd, req, (size_t)n) < 0) {
		explicit_bzero(req, sizeof(req));
		snprintf(
			reason, size,
			"agentrun: the upstream proxy %s closed the connection: %s",
			u->shown, strerror(errno));
		close(fd);
		return -1;
	}
	explicit_bzero(req, sizeof(req));
	/* byte by byte: nothing of the tunnel is read here */
	while (hl < UPSTREAM_HEAD_MAX) {
		ssize_t r = read(fd, head + hl, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(
				reason, size,
				"agentrun: the upstream proxy %s gave no answer to CONNECT %s: %s",
				u->shown, target,
				r == 0 ? "it closed the connection" :
					 strerror(errno));
			close(fd);
			return -1;
		}
		hl++;
		if (hl >= 4 && memcmp(head + hl - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	head[hl] = '\0';
	sp = strchr(head, ' ');
	if (hl < 4 || strncmp(head, "HTTP/1.", 7) != 0 || !sp || sp[1] != '2') {
		char q[200];
		size_t ll = strcspn(head, "\r\n");

		ar_quote_to(q, sizeof(q), head, ll > 120 ? 120 : ll);
		snprintf(
			reason, size,
			"agentrun: the upstream proxy %s refused CONNECT %s: %s",
			u->shown, target, q);
		close(fd);
		return -1;
	}
	tv.tv_sec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}
