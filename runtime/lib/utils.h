/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers shared by every part of agentrun: cleanup attributes,
 * full reads/writes, atomic file writes. */
#ifndef AGENTRUN_UTILS_H
#define AGENTRUN_UTILS_H

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "error.h"

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void ar_freep(void *p)
{
	free(*(void **)p);
}

static inline void ar_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
		*fd = -1;
	}
}

static inline void ar_fclosep(FILE **f)
{
	if (*f) {
		int saved = errno;
		fclose(*f);
		errno = saved;
	}
}

/* Free a NULL-terminated vector of strings and the vector itself. */
void ar_strv_free(char **v);
static inline void ar_strv_freep(char ***v)
{
	ar_strv_free(*v);
}

#define _cleanup_free_ _cleanup_(ar_freep)
#define _cleanup_close_ _cleanup_(ar_closep)
#define _cleanup_fclose_ _cleanup_(ar_fclosep)
#define _cleanup_strv_ _cleanup_(ar_strv_freep)

/* Take ownership away from a cleanup variable. */
static inline int ar_steal_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}

#define ar_steal_ptr(pp)                                                       \
	({                                                                     \
		__typeof__(*(pp)) _p = *(pp);                                  \
		*(pp) = NULL;                                                  \
		_p;                                                            \
	})

#define AR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation that aborts on failure (out of memory is not recoverable for a
 * short-lived runtime process). */
/* returns_nonnull: they abort instead (and the static analyzer knows). */
void *ar_xmalloc(size_t n) __attribute__((returns_nonnull));
void *ar_xcalloc(size_t n, size_t size) __attribute__((returns_nonnull));
void *ar_xrealloc(void *p, size_t n) __attribute__((returns_nonnull));
char *ar_xstrdup(const char *s) __attribute__((returns_nonnull));
char *ar_xasprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), returns_nonnull));

/* CLOCK_MONOTONIC in milliseconds: for deadlines and durations. */
long long ar_now_ms(void);

/* Write all of buf, retrying on EINTR/short writes. 0 or -1 with errno. */
int ar_write_all(int fd, const void *buf, size_t len);
/* Read up to len bytes, retrying on EINTR until EOF or len. Returns bytes
 * read or -1 with errno. */
ssize_t ar_read_all(int fd, void *buf, size_t len);

/* Read fd to its end (at most max_size bytes; larger is an EFBIG error
 * naming `name`), starting with a buffer of size_hint bytes (0: 4096).
 * The result is NUL terminated; *len_out (if non-NULL) excludes the NUL. */
int ar_read_fd(int fd, const char *name, size_t max_size, size_t size_hint,
	       char **out, size_t *len_out, struct ar_error *err);

/* Read a whole file (at most max_size bytes; larger is an EFBIG error).
 * The result is NUL terminated; *len_out (if non-NULL) excludes the NUL. */
int ar_read_file_at(int dirfd, const char *path, size_t max_size, char **out,
		    size_t *len_out, struct ar_error *err);

/* Write a file atomically: temp file in the same directory, fsync, rename,
 * fsync of the directory. */
int ar_write_file_atomic_at(int dirfd, const char *name, const void *data,
			    size_t len, mode_t mode, struct ar_error *err);
/* The same without any fsync: readers see the old or the new content,
 * never a partial file, but a machine crash may lose the write. For
 * runtime state that does not outlive the machine's processes anyway
 * (state.json, pid files; crun does not sync its status files either):
 * two fsyncs cost 2-30 ms per start on a disk-backed state root. */
/* A directory stream of dirfd/name (name "." for dirfd itself: a file
 * description of its own, so each reader has its own position), opened
 * O_DIRECTORY | O_CLOEXEC | extra_flags (e.g. O_NOFOLLOW); NULL with errno
 * set on failure, nothing left open. closedir() it. */
DIR *ar_dir_at(int dirfd, const char *name, int extra_flags);

int ar_write_file_replace_at(int dirfd, const char *name, const void *data,
			     size_t len, mode_t mode, struct ar_error *err);

/* Parse a non-negative decimal integer with overflow checking; the whole
 * string must be consumed. 0 on success, -1 on error (errno set). */
int ar_parse_u64(const char *s, unsigned long long *out);
int ar_parse_i64(const char *s, long long *out);

/* mkdir -p of an absolute path by fd (0700 for what it makes), refusing a
 * symbolic link on the way: an O_DIRECTORY fd of it, or -1 (errno). */
int ar_open_dir_p(const char *path);

/* mkdir -p with `mode` for every directory it makes; 0 or -1 (errno). */
int ar_mkdir_p(const char *path, mode_t mode);

/* True when the absolute path `path` is `dir` or below it, by name (no
 * file system access). Trailing slashes of `dir` are ignored; "/" holds
 * every absolute path. "/ab" is not under "/a". */
bool ar_path_under(const char *path, const char *dir);
/* An executable NAME in a directory of $PATH (default
 * /usr/local/bin:/usr/bin:/bin). */
bool ar_in_path(const char *name);

/* Quoting of a string that someone else controls (the sandboxed agent:
 * a path, a Host header, a process name, a DNS name) for a terminal or
 * a log line, as git quotes names (core.quotePath): as is when it holds
 * only printable ASCII other than '"' and '\'; else in double quotes,
 * with C escapes (\n, \t, \", \\, ...) and octal bytes (\033)
 * for control characters, bytes >= 0x7f and NUL. No escape sequence
 * reaches the terminal, and a quoted string cannot pass for a plain
 * one. */
/* n bytes of s (NUL bytes included) into out (size > 0, always
 * NUL-terminated; cut at a whole escape when out is too small). Returns
 * the length written. */
size_t ar_quote_to(char *out, size_t size, const char *s, size_t n);
/* The same, malloc'd, never cut: s NUL-terminated (ar_quote) or n bytes
 * (ar_quote_n). */
char *ar_quote(const char *s) __attribute__((returns_nonnull));
char *ar_quote_n(const char *s, size_t n) __attribute__((returns_nonnull));

#endif
