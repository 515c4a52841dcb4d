/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Seccomp: compile linux.seccomp with libseccomp, load the BPF program with
 * seccomp(2), hand a user-notification fd to listenerPath. */
#include "config.h"

#include "seccomp.h"

#include <ctype.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <libseccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "fd_passing.h"
#include "log.h"
#include "seccomp_bpf.h"
#include "seccomp_internal.h"
#include "state_json.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif

/* The OCI version written in the container process state. */
#define AR_SECCOMP_OCI_VERSION "1.2.0"

/* Indexed by enum oci_seccomp_action / oci_seccomp_op. */
const char *const ar_seccomp_action_names[] = {
	"SCMP_ACT_KILL",	"SCMP_ACT_KILL_PROCESS",
	"SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",
	"SCMP_ACT_ERRNO",	"SCMP_ACT_TRACE",
	"SCMP_ACT_ALLOW",	"SCMP_ACT_LOG",
	"SCMP_ACT_NOTIFY",	NULL,
};

const char *const ar_seccomp_op_names[] = {
	"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",	    "SCMP_CMP_EQ",
	"SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ", NULL,
};

static const struct {
	const char *name;
	unsigned int flag;
} flag_table[] = {
	{ "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
	{ "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
	{ "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
	{ "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
	  SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
};

const char *const ar_seccomp_flag_names[] = {
	"SECCOMP_FILTER_FLAG_TSYNC",
	"SECCOMP_FILTER_FLAG_LOG",
	"SECCOMP_FILTER_FLAG_SPEC_ALLOW",
	"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
	NULL,
};

/* Every architecture name of the runtime-spec (defs-linux.json). */
const char *const ar_seccomp_arch_names[] = {
	"SCMP_ARCH_X86",	 "SCMP_ARCH_X86_64",  "SCMP_ARCH_X32",
	"SCMP_ARCH_ARM",	 "SCMP_ARCH_AARCH64", "SCMP_ARCH_LOONGARCH64",
	"SCMP_ARCH_M68K",	 "SCMP_ARCH_MIPS",    "SCMP_ARCH_MIPS64",
	"SCMP_ARCH_MIPS64N32",	 "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64",
	"SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",     "SCMP_ARCH_PPC64",
	"SCMP_ARCH_PPC64LE",	 "SCMP_ARCH_S390",    "SCMP_ARCH_S390X",
	"SCMP_ARCH_SH",		 "SCMP_ARCH_SHEB",    "SCMP_ARCH_PARISC",
	"SCMP_ARCH_PARISC64",	 "SCMP_ARCH_RISCV64", NULL,
};

static const char *action_name(enum oci_seccomp_action a)
{
	if ((size_t)a < AR_ARRAY_SIZE(ar_seccomp_action_names) - 1)
		return ar_seccomp_action_names[a];
	return "unknown action";
}

static int sys_seccomp(unsigned int op, unsigned int flags, void *args)
{
	return (int)syscall(SYS_seccomp, op, flags, args);
}

const char *ar_seccomp_lib_version(void)
{
	static char buf[48];
	const struct scmp_version *v = seccomp_version();

	if (!buf[0]) {
		if (v)
			snprintf(buf, sizeof(buf), "%u.%u.%u", v->major,
				 v->minor, v->micro);
		else
			snprintf(buf, sizeof(buf), "unknown");
	}
	return buf;
}

static bool spec_arch_name(const char *name)
{
	for (size_t i = 0; ar_seccomp_arch_names[i]; i++)
		if (strcmp(ar_seccomp_arch_names[i], name) == 0)
			return true;
	return false;
}

/* libseccomp token of a spec arch name, 0 when libseccomp lacks it. */
static uint32_t arch_token(const char *name)
{
	char low[32];
	const char *p;
	size_t i;

	if (strncmp(name, "SCMP_ARCH_", 10) != 0)
		return 0;
	p = name + 10;
	for (i = 0; i < sizeof(low) - 1 && p[i]; i++)
		low[i] = (char)tolower((unsigned char)p[i]);
	low[i] = '\0';
	return seccomp_arch_resolve_name(low);
}

bool ar_seccomp_arch_known(const char *name)
{
	return spec_arch_name(name) && arch_token(name) != 0;
}

char *ar_seccomp_syscall_name(uint32_t audit_arch, int nr)
{
	/* libseccomp's tokens are the AUDIT_ARCH_* values, except x32,
	 * whose calls the kernel reports as x86_64 */
	if (audit_arch == SCMP_ARCH_X86_64 && (nr & 0x40000000))
		audit_arch = SCMP_ARCH_X32;
	return seccomp_syscall_resolve_num_arch(audit_arch, nr);
}

static int flag_value(const char *name, unsigned int *out)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(flag_table); i++) {
		if (strcmp(flag_table[i].name, name) == 0) {
			*out = flag_table[i].flag;
			return 0;
		}
	}
	return -1;
}

bool ar_seccomp_flag_supported(const char *name)
{
	unsigned int flag;

	if (flag_value(name, &flag) < 0)
		return false;
	/* WAIT_KILLABLE_RECV is only valid together with NEW_LISTENER. */
	if (flag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
		flag |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
	/* With a NULL program, a kernel that accepts the flags fails to read
	 * it (EFAULT); unknown flags are EINVAL.  Nothing is installed. */
	if (sys_seccomp(SECCOMP_SET_MODE_FILTER, flag, NULL) == 0)
		return true; /* cannot happen */
	return errno == EFAULT;
}

static int action_value(enum oci_seccomp_action a,
			const struct oci_opt_u32 *errno_ret, const char *what,
			uint32_t *out, struct ar_error *err)
{
	uint32_t e = EPERM;

	if (errno_ret && errno_ret->set) {
		if (a != OCI_SCMP_ACT_ERRNO && a != OCI_SCMP_ACT_TRACE)
			ar_debug("seccomp: %s: errnoRet ignored for %s", what,
				 action_name(a));
		e = errno_ret->v;
		if ((a == OCI_SCMP_ACT_ERRNO || a == OCI_SCMP_ACT_TRACE) &&
		    e > 0xffff)
			return ar_error_set_plain(
				err, EINVAL,
				"seccomp: %s: errnoRet %u out of range (0..65535)",
				what, e);
	}
	switch (a) {
	case OCI_SCMP_ACT_KILL:
	case OCI_SCMP_ACT_KILL_THREAD:
		*out = SCMP_ACT_KILL_THREAD;
		return 0;
	case OCI_SCMP_ACT_KILL_PROCESS:
		*out = SCMP_ACT_KILL_PROCESS;
		return 0;
	case OCI_SCMP_ACT_TRAP:
		*out = SCMP_ACT_TRAP;
		return 0;
	case OCI_SCMP_ACT_ERRNO:
		*out = SCMP_ACT_ERRNO(e);
		return 0;
	case OCI_SCMP_ACT_TRACE:
		*out = SCMP_ACT_TRACE(e);
		return 0;
	case OCI_SCMP_ACT_ALLOW:
		*out = SCMP_ACT_ALLOW;
		return 0;
	case OCI_SCMP_ACT_LOG:
		*out = SCMP_ACT_LOG;
		return 0;
	case OCI_SCMP_ACT_NOTIFY:
		*out = SCMP_ACT_NOTIFY;
		return 0;
	}
	return ar_error_set_plain(err, EINVAL, "seccomp: %s: unknown action %d",
				  what, (int)a);
}

static int op_value(enum oci_seccomp_op op, enum scmp_compare *out)
{
	switch (op) {
	case OCI_SCMP_CMP_NE:
		*out = SCMP_CMP_NE;
		return 0;
	case OCI_SCMP_CMP_LT:
		*out = SCMP_CMP_LT;
		return 0;
	case OCI_SCMP_CMP_LE:
		*out = SCMP_CMP_LE;
		return 0;
	case OCI_SCMP_CMP_EQ:
		*out = SCMP_CMP_EQ;
		return 0;
	case OCI_SCMP_CMP_GE:
		*out = SCMP_CMP_GE;
		return 0;
	case OCI_SCMP_CMP_GT:
		*out = SCMP_CMP_GT;
		return 0;
	case OCI_SCMP_CMP_MASKED_EQ:
		*out = SCMP_CMP_MASKED_EQ;
		return 0;
	}
	return -1;
}

void ar_seccomp_filter_free(struct ar_seccomp_filter *f)
{
	if (!f)
		return;
	if (f->ctx)
		seccomp_release(f->ctx);
	free(f->bpf);
	free(f);
}

bool ar_seccomp_x32_runs(void)
{
	static int runs = -1;
	long r;

	if (runs >= 0)
		return runs;
	/* 0: no filter; 2: a filter (that might kill on x32); -1: prctl
	 * itself filtered */
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 0) {
		runs = 1;
		return runs;
	}
#if defined(__x86_64__)
	r = syscall(0x40000000L | SYS_getpid);
	runs = !(r < 0 && errno == ENOSYS);
#else
	(void)r;
	runs = 1;
#endif
	return runs;
}

bool ar_seccomp_x32_in_filter(uint32_t native)
{
	return native != SCMP_ARCH_X86_64 || ar_seccomp_x32_runs();
}

/* Whether a process on this kernel can make system calls with the ABI of
 * `arch`: the native one and its compat ABIs (x32 only when the kernel
 * has it, see ar_seccomp_x32_runs()).  Other architectures can never
 * reach the filter (their AUDIT_ARCH value never occurs), so leaving them
 * out changes nothing but the size of the program and the compile time,
 * which grow with every architecture (the agent profile lists x86 and
 * arm families).  Without x32, an x32 syscall number on x86_64 gets the
 * bad-architecture action (libseccomp's check), where it got ENOSYS from
 * the kernel before.  Unknown natives keep everything, as runc does. */
static bool arch_runs_here(uint32_t native, uint32_t arch, bool x32)
{
	switch (native) {
	case SCMP_ARCH_X86_64:
		return arch == SCMP_ARCH_X86_64 || arch == SCMP_ARCH_X86 ||
		       (arch == SCMP_ARCH_X32 && x32);
	case SCMP_ARCH_X32:
		return arch == SCMP_ARCH_X86_64 || arch == SCMP_ARCH_X86 ||
		       arch == SCMP_ARCH_X32;
	case SCMP_ARCH_X86:
		return arch == SCMP_ARCH_X86;
	case SCMP_ARCH_AARCH64:
		return arch == SCMP_ARCH_AARCH64 || arch == SCMP_ARCH_ARM;
	case SCMP_ARCH_ARM:
		return arch == SCMP_ARCH_ARM;
	case SCMP_ARCH_S390X:
		return arch == SCMP_ARCH_S390X || arch == SCMP_ARCH_S390;
	case SCMP_ARCH_S390:
		return arch == SCMP_ARCH_S390;
	default:
		return true;
	}
}

static int add_architectures(struct ar_seccomp_filter *f, struct ar_sbpf *sb,
			     const struct oci_seccomp *sc, uint32_t native,
			     bool x32, struct ar_error *err)
{
	for (size_t i = 0; i < sc->architectures.n; i++) {
		const char *name = sc->architectures.v[i];
		uint32_t tok;
		int r;

		if (!spec_arch_name(name))
			return ar_error_set_plain(
				err, EINVAL,
				"seccomp: architectures[%zu]: unknown architecture `%s`",
				i, name);
		tok = arch_token(name);
		if (tok == 0) {
			ar_debug(
				"seccomp: architecture %s not supported by libseccomp %s: skipped",
				name, ar_seccomp_lib_version());
			continue;
		}
		if (!arch_runs_here(native, tok, x32)) {
			ar_debug(
				"seccomp: architecture %s cannot run on this kernel: left out of the filter",
				name);
			continue;
		}
		r = seccomp_arch_add(f->ctx, tok);
		if (r < 0 && r != -EEXIST)
			return ar_error_set(
				err, -r, "seccomp: add architecture %s", name);
		ar_sbpf_add_arch(sb, tok);
	}
	return 0;
}

static int parse_flags(struct ar_seccomp_filter *f,
		       const struct oci_seccomp *sc, struct ar_error *err)
{
	for (size_t i = 0; i < sc->flags.n; i++) {
		unsigned int v;

		if (flag_value(sc->flags.v[i], &v) < 0)
			return ar_error_set_plain(
				err, EINVAL,
				"seccomp: flags[%zu]: unknown flag `%s`", i,
				sc->flags.v[i]);
		f->flags |= v;
	}
	return 0;
}

int ar_seccomp_check_names(const struct oci_seccomp *sc, struct ar_error *err)
{
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		const struct oci_strv *n = &sc->syscalls[i].names;

		for (size_t j = 0; j < n->n; j++)
			if (seccomp_syscall_resolve_name(n->v[j]) ==
			    __NR_SCMP_ERROR)
				return ar_error_set_plain(
					err, EINVAL,
					"linux.seccomp.syscalls[%zu].names[%zu]: unknown syscall `%s` (libseccomp %s; the annotation %s asks to fail on it)",
					i, j, n->v[j], ar_seccomp_lib_version(),
					AR_ANNOTATION_SECCOMP_FAIL_UNKNOWN);
	}
	return 0;
}

static int add_rule(struct ar_seccomp_filter *f, struct ar_sbpf *sb,
		    const struct oci_seccomp_syscall *s, size_t idx,
		    const char *name, uint32_t action, struct ar_error *err)
{
	struct scmp_arg_cmp cmps[6];
	bool same_index = false;
	unsigned int seen = 0;
	int nr, r;

	nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR) {
		ar_debug(
			"seccomp: syscall `%s` unknown to libseccomp %s: skipped",
			name, ar_seccomp_lib_version());
		return 0;
	}
	if (s->n_args > AR_ARRAY_SIZE(cmps)) {
		/* More than 6 conditions must repeat an index. */
		same_index = true;
	}
	for (size_t j = 0; j < s->n_args; j++) {
		const struct oci_seccomp_arg *a = &s->args[j];
		enum scmp_compare op;

		if (a->index > 5)
			return ar_error_set_plain(
				err, EINVAL,
				"seccomp: syscalls[%zu].args[%zu]: index %u out of range (0..5)",
				idx, j, a->index);
		if (op_value(a->op, &op) < 0)
			return ar_error_set_plain(
				err, EINVAL,
				"seccomp: syscalls[%zu].args[%zu]: unknown operator %d",
				idx, j, (int)a->op);
		if (seen & (1u << a->index))
			same_index = true;
		seen |= 1u << a->index;
		if (j < AR_ARRAY_SIZE(cmps)) {
			/* MASKED_EQ: datum_a is the mask, datum_b the
			 * value, exactly OCI's value/valueTwo. */
			cmps[j] = (struct scmp_arg_cmp){
				.arg = a->index,
				.op = op,
				.datum_a = a->value,
				.datum_b = a->value_two,
			};
		}
	}

	if (!same_index) {
		r = seccomp_rule_add_array(f->ctx, action, nr,
					   (unsigned int)s->n_args,
					   s->n_args ? cmps : NULL);
		if (r < 0)
			return ar_error_set(
				err, -r,
				"seccomp: syscalls[%zu] (`%s`): add rule", idx,
				name);
		ar_sbpf_add_rule(sb, name, action, cmps, s->n_args);
		return 0;
	}
	/* Two conditions on one argument: one rule per condition (runc and
	 * crun do the same), i.e. the conditions are ORed. */
	for (size_t j = 0; j < s->n_args; j++) {
		const struct oci_seccomp_arg *a = &s->args[j];
		struct scmp_arg_cmp c;
		enum scmp_compare op;

		op_value(a->op, &op);
		c = (struct scmp_arg_cmp){
			.arg = a->index,
			.op = op,
			.datum_a = a->value,
			.datum_b = a->value_two,
		};
		r = seccomp_rule_add_array(f->ctx, action, nr, 1, &c);
		if (r < 0)
			return ar_error_set(
				err, -r,
				"seccomp: syscalls[%zu] (`%s`): add rule for args[%zu]",
				idx, name, j);
		ar_sbpf_add_rule(sb, name, action, &c, 1);
	}
	return 0;
}

static int export_bpf(struct ar_seccomp_filter *f, struct ar_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ void *buf = NULL;
	off_t size;
	ssize_t n;
	int r;

	fd = memfd_create("agentrun-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return ar_error_set(err, errno, "seccomp: memfd_create");
	r = seccomp_export_bpf(f->ctx, fd);
	if (r < 0)
		return ar_error_set(err, -r, "seccomp: export BPF");
	size = lseek(fd, 0, SEEK_END);
	if (size < 0)
		return ar_error_set(err, errno, "seccomp: lseek");
	if (size == 0 || (size_t)size > AR_SECCOMP_BPF_MAX ||
	    size % (off_t)sizeof(struct sock_filter) != 0)
		return ar_error_set_plain(
			err, E2BIG,
			"seccomp: the compiled filter has an invalid size (%lld bytes, at most %zu)",
			(long long)size, AR_SECCOMP_BPF_MAX);
	buf = ar_xmalloc((size_t)size);
	if (lseek(fd, 0, SEEK_SET) < 0)
		return ar_error_set(err, errno, "seccomp: lseek");
	n = ar_read_all(fd, buf, (size_t)size);
	if (n != size)
		return ar_error_set(err, n < 0 ? errno : EIO,
				    "seccomp: read the compiled filter");
	f->bpf = ar_steal_ptr(&buf);
	f->bpf_len = (size_t)size;
	return 0;
}

static void sbpf_freep(struct ar_sbpf **b)
{
	ar_sbpf_free(*b);
}

/* The compact program of seccomp_bpf.c when it expresses the profile,
 * else libseccomp's. */
static int make_program(struct ar_seccomp_filter *f, struct ar_sbpf *sb,
			bool libseccomp_only, struct ar_error *err)
{
	struct sock_filter *prog = NULL;
	const char *why = NULL;
	size_t n = 0;

	if (!libseccomp_only && ar_sbpf_build(sb, &prog, &n, &why) == 0) {
		f->bpf = prog;
		f->bpf_len = n * sizeof(*prog);
		f->compact = true;
		return 0;
	}
	if (why)
		ar_debug("seccomp: libseccomp's BPF program is used (%s)", why);
	return export_bpf(f, err);
}

int ar_seccomp_compile_opts(const struct oci_seccomp *sc,
			    const struct ar_seccomp_compile_opts *o,
			    struct ar_seccomp_filter **out,
			    struct ar_error *err)
{
	_cleanup_seccomp_filter_ struct ar_seccomp_filter *f = NULL;
	_cleanup_(sbpf_freep) struct ar_sbpf *sb = NULL;
	uint32_t def = 0, badarch = SCMP_ACT_KILL_THREAD;
	uint32_t native = o->native ? o->native : seccomp_arch_native();
	bool x32 = o->x32 < 0 ? ar_seccomp_x32_in_filter(native) : o->x32 != 0;
	int r;

	*out = NULL;
	if (action_value(sc->default_action, &sc->default_errno_ret,
			 "defaultAction", &def, err) < 0)
		return -1;
	if (sc->default_action == OCI_SCMP_ACT_NOTIFY)
		return ar_error_set_plain(
			err, EINVAL,
			"seccomp: defaultAction SCMP_ACT_NOTIFY is not allowed (it would trap the runtime itself)");

	f = ar_xcalloc(1, sizeof(*f));
	if (parse_flags(f, sc, err) < 0)
		return -1;
	f->ctx = seccomp_init(def);
	if (!f->ctx)
		return ar_error_set_plain(
			err, EINVAL,
			"seccomp: seccomp_init failed for defaultAction %s",
			action_name(sc->default_action));
	/* no_new_privs is the caller's decision (process.noNewPrivileges). */
	r = seccomp_attr_set(f->ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (r < 0)
		return ar_error_set(err, -r,
				    "seccomp: clear the NNP attribute");
	seccomp_attr_get(f->ctx, SCMP_FLTATR_ACT_BADARCH, &badarch);
	/* The same rules go to libseccomp (which checks them, resolves
	 * names and can always export a program) and to the compact
	 * generator; seccomp_init() put the native architecture in. */
	sb = ar_sbpf_new(def, badarch);
	ar_sbpf_add_arch(sb, seccomp_arch_native());
	if (add_architectures(f, sb, sc, native, x32, err) < 0)
		return -1;

	for (size_t i = 0; i < sc->n_syscalls; i++) {
		const struct oci_seccomp_syscall *s = &sc->syscalls[i];
		char what[48];
		uint32_t act = 0;

		snprintf(what, sizeof(what), "syscalls[%zu]", i);
		if (action_value(s->action, &s->errno_ret, what, &act, err) < 0)
			return -1;
		if (act == def) {
			ar_debug(
				"seccomp: %s: same action as the default: skipped",
				what);
			continue;
		}
		for (size_t k = 0; k < s->names.n; k++) {
			if (add_rule(f, sb, s, i, s->names.v[k], act, err) < 0)
				return -1;
		}
		if (s->action == OCI_SCMP_ACT_NOTIFY && s->names.n > 0)
			f->notify = true;
	}
	if (make_program(f, sb, o->libseccomp_only, err) < 0)
		return -1;
	*out = ar_steal_ptr(&f);
	return 0;
}

int ar_seccomp_compile(const struct oci_seccomp *sc,
		       struct ar_seccomp_filter **out, struct ar_error *err)
{
	static const struct ar_seccomp_compile_opts o = { .x32 = -1 };

	return ar_seccomp_compile_opts(sc, &o, out, err);
}

bool ar_seccomp_filter_needs_notify(const struct ar_seccomp_filter *f)
{
	return f && f->notify;
}

void ar_seccomp_filter_want_listener(struct ar_seccomp_filter *f)
{
	if (f)
		f->notify = true;
}

const void *ar_seccomp_filter_bpf(const struct ar_seccomp_filter *f,
				  size_t *len)
{
	*len = f->bpf_len;
	return f->bpf;
}

int ar_seccomp_filter_export_pfc(const struct ar_seccomp_filter *f, int fd,
				 struct ar_error *err)
{
	int r;

	if (!f->ctx)
		return ar_error_set_plain(
			err, EINVAL,
			"seccomp: no libseccomp context to export");
	r = seccomp_export_pfc(f->ctx, fd);
	if (r < 0)
		return ar_error_set(err, -r, "seccomp: export PFC");
	return 0;
}

static void flags_text(unsigned int flags, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < AR_ARRAY_SIZE(flag_table); i++) {
		if (!(flags & flag_table[i].flag))
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					off ? "|" : "", flag_table[i].name);
		if (off >= len)
			return;
	}
	if (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
		snprintf(buf + off, len - off, "%sNEW_LISTENER",
			 off ? "|" : "");
}

int ar_seccomp_load(struct ar_seccomp_filter *f, int *notify_fd_out,
		    struct ar_error *err)
{
	struct sock_fprog prog = {
		.len = (unsigned short)(f->bpf_len /
					sizeof(struct sock_filter)),
		.filter = f->bpf,
	};
	unsigned int flags = f->flags;
	char ftext[160];
	int r;

	*notify_fd_out = -1;
	if (f->notify) {
		flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
		/* TSYNC and NEW_LISTENER exclude each other; the container
		 * process is single-threaded, so TSYNC has nothing to do. */
		flags &= ~(unsigned int)SECCOMP_FILTER_FLAG_TSYNC;
	} else if (flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) {
		/* Only meaningful (and only accepted) with a listener. */
		flags &= ~(unsigned int)SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	}

	r = sys_seccomp(SECCOMP_SET_MODE_FILTER, flags, &prog);
	if (r < 0 && errno == ENOSYS && flags == 0)
		r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	if (r < 0) {
		int e = errno;

		if (e == EACCES)
			return ar_error_set(
				err, e,
				"seccomp: load the filter (no_new_privs is not set and CAP_SYS_ADMIN is missing)");
		flags_text(flags, ftext, sizeof(ftext));
		return ar_error_set(err, e, "seccomp: load the filter%s%s%s",
				    flags ? " (flags " : "", ftext,
				    flags ? ")" : "");
	}
	if (f->notify)
		*notify_fd_out = r;
	return 0;
}

/* ---- listenerPath ---- */

static int send_with_fd(int sock, const char *data, size_t len, int fd)
{
	ssize_t n = ar_sendmsg_fd(sock, data, len, fd);

	if (n < 0)
		return -1;
	/* The fd travelled with the first byte; the rest is plain data. */
	if ((size_t)n < len) {
		const char *p = data + n;
		size_t left = len - (size_t)n;

		while (left > 0) {
			ssize_t w = send(sock, p, left, MSG_NOSIGNAL);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -1;
			p += w;
			left -= (size_t)w;
		}
	}
	return 0;
}

int ar_seccomp_send_notify_fd(const char *listener_path, int notify_fd,
			      const char *metadata, const char *state_json,
			      struct ar_error *err)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	const struct timeval tv = { .tv_sec = AR_SECCOMP_LISTENER_TIMEOUT_S };
	_cleanup_free_ char *payload = NULL;
	_cleanup_close_ int sock = -1;
	size_t len = 0;

	if (!listener_path || !*listener_path)
		return ar_error_set_plain(err, EINVAL,
					  "seccomp: empty listenerPath");
	if (strlen(listener_path) >= sizeof(addr.sun_path))
		return ar_error_set_plain(
			err, ENAMETOOLONG,
			"seccomp: listenerPath `%s` is too long for a unix socket (max %zu bytes)",
			listener_path, sizeof(addr.sun_path) - 1);
	if (notify_fd < 0)
		return ar_error_set_plain(
			err, EBADF, "seccomp: no notification fd to send");
	if (ar_seccomp_process_state_json(AR_SECCOMP_OCI_VERSION, metadata,
					  state_json, &payload, &len, err) < 0)
		return -1;

	memcpy(addr.sun_path, listener_path, strlen(listener_path) + 1);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return ar_error_set(err, errno, "seccomp: socket");
	/* A listener whose backlog is full (nobody accepts) would block
	 * connect(2) and send(2) forever; SO_SNDTIMEO bounds both. */
	if (setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return ar_error_set(err, errno, "seccomp: SO_SNDTIMEO");
	if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		if (errno == EAGAIN || errno == EINPROGRESS)
			return ar_error_set_plain(
				err, ETIMEDOUT,
				"seccomp: listenerPath `%s`: nobody accepted the connection within %d s",
				listener_path, AR_SECCOMP_LISTENER_TIMEOUT_S);
		return ar_error_set(err, errno,
				    "seccomp: connect to listenerPath `%s`",
				    listener_path);
	}
	if (send_with_fd(sock, payload, len, notify_fd) < 0) {
		if (errno == EAGAIN)
			return ar_error_set_plain(
				err, ETIMEDOUT,
				"seccomp: listenerPath `%s`: the listener did not read the notification fd within %d s",
				listener_path, AR_SECCOMP_LISTENER_TIMEOUT_S);
		return ar_error_set(err, errno,
				    "seccomp: send the notification fd to `%s`",
				    listener_path);
	}
	return 0;
}
