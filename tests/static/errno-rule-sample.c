/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Input of `check-errno-rule.py --self-test` (never compiled): the call
 * after each line that is only the comment EXPECT_FLAG (written in lower
 * case, with a colon) must be flagged, no other call. */
#include <errno.h>

#include "error.h"

static int report(struct ar_error *err, int e, const char *what)
{
	return ar_error_set(err, e, "%s", what);
}

static int report_any(struct ar_error *err, int code)
{
	/* expect: flag */
	return ar_error_set(err, code, "something");
}

int sample(struct ar_error *err, int fd, struct ar_error *sub)
{
	int saved, r;

	if (fd < 0)
		return ar_error_set(err, errno, "open");
	if (fd == 1) {
		saved = errno;
		return ar_error_set(err, saved, "read");
	}
	if (fd == 2)
		/* expect: flag */
		return ar_error_set(err, EINVAL, "bad value");
	if (fd == 3)
		/* expect: flag */
		return ar_error_set_plain(err, errno, "stat");
	if (fd == 4)
		return ar_error_set_plain(err, EINVAL, "bad value");
	if (fd == 5)
		return ar_error_set_plain(err, sub->code, "%s", sub->msg);
	r = pthread_create(NULL, NULL, NULL, NULL);
	if (r != 0)
		return ar_error_set(err, r, "thread");
	r = seccomp_load(NULL);
	if (r < 0)
		return ar_error_set(err, -r, "seccomp");
	if (fd == 6)
		/* expect: flag */
		return ar_error_set(err, fd, "not an errno");
	if (fd == 7)
		/* expect: flag */
		return ar_error_set(err, -fd, "not an errno");
	if (fd == 8)
		return ar_error_set(err, r < 0 ? errno : EIO, "short read");
	if (fd == 9)
		/* expect: flag */
		return ar_error_set(err, r < 0 ? EPERM : EIO, "x");
	if (fd == 10)
		/* expect: flag */
		return ar_error_set_plain(err, saved, "read");
	if (fd == 11)
		/* expect: flag */
		return ar_error_set(err, 0, "no code");
	/* ar_error_set(err, EINVAL, "in a comment: not a call"); */
	if (fd == 12)
		return ar_error_set_plain(err, EINVAL,
					  "ar_error_set(err, 1, x)");
	if (fd == 13)
		return report(err, errno, "via a parameter");
	if (fd == 14)
		return report(err, ESTALE, "a stand-in constant");
	return report_any(err, EINVAL);
}
