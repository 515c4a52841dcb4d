/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun delete <id> [--force] [--regex] */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "container.h"

#define DELETE_USAGE                                                           \
	"Usage: agentrun delete [OPTIONS] ID\n"                                \
	"\n"                                                                   \
	"Delete a stopped or created container: its state, its cgroup; the\n"  \
	"poststop hooks run.\n"                                                \
	"\n"                                                                   \
	"Options:\n"                                                           \
	"  -f, --force   kill a running container first (SIGKILL); a\n"        \
	"                missing container is no error\n"                      \
	"  -r, --regex   ID is a POSIX extended regular expression: delete\n"  \
	"                every container whose id it matches (crun)\n"         \
	"  -h, --help    this help\n"

int cmd_delete(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "regex", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	bool force = false, regex = false;
	int c;

	while ((c = getopt_long(argc, argv, "frh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			force = true;
			break;
		case 'r':
			regex = true;
			break;
		default:
			return cli_usage(DELETE_USAGE, c == 'h' ? 0 : 1);
		}
	}
	if (optind != argc - 1)
		return cli_usage(DELETE_USAGE, 1);
	if (!regex)
		ar_log_set_container_id(argv[optind]);
	if ((regex ? ar_container_delete_matching(cli_state_root(g),
						  argv[optind], force, &err) :
		     ar_container_delete(cli_state_root(g), argv[optind], force,
					 &err)) < 0)
		return cli_fail(&err);
	return 0;
}
