/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun create <id> [--bundle DIR] [--config FILE] [--pid-file F]
 *                      [--console-socket S] [--no-pivot] [--no-new-keyring]
 *                      [--preserve-fds N]
 * Options may come before or after the id (GNU getopt permutes, as in
 * crun). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "sd_notify.h"
#include "utils.h"
#include "vm/vm_bundle.h"

enum {
	OPT_PID_FILE = 256,
	OPT_CONSOLE_SOCKET,
	OPT_NO_PIVOT,
	OPT_NO_NEW_KEYRING,
	OPT_PRESERVE_FDS,
	OPT_DETACH,
	OPT_KEEP,
	OPT_NO_SUBREAPER,
};

static void create_usage(FILE *out, bool run)
{
	fprintf(out,
		"Usage: agentrun %s [OPTIONS] ID\n"
		"\n"
		"%s\n"
		"\n"
		"Options:\n"
		"  -b, --bundle DIR         bundle directory (default: .)\n"
		"  -f, --config FILE        the config instead of BUNDLE/config.json\n"
		"                           (a relative FILE is relative to the current\n"
		"                           directory; `config.json` is the bundle's)\n"
		"      --pid-file FILE      write the container process's pid to FILE\n"
		"      --console-socket S   send the pty master to the unix socket S\n"
		"      --no-pivot           use MS_MOVE + chroot instead of pivot_root\n"
		"      --no-new-keyring     keep the runtime's session keyring\n"
		"      --preserve-fds N     pass fds 3..3+N-1 to the container\n"
		"      --no-subreaper       accepted and ignored (runc compatibility)\n",
		run ? "run" : "create",
		run ? "Create and start a container; in the foreground, wait for it and\n"
		      "exit with its exit status." :
		      "Create a container from the bundle; its process waits for\n"
		      "`agentrun start`.");
	if (run)
		fprintf(out,
			"  -d, --detach             run in the background\n"
			"      --keep               keep the stopped container's state\n");
	fprintf(out, "  -h, --help               this help\n");
}

/* Shared by create and run: parse the options into o. Returns -1 to exit
 * with status *rc. */
int cli_parse_create_opts(struct ar_global_opts *g, int argc, char **argv,
			  bool run, struct ar_create_opts *o, int *rc)
{
	static const struct option longopts[] = {
		{ "bundle", required_argument, NULL, 'b' },
		{ "config", required_argument, NULL, 'f' },
		{ "pid-file", required_argument, NULL, OPT_PID_FILE },
		{ "console-socket", required_argument, NULL,
		  OPT_CONSOLE_SOCKET },
		{ "no-pivot", no_argument, NULL, OPT_NO_PIVOT },
		{ "no-new-keyring", no_argument, NULL, OPT_NO_NEW_KEYRING },
		{ "preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS },
		{ "detach", no_argument, NULL, 'd' },
		{ "keep", no_argument, NULL, OPT_KEEP },
		{ "no-subreaper", no_argument, NULL, OPT_NO_SUBREAPER },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long n;
	int c;

	memset(o, 0, sizeof(*o));
	o->root = cli_state_root(g);
	o->rootless = g->rootless;
	o->cgroups_disabled = g->cgroup_manager == AR_CGROUP_MANAGER_DISABLED;
	o->systemd_cgroup = g->systemd_cgroup;
	o->notify_socket = ar_notify_caller();
	/* the annotation run.agentrun.handler=vm (docs/vm.md) */
	o->on_config = ar_vm_bundle_config;
	*rc = 1;
	while ((c = getopt_long(argc, argv, run ? "b:f:dh" : "b:f:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'b':
			o->bundle = optarg;
			break;
		case 'f':
			o->config_file = optarg;
			break;
		case OPT_PID_FILE:
			o->pid_file = optarg;
			break;
		case OPT_CONSOLE_SOCKET:
			o->console_socket = optarg;
			break;
		case OPT_NO_PIVOT:
			o->no_pivot = true;
			break;
		case OPT_NO_NEW_KEYRING:
			o->no_new_keyring = true;
			break;
		case OPT_PRESERVE_FDS:
			if (ar_parse_u64(optarg, &n) < 0 || n > 65536) {
				fprintf(stderr,
					"agentrun %s: --preserve-fds: invalid number `%s`\n",
					argv[0], optarg);
				return -1;
			}
			o->preserve_fds = (int)n;
			break;
		case 'd':
		case OPT_KEEP:
			if (!run)
				goto bad;
			if (c == 'd')
				o->detach = true;
			else
				o->keep = true;
			break;
		case OPT_NO_SUBREAPER:
			break; /* accepted for runc compatibility */
		case 'h':
			create_usage(stdout, run);
			*rc = 0;
			return -1;
		default:
bad:
			create_usage(stderr, run);
			return -1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr,
			"agentrun %s: expected exactly one container id\n",
			argv[0]);
		create_usage(stderr, run);
		return -1;
	}
	o->id = argv[optind];
	ar_log_set_container_id(o->id);
	return 0;
}

int cmd_create(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_create_opts o;
	int rc;

	if (cli_parse_create_opts(g, argc, argv, false, &o, &rc) < 0)
		return rc;
	if (ar_container_create(&o, &err) < 0)
		return cli_fail(&err);
	return 0;
}
