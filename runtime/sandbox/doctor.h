/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun doctor`: what the sandbox needs on this machine, one check per
 * protection, each with the fix. `agentrun sandbox` runs the checks it
 * depends on first and refuses to start, naming the check, rather than
 * run with less.
 *
 * Every check reads the kernel's switches under a proc root that tests can
 * replace: AGENTRUN_DOCTOR_PROC=/some/fake/proc (a test knob, documented
 * in docs/sandbox.md) makes `doctor` and `sandbox` read
 * FAKE/sys/kernel/unprivileged_userns_clone and friends instead of the
 * real ones. A switch that says "off" fails the check even when a live
 * probe would succeed.
 */
#ifndef AGENTRUN_DOCTOR_H
#define AGENTRUN_DOCTOR_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

enum ar_doctor_status {
	AR_DOCTOR_OK = 0,
	AR_DOCTOR_WARN, /* missing, but only an optional feature needs it */
	AR_DOCTOR_FAIL, /* missing and required */
	AR_DOCTOR_SKIP, /* does not apply here */
};

struct ar_doctor_env {
	const char *proc; /* "/proc", or $AGENTRUN_DOCTOR_PROC */
	const char *etc; /* "/etc" (subuid/subgid) */
	uid_t uid;
	const char *user;
	const char *workspace; /* for the idmapped-mount check; NULL: cwd */
	bool no_probes; /* skip what forks a probe process (the userns
			 * check then reads only the sysctls) */
};

struct ar_doctor_result {
	const char *id; /* "userns", "subids", ... (stable, for scripts) */
	const char *name; /* "unprivileged user namespaces" */
	enum ar_doctor_status status;
	char detail[256];
	char fix[320];
};

enum ar_doctor_check {
	AR_DOCTOR_USERNS = 0,
	AR_DOCTOR_SUBIDS,
	AR_DOCTOR_OVERLAY,
	AR_DOCTOR_IDMAP,
	AR_DOCTOR_SECCOMP,
	AR_DOCTOR_LANDLOCK,
	AR_DOCTOR_CGROUP,
	AR_DOCTOR_VM, /* --vm: QEMU, a guest kernel; KVM or TCG */
	AR_DOCTOR_NCHECKS
};

/* The defaults of this process (AGENTRUN_DOCTOR_PROC honoured). */
void ar_doctor_env_default(struct ar_doctor_env *e);
/* The same for a known user (no passwd lookup). */
void ar_doctor_env_for(struct ar_doctor_env *e, uid_t uid, const char *user);

/* Run one check. */
void ar_doctor_check(const struct ar_doctor_env *e, enum ar_doctor_check c,
		     struct ar_doctor_result *r);

/* The Landlock ABI version of the kernel (0: none). */
int ar_doctor_landlock_abi(void);

/* Print one line per check ("ok   userns  ...", "FAIL ... fix: ...").
 * Returns the number of FAIL results. */
int ar_doctor_report(const struct ar_doctor_env *e, FILE *out);

#endif
