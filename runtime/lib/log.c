/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "utils.h"

/* where ar_log() writes besides stderr */
enum log_dest { DEST_NONE = 0, DEST_FILE, DEST_SYSLOG, DEST_JOURNALD };

/* The journal's native protocol socket (systemd.journal-fields(7),
 * sd_journal_send(3)); one datagram per entry. */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static enum log_dest log_dest = DEST_NONE;
static int log_fd = -1; /* DEST_FILE */
static int journal_fd = -1; /* DEST_JOURNALD */
static char journal_id[256];
static char syslog_ident[256];
/* --log named the ID or IDENT: the container's id does not replace it */
static bool id_named;
static enum ar_log_format log_format = AR_LOG_TEXT;
static enum ar_log_level log_max = AR_LOG_INFO;

static const char *const level_names[] = { "error", "warning", "info",
					   "debug" };
static const int level_priorities[] = { LOG_ERR, LOG_WARNING, LOG_INFO,
					LOG_DEBUG };

int ar_log_level_parse(const char *name, enum ar_log_level *out)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(level_names); i++) {
		if (strcmp(name, level_names[i]) == 0) {
			*out = (enum ar_log_level)i;
			return 0;
		}
	}
	return -1;
}

/* s starts with prefix: the rest, else NULL */
static const char *after_prefix(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* The journal's socket, connected now: a process of ours that has moved
 * to a container's mount namespace still reaches the host's journal,
 * never a socket of the container's at the same path. No journal (no
 * systemd): -1, and the entries are lost as sd_journal_send's are;
 * errors still reach stderr. */
static int journal_connect(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX,
				    .sun_path = JOURNAL_SOCKET };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 &&
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int ar_log_init(const char *dest, enum ar_log_format format,
		enum ar_log_level max, struct ar_error *err)
{
	const char *arg;

	log_format = format;
	log_max = max;
	if (!dest || !*dest)
		return 0;
	if ((arg = after_prefix(dest, "syslog:"))) {
		/* the identity must outlive openlog's caller */
		snprintf(syslog_ident, sizeof(syslog_ident), "%s",
			 *arg ? arg : "agentrun");
		id_named = *arg != '\0';
		/* LOG_NDELAY: the socket now, before any fork or namespace
		 * change; glibc opens it close-on-exec */
		openlog(syslog_ident, LOG_NDELAY, LOG_USER);
		log_dest = DEST_SYSLOG;
		return 0;
	}
	if ((arg = after_prefix(dest, "journald:"))) {
		if (strchr(arg, '\n'))
			return ar_error_set_plain(
				err, EINVAL,
				"--log `%s`: the journal ID has a newline",
				dest);
		snprintf(journal_id, sizeof(journal_id), "%s", arg);
		id_named = *arg != '\0';
		journal_fd = journal_connect();
		log_dest = DEST_JOURNALD;
		return 0;
	}
	if ((arg = after_prefix(dest, "file:"))) {
		dest = arg;
	} else {
		/* WORD:REST names a destination type (crun refuses the
		 * ones it does not know): a typo of journald: must not
		 * become a file. A path with a colon is file:PATH, or one
		 * with a slash before the colon (./a:b, /var/log/a:b). */
		const char *colon = strchr(dest, ':');

		if (colon && !memchr(dest, '/', (size_t)(colon - dest)))
			return ar_error_set_plain(
				err, EINVAL,
				"--log `%s`: unknown destination type `%.*s:` (file:PATH, syslog:IDENT or journald:ID; a file whose name has a colon: file:%s)",
				dest, (int)(colon - dest), dest, dest);
	}
	if (!*dest)
		return ar_error_set_plain(err, EINVAL,
					  "--log `file:`: no path after file:");
	log_fd = open(dest, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (log_fd < 0)
		return ar_error_set(err, errno, "open log file `%s`", dest);
	log_dest = DEST_FILE;
	return 0;
}

bool ar_log_debug_enabled(void)
{
	return log_max >= AR_LOG_DEBUG;
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

/* One journal entry through the native protocol: KEY=VALUE lines, the
 * message in the binary form (KEY, newline, its length as 64-bit little
 * endian, the bytes, newline) as it may hold newlines. Best effort, as
 * sd_journal_send: no journal, no entry. */
static void journal_send(enum ar_log_level level, const char *msg)
{
	char head[64 + sizeof(journal_id) + 8];
	unsigned char len[8];
	uint64_t n = strlen(msg);
	struct iovec iov[4];
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = AR_ARRAY_SIZE(iov) };
	int h;

	if (journal_fd < 0)
		return;
	h = snprintf(head, sizeof(head),
		     "PRIORITY=%d\nSYSLOG_IDENTIFIER=agentrun\n%s%s%sMESSAGE\n",
		     level_priorities[level], journal_id[0] ? "ID=" : "",
		     journal_id, journal_id[0] ? "\n" : "");
	if (h < 0 || (size_t)h >= sizeof(head))
		return;
	for (size_t i = 0; i < sizeof(len); i++)
		len[i] = (unsigned char)(n >> (8 * i));
	iov[0] = (struct iovec){ head, (size_t)h };
	iov[1] = (struct iovec){ len, sizeof(len) };
	iov[2] = (struct iovec){ (void *)msg, n };
	iov[3] = (struct iovec){ "\n", 1 };
	(void)!sendmsg(journal_fd, &mh, MSG_NOSIGNAL);
}

/* The entry for the destination: "LEVEL: msg" (a file; the bare message
 * for syslog and the journal, whose priority says the level) or the JSON
 * object, without a newline. */
static void format_entry(char *out, size_t cap, enum ar_log_level level,
			 const char *msg)
{
	if (log_format == AR_LOG_JSON) {
		char esc[8192];
		char ts[64];
		struct timespec now;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &now);
		gmtime_r(&now.tv_sec, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		json_escape(esc, sizeof(esc), msg);
		snprintf(
			out, cap,
			"{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s.%09ldZ\"}",
			level_names[level], esc, ts, now.tv_nsec);
	} else if (log_dest == DEST_FILE) {
		snprintf(out, cap, "%s: %s", level_names[level], msg);
	} else {
		snprintf(out, cap, "%s", msg);
	}
}

void ar_log(enum ar_log_level level, const char *fmt, ...)
{
	char raw[4096], msg[8192];
	char line[8192 + 256];
	va_list ap;
	int saved = errno;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	controls_escape(msg, sizeof(msg), raw);

	/* Errors and warnings always reach stderr; the rest when there
	 * is no other destination. */
	if (log_dest == DEST_NONE || level <= AR_LOG_WARNING) {
		int n = snprintf(line, sizeof(line), "agentrun: %s%s\n",
				 level == AR_LOG_WARNING ? "warning: " : "",
				 msg);
		if (n > 0)
			(void)ar_write_all(STDERR_FILENO, line,
					   (size_t)n < sizeof(line) ?
						   (size_t)n :
						   sizeof(line) - 1);
	}
	if (log_dest == DEST_NONE) {
		errno = saved;
		return;
	}
	format_entry(line, sizeof(line) - 1, level, msg);
	switch (log_dest) {
	case DEST_FILE: {
		size_t n = strlen(line);

		line[n++] = '\n';
		(void)ar_write_all(log_fd, line, n);
		break;
	}
	case DEST_SYSLOG:
		syslog(level_priorities[level], "%s", line);
		break;
	case DEST_JOURNALD:
		journal_send(level, line);
		break;
	case DEST_NONE:
		break;
	}
	errno = saved;
}

void ar_log_set_container_id(const char *id)
{
	if (id_named || !id || !*id || strchr(id, '\n'))
		return;
	if (log_dest == DEST_JOURNALD) {
		snprintf(journal_id, sizeof(journal_id), "%s", id);
	} else if (log_dest == DEST_SYSLOG) {
		snprintf(syslog_ident, sizeof(syslog_ident), "%s", id);
		/* the new identity; the socket opened at the start stays */
		openlog(syslog_ident, LOG_NDELAY, LOG_USER);
	}
}

bool ar_log_has_destination(void)
{
	return log_dest != DEST_NONE;
}

const char *ar_log_destination(void)
{
	static char name[sizeof(syslog_ident) + 32];

	switch (log_dest) {
	case DEST_SYSLOG:
		snprintf(name, sizeof(name), "syslog (as %s)", syslog_ident);
		return name;
	case DEST_JOURNALD:
		return "the systemd journal";
	case DEST_NONE:
	case DEST_FILE:
		break;
	}
	return NULL;
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

	if (ar_log_has_destination())
		ar_log(AR_LOG_INFO, "%s",
		       strncmp(line, prefix, sizeof(prefix) - 1) == 0 ?
			       line + sizeof(prefix) - 1 :
			       line);
	/* one write: the line is not split by another writer */
	(void)!ar_write_all(STDERR_FILENO, nl, strlen(nl));
}
