/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun changes SANDBOX [PATHS...]: what an --overlay sandbox changed. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
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
	"line; git's own data is one line per git directory, --all lists\n"      \
	"it). Directories\n"                                                     \
	"end in '/'; names are quoted as git quotes them. A PATH\n"              \
	"without changes is an error.\n"                                         \
	"\n"                                                                     \
	"Options:\n"                                                             \
	"  -a, --all    git's own data path by path, not one line per git\n"     \
	"               directory\n"                                             \
	"  -h, --help   this help\n"

static int print_changes(struct ar_overlay *ov, char **paths, size_t n_paths,
			 void *arg, struct ar_error *err)
{
	return ar_overlay_print_changes_all(ov, paths, n_paths, *(bool *)arg,
					    stdout, err);
}

int cmd_changes(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool all = false;
	int c;

	(void)g;
	while ((c = getopt_long(argc, argv, "ah", longopts, NULL)) != -1) {
		if (c == 'a')
			all = true;
		else
			return cli_usage(CHANGES_USAGE, c == 'h' ? 0 : 1);
	}
	if (argc - optind < 1)
		return cli_usage(CHANGES_USAGE, 1);
	return cli_overlay_command(argv + optind, argc - optind, print_changes,
				   &all);
}
