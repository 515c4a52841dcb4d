/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --nested (profile "nested": true): the command may create namespaces
 * of its own — user namespaces first — as bubblewrap, Codex's sandbox and
 * rootless podman do. What changes against the plain sandbox, and nothing
 * more:
 *
 *   seccomp   clone/unshare with namespace flags, setns, and the mount
 *             calls (mount, umount2, pivot_root and the new mount API)
 *             are allowed; everything else of the agent profile stays
 *             denied (keyctl, bpf, ptrace limits, ...)
 *   /proc     no masked or read-only sub-mounts under /proc: the kernel
 *             lets a new user namespace mount a procfs only when the
 *             existing one is fully visible
 *   Landlock  off: the kernel refuses every mount to a Landlock-restricted
 *             process, which a nested sandbox needs
 *
 * The outer walls are unchanged: the same user namespace (one uid,
 * no capability of the host), mount namespace (the inner sandbox sees at
 * most what the outer one shows), pid, net, ipc, uts and cgroup
 * namespaces, no_new_privs, the egress proxy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "oci_config.h"
#include "sandbox_nested.h"

static const char *const nested_syscalls[] = {
	"clone",   "unshare",	 "setns",	  "mount",     "umount",
	"umount2", "pivot_root", "mount_setattr", "open_tree", "move_mount",
	"fsopen",  "fsconfig",	 "fsmount",	  "fspick",    NULL,
};

static bool is_nested_syscall(const char *name)
{
	for (size_t i = 0; nested_syscalls[i]; i++)
		if (strcmp(name, nested_syscalls[i]) == 0)
			return true;
	return false;
}

static void drop_proc(struct oci_strv *sv)
{
	size_t j = 0;

	for (size_t i = 0; i < sv->n; i++)
		if (strncmp(sv->v[i], "/proc/", 6) != 0)
			sv->v[j++] = sv->v[i];
	sv->n = j;
	if (sv->v)
		sv->v[j] = NULL;
}

int sb_nested_apply(struct oci_config *cfg, const char *protections,
		    struct ar_error *err)
{
	struct oci_seccomp *sc = cfg->linux_.seccomp;
	struct oci_seccomp_syscall *v;
	struct oci_linux *l = &cfg->linux_;
	size_t n = 0, k = 0;

	if (!sc)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox --nested: the config has no seccomp profile to relax");
	/* the argument-conditioned clone/unshare rules go: one plain rule
	 * allows them */
	v = oci_arena_calloc(&cfg->arena, sc->n_syscalls + 1, sizeof(*v));
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		const struct oci_seccomp_syscall *s = &sc->syscalls[i];

		if (s->action == OCI_SCMP_ACT_ALLOW && s->n_args > 0 &&
		    s->names.n == 1 && is_nested_syscall(s->names.v[0]))
			continue;
		v[k++] = *s;
	}
	while (nested_syscalls[n])
		n++;
	v[k].action = OCI_SCMP_ACT_ALLOW;
	v[k].names.v = oci_arena_calloc(&cfg->arena, n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		v[k].names.v[i] =
			oci_arena_strdup(&cfg->arena, nested_syscalls[i]);
	v[k].names.n = n;
	sc->syscalls = v;
	sc->n_syscalls = k + 1;

	/* only the /sys masks stay */
	drop_proc(&l->masked_paths);
	drop_proc(&l->readonly_paths);
	for (size_t i = 0; i < cfg->annotations.n; i++)
		if (strcmp(cfg->annotations.items[i].key,
			   "run.agentrun.sandbox.protections") == 0)
			cfg->annotations.items[i].value =
				oci_arena_strdup(&cfg->arena, protections);
	return 0;
}
