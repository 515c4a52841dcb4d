/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The compact seccomp BPF generator (runtime/lib/seccomp_bpf.c) against
 * libseccomp's export: both programs of a profile run in a classic-BPF
 * interpreter for every architecture, syscall numbers 0..1023, the x32
 * range and a few huge/negative numbers, with argument values drawn from
 * the profile's constants (and +-1, upper-32-bit garbage, 0, all-ones,
 * random values); every return value must be the same. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libseccomp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "oci_config.h"
#include "profile.h"
#include "seccomp.h"
#include "seccomp_internal.h"
#include "unit.h"
#include "unit_json.h"
#include "utils.h"

/* ---- a classic-BPF interpreter (the seccomp subset) ---- */

/* 0 and *ret set, or -1 for an invalid program; *touched: an argument
 * word was loaded. */
static int run_bpf(const struct sock_filter *p, size_t n,
		   const struct seccomp_data *d, uint32_t *ret, bool *touched)
{
	uint32_t a = 0, x = 0;
	size_t pc = 0;

	(void)x;
	for (size_t steps = 0; steps < 100000; steps++) {
		const struct sock_filter *i;
		uint32_t k;
		bool c;

		if (pc >= n)
			return -1;
		i = &p[pc];
		k = i->k;
		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k > sizeof(*d) - 4 || k % 4)
				return -1;
			memcpy(&a, (const char *)d + k, 4);
			if (k >= 16 && touched)
				*touched = true;
			pc++;
			continue;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= k;
			pc++;
			continue;
		case BPF_ALU | BPF_OR | BPF_K:
			a |= k;
			pc++;
			continue;
		case BPF_RET | BPF_K:
			*ret = k;
			return 0;
		case BPF_JMP | BPF_JA:
			pc += 1 + (size_t)k;
			continue;
		case BPF_JMP | BPF_JEQ | BPF_K:
			c = a == k;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			c = a > k;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			c = a >= k;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			c = (a & k) != 0;
			break;
		default:
			printf("# unknown BPF opcode %#x at %zu\n", i->code,
			       pc);
			return -1;
		}
		pc += 1 + (c ? i->jt : i->jf);
	}
	return -1;
}

/* ---- profiles ---- */

static struct oci_config *parse_profile(const char *json_profile,
					struct ar_error *err)
{
	_cleanup_free_ char *json = NULL;
	struct oci_config *cfg = NULL;

	json = ar_xasprintf(
		"{\"ociVersion\":\"1.2.0\",\"linux\":{\"seccomp\":%s}}",
		json_profile);
	if (oci_config_parse(json, strlen(json), "test", &cfg, err) < 0)
		return NULL;
	return cfg;
}

/* ---- argument values ---- */

struct values {
	uint64_t v[4096];
	size_t n;
};

static void val_add(struct values *vs, uint64_t v)
{
	for (size_t i = 0; i < vs->n; i++)
		if (vs->v[i] == v)
			return;
	if (vs->n < AR_ARRAY_SIZE(vs->v))
		vs->v[vs->n++] = v;
}

static void val_add_near(struct values *vs, uint64_t c)
{
	val_add(vs, c);
	val_add(vs, c + 1);
	val_add(vs, c - 1);
	val_add(vs, c | UINT64_C(0xdead000100000000));
	val_add(vs, (uint32_t)c);
	val_add(vs, c ^ UINT64_C(0x100000000));
	val_add(vs, ~c);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	/* xorshift64*, fixed seed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static void profile_values(const struct oci_seccomp *sc, struct values *vs)
{
	vs->n = 0;
	val_add_near(vs, 0);
	val_add_near(vs, UINT64_MAX);
	val_add_near(vs, UINT32_MAX);
	val_add_near(vs, UINT64_C(0x80000000));
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		for (size_t j = 0; j < sc->syscalls[i].n_args; j++) {
			const struct oci_seccomp_arg *a =
				&sc->syscalls[i].args[j];

			val_add_near(vs, a->value);
			val_add_near(vs, a->value_two);
			/* MASKED_EQ: datum with other bits on/off */
			val_add(vs, a->value_two | ~a->value);
			val_add(vs, a->value_two & a->value);
		}
	}
	/* socketcall/ipc call numbers */
	for (uint64_t c = 0; c <= 25; c++)
		val_add(vs, c);
	for (int i = 0; i < 16; i++)
		val_add(vs, rnd());
}

/* ---- the comparison ---- */

static const uint32_t test_archs[] = {
	AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64,
	AUDIT_ARCH_ARM,	   0x12345678,
};

static size_t n_diffs;

static bool same(const struct sock_filter *a, size_t na,
		 const struct sock_filter *b, size_t nb,
		 const struct seccomp_data *d, bool *touched)
{
	uint32_t ra = 0, rb = 0;
	int ea = run_bpf(a, na, d, &ra, touched);
	int eb = run_bpf(b, nb, d, &rb, touched);

	if (ea == 0 && eb == 0 && ra == rb)
		return true;
	if (n_diffs++ < 10 || (getenv("SBPF_VERBOSE") && n_diffs < 2000))
		printf("# differ: arch %#x nr %#x args %#llx %#llx %#llx %#llx %#llx %#llx: libseccomp %d/%#x, compact %d/%#x\n",
		       d->arch, (uint32_t)d->nr, (unsigned long long)d->args[0],
		       (unsigned long long)d->args[1],
		       (unsigned long long)d->args[2],
		       (unsigned long long)d->args[3],
		       (unsigned long long)d->args[4],
		       (unsigned long long)d->args[5], ea, ra, eb, rb);
	return false;
}

static bool compare_nr(const struct sock_filter *a, size_t na,
		       const struct sock_filter *b, size_t nb, uint32_t arch,
		       uint32_t nr, const struct values *vs)
{
	struct seccomp_data d = { .nr = (int)nr, .arch = arch };
	bool touched = false, ok = true;

	ok &= same(a, na, b, nb, &d, &touched);
	if (!touched)
		return ok; /* no argument conditions for this number */
	for (size_t i = 0; i < vs->n; i++) {
		for (int k = 0; k < 6; k++)
			d.args[k] = vs->v[i];
		ok &= same(a, na, b, nb, &d, NULL);
		for (int k = 0; k < 6; k++) {
			for (int m = 0; m < 6; m++)
				d.args[m] = vs->v[rnd() % vs->n];
			d.args[k] = vs->v[i];
			ok &= same(a, na, b, nb, &d, NULL);
		}
	}
	for (int i = 0; i < 64; i++) {
		for (int m = 0; m < 6; m++)
			d.args[m] = rnd();
		ok &= same(a, na, b, nb, &d, NULL);
	}
	return ok;
}

static bool compare_programs(const struct sock_filter *a, size_t na,
			     const struct sock_filter *b, size_t nb,
			     const struct values *vs)
{
	static const uint32_t extra[] = {
		0x3fffffff,	0x7fffffff,	    0x80000000,
		0xfffffffe,	0xffffffff,	    (uint32_t)-101,
		(uint32_t)-109, (uint32_t)-201,	    (uint32_t)-10004,
		0x000f0000,	0x000f0001,	    0x000f0002,
		0x000f0003,	0x000f0004,	    0x000f0005,
		0x000f0006,	0x40000000 + 0x3ff, 0x40100000,
		0xc0000000,
	};
	bool ok = true;

	for (size_t ai = 0; ai < AR_ARRAY_SIZE(test_archs); ai++) {
		uint32_t arch = test_archs[ai];

		for (uint32_t nr = 0; nr < 1024; nr++) {
			ok &= compare_nr(a, na, b, nb, arch, nr, vs);
			ok &= compare_nr(a, na, b, nb, arch, 0x40000000 | nr,
					 vs);
		}
		for (size_t i = 0; i < AR_ARRAY_SIZE(extra); i++)
			ok &= compare_nr(a, na, b, nb, arch, extra[i], vs);
	}
	return ok;
}

struct outcome {
	size_t lib_insns, compact_insns;
	bool compact; /* the generator expressed the profile */
};

/* Compile sc both ways for the given native architecture and x32, and
 * compare.  Returns false on a difference. */
static bool differential(const struct oci_seccomp *sc, uint32_t native, int x32,
			 struct outcome *out)
{
	struct ar_seccomp_compile_opts lo = { .native = native,
					      .x32 = x32,
					      .libseccomp_only = true };
	struct ar_seccomp_compile_opts co = { .native = native, .x32 = x32 };
	_cleanup_seccomp_filter_ struct ar_seccomp_filter *fl = NULL,
							  *fc = NULL;
	struct ar_error e1 = AR_ERROR_INIT, e2 = AR_ERROR_INIT;
	int r1, r2;
	struct values *vs = ar_xcalloc(1, sizeof(*vs));
	bool ok;

	memset(out, 0, sizeof(*out));
	r1 = ar_seccomp_compile_opts(sc, &lo, &fl, &e1);
	r2 = ar_seccomp_compile_opts(sc, &co, &fc, &e2);
	if (r1 < 0 || r2 < 0) {
		free(vs);
		if (r1 != r2)
			printf("# compile: libseccomp %d (%s), compact %d (%s)\n",
			       r1, e1.msg, r2, e2.msg);
		return r1 == r2;
	}
	out->lib_insns = fl->bpf_len / sizeof(struct sock_filter);
	out->compact_insns = fc->bpf_len / sizeof(struct sock_filter);
	out->compact = fc->compact;
	profile_values(sc, vs);
	ok = compare_programs(fl->bpf, out->lib_insns, fc->bpf,
			      out->compact_insns, vs);
	free(vs);
	return ok;
}

/* All four (native, x32) combinations of interest. */
static bool differential_all(const char *what, const struct oci_seccomp *sc,
			     bool expect_compact)
{
	static const struct {
		uint32_t native;
		int x32;
	} cases[] = {
		{ SCMP_ARCH_X86_64, 1 },
		{ SCMP_ARCH_X86_64, 0 },
		{ SCMP_ARCH_AARCH64, 0 },
	};
	bool ok = true;

	for (size_t i = 0; i < AR_ARRAY_SIZE(cases); i++) {
		struct outcome o;
		bool r = differential(sc, cases[i].native, cases[i].x32, &o);

		printf("# %s (native %#x, x32 %d): libseccomp %zu, compact %zu instructions%s%s\n",
		       what, cases[i].native, cases[i].x32, o.lib_insns,
		       o.compact_insns, o.compact ? "" : " (fallback)",
		       r ? "" : " DIFFER");
		ok &= r;
		/* the shapes left to libseccomp are x86 ones */
		if (o.lib_insns && cases[i].native == SCMP_ARCH_X86_64 &&
		    o.compact != expect_compact) {
			printf("# %s: expected the %s program\n", what,
			       expect_compact ? "compact" : "libseccomp");
			ok = false;
		}
	}
	return ok;
}

static bool differential_json(const char *what, const char *profile,
			      bool expect_compact)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_config_ struct oci_config *cfg = parse_profile(profile, &err);

	if (!cfg || !cfg->linux_.seccomp) {
		printf("# %s: %s\n", what, err.msg);
		return false;
	}
	return differential_all(what, cfg->linux_.seccomp, expect_compact);
}

UNIT_TEST(agent_profile_equivalent)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_arena a = { 0 };
	struct oci_seccomp *sc = NULL;
	struct outcome o;

	CHECK_INT_EQ(oci_seccomp_default(&a, &sc, &err), 0);
	if (sc) {
		CHECK(differential_all("agent profile", sc, true));
		/* much smaller than libseccomp's */
		CHECK(differential(sc, SCMP_ARCH_X86_64, 1, &o));
		CHECK(o.compact && o.compact_insns * 2 < o.lib_insns);
	}
	oci_arena_free(&a);
}

#define ARCHS_ALL                                                              \
	"\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\","           \
	"\"SCMP_ARCH_X32\",\"SCMP_ARCH_AARCH64\",\"SCMP_ARCH_ARM\"]"

UNIT_TEST(edge_actions_default_allow)
{
	CHECK(differential_json(
		"default allow",
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\"," ARCHS_ALL
		",\"syscalls\":["
		"{\"names\":[\"mount\",\"umount2\",\"no_such_syscall\"],\"action\":\"SCMP_ACT_ERRNO\"},"
		"{\"names\":[\"keyctl\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38},"
		"{\"names\":[\"bpf\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"},"
		"{\"names\":[\"ptrace\"],\"action\":\"SCMP_ACT_KILL\"},"
		"{\"names\":[\"kexec_load\"],\"action\":\"SCMP_ACT_KILL_THREAD\"},"
		"{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_TRAP\"},"
		"{\"names\":[\"getpid\",\"gettid\"],\"action\":\"SCMP_ACT_LOG\"},"
		"{\"names\":[\"uname\"],\"action\":\"SCMP_ACT_TRACE\",\"errnoRet\":7},"
		"{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\"},"
		"{\"names\":[\"socket\",\"accept\",\"send\",\"semop\",\"shmat\",\"msgrcv\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13},"
		"{\"names\":[\"write\"],\"action\":\"SCMP_ACT_NOTIFY\"}"
		"]}",
		true));
}

UNIT_TEST(edge_operators)
{
	CHECK(differential_json(
		"operators",
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\"," ARCHS_ALL
		",\"syscalls\":["
		"{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":4294967296,\"op\":\"SCMP_CMP_GT\"}]},"
		"{\"names\":[\"write\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":4294967301,\"op\":\"SCMP_CMP_GE\"}]},"
		"{\"names\":[\"close\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":2,\"value\":4294967295,\"op\":\"SCMP_CMP_LT\"}]},"
		"{\"names\":[\"fstat\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":3,\"value\":12884901893,\"op\":\"SCMP_CMP_LE\"}]},"
		"{\"names\":[\"lseek\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":4,\"value\":77,\"op\":\"SCMP_CMP_LT\"}]},"
		"{\"names\":[\"mmap\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":5,\"value\":5,\"op\":\"SCMP_CMP_GT\"}]},"
		"{\"names\":[\"mprotect\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":18446744073709551615,\"op\":\"SCMP_CMP_GE\"}]},"
		"{\"names\":[\"munmap\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":0,\"op\":\"SCMP_CMP_LE\"}]},"
		"{\"names\":[\"brk\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":77309411328,\"op\":\"SCMP_CMP_EQ\"}]},"
		"{\"names\":[\"pread64\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":42,\"op\":\"SCMP_CMP_NE\"}]},"
		"{\"names\":[\"pwrite64\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":17179869226,\"op\":\"SCMP_CMP_NE\"}]},"
		"{\"names\":[\"readv\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":2,\"value\":1,\"valueTwo\":3,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"writev\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":2,\"value\":0,\"valueTwo\":0,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"access\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":2,\"value\":1095216660480,\"valueTwo\":77309411328,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"pipe\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":4294967296,\"valueTwo\":4294967296,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"select\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":18446744073709551615,\"valueTwo\":5,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"sched_yield\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":240,\"valueTwo\":48,\"op\":\"SCMP_CMP_MASKED_EQ\"},{\"index\":1,\"value\":9,\"op\":\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":9,\"op\":\"SCMP_CMP_NE\"}]},"
		"{\"names\":[\"mremap\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":3,\"op\":\"SCMP_CMP_GT\"},{\"index\":0,\"value\":9,\"op\":\"SCMP_CMP_LT\"}]},"
		"{\"names\":[\"msync\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":5,\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]},"
		"{\"names\":[\"msync\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":5,\"args\":[{\"index\":1,\"value\":2,\"op\":\"SCMP_CMP_EQ\"},{\"index\":0,\"value\":7,\"op\":\"SCMP_CMP_GE\"}]},"
		"{\"names\":[\"mincore\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]},"
		"{\"names\":[\"mincore\"],\"action\":\"SCMP_ACT_ALLOW\"},"
		"{\"names\":[\"madvise\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,\"valueTwo\":2,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		/* one-bit rules merged into one JSET per word */
		"{\"names\":[\"getcwd\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":4294967296,\"valueTwo\":4294967296,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"getcwd\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":2,\"valueTwo\":2,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"getcwd\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":8589934592,\"valueTwo\":8589934592,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"getcwd\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":2,\"value\":4,\"valueTwo\":4,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"getcwd\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":16,\"valueTwo\":0,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"getcwd\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":4294967295,\"valueTwo\":7,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
		"{\"names\":[\"getcwd\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":32,\"valueTwo\":32,\"op\":\"SCMP_CMP_MASKED_EQ\"}]}"
		"]}",
		true));
}

/* Shapes left to libseccomp: different actions on one syscall, and
 * argument conditions on an x86 socket call. */
UNIT_TEST(edge_fallbacks)
{
	CHECK(differential_json(
		"different actions",
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\"," ARCHS_ALL
		",\"syscalls\":["
		"{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]},"
		"{\"names\":[\"read\"],\"action\":\"SCMP_ACT_KILL\",\"args\":[{\"index\":1,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}"
		"]}",
		false));
	CHECK(differential_json(
		"socket with arguments",
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\"," ARCHS_ALL
		",\"syscalls\":["
		"{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}"
		"]}",
		false));
}

/* Long programs: far jumps (trampolines) in the search tree and in a
 * long condition chain. */
UNIT_TEST(edge_far_jumps)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_arena a = { 0 };
	struct oci_seccomp *sc = NULL;
	_cleanup_free_ char *json = NULL;
	size_t len = 0, cap = 1 << 20, k = 0;
	static const char *const acts[] = { "SCMP_ACT_ALLOW", "SCMP_ACT_TRAP",
					    "SCMP_ACT_LOG" };

	CHECK_INT_EQ(oci_seccomp_default(&a, &sc, &err), 0);
	if (!sc)
		return;
	json = ar_xmalloc(cap);
	len += (size_t)snprintf(
		json + len, cap - len,
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\"," ARCHS_ALL
		",\"syscalls\":[");
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		const struct oci_seccomp_syscall *s = &sc->syscalls[i];

		if (s->n_args)
			continue;
		for (size_t j = 0; j < s->names.n; j++) {
			const char *n = s->names.v[j];
			int x86 = seccomp_syscall_resolve_name_arch(
				SCMP_ARCH_X86, n);

			if (strcmp(n, "ioctl") == 0)
				continue;
			/* one action per number: by the x86_64 number, and
			 * ALLOW for all that share x86's socketcall/ipc */
			k = (size_t)seccomp_syscall_resolve_name(n) % 3;
			if ((x86 <= -100 && x86 > -300) || x86 == 102 ||
			    x86 == 117)
				k = 0;
			len += (size_t)snprintf(
				json + len, cap - len,
				"{\"names\":[\"%s\"],\"action\":\"%s\"},", n,
				acts[k]);
		}
	}
	for (int v = 0; v < 150; v++)
		len += (size_t)snprintf(
			json + len, cap - len,
			"{\"names\":[\"ioctl\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":1,\"value\":%llu,\"op\":\"SCMP_CMP_EQ\"}]},",
			(unsigned long long)v * 0x100000001ULL);
	snprintf(json + len - 1, cap - len + 1, "]}");
	oci_arena_free(&a);
	CHECK(differential_json("far jumps", json, true));
}

/* Podman's profile (containers/common format), converted the way
 * containers/common does for amd64: includes.arches/caps, excludes. */
static bool any_in(yajl_val arr, const char *const *caps)
{
	for (size_t i = 0; caps[i]; i++)
		if (unit_json_array_has(arr, caps[i]))
			return true;
	return false;
}

static bool all_in(yajl_val arr, const char *const *caps)
{
	if (!arr || !YAJL_IS_ARRAY(arr))
		return true;
	for (size_t i = 0; i < arr->u.array.len; i++) {
		const char *v = YAJL_GET_STRING(arr->u.array.values[i]);
		bool found = false;

		for (size_t j = 0; caps[j] && v; j++)
			found |= strcmp(caps[j], v) == 0;
		if (!found)
			return false;
	}
	return true;
}

static char *gen_json(yajl_val v);

static void append(char **s, const char *add)
{
	char *n = ar_xasprintf("%s%s", *s ? *s : "", add);

	free(*s);
	*s = n;
}

static char *gen_json(yajl_val v)
{
	char *s = NULL;

	if (YAJL_IS_STRING(v)) {
		s = ar_xasprintf("\"%s\"", YAJL_GET_STRING(v));
	} else if (YAJL_IS_NUMBER(v)) {
		s = ar_xasprintf("%s", YAJL_GET_NUMBER(v));
	} else if (YAJL_IS_ARRAY(v)) {
		append(&s, "[");
		for (size_t i = 0; i < v->u.array.len; i++) {
			_cleanup_free_ char *e = gen_json(v->u.array.values[i]);

			if (i)
				append(&s, ",");
			append(&s, e);
		}
		append(&s, "]");
	} else if (YAJL_IS_OBJECT(v)) {
		append(&s, "{");
		for (size_t i = 0; i < v->u.object.len; i++) {
			_cleanup_free_ char *e =
				gen_json(v->u.object.values[i]);
			_cleanup_free_ char *k = ar_xasprintf(
				"%s\"%s\":", i ? "," : "", v->u.object.keys[i]);

			append(&s, k);
			append(&s, e);
		}
		append(&s, "}");
	} else if (YAJL_IS_TRUE(v)) {
		s = ar_xstrdup("true");
	} else if (YAJL_IS_FALSE(v)) {
		s = ar_xstrdup("false");
	} else {
		s = ar_xstrdup("null");
	}
	return s;
}

static char *podman_to_oci(yajl_val root, const char *const *caps)
{
	static const char *dflt[] = { "defaultAction", NULL };
	static const char *derr[] = { "defaultErrnoRet", NULL };
	static const char *calls[] = { "syscalls", NULL };
	static const char *inc_arch[] = { "includes", "arches", NULL };
	static const char *inc_caps[] = { "includes", "caps", NULL };
	static const char *exc_arch[] = { "excludes", "arches", NULL };
	static const char *exc_caps[] = { "excludes", "caps", NULL };
	static const char *const keep[] = { "names", "action", "errnoRet",
					    "args", NULL };
	yajl_val sys = yajl_tree_get(root, calls, yajl_t_array);
	yajl_val d = yajl_tree_get(root, dflt, yajl_t_string);
	yajl_val de = yajl_tree_get(root, derr, yajl_t_number);
	char *s = NULL;
	bool first = true;

	s = ar_xasprintf("{\"defaultAction\":\"%s\"%s%s," ARCHS_ALL
			 ",\"syscalls\":[",
			 YAJL_GET_STRING(d), de ? ",\"defaultErrnoRet\":" : "",
			 de ? YAJL_GET_NUMBER(de) : "");
	for (size_t i = 0; sys && i < sys->u.array.len; i++) {
		yajl_val c = sys->u.array.values[i];
		yajl_val ia = yajl_tree_get(c, inc_arch, yajl_t_array);
		yajl_val ic = yajl_tree_get(c, inc_caps, yajl_t_array);
		yajl_val ea = yajl_tree_get(c, exc_arch, yajl_t_array);
		yajl_val ec = yajl_tree_get(c, exc_caps, yajl_t_array);

		if (ia && ia->u.array.len && !unit_json_array_has(ia, "amd64"))
			continue;
		if (ic && ic->u.array.len && !all_in(ic, caps))
			continue;
		if (ea && unit_json_array_has(ea, "amd64"))
			continue;
		if (ec && any_in(ec, caps))
			continue;
		append(&s, first ? "{" : ",{");
		first = false;
		for (size_t j = 0, n = 0; j < c->u.object.len; j++) {
			const char *k = c->u.object.keys[j];
			bool want = false;
			_cleanup_free_ char *e = NULL, *kv = NULL;

			for (size_t m = 0; keep[m]; m++)
				want |= strcmp(keep[m], k) == 0;
			if (!want || YAJL_IS_NULL(c->u.object.values[j]))
				continue;
			e = gen_json(c->u.object.values[j]);
			kv = ar_xasprintf("%s\"%s\":%s", n++ ? "," : "", k, e);
			append(&s, kv);
		}
		append(&s, "}");
	}
	append(&s, "]}");
	return s;
}

UNIT_TEST(podman_profile_equivalent)
{
	static const char *const default_caps[] = {
		"CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FOWNER",
		"CAP_FSETID",  "CAP_KILL",	   "CAP_NET_BIND_SERVICE",
		"CAP_SETFCAP", "CAP_SETGID",	   "CAP_SETPCAP",
		"CAP_SETUID",  "CAP_SYS_CHROOT",   NULL,
	};
	static const char *const all_caps[] = {
		"CAP_AUDIT_WRITE",
		"CAP_DAC_READ_SEARCH",
		"CAP_SYS_ADMIN",
		"CAP_SYS_CHROOT",
		"CAP_SYS_MODULE",
		"CAP_SYS_PACCT",
		"CAP_SYS_PTRACE",
		"CAP_SYS_RAWIO",
		"CAP_SYS_TIME",
		"CAP_SYS_TTY_CONFIG",
		"CAP_SYSLOG",
		"CAP_SYS_BOOT",
		"CAP_SYS_NICE",
		"CAP_SYS_RESOURCE",
		"CAP_BPF",
		"CAP_PERFMON",
		NULL,
	};
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *text = NULL, *j1 = NULL, *j2 = NULL;
	char ebuf[256];
	yajl_val root;

	if (ar_read_file_at(AT_FDCWD, "/usr/share/containers/seccomp.json",
			    4 << 20, &text, NULL, &err) < 0)
		UNIT_SKIP("no /usr/share/containers/seccomp.json");
	root = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	CHECK(root != NULL);
	if (!root)
		return;
	j1 = podman_to_oci(root, default_caps);
	j2 = podman_to_oci(root, all_caps);
	yajl_tree_free(root);
	/* Without CAP_AUDIT_WRITE, socket has ERRNO and ALLOW rules with
	 * conditions: libseccomp's program. */
	CHECK(differential_json("podman profile, default caps", j1, false));
	CHECK(differential_json("podman profile, all caps", j2, true));
}

UNIT_TEST(x32_probe)
{
	/* This machine's answer; under seccomp it must be "runs". */
	bool r = ar_seccomp_x32_runs();

	printf("# x32 syscalls %s\n", r ? "run (or not probed)" : "absent");
	CHECK(ar_seccomp_x32_runs() == r);
}

UNIT_MAIN()
