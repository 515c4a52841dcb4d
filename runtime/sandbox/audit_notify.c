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
#include "fd_passing.h"
#include "learn.h"
#include "log.h"
#include "utils.h"

#define SB_MAX_ARGS 1024 /* argv entries read per exec */
#define SB_MAX_ARGV_BYTES (64 * 1024)
#define SB_MAX_STR 4096

/* ---- the rules ---- */

static const char *const exec_names[] = { "execve", "execveat", NULL };
static const char *const connect_names[] = { "connect", NULL };
static const char *const path_names[] = {
	"open",	    "openat",	 "openat2",  "creat",	 "mkdir",
	"mkdirat",  "unlink",	 "unlinkat", "rmdir",	 "rename",
	"renameat", "renameat2", "execve",   "execveat", NULL,
};

static bool wanted(int what, const char *name)
{
	const char *const *lists[] = {
		(what & SB_NOTIFY_EXEC) ? exec_names : NULL,
		(what & SB_NOTIFY_CONNECT) ? connect_names : NULL,
		(what & SB_NOTIFY_PATHS) ? path_names : NULL
	};

	for (size_t i = 0; i < AR_ARRAY_SIZE(lists); i++)
		for (const char *const *p = lists[i]; p && *p; p++)
			if (strcmp(*p, name) == 0)
				return true;
	return false;
}

int sb_notify_rules(struct oci_seccomp *sc, struct ar_arena *a, int what,
		    const char *listener_path, struct ar_error *err)
{
	struct oci_seccomp_syscall *v;
	const char **moved;
	size_t n_moved = 0, total = 0;

	if (!sc)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --audit/--learn need the seccomp profile, and the sandbox has none");
	if (sc->default_action == OCI_SCMP_ACT_NOTIFY || sc->listener_path)
		return ar_error_set_plain(
			err, EBUSY,
			"sandbox: --audit/--learn: the seccomp profile already has a notification listener (the kernel allows one per process)");
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		if (sc->syscalls[i].action == OCI_SCMP_ACT_NOTIFY)
			return ar_error_set_plain(
				err, EBUSY,
				"sandbox: --audit/--learn: the seccomp profile already uses SCMP_ACT_NOTIFY (syscalls[%zu]); the kernel allows one listener per process",
				i);
		total += sc->syscalls[i].names.n;
	}
	moved = oci_arena_calloc(a, total + 1, sizeof(char *));
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		struct oci_seccomp_syscall *s = &sc->syscalls[i];
		const char **keep;
		size_t n_keep = 0;

		/* Conditional rules too (open and openat are allowed
		 * without S_ISUID/S_ISGID in a created file's mode): the
		 * listener answers those itself (refuses_setid below). */
		if (s->action != OCI_SCMP_ACT_ALLOW)
			continue;
		keep = oci_arena_calloc(a, s->names.n + 1, sizeof(char *));
		for (size_t j = 0; j < s->names.n; j++) {
			bool dup = false;

			if (!wanted(what, s->names.v[j])) {
				keep[n_keep++] = s->names.v[j];
				continue;
			}
			for (size_t k = 0; k < n_moved && !dup; k++)
				dup = strcmp(moved[k], s->names.v[j]) == 0;
			if (!dup)
				moved[n_moved++] = s->names.v[j];
		}
		s->names.v = (char **)keep;
		s->names.n = n_keep;
	}
	if (n_moved == 0)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --audit/--learn: the seccomp profile allows none of the observed syscalls unconditionally");
	v = oci_arena_calloc(a, sc->n_syscalls + 1, sizeof(*v));
	memcpy(v, sc->syscalls, sc->n_syscalls * sizeof(*v));
	v[sc->n_syscalls].names.v = (char **)moved;
	v[sc->n_syscalls].names.n = n_moved;
	v[sc->n_syscalls].action = OCI_SCMP_ACT_NOTIFY;
	sc->syscalls = v;
	sc->n_syscalls++;
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
	atomic_ulong count;
};

/* A NUL-terminated string at addr (at most SB_MAX_STR bytes), malloc'd;
 * NULL when unreadable. Reads never cross a page they do not need. */
static char *read_str(int mem, uint64_t addr)
{
	char *s = ar_xmalloc(SB_MAX_STR + 1);
	size_t len = 0;

	if (addr == 0) {
		free(s);
		return NULL;
	}
	while (len < SB_MAX_STR) {
		size_t chunk = 4096 - ((addr + len) & 4095);
		ssize_t r;
		char *nul;

		if (chunk > SB_MAX_STR - len)
			chunk = SB_MAX_STR - len;
		r = pread(mem, s + len, chunk, (off_t)(addr + len));
		if (r <= 0) {
			free(s);
			return NULL;
		}
		nul = memchr(s + len, '\0', (size_t)r);
		if (nul)
			return s;
		len += (size_t)r;
	}
	s[len] = '\0'; /* truncated */
	return s;
}

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
		v[n] = read_str(mem, p);
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

static char *proc_link(pid_t pid, const char *what)
{
	char p[64], buf[4096];
	ssize_t r;

	snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, what);
	r = readlink(p, buf, sizeof(buf) - 1);
	if (r < 0)
		return NULL;
	buf[r] = '\0';
	return ar_xstrdup(buf);
}

static pid_t proc_ppid(pid_t pid)
{
	char p[64], buf[512], *e;
	_cleanup_close_ int fd = -1;
	ssize_t r;
	long ppid;
	char *end;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	r = read(fd, buf, sizeof(buf) - 1);
	if (r <= 0)
		return 0;
	buf[r] = '\0';
	e = strrchr(buf, ')');
	/* ") S PPID ...": the state, then the parent */
	if (!e || strlen(e) < 5)
		return 0;
	ppid = strtol(e + 4, &end, 10);
	if (end == e + 4 || ppid <= 0 || ppid > INT_MAX)
		return 0;
	return (pid_t)ppid;
}

/* The directory a dirfd argument names, for relative paths. */
static char *dir_of(pid_t pid, int dfd)
{
	char what[32];

	if (dfd == AT_FDCWD)
		return proc_link(pid, "cwd");
	snprintf(what, sizeof(what), "fd/%d", dfd);
	return proc_link(pid, what);
}

/* Absolute, with . and .. and repeated slashes resolved lexically. */
static char *absolute(pid_t pid, int dfd, const char *path)
{
	_cleanup_free_ char *base = NULL;
	_cleanup_free_ char *joined = NULL;
	char *out, *o;
	const char *p;

	if (!path)
		return NULL;
	if (path[0] != '/') {
		base = dir_of(pid, dfd);
		if (!base || base[0] != '/')
			return NULL;
		joined = ar_xasprintf("%s/%s", base, path);
		path = joined;
	}
	out = ar_xmalloc(strlen(path) + 2);
	o = out;
	for (p = path; *p;) {
		const char *e;
		size_t l;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		l = (size_t)(e - p);
		if (l == 1 && p[0] == '.') {
			/* nothing */
		} else if (l == 2 && p[0] == '.' && p[1] == '.') {
			while (o > out && *--o != '/')
				;
		} else {
			*o++ = '/';
			memcpy(o, p, l);
			o += l;
		}
		p = e;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
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
	char *paths[2]; /* learn: absolute paths */
	bool write;
	bool mkdir; /* learn: paths[0] is a directory being made */
};

static void handle_exec(struct sb_notify *n, const struct seccomp_notif *req,
			int mem, bool at, struct pending *out)
{
	uint64_t path_arg = at ? req->data.args[1] : req->data.args[0];
	uint64_t argv_arg = at ? req->data.args[2] : req->data.args[1];
	_cleanup_free_ char *path = read_str(mem, path_arg);
	_cleanup_free_ char *cwd = NULL;
	char **argv;
	size_t argc;

	if (n->learn)
		out->paths[0] = absolute((pid_t)req->pid,
					 at ? (int)req->data.args[0] : AT_FDCWD,
					 path);
	if (!n->audit)
		return;
	argv = read_argv(mem, argv_arg, &argc);
	cwd = proc_link((pid_t)req->pid, "cwd");
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
	_cleanup_free_ char *cwd = proc_link((pid_t)req->pid, "cwd");
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

static int nr_of(const char *name)
{
	static const struct {
		const char *name;
		long nr;
	} t[] = {
#ifdef __NR_open
		{ "open", __NR_open },
#endif
#ifdef __NR_creat
		{ "creat", __NR_creat },
#endif
#ifdef __NR_mkdir
		{ "mkdir", __NR_mkdir },
#endif
#ifdef __NR_unlink
		{ "unlink", __NR_unlink },
#endif
#ifdef __NR_rmdir
		{ "rmdir", __NR_rmdir },
#endif
#ifdef __NR_rename
		{ "rename", __NR_rename },
#endif
		{ "openat", __NR_openat },     { "openat2", __NR_openat2 },
		{ "mkdirat", __NR_mkdirat },   { "unlinkat", __NR_unlinkat },
		{ "renameat", __NR_renameat }, { "renameat2", __NR_renameat2 },
	};
	for (size_t i = 0; i < AR_ARRAY_SIZE(t); i++)
		if (strcmp(t[i].name, name) == 0)
			return (int)t[i].nr;
	return -1;
}

/* learn: the path(s) of a file syscall and whether it writes. */
static void handle_path(const struct seccomp_notif *req, int mem,
			struct pending *out)
{
	const __u64 *a = req->data.args;
	int nr = req->data.nr;
	int dfd = AT_FDCWD, dfd2 = AT_FDCWD;
	uint64_t p1 = 0, p2 = 0;
	uint64_t flags = 0;
	bool w = true;
	_cleanup_free_ char *s1 = NULL;
	_cleanup_free_ char *s2 = NULL;

	if (nr == nr_of("open")) {
		p1 = a[0];
		flags = a[1];
		w = false;
	} else if (nr == nr_of("openat")) {
		dfd = (int)a[0];
		p1 = a[1];
		flags = a[2];
		w = false;
	} else if (nr == nr_of("openat2")) {
		dfd = (int)a[0];
		p1 = a[1];
		if (!a[2] || pread(mem, &flags, sizeof(flags), (off_t)a[2]) !=
				     (ssize_t)sizeof(flags))
			flags = 0;
		w = false;
	} else if (nr == nr_of("creat") || nr == nr_of("mkdir") ||
		   nr == nr_of("unlink") || nr == nr_of("rmdir")) {
		p1 = a[0];
	} else if (nr == nr_of("mkdirat") || nr == nr_of("unlinkat")) {
		dfd = (int)a[0];
		p1 = a[1];
	} else if (nr == nr_of("rename")) {
		p1 = a[0];
		p2 = a[1];
	} else if (nr == nr_of("renameat") || nr == nr_of("renameat2")) {
		dfd = (int)a[0];
		p1 = a[1];
		dfd2 = (int)a[2];
		p2 = a[3];
	} else {
		return;
	}
	if (!w)
		w = (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0;
	s1 = read_str(mem, p1);
	out->paths[0] = absolute((pid_t)req->pid, dfd, s1);
	if (p2) {
		s2 = read_str(mem, p2);
		out->paths[1] = absolute((pid_t)req->pid, dfd2, s2);
	}
	out->write = w;
	out->mkdir = nr == nr_of("mkdir") || nr == nr_of("mkdirat");
}

/* Syscall numbers and pointer sizes are those of this build's
 * architecture; a compat process (a 32-bit binary) is not decoded. */
static bool native_arch(__u32 arch)
{
#if defined(__x86_64__)
	return arch == AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
	return arch == AUDIT_ARCH_AARCH64;
#else
	(void)arch;
	return true;
#endif
}

/* What the profile's conditional rules refuse for open, openat and
 * creat (a created file with S_ISUID or S_ISGID), for the calls that
 * come here instead. The arguments are registers: no race. */
static bool refuses_setid(const struct seccomp_data *d)
{
	const uint64_t create = O_CREAT | __O_TMPFILE,
		       setid = S_ISUID | S_ISGID;

	if (d->nr == nr_of("open"))
		return (d->args[1] & create) && (d->args[2] & setid);
	if (d->nr == nr_of("openat"))
		return (d->args[2] & create) && (d->args[3] & setid);
	if (d->nr == nr_of("creat"))
		return d->args[1] & setid;
	return false;
}

static void handle(struct sb_notify *n, int nfd, struct seccomp_notif *req)
{
	struct seccomp_notif_resp resp;
	struct pending pd;
	char mp[64];
	_cleanup_close_ int mem = -1;
	const char *name;

	memset(&pd, 0, sizeof(pd));
	snprintf(mp, sizeof(mp), "/proc/%u/mem", req->pid);
	mem = open(mp, O_RDONLY | O_CLOEXEC);
	if (!native_arch(req->data.arch))
		name = "other-arch"; /* not decoded (docs/audit.md) */
	else if (req->data.nr == __NR_execve)
		name = "execve";
	else if (req->data.nr == __NR_execveat)
		name = "execveat";
	else if (req->data.nr == __NR_connect)
		name = "connect";
	else
		name = NULL;
	if (mem < 0 && n->audit && req->pid == (__u32)n->init_pid && name &&
	    strcmp(name, "execve") == 0)
		init_exec(n, req, &pd);
	else if (name && strncmp(name, "exec", 4) == 0)
		/* mem < 0 (not dumpable): the event with nulls */
		handle_exec(n, req, mem, strcmp(name, "execveat") == 0, &pd);
	else if (name && strcmp(name, "connect") == 0)
		handle_connect(n, req, mem, &pd);
	else if (!name && n->learn && mem >= 0)
		handle_path(req, mem, &pd);
	/* What was read belongs to the syscall only if it is still waiting. */
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0) {
		if (pd.line.p && n->audit)
			ar_audit_emit(n->audit, &pd.line);
		if (n->learn && pd.mkdir && pd.paths[0])
			sb_learn_mkdir(n->learn, pd.paths[0]);
		for (size_t i = 0; i < 2 && n->learn && !pd.mkdir; i++)
			if (pd.paths[i])
				sb_learn_path(n->learn, pd.paths[i],
					      name ? false : pd.write,
					      name != NULL);
	}
	ar_jbuf_free(&pd.line);
	free(pd.paths[0]);
	free(pd.paths[1]);

	memset(&resp, 0, sizeof(resp));
	resp.id = req->id;
	resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (native_arch(req->data.arch) && refuses_setid(&req->data)) {
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
