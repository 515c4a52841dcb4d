/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The types every runtime/sandbox/ file shares: the options of one
 * `agentrun sandbox` (the command line and the profile), the facts of the
 * host it runs on, and the plan resolved from both. Types only: no
 * file's functions are declared here, so any file can include it without
 * depending on the files that fill these structs.
 */
#ifndef AGENTRUN_SANDBOX_TYPES_H
#define AGENTRUN_SANDBOX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "arena.h"
#include "egress/egress_policy.h"
#include "protect/host_exec_check.h"
#include "landlock.h"
#include "oci_config.h"
#include "overlay/overlay.h"
#include "protect/protect.h"
#include "rootfs_fill.h"
#include "vm/vm.h"

struct oci_profile;

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
	const char *upstream_proxy; /* --upstream-proxy URL */
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
	int ask_timeout; /* --ask-timeout SECONDS (0: the default, 60) */
	/* the agent channel (control/control_channel.h): 1 --agent-channel,
	 * -1 --no-agent-channel, 0 the profile's "agent_channel" (off) */
	int agent_channel;
	bool shadow; /* --shadow: the allowlist evaluated, not enforced */
	bool vm; /* --vm: CMD in a guest kernel (vm/vm.h, docs/vm.md) */
	bool vm_guest_root; /* --vm-guest-root: CMD is root in the guest */
	const char *vm_kernel; /* --vm-kernel FILE (NULL: the newest) */
};

/* How one sandbox runs (the CLI's global options and --print-bundle). */
struct ar_sandbox_run_opts {
	const char *state_root; /* --root */
	const char *print_bundle; /* --print-bundle DIR: write, don't run */
	bool cgroups_disabled; /* --cgroup-manager disabled */
	bool detach; /* --detach (needs a name): run on in a monitor */
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

/* --secret (sandbox_egress.c, egress_tls.h): the secrets, the sandbox's
 * CA in a private directory shown read-only inside, the variables that
 * name them and the placeholders. */
struct ar_egress_secret;
struct ar_egress_tls;
struct sb_secrets {
	struct ar_egress_secret *v;
	size_t n;
	struct ar_egress_tls *tls;
	char *dir;
	char **env; /* NAME=placeholder, VAR=CA path; NULL ended */
	size_t n_env;
};

/* The user's git configuration's filtered copies (sandbox_gitconfig.c):
 * a private directory, files 0 .. n-1. */
struct sb_gitconfig {
	const char *parent; /* where dir is made: /tmp, or the bundle's
			     * directory with --print-bundle */
	char *dir;
	size_t n;
	char *empty; /* sb_gitconfig_empty_file's, in dir */
};

/* The profile's "keep" files (sandbox_keep.c): their writable copies in
 * a private directory, files 0 .. n-1. */
struct sb_keep_file {
	char *copy; /* k->dir/N */
	char *state; /* the kept keys' file */
	char *host; /* the host's path (for messages) */
	const char *const *keys; /* the profile's, NULL-terminated */
};

struct sb_keep {
	const char *parent; /* where dir is made (as sb_gitconfig's) */
	char *dir;
	struct sb_keep_file *v;
	size_t n;
};

/*
 * One sandbox, resolved before any process exists (sb_plan_make,
 * sandbox_plan.c): the options with the profile and the host facts
 * worked out once. The config (sandbox_config.c), the egress proxy
 * (sandbox_egress.c) and the audit log (sandbox_audit.c) only read it.
 */
struct sb_plan {
	/* The options the run is made of: the caller's, with what the run
	 * adds (--learn: the host's top-level directories read-only and the
	 * network in learn mode; --secret: its variables and CA directory;
	 * --nested: Landlock off). The lists live in `arena`. */
	struct ar_sandbox_opts o;
	const struct ar_sandbox_host *h;
	struct ar_arena arena; /* everything below that is not malloc'd */

	const char *workspace; /* real path */
	/* agentrun's state root (--root), real path, NULL when unknown:
	 * hidden inside wherever a mount would show it */
	char *state_root;
	/* the profile's "etc_files" for the rootfs, ${WORKSPACE} replaced */
	struct oci_strv etc_names, etc_texts;
	bool workspace_home; /* --workspace ~ (or above): said loudly */
	enum ar_sandbox_net net; /* NONE, HOST or ALLOW */
	bool publish; /* --publish (command line or profile) */
	bool egress; /* the proxy runs: --net allow or --publish */
	bool nested; /* --nested or the profile's */
	bool agent_channel; /* SANDBOX_AGENT_CHANNEL_FD=3 (control/) */
	bool shadow; /* --shadow (sandbox_shadow.h) */
	/* --vm: what the guest needs, found on the host; the command is
	 * the helper agentrun-vm, the user's command after it (vm_argv) */
	struct ar_vm vm;
	char **vm_argv;
	bool observe; /* --audit or --learn */
	bool landlock;
	/* the config leaves out linux.seccomp: the runtime loads the
	 * embedded agent profile from its compiled-filter cache
	 * (ar_create_opts.seccomp_default) */
	bool seccomp_deferred;

	/* --net allow: the allowlist, parsed once (--learn: every
	 * destination, in learn mode); the host's own addresses when the
	 * proxy runs */
	struct ar_egress_policy policy;
	struct sb_secrets secrets;
	const char *made_in; /* /tmp, or the --print-bundle directory */
	struct sb_gitconfig gitconfig;
	struct sb_keep keep;
	/* --overlay: the sandbox directory, locked (overlay.h) */
	struct ar_overlay overlay;
	/* the protected paths inside the workspace (protect.h) */
	struct sb_protect protect;
	/* a plain run: the start time and the commondir placeholders of
	 * the end-of-run check (host_exec_check.h) */
	struct sb_hostexec hostexec;

	/* Mounts in order (parents first), the command's cwd and
	 * environment, the Landlock rules mirroring the mounts. */
	struct oci_mount *mounts;
	size_t n_mounts;
	const char *cwd;
	struct oci_strv env;
	struct ar_landlock_rules landlock_rules;
	/* the root's content (rootfs_fill.h): etc/passwd, etc/group, the
	 * merged-/usr links, for a run the mount points too */
	struct ar_rootfs_content rootfs;
	/* "userns(keep-id 1000:1000),mountns,...": what the config's
	 * annotation run.agentrun.sandbox.protections starts with (--nested
	 * adds what it made of the host's subordinate ids: the start line
	 * and the audit log read the annotation) */
	char protections[512];
};

#endif
