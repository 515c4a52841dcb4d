/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun state <id>: the OCI state JSON */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "container.h"
#include "utils.h"

int cmd_state(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *json = NULL;
	const char *id;
	size_t len;
	int r = cli_parse_id_only(
		argc, argv, "Print the OCI state of a container (JSON).\n",
		&id);

	if (r != 0)
		return r < 0 ? 1 : 0;
	if (ar_container_state(cli_state_root(g), id, &json, &len, &err) < 0)
		return cli_fail(&err);
	fwrite(json, 1, len, stdout);
	fputc('\n', stdout);
	return 0;
}
