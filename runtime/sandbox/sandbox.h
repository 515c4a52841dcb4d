/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox`: run a command (an AI coding agent) rootless in a
 * container built on the fly from the host. The sandbox only produces an
 * ordinary struct oci_config (and a bundle directory holding it); running
 * it is the same ar_container_run() as `agentrun run`.
 *
 *   host /usr /bin /lib* /opt /sbin   read-only binds (rro)
 *   /etc                              generated passwd/group + an allowlist
 *                                     of host files, read-only
 *   $HOME                             tmpfs + allowlisted dotfiles; secret
 *                                     dirs (~/.ssh, ...) always hidden
 *   workspace                         git top-level of cwd (or cwd), rw,
 *                                     same path, same uid (keep-id map)
 *   /tmp /dev/shm                     fresh tmpfs
 *   network                           none (own netns, lo up), host, or
 *                                     allow=PATTERNS: own netns and an
 *                                     allowlist proxy (sandbox_egress.c)
 *   environment                       allowlist, secrets dropped
 *
 * See docs/sandbox.md for the lists and the reasoning.
 */
#ifndef AGENTRUN_SANDBOX_H
#define AGENTRUN_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "home_secrets.h"
#include "oci_config.h"

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

int ar_sandbox_host_detect(struct ar_sandbox_host *h, struct ar_error *err);
void ar_sandbox_host_release(struct ar_sandbox_host *h);

/* What the sandbox ended up with, for the start log and annotations. */
struct ar_sandbox_info {
	char *workspace;
	bool net_host;
	bool net_allow; /* the egress proxy runs (sandbox_egress.c) */
	bool landlock;
	bool workspace_home; /* --workspace ~ (or above): said loudly */
	char protections[256]; /* "userns,mountns,pidns,netns,..." */
	/* The protected paths inside the workspace (protect.h); free with
	 * ar_sandbox_info_release. */
	struct sb_protect *protect;
};
void ar_sandbox_info_release(struct ar_sandbox_info *info);

/*
 * Build the config. rootfs_rel is root.path (relative to the bundle);
 * bundle_dir is where generated files (rootfs/etc/passwd, ...) are
 * written by ar_sandbox_bundle_write(). Fails naming the offending
 * option for paths that do not exist or that are on the never-share list.
 */
int ar_sandbox_build_config(const struct ar_sandbox_opts *o,
			    const struct ar_sandbox_host *h,
			    struct oci_config **out,
			    struct ar_sandbox_info *info, struct ar_error *err);

/* Write BUNDLE/config.json and BUNDLE/rootfs (mount points, the
 * merged-/usr symlinks of the host, etc/passwd, etc/group). `dir` must
 * exist and be empty or absent. */
int ar_sandbox_bundle_write(const struct oci_config *cfg,
			    const struct ar_sandbox_host *h, const char *dir,
			    struct ar_error *err);

/* Build, check the protections this machine offers (doctor), run it in
 * the foreground through ar_container_run() with the config in memory
 * and a tmpfs root (nothing is written on the host; sandbox_rootfs.c).
 * *exit_status: the command's status. */
struct ar_sandbox_run_opts {
	const char *state_root; /* --root */
	const char *print_bundle; /* --print-bundle DIR: write, don't run */
	bool cgroups_disabled; /* --cgroup-manager disabled */
	bool detach; /* --detach (needs a name): run on in a monitor */
};
/* --profile VALUE: a path as it is, or a profile name looked up as
 * NAME.json in ~/.config/agentrun/profiles, then the installed profiles
 * (profile_lookup.c). *path is malloc'd. */
int ar_sandbox_profile_resolve(const char *value, char **path,
			       struct ar_error *err);

int ar_sandbox_run(const struct ar_sandbox_opts *o,
		   const struct ar_sandbox_run_opts *r, int *exit_status,
		   struct ar_error *err);

/* ---- pieces, exposed for unit tests ---- */

/* Environment filter (sandbox_env.c). `requests` are --env entries and
 * the profile's env entries (NAME, NAME=VALUE, PATTERN*). The result
 * (in `a`) has the host variables that pass, then the requested values,
 * then HOME/USER/LOGNAME/SHELL/PATH forced to the sandbox's. */
bool ar_sandbox_env_default_allowed(const char *name);
bool ar_sandbox_env_is_secret(const char *name);
int ar_sandbox_env_build(struct ar_arena *a, char *const *host_env,
			 const char *const *requests, size_t n_requests,
			 const struct ar_sandbox_host *h, struct oci_strv *out,
			 struct ar_error *err);

/* Secrets under the home directory: home_secrets.h. */

/* The default /etc allowlist (sandbox_etc.c), NULL terminated. */
extern const char *const ar_sandbox_etc_default[];

/* "/etc/passwd" and "/etc/group" contents for the user (malloc'd). */
char *ar_sandbox_passwd(const struct ar_sandbox_host *h);
char *ar_sandbox_group(const struct ar_sandbox_host *h);

/* The workspace the options select (--workspace, the profile's, else
 * ar_sandbox_find_workspace of the cwd), a real path; malloc'd. */
int ar_sandbox_workspace(const struct ar_sandbox_opts *o,
			 const struct ar_sandbox_host *h, char **out,
			 struct ar_error *err);

/* Workspace of a directory: the nearest ancestor (or itself) holding a
 * .git entry, else the directory itself. Malloc'd. */
char *ar_sandbox_find_workspace(const char *cwd);

#endif
