/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun overlays: the --overlay sandboxes of this user. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "overlay/overlay.h"
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
	struct ar_error err = AR_ERROR_INIT;
	int r = cli_parse_help_only(argc, argv, OVERLAYS_USAGE, 0, 0);

	(void)g;
	if (r >= 0)
		return r;
	return ar_overlay_list(stdout, &err) < 0 ? cli_fail(&err) : 0;
}
