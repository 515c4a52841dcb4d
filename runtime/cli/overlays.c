/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun overlays: the --overlay sandboxes of this user. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "../sandbox/overlay.h"
#include "cli.h"

#define OVERLAYS_USAGE                                                         \
	"Usage: agentrun overlays\n"                                           \
	"\n"                                                                   \
	"List the --overlay sandboxes of this user: name, age, number of\n"    \
	"changed paths, running (with the pid) or stopped, workspace.\n"       \
	"\n"                                                                   \
	"Options:\n"                                                           \
	"  -h, --help   this help\n"

int cmd_overlays(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	int c;

	(void)g;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(OVERLAYS_USAGE, stdout);
			return 0;
		}
		fputs(OVERLAYS_USAGE, stderr);
		return 1;
	}
	if (optind != argc) {
		fputs(OVERLAYS_USAGE, stderr);
		return 1;
	}
	return ar_overlay_list(stdout, &err) < 0 ? cli_fail(&err) : 0;
}
