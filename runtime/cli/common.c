/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every command shares: the error exit, the default state root,
 * the usage exits, id-only and help-only option parsing, the open and
 * release around an --overlay sandbox command. main.c holds the command
 * table and calls the commands; the commands call this file, never
 * main.c. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "overlay/overlay.h"
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
		ar_log_set_container_id(*id);
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

int cli_usage(const char *usage, int status)
{
	fputs(usage, status == 0 ? stdout : stderr);
	return status;
}

int cli_parse_help_only(int argc, char **argv, const char *usage,
			int min_operands, int max_operands)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c = getopt_long(argc, argv, "h", longopts, NULL);
	int n;

	if (c != -1)
		return cli_usage(usage, c == 'h' ? 0 : 1);
	n = argc - optind;
	if (n < min_operands || (max_operands >= 0 && n > max_operands))
		return cli_usage(usage, 1);
	return -1;
}

int cli_overlay_command(char **operands, int n_operands, cli_overlay_fn fn,
			void *arg)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_overlay ov;
	int r;

	if (ar_overlay_open(operands[0], &ov, &err) < 0)
		return cli_fail(&err);
	r = fn(&ov, operands + 1, (size_t)(n_operands - 1), arg, &err);
	ar_overlay_release(&ov);
	return r < 0 ? cli_fail(&err) : 0;
}
