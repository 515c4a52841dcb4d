/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun run <id> [create options] [--detach] [--keep] */
#include "config.h"

#include "cli.h"
#include "container.h"

int cmd_run(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_create_opts o;
	int rc, status;

	if (cli_parse_create_opts(g, argc, argv, true, &o, &rc) < 0)
		return rc;
	if (ar_container_run(&o, &status, &err) < 0)
		return cli_fail(&err);
	return status;
}
