/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun start <id> */
#include "config.h"

#include "cli.h"
#include "container.h"

int cmd_start(struct ar_global_opts *g, int argc, char **argv)
{
	return cli_id_command(
		g, argc, argv,
		"Start the process of a created container: the startContainer\n"
		"hooks run, then the user's program; the poststart hooks after.\n",
		ar_container_start);
}
