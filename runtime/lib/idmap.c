/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Idmapped mounts ("idmap"/"ridmap" mount options): a user namespace that
 * carries the mount's uidMappings/gidMappings, for MOUNT_ATTR_IDMAP.
 *
 * The namespace is made by a short-lived child that unshares a user
 * namespace and waits; we write its maps (as runc and crun do: each entry
 * "containerID hostID size" goes to uid_map/gid_map as is), keep an fd of
 * /proc/PID/ns/user and let the child go.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mounts_internal.h"
#include "utils.h"

static int write_map(const char *procpid, const char *file,
		     const struct oci_id_mappings *m, struct ar_error *err)
{
	char path[64];
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = 0;

	for (size_t i = 0; i < m->n; i++) {
		char line[80];
		int n = snprintf(line, sizeof(line), "%u %u %u\n",
				 m->items[i].container_id, m->items[i].host_id,
				 m->items[i].size);

		buf = ar_xrealloc(buf, len + (size_t)n + 1);
		memcpy(buf + len, line, (size_t)n + 1);
		len += (size_t)n;
	}
	snprintf(path, sizeof(path), "/proc/%s/%s", procpid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || ar_write_all(fd, buf, len) < 0)
		return ar_error_set(err, errno, "idmapped mount: write %s",
				    file);
	return 0;
}

int ar_idmap_userns_fd(const struct oci_id_mappings *uids,
		       const struct oci_id_mappings *gids, struct ar_error *err)
{
	int ready[2] = { -1, -1 }, hold[2] = { -1, -1 };
	char path[64], procpid[32], c;
	int fd = -1;
	ssize_t n;
	pid_t pid;

	if (!uids->n || !gids->n)
		return ar_error_set_plain(err, EINVAL,
					  "idmapped mount without "
					  "uidMappings and gidMappings");
	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(hold, O_CLOEXEC) < 0) {
		ar_error_set(err, errno, "idmapped mount: pipe");
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		ar_error_set(err, errno, "idmapped mount: fork");
		goto out;
	}
	if (pid == 0) {
		/* Child: own user namespace, then wait to be released. */
		close(ready[0]);
		close(hold[1]);
		char self[32];
		ssize_t len;

		/* The container process is not dumpable during setup, and we
		 * inherited that: our /proc/PID files (ns/user, uid_map)
		 * would then be root-owned and closed to the parent when it
		 * runs in a user namespace. This child runs no container
		 * code, so being dumpable exposes nothing. */
		if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
			_exit(1);
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		/* Our pid as the mounted /proc knows it: we may be in a pid
		 * namespace of our own while /proc is still the host's. */
		len = readlink("/proc/self", self, sizeof(self) - 1);
		if (len <= 0 || write(ready[1], self, (size_t)len) != len)
			_exit(1);
		if (read(hold[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	ready[1] = -1;
	close(hold[0]);
	hold[0] = -1;
	n = read(ready[0], procpid, sizeof(procpid) - 1);
	if (n > 0)
		procpid[n] = '\0';
	if (n <= 0 || strspn(procpid, "0123456789") != (size_t)n) {
		ar_error_set_plain(err, EPERM,
				   "idmapped mount: could not create a "
				   "user namespace");
	} else if (write_map(procpid, "uid_map", uids, err) == 0 &&
		   write_map(procpid, "gid_map", gids, err) == 0) {
		snprintf(path, sizeof(path), "/proc/%s/ns/user", procpid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			ar_error_set(err, errno, "idmapped mount: open %s",
				     path);
	}
	close(hold[1]);
	hold[1] = -1;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
out:
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (hold[i] >= 0)
			close(hold[i]);
	}
	return fd;
}
