/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dashboard's merged event stream (ui_events.h). */
#define _GNU_SOURCE
#include "ui_events.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "control/control.h"
#include "utils.h"

#define STREAM_MAX 32 /* sandboxes followed at once */
#define LINE_MAX_BYTES (64 * 1024)
#define RESCAN_MS 1000
#define KEEPALIVE_S 5

struct follow {
	char *name;
	int fd;
	bool greeted; /* the {"ok":true} line was read */
	char *buf;
	size_t len;
};

struct ui_stream {
	char *root;
	struct follow f[STREAM_MAX];
	size_t n;
	struct ar_jbuf out; /* to send */
	size_t sent;
	time_t last_send, last_scan;
	bool first;
};

struct ui_stream *ui_stream_new(const char *root)
{
	struct ui_stream *s = ar_xcalloc(1, sizeof(*s));

	s->root = ar_xstrdup(root);
	s->first = true;
	return s;
}

static void follow_drop(struct ui_stream *s, size_t i)
{
	close(s->f[i].fd);
	free(s->f[i].name);
	free(s->f[i].buf);
	s->f[i] = s->f[--s->n];
}

void ui_stream_free(struct ui_stream *s)
{
	if (!s)
		return;
	while (s->n)
		follow_drop(s, 0);
	ar_jbuf_free(&s->out);
	free(s->root);
	free(s);
}

/* Follow every sandbox not followed yet; true when the set changed. */
static bool rescan(struct ui_stream *s)
{
	size_t n = 0;
	char **names = ar_control_names(s->root, &n);
	bool changed = false;

	for (size_t i = 0; i < n && s->n < STREAM_MAX; i++) {
		struct ar_error e = AR_ERROR_INIT;
		bool have = false;
		int fd;

		for (size_t k = 0; k < s->n && !have; k++)
			have = strcmp(s->f[k].name, names[i]) == 0;
		if (have)
			continue;
		fd = ar_control_connect(s->root, names[i], &e);
		if (fd < 0)
			continue; /* a stale socket */
		if (ar_write_all(fd, "{\"op\":\"events\"}\n", 16) < 0) {
			close(fd);
			continue;
		}
		s->f[s->n++] = (struct follow){ .name = ar_xstrdup(names[i]),
						.fd = fd };
		changed = true;
	}
	ar_strv_free(names);
	return changed;
}

static void emit_line(struct ui_stream *s, struct follow *f, const char *line,
		      size_t len)
{
	if (!f->greeted) {
		/* the control plane's greeting: from now on, every event of
		 * the sandbox reaches this stream */
		f->greeted = true;
		ar_jbuf_lit(&s->out, "event: following\ndata: {\"sandbox\":");
		ar_jbuf_cstr(&s->out, f->name);
		ar_jbuf_lit(&s->out, "}\n\n");
		return;
	}
	/* the sandbox's line is one JSON value without a newline */
	if (len == 0 || memchr(line, '\n', len) || memchr(line, '\r', len))
		return;
	ar_jbuf_lit(&s->out, "data: {\"sandbox\":");
	ar_jbuf_cstr(&s->out, f->name);
	ar_jbuf_lit(&s->out, ",\"event\":");
	ar_jbuf_add(&s->out, line, len);
	ar_jbuf_lit(&s->out, "}\n\n");
}

/* Read what follow i has; false when it ended. */
static bool drain(struct ui_stream *s, size_t i)
{
	struct follow *f = &s->f[i];
	char tmp[8192];
	ssize_t r = read(f->fd, tmp, sizeof(tmp));
	size_t start = 0;

	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (r <= 0)
		return false;
	f->buf = ar_xrealloc(f->buf, f->len + (size_t)r + 1);
	memcpy(f->buf + f->len, tmp, (size_t)r);
	f->len += (size_t)r;
	for (size_t k = 0; k < f->len; k++) {
		if (f->buf[k] != '\n')
			continue;
		emit_line(s, f, f->buf + start, k - start);
		start = k + 1;
	}
	memmove(f->buf, f->buf + start, f->len - start);
	f->len -= start;
	return f->len <= LINE_MAX_BYTES;
}

ssize_t ui_stream_read(struct ui_stream *s, char *buf, size_t max)
{
	for (;;) {
		struct pollfd p[STREAM_MAX];
		bool changed = false;
		size_t n;

		if (s->sent < s->out.len) {
			n = s->out.len - s->sent;
			if (n > max)
				n = max;
			memcpy(buf, s->out.p + s->sent, n);
			s->sent += n;
			if (s->sent == s->out.len)
				s->sent = s->out.len = 0;
			s->last_send = time(NULL);
			return (ssize_t)n;
		}
		if (s->first) {
			s->first = false;
			rescan(s);
			ar_jbuf_lit(
				&s->out,
				"retry: 2000\nevent: sandboxes\ndata: {}\n\n");
			continue;
		}
		if (time(NULL) - s->last_send >= KEEPALIVE_S) {
			ar_jbuf_lit(&s->out, ": keepalive\n\n");
			continue;
		}
		for (size_t i = 0; i < s->n; i++)
			p[i] = (struct pollfd){ .fd = s->f[i].fd,
						.events = POLLIN };
		if (poll(p, s->n, RESCAN_MS) < 0 && errno != EINTR)
			return -1;
		for (size_t i = s->n; i-- > 0;) {
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (!drain(s, i)) {
				follow_drop(s, i);
				changed = true;
			}
		}
		if (time(NULL) != s->last_scan) {
			s->last_scan = time(NULL);
			if (rescan(s))
				changed = true;
		}
		if (changed)
			ar_jbuf_lit(&s->out, "event: sandboxes\ndata: {}\n\n");
	}
}
