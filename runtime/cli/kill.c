/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun kill <id> [SIGNAL] [--all] [--regex] */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>

#include "cli.h"
#include "container.h"
#include "signals.h"

#define KILL_USAGE                                                             \
	"Usage: agentrun kill [OPTIONS] ID [SIGNAL]\n"                         \
	"\n"                                                                   \
	"Send SIGNAL (default TERM; a name such as KILL or SIGKILL, or a\n"    \
	"number) to the container's init process.\n"                           \
	"\n"                                                                   \
	"Options:\n"                                                           \
	"  -a, --all    send it to every process of the container\n"           \
	"  -r, --regex  ID is a POSIX extended regular expression: signal\n"   \
	"               every container whose id it matches (crun)\n"          \
	"  -h, --help   this help\n"

int cmd_kill(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "regex", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	bool all = false, regex = false;
	int c, sig = SIGTERM;

	while ((c = getopt_long(argc, argv, "arh", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = true;
			break;
		case 'r':
			regex = true;
			break;
		default:
			return cli_usage(KILL_USAGE, c == 'h' ? 0 : 1);
		}
	}
	if (optind >= argc || argc - optind > 2)
		return cli_usage(KILL_USAGE, 1);
	if (argc - optind == 2 &&
	    ar_signal_parse(argv[optind + 1], &sig, &err) < 0)
		return cli_fail(&err);
	if (!regex)
		ar_log_set_container_id(argv[optind]);
	if ((regex ? ar_container_kill_matching(cli_state_root(g), argv[optind],
						sig, all, &err) :
		     ar_container_kill(cli_state_root(g), argv[optind], sig,
				       all, &err)) < 0)
		return cli_fail(&err);
	return 0;
}
