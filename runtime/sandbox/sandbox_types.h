/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The types every runtime/sandbox/ file shares: the options of one
 * `agentrun sandbox` (the command line and the profile), the facts of the
 * host it runs on, and what the sandbox ended up with. Types only: no
 * file's functions are declared here, so any file can include it without
 * depending on the files that fill these structs.
 */
#ifndef AGENTRUN_SANDBOX_TYPES_H
#define AGENTRUN_SANDBOX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ar_landlock_rule;
struct oci_profile;
struct sb_protect;

enum ar_sandbox_net {
	AR_SANDBOX_NET_DEFAULT = 0, /* the profile's, else none */
	AR_SANDBOX_NET_NONE,
	AR_SANDBOX_NET_HOST,
	AR_SANDBOX_NET_ALLOW, /* own netns + the egress allowlist proxy */
};

/* A list of strings given on the command line (not owned). */
struct ar_sandbox_list {
	const char **v;
	size_t n;
};

struct ar_sandbox_opts {
	char **argv; /* CMD ARGS..., NULL terminated */
	const char *workspace; /* NULL: the profile's, else git top / cwd */
	struct ar_sandbox_list ro; /* --ro PATH */
	struct ar_sandbox_list rw; /* --rw PATH */
	struct ar_sandbox_list hide; /* --hide PATH */
	struct ar_sandbox_list env; /* --env NAME[=VALUE] */
	struct ar_sandbox_list etc; /* --etc NAME */
	enum ar_sandbox_net net;
	struct ar_sandbox_list net_allow; /* --net allow=PATTERN[,...] */
	struct ar_sandbox_list publish; /* --publish [ADDR:]HOSTPORT:PORT */
	struct ar_sandbox_list secrets; /* --secret NAME=HOST-PATTERN[,...] */
	int tty; /* -1 auto (stdin and stdout are terminals), 0, 1 */
	int landlock; /* -1 auto (when the kernel has it), 0 off, 1 required */
	const struct oci_profile *profile; /* NULL: none */
	bool overlay; /* --overlay: copy-on-write workspace */
	bool nested; /* --nested: namespaces inside (sandbox_nested.c) */
	const char *name; /* --name: a session (session.h) and the
			   * --overlay's name */
	const char *audit; /* --audit FILE ("-": stderr); docs/audit.md */
	const char *learn; /* --learn PROFILE: record, write a profile */
	bool verbose; /* --verbose: the runtime's lines on stderr while the
		       * command runs (egress decisions) */
	/* Set by ar_sandbox_run for --overlay (overlay.h): */
	const char *overlay_upper;
	const char *overlay_work;
	/* Set by ar_sandbox_run for a plain run: the config gets no
	 * linux.seccomp; the runtime loads the embedded agent profile from
	 * its compiled-filter cache (ar_create_opts.seccomp_default). */
	bool seccomp_deferred;
};

/* Who and where: filled from the process by ar_sandbox_host_detect();
 * tests fill it by hand. */
struct ar_sandbox_host {
	uid_t uid;
	gid_t gid;
	char *user; /* login name ("user" + uid when unknown) */
	char *group;
	char *home; /* real path */
	char *shell;
	char *cwd; /* real path */
	char **environ; /* not owned */
	const char *etc; /* "/etc": where host /etc entries are read */
	const char *proc; /* "/proc": for the doctor checks */
};

/* What the sandbox ended up with, for the start log and annotations. */
struct ar_sandbox_info {
	char *workspace;
	bool net_host;
	bool net_allow; /* the egress proxy runs (sandbox_egress.c) */
	bool landlock;
	/* Landlock on: the rules (their paths are the config's), for
	 * ar_create_opts.landlock; free with ar_sandbox_info_release. */
	struct ar_landlock_rule *landlock_rules;
	size_t n_landlock_rules;
	bool workspace_home; /* --workspace ~ (or above): said loudly */
	char protections[512]; /* "userns,mountns,pidns,netns,..." */
	/* The protected paths inside the workspace (protect.h); free with
	 * ar_sandbox_info_release. */
	struct sb_protect *protect;
};

#endif
