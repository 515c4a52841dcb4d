/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun commit SANDBOX [PATHS...]: apply an --overlay sandbox's
 * changes to the real workspace. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "overlay/overlay.h"
#include "cli.h"

#define COMMIT_USAGE                                                            \
	"Usage: agentrun commit [OPTIONS] SANDBOX [PATHS...]\n"                 \
	"\n"                                                                    \
	"Apply the changes of a stopped --overlay sandbox (all, or those\n"     \
	"under PATHS) to the real workspace, each file atomically, and print\n" \
	"what was applied. Symlinks are created as symlinks; fifos, sockets\n"  \
	"and device nodes are skipped; setuid/setgid bits are dropped. A\n"     \
	"conflict (a path the host changed too since the sandbox started)\n"    \
	"is not applied: the others are, the conflicts are named and the\n"     \
	"exit status is 1. A PATH without changes is an error.\n"               \
	"\n"                                                                    \
	"Protected changes (marked `!` by `agentrun changes`: git\n"            \
	"directories of any layout and depth, .vscode, .idea, .mcp.json,\n"     \
	".devcontainer, .devcontainer.json, .zed, .helix, mise's files,\n"      \
	"the agent CLIs' project config (.cursor, .gemini, .codex, ...),\n"     \
	".claude settings, commands and agents, .gitmodules, rc files; what\n"  \
	"the host may run code from) are held back: listed on stderr, left\n"   \
	"in the sandbox, exit status 0. Each is applied only when a PATH at\n"  \
	"or below its protected path names it (`commit NAME .vscode`), or\n"    \
	"with --include-protected.\n"                                           \
	"\n"                                                                    \
	"Options:\n"                                                            \
	"  -f, --force         apply conflicts too; the host's version of\n"    \
	"                      each is kept as PATH.orig\n"                     \
	"  -i, --interactive   ask for each change: y(es), n(o), d(iff),\n"     \
	"                      q(uit)\n"                                        \
	"  --include-protected apply protected changes too (below)\n"           \
	"  -h, --help          this help\n"

static int commit(struct ar_overlay *ov, char **paths, size_t n_paths,
		  void *arg, struct ar_error *err)
{
	return ar_overlay_commit(ov, paths, n_paths, arg, err);
}

int cmd_commit(struct ar_global_opts *g, int argc, char **argv)
{
	enum { OPT_INCLUDE = 256 };
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "interactive", no_argument, NULL, 'i' },
		{ "include-protected", no_argument, NULL, OPT_INCLUDE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_commit_opts o = { .in = stdin, .out = stdout };
	int c;

	(void)g;
	while ((c = getopt_long(argc, argv, "fih", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o.force = true;
			break;
		case 'i':
			o.interactive = true;
			break;
		case OPT_INCLUDE:
			o.include_protected = true;
			break;
		default:
			return cli_usage(COMMIT_USAGE, c == 'h' ? 0 : 1);
		}
	}
	if (optind >= argc)
		return cli_usage(COMMIT_USAGE, 1);
	return cli_overlay_command(argv + optind, argc - optind, commit, &o);
}
