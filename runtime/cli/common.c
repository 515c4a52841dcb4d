/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Option parsing shared by several commands. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_parse_id_only(int argc, char **argv, const char *summary,
		      const char **id)
{
	if (argc == 2 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: agentrun %s ID\n"
		       "\n"
		       "%s"
		       "\n"
		       "Options:\n"
		       "  -h, --help   this help\n",
		       argv[0], summary);
		return 1;
	}
	if (argc == 2 && argv[1][0] != '-') {
		*id = argv[1];
		return 0;
	}
	fprintf(stderr, "Usage: agentrun %s ID (--help: more)\n", argv[0]);
	return -1;
}

int cli_id_command(struct ar_global_opts *g, int argc, char **argv,
		   const char *summary, cli_id_fn fn)
{
	struct ar_error err = AR_ERROR_INIT;
	const char *id;
	int r = cli_parse_id_only(argc, argv, summary, &id);

	if (r != 0)
		return r < 0 ? 1 : 0;
	if (fn(cli_state_root(g), id, &err) < 0)
		return cli_fail(&err);
	return 0;
}
