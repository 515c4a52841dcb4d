/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun pause <id>: freeze every process of the container. */
#include "config.h"

#include "cgroup_container.h"
#include "cli.h"

int cmd_pause(struct ar_global_opts *g, int argc, char **argv)
{
	return cli_id_command(
		g, argc, argv,
		"Freeze every process of a running container (cgroup freezer).\n",
		ar_cgroup_container_pause);
}
