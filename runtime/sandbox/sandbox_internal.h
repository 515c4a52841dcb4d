/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared between the runtime/sandbox/ sources: the mount list being built. */
#ifndef AGENTRUN_SANDBOX_INTERNAL_H
#define AGENTRUN_SANDBOX_INTERNAL_H

#include "egress_policy.h"
#include "egress_proxy.h"
#include "sandbox.h"

/* Mounts in the order added; strings live in the config's arena, the
 * vector is malloc'd and copied into the arena at the end (sorted parents
 * first, see sb_mounts_finish). */
struct sb_mounts {
	struct ar_arena *a;
	struct oci_mount *v;
	size_t n, cap;
};

#define SB_OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The mount list (sandbox_mounts.c). */
void sb_mount_add(struct sb_mounts *m, const char *dest, const char *type,
		  const char *source, const char *const *options);
/* Same-path bind of a host path, read-only or read-write. */
void sb_bind(struct sb_mounts *m, const char *path, bool rw);
/* Hide a host path: an empty read-only tmpfs over a directory, /dev/null
 * over anything else. No-op when the path does not exist. */
void sb_hide(struct sb_mounts *m, const char *path);
/* True when a mount with this destination is already in the list. */
bool sb_has_dest(const struct sb_mounts *m, const char *dest);

/* As root on a workspace owned by someone else: make the last mount
 * (a bind of `path`) idmapped to the owner of `path` (no-op otherwise). */
void sb_workspace_idmap(struct sb_mounts *m, const char *path);
/* Move the list into cfg->mounts (in its arena), parents before children
 * (a stable sort by depth), so that a bind lands on top of the tmpfs or
 * bind that contains it and later entries for the same path win. */
void sb_mounts_finish(struct sb_mounts *m, struct oci_config *cfg);

/* Home (sandbox_home.c): a tmpfs at the home path and the default
 * dotfiles, read-only; the skeleton rc files unless the home directory
 * is (in) the workspace. */
int sb_home_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		   bool home_is_workspace, struct ar_error *err);
/* Hide every existing secret below any bind already in the list (call
 * it after the last bind). */
void sb_hide_secrets(struct sb_mounts *m, const struct ar_sandbox_host *h);

/* /etc entries (sandbox_etc.c): the default list plus `extra`. */
void sb_etc_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		   const struct ar_sandbox_list *extra,
		   const struct oci_strv *profile_extra);

/* The root directory (sandbox_rootfs.c): generated etc/passwd and
 * etc/group, the host's merged-/usr links. */
struct sb_rootfs {
	char *passwd;
	char *group;
	struct {
		const char *name; /* "bin" */
		char target[256]; /* "usr/bin" */
	} links[6];
	size_t n_links;
	/* A run (not --print-bundle): the config, whose mount points
	 * sb_rootfs_populate() makes in the fresh tmpfs root (its mounts
	 * as the runtime has them then). */
	const struct oci_config *cfg;
};
void sb_rootfs_init(struct sb_rootfs *r, const struct ar_sandbox_host *h);
void sb_rootfs_release(struct sb_rootfs *r);
/* Write it into the directory rfd (an O_PATH fd is enough). */
int sb_rootfs_fill(int rfd, const struct sb_rootfs *r, struct ar_error *err);
/* ar_create_opts.rootfs_populate; arg: a struct sb_rootfs. */
int sb_rootfs_populate(int rootfd, void *arg, struct ar_error *err);
/* The empty host directory a run's tmpfs root is mounted over (in the
 * sandbox's mount namespace only); *remove: a fresh one to rmdir after
 * the run. NULL with errno on failure. */
char *sb_root_mountpoint(uid_t uid, bool *remove);

/* --nested (sandbox_nested.c): relax the built config so that the command
 * can create namespaces; protections: the new protections annotation. */
int sb_nested_apply(struct oci_config *cfg, const char *protections,
		    struct ar_error *err);

/* The network (sandbox_egress.c). */
/* none, host or allow: the command line's, else the profile's. */
enum ar_sandbox_net sb_net_mode(const struct ar_sandbox_opts *o);
/* The allowlist: the profile's patterns and --net allow=... (errors name
 * the profile file and net.allow[i], or the option). */
int sb_egress_policy(const struct ar_sandbox_opts *o,
		     struct ar_egress_policy *p, struct ar_error *err);
/* An empty /etc/resolv.conf instead of the host's (call it after the
 * /etc mounts). */
void sb_egress_mounts(struct sb_mounts *m);
/* HTTP_PROXY=... and friends for the sandbox's environment, NULL ended. */
extern const char *const sb_egress_env[];
/* The proxy of one run: init before ar_container_run, on_spawn as
 * ar_create_opts.on_spawn (arg: the struct), release after the run
 * (prints the summary of refusals: egress_diag.h). fn/fn_data: an
 * audit log or learn mode also sees every decision. */
struct sb_egress {
	struct ar_egress_policy policy;
	struct ar_egress_proxy *proxy;
	ar_egress_event_fn fn;
	void *fn_data;
	struct ar_egress_diag *diag;
	bool verbose; /* --verbose */
	const char *audit_path; /* --audit FILE or NULL */
	bool allow; /* --net allow: the proxy and transparent egress */
	/* --publish: host sockets (bound by init), the inside ports */
	struct ar_egress_forward *publish;
	size_t n_publish;
	struct ar_egress_sockmaker *maker;
	struct sb_secrets *secrets; /* or NULL */
};
/* --secret (sandbox_egress.c, egress_tls.h): placeholders in the
 * environment, the sandbox's CA in a private directory shown read-only
 * inside and named by SSL_CERT_FILE and friends. prepare: *o becomes a
 * copy with those added (before the config is built). */
struct ar_egress_secret;
struct ar_egress_tls;
struct sb_secrets {
	struct ar_egress_secret *v;
	size_t n;
	struct ar_egress_tls *tls;
	char *dir;
	char **strs; /* NAME=placeholder, VAR=path: freed at release */
	size_t n_strs;
	const char **env, **ro;
	struct ar_sandbox_opts opts;
};
bool sb_secrets_wanted(const struct ar_sandbox_opts *o);
int sb_secrets_prepare(struct sb_secrets *s, const struct ar_sandbox_opts **o,
		       struct ar_error *err);
void sb_secrets_release(struct sb_secrets *s);

/* --publish given (command line or profile)? */
bool sb_egress_publish_wanted(const struct ar_sandbox_opts *o);
/* allow: --net allow (else --publish alone, with --net none); host:
 * --net host (where --publish is an error). */
int sb_egress_init(struct sb_egress *e, const struct ar_sandbox_opts *o,
		   bool allow, bool host, struct ar_error *err);
int sb_egress_on_spawn(pid_t pid, void *arg, struct ar_error *err);
void sb_egress_release(struct sb_egress *e);

/* Path helpers (sandbox_mounts.c). */
/* "DIR/NAME" in the arena (no printf: it runs ~80 times per start). */
char *sb_path_join(struct ar_arena *a, const char *dir, const char *name);
/* "~/x" -> HOME/x; absolute kept; realpath'd when it exists. NULL with
 * errno when it does not (ENOENT) or is relative (EINVAL). Malloc'd. */
char *sb_expand_path(const struct ar_sandbox_host *h, const char *p);

#endif
