/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Setup of the container process after its root filesystem is in place:
 * rlimits, oomScoreAdj, I/O priority and scheduler, user and groups,
 * umask, cwd, environment, executable lookup, inherited fds.
 *
 * The order (driven by container_init.c) mirrors runc/crun: resources as
 * root; then capabilities kept over the uid change, groups, gid, uid,
 * capability sets; cwd; fds closed on exec except stdio and the preserved
 * ones; seccomp and execve last.
 */
#ifndef AGENTRUN_PROCESS_H
#define AGENTRUN_PROCESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"

/* setrlimit for every process.rlimits entry:
 *   "process.rlimits: set RLIMIT_NOFILE (soft 1024, hard 2048): ..." */
int ar_process_set_rlimits(const struct oci_process *p, struct ar_error *err);

/* process.ioPriority (ioprio_set) and process.scheduler
 * (sched_setattr). */
int ar_process_set_io_priority(const struct oci_process *p,
			       struct ar_error *err);
int ar_process_set_scheduler(const struct oci_process *p, struct ar_error *err);

/* run.oci.keep_original_groups (crun; podman --group-add keep-groups):
 * no setgroups, the caller's supplementary groups stay. */
#define AR_ANNOTATION_KEEP_GROUPS "run.oci.keep_original_groups"

/* setgroups (additionalGids; skipped when setgroups is denied and there
 * are none, or with keep_groups: AR_ANNOTATION_KEEP_GROUPS), setresgid,
 * setresuid, with the capabilities of the config applied across the
 * change (ar_caps_prepare_keep/ar_caps_apply), then umask. */
int ar_process_set_user(const struct oci_process *p, bool setgroups_denied,
			bool keep_groups, struct ar_error *err);

/* The settings applied while still privileged, for the init process and
 * for exec alike: rlimits, I/O priority, scheduler, and no_new_privs when
 * nnp. */
int ar_process_apply_limits(const struct oci_process *p, bool nnp,
			    struct ar_error *err);

/* chdir to process.cwd as root (it may be unreadable by the user, as
 * runc), with its check; true when done. Called before any seccomp filter
 * is loaded: the runtime's own calls (chdir, getcwd) never meet it. (A
 * missing cwd of a new container is made with its root filesystem.) */
bool ar_process_chdir_early(const struct oci_process *p);
/* stdio fds that are anonymous pipes or sockets are given to process.user
 * (as crun), so the process can reopen /dev/stdout; files, named FIFOs and
 * devices are left alone. Errors are ignored. */
void ar_process_chown_stdio(const struct oci_process *p);
/* ar_process_set_user(), then the chdir to process.cwd as the user when
 * ar_process_chdir_early() could not do it (cwd_done false). */
int ar_process_enter_user(const struct oci_process *p, bool setgroups_denied,
			  bool keep_groups, bool cwd_done,
			  struct ar_error *err);

/* Resolve args[0] like execvpe with the container's PATH (from env; the
 * usual default when absent). Returns a malloc'd path or NULL with err:
 *   "process.args[0]: `foo` not found in $PATH (/usr/bin:/bin)" */
char *ar_process_find_executable(const char *name, char *const *env,
				 struct ar_error *err);

/* HOME for a process.env without one (NULL when it has one): the home of
 * process.user.uid in the container's /etc/passwd (read in the current
 * root), "/" when there is none, as runc. Malloc'd. */
char *ar_process_home(const struct oci_process *p);
/* The home field of `uid`'s line in passwd text, or "/"; pure. */
char *ar_process_passwd_home(const char *passwd, uid_t uid);

/* The environment for execve: process.env, plus HOME=home when home is
 * not NULL, plus LISTEN_FDS/LISTEN_PID when listen_fds > 0. Returns a
 * malloc'd NULL-terminated vector whose strings are those of p->env (not
 * copied) or malloc'd additions. */
char **ar_process_build_env(const struct oci_process *p, int listen_fds,
			    pid_t listen_pid, const char *home);

/* Value of NAME in an envp vector, or NULL. Pure. */
const char *ar_env_get(char *const *env, const char *name);

/* Mark every fd >= 3 + preserve_fds close-on-exec (close_range), and the
 * preserved ones inheritable. The runtime's own fds are all O_CLOEXEC. */
int ar_process_prepare_fds(int preserve_fds, struct ar_error *err);

/* chdir to process.cwd; after the uid change when root could not. */
int ar_process_chdir(const char *cwd, struct ar_error *err);

#endif
