/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The changed directories of a run (change_watch.h): an fanotify group
 * reporting directory file handles (FAN_REPORT_DFID_NAME), a mark on the
 * whole filesystem of the workspace, and a process that drains the queue
 * while the agent runs (the kernel's queue holds 16,384 events), keeping
 * each directory's handle once. At the end the handles are opened
 * (open_by_handle_at, through the workspace's mount) and named
 * (/proc/self/fd): a directory renamed during the run is found where it
 * is now.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "change_watch.h"
#include "log.h"
#include "utils.h"

#define WATCH_MASK                                                             \
	(FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO |             \
	 FAN_ATTRIB | FAN_MODIFY | FAN_CLOSE_WRITE | FAN_ONDIR)

struct key {
	size_t len;
	unsigned char *b; /* fsid, then the struct file_handle */
};

struct sb_watch {
	int gfd; /* the fanotify group (the drainer's: closed here) */
	int mfd; /* the watched directory: the mount handles open through */
	int stop; /* closed: the drainer sends its set and exits */
	int result; /* the drainer's set */
	pid_t pid;
	bool lost; /* overflowed, too many, a read error */
	struct key *set;
	size_t n, cap; /* open addressing, cap a power of two */
};

static uint64_t hash(const unsigned char *b, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static void put_key(struct sb_watch *w, const unsigned char *b, size_t len);

static void grow(struct sb_watch *w)
{
	struct key *old = w->set;
	size_t ocap = w->cap;

	w->cap = ocap ? 2 * ocap : 1024;
	w->set = ar_xcalloc(w->cap, sizeof(*w->set));
	w->n = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].b) {
			put_key(w, old[i].b, old[i].len);
			free(old[i].b);
		}
	free(old);
}

static void put_key(struct sb_watch *w, const unsigned char *b, size_t len)
{
	size_t i;

	if (w->lost)
		return;
	if (2 * (w->n + 1) > w->cap)
		grow(w);
	for (i = hash(b, len) & (w->cap - 1); w->set[i].b;
	     i = (i + 1) & (w->cap - 1))
		if (w->set[i].len == len && memcmp(w->set[i].b, b, len) == 0)
			return;
	if (w->n >= SB_WATCH_MAX_DIRS) {
		w->lost = true;
		return;
	}
	w->set[i].b = ar_xmalloc(len);
	memcpy(w->set[i].b, b, len);
	w->set[i].len = len;
	w->n++;
}

/* The events in buf: each one's directory kept. The kernel aligns the
 * events and their info records to 4 bytes only (a name's length
 * decides), while struct fanotify_event_metadata holds a 64-bit mask:
 * every header is copied out before it is read (UBSan: "misaligned
 * address ... requires 8 byte alignment"). */
static void take(struct sb_watch *w, const char *buf, ssize_t len)
{
	size_t off = 0, n = len > 0 ? (size_t)len : 0;

	while (off + sizeof(struct fanotify_event_metadata) <= n) {
		struct fanotify_event_metadata m;
		const char *p, *end;

		memcpy(&m, buf + off, sizeof(m));
		if (m.event_len < sizeof(m) || m.event_len > n - off ||
		    m.metadata_len < sizeof(m) || m.metadata_len > m.event_len)
			break;
		p = buf + off + m.metadata_len;
		end = buf + off + m.event_len;
		off += m.event_len;
		if (m.vers != FANOTIFY_METADATA_VERSION ||
		    (m.mask & FAN_Q_OVERFLOW)) {
			w->lost = true;
			if (m.fd >= 0)
				close(m.fd);
			continue;
		}
		while ((size_t)(end - p) >=
		       sizeof(struct fanotify_event_info_fid) +
			       sizeof(struct file_handle)) {
			const size_t fsid_at =
				offsetof(struct fanotify_event_info_fid, fsid);
			const size_t fh_at = offsetof(
				struct fanotify_event_info_fid, handle);
			struct fanotify_event_info_header h;
			struct file_handle fh;
			size_t flen;

			memcpy(&h, p, sizeof(h));
			if (h.len < sizeof(struct fanotify_event_info_fid) +
					    sizeof(fh) ||
			    h.len > (size_t)(end - p))
				break;
			memcpy(&fh, p + fh_at, sizeof(fh));
			flen = fh_at - fsid_at + sizeof(fh) + fh.handle_bytes;
			if ((h.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME ||
			     h.info_type == FAN_EVENT_INFO_TYPE_DFID) &&
			    fsid_at + flen <= h.len)
				put_key(w, (const unsigned char *)p + fsid_at,
					flen);
			p += h.len;
		}
		if (m.fd >= 0)
			close(m.fd);
	}
}

/* Read what is queued; false when nothing is left (or an error). */
static bool drain(struct sb_watch *w)
{
	char buf[16384] __attribute__((aligned(8)));
	ssize_t len = read(w->gfd, buf, sizeof(buf));

	if (len < 0) {
		if (errno != EAGAIN && errno != EINTR)
			w->lost = true;
		return errno == EINTR;
	}
	take(w, buf, len);
	return len > 0;
}

/* The drainer: a process, not a thread (the container's setup forks
 * after this; a fork of a threaded process may inherit a held lock).
 * fds: 0 the group, 1 the stop pipe, 2 the result pipe. Drains while the
 * agent runs, then sends each handle (its length, its bytes) and a last
 * record of length 0 and whether all is known. */
static _Noreturn void drainer(struct sb_watch *w)
{
	uint32_t len;
	unsigned char ok;

	w->gfd = 0;
	for (;;) {
		struct pollfd pfd[2] = { { .fd = 0, .events = POLLIN },
					 { .fd = 1, .events = POLLIN } };

		if (poll(pfd, 2, -1) < 0 && errno != EINTR) {
			w->lost = true;
			break;
		}
		if (pfd[0].revents)
			while (drain(w))
				;
		if (pfd[1].revents)
			break;
	}
	/* the last events: the agent's were all queued before its end */
	while (drain(w))
		;
	for (size_t i = 0; i < w->cap && !w->lost; i++) {
		if (!w->set[i].b)
			continue;
		len = (uint32_t)w->set[i].len;
		if (ar_write_all(2, &len, sizeof(len)) < 0 ||
		    ar_write_all(2, w->set[i].b, len) < 0)
			_exit(1);
	}
	len = 0;
	ok = !w->lost;
	if (ar_write_all(2, &len, sizeof(len)) < 0 ||
	    ar_write_all(2, &ok, 1) < 0)
		_exit(1);
	_exit(0);
}

static void watch_free(struct sb_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->cap; i++)
		free(w->set[i].b);
	free(w->set);
	if (w->gfd >= 0)
		close(w->gfd);
	if (w->mfd >= 0)
		close(w->mfd);
	if (w->stop >= 0)
		close(w->stop);
	if (w->result >= 0)
		close(w->result);
	if (w->pid > 0)
		waitpid(w->pid, NULL, 0);
	free(w);
}

struct sb_watch *sb_watch_start(const char *dir)
{
	struct sb_watch *w = ar_xcalloc(1, sizeof(*w));
	int stop[2] = { -1, -1 }, result[2] = { -1, -1 };

	w->stop = w->result = -1;
	w->gfd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK |
				       FAN_REPORT_DFID_NAME,
			       O_RDONLY | O_CLOEXEC);
	w->mfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->gfd < 0 || w->mfd < 0 ||
	    fanotify_mark(w->gfd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
			  WATCH_MASK, w->mfd, NULL) < 0 ||
	    pipe2(stop, O_CLOEXEC) < 0 || pipe2(result, O_CLOEXEC) < 0 ||
	    (w->pid = fork()) < 0) {
		ar_debug(
			"sandbox: no change watch of %s (%s): the end-of-run check reads every directory",
			dir, strerror(errno));
		for (int i = 0; i < 2; i++) {
			if (stop[i] >= 0)
				close(stop[i]);
			if (result[i] >= 0)
				close(result[i]);
		}
		w->pid = 0;
		watch_free(w);
		return NULL;
	}
	if (w->pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		/* ^C on the terminal is the agent's: agentrun ends us */
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		if (dup2(w->gfd, 0) < 0 || dup2(stop[0], 1) < 0 ||
		    dup2(result[1], 2) < 0 ||
		    syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
			_exit(1);
		drainer(w);
	}
	close(stop[0]);
	close(result[1]);
	/* the group lives in the drainer only */
	close(w->gfd);
	w->gfd = -1;
	w->stop = stop[1];
	w->result = result[0];
	return w;
}

/* The drainer's set, into w->set; false: not all known. */
static bool receive(struct sb_watch *w)
{
	unsigned char buf[sizeof(__kernel_fsid_t) + sizeof(struct file_handle) +
			  MAX_HANDLE_SZ];
	unsigned char ok = 0;
	uint32_t len;

	close(w->stop);
	w->stop = -1;
	for (;;) {
		if (ar_read_all(w->result, &len, sizeof(len)) !=
		    (ssize_t)sizeof(len))
			return false;
		if (len == 0)
			return ar_read_all(w->result, &ok, 1) == 1 && ok;
		if (len > sizeof(buf) ||
		    ar_read_all(w->result, buf, len) != (ssize_t)len)
			return false;
		put_key(w, buf, len);
		if (w->lost)
			return false;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The path of one kept directory, NULL when removed; *bad on an error. */
static char *name_of(struct sb_watch *w, const struct key *k, bool *bad)
{
	/* the handle after the fsid; copied: the kernel wants it aligned */
	size_t hlen = k->len - sizeof(__kernel_fsid_t);
	_cleanup_free_ struct file_handle *fh = ar_xmalloc(hlen);
	_cleanup_close_ int fd = -1;
	char link[64], buf[4096];
	struct stat st;
	ssize_t len;

	memcpy(fh, k->b + sizeof(__kernel_fsid_t), hlen);
	fd = open_by_handle_at(w->mfd, fh, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		/* ESTALE, ENOENT: removed since. Anything else (a handle the
		 * filesystem cannot decode): not known; every handle is of
		 * the workspace's filesystem (the mark is on it alone) */
		if (errno != ESTALE && errno != ENOENT)
			*bad = true;
		return NULL;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, buf, sizeof(buf) - 1);
	if (len < 0 || len == (ssize_t)sizeof(buf) - 1) {
		*bad = true;
		return NULL;
	}
	buf[len] = '\0';
	/* removed (its name then ends in " (deleted)", which a live
	 * directory's own name may too: the link count says) */
	if (fstat(fd, &st) < 0) {
		*bad = true;
		return NULL;
	}
	if (st.st_nlink == 0)
		return NULL;
	if (buf[0] != '/') {
		*bad = true;
		return NULL;
	}
	return ar_xstrdup(buf);
}

int sb_watch_end(struct sb_watch *w, const char *under, char ***out, size_t *n)
{
	char **v = NULL;
	size_t nv = 0, cap = 0, ul = strlen(under);
	bool bad = false;
	int r;

	*out = NULL;
	*n = 0;
	if (!w)
		return -1;
	if (!receive(w))
		w->lost = true;
	for (size_t i = 0; i < w->cap && !w->lost && !bad; i++) {
		char *path;

		if (!w->set[i].b)
			continue;
		path = name_of(w, &w->set[i], &bad);
		if (!path)
			continue;
		if (strncmp(path, under, ul) != 0 ||
		    (path[ul] != '/' && path[ul] != '\0' &&
		     strcmp(under, "/") != 0)) {
			free(path);
			continue;
		}
		if (nv + 2 > cap) {
			cap = cap ? 2 * cap : 64;
			v = ar_xrealloc(v, cap * sizeof(char *));
		}
		v[nv++] = path;
	}
	r = w->lost || bad ? -1 : 0;
	ar_debug(
		"sandbox: change watch: %zu director%s changed, %zu in the workspace%s",
		w->n, w->n == 1 ? "y" : "ies", nv,
		r < 0 ? "; not all known: every directory is read" : "");
	watch_free(w);
	if (r < 0) {
		for (size_t i = 0; i < nv; i++)
			free(v[i]);
		free(v);
		return -1;
	}
	if (v) {
		qsort(v, nv, sizeof(char *), cmp_str);
		v[nv] = NULL;
	} else {
		v = ar_xcalloc(1, sizeof(char *));
	}
	*out = v;
	*n = nv;
	return 0;
}
