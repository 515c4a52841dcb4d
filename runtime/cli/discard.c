/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun discard SANDBOX: drop an --overlay sandbox's changes. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "../sandbox/overlay.h"
#include "cli.h"

static const char usage[] =
	"Usage: agentrun discard SANDBOX\n"
	"\n"
	"Drop an --overlay sandbox and every change it holds.\n"
	"\n"
	"Options:\n"
	"  -h, --help   this help\n";

int cmd_discard(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_overlay ov;
	int r;

	(void)g;
	if (argc == 2 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fputs(usage, stderr);
		return 1;
	}
	if (ar_overlay_open(argv[1], &ov, &err) < 0)
		return cli_fail(&err);
	r = ar_overlay_discard(&ov, &err);
	ar_overlay_release(&ov);
	return r < 0 ? cli_fail(&err) : 0;
}
