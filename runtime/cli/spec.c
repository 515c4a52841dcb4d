/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun spec [--rootless] [--bundle DIR] [--file FILE]: write a default
 * config.json */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "generate.h"

static void spec_usage(FILE *out)
{
	fprintf(out,
		"Usage: agentrun spec [--rootless] [--bundle DIR] [--file FILE]\n"
		"\n"
		"Write a default config.json into the bundle directory (the current\n"
		"directory unless --bundle is given). An existing config.json is\n"
		"never overwritten.\n"
		"\n"
		"The config runs `sh` in ./rootfs (read-only) in new pid, network,\n"
		"ipc, uts, mount and cgroup namespaces with the agent seccomp\n"
		"profile. Unlike `crun spec`, process.terminal is false, so that\n"
		"`agentrun run` works without a terminal; set it to true for an\n"
		"interactive shell.\n"
		"\n"
		"Options:\n"
		"  -b, --bundle DIR   directory to write config.json into\n"
		"  -f, --file FILE    write FILE instead (relative to the bundle\n"
		"                     directory), replacing it if it exists (crun)\n"
		"      --rootless     for an unprivileged user: add a user namespace\n"
		"                     mapping container root to your uid and gid,\n"
		"                     bind /sys instead of mounting sysfs\n"
		"  -h, --help         this help\n");
}

int cmd_spec(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "bundle", required_argument, NULL, 'b' },
		{ "file", required_argument, NULL, 'f' },
		{ "rootless", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct oci_spec_options o = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	const char *bundle = ".", *file = NULL;
	int c;

	(void)g;
	while ((c = getopt_long(argc, argv, "b:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			bundle = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 'r':
			o.rootless = true;
			break;
		case 'h':
			spec_usage(stdout);
			return 0;
		default:
			spec_usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "agentrun spec: unexpected argument `%s`\n",
			argv[optind]);
		spec_usage(stderr);
		return 1;
	}
	if (oci_spec_write(bundle, file, &o, &err) < 0)
		return cli_fail(&err);
	return 0;
}
