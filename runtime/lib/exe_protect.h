/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Protection of the runtime binary against CVE-2019-5736: a container
 * must never be able to write the host's agentrun binary through
 * /proc/<pid>/exe of a runtime process that it can see (the container's
 * init, or the joining process of `exec`, which execve's the container's
 * program: a container program `#!/proc/self/exe` runs the runtime's
 * image inside the container).
 */
#ifndef AGENTRUN_EXE_PROTECT_H
#define AGENTRUN_EXE_PROTECT_H

#include <stdbool.h>

#include "error.h"

/* True for the commands that start a process inside a container (run,
 * create, exec, sandbox): only they need the protection. */
bool ar_exe_protect_needed_for(const char *command);

/* Make sure /proc/self/exe is not a file that a container could write:
 * returns 0 at once when it is a sealed memfd, on a read-only mount, or
 * (unprivileged) not writable by this user; otherwise re-executes this
 * binary (argv, environ) from a read-only, detached bind mount of
 * itself (open_tree + mount_setattr: no copy, page cache shared) or, if
 * the new mount API is not usable, from a sealed memfd copy. Returns -1
 * only if none of that is possible. */
int ar_exe_protect(char **argv, struct ar_error *err);

/* The runtime binary's path (malloc'd), also after ar_exe_protect's
 * re-exec from a copy that has none; NULL when unknown. */
char *ar_exe_path(void);

#endif
