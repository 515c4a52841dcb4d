/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int error_vset(struct ar_error *err, int errnum, int with_strerror,
		      const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static int error_vset(struct ar_error *err, int errnum, int with_strerror,
		      const char *fmt, va_list ap)
{
	int n;

	if (!err)
		return -1;
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	if (n < 0)
		n = 0;
	if (with_strerror && errnum > 0 && (size_t)n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %s",
			 strerror(errnum));
	err->code = errnum;
	return -1;
}

int(ar_error_set)(struct ar_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, errnum, 1, fmt, ap);
	va_end(ap);
	return -1;
}

int(ar_error_set_plain)(struct ar_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, errnum, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int(ar_error_wrap)(struct ar_error *err, const char *fmt, ...)
{
	char old[AR_ERROR_MSG_MAX];
	size_t plen, olen;
	va_list ap;

	if (!err)
		return -1;
	memcpy(old, err->msg, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	plen = strnlen(err->msg, sizeof(err->msg) - 1);
	olen = strlen(old);
	if (olen && plen + 2 < sizeof(err->msg)) {
		size_t room = sizeof(err->msg) - plen - 3;

		err->msg[plen++] = ':';
		err->msg[plen++] = ' ';
		if (olen > room)
			olen = room;
		memcpy(err->msg + plen, old, olen);
		err->msg[plen + olen] = '\0';
	}
	return -1;
}

void ar_error_clear(struct ar_error *err)
{
	err->code = 0;
	err->msg[0] = '\0';
}
