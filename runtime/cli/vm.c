/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hidden commands of `sandbox --vm`'s guest agent (docs/vm.md, "The
 * guest agent"; runtime/sandbox/vm/vm_agent.h): vm-host (the sandbox's
 * command, started by the helper agentrun-vm), vm-guest (in the guest,
 * started by vm-init.sh), vm-exec (the process of `sandbox exec`).
 * Not for users: not in --help.
 */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "utils.h"
#include "vm/vm_agent.h"
#include "vm/vm_proto.h"

enum {
	OPT_CTL = 256,
	OPT_CONSOLE,
	OPT_CLEANUP,
	OPT_EXEC_SOCKET,
	OPT_CWD,
	OPT_PROXY_GATEWAY,
	OPT_START_TIMEOUT,
	OPT_MAIN_ARGV,
	OPT_MAIN_ENV,
	OPT_PORT,
	OPT_USER,
	OPT_ROOT,
};

int cmd_vm_host(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ctl", required_argument, NULL, OPT_CTL },
		{ "console", required_argument, NULL, OPT_CONSOLE },
		{ "cleanup", required_argument, NULL, OPT_CLEANUP },
		{ "exec-socket", required_argument, NULL, OPT_EXEC_SOCKET },
		{ "cwd", required_argument, NULL, OPT_CWD },
		{ "proxy-gateway", required_argument, NULL, OPT_PROXY_GATEWAY },
		{ "start-timeout", required_argument, NULL, OPT_START_TIMEOUT },
		{ "main-argv", required_argument, NULL, OPT_MAIN_ARGV },
		{ "main-env", required_argument, NULL, OPT_MAIN_ENV },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_vm_host_opts o = { .cwd = "/", .start_timeout = 180 };
	int c;

	(void)g;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CTL:
			o.ctl = optarg;
			break;
		case OPT_CONSOLE:
			o.console = optarg;
			break;
		case OPT_CLEANUP:
			o.cleanup = optarg;
			break;
		case OPT_EXEC_SOCKET:
			o.exec_socket = optarg;
			break;
		case OPT_CWD:
			o.cwd = optarg;
			break;
		case OPT_PROXY_GATEWAY:
			o.proxy_gateway = optarg;
			break;
		case OPT_MAIN_ARGV:
			o.main_argv = optarg;
			break;
		case OPT_MAIN_ENV:
			o.main_env = optarg;
			break;
		case OPT_START_TIMEOUT: {
			long long v;

			if (ar_parse_i64(optarg, &v) < 0 || v <= 0 ||
			    v > 86400) {
				fprintf(stderr,
					"agentrun vm-host: --start-timeout: not a number of seconds: %s\n",
					optarg);
				return 125;
			}
			o.start_timeout = (int)v;
			break;
		}
		default:
			return 125;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "agentrun vm-host: no QEMU command\n");
		return 125;
	}
	o.qemu = argv + optind;
	return ar_vm_host_main(&o);
}

int cmd_vm_guest(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, OPT_PORT },
		{ "user", required_argument, NULL, OPT_USER },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ NULL, 0, NULL, 0 },
	};
	const char *port = NULL, *root = NULL;
	struct ar_vm_user user = { 0 };
	int c, r;

	(void)g;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_PORT:
			port = optarg;
			break;
		case OPT_ROOT:
			root = optarg;
			break;
		case OPT_USER:
			ar_vm_user_free(&user);
			if (ar_vm_user_parse(optarg, &user) == 0)
				break;
			fprintf(stderr,
				"agentrun vm-guest: --user UID:GID[:GROUP,...]\n");
			return 125;
		default:
			ar_vm_user_free(&user);
			return 125;
		}
	}
	if (!port) {
		fprintf(stderr, "agentrun vm-guest: --port is needed\n");
		ar_vm_user_free(&user);
		return 125;
	}
	r = ar_vm_guest_main(port, &user, root);
	ar_vm_user_free(&user);
	return r;
}

int cmd_vm_exec(struct ar_global_opts *g, int argc, char **argv)
{
	const char *dir = NULL;
	struct ar_vm_user user = { 0 };
	bool has_user = false;
	int i = 1, r;

	(void)g;
	while (i + 1 < argc) {
		if (strcmp(argv[i], "--cwd") == 0) {
			dir = argv[i + 1];
		} else if (strcmp(argv[i], "--user") == 0) {
			ar_vm_user_free(&user);
			if (ar_vm_user_parse(argv[i + 1], &user) < 0) {
				fprintf(stderr,
					"agentrun vm-exec: --user UID:GID[:GROUP,...]\n");
				return 125;
			}
			has_user = true;
		} else {
			break;
		}
		i += 2;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	r = ar_vm_exec_main(dir, has_user ? &user : NULL, argv + i);
	ar_vm_user_free(&user);
	return r;
}
