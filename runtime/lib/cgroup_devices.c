/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * linux.resources.devices on cgroup v2: an eBPF program of type
 * BPF_PROG_TYPE_CGROUP_DEVICE attached to the container's cgroup. The
 * kernel runs it for every open(2) and mknod(2) of a device node by a
 * process of the cgroup; it returns 1 (allow) or 0 (deny, EPERM).
 *
 * The program tests, in this order, and returns at the first match:
 *   1. the devices every container needs, always allowed (as runc and
 *      crun): mknod of any char or block device (the node alone grants
 *      nothing), /dev/null, zero, full, random, urandom, tty, console,
 *      ptmx and the pts devices (136:*);
 *   2. the linux.devices entries, allowed (they MUST be available in the
 *      container, runtime-spec; runc does the same);
 *   3. linux.resources.devices, the last rule first (a later rule
 *      overrides an earlier one, as the v1 allow/deny files did);
 *   4. nothing matched: deny.
 * A rule matches when its type ('a' = any) and major/minor (absent or -1
 * = any) match and, for an allow rule, the requested access is a subset
 * of its access, for a deny rule, the requested access has any of its
 * access (absent = "rwm"): a denied bit is never granted by an earlier
 * allow rule (crun tests the subset for both, so that "deny w" after
 * "allow rw" still opens the device read-write).
 */
#include "config.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "utils.h"

struct dev_rule {
	char type; /* 'a', 'c', 'b' */
	int64_t major, minor; /* -1: any */
	unsigned access; /* BPF_DEVCG_ACC_* */
	bool allow;
};

#define ACC_ALL (BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD)

static const struct dev_rule always_allowed[] = {
	{ 'c', -1, -1, BPF_DEVCG_ACC_MKNOD, true },
	{ 'b', -1, -1, BPF_DEVCG_ACC_MKNOD, true },
	{ 'c', 1, 3, ACC_ALL, true }, /* null */
	{ 'c', 1, 5, ACC_ALL, true }, /* zero */
	{ 'c', 1, 7, ACC_ALL, true }, /* full */
	{ 'c', 1, 8, ACC_ALL, true }, /* random */
	{ 'c', 1, 9, ACC_ALL, true }, /* urandom */
	{ 'c', 5, 0, ACC_ALL, true }, /* tty */
	{ 'c', 5, 1, ACC_ALL, true }, /* console */
	{ 'c', 5, 2, ACC_ALL, true }, /* ptmx */
	{ 'c', 136, -1, ACC_ALL, true }, /* pts */
};

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off,
			    int32_t imm)
{
	struct bpf_insn i = { .code = code,
			      .dst_reg = dst,
			      .src_reg = src,
			      .off = off,
			      .imm = imm };

	return i;
}

struct prog {
	struct bpf_insn *v;
	size_t n, cap;
	bool complete; /* a rule that matches everything was emitted */
};

static void emit(struct prog *p, struct bpf_insn i)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->v = ar_xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n++] = i;
}

static int parse_access(const char *s, unsigned *out, struct ar_error *err)
{
	unsigned a = 0;

	if (!s || !*s) {
		*out = ACC_ALL;
		return 0;
	}
	for (; *s; s++) {
		if (*s == 'r')
			a |= BPF_DEVCG_ACC_READ;
		else if (*s == 'w')
			a |= BPF_DEVCG_ACC_WRITE;
		else if (*s == 'm')
			a |= BPF_DEVCG_ACC_MKNOD;
		else
			return ar_error_set_plain(
				err, EINVAL,
				"access `%c`: expected a combination of r, w and m",
				*s);
	}
	*out = a;
	return 0;
}

static int check_number(int64_t v, const char *what, struct ar_error *err)
{
	if (v < -1 || v > INT32_MAX)
		return ar_error_set_plain(err, EINVAL,
					  "%s %lld is out of range", what,
					  (long long)v);
	return 0;
}

/* linux.devices[i] -> an allow rule ('u' is 'c'; 'p' left to the caller) */
static int device_rule(const struct oci_device *dev, struct dev_rule *d,
		       struct ar_error *err)
{
	*d = (struct dev_rule){ .type = dev->type == 'u' ? 'c' : dev->type,
				.major = dev->major,
				.minor = dev->minor,
				.access = ACC_ALL,
				.allow = true };
	if (d->type == 'p')
		return 0;
	if (d->type != 'c' && d->type != 'b')
		return ar_error_set_plain(err, EINVAL,
					  "type `%c` is not c, b, u or p",
					  dev->type);
	if (check_number(d->major, "major", err) < 0 ||
	    check_number(d->minor, "minor", err) < 0)
		return -1;
	return 0;
}

static int cgroup_rule(const struct oci_device_cgroup *c, struct dev_rule *d,
		       struct ar_error *err)
{
	*d = (struct dev_rule){ .type = 'a',
				.major = c->major.set ? c->major.v : -1,
				.minor = c->minor.set ? c->minor.v : -1,
				.allow = c->allow };
	if (c->type && *c->type) {
		if (strlen(c->type) != 1 || !strchr("acb", c->type[0]))
			return ar_error_set_plain(err, EINVAL,
						  "type `%s` is not a, c or b",
						  c->type);
		d->type = c->type[0];
	}
	if (parse_access(c->access, &d->access, err) < 0 ||
	    check_number(d->major, "major", err) < 0 ||
	    check_number(d->minor, "minor", err) < 0)
		return -1;
	return 0;
}

/* One rule: jump over its accept block unless it matches. Registers: r2
 * type, r3 access, r4 major, r5 minor (set by the prologue). */
static void emit_rule(struct prog *p, const struct dev_rule *r)
{
	bool has_type = r->type != 'a';
	bool has_access = (r->access & ACC_ALL) != ACC_ALL;
	bool has_major = r->major >= 0, has_minor = r->minor >= 0;
	/* instructions up to and including the two of the accept block */
	int left = (has_type ? 1 : 0) + (has_access ? 3 : 0) +
		   (has_major ? 1 : 0) + (has_minor ? 1 : 0) + 2;

	if (p->complete)
		return; /* unreachable: the verifier refuses dead code */
	if (has_type) {
		left--;
		emit(p, insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0,
			     (int16_t)left,
			     r->type == 'b' ? BPF_DEVCG_DEV_BLOCK :
					      BPF_DEVCG_DEV_CHAR));
	}
	if (has_access) {
		emit(p, insn(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_3, 0,
			     0));
		emit(p, insn(BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0,
			     (int32_t)r->access));
		left -= 3;
		if (r->allow) /* (access & rule) != access: not all granted */
			emit(p, insn(BPF_JMP | BPF_JNE | BPF_X, BPF_REG_1,
				     BPF_REG_3, (int16_t)left, 0));
		else /* (access & rule) == 0: nothing of it denied */
			emit(p, insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_1, 0,
				     (int16_t)left, 0));
	}
	if (has_major) {
		left--;
		emit(p, insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0,
			     (int16_t)left, (int32_t)r->major));
	}
	if (has_minor) {
		left--;
		emit(p, insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0,
			     (int16_t)left, (int32_t)r->minor));
	}
	emit(p, insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0,
		     r->allow ? 1 : 0));
	emit(p, insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	if (!has_type && !has_access && !has_major && !has_minor)
		p->complete = true;
}

int ar_cgroup_devices_program(const struct oci_resources *r,
			      const struct oci_device *devs, size_t n_devs,
			      struct bpf_insn **out, size_t *n_out,
			      struct ar_error *err)
{
	struct prog p = { 0 };

	*out = NULL;
	*n_out = 0;
	/* prologue: r2 = type, r3 = access, r4 = major, r5 = minor */
	emit(&p, insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, 0, 0));
	emit(&p, insn(BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xFFFF));
	emit(&p, insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_1, 0, 0));
	emit(&p, insn(BPF_ALU | BPF_RSH | BPF_K, BPF_REG_3, 0, 0, 16));
	emit(&p, insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_4, BPF_REG_1, 4, 0));
	emit(&p, insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_5, BPF_REG_1, 8, 0));

	for (size_t i = 0; i < AR_ARRAY_SIZE(always_allowed); i++)
		emit_rule(&p, &always_allowed[i]);
	for (size_t i = 0; i < n_devs; i++) {
		struct dev_rule d;

		if (device_rule(&devs[i], &d, err) < 0) {
			free(p.v);
			return ar_error_wrap(err, "linux.devices[%zu]", i);
		}
		if (d.type != 'p') /* a fifo is not a device */
			emit_rule(&p, &d);
	}
	for (size_t k = r ? r->n_devices : 0; k-- > 0;) {
		struct dev_rule d;

		if (cgroup_rule(&r->devices[k], &d, err) < 0) {
			free(p.v);
			return ar_error_wrap(err,
					     "linux.resources.devices[%zu]", k);
		}
		emit_rule(&p, &d);
	}
	if (!p.complete) {
		emit(&p, insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0));
		emit(&p, insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	}
	*out = p.v;
	*n_out = p.n;
	return 0;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

int ar_cgroup_devices_apply(int dirfd, const struct oci_resources *r,
			    const struct oci_device *devs, size_t n_devs,
			    struct ar_error *err)
{
	_cleanup_free_ struct bpf_insn *prog = NULL;
	_cleanup_close_ int pfd = -1;
	char log[512] = "";
	union bpf_attr a;
	size_t n;

	if (ar_cgroup_devices_program(r, devs, n_devs, &prog, &n, err) < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t) "GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	pfd = (int)sys_bpf(BPF_PROG_LOAD, &a); /* O_CLOEXEC by the kernel */
	if (pfd < 0 && errno == ENOSPC) {
		/* the verifier log did not fit: load again without it */
		a.log_buf = 0;
		a.log_size = 0;
		a.log_level = 0;
		pfd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	}
	if (pfd < 0)
		return ar_error_set(
			err, errno,
			"linux.resources.devices: load the eBPF device program (%zu instructions)%s%s",
			n, log[0] ? ": " : "", log);
	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)dirfd;
	a.attach_bpf_fd = (uint32_t)pfd;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI;
	if (sys_bpf(BPF_PROG_ATTACH, &a) < 0)
		return ar_error_set(
			err, errno,
			"linux.resources.devices: attach the eBPF device program to the cgroup");
	ar_debug("device program attached (%zu instructions)", n);
	return 0;
}
