/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Refused namespace creation, observed (seccomp_refusal.h). */
#define _GNU_SOURCE
#include "seccomp_refusal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
	uint64_t bit;
	const char *name;
} ns_bits[] = {
	{ CLONE_NEWUSER, "CLONE_NEWUSER" },
	{ CLONE_NEWNS, "CLONE_NEWNS" },
	{ CLONE_NEWPID, "CLONE_NEWPID" },
	{ CLONE_NEWNET, "CLONE_NEWNET" },
	{ CLONE_NEWIPC, "CLONE_NEWIPC" },
	{ CLONE_NEWUTS, "CLONE_NEWUTS" },
	{ CLONE_NEWCGROUP, "CLONE_NEWCGROUP" },
	{ CLONE_NEWTIME, "CLONE_NEWTIME" },
};

/* One NOTIFY rule per namespace bit: "flags & bit == bit" (OCI rules
 * are ORed; one rule may test an argument only once). */
static void add_bits(struct oci_seccomp_syscall *v, size_t *k, const char *name,
		     bool with_time, struct ar_arena *a)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(ns_bits); i++) {
		struct oci_seccomp_syscall *r;

		if (ns_bits[i].bit == CLONE_NEWTIME && !with_time)
			continue;
		r = &v[(*k)++];
		memset(r, 0, sizeof(*r));
		r->action = OCI_SCMP_ACT_NOTIFY;
		r->names.v = oci_arena_calloc(a, 2, sizeof(char *));
		r->names.v[0] = oci_arena_strdup(a, name);
		r->names.n = 1;
		r->args = oci_arena_calloc(a, 1, sizeof(*r->args));
		r->args[0] = (struct oci_seccomp_arg){
			.index = 0,
			.value = ns_bits[i].bit,
			.value_two = ns_bits[i].bit,
			.op = OCI_SCMP_CMP_MASKED_EQ,
		};
		r->n_args = 1;
	}
}

void ar_seccomp_refusal_rules(struct oci_seccomp *sc, struct ar_arena *a)
{
	size_t n = sc->n_syscalls + 2 * AR_ARRAY_SIZE(ns_bits) + 1, k;
	struct oci_seccomp_syscall *v = oci_arena_calloc(a, n, sizeof(*v));

	memcpy(v, sc->syscalls, sc->n_syscalls * sizeof(*v));
	k = sc->n_syscalls;
	add_bits(v, &k, "clone", false, a);
	add_bits(v, &k, "unshare", true, a);
	v[k].action = OCI_SCMP_ACT_NOTIFY;
	v[k].names.v = oci_arena_calloc(a, 2, sizeof(char *));
	v[k].names.v[0] = oci_arena_strdup(a, "setns");
	v[k].names.n = 1;
	k++;
	sc->syscalls = v;
	sc->n_syscalls = k;
}

void ar_seccomp_ns_flags_str(uint64_t flags, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < AR_ARRAY_SIZE(ns_bits) && o < len; i++)
		if (flags & ns_bits[i].bit)
			o += (size_t)snprintf(buf + o, len - o, "%s%s",
					      o ? "|" : "", ns_bits[i].name);
}

static const char *syscall_name(int nr)
{
	switch (nr) {
	case __NR_clone:
		return "clone";
	case __NR_unshare:
		return "unshare";
	case __NR_setns:
		return "setns";
	default:
		return "?";
	}
}

/* The process's name (/proc/PID/comm), printable ASCII only: a name is
 * the program's to choose. */
static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (n <= 0) {
		snprintf(buf, len, "pid %d", (int)pid);
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (char *p = buf; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

int ar_seccomp_refusal_answer(int nfd, ar_refusal_fn fn, void *data)
{
	struct seccomp_notif_sizes sizes = { 0 };
	size_t req_size = sizeof(struct seccomp_notif);
	size_t resp_size = sizeof(struct seccomp_notif_resp);
	_cleanup_free_ struct seccomp_notif *req = NULL;
	_cleanup_free_ struct seccomp_notif_resp *resp = NULL;

	if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0) {
		if (sizes.seccomp_notif > req_size)
			req_size = sizes.seccomp_notif;
		if (sizes.seccomp_notif_resp > resp_size)
			resp_size = sizes.seccomp_notif_resp;
	}
	req = ar_xcalloc(1, req_size);
	resp = ar_xcalloc(1, resp_size);
	char comm[32];

	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
		/* ENOENT: the caller died meanwhile */
		return errno == ENOENT || errno == EINTR ? 0 : -1;
	/* The name while the caller waits for the answer (it is gone soon
	 * after), and only if the pid is still that caller's. */
	comm_of((pid_t)req->pid, comm, sizeof(comm));
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
		snprintf(comm, sizeof(comm), "pid %d", (int)req->pid);
	resp->id = req->id;
	resp->error = -EPERM;
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT)
		return -1;
	if (fn)
		fn(comm, syscall_name(req->data.nr), req->data.args[0],
		   req->data.args[1], data);
	return 0;
}
