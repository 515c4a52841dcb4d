/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun discard SANDBOX: drop an --overlay sandbox's changes. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "overlay/overlay.h"
#include "cli.h"

#define DISCARD_USAGE                                                          \
	"Usage: agentrun discard SANDBOX\n"                                    \
	"\n"                                                                   \
	"Drop a stopped --overlay sandbox and every change it holds.\n"        \
	"\n"                                                                   \
	"Options:\n"                                                           \
	"  -h, --help   this help\n"

static int discard(struct ar_overlay *ov, char **paths, size_t n_paths,
		   void *arg, struct ar_error *err)
{
	(void)paths;
	(void)n_paths;
	(void)arg;
	return ar_overlay_discard(ov, err);
}

int cmd_discard(struct ar_global_opts *g, int argc, char **argv)
{
	int r = cli_parse_help_only(argc, argv, DISCARD_USAGE, 1, 1);

	(void)g;
	if (r >= 0)
		return r;
	return cli_overlay_command(argv + optind, argc - optind, discard, NULL);
}
