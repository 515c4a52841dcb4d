/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The audit log writer: JSON lines (docs/audit.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "egress/egress_proxy.h"
#include "utils.h"

struct ar_audit {
	int fd;
	bool own_fd;
	pthread_mutex_t lock;
	ar_audit_tee_fn tee; /* each line, also (the control plane) */
	void *tee_data;
};

/* ---- the JSON buffer ---- */

static void jbuf_grow(struct ar_jbuf *b, size_t n)
{
	if (b->len + n + 1 <= b->cap)
		return;
	while (b->len + n + 1 > b->cap)
		b->cap = b->cap ? 2 * b->cap : 256;
	b->p = ar_xrealloc(b->p, b->cap);
}

void ar_jbuf_add(struct ar_jbuf *b, const char *s, size_t n)
{
	jbuf_grow(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void ar_jbuf_addf(struct ar_jbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	jbuf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 when invalid
 * (overlong forms, surrogates, above U+10FFFF, truncated). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

void ar_jbuf_str(struct ar_jbuf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	if (!str) {
		ar_jbuf_lit(b, "null");
		return;
	}
	ar_jbuf_lit(b, "\"");
	while (i < n) {
		unsigned char c = s[i];
		size_t l;

		switch (c) {
		case '"':
			ar_jbuf_lit(b, "\\\"");
			i++;
			continue;
		case '\\':
			ar_jbuf_lit(b, "\\\\");
			i++;
			continue;
		case '\n':
			ar_jbuf_lit(b, "\\n");
			i++;
			continue;
		case '\r':
			ar_jbuf_lit(b, "\\r");
			i++;
			continue;
		case '\t':
			ar_jbuf_lit(b, "\\t");
			i++;
			continue;
		default:
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			ar_jbuf_addf(b, "\\u%04x", c);
			i++;
			continue;
		}
		l = utf8_seq(s + i, n - i);
		if (l == 0) {
			ar_jbuf_lit(b, "\\ufffd");
			i++;
			continue;
		}
		ar_jbuf_add(b, (const char *)s + i, l);
		i += l;
	}
	ar_jbuf_lit(b, "\"");
}

void ar_jbuf_cstr(struct ar_jbuf *b, const char *s)
{
	ar_jbuf_str(b, s, s ? strlen(s) : 0);
}

void ar_jbuf_key(struct ar_jbuf *b, const char *key)
{
	ar_jbuf_lit(b, ",");
	ar_jbuf_cstr(b, key);
	ar_jbuf_lit(b, ":");
}

void ar_jbuf_strv(struct ar_jbuf *b, char *const *v, size_t n)
{
	ar_jbuf_lit(b, "[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			ar_jbuf_lit(b, ",");
		ar_jbuf_cstr(b, v[i]);
	}
	ar_jbuf_lit(b, "]");
}

void ar_jbuf_free(struct ar_jbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---- the log ---- */

int ar_audit_open(const char *path, struct ar_audit **out, struct ar_error *err)
{
	struct ar_audit *a;
	int fd;

	if (strcmp(path, "-") == 0) {
		fd = STDERR_FILENO;
	} else {
		fd = open(path,
			  O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC |
				  O_NOCTTY,
			  0600);
		if (fd < 0)
			return ar_error_set(err, errno, "--audit `%s`", path);
	}
	a = ar_xcalloc(1, sizeof(*a));
	a->fd = fd;
	a->own_fd = fd != STDERR_FILENO;
	pthread_mutex_init(&a->lock, NULL);
	*out = a;
	return 0;
}

void ar_audit_close(struct ar_audit *a)
{
	if (!a)
		return;
	if (a->own_fd)
		close(a->fd);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

void ar_audit_begin(struct ar_jbuf *b, const char *event)
{
	struct timespec ts;
	struct tm tm;
	char t[40];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	ar_jbuf_addf(b, "{\"time\":\"%s.%06ldZ\",\"event\":", t,
		     ts.tv_nsec / 1000);
	ar_jbuf_cstr(b, event);
}

void ar_audit_emit(struct ar_audit *a, struct ar_jbuf *b)
{
	size_t off = 0;

	ar_jbuf_lit(b, "}\n");
	pthread_mutex_lock(&a->lock);
	while (off < b->len) {
		ssize_t w = write(a->fd, b->p + off, b->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* a full disk or closed stderr: nothing to do */
		off += (size_t)w;
	}
	if (a->tee)
		a->tee(a->tee_data, b->p, b->len);
	pthread_mutex_unlock(&a->lock);
	ar_jbuf_free(b);
}

void ar_audit_set_tee(struct ar_audit *a, ar_audit_tee_fn fn, void *data)
{
	pthread_mutex_lock(&a->lock);
	a->tee = fn;
	a->tee_data = data;
	pthread_mutex_unlock(&a->lock);
}

void ar_audit_start(struct ar_audit *a, char *const *argv,
		    const char *workspace, const char *protections,
		    const char *mode)
{
	struct ar_jbuf b = { 0 };
	size_t n = 0;

	while (argv[n])
		n++;
	ar_audit_begin(&b, "start");
	ar_jbuf_key(&b, "argv");
	ar_jbuf_strv(&b, argv, n);
	ar_jbuf_key(&b, "workspace");
	ar_jbuf_cstr(&b, workspace);
	ar_jbuf_key(&b, "mode");
	ar_jbuf_cstr(&b, mode);
	ar_jbuf_key(&b, "protections");
	ar_jbuf_lit(&b, "[");
	for (const char *p = protections, *e; p && *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ',');
		/* a comma inside parentheses belongs to the item */
		const char *open = memchr(p, '(', (size_t)(e - p));

		if (open && !memchr(open, ')', (size_t)(e - open))) {
			const char *close = strchr(e, ')');

			if (close)
				e = strchrnul(close, ',');
		}
		if (p != protections)
			ar_jbuf_lit(&b, ",");
		ar_jbuf_str(&b, p, (size_t)(e - p));
	}
	ar_jbuf_lit(&b, "]");
	ar_jbuf_addf(&b, ",\"supervisor_pid\":%d", (int)getpid());
	ar_audit_emit(a, &b);
}

void ar_audit_exit(struct ar_audit *a, int status, double seconds)
{
	struct ar_jbuf b = { 0 };

	ar_audit_begin(&b, "exit");
	ar_jbuf_addf(&b, ",\"status\":%d,\"duration\":%.3f", status, seconds);
	ar_audit_emit(a, &b);
}

void ar_audit_egress_event(const struct ar_egress_event *ev, void *data)
{
	struct ar_audit *a = data;
	struct ar_jbuf b = { 0 };

	ar_audit_egress_json(&b, ev);
	ar_audit_emit(a, &b);
}

void ar_audit_egress_json(struct ar_jbuf *b, const struct ar_egress_event *ev)
{
	if (ev->withheld) {
		ar_audit_begin(b, "secret_withheld");
		ar_jbuf_key(b, "host");
		ar_jbuf_cstr(b, ev->host);
		ar_jbuf_addf(b, ",\"port\":%u", (unsigned)ev->port);
		ar_jbuf_key(b, "asked");
		ar_jbuf_cstr(b, ev->asked);
		ar_jbuf_addf(b, ",\"refused\":%s",
			     ev->denied ? "true" : "false");
		ar_jbuf_key(b, "reason");
		ar_jbuf_cstr(b, ev->reason);
		return;
	}
	ar_audit_begin(b, "proxy");
	ar_jbuf_key(b, "proto");
	ar_jbuf_cstr(b, ev->proto);
	ar_jbuf_key(b, "host");
	ar_jbuf_cstr(b, ev->host);
	ar_jbuf_addf(b, ",\"port\":%u", (unsigned)ev->port);
	ar_jbuf_key(b, "address");
	ar_jbuf_cstr(b, ev->addr);
	ar_jbuf_addf(b, ",\"allowed\":%s", ev->allowed ? "true" : "false");
	ar_jbuf_key(b, "reason");
	ar_jbuf_cstr(b, ev->reason);
}
