/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun discard SANDBOX: drop an --overlay sandbox's changes. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "../sandbox/overlay.h"
#include "cli.h"

#define DISCARD_USAGE                                                          \
	"Usage: agentrun discard SANDBOX\n"                                    \
	"\n"                                                                   \
	"Drop a stopped --overlay sandbox and every change it holds.\n"        \
	"\n"                                                                   \
	"Options:\n"                                                           \
	"  -h, --help   this help\n"

int cmd_discard(struct ar_global_opts *g, int argc, char **argv)
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
			fputs(DISCARD_USAGE, stdout);
			return 0;
		}
		fputs(DISCARD_USAGE, stderr);
		return 1;
	}
	if (optind != argc - 1) {
		fputs(DISCARD_USAGE, stderr);
		return 1;
	}
	if (ar_overlay_open(argv[optind], &ov, &err) < 0)
		return cli_fail(&err);
	r = ar_overlay_discard(&ov, &err);
	ar_overlay_release(&ov);
	return r < 0 ? cli_fail(&err) : 0;
}
