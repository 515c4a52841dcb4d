/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runtime log: stderr, and the --log destination (a file, syslog or the
 * systemd journal, crun's `[file:]PATH`, `syslog:ID`, `journald:ID`) in
 * text or JSON (the format podman/conmon parse:
 * {"level":"error","msg":"...","time":"..."}). */
#ifndef AGENTRUN_LOG_H
#define AGENTRUN_LOG_H

#include <stdbool.h>

enum ar_log_level {
	AR_LOG_ERROR = 0,
	AR_LOG_WARNING,
	AR_LOG_INFO,
	AR_LOG_DEBUG
};
enum ar_log_format { AR_LOG_TEXT = 0, AR_LOG_JSON };

struct ar_error;

/* dest may be NULL (stderr only); otherwise `[file:]PATH` (opened
 * O_APPEND), `syslog:[IDENT]` (syslog(3) as IDENT; default the
 * container's id, ar_log_set_container_id, else "agentrun") or
 * `journald:[ID]` (the journal's native socket, the entry's ID= field
 * ID; default the container's id). max: the most verbose level logged (AR_LOG_INFO by default,
 * AR_LOG_ERROR for --log-level error, AR_LOG_DEBUG for --debug).
 * Returns 0, or -1 with err filled (an unknown destination type, a file
 * that cannot be opened). */
int ar_log_init(const char *dest, enum ar_log_format format,
		enum ar_log_level max, struct ar_error *err);
/* The container the command acts on, once the command knows it: the
 * journal entries' ID= and syslog's identity when --log named none
 * (`journald:`, `syslog:`), as crun does. */
void ar_log_set_container_id(const char *id);
/* `error`, `warning`, `info` or `debug` (--log-level) into *out; -1 for
 * any other name. */
int ar_log_level_parse(const char *name, enum ar_log_level *out);
void ar_log(enum ar_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool ar_log_debug_enabled(void);
/* The fd of the log file (-1 when none, or when the destination is
 * syslog or the journal); hooks write their output there. */
int ar_log_fd(void);
/* A --log destination (file, syslog, journal) takes the messages that
 * do not go to stderr (info, debug). */
bool ar_log_has_destination(void);
/* For a message that says where the lines went: "syslog (as IDENT)" or
 * "the systemd journal"; NULL for a file (ar_log_fd) or none. */
const char *ar_log_destination(void);
/* A summary line the user reads at exit, "agentrun: ..." (blocked
 * connections, attempts on protected paths): on stderr whatever the log
 * level, and in the --log file too when there is one. */
void ar_log_summary(const char *line);

/* The installed user documentation messages point to (configure's
 * docdir; docs/ in the source tree). */
#ifndef AGENTRUN_DOCDIR
#define AGENTRUN_DOCDIR "/usr/local/share/doc/agentrun"
#endif
#define AR_SANDBOX_DOC AGENTRUN_DOCDIR "/sandbox.md"

#define ar_error_log(...) ar_log(AR_LOG_ERROR, __VA_ARGS__)
#define ar_warn(...) ar_log(AR_LOG_WARNING, __VA_ARGS__)
#define ar_debug(...)                                                          \
	do {                                                                   \
		if (ar_log_debug_enabled())                                    \
			ar_log(AR_LOG_DEBUG, __VA_ARGS__);                     \
	} while (0)

#endif
