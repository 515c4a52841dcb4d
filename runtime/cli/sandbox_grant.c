/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun sandbox allow NAME [--force] --net HOST[:PORT] | --ro PATH | --rw PATH
 * agentrun sandbox revoke NAME --net HOST[:PORT] | --ro PATH | --rw PATH
 * (control/control_grant.h: the running sandbox's control plane does it) */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "../sandbox/control/control.h"

static const char usage[] =
	"Usage: agentrun sandbox allow NAME [--force] --net HOST[:PORT] | --ro PATH | --rw PATH\n"
	"       agentrun sandbox revoke NAME --net HOST[:PORT] | --ro PATH | --rw PATH\n"
	"\n"
	"Live grants of the running sandbox NAME, without a restart. --net:\n"
	"HOST[:PORT] (a --net allow= pattern) is added to its egress policy;\n"
	"a name keeps the address classes (loopback, private ranges, metadata\n"
	"stay refused), an address literal with its port opens that one.\n"
	"--ro/--rw: the host directory PATH is bound into the sandbox at the\n"
	"same path, read-only or read-write, with the checks of a start-time\n"
	"--ro/--rw (never-share list, /proc and /sys, the workspace) and, for\n"
	"--rw, its protected paths (git metadata, editor and agent config)\n"
	"kept read-only. revoke takes it back: new connections are refused\n"
	"(established ones are not cut); the directory is detached.\n"
	"\n"
	"Options:\n"
	"  --net HOST[:PORT]    a host or pattern (example.com, *.example.com, 127.0.0.1:8080)\n"
	"  --ro PATH            a host directory, read-only\n"
	"  --rw PATH            a host directory, read-write\n"
	"  --force              allow: share a path on the never-share list anyway\n"
	"  -h, --help           this help\n";

int cmd_sandbox_grant(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "net", required_argument, NULL, 'n' },
		{ "ro", required_argument, NULL, 'r' },
		{ "rw", required_argument, NULL, 'w' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	bool revoke = strcmp(argv[0], "revoke") == 0, force = false;
	const char *kind = NULL, *target = NULL;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
		case 'r':
		case 'w':
			if (kind) {
				fprintf(stderr,
					"agentrun sandbox %s: expected one of --net, --ro, --rw\n",
					argv[0]);
				return 1;
			}
			kind = c == 'n' ? "net" : c == 'r' ? "ro" : "rw";
			target = optarg;
			break;
		case 'f':
			force = true;
			break;
		default:
			return cli_usage(usage, c == 'h' ? 0 : 1);
		}
	}
	if (optind + 1 != argc || !kind) {
		fprintf(stderr,
			"agentrun sandbox %s: expected NAME and one of --net HOST[:PORT], --ro PATH, --rw PATH\n",
			argv[0]);
		return 1;
	}
	if (force && revoke) {
		fprintf(stderr,
			"agentrun sandbox revoke: --force is an option of allow\n");
		return 1;
	}
	if (ar_sandbox_grant(cli_state_root(g), argv[optind], revoke, kind,
			     target, force, stdout, &err) < 0)
		return cli_fail(&err);
	return 0;
}
