/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun resume <id>: thaw a paused container. */
#include "config.h"

#include "cgroup_container.h"
#include "cli.h"

int cmd_resume(struct ar_global_opts *g, int argc, char **argv)
{
	return cli_id_command(g, argc, argv,
			      "Thaw the processes of a paused container.\n",
			      ar_cgroup_container_resume);
}
