/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox --vm`: the cache of the unpacked guest kernel (vm.h,
 * docs/vm.md "The kernel cache").
 *
 * Unpacking the vmlinux out of /boot/vmlinuz-KVER (xz, 65 MB) costs ~1.4
 * s per start under a loaded 2-CPU host; agentrun does it once, on the
 * host side, through the helper's --unpack-kernel, into
 * $XDG_CACHE_HOME/agentrun/vm (else ~/.cache/agentrun/vm): on disk, but a
 * place a sandbox given --rw over it (or a workspace holding it) can
 * write. So what the cached file must be is kept where no sandbox is ever
 * shown: the state root (tmpfs, the user's own) holds, per kernel
 * identity (version, device, inode, size, mtime), the file's sha256 and
 * its inode, size and ctime when agentrun wrote it. A run uses the cache
 * only while those still match (ctime cannot be set back from user
 * space: any write, rename or utime moves it), else unpacks again; and
 * the helper copies the file into its sandbox's own /tmp and checks the
 * sha256 of the copy before it boots it (what a change between this check
 * and the bind could plant is never booted).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"
#include "vm/vm.h"

/* what the state root says of a cached vmlinux */
struct cache_rec {
	char sha256[65];
	unsigned long long ino, size;
	long long ctime_s, ctime_ns;
};

static bool rec_matches(const struct cache_rec *r, const struct stat *st)
{
	return S_ISREG(st->st_mode) &&
	       r->ino == (unsigned long long)st->st_ino &&
	       r->size == (unsigned long long)st->st_size &&
	       r->ctime_s == (long long)st->st_ctim.tv_sec &&
	       r->ctime_ns == (long long)st->st_ctim.tv_nsec;
}

static bool rec_read(int dirfd, const char *name, struct cache_rec *r)
{
	struct ar_error err = { 0 };
	_cleanup_free_ char *s = NULL;

	const char *p;
	char *end;

	if (ar_read_file_at(dirfd, name, 512, &s, NULL, &err) < 0)
		return false;
	/* "SHA256 INO SIZE CTIME_S CTIME_NS": 64 hex digits, then four
	 * decimal numbers, each read with its end checked */
	if (strspn(s, "0123456789abcdef") != 64 || s[64] != ' ')
		return false;
	memcpy(r->sha256, s, 64);
	r->sha256[64] = '\0';
	p = s + 65;
	errno = 0;
	r->ino = strtoull(p, &end, 10);
	if (end == p || *end != ' ')
		return false;
	p = end + 1;
	r->size = strtoull(p, &end, 10);
	if (end == p || *end != ' ')
		return false;
	p = end + 1;
	r->ctime_s = strtoll(p, &end, 10);
	if (end == p || *end != ' ')
		return false;
	p = end + 1;
	r->ctime_ns = strtoll(p, &end, 10);
	if (end == p || (*end && *end != '\n') || errno == ERANGE)
		return false;
	return true;
}

/* the helper's --unpack-kernel KERNEL OUT: OUT's sha256 into sha (65) */
static int unpack(const struct ar_vm *vm, const char *out, char *sha)
{
	_cleanup_free_ char *helper = ar_xasprintf("%s/agentrun-vm", vm->lib);
	int pfd[2], st;
	ssize_t n;
	size_t got = 0;
	char buf[128];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		if (dup2(pfd[1], STDOUT_FILENO) < 0)
			_exit(127);
		execl("/bin/bash", "bash", helper, "--unpack-kernel",
		      vm->kernel, out, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (got < sizeof(buf) - 1 &&
	       ((n = read(pfd[0], buf + got, sizeof(buf) - 1 - got)) > 0 ||
		(n < 0 && errno == EINTR)))
		if (n > 0)
			got += (size_t)n;
	close(pfd[0]);
	buf[got] = '\0';
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
	    strspn(buf, "0123456789abcdef") != 64)
		return -1;
	memcpy(sha, buf, 64);
	sha[64] = '\0';
	return 0;
}

static char *cache_dir(const char *home)
{
	const char *xdg = getenv("XDG_CACHE_HOME");

	if (xdg && xdg[0] == '/')
		return ar_xasprintf("%s/agentrun/vm", xdg);
	return ar_xasprintf("%s/.cache/agentrun/vm", home);
}

/* unpack into the cache dir, then record what the file is */
static int fill(const struct ar_vm *vm, int recfd, const char *key,
		const char *dir, const char *file, struct cache_rec *r)
{
	_cleanup_free_ char *tmp = NULL, *line = NULL;
	struct ar_error err = { 0 };
	struct stat cs;

	if (ar_mkdir_p(dir, 0700) < 0) {
		ar_warn("sandbox: --vm: cannot make the kernel cache %s (%s): the kernel is unpacked in each run",
			dir, strerror(errno));
		return -1;
	}
	tmp = ar_xasprintf("%s/.%s.%d", dir, key, (int)getpid());
	if (unpack(vm, tmp, r->sha256) < 0 || rename(tmp, file) < 0 ||
	    lstat(file, &cs) < 0) {
		unlink(tmp);
		return -1;
	}
	r->ino = (unsigned long long)cs.st_ino;
	r->size = (unsigned long long)cs.st_size;
	r->ctime_s = (long long)cs.st_ctim.tv_sec;
	r->ctime_ns = (long long)cs.st_ctim.tv_nsec;
	line = ar_xasprintf("%s %llu %llu %lld %lld\n", r->sha256, r->ino,
			    r->size, r->ctime_s, r->ctime_ns);
	if (ar_write_file_replace_at(recfd, key, line, strlen(line), 0600,
				     &err) < 0) {
		ar_warn("sandbox: --vm: cannot record the cached kernel: %s",
			err.msg);
		return -1;
	}
	return 0;
}

bool ar_vm_cache_name(const char *name, char *key, size_t keysz, bool *partial)
{
	size_t n = strlen(name), kl;
	const char *k = name, *end, *p;
	int dashes = 0;

	*partial = false;
	if (n > 8 && strcmp(name + n - 8, ".vmlinux") == 0) {
		end = name + n - 8;
	} else if (name[0] == '.') {
		/* .KEY.PID: an unpack's file before its rename */
		k = name + 1;
		end = strrchr(name, '.');
		if (end <= k || !end[1] ||
		    strspn(end + 1, "0123456789") != strlen(end + 1))
			return false;
		*partial = true;
	} else {
		return false;
	}
	/* KEY: KVER-DEV-INO-SIZE-SEC.NSEC, DEV INO SIZE in hex, NSEC 9
	 * digits; KVER (which may hold '-') not empty, no '/' */
	kl = (size_t)(end - k);
	if (kl == 0 || kl >= keysz || k[0] == '.' || memchr(k, '/', kl))
		return false;
	p = end;
	while (p > k && p[-1] != '-')
		p--;
	if (p == k || end - p < 11 || strspn(p, "0123456789") == 0 ||
	    p[strspn(p, "0123456789")] != '.' ||
	    strspn(strchr(p, '.') + 1, "0123456789") != 9 ||
	    strchr(p, '.') + 10 != end)
		return false;
	for (p--; dashes < 3; dashes++) {
		const char *q = p;

		while (q > k && q[-1] != '-')
			q--;
		if (q == k || q == p ||
		    strspn(q, "0123456789abcdef") != (size_t)(p - q))
			return false;
		p = q - 1;
	}
	if (p == k) /* no KVER before the dash */
		return false;
	memcpy(key, k, kl);
	key[kl] = '\0';
	return true;
}

/* Remove what no run will boot as is: an entry whose record is gone (the
 * state root is per boot: a run unpacks anew without one) or unused for
 * AR_VM_CACHE_KEEP_DAYS (each use touches its record), with its record;
 * an unpack's leftover file (.KEY.PID) older than an hour. Never `keep`
 * (this run's), only regular files of ours named as agentrun names them,
 * never through a symbolic link (fstatat/unlinkat without following, in
 * a directory opened O_NOFOLLOW and owned by this user). */
#define AR_VM_CACHE_KEEP_DAYS 7
static void clean(int recfd, const char *dir, const char *keep)
{
	_cleanup_close_ int dfd =
		open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int fd2;
	DIR *d;
	struct dirent *e;
	struct stat ds;
	time_t now = time(NULL);

	if (dfd < 0 || fstat(dfd, &ds) < 0 || ds.st_uid != geteuid())
		return;
	fd2 = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	if (fd2 < 0)
		return;
	d = fdopendir(fd2);
	if (!d) {
		close(fd2);
		return;
	}
	while ((e = readdir(d))) {
		char key[256];
		bool partial, stale;
		struct stat st, rs;

		if (!ar_vm_cache_name(e->d_name, key, sizeof(key), &partial) ||
		    strcmp(key, keep) == 0 ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (partial)
			stale = now - st.st_mtim.tv_sec > 3600;
		else
			stale = fstatat(recfd, key, &rs, AT_SYMLINK_NOFOLLOW) <
					0 ||
				now - rs.st_mtim.tv_sec >
					AR_VM_CACHE_KEEP_DAYS * 86400;
		if (!stale || unlinkat(dfd, e->d_name, 0) < 0)
			continue;
		if (!partial)
			unlinkat(recfd, key, 0);
		ar_debug("sandbox: --vm: removed the stale cached kernel %s/%s",
			 dir, e->d_name);
	}
	closedir(d);
}

void ar_vm_cache(struct ar_vm *vm, const char *state_root, const char *home)
{
	_cleanup_free_ char *dir = NULL, *key = NULL, *file = NULL,
			    *recdir = NULL;
	_cleanup_close_ int recfd = -1;
	struct cache_rec r = { 0 };
	struct stat ks, cs;

	if (!state_root || !home || home[0] != '/' || stat(vm->kernel, &ks) < 0)
		return;
	key = ar_xasprintf("%s-%" PRIx64 "-%" PRIx64 "-%" PRIx64 "-%lld.%09ld",
			   vm->kver, (uint64_t)ks.st_dev, (uint64_t)ks.st_ino,
			   (uint64_t)ks.st_size, (long long)ks.st_mtim.tv_sec,
			   (long)ks.st_mtim.tv_nsec);
	if (strchr(key, '/'))
		return;
	recdir = ar_xasprintf("%s/vm-cache", state_root);
	if (ar_mkdir_p(recdir, 0700) < 0)
		return;
	recfd = open(recdir, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dir = cache_dir(home);
	file = ar_xasprintf("%s/%s.vmlinux", dir, key);
	if (recfd < 0)
		return;
	if (!rec_read(recfd, key, &r) || lstat(file, &cs) < 0 ||
	    !rec_matches(&r, &cs)) {
		/* missing, or changed since agentrun wrote it: unpack again */
		if (fill(vm, recfd, key, dir, file, &r) < 0)
			return;
		/* a new entry: the moment old ones may have gone stale (a
		 * new kernel, a reboot that emptied the state root) */
		clean(recfd, dir, key);
	} else {
		/* in use: its record's mtime says so to clean() */
		utimensat(recfd, key, NULL, AT_SYMLINK_NOFOLLOW);
	}
	vm->vmlinux = ar_steal_ptr(&file);
	memcpy(vm->vmlinux_sha256, r.sha256, sizeof(vm->vmlinux_sha256));
}
