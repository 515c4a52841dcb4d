/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun mounts add|remove <id> <file>: mounts made in, or taken out
 * of, a live container (crun's `mounts`). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mounts_live.h"

static const char usage[] =
	"Usage: agentrun mounts add|remove ID FILE\n"
	"\n"
	"Add the mounts of FILE to the running container ID, or remove them.\n"
	"FILE is a JSON array of OCI mount objects (destination, source, type,\n"
	"options, as in config.json's mounts). add: each destination is made\n"
	"inside the container's root (a symlink of the container's never leads\n"
	"out of it); remove: each destination must be a mount point, reached\n"
	"without following any symlink.\n"
	"\n"
	"Options:\n"
	"  -h, --help   this help\n";

int cmd_mounts(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;
	int r = cli_parse_help_only(argc, argv, usage, 3, 3);
	const char *action;
	bool add;

	if (r >= 0)
		return r;
	action = argv[optind];
	if (strcmp(action, "add") == 0)
		add = true;
	else if (strcmp(action, "remove") == 0)
		add = false;
	else {
		fprintf(stderr,
			"agentrun mounts: unknown action `%s` (add or remove)\n",
			action);
		return cli_usage(usage, 1);
	}
	ar_log_set_container_id(argv[optind + 1]);
	if (ar_container_mounts_update(cli_state_root(g), argv[optind + 1],
				       argv[optind + 2], add, &err) < 0)
		return cli_fail(&err);
	return 0;
}
