/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun diff SANDBOX [PATHS...]: the changes of an --overlay sandbox as
 * a git diff. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "overlay/overlay.h"
#include "cli.h"

#define DIFF_USAGE                                                             \
	"Usage: agentrun diff [OPTIONS] SANDBOX [PATHS...]\n"                  \
	"\n"                                                                   \
	"Show the changes of an --overlay sandbox (all, or those under\n"      \
	"PATHS) as a git diff that `git apply` takes: mode changes, new and\n" \
	"deleted files (also those of a deleted directory), symlinks as\n"     \
	"their target. A PATH without changes is an error.\n"                  \
	"\n"                                                                   \
	"Options:\n"                                                           \
	"  --stat       a diffstat instead of the diff\n"                      \
	"  -h, --help   this help\n"

static int diff(struct ar_overlay *ov, char **paths, size_t n_paths, void *arg,
		struct ar_error *err)
{
	return ar_overlay_diff(ov, paths, n_paths, *(bool *)arg, stdout, err);
}

int cmd_diff(struct ar_global_opts *g, int argc, char **argv)
{
	enum { OPT_STAT = 256 };
	static const struct option longopts[] = {
		{ "stat", no_argument, NULL, OPT_STAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool stat = false;
	int c;

	(void)g;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c != OPT_STAT)
			return cli_usage(DIFF_USAGE, c == 'h' ? 0 : 1);
		stat = true;
	}
	if (optind >= argc)
		return cli_usage(DIFF_USAGE, 1);
	return cli_overlay_command(argv + optind, argc - optind, diff, &stat);
}
