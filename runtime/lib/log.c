/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"

static int log_fd = -1;
static enum ar_log_format log_format = AR_LOG_TEXT;
static bool log_debug;

static const char *const level_names[] = { "error", "warning", "info",
					   "debug" };

int ar_log_init(const char *path, enum ar_log_format format, bool debug)
{
	log_format = format;
	log_debug = debug;
	if (path && *path) {
		log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			      0600);
		if (log_fd < 0)
			return -1;
	}
	return 0;
}

bool ar_log_debug_enabled(void)
{
	return log_debug;
}

int ar_log_fd(void)
{
	return log_fd;
}

/* Append s to buf as a JSON string body (without quotes). */
static size_t json_escape(char *out, size_t cap, const char *s)
{
	size_t o = 0;

	for (; *s && o + 7 < cap; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else if (c == '\t') {
			out[o++] = '\\';
			out[o++] = 't';
		} else if (c < 0x20) {
			o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return o;
}

/* in with every control character but newline and tab as \ooo, into
 * out (cut when it does not fit). The strings the agent controls are
 * quoted where they are put into a message (ar_quote); this is the
 * defence in depth: no escape sequence (erase the line, move the cursor
 * up) of a string someone forgot to quote reaches the terminal. */
static void controls_escape(char *out, size_t cap, const char *in)
{
	size_t o = 0;

	for (const unsigned char *s = (const unsigned char *)in; *s; s++) {
		bool ctl = (*s < 0x20 && *s != '\n' && *s != '\t') ||
			   *s == 0x7f;

		if (o + (ctl ? 4 : 1) >= cap)
			break;
		if (ctl)
			o += (size_t)snprintf(out + o, cap - o, "\\%03o", *s);
		else
			out[o++] = (char)*s;
	}
	out[o] = '\0';
}

void ar_log(enum ar_log_level level, const char *fmt, ...)
{
	char raw[4096], msg[8192];
	char line[8192 + 256];
	va_list ap;
	int saved = errno;

	if (level == AR_LOG_DEBUG && !log_debug)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	controls_escape(msg, sizeof(msg), raw);

	if (log_fd < 0 || level <= AR_LOG_WARNING || log_debug) {
		/* Errors and warnings always reach stderr. */
		if (log_fd < 0 || level <= AR_LOG_WARNING) {
			int n = snprintf(line, sizeof(line), "agentrun: %s%s\n",
					 level == AR_LOG_ERROR	 ? "" :
					 level == AR_LOG_WARNING ? "warning: " :
								   "",
					 msg);
			if (n > 0)
				(void)ar_write_all(STDERR_FILENO, line,
						   (size_t)n < sizeof(line) ?
							   (size_t)n :
							   sizeof(line) - 1);
		}
	}
	if (log_fd >= 0) {
		int n;

		if (log_format == AR_LOG_JSON) {
			char esc[8192];
			char ts[64];
			struct timespec now;
			struct tm tm;

			clock_gettime(CLOCK_REALTIME, &now);
			gmtime_r(&now.tv_sec, &tm);
			strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
			json_escape(esc, sizeof(esc), msg);
			n = snprintf(
				line, sizeof(line),
				"{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s.%09ldZ\"}\n",
				level_names[level], esc, ts, now.tv_nsec);
		} else {
			n = snprintf(line, sizeof(line), "%s: %s\n",
				     level_names[level], msg);
		}
		if (n > 0)
			(void)ar_write_all(log_fd, line,
					   (size_t)n < sizeof(line) ?
						   (size_t)n :
						   sizeof(line) - 1);
	}
	errno = saved;
}

void ar_log_summary(const char *in)
{
	static const char prefix[] = "agentrun: ";
	_cleanup_free_ char *line = ar_xmalloc(4 * strlen(in) + 1);
	_cleanup_free_ char *nl = NULL;

	/* one line: no control character at all (controls_escape) */
	controls_escape(line, 4 * strlen(in) + 1, in);
	for (char *p = strchr(line, '\n'); p; p = strchr(p, '\n'))
		*p++ = ' ';
	for (char *p = strchr(line, '\t'); p; p = strchr(p, '\t'))
		*p++ = ' ';
	nl = ar_xasprintf("%s\n", line);

	if (ar_log_fd() >= 0)
		ar_log(AR_LOG_INFO, "%s",
		       strncmp(line, prefix, sizeof(prefix) - 1) == 0 ?
			       line + sizeof(prefix) - 1 :
			       line);
	/* one write: the line is not split by another writer */
	(void)!ar_write_all(STDERR_FILENO, nl, strlen(nl));
}
