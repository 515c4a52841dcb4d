/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun start <id> */
#include "config.h"

#include <stdio.h>

#include "cli.h"
#include "container.h"

int cmd_start(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;
	const char *id;

	if (cli_parse_id_only(argc, argv, &id) < 0)
		return 1;
	if (ar_container_start(cli_state_root(g), id, &err) < 0)
		return cli_fail(&err);
	return 0;
}

/* Commands that take only an id (start, state). */
int cli_parse_id_only(int argc, char **argv, const char **id)
{
	if (argc == 2 && argv[1][0] != '-') {
		*id = argv[1];
		return 0;
	}
	fprintf(stderr, "Usage: agentrun %s ID\n", argv[0]);
	return -1;
}
