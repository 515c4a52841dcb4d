/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The egress proxy's front ends on its port (see egress_proxy.c, whose
 * setup thread dispatches a connection here): HTTP CONNECT, plain HTTP
 * with an absolute URI (filtered by its target and Host header,
 * forwarded in origin form with "Connection: close") and SOCKS5
 * CONNECT. Each reads the request within the setup's budget, dials
 * through eg_dial (egress_dial.c) and answers the client.
 */
#define _GNU_SOURCE
#include "egress_proxy_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "egress_upstream.h"
#include "utils.h"

#define HEAD_MAX 16384 /* request head (HTTP) */

/* ---- HTTP ---- */

/* The reason phrase: STATUS (BODY), BODY in printable ASCII (a client
 * that shows only the status line, as most do for a failed CONNECT,
 * still shows why). */
static void reason_phrase(char *out, size_t size, const char *status,
			  const char *body)
{
	size_t o = (size_t)snprintf(out, size, "%s (", status);

	for (const unsigned char *s = (const unsigned char *)body;
	     *s && o + 2 < size; s++) {
		if (s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0x94) {
			out[o++] = '-'; /* the em dash of the deny lines */
			s += 2;
		} else if (*s >= 0x20 && *s < 0x7f) {
			out[o++] = (char)*s;
		} else if (*s < 0x80 || *s >= 0xc0) {
			out[o++] = '?'; /* one per character */
		}
	}
	out[o++] = ')';
	out[o] = '\0';
}

static void http_reply(int fd, int code, const char *status, const char *body)
{
	char buf[4096], phrase[1200];
	int n;

	reason_phrase(phrase, sizeof(phrase), status, body);
	n = snprintf(buf, sizeof(buf),
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: text/plain; charset=utf-8\r\n"
		     "Content-Length: %zu\r\n"
		     "Connection: close\r\n"
		     "X-Agentrun-Egress: %s\r\n\r\n%s\n",
		     code, phrase, strlen(body) + 1,
		     code == 403 ? "blocked" : "error", body);

	if (n > 0)
		(void)!ar_write_all(fd, buf,
				    (size_t)n < sizeof(buf) ? (size_t)n :
							      sizeof(buf) - 1);
}

static void http_dial_failed(int fd, enum dial_result r, const char *reason)
{
	if (r == DIAL_DENIED)
		http_reply(fd, 403, "Forbidden", reason);
	else if (r == DIAL_BUSY)
		http_reply(fd, 503, "Service Unavailable", reason);
	else
		http_reply(fd, 502, "Bad Gateway", reason);
}

/* Read the request head; returns its length (through "\r\n\r\n"), -1 on
 * errors (a reply was sent when there is anything to say), *len the
 * bytes read (the head and anything after it). */
static ssize_t http_read_head(int fd, char *buf, size_t size, size_t *len)
{
	*len = 0;
	for (;;) {
		char *end;
		ssize_t n;

		buf[*len] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end)
			return end + 4 - buf;
		if (*len + 1 >= size) {
			http_reply(fd, 431, "Request Header Fields Too Large",
				   "agentrun: request head too large");
			return -1;
		}
		if (eg_setup_read_budget(fd) < 0) {
			http_reply(
				fd, 408, "Request Timeout",
				"agentrun: request head not received in time");
			return -1;
		}
		n = read(fd, buf + *len, size - 1 - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			http_reply(
				fd, 408, "Request Timeout",
				"agentrun: request head not received in time");
			return -1;
		}
		if (n <= 0)
			return -1;
		if (memchr(buf + *len, '\0', (size_t)n)) {
			http_reply(fd, 400, "Bad Request",
				   "agentrun: NUL byte in the request head");
			return -1;
		}
		*len += (size_t)n;
	}
}

/* The value of header `name` in the head (lines after the first), or
 * NULL; *vlen its length without surrounding blanks. */
static const char *header_find(const char *head, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);

	for (const char *l = strstr(head, "\r\n"); l && l[2] != '\r';
	     l = strstr(l + 2, "\r\n")) {
		const char *s = l + 2, *e = strstr(s, "\r\n");

		if (e && (size_t)(e - s) > nl && s[nl] == ':' &&
		    strncasecmp(s, name, nl) == 0) {
			s += nl + 1;
			while (s < e && (*s == ' ' || *s == '\t'))
				s++;
			while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			*vlen = (size_t)(e - s);
			return s;
		}
	}
	return NULL;
}

/* More than one header `name`: requests that two hops could read
 * differently (which Host counts?) are refused. */
static bool header_repeated(const char *head, const char *name)
{
	size_t vlen;
	const char *v = header_find(head, name, &vlen);
	const char *next;

	if (!v)
		return false;
	next = strstr(v, "\r\n");
	return next && next[2] != '\r' && header_find(next, name, &vlen);
}

static bool hop_by_hop(const char *line, size_t len)
{
	static const char *const names[] = { "connection", "proxy-connection",
					     "keep-alive",
					     "proxy-authorization", NULL };

	for (const char *const *n = names; *n; n++) {
		size_t nl = strlen(*n);

		if (len > nl && line[nl] == ':' &&
		    strncasecmp(line, *n, nl) == 0)
			return true;
	}
	return false;
}

/* Plain HTTP: check, connect, send the head rewritten to origin form. */
static int http_forward(struct ar_egress_proxy *p, int c, char *buf,
			size_t head_len, size_t len, const char *method,
			const char *target, const char *version, int *up)
{
	char host[256], reason[1024], hhost[256];
	const char *auth, *path, *hv;
	size_t alen, hvlen;
	uint16_t port, hport;
	enum dial_result r;
	char *out;
	const char *pauth;
	size_t olen = 0, cap = head_len + 256;
	bool proxied = false;

	if (strncasecmp(target, "http://", 7) == 0) {
		auth = target + 7;
		alen = strcspn(auth, "/?#");
		path = auth[alen] == '/' ? auth + alen : NULL;
	} else if (target[0] == '/') {
		auth = header_find(buf, "Host", &alen);
		path = target;
		if (!auth) {
			http_reply(
				c, 400, "Bad Request",
				"agentrun: no Host header and no absolute URI");
			return -1;
		}
	} else {
		http_reply(
			c, 400, "Bad Request",
			"agentrun: this proxy takes http:// URIs and CONNECT (https)");
		return -1;
	}
	if (memchr(auth, '@', alen) ||
	    !ar_egress_split_hostport(auth, alen, host, sizeof(host), 80,
				      &port)) {
		http_reply(c, 400, "Bad Request",
			   "agentrun: malformed host in the request target");
		return -1;
	}
	if (header_repeated(buf, "Host")) {
		http_reply(c, 400, "Bad Request",
			   "agentrun: more than one Host header");
		return -1;
	}
	hv = header_find(buf, "Host", &hvlen);
	if (hv && (!ar_egress_split_hostport(hv, hvlen, hhost, sizeof(hhost),
					     80, &hport) ||
		   strcmp(hhost, host) != 0)) {
		char qh[256]; /* the agent's: quoted */

		ar_quote_to(qh, sizeof(qh), hv, hvlen > 200 ? 200 : hvlen);
		snprintf(
			reason, sizeof(reason),
			"agentrun: blocked %s:%u \xe2\x80\x94 the Host header (%s) names another host than the request",
			host, (unsigned)port, qh);
		eg_emit(p, "http", host, port, NULL, false, reason, true);
		http_reply(c, 403, "Forbidden", reason);
		return -1;
	}
	if (strpbrk(target, " \t")) {
		/* "GET /a http://b/ HTTP/1.1": two hops could read two
		 * targets (an upstream proxy takes the first) */
		http_reply(c, 400, "Bad Request",
			   "agentrun: a blank in the request target");
		return -1;
	}
	r = eg_dial_ex(p, "http", host, port, true, &proxied, up, reason,
		       sizeof(reason));
	if (r != DIAL_OK) {
		http_dial_failed(c, r, reason);
		return -1;
	}
	if (p->n_secrets)
		eg_placeholder_check(p, "http", host, port, buf, head_len);
	/* origin form (absolute form to an upstream proxy), hop-by-hop
	 * headers dropped, one request only */
	pauth = proxied && p->ups->http.auth ? p->ups->http.auth : NULL;
	out = ar_xmalloc(cap + 2 * alen + strlen(host) + 64 +
			 (pauth ? strlen(pauth) + 32 : 0));
	/* "http://h?q" has the path "/?q"; a fragment is never sent */
	olen = (size_t)sprintf(
		out, "%s %s%.*s%s%.*s %s\r\n", method, proxied ? "http://" : "",
		proxied ? (int)alen : 0, auth, path ? "" : "/",
		path ? (int)strcspn(path, "#") : (int)strcspn(auth + alen, "#"),
		path ? path : auth + alen, version);
	if (pauth)
		olen += (size_t)sprintf(out + olen,
					"Proxy-Authorization: %s\r\n", pauth);
	if (!hv)
		olen += (size_t)sprintf(out + olen, "Host: %.*s\r\n", (int)alen,
					auth);
	for (const char *l = strstr(buf, "\r\n") + 2; l < buf + head_len - 2;) {
		const char *e = strstr(l, "\r\n");
		size_t ll = (size_t)(e - l);

		if (!hop_by_hop(l, ll)) {
			memcpy(out + olen, l, ll + 2);
			olen += ll + 2;
		}
		l = e + 2;
	}
	olen += (size_t)sprintf(out + olen, "Connection: close\r\n\r\n");
	if (ar_write_all(*up, out, olen) < 0 ||
	    (len > head_len &&
	     ar_write_all(*up, buf + head_len, len - head_len) < 0)) {
		free(out);
		return -1;
	}
	if (pauth)
		explicit_bzero(out, olen);
	free(out);
	return 0;
}

int eg_http_setup(struct ar_egress_proxy *p, int c, int *up)
{
	_cleanup_free_ char *buf = ar_xmalloc(HEAD_MAX + 1);
	char method[32], version[16], host[256], reason[1024];
	_cleanup_free_ char *target = NULL;
	char *sp1, *sp2, *eol;
	size_t len, tlen;
	ssize_t head_len = http_read_head(c, buf, HEAD_MAX + 1, &len);
	uint16_t port;
	enum dial_result r;

	if (head_len < 0)
		return -1;
	eol = strstr(buf, "\r\n");
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	sp2 = sp1 ? memrchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1 == sp2 ||
	    (size_t)(sp1 - buf) >= sizeof(method) ||
	    (size_t)(eol - sp2 - 1) >= sizeof(version) ||
	    strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		http_reply(c, 400, "Bad Request",
			   "agentrun: malformed request line");
		return -1;
	}
	memcpy(method, buf, (size_t)(sp1 - buf));
	method[sp1 - buf] = '\0';
	memcpy(version, sp2 + 1, (size_t)(eol - sp2 - 1));
	version[eol - sp2 - 1] = '\0';
	tlen = (size_t)(sp2 - sp1 - 1);
	target = ar_xasprintf("%.*s", (int)tlen, sp1 + 1);
	if (strcmp(method, "CONNECT") != 0)
		return http_forward(p, c, buf, (size_t)head_len, len, method,
				    target, version, up);
	if (!ar_egress_split_hostport(target, tlen, host, sizeof(host), 443,
				      &port)) {
		http_reply(c, 400, "Bad Request",
			   "agentrun: CONNECT needs HOST:PORT");
		return -1;
	}
	r = eg_dial(p, "connect", host, port, up, reason, sizeof(reason));
	if (r == DIAL_OK)
		eg_tls_target_set(host, port);
	if (r != DIAL_OK) {
		http_dial_failed(c, r, reason);
		return -1;
	}
	if (ar_write_all(c, "HTTP/1.1 200 Connection established\r\n\r\n", 39) <
		    0 ||
	    (len > (size_t)head_len &&
	     ar_write_all(*up, buf + head_len, len - (size_t)head_len) < 0))
		return -1;
	return 0;
}

/* ---- SOCKS5 (RFC 1928) ---- */

static void socks_reply(int fd, uint8_t code)
{
	uint8_t b[10] = { 5, code, 0, 1 }; /* bound address 0.0.0.0:0 */

	(void)!ar_write_all(fd, b, sizeof(b));
}

int eg_socks_setup(struct ar_egress_proxy *p, int c, int *up)
{
	uint8_t b[262], hdr[4], pb[2];
	char host[256], reason[1024];
	uint16_t port;
	enum dial_result r;
	bool noauth = false;

	if (eg_read_full(c, b, 2) < 0 || eg_read_full(c, b + 2, b[1]) < 0)
		return -1;
	for (size_t i = 0; i < b[1]; i++)
		noauth |= b[2 + i] == 0;
	if (!noauth) {
		(void)!ar_write_all(c, "\x05\xff", 2);
		return -1;
	}
	if (ar_write_all(c, "\x05\x00", 2) < 0 || eg_read_full(c, hdr, 4) < 0 ||
	    hdr[0] != 5)
		return -1;
	if (hdr[3] == 1 || hdr[3] == 4) {
		size_t n = hdr[3] == 1 ? 4 : 16;

		if (eg_read_full(c, b, n) < 0 ||
		    !inet_ntop(hdr[3] == 1 ? AF_INET : AF_INET6, b, host,
			       sizeof(host)))
			return -1;
	} else if (hdr[3] == 3) {
		if (eg_read_full(c, b, 1) < 0 ||
		    eg_read_full(c, b + 1, b[0]) < 0)
			return -1;
		if (!ar_egress_host_normalize((char *)b + 1, b[0], host,
					      sizeof(host))) {
			socks_reply(c, 0x04);
			return -1;
		}
	} else {
		socks_reply(c, 0x08); /* address type not supported */
		return -1;
	}
	if (eg_read_full(c, pb, 2) < 0)
		return -1;
	port = (uint16_t)((pb[0] << 8) | pb[1]);
	if (hdr[1] != 1) {
		socks_reply(c, 0x07); /* only CONNECT */
		return -1;
	}
	if (port == 0) {
		socks_reply(c, 0x02);
		return -1;
	}
	r = eg_dial(p, "socks5", host, port, up, reason, sizeof(reason));
	if (r != DIAL_OK) {
		socks_reply(c, r == DIAL_DENIED	     ? 0x02 :
			       r == DIAL_BUSY	     ? 0x01 :
			       r == DIAL_NORESOLVE   ? 0x04 :
			       errno == ECONNREFUSED ? 0x05 :
			       errno == ETIMEDOUT    ? 0x06 :
						       0x04);
		return -1;
	}
	socks_reply(c, 0x00);
	return 0;
}
