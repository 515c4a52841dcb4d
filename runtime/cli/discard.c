/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun discard SANDBOX: drop an --overlay sandbox's changes. */
#include "config.h"

#include <stdio.h>

#include "../sandbox/overlay.h"
#include "cli.h"

int cmd_discard(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_overlay ov;
	int r;

	(void)g;
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr,
			"Usage: agentrun discard SANDBOX\n"
			"Drop an --overlay sandbox and every change it holds.\n");
		return argc == 2 ? 0 : 1;
	}
	if (ar_overlay_open(argv[1], &ov, &err) < 0)
		return cli_fail(&err);
	r = ar_overlay_discard(&ov, &err);
	ar_overlay_release(&ov);
	return r < 0 ? cli_fail(&err) : 0;
}
