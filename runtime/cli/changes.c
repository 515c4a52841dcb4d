/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun changes SANDBOX [PATHS...]: what an --overlay sandbox changed. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "overlay/overlay.h"
#include "cli.h"

#define CHANGES_USAGE                                                            \
	"Usage: agentrun changes [OPTIONS] SANDBOX [PATHS...]\n"                 \
	"\n"                                                                     \
	"List what an --overlay sandbox changed in its workspace, one line\n"    \
	"per path as `git status --short` has them: A added, M modified,\n"      \
	"D deleted, R renamed; a U in the second column marks a conflict (the\n" \
	"host changed the path too since the sandbox started), a '!' a\n"        \
	"protected change that `agentrun commit` holds back unless named\n"      \
	"(git directories, editor and agent config: counted on the last\n"       \
	"line; git's own data is one line per git directory). Directories\n"     \
	"end in '/'; names are quoted as git quotes them. A PATH\n"              \
	"without changes is an error.\n"                                         \
	"\n"                                                                     \
	"Options:\n"                                                             \
	"  -h, --help   this help\n"

static int print_changes(struct ar_overlay *ov, char **paths, size_t n_paths,
			 void *arg, struct ar_error *err)
{
	(void)arg;
	return ar_overlay_print_changes(ov, paths, n_paths, stdout, err);
}

int cmd_changes(struct ar_global_opts *g, int argc, char **argv)
{
	int r = cli_parse_help_only(argc, argv, CHANGES_USAGE, 1, -1);

	(void)g;
	if (r >= 0)
		return r;
	return cli_overlay_command(argv + optind, argc - optind, print_changes,
				   NULL);
}
