/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun pause <id>: freeze every process of the container. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cgroup_container.h"
#include "cli.h"

#define PAUSE_USAGE                                                            \
	"Usage: agentrun pause ID\n"                                           \
	"\n"                                                                   \
	"Freeze every process of a running container (cgroup freezer).\n"      \
	"\n"                                                                   \
	"Options:\n"                                                           \
	"  -h, --help   this help\n"

int cmd_pause(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(PAUSE_USAGE, stdout);
			return 0;
		}
		fputs(PAUSE_USAGE, stderr);
		return 1;
	}
	if (argc - optind != 1) {
		fputs(PAUSE_USAGE, stderr);
		return 1;
	}
	if (ar_cgroup_container_pause(cli_state_root(g), argv[optind], &err) <
	    0)
		return cli_fail(&err);
	return 0;
}
