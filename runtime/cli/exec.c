/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun exec [OPTIONS] ID [--] [ARGS...] | --process FILE ID */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exec.h"
#include "utils.h"
#include "vm/vm_bundle.h"

static const char usage[] =
	"Usage: agentrun exec [OPTIONS] ID [--] ARGS...\n"
	"       agentrun exec [OPTIONS] --process FILE ID\n"
	"\n"
	"Run a process in a running container: every namespace, the cgroup\n"
	"and the confinement of the container's process.\n"
	"\n"
	"Options:\n"
	"  -p, --process FILE       the process (OCI process JSON)\n"
	"  -t, --tty                allocate a pseudo terminal\n"
	"      --console-socket S   send the pty master to unix socket S\n"
	"  -d, --detach             return once the process started\n"
	"      --pid-file F         write the process's pid to F\n"
	"      --cwd DIR            working directory in the container\n"
	"  -e, --env K=V            set an environment variable (repeatable)\n"
	"  -u, --user UID[:GID]     run as this user\n"
	"  -g, --additional-gids G  add a supplementary group (repeatable)\n"
	"      --process-label L    the process's SELinux label\n"
	"      --apparmor PROFILE   the process's AppArmor profile\n"
	"      --ignore-paused      exec in a paused container too: the\n"
	"                           process runs once it is resumed\n"
	"  -c, --cap CAP            add a capability (repeatable)\n"
	"      --no-new-privs       set no_new_privileges\n"
	"      --preserve-fds N     pass fds 3..3+N-1 to the process\n"
	"      --cgroup SUB         run in the existing sub-cgroup SUB of\n"
	"                           the container's cgroup\n"
	"  -h, --help               this help\n";

enum {
	OPT_CONSOLE_SOCKET = 256,
	OPT_PID_FILE,
	OPT_CWD,
	OPT_NO_NEW_PRIVS,
	OPT_PRESERVE_FDS,
	OPT_CGROUP,
	OPT_PROCESS_LABEL,
	OPT_APPARMOR,
	OPT_IGNORE_PAUSED,
};

static void push(char ***v, size_t *n, char *s)
{
	*v = realloc(*v, (*n + 2) * sizeof(char *));
	if (!*v)
		abort();
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
}

int cmd_exec(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "process", required_argument, NULL, 'p' },
		{ "tty", no_argument, NULL, 't' },
		{ "console-socket", required_argument, NULL,
		  OPT_CONSOLE_SOCKET },
		{ "detach", no_argument, NULL, 'd' },
		{ "pid-file", required_argument, NULL, OPT_PID_FILE },
		{ "cwd", required_argument, NULL, OPT_CWD },
		{ "env", required_argument, NULL, 'e' },
		{ "user", required_argument, NULL, 'u' },
		{ "cap", required_argument, NULL, 'c' },
		{ "no-new-privs", no_argument, NULL, OPT_NO_NEW_PRIVS },
		{ "preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "additional-gids", required_argument, NULL, 'g' },
		{ "process-label", required_argument, NULL, OPT_PROCESS_LABEL },
		{ "apparmor", required_argument, NULL, OPT_APPARMOR },
		{ "ignore-paused", no_argument, NULL, OPT_IGNORE_PAUSED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	struct ar_exec_opts o = { 0 };
	_cleanup_free_ char **env = NULL, **caps = NULL;
	_cleanup_free_ uint32_t *gids = NULL;
	size_t n_env = 0, n_caps = 0, n_gids = 0;
	unsigned long long n;
	int c, status = 1;

	/* "+": options end at the id; what follows is the command. */
	while ((c = getopt_long(argc, argv, "+p:tde:u:g:c:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'p':
			o.process_file = optarg;
			break;
		case 't':
			o.tty = true;
			break;
		case OPT_CONSOLE_SOCKET:
			o.console_socket = optarg;
			break;
		case 'd':
			o.detach = true;
			break;
		case OPT_PID_FILE:
			o.pid_file = optarg;
			break;
		case OPT_CWD:
			o.cwd = optarg;
			break;
		case 'e':
			if (!strchr(optarg, '=')) {
				fprintf(stderr,
					"agentrun exec: --env `%s`: expected K=V\n",
					optarg);
				return 1;
			}
			push(&env, &n_env, optarg);
			break;
		case 'u':
			o.user = optarg;
			break;
		case OPT_CGROUP:
			o.cgroup = optarg;
			break;
		case 'g':
			if (ar_parse_u64(optarg, &n) < 0 || n >= UINT32_MAX) {
				fprintf(stderr,
					"agentrun exec: --additional-gids: `%s` is not a group id\n",
					optarg);
				return 1;
			}
			gids = ar_xrealloc(gids, (n_gids + 1) * sizeof(*gids));
			gids[n_gids++] = (uint32_t)n;
			break;
		case OPT_PROCESS_LABEL:
			o.process_label = optarg;
			break;
		case OPT_APPARMOR:
			o.apparmor = optarg;
			break;
		case OPT_IGNORE_PAUSED:
			o.ignore_paused = true;
			break;
		case 'c':
			push(&caps, &n_caps, optarg);
			break;
		case OPT_NO_NEW_PRIVS:
			o.no_new_privs = true;
			break;
		case OPT_PRESERVE_FDS:
			if (ar_parse_u64(optarg, &n) < 0 || n > 4096) {
				fprintf(stderr,
					"agentrun exec: --preserve-fds: invalid number `%s`\n",
					optarg);
				return 1;
			}
			o.preserve_fds = (int)n;
			break;
		default:
			return cli_usage(usage, c == 'h' ? 0 : 1);
		}
	}
	if (optind >= argc)
		return cli_usage(usage, 1);
	o.root = cli_state_root(g);
	o.id = argv[optind++];
	ar_log_set_container_id(o.id);
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind < argc) {
		if (o.process_file) {
			fprintf(stderr,
				"agentrun exec: give either --process or ARGS, not both\n");
			return 1;
		}
		o.args = argv + optind;
	}
	o.env = env;
	o.caps = caps;
	o.additional_gids = gids;
	o.n_additional_gids = n_gids;
	/* a container of the vm handler: the command runs in the guest */
	o.on_process = ar_vm_bundle_exec;
	if (ar_container_exec(&o, &status, &err) < 0)
		return cli_fail(&err);
	return status;
}
