/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The AGENTRUN_TEST_CRASH_AT test hook; see crash_point.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "crash_point.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"

static const char *target;
static bool target_read;

const char *ar_crash_point_target(void)
{
	if (!target_read) {
		const char *v = getenv(AR_CRASH_ENV);

		target = v && *v ? v : NULL;
		target_read = true;
	}
	return target;
}

void ar_crash_now(const char *point)
{
	ar_debug("%s: SIGKILL at `%s`", AR_CRASH_ENV, point);
	for (;;) {
		kill(getpid(), SIGKILL);
		pause();
	}
}
