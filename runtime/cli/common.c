/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every command shares: the error exit, the default state root,
 * id-only option parsing. main.c holds the command table and calls the
 * commands; the commands call this file, never main.c. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "userns.h"

int cli_fail(struct ar_error *err)
{
	ar_error_log("%s", err->msg[0] ? err->msg : "unknown error");
	return 1;
}

const char *cli_state_root(struct ar_global_opts *g)
{
	static char buf[4096];
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (g->root)
		return g->root;
	/* Real root uses /run/agentrun. Root of a user namespace (e.g.
	 * inside rootless podman) cannot write there: like crun, use the
	 * user's runtime directory. */
	if (geteuid() == 0 && (!xdg || !*xdg || ar_userns_is_initial())) {
		g->root = "/run/agentrun";
		return g->root;
	}
	if (xdg && *xdg)
		snprintf(buf, sizeof(buf), "%s/agentrun", xdg);
	else
		snprintf(buf, sizeof(buf), "/tmp/agentrun-%u",
			 (unsigned)geteuid());
	g->root = buf;
	return g->root;
}

int cli_parse_id_only(int argc, char **argv, const char *summary,
		      const char **id)
{
	if (argc == 2 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: agentrun %s ID\n"
		       "\n"
		       "%s"
		       "\n"
		       "Options:\n"
		       "  -h, --help   this help\n",
		       argv[0], summary);
		return 1;
	}
	if (argc == 2 && argv[1][0] != '-') {
		*id = argv[1];
		return 0;
	}
	fprintf(stderr, "Usage: agentrun %s ID (--help: more)\n", argv[0]);
	return -1;
}

int cli_id_command(struct ar_global_opts *g, int argc, char **argv,
		   const char *summary, cli_id_fn fn)
{
	struct ar_error err = AR_ERROR_INIT;
	const char *id;
	int r = cli_parse_id_only(argc, argv, summary, &id);

	if (r != 0)
		return r < 0 ? 1 : 0;
	if (fn(cli_state_root(g), id, &err) < 0)
		return cli_fail(&err);
	return 0;
}
