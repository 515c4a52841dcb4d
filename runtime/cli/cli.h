/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The CLI front end: global options and the command table.
 * One file per command under runtime/cli/; each parses its own options
 * and calls one library function, which does the work on files,
 * namespaces and processes (the CLI itself only reads its environment
 * and euid, for the default state root). */
#ifndef AGENTRUN_CLI_H
#define AGENTRUN_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "log.h"

enum ar_cgroup_manager {
	AR_CGROUP_MANAGER_CGROUPFS = 0,
	AR_CGROUP_MANAGER_SYSTEMD,
	AR_CGROUP_MANAGER_DISABLED,
};

struct ar_global_opts {
	const char *root; /* state directory (--root) */
	const char *log_path;
	bool log_json;
	enum ar_log_level log_level; /* --log-level, --debug */
	bool systemd_cgroup;
	enum ar_cgroup_manager cgroup_manager;
	int rootless; /* -1 auto, 0 false, 1 true */
	const char *argv0;
};

/* Each command: returns the process exit status. argv[0] is the command
 * name; options start at argv[1]. */
typedef int (*ar_command_fn)(struct ar_global_opts *g, int argc, char **argv);

struct ar_command {
	const char *name;
	ar_command_fn fn;
	const char *summary;
};

/* Print the error (to stderr and the log) and return exit status 1. */
int cli_fail(struct ar_error *err);

/* Resolve the default state root when --root was not given. */
const char *cli_state_root(struct ar_global_opts *g);

/* Commands, one file each. */
int cmd_spec(struct ar_global_opts *g, int argc, char **argv);
int cmd_features(struct ar_global_opts *g, int argc, char **argv);
int cmd_create(struct ar_global_opts *g, int argc, char **argv);
int cmd_start(struct ar_global_opts *g, int argc, char **argv);
int cmd_run(struct ar_global_opts *g, int argc, char **argv);
int cmd_state(struct ar_global_opts *g, int argc, char **argv);
int cmd_kill(struct ar_global_opts *g, int argc, char **argv);
int cmd_exec(struct ar_global_opts *g, int argc, char **argv);
int cmd_delete(struct ar_global_opts *g, int argc, char **argv);
int cmd_list(struct ar_global_opts *g, int argc, char **argv);
int cmd_update(struct ar_global_opts *g, int argc, char **argv);
int cmd_pause(struct ar_global_opts *g, int argc, char **argv);
int cmd_mounts(struct ar_global_opts *g, int argc, char **argv);
int cmd_resume(struct ar_global_opts *g, int argc, char **argv);
int cmd_ps(struct ar_global_opts *g, int argc, char **argv);
int cmd_events(struct ar_global_opts *g, int argc, char **argv);
/* agentrun sandbox exec|list|stop (argv[0]: the subcommand) */
int cmd_sandbox_session(struct ar_global_opts *g, int argc, char **argv);
/* agentrun sandbox allow|revoke (sandbox_grant.c) */
int cmd_sandbox_grant(struct ar_global_opts *g, int argc, char **argv);
int cmd_sandbox(struct ar_global_opts *g, int argc, char **argv);
int cmd_doctor(struct ar_global_opts *g, int argc, char **argv);
int cmd_changes(struct ar_global_opts *g, int argc, char **argv);
int cmd_diff(struct ar_global_opts *g, int argc, char **argv);
int cmd_commit(struct ar_global_opts *g, int argc, char **argv);
int cmd_discard(struct ar_global_opts *g, int argc, char **argv);
int cmd_overlays(struct ar_global_opts *g, int argc, char **argv);
/* agentrun watch [NAME]: the terminal dashboard (watch.c) */
int cmd_watch(struct ar_global_opts *g, int argc, char **argv);
int cmd_ui(struct ar_global_opts *g, int argc, char **argv);
int cmd_vm_host(struct ar_global_opts *g, int argc, char **argv);
int cmd_vm_guest(struct ar_global_opts *g, int argc, char **argv);
int cmd_vm_exec(struct ar_global_opts *g, int argc, char **argv);

/* Shared option parsing of create and run (create.c). */
struct ar_create_opts;
int cli_parse_create_opts(struct ar_global_opts *g, int argc, char **argv,
			  bool run, struct ar_create_opts *o, int *rc);

/* common.c: commands that take only an id (`agentrun NAME ID`, -h/--help
 * prints "Usage: agentrun NAME ID", `summary` and the options).
 * 0: *id set; 1: --help printed (exit 0); -1: usage error (exit 1). */
int cli_parse_id_only(int argc, char **argv, const char *summary,
		      const char **id);
/* The whole command: parse, then fn(state root, id); the exit status. */
typedef int (*cli_id_fn)(const char *root, const char *id,
			 struct ar_error *err);
int cli_id_command(struct ar_global_opts *g, int argc, char **argv,
		   const char *summary, cli_id_fn fn);

/* Print usage (to stdout when status is 0, --help; to stderr otherwise)
 * and return status, the command's exit status. */
int cli_usage(const char *usage, int status);

/* Commands whose only option is -h/--help: parse the options; the
 * operands argv[optind..argc) must number min_operands to max_operands
 * (-1: no maximum). -1: go on; otherwise the exit status to return
 * (usage printed). */
int cli_parse_help_only(int argc, char **argv, const char *usage,
			int min_operands, int max_operands);

/* An --overlay sandbox command: open the sandbox operands[0], call fn
 * with the other operands (PATHS), release it; the exit status. */
struct ar_overlay;
typedef int (*cli_overlay_fn)(struct ar_overlay *ov, char **paths,
			      size_t n_paths, void *arg, struct ar_error *err);
int cli_overlay_command(char **operands, int n_operands, cli_overlay_fn fn,
			void *arg);

#endif
