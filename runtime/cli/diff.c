/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun diff SANDBOX [PATHS...]: the changes of an --overlay sandbox as
 * a git diff. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "../sandbox/overlay.h"
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

int cmd_diff(struct ar_global_opts *g, int argc, char **argv)
{
	enum { OPT_STAT = 256 };
	static const struct option longopts[] = {
		{ "stat", no_argument, NULL, OPT_STAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	struct ar_overlay ov;
	bool stat = false;
	int c, r;

	(void)g;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_STAT:
			stat = true;
			break;
		case 'h':
			fputs(DIFF_USAGE, stdout);
			return 0;
		default:
			fputs(DIFF_USAGE, stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		fputs(DIFF_USAGE, stderr);
		return 1;
	}
	if (ar_overlay_open(argv[optind], &ov, &err) < 0)
		return cli_fail(&err);
	r = ar_overlay_diff(&ov, argv + optind + 1, (size_t)(argc - optind - 1),
			    stat, stdout, &err);
	ar_overlay_release(&ov);
	return r < 0 ? cli_fail(&err) : 0;
}
