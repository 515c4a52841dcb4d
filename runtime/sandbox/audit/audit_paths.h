/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The file syscalls the --audit and --learn listener observes
 * (audit_paths.c): how each call is decoded from its arguments (which
 * are paths, relative to which directory fd, whether a symbolic link as
 * the last component is followed, the open flags), and the path the
 * kernel will act on, resolved in the calling process's root and mount
 * namespace through /proc/PID (cwd, fd/N, root). Observation only: the
 * process can change its memory, its cwd or the tree between this
 * resolution and the kernel's (TOCTOU); nothing is decided on it.
 */
#ifndef AGENTRUN_AUDIT_PATHS_H
#define AGENTRUN_AUDIT_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SB_MAX_STR 4096 /* bytes read per string argument */

enum sb_fop {
	SB_FOP_OPEN,
	SB_FOP_TRUNCATE,
	SB_FOP_MKDIR,
	SB_FOP_MKNOD,
	SB_FOP_UNLINK,
	SB_FOP_RMDIR,
	SB_FOP_RENAME,
	SB_FOP_LINK,
	SB_FOP_SYMLINK,
	SB_FOP_CHMOD,
	SB_FOP_CHOWN,
	SB_FOP_SETXATTR,
	SB_FOP_REMOVEXATTR,
	SB_FOP_EXEC,
};

struct sb_fpath {
	int dfd; /* AT_FDCWD or the directory fd the path is relative to */
	uint64_t addr; /* the string, in the process's memory */
	bool follow; /* a symbolic link as the last component is followed */
	bool move; /* the call moves the path, with what is below it */
};

struct sb_fcall {
	const char *syscall; /* "openat" (static) */
	enum sb_fop op;
	const char *op_name; /* "open", "rename", ... (static) */
	size_t n; /* path arguments in p: 0, 1 or 2 */
	struct sb_fpath p[2];
	uint64_t flags; /* an open's flags */
	bool write; /* changes the file system (an open: write flags) */
};

/* The kernel's __O_TMPFILE bit (the C library's __O_TMPFILE includes
 * O_DIRECTORY). */
#define SB_O_TMPFILE_BIT ((uint64_t)020000000)
/* The open flags that make an open a write: O_WRONLY, O_RDWR, O_CREAT,
 * O_TRUNC, O_TMPFILE. */
#define SB_OPEN_WRITE_FLAGS                                                    \
	((uint64_t)(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC) | SB_O_TMPFILE_BIT)

/* The syscalls that create, change, rename or remove a file by path,
 * NULL-terminated (--audit observes them). */
extern const char *const sb_fcall_write_names[];

/* Decode a call of syscall `name` with arguments `args`. mem:
 * /proc/PID/mem (openat2's struct open_how is read from it; -1: its
 * flags are taken as 0). False when `name` is none of the file syscalls
 * known here. */
bool sb_fcall_decode(const char *name, const uint64_t args[6], int mem,
		     struct sb_fcall *out);

/* The NUL-terminated string at addr in the memory behind mem (at most
 * SB_MAX_STR bytes), malloc'd; NULL when unreadable. */
char *sb_read_str(int mem, uint64_t addr);

/* The target of the magic link /proc/PID/WHAT ("cwd", "fd/3"), malloc'd,
 * or NULL. */
char *sb_proc_link(pid_t pid, const char *what);

/* `path` made absolute against the process's cwd or directory fd dfd,
 * with ".", ".." and repeated slashes resolved by name. Malloc'd; NULL
 * when path is NULL or the base cannot be read. */
char *sb_path_lexical(pid_t pid, int dfd, const char *path);

/* The path the kernel acts on when process pid passes `path` relative
 * to dfd: every directory resolved in the process's root (symbolic
 * links, "..", mount points: openat2 RESOLVE_IN_ROOT under
 * /proc/PID/root), and the last component followed when `follow` and it
 * is a symbolic link (up to 40 links, as the kernel). An empty path is
 * dfd itself (AT_EMPTY_PATH). Where a directory does not exist (the call
 * will fail) the rest is resolved by name (sb_path_lexical). Malloc'd;
 * NULL when the process cannot be read. */
char *sb_path_resolve(pid_t pid, int dfd, const char *path, bool follow);

#endif
