/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record of a run whose end-of-run check is owed (run_record.h):
 * written and locked before the container starts, removed after the
 * check, and checked at the next start when nobody holds it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host_exec_check.h"
#include "log.h"
#include "protect.h"
#include "run_record.h"
#include "utils.h"

#define MAGIC "agentrun-unchecked-run 1"
/* a field no --rw value is (a path never starts with \001): a live
 * grant follows, its seconds, nanoseconds and directory */
#define GRANT "\001grant"
#define MAX_RECORD (256 * 1024)

static pthread_mutex_t append_lock = PTHREAD_MUTEX_INITIALIZER;

char *sb_run_record_dir(const char *home, char *const *envp)
{
	_cleanup_free_ char *s = sb_protect_state_dir(home, envp);

	return ar_xasprintf("%s/unchecked", s);
}

static bool put(FILE *f, const char *s)
{
	return fputs(s, f) >= 0 && fputc('\0', f) != EOF;
}

void sb_run_record_begin(struct sb_run_record *r, const char *dir,
			 const struct timespec *start, const char *workspace,
			 const char *const *rw, size_t n_rw)
{
	_cleanup_close_ int dfd = ar_open_dir_p(dir);
	char tmp[64], name[96], num[64];
	int fd = -1;
	FILE *f;
	bool ok;

	r->fd = -1;
	r->path = NULL;
	/* under a hidden name until it is locked: a start's recovery never
	 * takes a record being written for a run that has not started */
	snprintf(tmp, sizeof(tmp), ".new-%d", (int)getpid());
	snprintf(name, sizeof(name), "%lld.%09ld-%d", (long long)start->tv_sec,
		 start->tv_nsec, (int)getpid());
	if (dfd >= 0)
		fd = openat(dfd, tmp,
			    O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			    0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ar_warn("sandbox: cannot record the run in `%s` (%s): a run whose agentrun and keeper are both killed would go unchecked (" AR_SANDBOX_DOC
			", \"A killed sandbox\")",
			dir, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlinkat(dfd, tmp, 0);
		}
		return;
	}
	f = fdopen(fcntl(fd, F_DUPFD_CLOEXEC, 3), "we");
	ok = f != NULL && put(f, MAGIC);
	snprintf(num, sizeof(num), "%lld", (long long)start->tv_sec);
	ok = ok && put(f, num);
	snprintf(num, sizeof(num), "%ld", start->tv_nsec);
	ok = ok && put(f, num);
	snprintf(num, sizeof(num), "%d", (int)getpid());
	ok = ok && put(f, num) && put(f, workspace);
	for (size_t i = 0; ok && i < n_rw; i++)
		ok = put(f, rw[i]);
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok || fsync(fd) < 0 || renameat(dfd, tmp, dfd, name) < 0) {
		ar_warn("sandbox: cannot record the run in `%s` (%s): a run whose agentrun and keeper are both killed would go unchecked (" AR_SANDBOX_DOC
			", \"A killed sandbox\")",
			dir, strerror(errno ? errno : EIO));
		unlinkat(dfd, tmp, 0);
		close(fd);
		return;
	}
	(void)fsync(dfd);
	r->fd = fd;
	r->path = ar_xasprintf("%s/%s", dir, name);
}

void sb_run_record_end(struct sb_run_record *r)
{
	/* a grant's append (the control thread) never meets a closed fd */
	pthread_mutex_lock(&append_lock);
	if (r->fd < 0) {
		pthread_mutex_unlock(&append_lock);
		return;
	}
	/* unlinked while still locked: a recovery that opened it meanwhile
	 * sees it gone (st_nlink 0) once it gets the lock */
	unlink(r->path);
	close(r->fd);
	r->fd = -1;
	free(r->path);
	r->path = NULL;
	pthread_mutex_unlock(&append_lock);
}

void sb_run_record_grant(struct sb_run_record *r, const char *dir,
			 const struct timespec *since)
{
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	int n, ok;

	if (dir[0] != '/')
		return;
	n = asprintf(&buf, "%s%c%lld%c%ld%c%s%c", GRANT, '\0',
		     (long long)since->tv_sec, '\0', since->tv_nsec, '\0', dir,
		     '\0');
	if (n < 0) {
		buf = NULL;
		return;
	}
	/* one writer at a time (the control thread's grants), appended at
	 * the end and on disk before the grant is mounted: a recovery reads
	 * a half-written one (the machine stopped) as no grant */
	pthread_mutex_lock(&append_lock);
	if (r->fd < 0) {
		pthread_mutex_unlock(&append_lock);
		return;
	}
	errno = 0;
	ok = fstat(r->fd, &st) == 0 &&
	     pwrite(r->fd, buf, (size_t)n, st.st_size) == n &&
	     fdatasync(r->fd) == 0;
	if (!ok)
		ar_warn("sandbox: cannot add the --rw grant of `%s` to the run's record `%s` (%s): if agentrun and its keeper are both killed, the check of the run at the next start will not walk it (" AR_SANDBOX_DOC
			", \"A killed sandbox\")",
			dir, r->path, strerror(errno ? errno : EIO));
	pthread_mutex_unlock(&append_lock);
}

/* The record's fields (NUL-ended), in a buffer of `len` bytes. */
static const char *field(const char *buf, size_t len, size_t *off)
{
	const char *s = buf + *off;
	const char *end;

	if (*off >= len)
		return NULL;
	end = memchr(s, '\0', len - *off);
	if (!end)
		return NULL;
	*off += (size_t)(end - s) + 1;
	return s;
}

static char *read_all(int fd, size_t *len)
{
	struct stat st;
	char *buf;
	size_t n = 0;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > MAX_RECORD)
		return NULL;
	buf = ar_xmalloc((size_t)st.st_size + 1);
	while (n < (size_t)st.st_size) {
		ssize_t k =
			pread(fd, buf + n, (size_t)st.st_size - n, (off_t)n);

		if (k <= 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* One record nobody holds: checked, then removed. */
static bool recover_one(int dfd, const char *name, const char *home,
			char *const *envp)
{
	_cleanup_close_ int fd =
		openat(dfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	_cleanup_free_ const char **rw = NULL;
	_cleanup_free_ struct sb_hostexec_dir *late = NULL;
	struct sb_hostexec hx = { .armed = true };
	const char *magic, *sec, *nsec, *pid, *ws, *s;
	size_t len = 0, off = 0, n_rw = 0, n_late = 0;
	struct stat st;
	char when[64];
	struct tm tm;

	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
		return false; /* a run in progress (or gone meanwhile) */
	/* removed by the run (or another recovery) before the lock */
	if (fstat(fd, &st) < 0 || st.st_nlink == 0 || st.st_uid != geteuid())
		return false;
	buf = read_all(fd, &len);
	if (!buf)
		return false; /* not a regular file, or too large: not ours */
	magic = field(buf, len, &off);
	sec = field(buf, len, &off);
	nsec = field(buf, len, &off);
	pid = field(buf, len, &off);
	ws = field(buf, len, &off);
	if (!magic || strcmp(magic, MAGIC) != 0 || !sec || !nsec || !pid ||
	    !ws || ws[0] != '/') {
		/* half-written (the machine stopped while it was): the run had
		 * not started */
		if (st.st_size == 0 || (magic && strcmp(magic, MAGIC) == 0))
			unlinkat(dfd, name, 0);
		return false;
	}
	rw = ar_xcalloc(len / 2 + 1, sizeof(*rw));
	late = ar_xcalloc(len / 4 + 1, sizeof(*late));
	while ((s = field(buf, len, &off))) {
		const char *gs, *gn, *gd;

		if (strcmp(s, GRANT) != 0) {
			rw[n_rw++] = s;
			continue;
		}
		/* a live --rw grant; a torn last one (the machine stopped
		 * while it was written, before its mount) is none */
		gs = field(buf, len, &off);
		gn = field(buf, len, &off);
		gd = field(buf, len, &off);
		if (!gs || !gn || !gd || gd[0] != '/')
			break;
		late[n_late].dir = (char *)gd;
		late[n_late].since.tv_sec = (time_t)strtoll(gs, NULL, 10);
		late[n_late].since.tv_nsec = strtol(gn, NULL, 10);
		n_late++;
	}
	hx.start.tv_sec = (time_t)strtoll(sec, NULL, 10);
	hx.start.tv_nsec = strtol(nsec, NULL, 10);
	gmtime_r(&hx.start.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	ar_warn("sandbox: an earlier run on `%s` (agentrun pid %s, started %s) ended without its end-of-run check (agentrun and its keeper were killed together, or the machine stopped): checking it now, every change since its start counts (" AR_SANDBOX_DOC
		", \"A killed sandbox\")",
		ws, pid, when);
	{
		/* no protect plan: what the run had read-only is not known
		 * any more, so nothing is taken for the host's own change */
		struct sb_hostexec_input in = {
			.protect = NULL,
			.workspace = ws,
			.home = home,
			.environ = envp,
			.rw = rw,
			.n_rw = n_rw,
			.late = late,
			.n_late = n_late,
		};

		sb_hostexec_check(&hx, &in, NULL);
	}
	unlinkat(dfd, name, 0);
	return true;
}

size_t sb_run_record_recover(const char *dir, const char *home,
			     char *const *envp)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	size_t n = 0;

	if (dfd < 0)
		return 0;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, ".new-", 5) == 0) {
			/* a record its run never finished writing */
			_cleanup_close_ int fd =
				openat(dirfd(d), e->d_name,
				       O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

			if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
				unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		if (e->d_name[0] != '.' &&
		    recover_one(dirfd(d), e->d_name, home, envp))
			n++;
	}
	closedir(d);
	return n;
}
