/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Seccomp filters from linux.seccomp (runtime-spec config-linux.md).
 *
 *   ar_seccomp_compile()   config -> BPF program, in the runtime, before
 *                          the container process forks or in it; costs
 *                          nothing when linux.seccomp is absent (do not
 *                          call it then).  libseccomp checks the rules and
 *                          resolves names; the program is the compact one
 *                          of seccomp_bpf.h when that expresses the
 *                          profile, else libseccomp's export
 *   ar_seccomp_load()      in the container process, the very last step
 *                          before execve
 *   ar_seccomp_send_notify_fd()
 *                          in the runtime (host side), when a rule uses
 *                          SCMP_ACT_NOTIFY: hands the listener fd that the
 *                          container process passed up to listenerPath
 *
 * The program is loaded with the seccomp(2) syscall directly, not with
 * seccomp_load(), so that:
 *   - no_new_privs is NOT set implicitly (libseccomp would); it is set only
 *     when process.noNewPrivileges says so (ar_set_no_new_privs());
 *   - every runtime-spec flag works, including
 *     SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV which libseccomp 2.5 lacks.
 *
 * Caveat for the caller (as in runc): without no_new_privs, loading a
 * filter needs CAP_SYS_ADMIN.  So when noNewPrivileges is false, load the
 * filter before dropping capabilities; when it is true, set NNP and load
 * it last, just before execve.
 *
 * Semantics follow runc/crun:
 *   - SCMP_ACT_KILL kills the thread; SCMP_ACT_ERRNO/TRACE use errnoRet,
 *     default EPERM (defaultErrnoRet for the default action);
 *   - the native architecture is always part of the filter; others
 *     only when this kernel can run them (x32 only when it runs x32
 *     syscalls: an x32 number then gets the bad-architecture action);
 *   - syscall names this libseccomp does not know are skipped (debug log);
 *   - rules whose action (and errno) equals the default action are
 *     skipped;
 *   - SCMP_CMP_MASKED_EQ: value is the mask, valueTwo the datum;
 *   - several args on one rule are ANDed; when two args name the same
 *     index, each arg becomes a rule of its own (libseccomp refuses two
 *     comparisons of one argument in one rule).
 */
#ifndef AGENTRUN_SECCOMP_H
#define AGENTRUN_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"
#include "utils.h"

struct ar_seccomp_filter;

/* Build the filter.  *out is owned by the caller
 * (ar_seccomp_filter_free). Errors name the offending entry:
 *   "seccomp: unknown flag `SECCOMP_FILTER_FLAG_FOO`"
 *   "seccomp: syscalls[3] (`clone`): add rule: Invalid argument" */
int ar_seccomp_compile(const struct oci_seccomp *sc,
		       struct ar_seccomp_filter **out, struct ar_error *err);

/* crun's run.oci.seccomp_fail_unknown_syscall (present and not "0"):
 * a syscall name libseccomp does not know is an error instead of being
 * skipped. */
#define AR_ANNOTATION_SECCOMP_FAIL_UNKNOWN                                     \
	"run.oci.seccomp_fail_unknown_syscall"

/* Every syscall name of the profile is known to libseccomp (for the
 * native architecture), else an error naming the first that is not:
 *   "linux.seccomp.syscalls[2].names[0]: unknown syscall `foo` (...)" */
int ar_seccomp_check_names(const struct oci_seccomp *sc, struct ar_error *err);

/* Like ar_seccomp_compile(), but reuse the BPF program compiled before for
 * the same profile (same libseccomp, kernel and architecture) from
 * cache_dir, and store new ones there.  Compiling a large multi-arch
 * profile costs tens of milliseconds; a cache hit is a file read.
 *
 * cache_dir must be private to the runtime's user (e.g. a directory under
 * the state root); it is created 0700 when missing, and not used when it
 * is owned by someone else or writable by group/others.  A cache entry is
 * used only when the whole profile it was compiled from matches byte for
 * byte (the hash only names the file).  Cache problems are never errors:
 * the profile is then compiled as usual.  cache_dir NULL = no cache. */
int ar_seccomp_compile_cached(const struct oci_seccomp *sc,
			      const char *cache_dir,
			      struct ar_seccomp_filter **out,
			      struct ar_error *err);

/* The same for the embedded agent profile (oci_seccomp_default(), used by
 * `agentrun sandbox`), with the cache keyed by its JSON text and this
 * agentrun version instead of the parsed profile: a hit neither parses
 * the 20 kB profile nor builds its canonical key (0.8 M instructions per
 * start); a miss parses and compiles it as usual.  As for every entry,
 * the key also holds the libseccomp version, kernel and architecture.
 * refusals: with ar_seccomp_refusal_rules() added (a separate entry). */
int ar_seccomp_compile_default_cached(const char *cache_dir, bool refusals,
				      struct ar_seccomp_filter **out,
				      struct ar_error *err);

/* Whether the filter came from the cache (then it has no PFC form). */
bool ar_seccomp_filter_from_cache(const struct ar_seccomp_filter *f);

/* Load the filter into the calling thread's process.  *notify_fd_out gets
 * the user-notification listener fd when a rule uses SCMP_ACT_NOTIFY
 * (O_CLOEXEC; the caller passes it to the runtime), else -1. */
int ar_seccomp_load(struct ar_seccomp_filter *f, int *notify_fd_out,
		    struct ar_error *err);

/* True when a rule of the filter uses SCMP_ACT_NOTIFY. */
bool ar_seccomp_filter_needs_notify(const struct ar_seccomp_filter *f);

/* Load f with SECCOMP_FILTER_FLAG_NEW_LISTENER even without a NOTIFY rule:
 * a linux.seccomp.listenerPath gets the fd whatever the rules (as crun).
 * Set after the (cached) compile: the cache key leaves listenerPath out. */
void ar_seccomp_filter_want_listener(struct ar_seccomp_filter *f);

/* The compiled BPF program (struct sock_filter array) and its length in
 * bytes, e.g. for tests or a cache.  Owned by the filter. */
const void *ar_seccomp_filter_bpf(const struct ar_seccomp_filter *f,
				  size_t *len);

/* Human-readable form of the filter (libseccomp PFC), written to fd. */
int ar_seccomp_filter_export_pfc(const struct ar_seccomp_filter *f, int fd,
				 struct ar_error *err);

/* How long connect(2) and send(2) to listenerPath may block (a listener
 * that never accepts): then the creation fails with ETIMEDOUT. */
#define AR_SECCOMP_LISTENER_TIMEOUT_S 5

/* Connect to the unix socket listener_path and send notify_fd with
 * SCM_RIGHTS (each step at most AR_SECCOMP_LISTENER_TIMEOUT_S); the
 * message is the container process state:
 *   {"ociVersion":"1.2.0","fds":["seccompFd"],"pid":PID,
 *    "metadata":"...","state":STATE}
 * state_json is the container state (as `agentrun state` prints it); its
 * "pid" is used as PID.  metadata may be NULL (then omitted). */
int ar_seccomp_send_notify_fd(const char *listener_path, int notify_fd,
			      const char *metadata, const char *state_json,
			      struct ar_error *err);

void ar_seccomp_filter_free(struct ar_seccomp_filter *f);
static inline void ar_seccomp_filter_freep(struct ar_seccomp_filter **f)
{
	if (*f)
		ar_seccomp_filter_free(*f);
}
#define _cleanup_seccomp_filter_ _cleanup_(ar_seccomp_filter_freep)

/* --- tables shared with `agentrun features` --- */

/* Runtime-spec names known to this build, NULL-terminated. */
extern const char *const ar_seccomp_action_names[];
extern const char *const ar_seccomp_op_names[];
extern const char *const ar_seccomp_flag_names[];
extern const char *const ar_seccomp_arch_names[]; /* all spec names */

/* Whether libseccomp knows the spec arch name ("SCMP_ARCH_X86_64"). */
bool ar_seccomp_arch_known(const char *name);

/* The name of syscall nr of the architecture of a seccomp_data (its
 * AUDIT_ARCH_* value; an x32 call is x86_64 with the x32 bit in nr),
 * malloc'd; NULL when this libseccomp does not know it. */
char *ar_seccomp_syscall_name(uint32_t audit_arch, int nr);

/* Whether the running kernel accepts the spec flag name. */
bool ar_seccomp_flag_supported(const char *name);

/* libseccomp version "2.5.4" (runtime, not build time). */
const char *ar_seccomp_lib_version(void);

#endif
