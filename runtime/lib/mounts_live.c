/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mounts added to or removed from a live container. See mounts_live.h.
 *
 *   runtime                              joiner (fork)
 *   parse FILE, every mount's options
 *   state: the container's pid, its
 *   ns/mnt, ns/user, /proc/PID/root
 *   fork ──────────────────────────────► [not root: setns(user),
 *                                          unshare(mnt): a copy of ours]
 *                                         add: every mount detached
 *                                         setns(mnt)
 *                                         add: resolve, create, attach
 *                                         remove: resolve, umount by fd
 *        ◄────────────────────────────── the error, or nothing; exit
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mounts_live.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "mount_syscalls.h"
#include "mounts.h"
#include "mounts_internal.h"
#include "namespaces.h"
#include "oci_config.h"
#include "state.h"
#include "utils.h"

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

/* The mounts file's size limit: a list of mounts, not a config. */
#define MOUNTS_FILE_MAX (4u * 1024 * 1024)

struct live_mount {
	const struct oci_mount *m;
	struct ar_mount_flags mf;
	struct ar_bind_attrs attrs;
	bool bind;
	int tree; /* the detached mount (add), -1 */
	int userns_fd; /* idmap: the user namespace of the maps, -1 */
};

struct live {
	const char *id;
	const char *file;
	bool add;
	struct oci_config *list; /* the parsed FILE */
	struct live_mount *v;
	size_t n;
	pid_t pid;
	int mnt_fd; /* /proc/PID/ns/mnt */
	int user_fd; /* /proc/PID/ns/user when it is not ours, else -1 */
	int root_fd; /* O_PATH /proc/PID/root */
};

static void live_release(struct live *l)
{
	for (size_t i = 0; i < l->n; i++) {
		ar_mount_flags_free(&l->v[i].mf);
		if (l->v[i].tree >= 0)
			close(l->v[i].tree);
		if (l->v[i].userns_fd >= 0)
			close(l->v[i].userns_fd);
	}
	free(l->v);
	if (l->list)
		oci_config_free(l->list);
	if (l->mnt_fd >= 0)
		close(l->mnt_fd);
	if (l->user_fd >= 0)
		close(l->user_fd);
	if (l->root_fd >= 0)
		close(l->root_fd);
}

/* "FILE: [i] (destination D)": the prefix of every message about one */
static int wrap_item(const struct live *l, size_t i, struct ar_error *err)
{
	return ar_error_wrap(err, "%s: [%zu] (destination %s)", l->file, i,
			     l->v[i].m->destination);
}

static int parse_file(struct live *l, struct ar_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;

	if (ar_read_file_at(AT_FDCWD, l->file, MOUNTS_FILE_MAX, &buf, &len,
			    err) < 0)
		return -1;
	if (oci_mounts_parse(buf, len, l->file, &l->list, err) < 0)
		return -1;
	if (l->list->n_mounts == 0)
		return ar_error_set_plain(err, EINVAL,
					  "%s: no mount in the list", l->file);
	l->n = l->list->n_mounts;
	l->v = ar_xcalloc(l->n, sizeof(*l->v));
	for (size_t i = 0; i < l->n; i++) {
		l->v[i].m = &l->list->mounts[i];
		l->v[i].tree = -1;
		l->v[i].userns_fd = -1;
	}
	for (size_t i = 0; i < l->n; i++) {
		struct live_mount *lm = &l->v[i];
		const struct oci_mount *m = lm->m;

		if (m->destination[0] != '/')
			return ar_error_set_plain(
				err, EINVAL,
				"%s: [%zu].destination: must be an absolute path, got `%s`",
				l->file, i, m->destination);
		if (!l->add)
			continue;
		if (ar_mount_parse_options(&m->options, &lm->mf, err) < 0)
			return wrap_item(l, i, err);
		lm->bind = ar_mount_is_bind(m);
		if (lm->mf.copy_up)
			return ar_error_set_plain(
				err, EINVAL,
				"%s: [%zu].options: tmpcopyup needs the container's setup (its files copied before anything runs): not for a live mount",
				l->file, i);
		if (lm->bind && (!m->source || !*m->source))
			return ar_error_set_plain(
				err, EINVAL,
				"%s: [%zu]: a bind mount on `%s` has no source",
				l->file, i, m->destination);
		if (!lm->bind && (!m->type || !*m->type))
			return ar_error_set_plain(
				err, EINVAL,
				"%s: [%zu]: the mount on `%s` has neither a type nor a bind option",
				l->file, i, m->destination);
		if (lm->mf.idmap && !lm->bind)
			return ar_error_set_plain(
				err, EINVAL,
				"%s: [%zu].options: idmap is for bind mounts",
				l->file, i);
		ar_mount_flags_to_attrs(&lm->mf, &lm->attrs);
		/* as crun: a live mount is private unless it says */
		if (!lm->attrs.propagation)
			lm->attrs.propagation = MS_PRIVATE;
	}
	return 0;
}

static int open_container(struct live *l, const char *root,
			  struct ar_error *err)
{
	_cleanup_existing_ struct ar_existing e;
	char path[64];

	if (ar_state_open_existing(root, l->id, false, &e, err) < 0)
		return -1;
	if (e.status != AR_STATUS_CREATED && e.status != AR_STATUS_RUNNING &&
	    e.status != AR_STATUS_PAUSED)
		return ar_error_set_plain(
			err, EINVAL,
			"container `%s` is not running (status: %s)", l->id,
			ar_status_name(e.status));
	l->pid = e.st->pid;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)l->pid);
	l->mnt_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (l->mnt_fd < 0)
		return ar_error_set(err, errno, "open %s", path);
	if (ar_ns_same_as_self(l->pid, "mnt") == 1)
		return ar_error_set_plain(
			err, EINVAL,
			"container `%s` has no mount namespace of its own: a mount would be the host's",
			l->id);
	if (ar_ns_same_as_self(l->pid, "user") == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)l->pid);
		l->user_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (l->user_fd < 0)
			return ar_error_set(err, errno, "open %s", path);
	}
	snprintf(path, sizeof(path), "/proc/%d/root", (int)l->pid);
	l->root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (l->root_fd < 0)
		return ar_error_set(err, errno, "open %s", path);
	/* the namespaces and the root just opened are the container's, not
	 * those of a process that took its pid since */
	if (!ar_state_pid_alive(e.st))
		return ar_error_set_plain(
			err, ESRCH, "container `%s` is not running", l->id);
	return 0;
}

/* fs-specific options "a=b,c" into the filesystem context */
static int fs_configure(int fsfd, const char *data, struct ar_error *err)
{
	_cleanup_free_ char *copy = data ? ar_xstrdup(data) : NULL;
	char *save = NULL;

	if (!copy)
		return 0;
	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int r;

		if (eq) {
			*eq = '\0';
			r = ar_sys_fsconfig(fsfd, AR_FSCONFIG_SET_STRING, tok,
					    eq + 1, 0);
		} else {
			r = ar_sys_fsconfig(fsfd, AR_FSCONFIG_SET_FLAG, tok,
					    NULL, 0);
		}
		if (r < 0)
			return ar_error_set(err, errno, "option `%s%s%s`", tok,
					    eq ? "=" : "", eq ? eq + 1 : "");
	}
	return 0;
}

/* A new filesystem of the mount's type, detached. */
static int open_fs(struct live_mount *lm, struct ar_error *err)
{
	const struct oci_mount *m = lm->m;
	_cleanup_close_ int fsfd = ar_sys_fsopen(m->type, FSOPEN_CLOEXEC);
	struct ar_mount_attr a = { .propagation = 0 };

	if (fsfd < 0)
		return ar_error_set(err, errno, "fsopen `%s`", m->type);
	if (ar_sys_fsconfig(fsfd, AR_FSCONFIG_SET_STRING, "source",
			    m->source && *m->source ? m->source : m->type,
			    0) < 0)
		return ar_error_set(err, errno, "the source of `%s`", m->type);
	if (fs_configure(fsfd, lm->mf.data, err) < 0)
		return -1;
	if (ar_sys_fsconfig(fsfd, AR_FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return ar_error_set(err, errno, "create the `%s` filesystem",
				    m->type);
	lm->tree = ar_sys_fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	if (lm->tree < 0)
		return ar_error_set(err, errno, "fsmount `%s`", m->type);
	a.attr_set = lm->attrs.set | lm->attrs.rec_set;
	a.attr_clr = lm->attrs.clr | lm->attrs.rec_clr;
	if ((a.attr_set || a.attr_clr) &&
	    ar_sys_mount_setattr(lm->tree, "", AT_EMPTY_PATH, &a) < 0)
		return ar_error_set(err, errno, "set the mount's options");
	return 0;
}

static int open_tree_of(struct live *l, struct live_mount *lm,
			struct ar_error *err)
{
	const struct oci_mount *m = lm->m;

	if (!lm->bind)
		return open_fs(lm, err);
	if (lm->mf.idmap) {
		if (m->uid_mappings.n || m->gid_mappings.n) {
			lm->userns_fd = ar_idmap_userns_fd(
				&m->uid_mappings, &m->gid_mappings, err);
			if (lm->userns_fd < 0)
				return -1;
		} else if (l->user_fd >= 0) {
			/* no maps of its own: the container's */
			lm->userns_fd = fcntl(l->user_fd, F_DUPFD_CLOEXEC, 3);
			if (lm->userns_fd < 0)
				return ar_error_set(err, errno, "dup");
		} else {
			return ar_error_set_plain(
				err, EINVAL,
				"idmap without uidMappings/gidMappings needs a container with a user namespace of its own");
		}
		lm->attrs.idmap = true;
		lm->attrs.idmap_recursive = lm->mf.idmap_recursive;
		lm->attrs.userns_fd = lm->userns_fd;
	}
	lm->tree = ar_bind_tree_open(-1, m->source,
				     (lm->mf.flags & MS_REC) != 0, &lm->attrs);
	if (lm->tree < 0)
		return ar_error_set(err, errno, "bind `%s`", m->source);
	return 0;
}

static int attach(struct live *l, struct live_mount *lm, struct ar_error *err)
{
	struct stat st;
	_cleanup_close_ int target = -1;

	if (fstat(lm->tree, &st) < 0)
		return ar_error_set(err, errno, "fstat");
	target = ar_mount_target_in_root(l->root_fd, lm->m->destination,
					 S_ISDIR(st.st_mode), err);
	if (target < 0)
		return -1;
	if (ar_bind_tree_attach(lm->tree, target, &lm->attrs) < 0)
		return ar_error_set(err, errno, "attach the mount");
	return 0;
}

/* Unmount the mount whose root the destination is. The destination is
 * resolved in the container's root without following any symlink, and
 * unmounted through /proc/self/fd/N of that fd (the working directory is
 * our /proc/self/fd: joiner()): a symlink the container put on the path
 * cannot turn it into another mount (a masked path's). */
static int detach(struct live *l, struct live_mount *lm, struct ar_error *err)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_close_ int fd =
		ar_sys_openat2(l->root_fd, lm->m->destination, &how);
	struct statx sx;
	char name[16];

	if (fd < 0)
		return ar_error_set(err, errno,
				    "open (inside the root, no symlink)");
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		  STATX_BASIC_STATS, &sx) < 0)
		return ar_error_set(err, errno, "statx");
	if (!(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return ar_error_set_plain(
			err, ENOSYS,
			"the kernel does not tell a mount point (statx's STATX_ATTR_MOUNT_ROOT: Linux 5.8)");
	if (!(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return ar_error_set_plain(err, EINVAL, "not a mount point");
	/* umount2 takes a path: the fd's name in the working directory */
	snprintf(name, sizeof(name), "%d", fd);
	if (umount2(name, MNT_DETACH) < 0)
		return ar_error_set(err, errno, "umount");
	return 0;
}

/* The joiner's work; its error goes back through the pipe. */
static int joiner(struct live *l, struct ar_error *err)
{
	_cleanup_close_ int fd_dir = -1;

	if (l->user_fd >= 0 && geteuid() != 0) {
		/* not root: the rights over the container's mount namespace
		 * are those of its user namespace; the mounts are made in a
		 * copy of ours that it owns (the sources are the host's) */
		if (setns(l->user_fd, CLONE_NEWUSER) < 0)
			return ar_error_set(err, errno,
					    "join the user namespace of `%s`",
					    l->id);
		if (l->add && unshare(CLONE_NEWNS) < 0)
			return ar_error_set(err, errno,
					    "unshare the mount namespace");
	}
	if (l->add) {
		for (size_t i = 0; i < l->n; i++)
			if (open_tree_of(l, &l->v[i], err) < 0)
				return wrap_item(l, i, err);
	} else {
		fd_dir =
			open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd_dir < 0)
			return ar_error_set(err, errno, "open /proc/self/fd");
	}
	if (setns(l->mnt_fd, CLONE_NEWNS) < 0)
		return ar_error_set(err, errno,
				    "join the mount namespace of `%s`", l->id);
	/* remove: umount2 takes a path, so our own /proc/self/fd (opened
	 * before setns, which moved the working directory to the
	 * namespace's root) becomes the working directory */
	if (!l->add && fchdir(fd_dir) < 0)
		return ar_error_set(err, errno, "fchdir /proc/self/fd");
	for (size_t i = 0; i < l->n; i++) {
		int r = l->add ? attach(l, &l->v[i], err) :
				 detach(l, &l->v[i], err);

		if (r < 0)
			return wrap_item(l, i, err);
	}
	return 0;
}

static int run_joiner(struct live *l, struct ar_error *err)
{
	int p[2];
	pid_t pid;
	int status;
	ssize_t n;
	struct ar_error child_err = AR_ERROR_INIT;

	if (pipe2(p, O_CLOEXEC) < 0)
		return ar_error_set(err, errno, "pipe");
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return ar_error_set(err, e, "fork");
	}
	if (pid == 0) {
		struct ar_error e = AR_ERROR_INIT;

		close(p[0]);
		if (joiner(l, &e) < 0) {
			/* one write: smaller than PIPE_BUF, whole or not */
			(void)!write(p[1], &e, sizeof(e));
			_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	n = ar_read_all(p[0], &child_err, sizeof(child_err));
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return ar_error_set(err, errno, "waitpid");
	if (n == (ssize_t)sizeof(child_err)) {
		child_err.msg[sizeof(child_err.msg) - 1] = '\0';
		*err = child_err;
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ar_error_set_plain(err, EIO,
					  "the mount joiner died (status %#x)",
					  (unsigned)status);
	return 0;
}

int ar_container_mounts_update(const char *root, const char *id,
			       const char *file, bool add, struct ar_error *err)
{
	struct live l = { .id = id,
			  .file = file,
			  .add = add,
			  .mnt_fd = -1,
			  .user_fd = -1,
			  .root_fd = -1 };
	int r = -1;

	if (parse_file(&l, err) == 0 && open_container(&l, root, err) == 0)
		r = run_joiner(&l, err);
	live_release(&l);
	return r;
}
