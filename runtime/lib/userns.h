/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uid/gid maps of a new user namespace.
 *
 * Written by the runtime (the parent) for a child that created (or is
 * about to run in) a new user namespace, before the child proceeds:
 *
 *  - privileged (euid 0 with CAP_SETUID over the parent namespace):
 *    /proc/PID/{uid,gid}_map written directly;
 *  - unprivileged with a single range of size 1 mapping our own euid/egid:
 *    written directly, with /proc/PID/setgroups set to "deny" first (the
 *    kernel requires it for an unprivileged gid_map);
 *  - anything else: newuidmap/newgidmap (setuid helpers reading
 *    /etc/subuid and /etc/subgid). Only then does the runtime exec a
 *    helper.
 */
#ifndef AGENTRUN_USERNS_H
#define AGENTRUN_USERNS_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"

/* Write the uid and gid maps of `pid` from the config (no mappings: 0 is
 * the caller, one id, as crun). *setgroups_denied
 * tells whether setgroups(2) is disabled in the new namespace (the
 * container process must then skip setgroups). */
int ar_userns_write_maps(pid_t pid, const struct oci_id_mappings *uids,
			 const struct oci_id_mappings *gids,
			 bool *setgroups_denied, struct ar_error *err);

/* Format a mapping the way /proc/PID/uid_map wants it ("0 1000 1\n..."),
 * into buf. Returns the length or -1 (ENOSPC) when it does not fit. Pure;
 * unit-tested. */
int ar_userns_format_map(const struct oci_id_mappings *m, char *buf,
			 size_t size);

/* True when the mapping can be written without newuidmap by a process of
 * effective id `own` that is not privileged. Pure; unit-tested. */
bool ar_userns_map_is_own(const struct oci_id_mappings *m, unsigned own);

/* True when this process may write any map of its own id range directly
 * (euid 0, in the initial user namespace or in a rootless engine's). */
bool ar_userns_privileged(void);

/* True when this process runs in the initial user namespace: the inode of
 * /proc/self/ns/user is the kernel's fixed PROC_USER_INIT_INO, as crun
 * checks (an identity uid_map, as systemd 260 gives user namespaces of
 * its own, is not the initial namespace). When /proc cannot tell: the
 * uid_map text (all ids mapped to themselves). The answer is cached. */
bool ar_userns_is_initial(void);

#endif
