/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun start <id> */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "container.h"

int cmd_start(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;
	const char *id;
	int r = cli_parse_id_only(argc, argv, &id);

	if (r != 0)
		return r < 0 ? 1 : 0;
	if (ar_container_start(cli_state_root(g), id, &err) < 0)
		return cli_fail(&err);
	return 0;
}

/* Commands that take only an id (start, state). */
int cli_parse_id_only(int argc, char **argv, const char **id)
{
	const char *what =
		strcmp(argv[0], "start") == 0 ?
			"Start the process of a created container: the startContainer\n"
			"hooks run, then the user's program; the poststart hooks after.\n" :
			"Print the OCI state of a container (JSON).\n";

	if (argc == 2 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: agentrun %s ID\n"
		       "\n"
		       "%s"
		       "\n"
		       "Options:\n"
		       "  -h, --help   this help\n",
		       argv[0], what);
		return 1;
	}
	if (argc == 2 && argv[1][0] != '-') {
		*id = argv[1];
		return 0;
	}
	fprintf(stderr, "Usage: agentrun %s ID (--help: more)\n", argv[0]);
	return -1;
}
