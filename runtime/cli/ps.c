/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun ps [--format table|json] <id>: the container's processes. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cgroup_container.h"
#include "cli.h"

#define PS_USAGE                                                               \
	"Usage: agentrun ps [OPTIONS] ID\n"                                    \
	"\n"                                                                   \
	"List the processes of a container (its cgroup, or its pid\n"          \
	"namespace when it has no cgroup).\n"                                  \
	"\n"                                                                   \
	"Options:\n"                                                           \
	"  -f, --format table|json   output format (default table)\n"          \
	"  -h, --help                this help\n"

int cmd_ps(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "json") == 0)
				json = true;
			else if (strcmp(optarg, "table") == 0)
				json = false;
			else {
				fprintf(stderr,
					"agentrun ps: --format: unknown format `%s` (table or json)\n",
					optarg);
				return 1;
			}
			break;
		default:
			return cli_usage(PS_USAGE, c == 'h' ? 0 : 1);
		}
	}
	if (argc - optind != 1)
		return cli_usage(PS_USAGE, 1);
	ar_log_set_container_id(argv[optind]);
	if (ar_cgroup_container_ps(cli_state_root(g), argv[optind], json,
				   stdout, &err) < 0)
		return cli_fail(&err);
	return 0;
}
