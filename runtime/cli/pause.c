/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun pause <id>: freeze every process of the container. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cgroup_container.h"
#include "cli.h"

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
			printf("Usage: agentrun pause ID\n");
			return 0;
		}
		fprintf(stderr, "Usage: agentrun pause ID\n");
		return 1;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "Usage: agentrun pause ID\n");
		return 1;
	}
	if (ar_cgroup_container_pause(cli_state_root(g), argv[optind], &err) < 0)
		return cli_fail(&err);
	return 0;
}
