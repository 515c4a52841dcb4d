/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun sandbox exec NAME [--tty|--no-tty] [--] CMD [ARGS...]
 * agentrun sandbox list
 * agentrun sandbox stop [--time SECONDS] NAME
 * agentrun sandbox requests [NAME] [--json]
 * agentrun sandbox policy NAME [--json]
 * agentrun sandbox answer NAME ID once|session|always|refuse */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../sandbox/audit/learn.h"
#include "../sandbox/control/control.h"
#include "../sandbox/session.h"
#include "utils.h"

static const char usage[] =
	"Usage: agentrun sandbox exec NAME [--tty|--no-tty] [--] CMD [ARGS...]\n"
	"       agentrun sandbox list\n"
	"       agentrun sandbox stop [--time SECONDS] NAME\n"
	"       agentrun sandbox requests [NAME] [--json]\n"
	"       agentrun sandbox policy NAME [--json]\n"
	"       agentrun sandbox answer NAME ID once|session|always|refuse\n"
	"       agentrun sandbox learn --from LOG [-o PROFILE]\n"
	"\n"
	"Sessions of sandboxes started with `agentrun sandbox --name NAME\n"
	"[--detach] -- CMD`. exec runs one more command in NAME: its\n"
	"namespaces, seccomp profile, Landlock rules, environment (proxy\n"
	"variables included), no capabilities. list shows the running\n"
	"sandboxes. stop sends SIGTERM to the command (when it handles it),\n"
	"SIGKILL to every process of the sandbox after SECONDS (default 10),\n"
	"and returns once nothing of it is left.\n"
	"requests lists the connections of `--net ask` sandboxes waiting for\n"
	"an answer (of NAME, or of every sandbox); answer grants one: once\n"
	"(that connection), session (its HOST:PORT until the sandbox ends),\n"
	"always (session, and added to the sandbox's profile file), or\n"
	"refuses it. NAME of a sandbox without --name: sandbox-PID-HEX\n"
	"(as requests shows it). policy shows NAME's network policy in force:\n"
	"the allowlist it started with, each --secret by its name and hosts\n"
	"(never a value), the live grants (sandbox allow) and the session and\n"
	"always answers.\n"
	"\n"
	"Options:\n"
	"  --tty, --no-tty      exec: give CMD a terminal (default: when stdin is one)\n"
	"  -t, --time SECONDS   stop: seconds to wait after SIGTERM (default 10)\n"
	"  --json               requests: a JSON array; policy: the control\n"
	"                       plane's JSON object\n"
	"  -h, --help           this help\n";

static int session_exec(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "tty", no_argument, NULL, 'T' },
		{ "no-tty", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	const char *name = NULL;
	int c, tty = -1, status;

	/* options before and after NAME; CMD starts at the first word that
	 * is not one (or after --) */
	for (int pass = 0; pass < 2; pass++) {
		while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) !=
		       -1) {
			switch (c) {
			case 'T':
				tty = 1;
				break;
			case 'N':
				tty = 0;
				break;
			default:
				return cli_usage(usage, c == 'h' ? 0 : 1);
			}
		}
		if (pass == 0) {
			if (optind >= argc ||
			    strcmp(argv[optind - 1], "--") == 0) {
				fprintf(stderr,
					"agentrun sandbox exec: no sandbox NAME given\n");
				return 1;
			}
			name = argv[optind];
			/* getopt goes on after NAME: it becomes argv[0] */
			argv += optind;
			argc -= optind;
			optind = 0; /* a full re-initialisation of getopt */
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "agentrun sandbox exec: no command given\n");
		return 1;
	}
	if (ar_sandbox_session_exec(cli_state_root(g), name, argv + optind, tty,
				    &status, &err) < 0)
		return cli_fail(&err);
	return status;
}

static int session_list(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;

	if (argc > 1) {
		if (strcmp(argv[1], "-h") == 0 ||
		    strcmp(argv[1], "--help") == 0)
			return cli_usage(usage, 0);
		fprintf(stderr, "agentrun sandbox list: takes no arguments\n");
		return 1;
	}
	if (ar_sandbox_session_list(cli_state_root(g), stdout, &err) < 0)
		return cli_fail(&err);
	return 0;
}

static int session_stop(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "time", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	int c, timeout = 10;
	char *end;

	while ((c = getopt_long(argc, argv, "+ht:", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			timeout = (int)strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || timeout < 0 ||
			    timeout > 3600) {
				fprintf(stderr,
					"agentrun sandbox stop: --time: expected 0 to 3600 seconds, got `%s`\n",
					optarg);
				return 1;
			}
			break;
		default:
			return cli_usage(usage, c == 'h' ? 0 : 1);
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "agentrun sandbox stop: expected one NAME\n");
		return 1;
	}
	if (ar_sandbox_session_stop(cli_state_root(g), argv[optind], timeout,
				    &err) < 0)
		return cli_fail(&err);
	return 0;
}

/* requests [NAME] [--json], and policy NAME [--json] */
static int session_requests(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	bool json = false, policy = strcmp(argv[0], "policy") == 0;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else
			return cli_usage(usage, c == 'h' ? 0 : 1);
	}
	if (argc - optind > 1 || (policy && argc - optind != 1)) {
		fprintf(stderr, "agentrun sandbox %s: expected %s NAME\n",
			argv[0], policy ? "one" : "at most one");
		return 1;
	}
	if (policy && ar_sandbox_policy(cli_state_root(g), argv[optind], json,
					stdout, &err) < 0)
		return cli_fail(&err);
	if (!policy && ar_sandbox_requests(cli_state_root(g),
					   optind < argc ? argv[optind] : NULL,
					   json, stdout, &err) < 0)
		return cli_fail(&err);
	return 0;
}

static int session_answer(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;
	int r = cli_parse_help_only(argc, argv, usage, 3, 3);

	if (r >= 0)
		return r;
	if (ar_sandbox_answer(cli_state_root(g), argv[optind], argv[optind + 1],
			      argv[optind + 2], stdout, &err) < 0)
		return cli_fail(&err);
	return 0;
}

/* agentrun sandbox learn --from LOG [-o PROFILE]: a --shadow run's
 * would-be refusals (or any run's allowlist refusals) as profile lines */
static int session_learn(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ar_error err = AR_ERROR_INIT;
	const char *from = NULL, *outp = NULL, *home = getenv("HOME");
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	int c;

	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == 'f')
			from = optarg;
		else if (c == 'o')
			outp = optarg;
		else
			return cli_usage(usage, c == 'h' ? 0 : 1);
	}
	if (!from || optind != argc) {
		fprintf(stderr,
			"agentrun sandbox learn: expected --from LOG (an --audit log) and no other argument\n");
		return 1;
	}
	if (sb_learn_from_log(from, outp, home && *home == '/' ? home : "/",
			      cwd ? cwd : "/", stdout, &err) < 0)
		return cli_fail(&err);
	return 0;
}

int cmd_sandbox_session(struct ar_global_opts *g, int argc, char **argv)
{
	optind = 0; /* a fresh getopt for the subcommand */
	if (strcmp(argv[0], "requests") == 0 || strcmp(argv[0], "policy") == 0)
		return session_requests(g, argc, argv);
	if (strcmp(argv[0], "answer") == 0)
		return session_answer(g, argc, argv);
	if (strcmp(argv[0], "learn") == 0)
		return session_learn(argc, argv);
	if (strcmp(argv[0], "exec") == 0)
		return session_exec(g, argc, argv);
	if (strcmp(argv[0], "list") == 0)
		return session_list(g, argc, argv);
	return session_stop(g, argc, argv);
}
