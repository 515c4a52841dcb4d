/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Thin wrappers for the fd-based mount and path syscalls (openat2, the new
 * mount API, pivot_root) that older C libraries do not wrap.  Private to
 * the rootfs code (mounts*.c, devices.c, rootfs_path.c, ...).
 */
#ifndef AGENTRUN_MOUNT_SYSCALLS_H
#define AGENTRUN_MOUNT_SYSCALLS_H

#include <fcntl.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif
#ifndef MS_LAZYTIME
#define MS_LAZYTIME (1 << 25)
#endif

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#define MOUNT_ATTR__ATIME 0x00000070
#define MOUNT_ATTR_RELATIME 0x00000000
#define MOUNT_ATTR_NOATIME 0x00000010
#define MOUNT_ATTR_STRICTATIME 0x00000020
#define MOUNT_ATTR_NODIRATIME 0x00000080
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif
#ifndef MOUNT_ATTR_NOSYMFOLLOW
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000
#endif

#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef __NR_fsopen
#define __NR_fsopen 430
#endif
#ifndef __NR_fsconfig
#define __NR_fsconfig 431
#endif
#ifndef __NR_fsmount
#define __NR_fsmount 432
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x00000001
#endif
/* enum fsconfig_command (linux/mount.h) */
#define AR_FSCONFIG_SET_FLAG 0
#define AR_FSCONFIG_SET_STRING 1
#define AR_FSCONFIG_CMD_CREATE 6

/* Same layout as the kernel's struct mount_attr (MOUNT_ATTR_SIZE_VER0). */
struct ar_mount_attr {
	uint64_t attr_set;
	uint64_t attr_clr;
	uint64_t propagation;
	uint64_t userns_fd;
};

static inline int ar_sys_openat2(int dirfd, const char *path,
				 struct open_how *how)
{
	return (int)syscall(__NR_openat2, dirfd, path, how, sizeof(*how));
}

static inline int ar_sys_open_tree(int dirfd, const char *path,
				   unsigned int flags)
{
	return (int)syscall(__NR_open_tree, dirfd, path, flags);
}

static inline int ar_sys_move_mount(int from_dirfd, const char *from_path,
				    int to_dirfd, const char *to_path,
				    unsigned int flags)
{
	return (int)syscall(__NR_move_mount, from_dirfd, from_path, to_dirfd,
			    to_path, flags);
}

static inline int ar_sys_mount_setattr(int dirfd, const char *path,
				       unsigned int flags,
				       struct ar_mount_attr *attr)
{
	return (int)syscall(__NR_mount_setattr, dirfd, path, flags, attr,
			    sizeof(*attr));
}

static inline int ar_sys_fsopen(const char *fstype, unsigned int flags)
{
	return (int)syscall(__NR_fsopen, fstype, flags);
}

static inline int ar_sys_fsconfig(int fd, unsigned int cmd, const char *key,
				  const void *value, int aux)
{
	return (int)syscall(__NR_fsconfig, fd, cmd, key, value, aux);
}

static inline int ar_sys_fsmount(int fd, unsigned int flags,
				 unsigned int attr_flags)
{
	return (int)syscall(__NR_fsmount, fd, flags, attr_flags);
}

static inline int ar_sys_pivot_root(const char *new_root, const char *put_old)
{
	return (int)syscall(__NR_pivot_root, new_root, put_old);
}

#endif
