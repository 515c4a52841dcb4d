/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Learn mode: record what a run used, write it as a profile (learn.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "egress/egress_proxy.h"
#include "learn.h"
#include "protect/home_secrets.h"
#include "log.h"
#include "overlay/overlay.h"
#include "protect/protect.h"
#include "utils.h"

struct entry {
	char *s;
	bool write;
	bool dir; /* made by mkdir */
};

struct sb_learn {
	pthread_mutex_t lock;
	char *home;
	char *workspace;
	struct ar_audit *audit;
	struct entry *paths;
	size_t n_paths, cap_paths;
	char **hosts;
	size_t n_hosts, cap_hosts;
};

/* Visible in every sandbox (or never shown, like /proc of the host):
 * not extras. /etc is left to --etc. */
static const char *const not_extra[] = {
	"/usr",	   "/bin", "/sbin",    "/lib", "/lib32", "/lib64",
	"/libx32", "/opt", "/nix",     "/etc", "/proc",	 "/sys",
	"/dev",	   "/tmp", "/var/tmp", "/run", NULL,
};

/* Top-level directories the learn run does not bind. */
static const char *const not_shown[] = {
	"proc",	      "sys",   "dev",	 "run", "tmp",	"boot",
	"lost+found", "etc",   "usr",	 "bin", "sbin", "lib",
	"lib32",      "lib64", "libx32", "opt", "nix",	NULL,
};

struct sb_learn *sb_learn_new(const char *home, const char *workspace,
			      struct ar_audit *audit)
{
	struct sb_learn *l = ar_xcalloc(1, sizeof(*l));

	pthread_mutex_init(&l->lock, NULL);
	l->home = ar_xstrdup(home);
	l->workspace = ar_xstrdup(workspace);
	l->audit = audit;
	return l;
}

void sb_learn_free(struct sb_learn *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_paths; i++)
		free(l->paths[i].s);
	for (size_t i = 0; i < l->n_hosts; i++)
		free(l->hosts[i]);
	free(l->paths);
	free(l->hosts);
	free(l->home);
	free(l->workspace);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

bool sb_learn_is_extra(const struct sb_learn *l, const char *path)
{
	if (path[0] != '/' || strcmp(path, "/") == 0)
		return false;
	for (const char *const *p = not_extra; *p; p++)
		if (ar_path_under(path, *p))
			return false;
	if (ar_path_under(path, l->workspace))
		return false;
	/* the home directory itself is the sandbox's tmpfs; what the
	 * command looked for below it is listed one by one; never the home
	 * directory whole, nor a directory above it (/home) */
	if (ar_path_under(l->home, path))
		return false;
	if (ar_sandbox_path_is_secret(l->home, path))
		return false;
	return true;
}

static void add_path(struct sb_learn *l, const char *path, bool write, bool dir)
{
	if (!sb_learn_is_extra(l, path))
		return;
	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; i < l->n_paths; i++) {
		if (strcmp(l->paths[i].s, path) == 0) {
			l->paths[i].write |= write;
			l->paths[i].dir |= dir;
			pthread_mutex_unlock(&l->lock);
			return;
		}
	}
	if (l->n_paths < 100000) {
		if (l->n_paths == l->cap_paths) {
			l->cap_paths = l->cap_paths ? 2 * l->cap_paths : 32;
			l->paths = ar_xrealloc(
				l->paths, l->cap_paths * sizeof(*l->paths));
		}
		l->paths[l->n_paths].s = ar_xstrdup(path);
		l->paths[l->n_paths].write = write;
		l->paths[l->n_paths].dir = dir;
		l->n_paths++;
	}
	pthread_mutex_unlock(&l->lock);
}

void sb_learn_path(struct sb_learn *l, const char *path, bool write, bool exec)
{
	(void)exec;
	add_path(l, path, write, false);
}

void sb_learn_mkdir(struct sb_learn *l, const char *path)
{
	add_path(l, path, true, true);
}

static void add_host(struct sb_learn *l, char *pattern)
{
	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; i < l->n_hosts; i++) {
		if (strcmp(l->hosts[i], pattern) == 0) {
			pthread_mutex_unlock(&l->lock);
			free(pattern);
			return;
		}
	}
	if (l->n_hosts == l->cap_hosts) {
		l->cap_hosts = l->cap_hosts ? 2 * l->cap_hosts : 16;
		l->hosts =
			ar_xrealloc(l->hosts, l->cap_hosts * sizeof(*l->hosts));
	}
	l->hosts[l->n_hosts++] = pattern;
	pthread_mutex_unlock(&l->lock);
}

static char *hostport(const char *host, uint16_t port)
{
	if (strchr(host, ':'))
		return ar_xasprintf("[%s]:%u", host, (unsigned)port);
	return ar_xasprintf("%s:%u", host, (unsigned)port);
}

void sb_learn_egress_event(const struct ar_egress_event *ev, void *data)
{
	struct sb_learn *l = data;
	unsigned char a[16];
	int fam = 0;

	if (l->audit)
		ar_audit_egress_event(ev, l->audit);
	if (!ev->allowed || !ev->host)
		return;
	add_host(l, hostport(ev->host, ev->port));
	/* An address the enforce run refuses by its class (loopback,
	 * private, ...) is allowed there only by its exact pattern. */
	if (ev->addr && inet_pton(AF_INET, ev->addr, a) == 1)
		fam = AF_INET;
	else if (ev->addr && inet_pton(AF_INET6, ev->addr, a) == 1)
		fam = AF_INET6;
	if (fam && ar_egress_addr_class(fam, a) != AR_ADDR_PUBLIC &&
	    strcmp(ev->addr, ev->host) != 0)
		add_host(l, hostport(ev->addr, ev->port));
}

char **sb_learn_extra_ro(const char *workspace)
{
	DIR *d = opendir("/");
	char **v = ar_xcalloc(1, sizeof(char *));
	size_t n = 0;
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[512];
		struct stat st;
		bool skip = e->d_name[0] == '.';

		for (const char *const *p = not_shown; *p && !skip; p++)
			skip = strcmp(*p, e->d_name) == 0;
		if (skip)
			continue;
		snprintf(path, sizeof(path), "/%s", e->d_name);
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    strcmp(path, workspace) == 0)
			continue;
		v = ar_xrealloc(v, (n + 2) * sizeof(char *));
		v[n++] = ar_xstrdup(path);
		v[n] = NULL;
	}
	if (d)
		closedir(d);
	return v;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->s,
		      ((const struct entry *)b)->s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The path to list for an entry, the deepest that covers the access:
 * itself when it exists on the host; a directory the command made that
 * the host does not have: itself with a trailing '/' (created when the
 * profile is used); one the host has: nothing (nothing to grant); for
 * another write to a missing path, its nearest existing parent (a file
 * the command creates) unless that is the home directory or above;
 * NULL when nothing of it exists. */
static char *existing(const struct sb_learn *l, const struct entry *e)
{
	_cleanup_free_ char *p = ar_xstrdup(e->s);
	struct stat st;

	if (e->dir) {
		if (lstat(p, &st) == 0)
			return NULL;
		return ar_xasprintf("%s/", p);
	}
	for (;;) {
		char *slash;

		if (lstat(p, &st) == 0)
			break;
		if (!e->write)
			return NULL;
		slash = strrchr(p, '/');
		if (!slash || slash == p)
			return NULL;
		*slash = '\0';
		/* inside a directory the command made: that directory */
		for (size_t i = 0; i < l->n_paths; i++)
			if (l->paths[i].dir && strcmp(l->paths[i].s, p) == 0)
				return ar_xasprintf("%s/", p);
	}
	if (!sb_learn_is_extra(l, p))
		return NULL;
	return ar_steal_ptr(&p);
}

struct below {
	const char *dir;
	struct ar_jbuf names;
};

static bool below_one(const char *p, const char *why, void *data)
{
	struct below *b = data;

	if (ar_path_under(p, b->dir) && strcmp(p, b->dir) != 0) {
		if (b->names.len)
			ar_jbuf_lit(&b->names, ", ");
		ar_jbuf_add(&b->names, p, strlen(p));
		ar_jbuf_lit(&b->names, " (");
		ar_jbuf_add(&b->names, why, strlen(why));
		ar_jbuf_lit(&b->names, ")");
	}
	return true;
}

/* A read-write grant of `p` (a trailing '/': a directory) is left out
 * when it is, is below or holds a path the host runs code from later
 * (sb_protect_home_each): said on stderr, with the reason. */
static bool persistence_path(const struct sb_learn *l, const char *p)
{
	_cleanup_free_ char *dir = ar_xstrdup(p);
	_cleanup_free_ char *q = NULL;
	size_t n = strlen(dir);
	const char *why;
	struct below b = { 0 };

	if (n > 1 && dir[n - 1] == '/')
		dir[n - 1] = '\0';
	/* the command chose the name: quoted as `changes` quotes names */
	q = ar_quote_path(dir);
	why = sb_protect_home_why(l->home, dir, NULL);
	if (why) {
		ar_warn("sandbox: --learn: left out of the profile: read-write %s (%s), which the host runs code from later; grant it by hand only if you mean it",
			q, why);
		return true;
	}
	b.dir = dir;
	sb_protect_home_each(l->home, below_one, &b);
	if (!b.names.len)
		return false;
	ar_warn("sandbox: --learn: left out of the profile: read-write %s, which holds what the host runs code from later: %s",
		q, b.names.p);
	ar_jbuf_free(&b.names);
	return true;
}

static void add_list(struct ar_jbuf *b, const char *key, char **v, size_t n)
{
	ar_jbuf_addf(b, ",\n\t\"%s\": [", key);
	for (size_t i = 0; i < n; i++) {
		ar_jbuf_add(b, i ? ",\n\t\t" : "\n\t\t", i ? 4 : 3);
		ar_jbuf_cstr(b, v[i]);
	}
	ar_jbuf_add(b, n ? "\n\t]" : "]", n ? 3 : 1);
}

int sb_learn_write(struct sb_learn *l, const char *path, char *const *argv,
		   struct ar_error *err)
{
	_cleanup_free_ char *copy = ar_xstrdup(path);
	_cleanup_free_ char *desc = NULL;
	_cleanup_close_ int dfd = -1;
	struct ar_jbuf b = { 0 };
	struct ar_jbuf cmd = { 0 };
	char **ro = ar_xcalloc(l->n_paths + 1, sizeof(char *));
	char **rw = ar_xcalloc(l->n_paths + 1, sizeof(char *));
	size_t n_ro = 0, n_rw = 0;
	char *slash = strrchr(copy, '/');
	const char *dir = ".", *name = copy;
	int r;

	pthread_mutex_lock(&l->lock);
	/* sorted: a parent comes before what is below it */
	if (l->n_paths > 1)
		qsort(l->paths, l->n_paths, sizeof(*l->paths), cmp_entry);
	for (size_t i = 0; i < l->n_paths; i++) {
		char *p = existing(l, &l->paths[i]);
		bool dup = false;

		if (!p)
			continue;
		/* a listed directory covers what is below it in the same
		 * mode (rw covers both) */
		for (size_t j = 0; j < n_rw && !dup; j++)
			dup = ar_path_under(p, rw[j]);
		for (size_t j = 0; j < n_ro && !dup && !l->paths[i].write; j++)
			dup = ar_path_under(p, ro[j]);
		if (dup || (l->paths[i].write && persistence_path(l, p))) {
			free(p);
			continue;
		}
		if (l->paths[i].write)
			rw[n_rw++] = p;
		else
			ro[n_ro++] = p;
	}
	if (l->n_hosts > 1)
		qsort(l->hosts, l->n_hosts, sizeof(char *), cmp_str);

	for (size_t i = 0; argv[i]; i++) {
		if (i)
			ar_jbuf_lit(&cmd, " ");
		ar_jbuf_add(&cmd, argv[i], strlen(argv[i]));
	}
	desc = ar_xasprintf("learned by `agentrun sandbox --learn` from: %s",
			    cmd.p ? cmd.p : "");
	ar_jbuf_free(&cmd);
	ar_jbuf_lit(&b, "{\n\t\"description\": ");
	ar_jbuf_cstr(&b, desc);
	add_list(&b, "ro", ro, n_ro);
	add_list(&b, "rw", rw, n_rw);
	if (l->n_hosts > 0) {
		ar_jbuf_lit(&b, ",\n\t\"net\": {\"allow\": [");
		for (size_t i = 0; i < l->n_hosts; i++) {
			if (i)
				ar_jbuf_lit(&b, ", ");
			ar_jbuf_cstr(&b, l->hosts[i]);
		}
		ar_jbuf_lit(&b, "]}");
	}
	ar_jbuf_lit(&b, "\n}\n");
	pthread_mutex_unlock(&l->lock);
	for (size_t i = 0; i < n_ro; i++)
		free(ro[i]);
	for (size_t i = 0; i < n_rw; i++)
		free(rw[i]);
	free(ro);
	free(rw);

	if (slash) {
		*slash = '\0';
		dir = slash == copy ? "/" : copy;
		name = slash + 1;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ar_jbuf_free(&b);
		return ar_error_set(err, errno, "--learn `%s`", path);
	}
	r = ar_write_file_atomic_at(dfd, name, b.p, b.len, 0644, err);
	ar_jbuf_free(&b);
	if (r < 0)
		return ar_error_wrap(err, "--learn `%s`", path);
	return 0;
}

size_t sb_learn_net_json(struct sb_learn *l, struct ar_jbuf *b)
{
	size_t n;

	pthread_mutex_lock(&l->lock);
	if (l->n_hosts > 1)
		qsort(l->hosts, l->n_hosts, sizeof(char *), cmp_str);
	ar_jbuf_lit(b, "{\"net\": {\"allow\": [");
	for (size_t i = 0; i < l->n_hosts; i++) {
		if (i)
			ar_jbuf_lit(b, ", ");
		ar_jbuf_cstr(b, l->hosts[i]);
	}
	ar_jbuf_lit(b, "]}}\n");
	n = l->n_hosts;
	pthread_mutex_unlock(&l->lock);
	return n;
}
