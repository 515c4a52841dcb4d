/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The seccomp user-notification listener of --audit and --learn
 * (audit_notify.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "audit.h"
#include "audit_notify.h"
#include "audit_paths.h"
#include "fd_passing.h"
#include "learn.h"
#include "log.h"
#include "proc_stat.h"
#include "protect/protect.h"
#include "seccomp.h"
#include "utils.h"

#define SB_MAX_ARGS 1024 /* argv entries read per exec */
#define SB_MAX_ARGV_BYTES (64 * 1024)
#define X32_BIT 0x40000000

/* ---- the rules ---- */

static const char *const exec_names[] = { "execve", "execveat", NULL };
static const char *const connect_names[] = { "connect", NULL };
static const char *const path_names[] = {
	"open",	    "openat",	 "openat2",  "creat",	 "mkdir",
	"mkdirat",  "unlink",	 "unlinkat", "rmdir",	 "rename",
	"renameat", "renameat2", "execve",   "execveat", NULL,
};

static bool in(const char *const *list, const char *name)
{
	for (const char *const *p = list; p && *p; p++)
		if (strcmp(*p, name) == 0)
			return true;
	return false;
}

static bool wanted(int what, const char *name)
{
	return ((what & SB_NOTIFY_EXEC) && in(exec_names, name)) ||
	       ((what & SB_NOTIFY_CONNECT) && in(connect_names, name)) ||
	       ((what & SB_NOTIFY_PATHS) && in(path_names, name)) ||
	       ((what & SB_NOTIFY_WRITES) && in(sb_fcall_write_names, name));
}

/* The conditions under which the agent profile allows these syscalls
 * (contrib/seccomp/README.md): argument `idx` & mask == 0, i.e. no
 * S_ISUID/S_ISGID in a created or chmod'ed file's mode, or an open that
 * creates nothing. A call of `name` is allowed when one of its
 * conditions holds; the listener refuses the others (refuses_setid), so
 * moving the syscall to the NOTIFY rule keeps what the profile allows. */
static const struct {
	const char *name;
	unsigned int idx;
	uint64_t mask;
} setid_conds[] = {
	{ "open", 1, O_CREAT | SB_O_TMPFILE_BIT },
	{ "open", 2, S_ISUID | S_ISGID },
	{ "openat", 2, O_CREAT | SB_O_TMPFILE_BIT },
	{ "openat", 3, S_ISUID | S_ISGID },
	{ "creat", 1, S_ISUID | S_ISGID },
	{ "chmod", 1, S_ISUID | S_ISGID },
	{ "fchmodat", 2, S_ISUID | S_ISGID },
	{ "fchmodat2", 2, S_ISUID | S_ISGID },
	{ "mknod", 1, S_ISUID | S_ISGID },
	{ "mknodat", 2, S_ISUID | S_ISGID },
};

static bool reproduced(const char *name, const struct oci_seccomp_arg *c)
{
	if (c->op != OCI_SCMP_CMP_MASKED_EQ || c->value_two != 0)
		return false;
	for (size_t i = 0; i < AR_ARRAY_SIZE(setid_conds); i++)
		if (strcmp(setid_conds[i].name, name) == 0 &&
		    setid_conds[i].idx == c->index &&
		    setid_conds[i].mask == c->value)
			return true;
	return false;
}

/* What the profile's conditional rules refuse for the calls that come
 * here instead. The arguments are registers: no race. */
static bool refuses_setid(const char *name, const struct seccomp_data *d)
{
	bool any = false;

	for (size_t i = 0; i < AR_ARRAY_SIZE(setid_conds); i++) {
		if (strcmp(setid_conds[i].name, name) != 0)
			continue;
		any = true;
		if ((d->args[setid_conds[i].idx] & setid_conds[i].mask) == 0)
			return false;
	}
	return any;
}

/* open/openat with --audit alone: ALLOW without a write flag, NOTIFY
 * with one (one rule per flag: the conditions on one argument are
 * ORed). */
static void open_split(struct oci_seccomp_syscall *v, struct ar_arena *a,
		       const char *name, unsigned int idx)
{
	static const uint64_t bits[] = { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC,
					 SB_O_TMPFILE_BIT };
	struct oci_seccomp_arg *ro = oci_arena_calloc(a, 1, sizeof(*ro));
	struct oci_seccomp_arg *w =
		oci_arena_calloc(a, AR_ARRAY_SIZE(bits), sizeof(*w));
	char **names = oci_arena_calloc(a, 2, sizeof(char *));

	names[0] = oci_arena_strdup(a, name);
	*ro = (struct oci_seccomp_arg){ idx, SB_OPEN_WRITE_FLAGS, 0,
					OCI_SCMP_CMP_MASKED_EQ };
	for (size_t i = 0; i < AR_ARRAY_SIZE(bits); i++)
		w[i] = (struct oci_seccomp_arg){ idx, bits[i], bits[i],
						 OCI_SCMP_CMP_MASKED_EQ };
	v[0] = (struct oci_seccomp_syscall){ .names = { names, 1 },
					     .action = OCI_SCMP_ACT_ALLOW,
					     .args = ro,
					     .n_args = 1 };
	v[1] = (struct oci_seccomp_syscall){ .names = { names, 1 },
					     .action = OCI_SCMP_ACT_NOTIFY,
					     .args = w,
					     .n_args = AR_ARRAY_SIZE(bits) };
}

/* The sends that open a TCP connection by themselves (TCP Fast Open:
 * MSG_FASTOPEN in their flags, argument `idx`): with --audit, NOTIFY
 * with the flag, ALLOW without it (a send on a connected socket costs
 * no round trip). */
static const struct {
	const char *name;
	unsigned int idx;
} fastopen_sends[] = { { "sendto", 3 }, { "sendmsg", 2 }, { "sendmmsg", 3 } };

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

static int fastopen_index(const char *name)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(fastopen_sends); i++)
		if (strcmp(fastopen_sends[i].name, name) == 0)
			return (int)i;
	return -1;
}

static void fastopen_split(struct oci_seccomp_syscall *v, struct ar_arena *a,
			   const char *name, unsigned int idx)
{
	struct oci_seccomp_arg *c = oci_arena_calloc(a, 2, sizeof(*c));
	char **names = oci_arena_calloc(a, 2, sizeof(char *));

	names[0] = oci_arena_strdup(a, name);
	c[0] = (struct oci_seccomp_arg){ idx, MSG_FASTOPEN, 0,
					 OCI_SCMP_CMP_MASKED_EQ };
	c[1] = (struct oci_seccomp_arg){ idx, MSG_FASTOPEN, MSG_FASTOPEN,
					 OCI_SCMP_CMP_MASKED_EQ };
	v[0] = (struct oci_seccomp_syscall){ .names = { names, 1 },
					     .action = OCI_SCMP_ACT_ALLOW,
					     .args = c,
					     .n_args = 1 };
	v[1] = (struct oci_seccomp_syscall){ .names = { names, 1 },
					     .action = OCI_SCMP_ACT_NOTIFY,
					     .args = c + 1,
					     .n_args = 1 };
}

int sb_notify_rules(struct oci_seccomp *sc, struct ar_arena *a, int what,
		    const char *listener_path, struct ar_error *err)
{
	struct oci_seccomp_syscall *v;
	const char **moved;
	size_t n_moved = 0, total = 0, n_v;
	/* --audit without --learn: reads are not observed */
	bool split = (what & SB_NOTIFY_WRITES) && !(what & SB_NOTIFY_PATHS);
	bool split_open = false, split_openat = false;
	bool split_send[AR_ARRAY_SIZE(fastopen_sends)] = { false };

	if (!sc)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --audit/--learn need the seccomp profile, and the sandbox has none");
	if (sc->default_action == OCI_SCMP_ACT_NOTIFY || sc->listener_path)
		return ar_error_set_plain(
			err, EBUSY,
			"sandbox: --audit/--learn: the seccomp profile already has a notification listener (the kernel allows one per process)");
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		const struct oci_seccomp_syscall *s = &sc->syscalls[i];

		if (s->action == OCI_SCMP_ACT_NOTIFY)
			return ar_error_set_plain(
				err, EBUSY,
				"sandbox: --audit/--learn: the seccomp profile already uses SCMP_ACT_NOTIFY (syscalls[%zu]); the kernel allows one listener per process",
				i);
		total += s->names.n;
		for (size_t j = 0;
		     s->action == OCI_SCMP_ACT_ALLOW && j < s->names.n; j++) {
			if (!wanted(what, s->names.v[j]))
				continue;
			for (size_t k = 0; k < s->n_args; k++)
				if (!reproduced(s->names.v[j], &s->args[k]))
					return ar_error_set_plain(
						err, EINVAL,
						"sandbox: --audit/--learn: syscalls[%zu].args[%zu] allows `%s` under a condition the listener cannot reproduce",
						i, k, s->names.v[j]);
		}
	}
	moved = oci_arena_calloc(a, total + 1, sizeof(char *));
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		struct oci_seccomp_syscall *s = &sc->syscalls[i];
		const char **keep;
		size_t n_keep = 0;

		/* Conditional rules too (open and openat are allowed
		 * without S_ISUID/S_ISGID in a created file's mode): the
		 * listener answers those itself (refuses_setid). */
		if (s->action != OCI_SCMP_ACT_ALLOW)
			continue;
		keep = oci_arena_calloc(a, s->names.n + 1, sizeof(char *));
		for (size_t j = 0; j < s->names.n; j++) {
			const char *nm = s->names.v[j];
			bool dup = false;
			int fo = fastopen_index(nm);

			if ((what & SB_NOTIFY_CONNECT) && fo >= 0 &&
			    s->n_args == 0) {
				split_send[fo] = true;
				continue;
			}
			if (!wanted(what, nm)) {
				keep[n_keep++] = nm;
				continue;
			}
			if (split && strcmp(nm, "open") == 0) {
				split_open = true;
				continue;
			}
			if (split && strcmp(nm, "openat") == 0) {
				split_openat = true;
				continue;
			}
			for (size_t k = 0; k < n_moved && !dup; k++)
				dup = strcmp(moved[k], nm) == 0;
			if (!dup)
				moved[n_moved++] = nm;
		}
		s->names.v = (char **)keep;
		s->names.n = n_keep;
	}
	if (n_moved == 0)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --audit/--learn: the seccomp profile allows none of the observed syscalls unconditionally");
	v = oci_arena_calloc(a,
			     sc->n_syscalls + 5 + 2 * AR_ARRAY_SIZE(split_send),
			     sizeof(*v));
	memcpy(v, sc->syscalls, sc->n_syscalls * sizeof(*v));
	n_v = sc->n_syscalls;
	v[n_v].names.v = (char **)moved;
	v[n_v].names.n = n_moved;
	v[n_v].action = OCI_SCMP_ACT_NOTIFY;
	n_v++;
	if (split_open) {
		open_split(v + n_v, a, "open", 1);
		n_v += 2;
	}
	if (split_openat) {
		open_split(v + n_v, a, "openat", 2);
		n_v += 2;
	}
	for (size_t i = 0; i < AR_ARRAY_SIZE(split_send); i++) {
		if (!split_send[i])
			continue;
		fastopen_split(v + n_v, a, fastopen_sends[i].name,
			       fastopen_sends[i].idx);
		n_v += 2;
	}
	sc->syscalls = v;
	sc->n_syscalls = n_v;
	sc->listener_path = oci_arena_strdup(a, listener_path);
	return 0;
}

/* ---- reading the process ---- */

struct sb_notify {
	struct ar_audit *audit;
	struct sb_learn *learn;
	char dir[64];
	char sock[96];
	int listen_fd;
	int stop[2];
	pthread_t thread;
	bool started;
	pid_t init_pid; /* the container process (host pid) */
	char *const *init_argv; /* its process.args */
	/* the sandbox's pid 1 is an init (runtime/lib/init.h): it forks the
	 * command, whose first execve is that of process.args, and itself
	 * executes agentrun-init (an execveat of a memfd): each seen once,
	 * by the listener's thread only */
	bool program_seen, init_image_seen;
	atomic_ulong count;
	const struct sb_protect *protect; /* --audit: the protected paths */
	struct sb_attempts *attempts;
};

static char **read_argv(int mem, uint64_t addr, size_t *n_out)
{
	char **v = NULL;
	size_t n = 0, bytes = 0;

	*n_out = 0;
	if (addr == 0)
		return NULL;
	v = ar_xcalloc(SB_MAX_ARGS + 1, sizeof(char *));
	while (n < SB_MAX_ARGS && bytes < SB_MAX_ARGV_BYTES) {
		uint64_t p = 0;

		if (pread(mem, &p, sizeof(p), (off_t)(addr + 8 * n)) !=
		    (ssize_t)sizeof(p))
			break;
		if (p == 0)
			break;
		v[n] = sb_read_str(mem, p);
		if (!v[n])
			break;
		bytes += strlen(v[n]) + 1;
		n++;
	}
	*n_out = n;
	if (n == 0 && mem < 0) {
		free(v);
		return NULL;
	}
	return v;
}

static void free_argv(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static pid_t proc_ppid(pid_t pid)
{
	struct ar_proc_stat ps;

	return ar_proc_stat_read(pid, &ps) < 0 ? 0 : ps.ppid;
}

static void format_sockaddr(const unsigned char *buf, size_t len,
			    struct ar_jbuf *b)
{
	sa_family_t fam;
	char text[INET6_ADDRSTRLEN];

	if (len < sizeof(sa_family_t)) {
		ar_jbuf_lit(b, ",\"family\":null");
		return;
	}
	memcpy(&fam, buf, sizeof(fam));
	if (fam == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in sin;

		memcpy(&sin, buf, sizeof(sin));
		inet_ntop(AF_INET, &sin.sin_addr, text, sizeof(text));
		ar_jbuf_addf(
			b,
			",\"family\":\"inet\",\"address\":\"%s\",\"port\":%u",
			text, (unsigned)ntohs(sin.sin_port));
	} else if (fam == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, buf, sizeof(sin6));
		inet_ntop(AF_INET6, &sin6.sin6_addr, text, sizeof(text));
		ar_jbuf_addf(
			b,
			",\"family\":\"inet6\",\"address\":\"%s\",\"port\":%u",
			text, (unsigned)ntohs(sin6.sin6_port));
	} else if (fam == AF_UNIX) {
		const char *path = (const char *)buf + sizeof(sa_family_t);
		size_t pl = len - sizeof(sa_family_t);

		ar_jbuf_lit(b, ",\"family\":\"unix\",\"address\":");
		if (pl > 0 && path[0] == '\0') {
			/* abstract: shown with a leading @ */
			_cleanup_free_ char *s = ar_xmalloc(pl + 1);

			s[0] = '@';
			memcpy(s + 1, path + 1, pl - 1);
			ar_jbuf_str(b, s, pl);
		} else {
			ar_jbuf_str(b, path, strnlen(path, pl));
		}
	} else {
		ar_jbuf_addf(b, ",\"family\":%u", (unsigned)fam);
	}
}

/* ---- one notification ---- */

struct pending {
	struct ar_jbuf line; /* an audit event, emitted once the id is valid */
	struct ar_jbuf prot[2]; /* protected_attempt events, per path */
	char *prot_path[2]; /* their paths (for the summary) */
	const char *prot_op;
	char *paths[2]; /* learn: absolute paths */
	bool write;
	bool exec; /* learn: paths[0] is executed */
	bool mkdir; /* learn: paths[0] is a directory being made */
};

static void handle_exec(struct sb_notify *n, const struct seccomp_notif *req,
			int mem, bool at, struct pending *out)
{
	uint64_t path_arg = at ? req->data.args[1] : req->data.args[0];
	uint64_t argv_arg = at ? req->data.args[2] : req->data.args[1];
	_cleanup_free_ char *path = sb_read_str(mem, path_arg);
	_cleanup_free_ char *cwd = NULL;
	char **argv;
	size_t argc;

	if (n->learn) {
		out->paths[0] = sb_path_lexical(
			(pid_t)req->pid, at ? (int)req->data.args[0] : AT_FDCWD,
			path);
		out->exec = true;
	}
	if (!n->audit)
		return;
	argv = read_argv(mem, argv_arg, &argc);
	cwd = sb_proc_link((pid_t)req->pid, "cwd");
	ar_audit_begin(&out->line, "exec");
	ar_jbuf_addf(&out->line, ",\"pid\":%u,\"ppid\":%d", req->pid,
		     (int)proc_ppid((pid_t)req->pid));
	ar_jbuf_key(&out->line, "path");
	ar_jbuf_cstr(&out->line, path);
	ar_jbuf_key(&out->line, "argv");
	if (argv)
		ar_jbuf_strv(&out->line, argv, argc);
	else
		ar_jbuf_lit(&out->line, "null");
	ar_jbuf_key(&out->line, "cwd");
	ar_jbuf_cstr(&out->line, cwd);
	if (at)
		ar_jbuf_addf(&out->line, ",\"dirfd\":%d,\"flags\":%d",
			     (int)req->data.args[0], (int)req->data.args[4]);
	free_argv(argv, argc);
}

/* The container process's own execve, before which it is not dumpable
 * when the runtime is unprivileged (its credentials changed in its user
 * namespace): /proc/PID/mem is closed to us. Its argv is the config's
 * process.args; the path is argv[0] looked up in PATH here. */
static void init_exec(struct sb_notify *n, const struct seccomp_notif *req,
		      struct pending *out)
{
	_cleanup_free_ char *cwd = sb_proc_link((pid_t)req->pid, "cwd");
	_cleanup_free_ char *path = NULL;
	const char *a0 = n->init_argv[0] ? n->init_argv[0] : "";
	size_t argc = 0;

	while (n->init_argv[argc])
		argc++;
	if (strchr(a0, '/')) {
		path = ar_xstrdup(a0);
	} else {
		const char *env = getenv("PATH");
		_cleanup_free_ char *dirs =
			ar_xstrdup(env ? env : "/usr/local/bin:/usr/bin:/bin");
		char *save = NULL;

		for (char *d = strtok_r(dirs, ":", &save); d && !path;
		     d = strtok_r(NULL, ":", &save)) {
			_cleanup_free_ char *c = ar_xasprintf("%s/%s", d, a0);

			if (access(c, X_OK) == 0)
				path = ar_steal_ptr(&c);
		}
	}
	ar_audit_begin(&out->line, "exec");
	ar_jbuf_addf(&out->line, ",\"pid\":%u,\"ppid\":%d", req->pid,
		     (int)proc_ppid((pid_t)req->pid));
	ar_jbuf_key(&out->line, "path");
	ar_jbuf_cstr(&out->line, path);
	ar_jbuf_key(&out->line, "argv");
	ar_jbuf_strv(&out->line, n->init_argv, argc);
	ar_jbuf_key(&out->line, "cwd");
	ar_jbuf_cstr(&out->line, cwd);
	ar_jbuf_lit(&out->line, ",\"from\":\"config\"");
}

static void handle_connect(struct sb_notify *n, const struct seccomp_notif *req,
			   int mem, struct pending *out)
{
	unsigned char buf[sizeof(struct sockaddr_storage)];
	size_t len = (size_t)req->data.args[2];
	ssize_t r;

	if (!n->audit)
		return;
	if (len > sizeof(buf))
		len = sizeof(buf);
	r = req->data.args[1] ? pread(mem, buf, len, (off_t)req->data.args[1]) :
				-1;
	ar_audit_begin(&out->line, "connect");
	ar_jbuf_addf(&out->line, ",\"pid\":%u,\"fd\":%d", req->pid,
		     (int)req->data.args[0]);
	format_sockaddr(buf, r > 0 ? (size_t)r : 0, &out->line);
}

/* A send with MSG_FASTOPEN (the only ones notified): it opens a TCP
 * connection like connect does, and is recorded as one, with
 * "syscall". sendmsg and sendmmsg: the address of the (first)
 * message. */
static void handle_fastopen(struct sb_notify *n,
			    const struct seccomp_notif *req, int mem,
			    const char *sys, struct pending *out)
{
	unsigned char buf[sizeof(struct sockaddr_storage)];
	uint64_t addr = req->data.args[4], len = req->data.args[5];
	ssize_t r = -1;

	if (!n->audit)
		return;
	if (strcmp(sys, "sendto") != 0) {
		struct msghdr mh;

		addr = len = 0;
		if (mem >= 0 && req->data.args[1] &&
		    pread(mem, &mh, sizeof(mh), (off_t)req->data.args[1]) ==
			    (ssize_t)sizeof(mh)) {
			addr = (uint64_t)(uintptr_t)mh.msg_name;
			len = mh.msg_namelen;
		}
	}
	if (len > sizeof(buf))
		len = sizeof(buf);
	if (mem >= 0 && addr)
		r = pread(mem, buf, (size_t)len, (off_t)addr);
	ar_audit_begin(&out->line, "connect");
	ar_jbuf_addf(&out->line, ",\"pid\":%u,\"fd\":%d", req->pid,
		     (int)req->data.args[0]);
	format_sockaddr(buf, r > 0 ? (size_t)r : 0, &out->line);
	ar_jbuf_key(&out->line, "syscall");
	ar_jbuf_cstr(&out->line, sys);
}

/* learn: the path(s) of a file syscall and whether it writes. */
static void learn_paths(const struct seccomp_notif *req, int mem,
			const struct sb_fcall *fc, struct pending *out)
{
	for (size_t i = 0; i < fc->n; i++) {
		_cleanup_free_ char *s = sb_read_str(mem, fc->p[i].addr);

		out->paths[i] =
			sb_path_lexical((pid_t)req->pid, fc->p[i].dfd, s);
	}
	out->write = fc->write;
	out->exec = fc->op == SB_FOP_EXEC;
	out->mkdir = fc->op == SB_FOP_MKDIR;
}

static const char *const how_names[] = {
	[SB_PROT_RO] = "read-only",
	[SB_PROT_PIN] = "pinned",
	[SB_PROT_ABSENT] = "placeholder",
	[SB_PROT_WATCH] = "watched",
};

/* --audit: an event for each path of the call that is a protected path
 * (as the kernel will resolve it). */
static void protected_paths(struct sb_notify *n,
			    const struct seccomp_notif *req, int mem,
			    const struct sb_fcall *fc, struct pending *out)
{
	for (size_t i = 0; i < fc->n; i++) {
		_cleanup_free_ char *arg = sb_read_str(mem, fc->p[i].addr);
		_cleanup_free_ char *path = NULL;
		const struct sb_protect_entry *e;
		struct ar_jbuf *b = &out->prot[i];
		bool below = false;

		if (!arg)
			continue;
		path = sb_path_resolve((pid_t)req->pid, fc->p[i].dfd, arg,
				       fc->p[i].follow);
		e = sb_protect_attempt(n->protect, path, fc->p[i].move, &below);
		if (!e)
			continue;
		ar_audit_begin(b, "protected_attempt");
		ar_jbuf_addf(b, ",\"pid\":%u", req->pid);
		ar_jbuf_key(b, "op");
		ar_jbuf_cstr(b, fc->op_name);
		ar_jbuf_key(b, "syscall");
		ar_jbuf_cstr(b, fc->syscall);
		ar_jbuf_key(b, "path");
		ar_jbuf_cstr(b, path);
		ar_jbuf_key(b, "arg");
		ar_jbuf_cstr(b, arg);
		ar_jbuf_key(b, "protected");
		ar_jbuf_cstr(b, e->path);
		ar_jbuf_key(b, "how");
		ar_jbuf_cstr(b, how_names[e->kind]);
		ar_jbuf_key(b, "why");
		ar_jbuf_cstr(b, e->why);
		if (below)
			ar_jbuf_lit(b, ",\"below\":true");
		out->prot_path[i] = ar_steal_ptr(&path);
		out->prot_op = fc->op_name;
	}
}

static void count_attempt(struct sb_attempts *at, const char *path,
			  const char *op)
{
	at->n++;
	for (size_t i = 0; i < at->n_named; i++)
		if (strcmp(at->named[i].path, path) == 0)
			return;
	if (at->n_named < SB_ATTEMPTS_NAMED) {
		at->named[at->n_named].path = ar_xstrdup(path);
		at->named[at->n_named].op = op;
		at->n_named++;
	} else {
		at->more = true;
	}
}

void sb_attempts_free(struct sb_attempts *at)
{
	for (size_t i = 0; at && i < at->n_named; i++)
		free(at->named[i].path);
	if (at)
		memset(at, 0, sizeof(*at));
}

/* Syscall numbers and pointer sizes are those of this build's
 * architecture; a compat process (a 32-bit binary) is not decoded for
 * exec and connect (its argv and sockaddr differ), only for paths. */
static bool native_arch(__u32 arch, int nr)
{
#if defined(__x86_64__)
	return arch == AUDIT_ARCH_X86_64 && !(nr & X32_BIT);
#elif defined(__aarch64__)
	(void)nr;
	return arch == AUDIT_ARCH_AARCH64;
#else
	(void)arch;
	(void)nr;
	return true;
#endif
}

static void handle(struct sb_notify *n, int nfd, struct seccomp_notif *req)
{
	struct seccomp_notif_resp resp;
	struct pending pd;
	struct sb_fcall fc;
	char mp[64];
	_cleanup_close_ int mem = -1;
	_cleanup_free_ char *sys =
		ar_seccomp_syscall_name(req->data.arch, req->data.nr);
	bool native = native_arch(req->data.arch, req->data.nr);
	bool is_exec = sys && native && strncmp(sys, "execve", 6) == 0;
	uint64_t args[6];

	memset(&pd, 0, sizeof(pd));
	for (size_t i = 0; i < 6; i++)
		args[i] = req->data.args[i];
	snprintf(mp, sizeof(mp), "/proc/%u/mem", req->pid);
	mem = open(mp, O_RDONLY | O_CLOEXEC);
	if (is_exec && req->pid == (__u32)n->init_pid && !n->init_image_seen &&
	    strcmp(sys, "execveat") == 0) {
		/* the init's own image, not the agent's: no event (a later
		 * one, of anything pid 1 is made to run, is reported) */
		n->init_image_seen = true;
	} else if (is_exec && mem < 0 && n->audit && !n->program_seen &&
		   strcmp(sys, "execve") == 0 &&
		   (req->pid == (__u32)n->init_pid ||
		    proc_ppid((pid_t)req->pid) == n->init_pid)) {
		/* the container process's, or, under the init, that of the
		 * command it forked: the first execve of a child of pid 1
		 * (nothing else of the sandbox runs before it) */
		n->program_seen = true;
		init_exec(n, req, &pd);
	} else if (is_exec)
		/* mem < 0 (not dumpable): the event with nulls */
		handle_exec(n, req, mem, strcmp(sys, "execveat") == 0, &pd);
	else if (sys && native && strcmp(sys, "connect") == 0)
		handle_connect(n, req, mem, &pd);
	else if (sys && native && fastopen_index(sys) >= 0)
		handle_fastopen(n, req, mem, sys, &pd);
	else if (sys && mem >= 0 && sb_fcall_decode(sys, args, mem, &fc)) {
		if (n->learn)
			learn_paths(req, mem, &fc, &pd);
		if (n->audit && n->protect && fc.write)
			protected_paths(n, req, mem, &fc, &pd);
	}
	/* What was read belongs to the syscall only if it is still waiting. */
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0) {
		if (pd.line.p && n->audit)
			ar_audit_emit(n->audit, &pd.line);
		for (size_t i = 0; i < 2; i++) {
			if (!pd.prot[i].p)
				continue;
			ar_audit_emit(n->audit, &pd.prot[i]);
			if (n->attempts)
				count_attempt(n->attempts, pd.prot_path[i],
					      pd.prot_op);
		}
		if (n->learn && pd.mkdir && pd.paths[0])
			sb_learn_mkdir(n->learn, pd.paths[0]);
		for (size_t i = 0; i < 2 && n->learn && !pd.mkdir; i++)
			if (pd.paths[i])
				sb_learn_path(n->learn, pd.paths[i],
					      pd.exec ? false : pd.write,
					      pd.exec);
	}
	ar_jbuf_free(&pd.line);
	for (size_t i = 0; i < 2; i++) {
		ar_jbuf_free(&pd.prot[i]);
		free(pd.prot_path[i]);
		free(pd.paths[i]);
	}

	memset(&resp, 0, sizeof(resp));
	resp.id = req->id;
	resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (sys && refuses_setid(sys, &req->data)) {
		resp.flags = 0;
		resp.error = -EPERM;
	}
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		ar_debug("audit: answer a notification: %s", strerror(errno));
	atomic_fetch_add(&n->count, 1);
}

/* ---- the thread ---- */

static int recv_fd(int sock)
{
	char data[4096];
	int fd;

	if (ar_recvmsg_fd(sock, data, sizeof(data), &fd) < 0)
		return -1;
	return fd;
}

static void *notify_thread(void *arg)
{
	struct sb_notify *n = arg;
	_cleanup_close_ int nfd = -1;
	struct seccomp_notif_sizes sizes;
	struct seccomp_notif *req;
	size_t req_size = sizeof(*req);

	for (;;) {
		struct pollfd p[2] = { { n->listen_fd, POLLIN, 0 },
				       { n->stop[0], POLLIN, 0 } };
		_cleanup_close_ int s = -1;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (p[1].revents)
			return NULL;
		s = accept4(n->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0)
			continue;
		nfd = recv_fd(s);
		if (nfd >= 0)
			break;
	}
	if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0 &&
	    sizes.seccomp_notif > req_size)
		req_size = sizes.seccomp_notif;
	req = ar_xmalloc(req_size);
	for (;;) {
		struct pollfd p[2] = { { nfd, POLLIN, 0 },
				       { n->stop[0], POLLIN, 0 } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents & POLLIN) {
			memset(req, 0, req_size);
			if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, req) == 0)
				handle(n, nfd, req);
			else if (errno != ENOENT && errno != EINTR)
				break;
			continue;
		}
		/* POLLHUP: every process of the filter is gone */
		if (p[0].revents || p[1].revents)
			break;
	}
	free(req);
	return NULL;
}

int sb_notify_start(struct ar_audit *audit, struct sb_learn *learn,
		    struct sb_notify **out, struct ar_error *err)
{
	struct sb_notify *n = ar_xcalloc(1, sizeof(*n));
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int r;

	n->audit = audit;
	n->learn = learn;
	n->listen_fd = -1;
	n->stop[0] = n->stop[1] = -1;
	snprintf(n->dir, sizeof(n->dir), "/tmp/agentrun-notify-XXXXXX");
	if (!mkdtemp(n->dir)) {
		r = ar_error_set(err, errno, "sandbox: create %s", n->dir);
		free(n);
		return r;
	}
	snprintf(n->sock, sizeof(n->sock), "%s/listener", n->dir);
	memcpy(addr.sun_path, n->sock, strlen(n->sock) + 1);
	n->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (n->listen_fd < 0 ||
	    bind(n->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(n->listen_fd, 1) < 0 || pipe2(n->stop, O_CLOEXEC) < 0) {
		r = ar_error_set(err, errno, "sandbox: listen on %s", n->sock);
		sb_notify_stop(n);
		return r;
	}
	*out = n;
	return 0;
}

int sb_notify_run(struct sb_notify *n, pid_t init_pid, char *const *init_argv,
		  struct ar_error *err)
{
	int r;

	n->init_pid = init_pid;
	n->init_argv = init_argv;
	r = pthread_create(&n->thread, NULL, notify_thread, n);

	if (r != 0)
		return ar_error_set(err, r,
				    "sandbox: start the notification thread");
	n->started = true;
	return 0;
}

void sb_notify_protect(struct sb_notify *n, const struct sb_protect *p,
		       struct sb_attempts *at)
{
	n->protect = p;
	n->attempts = at;
}

const char *sb_notify_socket(const struct sb_notify *n)
{
	return n->sock;
}

unsigned long sb_notify_count(const struct sb_notify *n)
{
	return atomic_load(&((struct sb_notify *)n)->count);
}

void sb_notify_stop(struct sb_notify *n)
{
	if (!n)
		return;
	if (n->started) {
		if (write(n->stop[1], "x", 1) < 0) {
			/* the pipe cannot be full */
		}
		pthread_join(n->thread, NULL);
		ar_debug(
			"sandbox: the audit listener answered %lu notifications",
			atomic_load(&n->count));
	}
	if (n->listen_fd >= 0)
		close(n->listen_fd);
	if (n->stop[0] >= 0)
		close(n->stop[0]);
	if (n->stop[1] >= 0)
		close(n->stop[1]);
	unlink(n->sock);
	rmdir(n->dir);
	free(n);
}
