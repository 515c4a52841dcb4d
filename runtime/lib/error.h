/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one error type of agentrun.
 *
 * Every function that can fail returns a status (0 on success, -1 on
 * failure) and fills a caller-provided struct ar_error.  Callers add
 * context with ar_error_wrap() as the error travels up; the CLI prints it
 * once.  The message lives in a fixed buffer, so filling an error never
 * allocates and is safe in a forked child.
 */
#ifndef AGENTRUN_ERROR_H
#define AGENTRUN_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#define AR_ERROR_MSG_MAX 2048

struct ar_error {
	int code; /* errno value, or 0 when the error is not a system error */
	char msg[AR_ERROR_MSG_MAX];
};

#define AR_ERROR_INIT                                                          \
	{                                                                      \
		0,                                                             \
		{                                                              \
			0                                                      \
		}                                                              \
	}

/*
 * The rule: a message ends in the errno text exactly when its code is the
 * errno of the call that failed. ar_error_set() is for that code (errno, a
 * copy saved from errno, -r of an API that returns -errno, r of one that
 * returns the errno); ar_error_set_plain() is for every other code (an E*
 * constant that classifies the error, 0, another error's .code).
 * tests/static/check-errno-rule.py checks every call (`make static`).
 */

/* Set the error: message from fmt, then ": strerror(errnum)" when
 * errnum != 0; err->code = errnum, the errno of the failed call.
 * Always returns -1 so a caller can `return ar_error_set(...)`. */
int ar_error_set(struct ar_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Set the error: message from fmt alone; err->code = errnum, a code that
 * classifies the error for callers that test it (EINVAL, ENOENT, ...). */
int ar_error_set_plain(struct ar_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix the existing message with context: "context: old message".
 * Returns -1. */
int ar_error_wrap(struct ar_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void ar_error_clear(struct ar_error *err);

/*
 * For the clang static analyzer only (clang-tidy, scan-build: see
 * tests/static/run-static.sh). It analyses one file at a time and cannot
 * see that these functions always return -1, so on every
 * `return ar_error_set(...)` path it assumes success and reports the
 * caller's unset out-parameters as garbage. The macros make the -1 visible
 * to it; compiled code is unchanged. (error.c defines the functions as
 * `int (ar_error_set)(...)` so that the macros do not apply there.)
 */
#ifdef __clang_analyzer__
#define ar_error_set(...)                                                      \
	({                                                                     \
		(ar_error_set)(__VA_ARGS__);                                   \
		-1;                                                            \
	})
#define ar_error_set_plain(...)                                                \
	({                                                                     \
		(ar_error_set_plain)(__VA_ARGS__);                             \
		-1;                                                            \
	})
#define ar_error_wrap(...)                                                     \
	({                                                                     \
		(ar_error_wrap)(__VA_ARGS__);                                  \
		-1;                                                            \
	})
#endif

static inline int ar_error_is_set(const struct ar_error *err)
{
	return err->msg[0] != '\0';
}

#endif
