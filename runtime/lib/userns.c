/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "userns.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

int ar_userns_format_map(const struct oci_id_mappings *m, char *buf,
			 size_t size)
{
	size_t off = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < m->n; i++) {
		int n = snprintf(buf + off, size - off, "%u %u %u\n",
				 m->items[i].container_id, m->items[i].host_id,
				 m->items[i].size);
		if (n < 0 || (size_t)n >= size - off) {
			errno = ENOSPC;
			return -1;
		}
		off += (size_t)n;
	}
	return (int)off;
}

bool ar_userns_map_is_own(const struct oci_id_mappings *m, unsigned own)
{
	return m->n == 1 && m->items[0].host_id == own && m->items[0].size == 1;
}

bool ar_userns_privileged(void)
{
	/* euid 0 is enough: root of a user namespace that maps only part of
	 * the id space (rootless podman) may still write any map within its
	 * own range directly, which is all a config can ask of it. */
	return geteuid() == 0;
}

/* include/linux/proc_ns.h: PROC_USER_INIT_INO */
#define AR_PROC_USER_INIT_INO 0xEFFFFFFDU

static bool uid_map_is_identity(void)
{
	char buf[128];
	_cleanup_close_ int fd =
		open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
	unsigned long a, b, c;
	ssize_t n;

	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	/* NOLINTNEXTLINE(cert-err34-c): kernel-made text */
	return sscanf(buf, "%lu %lu %lu", &a, &b, &c) == 3 && a == 0 &&
	       b == 0 && c == 4294967295UL;
}

bool ar_userns_is_initial(void)
{
	static int cached = -1;
	struct stat st;

	if (cached >= 0)
		return cached;
	if (stat("/proc/self/ns/user", &st) == 0)
		cached = st.st_ino == AR_PROC_USER_INIT_INO;
	else
		cached = uid_map_is_identity();
	return cached;
}

static int write_proc_file(pid_t pid, const char *name, const char *data,
			   size_t len, struct ar_error *err)
{
	char path[64];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return ar_error_set(err, errno, "open %s", path);
	if (write(fd, data, len) != (ssize_t)len)
		return ar_error_set(
			err, errno, "write %s `%.*s`", path,
			(int)(len && data[len - 1] == '\n' ? len - 1 : len),
			data);
	return 0;
}

/* newuidmap PID C H S [C H S ...] */
static int run_id_helper(const char *helper, pid_t pid,
			 const struct oci_id_mappings *m, struct ar_error *err)
{
	size_t argc = 2 + 3 * m->n + 1;
	_cleanup_free_ char **argv = ar_xcalloc(argc, sizeof(char *));
	_cleanup_free_ char *storage = NULL;
	char *p;
	size_t per = 3 * 12, k = 0;
	pid_t child;
	int status;

	storage = ar_xmalloc(per * (m->n + 1));
	p = storage;
	argv[k++] = (char *)helper;
	argv[k++] = p;
	p += sprintf(p, "%d", (int)pid) + 1;
	for (size_t i = 0; i < m->n; i++) {
		argv[k++] = p;
		p += sprintf(p, "%u", m->items[i].container_id) + 1;
		argv[k++] = p;
		p += sprintf(p, "%u", m->items[i].host_id) + 1;
		argv[k++] = p;
		p += sprintf(p, "%u", m->items[i].size) + 1;
	}
	argv[k] = NULL;

	child = fork();
	if (child < 0)
		return ar_error_set(err, errno, "fork %s", helper);
	if (child == 0) {
		execvp(helper, argv);
		dprintf(STDERR_FILENO, "agentrun: exec %s: %m\n", helper);
		_exit(127);
	}
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR)
			return ar_error_set(err, errno, "wait for %s", helper);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return ar_error_set_plain(
			err, ENOENT,
			"%s is needed for a user namespace with several id ranges (or ids other than your own) and could not be run: install the uidmap package",
			helper);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ar_error_set_plain(
			err, EPERM,
			"%s failed (status %d): check that /etc/sub%cid grants the ranges of the config",
			helper, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			helper[3] == 'u' ? 'u' : 'g');
	return 0;
}

int ar_userns_write_maps(pid_t pid, const struct oci_id_mappings *uids,
			 const struct oci_id_mappings *gids,
			 bool *setgroups_denied, struct ar_error *err)
{
	char buf[4096];
	bool priv = ar_userns_privileged();
	int len;
	/* A new user namespace without mappings (`crun spec --rootless`):
	 * root in it is the caller, as crun does. */
	struct oci_id_mapping own_uid = { 0, (uint32_t)geteuid(), 1 };
	struct oci_id_mapping own_gid = { 0, (uint32_t)getegid(), 1 };
	const struct oci_id_mappings def_uids = { &own_uid, 1 };
	const struct oci_id_mappings def_gids = { &own_gid, 1 };

	*setgroups_denied = false;
	if (!uids->n)
		uids = &def_uids;
	if (!gids->n)
		gids = &def_gids;

	if (uids->n) {
		if (priv || ar_userns_map_is_own(uids, geteuid())) {
			len = ar_userns_format_map(uids, buf, sizeof(buf));
			if (len < 0)
				return ar_error_set_plain(
					err, E2BIG,
					"uidMappings: too many ranges");
			if (write_proc_file(pid, "uid_map", buf, (size_t)len,
					    err) < 0)
				return ar_error_wrap(err, "uidMappings");
		} else if (run_id_helper("newuidmap", pid, uids, err) < 0) {
			return ar_error_wrap(err, "uidMappings");
		}
	}
	if (gids->n) {
		if (priv) {
			len = ar_userns_format_map(gids, buf, sizeof(buf));
			if (len < 0)
				return ar_error_set_plain(
					err, E2BIG,
					"gidMappings: too many ranges");
			if (write_proc_file(pid, "gid_map", buf, (size_t)len,
					    err) < 0)
				return ar_error_wrap(err, "gidMappings");
		} else if (ar_userns_map_is_own(gids, getegid())) {
			if (write_proc_file(pid, "setgroups", "deny", 4, err) <
			    0)
				return ar_error_wrap(err, "gidMappings");
			*setgroups_denied = true;
			len = ar_userns_format_map(gids, buf, sizeof(buf));
			if (len < 0 || write_proc_file(pid, "gid_map", buf,
						       (size_t)len, err) < 0)
				return ar_error_wrap(err, "gidMappings");
		} else if (run_id_helper("newgidmap", pid, gids, err) < 0) {
			return ar_error_wrap(err, "gidMappings");
		}
	}
	return 0;
}
