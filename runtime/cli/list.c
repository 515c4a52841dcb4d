/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun list [--format table|json] [--quiet] */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "container.h"

#define LIST_USAGE                                                             \
	"Usage: agentrun list [OPTIONS]\n"                                     \
	"\n"                                                                   \
	"List the containers of the state directory (--root).\n"               \
	"\n"                                                                   \
	"Options:\n"                                                           \
	"  -f, --format table|json   output format (default table)\n"          \
	"  -q, --quiet               print the container ids only\n"           \
	"  -h, --help                this help\n"

int cmd_list(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	enum ar_list_format format = AR_LIST_TABLE;
	bool quiet = false;
	int c;

	while ((c = getopt_long(argc, argv, "f:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "json") == 0)
				format = AR_LIST_JSON;
			else if (strcmp(optarg, "table") == 0)
				format = AR_LIST_TABLE;
			else {
				fprintf(stderr,
					"agentrun list: --format: expected table or json, got `%s`\n",
					optarg);
				return 1;
			}
			break;
		case 'q':
			quiet = true;
			break;
		default:
			return cli_usage(LIST_USAGE, c == 'h' ? 0 : 1);
		}
	}
	if (optind != argc)
		return cli_usage(LIST_USAGE, 1);
	if (ar_container_list(cli_state_root(g), format, quiet, stdout, &err) <
	    0)
		return cli_fail(&err);
	return 0;
}
