/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun: entry point, global options, command dispatch. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apparmor.h"
#include "cgroup_systemd.h"
#include "cli.h"
#include "exe_protect.h"
#include "init.h"
#include "log.h"
#include "userns.h"
#include "utils.h"

/* The command table. Keep it sorted the way `--help` should list it. */
static const struct ar_command commands[] = {
	{ "spec", cmd_spec, "write a default config.json into the bundle" },
	{ "create", cmd_create,
	  "create a container (its process waits for start)" },
	{ "start", cmd_start, "start the process of a created container" },
	{ "run", cmd_run, "create and start a container" },
	{ "state", cmd_state, "print the state of a container (JSON)" },
	{ "kill", cmd_kill, "send a signal to a container's process(es)" },
	{ "exec", cmd_exec, "run a process in a running container" },
	{ "delete", cmd_delete, "delete a container" },
	{ "list", cmd_list, "list containers" },
	{ "update", cmd_update, "change the resource limits of a container" },
	{ "pause", cmd_pause, "freeze all processes of a container" },
	{ "resume", cmd_resume, "thaw a paused container" },
	{ "mounts", cmd_mounts, "add or remove mounts of a running container" },
	{ "ps", cmd_ps, "list the processes of a container" },
	{ "events", cmd_events,
	  "print stats and OOM events of a container (JSON)" },
	{ "features", cmd_features,
	  "print the features this build supports (JSON)" },
	{ "sandbox", cmd_sandbox,
	  "run a command (an AI agent) in a sandbox of this host" },
	{ "doctor", cmd_doctor,
	  "check what the sandbox needs on this machine" },
	{ "changes", cmd_changes, "list what an --overlay sandbox changed" },
	{ "diff", cmd_diff, "show an --overlay sandbox's changes as a diff" },
	{ "commit", cmd_commit, "apply an --overlay sandbox's changes" },
	{ "discard", cmd_discard, "drop an --overlay sandbox's changes" },
	{ "overlays", cmd_overlays,
	  "list the --overlay sandboxes of this user" },
	{ "watch", cmd_watch,
	  "a terminal dashboard: sandboxes, events, pending requests" },
	{ "ui", cmd_ui,
	  "serve the web dashboard of the running sandboxes on 127.0.0.1" },
	/* sandbox --vm's guest agent (runtime/cli/vm.c): not in --help */
	{ "vm-host", cmd_vm_host, NULL },
	{ "vm-guest", cmd_vm_guest, NULL },
	{ "vm-exec", cmd_vm_exec, NULL },
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: agentrun [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n"
		"\n"
		"An OCI runtime for running AI coding agents in a sandbox.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < AR_ARRAY_SIZE(commands); i++)
		if (commands[i].summary)
			fprintf(out, "  %-10s %s\n", commands[i].name,
				commands[i].summary);
	fprintf(out, "  %-10s %s\n", "help",
		"this help, or a command's: help COMMAND (= COMMAND --help)");
	fprintf(out,
		"\n"
		"Global options:\n"
		"  --root DIR               state directory (default /run/agentrun,\n"
		"                           or $XDG_RUNTIME_DIR/agentrun when rootless)\n"
		"  --log DEST               also log to DEST: [file:]PATH, syslog:[IDENT]\n"
		"                           or journald:[ID]\n"
		"  --log-format text|json   format of the --log entries (default text)\n"
		"  --log-level error|warning|info|debug\n"
		"                           the most verbose messages logged (default info)\n"
		"  --debug                  log debug messages (--log-level debug)\n"
		"  --systemd-cgroup         use the systemd cgroup manager\n"
		"  --cgroup-manager M       cgroupfs, systemd or disabled\n"
		"  --rootless true|false|auto\n"
		"  -v, --version            print version and features\n"
		"  -h, --help               this help\n");
}

/* The optional features line in crun's form: only what this build has
 * and enforces (+EBPF: linux.resources.devices as a device program;
 * +SYSTEMD: the systemd cgroup manager, built with sd-bus's header
 * (cgroup_systemd.c); +APPARMOR only on a host
 * whose AppArmor is enabled: elsewhere profiles are ignored, as crun
 * ignores them). Tools grep it. */
static void print_version(struct ar_global_opts *g)
{
	printf("agentrun version %s\n"
	       "commit: %s\n"
	       "rundir: %s\n"
	       "spec: 1.2.0\n"
	       "%s%s+CAP +SECCOMP +EBPF %s+YAJL\n",
	       PACKAGE_VERSION, GIT_COMMIT, cli_state_root(g),
#ifdef HAVE_SELINUX
	       "+SELINUX ",
#else
	       "",
#endif
	       ar_apparmor_enabled() ? "+APPARMOR " : "",
	       ar_systemd_built() ? "+SYSTEMD " : "");
}

enum {
	OPT_ROOT = 256,
	OPT_LOG,
	OPT_LOG_FORMAT,
	OPT_LOG_LEVEL,
	OPT_DEBUG,
	OPT_SYSTEMD_CGROUP,
	OPT_CGROUP_MANAGER,
	OPT_ROOTLESS,
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "debug", no_argument, NULL, OPT_DEBUG },
		{ "systemd-cgroup", no_argument, NULL, OPT_SYSTEMD_CGROUP },
		{ "cgroup-manager", required_argument, NULL,
		  OPT_CGROUP_MANAGER },
		{ "rootless", required_argument, NULL, OPT_ROOTLESS },
		{ "version", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_global_opts g = { .rootless = -1,
				    .argv0 = argv[0],
				    .log_level = AR_LOG_INFO };
	const char *cmd;
	int c;

	ar_init_save_argv(argc, argv);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+vh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_ROOT:
			g.root = optarg;
			break;
		case OPT_LOG:
			g.log_path = optarg;
			break;
		case OPT_LOG_FORMAT:
			if (strcmp(optarg, "json") == 0)
				g.log_json = true;
			else if (strcmp(optarg, "text") == 0)
				g.log_json = false;
			else {
				fprintf(stderr,
					"agentrun: --log-format: unknown format `%s` (text or json)\n",
					optarg);
				return 1;
			}
			break;
		case OPT_LOG_LEVEL:
			if (ar_log_level_parse(optarg, &g.log_level) < 0) {
				fprintf(stderr,
					"agentrun: --log-level: unknown level `%s` (error, warning, info or debug)\n",
					optarg);
				return 1;
			}
			break;
		case OPT_DEBUG:
			g.log_level = AR_LOG_DEBUG;
			break;
		case OPT_SYSTEMD_CGROUP:
			g.systemd_cgroup = true;
			g.cgroup_manager = AR_CGROUP_MANAGER_SYSTEMD;
			break;
		case OPT_CGROUP_MANAGER:
			if (strcmp(optarg, "cgroupfs") == 0)
				g.cgroup_manager = AR_CGROUP_MANAGER_CGROUPFS;
			else if (strcmp(optarg, "systemd") == 0) {
				g.cgroup_manager = AR_CGROUP_MANAGER_SYSTEMD;
				g.systemd_cgroup = true;
			} else if (strcmp(optarg, "disabled") == 0)
				g.cgroup_manager = AR_CGROUP_MANAGER_DISABLED;
			else {
				fprintf(stderr,
					"agentrun: --cgroup-manager: unknown manager `%s` (cgroupfs, systemd or disabled)\n",
					optarg);
				return 1;
			}
			break;
		case OPT_ROOTLESS:
			if (strcmp(optarg, "true") == 0)
				g.rootless = 1;
			else if (strcmp(optarg, "false") == 0)
				g.rootless = 0;
			else if (strcmp(optarg, "auto") == 0)
				g.rootless = -1;
			else {
				fprintf(stderr,
					"agentrun: --rootless: expected true, false or auto, got `%s`\n",
					optarg);
				return 1;
			}
			break;
		case 'v':
			print_version(&g);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			if (optopt && optopt < 256)
				fprintf(stderr,
					"agentrun: unknown option `-%c`\n",
					optopt);
			else
				fprintf(stderr,
					"agentrun: unknown option `%s`\n",
					argv[optind - 1]);
			usage(stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	{
		struct ar_error err = AR_ERROR_INIT;

		if (ar_log_init(g.log_path,
				g.log_json ? AR_LOG_JSON : AR_LOG_TEXT,
				g.log_level, &err) < 0) {
			fprintf(stderr, "agentrun: %s\n", err.msg);
			return 1;
		}
	}
	cmd = argv[optind];
	if (strcmp(cmd, "help") == 0) {
		char *help_argv[] = { NULL, "--help", NULL };

		if (optind + 1 >= argc) {
			usage(stdout);
			return 0;
		}
		/* `help CMD` is `CMD --help`: one text for both, and for
		 * the man page agentrun-CMD(1). */
		for (size_t i = 0; i < AR_ARRAY_SIZE(commands); i++) {
			if (strcmp(commands[i].name, argv[optind + 1]) == 0) {
				help_argv[0] = argv[optind + 1];
				optind = 0;
				opterr = 1;
				return commands[i].fn(&g, 2, help_argv);
			}
		}
		fprintf(stderr, "agentrun help: unknown command `%s`\n",
			argv[optind + 1]);
		return 1;
	}
	for (size_t i = 0; i < AR_ARRAY_SIZE(commands); i++) {
		if (strcmp(commands[i].name, cmd) == 0) {
			int sub_argc = argc - optind;
			char **sub_argv = argv + optind;

			/* A container must not reach a writable runtime
			 * binary through /proc/self/exe (CVE-2019-5736). */
			if (ar_exe_protect_needed_for(cmd)) {
				struct ar_error err = AR_ERROR_INIT;

				if (ar_exe_protect(argv, &err) < 0)
					return cli_fail(&err);
			}
			/* optind = 0 fully resets glibc's getopt for the
			 * command's own option parsing. */
			optind = 0;
			opterr = 1;
			return commands[i].fn(&g, sub_argc, sub_argv);
		}
	}
	fprintf(stderr, "agentrun: unknown command `%s`\n", cmd);
	usage(stderr);
	return 1;
}
