/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun doctor: what `agentrun sandbox` needs on this machine. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "../sandbox/doctor.h"

int cmd_doctor(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_doctor_env e;

	(void)g;
	if (argc > 1 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: agentrun doctor\n"
		       "\n"
		       "Check what `agentrun sandbox` needs on this machine; one line\n"
		       "per check (ok, warn, FAIL, skip) with the fix. Exit status 1\n"
		       "when a required check fails.\n"
		       "\n"
		       "Options:\n"
		       "  -h, --help   this help\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "agentrun doctor: unexpected argument `%s`\n",
			argv[1]);
		return 1;
	}
	ar_doctor_env_default(&e);
	return ar_doctor_report(&e, stdout) > 0 ? 1 : 0;
}
