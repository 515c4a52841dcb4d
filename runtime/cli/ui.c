/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun ui [--listen 127.0.0.1:PORT]: the web dashboard (ui/ui.h). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "ui/ui.h"
#include "cli.h"

#define UI_USAGE                                                               \
	"Usage: agentrun ui [--listen 127.0.0.1:PORT]\n"                       \
	"\n"                                                                   \
	"Serve the web dashboard of the running sandboxes on 127.0.0.1 (a\n"   \
	"random port unless --listen): their pending --net ask requests\n"     \
	"with buttons (once, session, always, refuse), the live event\n"       \
	"stream, and the changes of --overlay sandboxes (diff, commit,\n"      \
	"discard). Prints a URL with a one-time token: the first page load\n"  \
	"spends it for a session cookie. Runs until Ctrl-C.\n"                 \
	"\n"                                                                   \
	"Options:\n"                                                           \
	"  --listen ADDR:PORT  127.0.0.1:PORT or localhost:PORT only\n"        \
	"  -h, --help          this help\n"

int cmd_ui(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	struct ar_ui_opts o = { .out = stdout };
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.listen = optarg;
			break;
		default:
			return cli_usage(UI_USAGE, c == 'h' ? 0 : 1);
		}
	}
	if (optind != argc)
		return cli_usage(UI_USAGE, 1);
	o.root = cli_state_root(g);
	return ar_ui_serve(&o, &err) < 0 ? cli_fail(&err) : 0;
}
