/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun changes SANDBOX [PATHS...]: what an --overlay sandbox changed. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "../sandbox/overlay.h"
#include "cli.h"

#define CHANGES_USAGE                                                            \
	"Usage: agentrun changes [OPTIONS] SANDBOX [PATHS...]\n"                 \
	"\n"                                                                     \
	"List what an --overlay sandbox changed in its workspace, one line\n"    \
	"per path as `git status --short` has them: A added, M modified,\n"      \
	"D deleted, R renamed; a U in the second column marks a conflict (the\n" \
	"host changed the path too since the sandbox started). Directories\n"    \
	"end in '/'; names are quoted as git quotes them. A PATH\n"              \
	"without changes is an error.\n"                                         \
	"\n"                                                                     \
	"Options:\n"                                                             \
	"  -h, --help   this help\n"

int cmd_changes(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	struct ar_overlay ov;
	int c, r;

	(void)g;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(CHANGES_USAGE, stdout);
			return 0;
		}
		fputs(CHANGES_USAGE, stderr);
		return 1;
	}
	if (optind >= argc) {
		fputs(CHANGES_USAGE, stderr);
		return 1;
	}
	if (ar_overlay_open(argv[optind], &ov, &err) < 0)
		return cli_fail(&err);
	r = ar_overlay_print_changes(&ov, argv + optind + 1,
				     (size_t)(argc - optind - 1), stdout, &err);
	ar_overlay_release(&ov);
	return r < 0 ? cli_fail(&err) : 0;
}
