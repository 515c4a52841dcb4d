/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun delete <id> [--force] */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "container.h"

int cmd_delete(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	bool force = false;
	int c;

	while ((c = getopt_long(argc, argv, "fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			force = true;
			break;
		case 'h':
			printf("Usage: agentrun delete [--force] ID\n");
			return 0;
		default:
			fprintf(stderr,
				"Usage: agentrun delete [--force] ID\n");
			return 1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "Usage: agentrun delete [--force] ID\n");
		return 1;
	}
	if (ar_container_delete(cli_state_root(g), argv[optind], force, &err) <
	    0)
		return cli_fail(&err);
	return 0;
}
