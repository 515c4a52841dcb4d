/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "utils.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void ar_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

static void oom(void)
{
	static const char msg[] = "agentrun: out of memory\n";
	ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)r;
	abort();
}

void *ar_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *ar_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *ar_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *ar_xstrdup(const char *s)
{
	char *r = strdup(s);
	if (!r)
		oom();
	return r;
}

char *ar_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *r = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&r, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom();
	return r;
}

long long ar_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ar_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t ar_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int ar_read_fd(int fd, const char *name, size_t max_size, size_t size_hint,
	       char **out, size_t *len_out, struct ar_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t cap = size_hint ? size_hint : 4096, len = 0;

	buf = ar_xmalloc(cap);
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			if (cap > max_size) {
				/* Freed here too, not only by _cleanup_free_:
				 * clang's analyzer before 17 does not see
				 * cleanup attributes and reports a leak. */
				free(buf);
				buf = NULL;
				return ar_error_set_plain(
					err, EFBIG,
					"`%s` is too large (at most %zu bytes)",
					name, max_size);
			}
			cap *= 2;
			buf = ar_xrealloc(buf, cap);
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return ar_error_set(err, errno, "read `%s`", name);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max_size)
		return ar_error_set_plain(
			err, EFBIG, "`%s` is too large (at most %zu bytes)",
			name, max_size);
	buf[len] = '\0';
	if (len_out)
		*len_out = len;
	*out = ar_steal_ptr(&buf);
	return 0;
}

int ar_read_file_at(int dirfd, const char *path, size_t max_size, char **out,
		    size_t *len_out, struct ar_error *err)
{
	_cleanup_close_ int fd = -1;
	size_t hint = 8192;
	struct stat st;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return ar_error_set(err, errno, "open `%s`", path);
	if (fstat(fd, &st) < 0)
		return ar_error_set(err, errno, "stat `%s`", path);
	if (S_ISDIR(st.st_mode))
		return ar_error_set_plain(err, EISDIR,
					  "read `%s`: is a directory", path);
	if (S_ISREG(st.st_mode)) {
		if ((unsigned long long)st.st_size > max_size)
			return ar_error_set_plain(
				err, EFBIG,
				"`%s` is too large (%lld bytes, at most %zu)",
				path, (long long)st.st_size, max_size);
		hint = (size_t)st.st_size + 1;
	}
	return ar_read_fd(fd, path, max_size, hint, out, len_out, err);
}

static int write_replace(int dirfd, const char *name, const void *data,
			 size_t len, mode_t mode, bool durable,
			 struct ar_error *err)
{
	char tmp[PATH_MAX];
	_cleanup_close_ int fd = -1;

	if (snprintf(tmp, sizeof(tmp), ".%s.tmp.%d", name, (int)getpid()) >=
	    (int)sizeof(tmp))
		return ar_error_set_plain(err, ENAMETOOLONG,
					  "write `%s`: the name is too long",
					  name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return ar_error_set(err, errno, "create `%s`", tmp);
	if (ar_write_all(fd, data, len) < 0 || (durable && fsync(fd) < 0)) {
		int e = errno;
		unlinkat(dirfd, tmp, 0);
		return ar_error_set(err, e, "write `%s`", tmp);
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		int e = errno;
		unlinkat(dirfd, tmp, 0);
		return ar_error_set(err, e, "rename `%s` to `%s`", tmp, name);
	}
	/* Make the rename durable. */
	if (durable)
		fsync(dirfd);
	return 0;
}

int ar_write_file_atomic_at(int dirfd, const char *name, const void *data,
			    size_t len, mode_t mode, struct ar_error *err)
{
	return write_replace(dirfd, name, data, len, mode, true, err);
}

int ar_write_file_replace_at(int dirfd, const char *name, const void *data,
			     size_t len, mode_t mode, struct ar_error *err)
{
	return write_replace(dirfd, name, data, len, mode, false, err);
}

/* The decimal number that is all of s, by strtoull (is_signed false: no
 * '-') or strtoll into *u or *i; no leading space or '+'. -1 with errno
 * EINVAL or ERANGE. */
static int parse_decimal(const char *s, bool is_signed, unsigned long long *u,
			 long long *i)
{
	char *end;

	if (!s || !*s || *s == ' ' || *s == '+' || (!is_signed && *s == '-')) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	if (is_signed)
		*i = strtoll(s, &end, 10);
	else
		*u = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int ar_parse_u64(const char *s, unsigned long long *out)
{
	unsigned long long v;

	if (parse_decimal(s, false, &v, NULL) < 0)
		return -1;
	*out = v;
	return 0;
}

int ar_parse_i64(const char *s, long long *out)
{
	long long v;

	if (parse_decimal(s, true, NULL, &v) < 0)
		return -1;
	*out = v;
	return 0;
}

int ar_open_dir_p(const char *path)
{
	_cleanup_free_ char *copy = ar_xstrdup(path);
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *save = NULL;

	for (char *part = strtok_r(copy, "/", &save); part && fd >= 0;
	     part = strtok_r(NULL, "/", &save)) {
		int next;

		if (mkdirat(fd, part, 0700) < 0 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		next = openat(fd, part,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	return fd;
}

int ar_mkdir_p(const char *path, mode_t mode)
{
	_cleanup_free_ char *copy = ar_xstrdup(path);

	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, mode) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(copy, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

bool ar_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

bool ar_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, name);
		if (access(buf, X_OK) == 0)
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/* ---- quoting ---- */

static bool quote_needed(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
			return true;
	return false;
}

/* The escape of one byte (at most 4 characters and a NUL). */
static size_t quote_byte(unsigned char c, char esc[5])
{
	static const char ctl[] = "\a\b\t\n\v\f\r";
	static const char let[] = "abtnvfr";
	const char *e = c ? memchr(ctl, c, sizeof(ctl) - 1) : NULL;

	if (c == '"' || c == '\\' || e) {
		esc[0] = '\\';
		esc[1] = e ? let[e - ctl] : (char)c;
		esc[2] = '\0';
		return 2;
	}
	if (c < 0x20 || c >= 0x7f)
		return (size_t)snprintf(esc, 5, "\\%03o", c);
	esc[0] = (char)c;
	esc[1] = '\0';
	return 1;
}

size_t ar_quote_to(char *out, size_t size, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	bool q = quote_needed(u, n);
	size_t o = 0;

	if (size == 0)
		return 0;
	if (q && size > 2)
		out[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		char esc[5];
		size_t l = quote_byte(u[i], esc);

		/* room for this escape, the closing quote and the NUL */
		if (o + l + (q ? 1 : 0) + 1 > size)
			break;
		memcpy(out + o, esc, l);
		o += l;
	}
	if (q && o > 0 && o + 2 <= size)
		out[o++] = '"';
	out[o] = '\0';
	return o;
}

char *ar_quote_n(const char *s, size_t n)
{
	size_t size = 4 * n + 3;
	char *out = ar_xmalloc(size);

	ar_quote_to(out, size, s, n);
	return out;
}

char *ar_quote(const char *s)
{
	return ar_quote_n(s, strlen(s));
}

DIR *ar_dir_at(int dirfd, const char *name, int extra_flags)
{
	int fd = openat(dirfd, name,
			O_RDONLY | O_DIRECTORY | O_CLOEXEC | extra_flags);
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	return d;
}
