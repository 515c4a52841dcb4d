/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A compact seccomp BPF program: per architecture a binary search over
 * syscall-number intervals (see seccomp_bpf.h). */
#include "config.h"

#include "seccomp_bpf.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "utils.h"

#define X32_BIT 0x40000000u
#define MAX_INSNS 4096 /* BPF_MAXINSNS */
#define MAX_ARCHS 8
#define JMAX 255 /* jt/jf are 8 bits */
#define NR_WORD 0 /* offsetof(struct seccomp_data, nr) */
#define ARCH_WORD 4 /* offsetof(struct seccomp_data, arch) */
#define ARG_WORD(i) ((int)(16 + 8 * (i))) /* low word, little endian */

/* x86 socketcall(2)/ipc(2): libseccomp resolves the socket and SysV IPC
 * calls to pseudo numbers -(100 + SYS_x) and -(200 + op) and allows them
 * both as socketcall/ipc with arg0 == SYS_x and as the direct syscall
 * (0: none). */
#define X86_NR_SOCKETCALL 102
#define X86_NR_IPC 117
static const int x86_sock_direct[21] = {
	[1] = 359,  [2] = 361,	[3] = 362,  [4] = 363,	[5] = 0,
	[6] = 367,  [7] = 368,	[8] = 360,  [9] = 0,	[10] = 0,
	[11] = 369, [12] = 371, [13] = 373, [14] = 366, [15] = 365,
	[16] = 370, [17] = 372, [18] = 364, [19] = 337, [20] = 345,
};
static const int x86_ipc_direct[25] = {
	[1] = -1,   [2] = 393,	[3] = 394,  [4] = -1,	[11] = 400, [12] = 401,
	[13] = 399, [14] = 402, [21] = 397, [22] = 398, [23] = 395, [24] = 396,
}; /* 0: not an ipc call; -1: no direct syscall */

struct rule {
	const char *name;
	uint32_t action;
	unsigned int n;
	struct scmp_arg_cmp c[6];
};

struct ar_sbpf {
	uint32_t def, badarch;
	uint32_t archs[MAX_ARCHS];
	size_t n_archs;
	struct rule *rules;
	size_t n_rules, cap_rules;
	const char *unsupported;
};

struct ar_sbpf *ar_sbpf_new(uint32_t default_action, uint32_t bad_arch_action)
{
	struct ar_sbpf *b = ar_xcalloc(1, sizeof(*b));

	b->def = default_action;
	b->badarch = bad_arch_action;
	return b;
}

void ar_sbpf_free(struct ar_sbpf *b)
{
	if (!b)
		return;
	free(b->rules);
	free(b);
}

struct arch_info {
	uint32_t token, audit;
	bool is64; /* 64-bit argument comparisons (libseccomp ARCH_SIZE_64) */
};

static const struct arch_info arch_table[] = {
	{ SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, true },
	{ SCMP_ARCH_X32, AUDIT_ARCH_X86_64, false },
	{ SCMP_ARCH_X86, AUDIT_ARCH_I386, false },
	{ SCMP_ARCH_AARCH64, AUDIT_ARCH_AARCH64, true },
	{ SCMP_ARCH_ARM, AUDIT_ARCH_ARM, false },
};

static const struct arch_info *arch_lookup(uint32_t token)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(arch_table); i++)
		if (arch_table[i].token == token)
			return &arch_table[i];
	return NULL;
}

void ar_sbpf_add_arch(struct ar_sbpf *b, uint32_t arch)
{
	for (size_t i = 0; i < b->n_archs; i++)
		if (b->archs[i] == arch)
			return;
	if (!arch_lookup(arch) || b->n_archs == MAX_ARCHS) {
		b->unsupported = "an architecture other than x86/arm";
		return;
	}
	b->archs[b->n_archs++] = arch;
}

void ar_sbpf_add_rule(struct ar_sbpf *b, const char *name, uint32_t action,
		      const struct scmp_arg_cmp *cmps, size_t n)
{
	struct rule *r;

	if (n > AR_ARRAY_SIZE(r->c)) {
		b->unsupported = "more than 6 comparisons in a rule";
		return;
	}
	if (b->n_rules == b->cap_rules) {
		b->cap_rules = b->cap_rules ? b->cap_rules * 2 : 64;
		b->rules =
			ar_xrealloc(b->rules, b->cap_rules * sizeof(*b->rules));
	}
	r = &b->rules[b->n_rules++];
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->action = action;
	r->n = (unsigned int)n;
	if (n)
		memcpy(r->c, cmps, n * sizeof(*cmps));
}

/* ---- resolution: name -> numbers per architecture ---- */

/* One use of a rule at a syscall number of a section. */
struct entry {
	uint32_t nr;
	uint32_t rule;
	int mux_arg; /* >= 0: plus the condition arg0 == mux_arg */
	bool is64;
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

static void entry_add(struct entries *e, uint32_t nr, size_t rule, int mux_arg,
		      bool is64)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 512;
		e->v = ar_xrealloc(e->v, e->cap * sizeof(*e->v));
	}
	e->v[e->n++] =
		(struct entry){ (uint32_t)nr, (uint32_t)rule, mux_arg, is64 };
}

/* The number of name on arch, translated the way libseccomp translates a
 * rule added with the native number (native number -> its name on the
 * native architecture -> number on arch).  __NR_SCMP_ERROR when it
 * cannot. */
static int arch_syscall_nr(uint32_t arch, const char *name)
{
	uint32_t native = seccomp_arch_native();
	int nr = seccomp_syscall_resolve_name(name);
	char *cname;

	if (nr == __NR_SCMP_ERROR || arch == native)
		return nr;
	cname = seccomp_syscall_resolve_num_arch(native, nr);
	if (!cname)
		return __NR_SCMP_ERROR;
	nr = seccomp_syscall_resolve_name_arch(arch, cname);
	free(cname);
	return nr;
}

static int add_rule_entries(struct ar_sbpf *b, const struct arch_info *ai,
			    size_t ri, struct entries *e)
{
	const struct rule *r = &b->rules[ri];
	int nr = arch_syscall_nr(ai->token, r->name);

	if (nr == __NR_SCMP_ERROR) {
		b->unsupported =
			"a syscall name not translatable to an architecture";
		return -1;
	}
	if (ai->token == SCMP_ARCH_X86) {
		int mux = 0, direct = 0, call = 0;

		if (nr <= -101 && nr >= -120) {
			call = -nr - 100;
			mux = X86_NR_SOCKETCALL;
			direct = x86_sock_direct[call];
		} else if (nr <= -201 && nr >= -224) {
			call = -nr - 200;
			mux = X86_NR_IPC;
			direct = x86_ipc_direct[call];
			if (direct == 0) {
				b->unsupported = "an unknown x86 ipc call";
				return -1;
			}
		} else if ((nr >= 359 && nr <= 373) ||
			   (nr >= 393 && nr <= 402)) {
			b->unsupported = "a direct x86 socket/ipc syscall";
			return -1;
		}
		if (mux) {
			if (r->n > 0) {
				b->unsupported =
					"argument conditions on an x86 socketcall/ipc syscall";
				return -1;
			}
			entry_add(e, mux, ri, call, false);
			if (direct > 0)
				entry_add(e, (uint32_t)direct, ri, -1, false);
			return 0;
		}
	}
	if (nr < 0)
		return 0; /* pseudo syscall: never in libseccomp's BPF */
	if (ai->token == SCMP_ARCH_X86_64 && (uint32_t)nr >= X32_BIT) {
		b->unsupported = "an x86_64 syscall number in the x32 range";
		return -1;
	}
	if (ai->token == SCMP_ARCH_X32 && (uint32_t)nr < X32_BIT) {
		b->unsupported = "an x32 syscall number without the x32 bit";
		return -1;
	}
	entry_add(e, (uint32_t)nr, ri, -1, ai->is64);
	return 0;
}

/* ---- comparisons ---- */

/* word tests: (word & m) == d as JEQ d, JSET m (one bit), AND m + JEQ d;
 * always true/false; and W_ANY, (word & m) != 0 (merged W_SET rules) */
enum wkind { W_EQ, W_SET, W_ANDEQ, W_TRUE, W_FALSE, W_ANY };

/* (word & m) == d */
static enum wkind word_kind(uint32_t m, uint32_t d)
{
	if (d & ~m)
		return W_FALSE;
	if (m == 0)
		return W_TRUE; /* d == 0 */
	if (m == UINT32_MAX)
		return W_EQ;
	if ((m & (m - 1)) == 0)
		return W_SET;
	return W_ANDEQ;
}

/* A comparison as emitted: the op, and for MASKED_EQ the kinds of its
 * two halves (lo only on 32-bit architectures). */
struct ccmp {
	enum scmp_compare op;
	unsigned int arg;
	bool is64;
	uint64_t a, b; /* value (mask) and datum; truncated on 32 bits */
	enum wkind hi, lo;
};

/* 1 always true, 0 always false, -1 depends on the argument */
static int ccmp_prepare(struct ccmp *c, const struct scmp_arg_cmp *s, bool is64)
{
	c->op = s->op;
	c->arg = s->arg;
	c->is64 = is64;
	c->a = is64 ? s->datum_a : (uint32_t)s->datum_a;
	c->b = is64 ? s->datum_b : (uint32_t)s->datum_b;
	c->hi = c->lo = W_TRUE;
	if (c->op != SCMP_CMP_MASKED_EQ)
		return -1;
	c->b &= c->a; /* libseccomp masks the datum too */
	c->lo = word_kind((uint32_t)c->a, (uint32_t)c->b);
	if (is64)
		c->hi = word_kind((uint32_t)(c->a >> 32),
				  (uint32_t)(c->b >> 32));
	if (c->lo == W_FALSE || c->hi == W_FALSE)
		return 0;
	if (c->lo == W_TRUE && c->hi == W_TRUE)
		return 1;
	return -1;
}

/* The word that A holds at both exits of c, or -1 (several, or
 * clobbered by an AND). */
static int ccmp_exit_word(const struct ccmp *c)
{
	if (c->op == SCMP_CMP_MASKED_EQ) {
		if (c->hi != W_TRUE && c->lo != W_TRUE)
			return -1;
		if (c->hi == W_ANDEQ || c->lo == W_ANDEQ)
			return -1;
		return ARG_WORD(c->arg) + (c->hi != W_TRUE ? 4 : 0);
	}
	return c->is64 ? -1 : ARG_WORD(c->arg);
}

/* The word c loads first. */
static int ccmp_first_word(const struct ccmp *c)
{
	if (!c->is64)
		return ARG_WORD(c->arg);
	if (c->op == SCMP_CMP_MASKED_EQ && c->hi == W_TRUE)
		return ARG_WORD(c->arg);
	return ARG_WORD(c->arg) + 4;
}

/* ---- code generation, backwards: index i counts from the end ---- */

struct gen {
	struct sock_filter *v; /* reversed */
	size_t n;
	bool overflow;
	uint32_t ret_act[16];
	size_t ret_at[16], n_ret;
};

static size_t emit(struct gen *g, uint16_t code, uint8_t jt, uint8_t jf,
		   uint32_t k)
{
	if (g->n >= MAX_INSNS) {
		g->overflow = true;
		return g->n - 1;
	}
	g->v[g->n] = (struct sock_filter){ code, jt, jf, k };
	return g->n++;
}

static size_t dist(const struct gen *g, size_t target)
{
	return g->n - target - 1;
}

/* A RET instruction was emitted at `at`: the nearest for its action. */
static void ret_remember(struct gen *g, uint32_t action, size_t at)
{
	size_t i;

	for (i = 0; i < g->n_ret; i++)
		if (g->ret_act[i] == action)
			break;
	if (i == g->n_ret) {
		if (g->n_ret == AR_ARRAY_SIZE(g->ret_act))
			return;
		g->ret_act[g->n_ret++] = action;
	}
	g->ret_at[i] = at;
}

/* A RET action near enough to jump to. */
static size_t ret_to(struct gen *g, uint32_t action)
{
	size_t at;

	for (size_t i = 0; i < g->n_ret; i++)
		if (g->ret_act[i] == action &&
		    dist(g, g->ret_at[i]) <= JMAX - 8)
			return g->ret_at[i];
	at = emit(g, BPF_RET | BPF_K, 0, 0, action);
	ret_remember(g, action, at);
	return at;
}

/* An instruction right here that leads to target. */
static size_t trampoline(struct gen *g, size_t target)
{
	const struct sock_filter *t = &g->v[target];
	size_t at;

	if (t->code == (BPF_RET | BPF_K)) {
		at = emit(g, t->code, 0, 0, t->k);
		ret_remember(g, t->k, at);
		return at;
	}
	return emit(g, BPF_JMP | BPF_JA, 0, 0, (uint32_t)dist(g, target));
}

/* A conditional jump to t when true, f when false. */
static size_t jump(struct gen *g, uint16_t op, uint32_t k, size_t t, size_t f)
{
	for (;;) {
		if (g->overflow)
			return g->n ? g->n - 1 : 0;
		if (dist(g, t) > JMAX)
			t = trampoline(g, t);
		else if (dist(g, f) > JMAX)
			f = trampoline(g, f);
		else
			break;
	}
	return emit(g, BPF_JMP | op | BPF_K, (uint8_t)dist(g, t),
		    (uint8_t)dist(g, f), k);
}

/* Make target the next instruction. */
static size_t fall_to(struct gen *g, size_t target)
{
	if (g->n == 0 || target != g->n - 1)
		return trampoline(g, target);
	return target;
}

static size_t load(struct gen *g, int word, size_t next)
{
	fall_to(g, next);
	return emit(g, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)word);
}

/* (word & m) == d -> t, else f; load the word unless A holds it. */
static size_t word_test(struct gen *g, enum wkind kind, int word, uint32_t m,
			uint32_t d, size_t t, size_t f, bool loaded)
{
	size_t at;

	switch (kind) {
	case W_TRUE:
		return t;
	case W_FALSE:
		return f;
	case W_EQ:
		at = jump(g, BPF_JEQ, d, t, f);
		break;
	case W_SET:
		at = d ? jump(g, BPF_JSET, m, t, f) :
			 jump(g, BPF_JSET, m, f, t);
		break;
	case W_ANY:
		at = jump(g, BPF_JSET, m, t, f);
		break;
	case W_ANDEQ:
	default:
		at = jump(g, BPF_JEQ, d, t, f);
		fall_to(g, at);
		at = emit(g, BPF_ALU | BPF_AND | BPF_K, 0, 0, m);
		break;
	}
	return loaded ? at : load(g, word, at);
}

/* The comparison c: t when it holds, else f.  loaded: A holds the word
 * c loads first. */
static size_t emit_cmp(struct gen *g, const struct ccmp *c, size_t t, size_t f,
		       bool loaded)
{
	int lo = ARG_WORD(c->arg), hi = lo + 4;
	uint32_t al = (uint32_t)c->a, ah = (uint32_t)(c->a >> 32);
	uint16_t op;
	size_t at, x;

	if (c->op == SCMP_CMP_MASKED_EQ) {
		at = word_test(g, c->lo, lo, al, (uint32_t)c->b, t, f,
			       loaded && c->hi == W_TRUE);
		if (c->is64)
			at = word_test(g, c->hi, hi, ah, (uint32_t)(c->b >> 32),
				       at, f, loaded);
		return at;
	}
	/* NE, LT and LE: the negations of EQ, GE and GT */
	if (c->op == SCMP_CMP_NE || c->op == SCMP_CMP_LT ||
	    c->op == SCMP_CMP_LE) {
		x = t;
		t = f;
		f = x;
	}
	if (c->op == SCMP_CMP_EQ || c->op == SCMP_CMP_NE) {
		at = word_test(g, W_EQ, lo, UINT32_MAX, al, t, f,
			       loaded && !c->is64);
		if (c->is64)
			at = word_test(g, W_EQ, hi, UINT32_MAX, ah, at, f,
				       loaded);
		return at;
	}
	op = (c->op == SCMP_CMP_GT || c->op == SCMP_CMP_LE) ? BPF_JGT : BPF_JGE;
	at = jump(g, op, al, t, f);
	if (!c->is64)
		return loaded ? at : load(g, lo, at);
	at = load(g, lo, at);
	/* hi > ah: t; hi == ah: compare lo; else f */
	at = jump(g, BPF_JEQ, ah, at, f);
	fall_to(g, at);
	at = jump(g, BPF_JGT, ah, t, g->n - 1);
	return loaded ? at : load(g, hi, at);
}

/* ---- leaves and sections ---- */

struct crule {
	struct ccmp c[7];
	unsigned int n;
};

enum leaf_kind { LEAF_RET, LEAF_CHAIN };

struct segment {
	uint32_t start, end;
	enum leaf_kind kind;
	uint32_t action;
	struct crule *rules; /* LEAF_CHAIN */
	size_t n_rules;
};

struct segments {
	struct segment *v;
	size_t n, cap;
};

static void seg_add(struct segments *s, struct segment seg)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 128;
		s->v = ar_xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = seg;
}

static void segs_free(struct segments *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].rules);
	free(s->v);
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->nr != b->nr)
		return a->nr < b->nr ? -1 : 1;
	if (a->rule != b->rule)
		return a->rule < b->rule ? -1 : 1;
	return 0;
}

/* The word a one-comparison rule tests a single bit of, with its mask,
 * when the rule holds exactly when that bit is set; else -1. */
static int set_bit_rule(struct crule *cr, enum wkind **kind, uint64_t *shift)
{
	struct ccmp *c = &cr->c[0];
	bool hi;
	uint32_t m, d;

	if (cr->n != 1 || c->op != SCMP_CMP_MASKED_EQ)
		return -1;
	if (c->hi != W_TRUE && c->lo != W_TRUE)
		return -1;
	hi = c->hi != W_TRUE;
	*kind = hi ? &c->hi : &c->lo;
	*shift = hi ? 32 : 0;
	m = (uint32_t)(c->a >> *shift);
	d = (uint32_t)(c->b >> *shift);
	if ((**kind != W_SET && **kind != W_ANY) || (**kind == W_SET && d != m))
		return -1;
	return ARG_WORD(c->arg) + (hi ? 4 : 0);
}

static int rule_word(const struct crule *cr)
{
	int w = ccmp_exit_word(&cr->c[0]);

	return cr->n == 1 && w >= 0 ? w : INT32_MAX;
}

/* All rules of a leaf have one action, so their order does not matter:
 * the rules "this bit of this word is set" on one word become one JSET
 * of all the bits (the agent profile's ioctl rules), and the rules that
 * test one word each are put next to each other (one load for them). */
static void merge_rules(struct segment *seg)
{
	size_t n = 0;

	for (size_t i = 0; i < seg->n_rules; i++) {
		struct crule *cr = &seg->rules[i];
		enum wkind *kind = NULL;
		uint64_t shift = 0;
		int w = set_bit_rule(cr, &kind, &shift);
		bool merged = false;

		for (size_t j = 0; w >= 0 && j < n; j++) {
			struct crule *into = &seg->rules[j];
			enum wkind *k2 = NULL;
			uint64_t s2 = 0;

			if (set_bit_rule(into, &k2, &s2) != w)
				continue;
			into->c[0].a |= cr->c[0].a &
					(UINT64_C(0xffffffff) << shift);
			*k2 = W_ANY;
			merged = true;
			break;
		}
		if (!merged)
			seg->rules[n++] = *cr;
	}
	seg->n_rules = n;
	/* stable insertion sort by the word a one-word rule tests */
	for (size_t i = 1; i < n; i++) {
		struct crule t = seg->rules[i];
		size_t j = i;

		while (j > 0 && rule_word(&seg->rules[j - 1]) > rule_word(&t)) {
			seg->rules[j] = seg->rules[j - 1];
			j--;
		}
		seg->rules[j] = t;
	}
}

/* The leaf of the entries e[0..n) (one syscall number). */
static int make_leaf(struct ar_sbpf *b, const struct entry *e, size_t n,
		     struct segment *seg)
{
	uint32_t action = b->rules[e[0].rule].action;
	bool uncond = false;

	for (size_t i = 0; i < n; i++) {
		const struct rule *r = &b->rules[e[i].rule];

		if (r->action != action) {
			b->unsupported =
				"rules with different actions on one syscall";
			return -1;
		}
		if (r->n == 0 && e[i].mux_arg < 0)
			uncond = true;
	}
	seg->start = seg->end = e[0].nr;
	seg->action = action;
	seg->kind = LEAF_RET;
	if (uncond)
		return 0;

	seg->rules = ar_xcalloc(n, sizeof(*seg->rules));
	seg->n_rules = 0;
	for (size_t i = 0; i < n; i++) {
		const struct rule *r = &b->rules[e[i].rule];
		struct crule *cr = &seg->rules[seg->n_rules];
		bool never = false;

		cr->n = 0;
		if (e[i].mux_arg >= 0) {
			struct scmp_arg_cmp m = {
				.arg = 0,
				.op = SCMP_CMP_EQ,
				.datum_a = (uint64_t)e[i].mux_arg,
			};

			ccmp_prepare(&cr->c[cr->n++], &m, false);
		}
		for (unsigned int j = 0; j < r->n; j++) {
			int k = ccmp_prepare(&cr->c[cr->n], &r->c[j],
					     e[i].is64);

			if (r->c[j].arg > 5 || r->c[j].op <= _SCMP_CMP_MIN ||
			    r->c[j].op >= _SCMP_CMP_MAX) {
				b->unsupported = "an invalid comparison";
				return -1;
			}
			if (k == 0)
				never = true;
			else if (k < 0)
				cr->n++;
		}
		if (never)
			continue;
		if (cr->n == 0) /* every comparison always holds */
			return 0; /* unconditional */
		seg->n_rules++;
	}
	if (seg->n_rules == 0) {
		seg->action = b->def;
		return 0;
	}
	seg->kind = LEAF_CHAIN;
	merge_rules(seg);
	return 0;
}

static size_t emit_chain(struct gen *g, const struct segment *s, uint32_t def)
{
	size_t succ = ret_to(g, s->action), next = ret_to(g, def);

	for (size_t r = s->n_rules; r-- > 0;) {
		const struct crule *cr = &s->rules[r];
		int in_word = -1; /* what A holds on entry to the rule */
		size_t t = succ;

		if (r > 0) {
			const struct crule *p = &s->rules[r - 1];

			in_word = ccmp_exit_word(&p->c[0]);
			for (unsigned int j = 1; j < p->n; j++)
				if (ccmp_exit_word(&p->c[j]) != in_word)
					in_word = -1;
		}
		for (unsigned int j = cr->n; j-- > 0;) {
			int w = j ? ccmp_exit_word(&cr->c[j - 1]) : in_word;

			t = emit_cmp(g, &cr->c[j], t, next,
				     w >= 0 && w == ccmp_first_word(&cr->c[j]));
		}
		next = t;
	}
	return next;
}

static bool seg_is(const struct segment *s, uint32_t action)
{
	return s->kind == LEAF_RET && s->action == action;
}

/* Instructions to test segments lo..hi one after the other (everything
 * else in their span is the default action). */
static size_t linear_cost(const struct segments *s, size_t lo, size_t hi,
			  uint32_t def)
{
	size_t c = 0;

	for (size_t k = lo; k <= hi; k++) {
		const struct segment *g = &s->v[k];

		if (seg_is(g, def))
			continue;
		c += (g->start == g->end || k == lo || k == hi) ? 1 : 2;
	}
	return c;
}

/* Instructions of the cheapest search over segments lo..hi (leaves not
 * counted): a binary tree, or a linear list where the non-default
 * segments are sparse (one JEQ each, as libseccomp's). */
static size_t tree_cost(const struct segments *s, size_t lo, size_t hi,
			uint32_t def, bool *linear)
{
	size_t mid, split, lin;

	*linear = false;
	if (lo == hi)
		return 0;
	mid = lo + (hi - lo + 1) / 2;
	lin = linear_cost(s, lo, hi, def);
	split = 1 + tree_cost(s, lo, mid - 1, def, linear) +
		tree_cost(s, mid, hi, def, linear);
	*linear = lin <= split;
	return *linear ? lin : split;
}

static size_t emit_leaf(struct gen *g, const struct segment *s, uint32_t def)
{
	if (s->kind == LEAF_CHAIN)
		return emit_chain(g, s, def);
	return ret_to(g, s->action);
}

static size_t emit_linear(struct gen *g, const struct segments *s, size_t lo,
			  size_t hi, uint32_t def)
{
	size_t next = ret_to(g, def);

	for (size_t k = hi + 1; k-- > lo;) {
		const struct segment *sg = &s->v[k];
		size_t x, t;

		if (seg_is(sg, def))
			continue;
		x = emit_leaf(g, sg, def);
		if (sg->start == sg->end) {
			next = jump(g, BPF_JEQ, sg->start, x, next);
		} else if (k == lo) { /* nothing below it in the span */
			next = jump(g, BPF_JGT, sg->end, next, x);
		} else if (k == hi) { /* nothing above it */
			next = jump(g, BPF_JGE, sg->start, x, next);
		} else {
			t = jump(g, BPF_JGT, sg->end, next, x);
			next = jump(g, BPF_JGE, sg->start, t, next);
		}
	}
	return next;
}

static size_t emit_tree(struct gen *g, const struct segments *s, size_t lo,
			size_t hi, uint32_t def)
{
	size_t mid, right, left;
	bool linear;

	if (lo == hi)
		return emit_leaf(g, &s->v[lo], def);
	tree_cost(s, lo, hi, def, &linear);
	if (linear)
		return emit_linear(g, s, lo, hi, def);
	mid = lo + (hi - lo + 1) / 2;
	right = emit_tree(g, s, mid, hi, def);
	left = emit_tree(g, s, lo, mid - 1, def);
	return jump(g, BPF_JGE, s->v[mid].start, right, left);
}

/* The segments of one section: every number from 0 to 2^32-1. */
static int section_segments(struct ar_sbpf *b, struct entries *e, bool has64,
			    bool hasx32, struct segments *out)
{
	struct segments items = { 0 };
	uint32_t next = 0;
	bool done = false;
	int rc = 0;

	if (e->n > 1)
		qsort(e->v, e->n, sizeof(*e->v), cmp_entry);
	for (size_t i = 0; i < e->n;) {
		struct segment seg = { 0 };
		size_t j = i;

		while (j < e->n && e->v[j].nr == e->v[i].nr)
			j++;
		if (make_leaf(b, &e->v[i], j - i, &seg) < 0) {
			free(seg.rules);
			rc = -1;
			break;
		}
		seg_add(&items, seg);
		i = j;
	}
	/* libseccomp's ABI checks in the x86_64 section */
	if (rc == 0 && has64 && !hasx32) {
		seg_add(&items,
			(struct segment){ X32_BIT, UINT32_MAX - 1, LEAF_RET,
					  b->badarch, NULL, 0 });
	} else if (rc == 0 && hasx32 && !has64) {
		seg_add(&items, (struct segment){ 0, X32_BIT - 1, LEAF_RET,
						  b->badarch, NULL, 0 });
	}
	if (rc == 0 && items.n > 1) {
		/* the guard segments were appended: keep them in order */
		for (size_t i = items.n - 1;
		     i > 0 && items.v[i].start < items.v[i - 1].start; i--) {
			struct segment t = items.v[i];

			items.v[i] = items.v[i - 1];
			items.v[i - 1] = t;
		}
	}
	for (size_t i = 0; rc == 0 && i < items.n && !done; i++) {
		struct segment *it = &items.v[i];

		if (i > 0 && it->start <= items.v[i - 1].end) {
			b->unsupported = "overlapping syscall numbers";
			rc = -1;
			break;
		}
		if (it->start > next)
			seg_add(out,
				(struct segment){ next, it->start - 1, LEAF_RET,
						  b->def, NULL, 0 });
		if (out->n > 0 && it->kind == LEAF_RET &&
		    out->v[out->n - 1].kind == LEAF_RET &&
		    out->v[out->n - 1].action == it->action &&
		    out->v[out->n - 1].end + 1 == it->start) {
			out->v[out->n - 1].end = it->end;
			free(it->rules);
		} else {
			seg_add(out, *it);
		}
		it->rules = NULL;
		if (it->end == UINT32_MAX)
			done = true;
		else
			next = it->end + 1;
	}
	if (rc == 0 && !done)
		seg_add(out, (struct segment){ next, UINT32_MAX, LEAF_RET,
					       b->def, NULL, 0 });
	for (size_t i = 0; i < items.n; i++)
		free(items.v[i].rules);
	free(items.v);
	return rc;
}

static size_t emit_section(struct gen *g, const struct segments *s,
			   uint32_t def)
{
	size_t root;

	root = emit_tree(g, s, 0, s->n - 1, def);
	return load(g, NR_WORD, root);
}

int ar_sbpf_build(struct ar_sbpf *b, struct sock_filter **out, size_t *len,
		  const char **why)
{
	uint32_t audits[MAX_ARCHS];
	size_t entry_at[MAX_ARCHS], n_sec = 0, at;
	struct gen g = { 0 };
	int rc = 0;

	*out = NULL;
	*len = 0;
	*why = NULL;
	if (b->n_archs == 0)
		b->unsupported = "no architecture";
	if (b->unsupported) {
		*why = b->unsupported;
		return -1;
	}
	for (size_t i = 0; i < b->n_archs; i++) {
		uint32_t audit = arch_lookup(b->archs[i])->audit;
		bool seen = false;

		for (size_t j = 0; j < n_sec; j++)
			seen |= audits[j] == audit;
		if (!seen)
			audits[n_sec++] = audit;
	}

	g.v = ar_xcalloc(MAX_INSNS, sizeof(*g.v));
	for (size_t si = n_sec; rc == 0 && si-- > 0;) {
		struct entries e = { 0 };
		struct segments segs = { 0 };
		bool has64 = false, hasx32 = false;

		for (size_t i = 0; rc == 0 && i < b->n_archs; i++) {
			const struct arch_info *ai = arch_lookup(b->archs[i]);

			if (ai->audit != audits[si])
				continue;
			has64 |= ai->token == SCMP_ARCH_X86_64;
			hasx32 |= ai->token == SCMP_ARCH_X32;
			for (size_t r = 0; rc == 0 && r < b->n_rules; r++)
				rc = add_rule_entries(b, ai, r, &e);
		}
		if (rc == 0)
			rc = section_segments(b, &e, has64, hasx32, &segs);
		if (rc == 0)
			entry_at[si] = emit_section(&g, &segs, b->def);
		segs_free(&segs);
		free(e.v);
	}
	if (rc == 0) {
		at = ret_to(&g, b->badarch);
		for (size_t si = n_sec; si-- > 0;)
			at = jump(&g, BPF_JEQ, audits[si], entry_at[si], at);
		load(&g, ARCH_WORD, at);
		if (g.overflow) {
			b->unsupported = "more than 4096 instructions";
			rc = -1;
		}
	}
	if (rc < 0) {
		*why = b->unsupported;
		free(g.v);
		return -1;
	}
	/* reverse into program order */
	*out = ar_xmalloc(g.n * sizeof(**out));
	for (size_t i = 0; i < g.n; i++)
		(*out)[i] = g.v[g.n - 1 - i];
	*len = g.n;
	free(g.v);
	return 0;
}
