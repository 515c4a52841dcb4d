/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun sandbox [OPTIONS] [--] CMD [ARGS...] */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "profile.h"
#include "../sandbox/sandbox.h"
#include "utils.h"

#ifndef AGENTRUN_DOCDIR
#define AGENTRUN_DOCDIR "/usr/local/share/doc/agentrun"
#endif

static void sandbox_usage(FILE *out)
{
	fprintf(out,
		"Usage: agentrun sandbox [OPTIONS] [--] CMD [ARGS...]\n"
		"       agentrun sandbox exec NAME [--tty] [--] CMD | list | stop NAME\n"
		"       agentrun sandbox requests [NAME] | answer NAME ID ANSWER\n"
		"       agentrun sandbox policy NAME\n"
		"       agentrun sandbox allow|revoke NAME --net HOST[:PORT] | --ro PATH | --rw PATH\n"
		"       agentrun sandbox learn --from LOG [-o PROFILE]\n"
		"\n"
		"Run CMD rootless in a sandbox built from this machine: host /usr\n"
		"read-only, a minimal /etc, a private home, the workspace (git\n"
		"top-level of the current directory, or the directory) read-write\n"
		"with your own uid, no network, secrets filtered from the environment.\n"
		"\n"
		"Options:\n"
		"  --workspace DIR      the read-write workspace (default: git top / cwd)\n"
		"  --ro PATH            also show host PATH read-only (~/ allowed)\n"
		"  --rw PATH            also show host PATH read-write\n"
		"  --hide PATH          hide PATH (empty dir / empty file over it)\n"
		"  --env NAME[=VALUE]   pass NAME from the environment (even a secret),\n"
		"                       or set it; NAME may be a pattern like 'LC_*'\n"
		"  --etc NAME           also show host /etc/NAME read-only\n"
		"  --net none|host      network: none (default; own netns, loopback up)\n"
		"                       or host (warning: host services reachable)\n"
		"  --net allow=PATTERN[,PATTERN...]  own netns and an allowlist proxy\n"
		"                       (HTTP_PROXY/ALL_PROXY): example.com[:PORT],\n"
		"                       *.example.com, *, 10.0.0.1:80, [::1]:8080;\n"
		"                       repeatable; the item `ask` (or --net ask):\n"
		"                       what the rest does not allow waits for an\n"
		"                       answer (agentrun sandbox requests / answer)\n"
		"  --ask-timeout SECONDS  how long such a connection waits before it is\n"
		"                       refused (default 60)\n"
		"  --secret NAME=HOST-PATTERN[,...]  NAME inside holds a placeholder;\n"
		"                       the proxy puts the real value (from the\n"
		"                       environment) in HTTPS request headers to\n"
		"                       those hosts only (needs --net allow)\n"
		"  --upstream-proxy http://[USER:PASS@]HOST:PORT  the egress proxy's\n"
		"                       own connections go through this proxy\n"
		"                       (default: HTTPS_PROXY/HTTP_PROXY, NO_PROXY)\n"
		"  --publish [ADDR:]HOSTPORT:PORT  forward ADDR:HOSTPORT of the host\n"
		"                       (default 127.0.0.1) to PORT on the sandbox's\n"
		"                       loopback; repeatable\n"
		"  --profile FILE|NAME  settings from a JSON profile (a file, or a name:\n"
		"                       claude, codex, gemini, opencode, aider or\n"
		"                       ~/.config/agentrun/profiles/NAME.json)\n"
		"  --tty, --no-tty      give CMD a terminal (default: when stdin is one)\n"
		"  --landlock auto|on|off  Landlock rules mirroring the mounts (default\n"
		"                       auto: on when the kernel has it; on: required)\n"
		"  --overlay            copy-on-write workspace: changes stay outside it\n"
		"                       until `agentrun commit NAME` (see changes, diff,\n"
		"                       discard)\n"
		"  --vm                 run CMD in a guest kernel (QEMU) inside the\n"
		"                       sandbox, as the same sandbox sees it (docs/vm.md)\n"
		"  --vm-kernel FILE     the guest kernel (default: the newest\n"
		"                       /boot/vmlinuz-* with modules)\n"
		"  --vm-guest-root      CMD runs as root in the guest (its writes\n"
		"                       outside the workspace stay in the guest)\n"
		"  --name NAME          a session: `agentrun sandbox exec NAME -- CMD`\n"
		"                       joins it, `list` shows it, `stop NAME` ends it;\n"
		"                       also the --overlay's name (default: sandbox-DATE)\n"
		"  --detach             with --name: start CMD and return; its output\n"
		"                       goes to the session's directory\n"
		"  --nested             let CMD create namespaces (bwrap, rootless podman,\n"
		"                       Codex's sandbox): seccomp allows them and mounts,\n"
		"                       /proc unmasked (not as root), Landlock off\n"
		"  --agent-channel, --no-agent-channel\n"
		"                       srt's Sandbox-Agent channel on fd 3\n"
		"                       (SANDBOX_AGENT_CHANNEL_FD): CMD learns what was\n"
		"                       blocked and may ask (never grant); the profile's\n"
		"                       \"agent_channel\"; --no-agent-channel: off\n"
		"  --shadow             evaluate the network allowlist, do not enforce it:\n"
		"                       what it would refuse is allowed and recorded\n"
		"                       (would_deny), summed up at exit; protected paths,\n"
		"                       the never-share list, address classes stay enforced\n"
		"  --print-bundle DIR   write the OCI bundle to DIR instead of running\n"
		"  --audit FILE         audit log, JSON lines (exec, connect, proxy,\n"
		"                       files changed, exit); `-`: stderr\n"
		"                       (" AGENTRUN_DOCDIR "/audit.md)\n"
		"  --learn PROFILE      run with more of the host shown read-only and any\n"
		"                       destination allowed, record what CMD used, write\n"
		"                       it as a profile for --profile\n"
		"  --verbose            the runtime's lines on stderr while CMD runs (egress\n"
		"                       refusals, refused namespaces; by default they go\n"
		"                       to --log or ~/.local/state/agentrun/egress.log,\n"
		"                       summed up at exit)\n"
		"  -h, --help           this help\n"
		"\n"
		"See " AGENTRUN_DOCDIR "/sandbox.md;\n"
		"`agentrun doctor` checks this machine.\n");
}

enum {
	OPT_WORKSPACE = 256,
	OPT_RO,
	OPT_RW,
	OPT_HIDE,
	OPT_ENV,
	OPT_ETC,
	OPT_NET,
	OPT_PROFILE,
	OPT_TTY,
	OPT_NO_TTY,
	OPT_PRINT_BUNDLE,
	OPT_LANDLOCK,
	OPT_OVERLAY,
	OPT_NAME,
	OPT_AUDIT,
	OPT_LEARN,
	OPT_VERBOSE,
	OPT_PUBLISH,
	OPT_SECRET,
	OPT_UPSTREAM_PROXY,
	OPT_DETACH,
	OPT_NESTED,
	OPT_AGENT_CHANNEL,
	OPT_NO_AGENT_CHANNEL,
	OPT_SHADOW,
	OPT_ASK_TIMEOUT,
	OPT_VM,
	OPT_VM_KERNEL,
	OPT_VM_GUEST_ROOT,
};

static void list_add(struct ar_sandbox_list *l, const char *v)
{
	l->v[l->n++] = v;
}

int cmd_sandbox(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "workspace", required_argument, NULL, OPT_WORKSPACE },
		{ "ro", required_argument, NULL, OPT_RO },
		{ "rw", required_argument, NULL, OPT_RW },
		{ "hide", required_argument, NULL, OPT_HIDE },
		{ "env", required_argument, NULL, OPT_ENV },
		{ "etc", required_argument, NULL, OPT_ETC },
		{ "net", required_argument, NULL, OPT_NET },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "tty", no_argument, NULL, OPT_TTY },
		{ "no-tty", no_argument, NULL, OPT_NO_TTY },
		{ "print-bundle", required_argument, NULL, OPT_PRINT_BUNDLE },
		{ "landlock", required_argument, NULL, OPT_LANDLOCK },
		{ "overlay", no_argument, NULL, OPT_OVERLAY },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "audit", required_argument, NULL, OPT_AUDIT },
		{ "learn", required_argument, NULL, OPT_LEARN },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "publish", required_argument, NULL, OPT_PUBLISH },
		{ "secret", required_argument, NULL, OPT_SECRET },
		{ "upstream-proxy", required_argument, NULL,
		  OPT_UPSTREAM_PROXY },
		{ "detach", no_argument, NULL, OPT_DETACH },
		{ "nested", no_argument, NULL, OPT_NESTED },
		{ "agent-channel", no_argument, NULL, OPT_AGENT_CHANNEL },
		{ "no-agent-channel", no_argument, NULL, OPT_NO_AGENT_CHANNEL },
		{ "shadow", no_argument, NULL, OPT_SHADOW },
		{ "ask-timeout", required_argument, NULL, OPT_ASK_TIMEOUT },
		{ "vm", no_argument, NULL, OPT_VM },
		{ "vm-kernel", required_argument, NULL, OPT_VM_KERNEL },
		{ "vm-guest-root", no_argument, NULL, OPT_VM_GUEST_ROOT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	struct ar_sandbox_opts o = { .tty = -1, .landlock = -1 };
	struct ar_sandbox_run_opts ro = { 0 };
	const char *profile_path = NULL;
	struct oci_profile *profile = NULL;
	_cleanup_free_ const char **store = NULL;
	int c, rc, status;

	if (argc > 1 &&
	    (strcmp(argv[1], "allow") == 0 || strcmp(argv[1], "revoke") == 0))
		return cmd_sandbox_grant(g, argc - 1, argv + 1);
	if (argc > 1 &&
	    (strcmp(argv[1], "exec") == 0 || strcmp(argv[1], "list") == 0 ||
	     strcmp(argv[1], "stop") == 0 || strcmp(argv[1], "requests") == 0 ||
	     strcmp(argv[1], "policy") == 0 || strcmp(argv[1], "answer") == 0 ||
	     strcmp(argv[1], "learn") == 0))
		return cmd_sandbox_session(g, argc - 1, argv + 1);
	/* every list can hold all of argv */
	store = ar_xcalloc(8 * (size_t)argc + 8, sizeof(char *));
	o.ro.v = store;
	o.rw.v = store + argc + 1;
	o.hide.v = store + 2 * (argc + 1);
	o.env.v = store + 3 * (argc + 1);
	o.etc.v = store + 4 * (argc + 1);
	o.net_allow.v = store + 5 * (argc + 1);
	o.publish.v = store + 6 * (argc + 1);
	o.secrets.v = store + 7 * (argc + 1);
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_WORKSPACE:
			o.workspace = optarg;
			break;
		case OPT_RO:
			list_add(&o.ro, optarg);
			break;
		case OPT_RW:
			list_add(&o.rw, optarg);
			break;
		case OPT_HIDE:
			list_add(&o.hide, optarg);
			break;
		case OPT_ENV:
			list_add(&o.env, optarg);
			break;
		case OPT_ETC:
			list_add(&o.etc, optarg);
			break;
		case OPT_NET:
			if (strcmp(optarg, "none") == 0)
				o.net = AR_SANDBOX_NET_NONE;
			else if (strcmp(optarg, "host") == 0)
				o.net = AR_SANDBOX_NET_HOST;
			else if (strncmp(optarg, "allow=", 6) == 0) {
				o.net = AR_SANDBOX_NET_ALLOW;
				list_add(&o.net_allow, optarg + 6);
			} else if (strcmp(optarg, "ask") == 0) {
				o.net = AR_SANDBOX_NET_ALLOW;
				list_add(&o.net_allow, "ask");
			} else {
				fprintf(stderr,
					"agentrun sandbox: --net: expected none, host, ask or allow=PATTERN[,PATTERN...], got `%s`\n",
					optarg);
				return 1;
			}
			break;
		case OPT_PROFILE:
			profile_path = optarg;
			break;
		case OPT_TTY:
			o.tty = 1;
			break;
		case OPT_NO_TTY:
			o.tty = 0;
			break;
		case OPT_PRINT_BUNDLE:
			ro.print_bundle = optarg;
			break;
		case OPT_OVERLAY:
			o.overlay = true;
			break;
		case OPT_VM:
			o.vm = true;
			break;
		case OPT_VM_KERNEL:
			o.vm_kernel = optarg;
			break;
		case OPT_VM_GUEST_ROOT:
			o.vm_guest_root = true;
			break;
		case OPT_NAME:
			o.name = optarg;
			break;
		case OPT_AUDIT:
			o.audit = optarg;
			break;
		case OPT_LEARN:
			o.learn = optarg;
			break;
		case OPT_NESTED:
			o.nested = true;
			break;
		case OPT_AGENT_CHANNEL:
			o.agent_channel = 1;
			break;
		case OPT_NO_AGENT_CHANNEL:
			o.agent_channel = -1;
			break;
		case OPT_SHADOW:
			o.shadow = true;
			break;
		case OPT_DETACH:
			ro.detach = true;
			break;
		case OPT_VERBOSE:
			o.verbose = true;
			break;
		case OPT_PUBLISH:
			list_add(&o.publish, optarg);
			break;
		case OPT_SECRET:
			list_add(&o.secrets, optarg);
			break;
		case OPT_UPSTREAM_PROXY:
			o.upstream_proxy = optarg;
			break;
		case OPT_ASK_TIMEOUT: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*optarg < '0' || *optarg > '9' || *end || v < 1 ||
			    v > 86400) {
				fprintf(stderr,
					"agentrun sandbox: --ask-timeout: expected 1 to 86400 seconds, got `%s`\n",
					optarg);
				return 1;
			}
			o.ask_timeout = (int)v;
			break;
		}
		case OPT_LANDLOCK:
			if (strcmp(optarg, "auto") == 0)
				o.landlock = -1;
			else if (strcmp(optarg, "on") == 0)
				o.landlock = 1;
			else if (strcmp(optarg, "off") == 0)
				o.landlock = 0;
			else {
				fprintf(stderr,
					"agentrun sandbox: --landlock: expected auto, on or off, got `%s`\n",
					optarg);
				return 1;
			}
			break;
		case 'h':
			sandbox_usage(stdout);
			return 0;
		default:
			sandbox_usage(stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "agentrun sandbox: no command given\n");
		sandbox_usage(stderr);
		return 1;
	}
	o.argv = argv + optind;
	if ((o.audit || o.learn) && ro.print_bundle) {
		fprintf(stderr,
			"agentrun sandbox: --audit and --learn observe a run; --print-bundle does not run\n");
		return 1;
	}
	if (ro.detach && (!o.name || ro.print_bundle || o.tty == 1)) {
		fprintf(stderr,
			"agentrun sandbox: --detach needs --name NAME (to exec into, list and stop it), and goes without --tty and --print-bundle\n");
		return 1;
	}
	if (ro.detach)
		o.tty = 0;
	if (profile_path) {
		_cleanup_free_ char *file = NULL;

		if (ar_sandbox_profile_resolve(profile_path, &file, &err) < 0 ||
		    oci_profile_load_file(file, &profile, &err) < 0)
			return cli_fail(&err);
	}
	o.profile = profile;
	ro.state_root = cli_state_root(g);
	ro.cgroups_disabled = g->cgroup_manager == AR_CGROUP_MANAGER_DISABLED;
	rc = ar_sandbox_run(&o, &ro, &status, &err);
	oci_profile_free(profile);
	if (rc < 0)
		return cli_fail(&err);
	return ro.print_bundle ? 0 : status;
}
