/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/magic.h>

#include "capabilities.h"
#include "log.h"
#include "utils.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define DEFAULT_PATH                                                           \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

int ar_process_set_rlimits(const struct oci_process *p, struct ar_error *err)
{
	for (size_t i = 0; i < p->n_rlimits; i++) {
		const struct oci_rlimit *r = &p->rlimits[i];
		struct rlimit rl = {
			.rlim_cur = r->soft == UINT64_MAX ? RLIM_INFINITY :
							    (rlim_t)r->soft,
			.rlim_max = r->hard == UINT64_MAX ? RLIM_INFINITY :
							    (rlim_t)r->hard,
		};

		if (setrlimit(r->resource, &rl) < 0)
			return ar_error_set(
				err, errno,
				"process.rlimits: set %s (soft %llu, hard %llu)",
				r->type, (unsigned long long)r->soft,
				(unsigned long long)r->hard);
	}
	return 0;
}

int ar_process_set_io_priority(const struct oci_process *p,
			       struct ar_error *err)
{
	const int who_process = 1; /* IOPRIO_WHO_PROCESS */
	int prio;

	if (!p->io_priority.set)
		return 0;
	prio = (p->io_priority.klass << 13) | (p->io_priority.priority & 0xff);
	if (syscall(SYS_ioprio_set, who_process, 0, prio) < 0)
		return ar_error_set(err, errno, "process.ioPriority: set %s %d",
				    p->io_priority.class_name,
				    p->io_priority.priority);
	return 0;
}

/* struct sched_attr of sched_setattr(2); glibc 2.36 has no wrapper. */
struct ar_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

int ar_process_set_scheduler(const struct oci_process *p, struct ar_error *err)
{
	const struct oci_scheduler *s = &p->scheduler;
	struct ar_sched_attr attr;

	if (!s->set)
		return 0;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = (uint32_t)s->policy;
	attr.sched_nice = s->nice.set ? s->nice.v : 0;
	attr.sched_priority = s->priority.set ? (uint32_t)s->priority.v : 0;
	attr.sched_runtime = s->runtime.set ? s->runtime.v : 0;
	attr.sched_deadline = s->deadline.set ? s->deadline.v : 0;
	attr.sched_period = s->period.set ? s->period.v : 0;
	for (size_t i = 0; i < s->flags.n; i++)
		attr.sched_flags |= oci_sched_flag_value(s->flags.v[i]);
	if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0)
		return ar_error_set(err, errno, "process.scheduler: set %s",
				    s->policy_name ? s->policy_name : "policy");
	return 0;
}

int ar_process_set_user(const struct oci_process *p, bool setgroups_denied,
			bool keep_groups, struct ar_error *err)
{
	const struct oci_user *u = &p->user;

	if (ar_caps_prepare_keep(err) < 0)
		return -1;
	if (keep_groups)
		ar_debug("%s: the caller's supplementary groups are kept",
			 AR_ANNOTATION_KEEP_GROUPS);
	else if (!setgroups_denied || u->n_additional_gids) {
		gid_t *gids = (gid_t *)u->additional_gids;

		/* EPERM with no groups to set: setgroups is denied in the
		 * user namespace the runtime itself runs in (rootless
		 * engines); there is nothing to drop. */
		if (setgroups(u->n_additional_gids, gids) < 0 &&
		    !(errno == EPERM && u->n_additional_gids == 0))
			return ar_error_set(
				err, errno,
				"process.user.additionalGids: setgroups (%zu groups)%s",
				u->n_additional_gids,
				setgroups_denied ?
					" (setgroups is denied in this rootless user namespace)" :
					"");
	}
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		return ar_error_set(
			err, errno,
			"process.user.gid: set gid %u (is it mapped in the user namespace?)",
			u->gid);
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		return ar_error_set(
			err, errno,
			"process.user.uid: set uid %u (is it mapped in the user namespace?)",
			u->uid);
	if (ar_caps_apply(&p->capabilities, err) < 0)
		return ar_error_wrap(err, "process.capabilities");
	if (u->umask.set)
		umask((mode_t)u->umask.v);
	return 0;
}

const char *ar_env_get(char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (char *const *e = env; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

static bool is_executable_file(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	       access(path, X_OK) == 0;
}

char *ar_process_find_executable(const char *name, char *const *env,
				 struct ar_error *err)
{
	const char *path, *p, *end;
	char buf[PATH_MAX];
	int saved = ENOENT;

	if (!name || !*name) {
		ar_error_set_plain(err, EINVAL, "process.args: empty");
		return NULL;
	}
	if (strchr(name, '/')) {
		if (is_executable_file(name))
			return ar_xstrdup(name);
		/* "exec" in the words, as crun ("open executable") and runc
		 * ("exec: ..."): podman's tests match on it */
		ar_error_set(err, errno ? errno : EACCES,
			     "process.args[0]: cannot exec `%s`", name);
		return NULL;
	}
	path = ar_env_get(env, "PATH");
	if (!path)
		path = DEFAULT_PATH;
	for (p = path;; p = end + 1) {
		size_t dlen;

		end = strchrnul(p, ':');
		dlen = (size_t)(end - p);
		if (dlen == 0) {
			/* empty element: current directory */
			snprintf(buf, sizeof(buf), "%s", name);
		} else if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)dlen, p,
				    name) >= (int)sizeof(buf)) {
			goto next;
		}
		if (is_executable_file(buf))
			return ar_xstrdup(buf);
		if (errno == EACCES)
			saved = errno;
next:
		if (!*end)
			break;
	}
	if (saved == EACCES)
		ar_error_set(err, saved, "process.args[0]: cannot exec `%s`",
			     name);
	else
		ar_error_set_plain(
			err, ENOENT,
			"process.args[0]: executable `%s` not found in $PATH (%s)",
			name, path);
	return NULL;
}

char *ar_process_passwd_home(const char *passwd, uid_t uid)
{
	const char *line = passwd;

	while (line && *line) {
		const char *end = strchrnul(line, '\n');
		const char *f[7] = { line };
		size_t nf = 1;

		for (const char *c = line; c < end && nf < 7; c++)
			if (*c == ':')
				f[nf++] = c + 1;
		if (nf == 7) {
			char *e;
			unsigned long v = strtoul(f[2], &e, 10);

			if (e != f[2] && *e == ':' && v == (unsigned long)uid &&
			    f[6] - 1 > f[5])
				return ar_xasprintf(
					"%.*s", (int)(f[6] - 1 - f[5]), f[5]);
		}
		line = *end ? end + 1 : NULL;
	}
	return ar_xstrdup("/");
}

char *ar_process_home(const struct oci_process *p)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 1 << 20; /* enough for any real passwd */
	ssize_t n;

	for (size_t i = 0; i < p->env.n; i++)
		if (strncmp(p->env.v[i], "HOME=", 5) == 0)
			return NULL;
	/* the container's own file: we are inside its root already */
	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return ar_xstrdup("/");
	buf = ar_xcalloc(cap + 1, 1);
	while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return ar_process_passwd_home(buf, p->user.uid);
}

char **ar_process_build_env(const struct oci_process *p, int listen_fds,
			    pid_t listen_pid, const char *home)
{
	size_t n = p->env.n, k = 0;
	char **env = ar_xcalloc(n + 4, sizeof(char *));

	for (size_t i = 0; i < n; i++) {
		if (listen_fds > 0 &&
		    (strncmp(p->env.v[i], "LISTEN_FDS=", 11) == 0 ||
		     strncmp(p->env.v[i], "LISTEN_PID=", 11) == 0))
			continue;
		env[k++] = p->env.v[i];
	}
	if (home)
		env[k++] = ar_xasprintf("HOME=%s", home);
	if (listen_fds > 0) {
		env[k++] = ar_xasprintf("LISTEN_FDS=%d", listen_fds);
		env[k++] = ar_xasprintf("LISTEN_PID=%d", (int)listen_pid);
	}
	env[k] = NULL;
	return env;
}

int ar_process_prepare_fds(int preserve_fds, struct ar_error *err)
{
	unsigned first = 3 + (unsigned)(preserve_fds > 0 ? preserve_fds : 0);

	if (syscall(SYS_close_range, first, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		/* Kernels before 5.11: mark them one by one. */
		long max = sysconf(_SC_OPEN_MAX);

		for (long fd = first; fd < max && fd < 65536; fd++)
			fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	}
	for (int fd = 3; fd < (int)first; fd++) {
		int fl = fcntl(fd, F_GETFD);

		if (fl < 0)
			continue;
		if (fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC) < 0)
			return ar_error_set(err, errno,
					    "--preserve-fds: keep fd %d", fd);
	}
	return 0;
}

int ar_process_chdir(const char *cwd, struct ar_error *err)
{
	char buf[PATH_MAX];

	if (!cwd || !*cwd)
		cwd = "/";
	if (chdir(cwd) < 0)
		return ar_error_set(err, errno, "process.cwd: chdir to `%s`",
				    cwd);
	/* CVE-2024-21626: a cwd reached through a leaked host fd would not
	 * be below the container's root. */
	if (!getcwd(buf, sizeof(buf)) || buf[0] != '/')
		return ar_error_set_plain(
			err, EPERM,
			"process.cwd: `%s` is outside the container", cwd);
	return 0;
}

int ar_process_apply_limits(const struct oci_process *p, bool nnp,
			    struct ar_error *err)
{
	if (ar_process_set_rlimits(p, err) < 0 ||
	    ar_process_set_io_priority(p, err) < 0 ||
	    ar_process_set_scheduler(p, err) < 0)
		return -1;
	if (nnp && ar_set_no_new_privs(err) < 0)
		return -1;
	return 0;
}

void ar_process_chown_stdio(const struct oci_process *p)
{
	for (int fd = 0; fd < 3; fd++) {
		struct statfs sfs;

		/* Only the kernel's anonymous pipes and sockets (the
		 * runtime's own, or its caller's): a file, a named FIFO or a
		 * device of the host keeps its owner. */
		if (fstatfs(fd, &sfs) < 0 ||
		    (sfs.f_type != PIPEFS_MAGIC && sfs.f_type != SOCKFS_MAGIC))
			continue;
		/* EINVAL: the user is not mapped; EPERM: not ours */
		if (fchown(fd, p->user.uid, p->user.gid) < 0)
			ar_debug("stdio fd %d not given to %u:%u: %m", fd,
				 p->user.uid, p->user.gid);
	}
}

bool ar_process_chdir_early(const struct oci_process *p)
{
	struct ar_error e = AR_ERROR_INIT;

	return ar_process_chdir(p->cwd, &e) == 0;
}

int ar_process_enter_user(const struct oci_process *p, bool setgroups_denied,
			  bool keep_groups, bool cwd_done, struct ar_error *err)
{
	if (ar_process_set_user(p, setgroups_denied, keep_groups, err) < 0)
		return -1;
	if (!cwd_done && ar_process_chdir(p->cwd, err) < 0)
		return -1;
	return 0;
}
