/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The eBPF device program of cgroup_devices.c, run by a small interpreter
 * of the instructions it emits: which device accesses it allows. */
#include <linux/bpf.h>
#include <stdint.h>

#include "cgroup.h"
#include "oci_config.h"
#include "unit.h"
#include "utils.h"

#define R BPF_DEVCG_ACC_READ
#define W BPF_DEVCG_ACC_WRITE
#define M BPF_DEVCG_ACC_MKNOD
#define CHR BPF_DEVCG_DEV_CHAR
#define BLK BPF_DEVCG_DEV_BLOCK

/* Run prog on one access; -1 when it uses an instruction the interpreter
 * does not know, jumps out of range or runs off the end. */
static int run(const struct bpf_insn *p, size_t n, unsigned type,
	       unsigned access, unsigned major, unsigned minor)
{
	uint32_t ctx[3] = { (access << 16) | type, major, minor };
	uint64_t reg[11] = { 0 };

	for (size_t pc = 0; pc < n; pc++) {
		const struct bpf_insn *i = &p[pc];
		uint64_t src = (BPF_SRC(i->code) == BPF_X) ?
				       reg[i->src_reg] :
				       (uint64_t)(int64_t)i->imm;

		switch (i->code) {
		case BPF_LDX | BPF_MEM | BPF_W:
			if (i->src_reg != BPF_REG_1 || i->off < 0 ||
			    i->off > 8 || i->off % 4)
				return -1;
			reg[i->dst_reg] = ctx[i->off / 4];
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			reg[i->dst_reg] = (uint32_t)(reg[i->dst_reg] & src);
			break;
		case BPF_ALU | BPF_RSH | BPF_K:
			reg[i->dst_reg] = (uint32_t)reg[i->dst_reg] >> i->imm;
			break;
		case BPF_ALU | BPF_MOV | BPF_X:
			reg[i->dst_reg] = (uint32_t)src;
			break;
		case BPF_ALU64 | BPF_MOV | BPF_K:
			reg[i->dst_reg] = src;
			break;
		case BPF_JMP | BPF_JNE | BPF_K:
		case BPF_JMP | BPF_JNE | BPF_X:
		case BPF_JMP | BPF_JEQ | BPF_K:
			if ((BPF_OP(i->code) == BPF_JNE) ==
			    (reg[i->dst_reg] != src)) {
				if (i->off < 0 || pc + (size_t)i->off >= n)
					return -1;
				pc += (size_t)i->off;
			}
			break;
		case BPF_JMP | BPF_EXIT:
			return (int)reg[BPF_REG_0];
		default:
			return -1;
		}
	}
	return -1;
}

struct fixture {
	struct oci_resources r;
	struct oci_device_cgroup rules[8];
	struct oci_device devs[4];
	size_t n_devs;
	struct bpf_insn *prog;
	size_t n;
};

static void rule(struct fixture *f, bool allow, const char *type, int64_t major,
		 int64_t minor, const char *access)
{
	struct oci_device_cgroup *c = &f->rules[f->r.n_devices++];

	c->allow = allow;
	c->type = (char *)type;
	c->major.set = major != -2;
	c->major.v = major;
	c->minor.set = minor != -2;
	c->minor.v = minor;
	c->access = (char *)access;
	f->r.devices = f->rules;
}

static bool build(struct fixture *f)
{
	struct ar_error err = AR_ERROR_INIT;

	free(f->prog);
	f->prog = NULL;
	if (ar_cgroup_devices_program(&f->r, f->devs, f->n_devs, &f->prog,
				      &f->n, &err) < 0) {
		printf("# %s\n", err.msg);
		return false;
	}
	return true;
}

#define ALLOWS(f, t, a, ma, mi) (run((f)->prog, (f)->n, t, a, ma, mi) == 1)
#define DENIES(f, t, a, ma, mi) (run((f)->prog, (f)->n, t, a, ma, mi) == 0)

UNIT_TEST(deny_all_keeps_the_defaults)
{
	struct fixture f = { 0 };

	/* `agentrun spec` / `runc spec`: deny everything */
	rule(&f, false, NULL, -2, -2, "rwm");
	CHECK(build(&f));
	CHECK(ALLOWS(&f, CHR, R | W, 1, 3)); /* /dev/null */
	CHECK(ALLOWS(&f, CHR, R, 1, 9)); /* urandom */
	CHECK(ALLOWS(&f, CHR, R | W, 136, 7)); /* a pts */
	CHECK(ALLOWS(&f, CHR, R | W, 5, 2)); /* ptmx */
	CHECK(ALLOWS(&f, CHR, M, 8, 0)); /* mknod alone */
	CHECK(ALLOWS(&f, BLK, M, 8, 0));
	CHECK(DENIES(&f, CHR, R | W, 10, 229)); /* /dev/fuse */
	CHECK(DENIES(&f, BLK, R, 8, 0)); /* /dev/sda */
	CHECK(DENIES(&f, CHR, R, 1, 1)); /* /dev/mem */
	CHECK(DENIES(&f, CHR, M | R, 8, 0)); /* mknod+read: not only m */
	free(f.prog);
}

UNIT_TEST(later_rules_win)
{
	struct fixture f = { 0 };

	rule(&f, false, "a", -2, -2, NULL);
	rule(&f, true, "c", 10, 229, "rw");
	CHECK(build(&f));
	CHECK(ALLOWS(&f, CHR, R | W, 10, 229));
	CHECK(ALLOWS(&f, CHR, R, 10, 229));
	CHECK(DENIES(&f, BLK, R, 10, 229)); /* type matters */
	CHECK(DENIES(&f, CHR, R, 10, 228)); /* minor matters */
	/* a later deny of the same device overrides the allow */
	rule(&f, false, "c", 10, -1, "w");
	CHECK(build(&f));
	CHECK(ALLOWS(&f, CHR, R, 10, 229));
	CHECK(DENIES(&f, CHR, W, 10, 229));
	CHECK(DENIES(&f, CHR, R | W, 10, 229));
	free(f.prog);
}

UNIT_TEST(allow_all_then_deny_one)
{
	struct fixture f = { 0 };

	rule(&f, true, "a", -1, -1, "rwm");
	rule(&f, false, "b", 8, -1, "rwm");
	CHECK(build(&f));
	CHECK(DENIES(&f, BLK, R, 8, 1));
	CHECK(ALLOWS(&f, BLK, R, 7, 1));
	CHECK(ALLOWS(&f, CHR, R | W, 10, 229));
	/* a full wildcard ends the program: nothing after it (the verifier
	 * refuses unreachable instructions) */
	CHECK(f.prog[f.n - 1].code == (BPF_JMP | BPF_EXIT));
	free(f.prog);
}

UNIT_TEST(linux_devices_are_allowed)
{
	struct fixture f = { 0 };

	rule(&f, false, NULL, -2, -2, "rwm");
	f.devs[0] = (struct oci_device){ .path = (char *)"/dev/fuse",
					 .type = 'c',
					 .major = 10,
					 .minor = 229 };
	f.devs[1] = (struct oci_device){ .path = (char *)"/dev/loop0",
					 .type = 'b',
					 .major = 7,
					 .minor = 0 };
	f.devs[2] =
		(struct oci_device){ .path = (char *)"/dev/fifo", .type = 'p' };
	f.n_devs = 3;
	CHECK(build(&f));
	CHECK(ALLOWS(&f, CHR, R | W, 10, 229));
	CHECK(ALLOWS(&f, BLK, R | W, 7, 0));
	CHECK(DENIES(&f, BLK, R, 7, 1));
	free(f.prog);
}

UNIT_TEST(bad_rules_are_errors)
{
	struct fixture f = { 0 };
	struct ar_error err = AR_ERROR_INIT;

	rule(&f, true, "x", 1, 3, "rw");
	CHECK(ar_cgroup_devices_program(&f.r, NULL, 0, &f.prog, &f.n, &err) <
	      0);
	CHECK_STR_CONTAINS(err.msg, "linux.resources.devices[0]");
	ar_error_clear(&err);
	f.rules[0].type = (char *)"c";
	f.rules[0].access = (char *)"rwx";
	CHECK(ar_cgroup_devices_program(&f.r, NULL, 0, &f.prog, &f.n, &err) <
	      0);
	CHECK_STR_CONTAINS(err.msg, "access `x`");
	ar_error_clear(&err);
	f.rules[0].access = (char *)"r";
	f.rules[0].major.v = (int64_t)1 << 40;
	CHECK(ar_cgroup_devices_program(&f.r, NULL, 0, &f.prog, &f.n, &err) <
	      0);
	CHECK_STR_CONTAINS(err.msg, "out of range");
}

UNIT_MAIN()
