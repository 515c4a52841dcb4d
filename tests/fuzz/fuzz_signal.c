/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: signal names and numbers (`agentrun kill ID SIGNAL`). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz.h"

#include <signal.h>

#include "error.h"
#include "signals.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size);
int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct ar_error err = { 0 };
	char *s = fuzz_strndup(data, size);
	int sig = -12345;

	if (ar_signal_parse(s, &sig, &err) == 0) {
		/* Anything accepted is a real signal number. */
		FUZZ_CHECK(sig >= 1 && sig <= SIGRTMAX);
	} else {
		FUZZ_CHECK(sig == -12345);
		FUZZ_CHECK(err.msg[0] != '\0');
	}
	free(s);
	return 0;
}
