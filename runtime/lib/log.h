/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runtime log: stderr, and the --log file in text or JSON (the format
 * podman/conmon parse: {"level":"error","msg":"...","time":"..."}). */
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

/* path may be NULL (stderr only). Returns 0 or -1 (errno). */
int ar_log_init(const char *path, enum ar_log_format format, bool debug);
void ar_log(enum ar_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool ar_log_debug_enabled(void);
/* The fd of the log file (-1 when none); hooks write their output there. */
int ar_log_fd(void);
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
