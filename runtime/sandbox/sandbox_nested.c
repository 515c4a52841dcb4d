/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --nested (profile "nested": true): the command may create namespaces
 * of its own — user namespaces first — as bubblewrap, Codex's sandbox and
 * rootless podman do. What changes against the plain sandbox, and nothing
 * more:
 *
 *   seccomp   clone/unshare with namespace flags, setns, the mount calls
 *             (mount, umount2, pivot_root and the new mount API) and
 *             sethostname/setdomainname (they act on a UTS namespace the
 *             caller owns) are allowed; keyctl, add_key and request_key
 *             fail with ENOSYS instead of EPERM (an OCI runtime inside
 *             then skips its session keyring); everything else of the
 *             agent profile stays denied (bpf, perf_event_open, ...).
 *             Holding the host's root id (see /proc), clone and unshare
 *             are allowed without CLONE_NEWCGROUP only
 *   /proc     no masked or read-only sub-mounts under /proc: the kernel
 *             lets a new user namespace mount a procfs only when the
 *             existing one is fully visible. Not when the sandbox holds
 *             the host's root id (started by root: uid or gid 0 mapped
 *             to itself, or gid 0 among the groups): /proc/sys,
 *             /proc/sysrq-trigger, ... check that id, not a capability,
 *             so the unmasked /proc (or a fresh one mounted from a nested
 *             namespace) would take writes to host-wide sysctls
 *             (kernel.core_pattern runs a program as the host's root).
 *             There every mask and read-only path stays, which also makes
 *             the kernel refuse a fresh procfs inside; nothing of nesting
 *             is lost: a nested user namespace cannot map root without
 *             CAP_SETFCAP, which the sandbox does not hold
 *   Landlock  off: the kernel refuses every mount to a Landlock-restricted
 *             process, which a nested sandbox needs
 *   ids       the user's subordinate ids (/etc/subuid, /etc/subgid, set
 *             by newuidmap/newgidmap) are mapped too, around the user's
 *             own id, when the user has them. Nothing inside can switch
 *             to them (no capability in this namespace; no_new_privs
 *             disarms the setuid newuidmap); podman 4.3 needs them: it
 *             copies a one-line map (leaving its root unmapped) and takes
 *             its single-id path only when that copy fails
 *   devices   /dev/fuse (fuse-overlayfs) and /dev/net/tun (slirp4netns,
 *             pasta) when the host has them: both act only in the
 *             namespaces of the process that opens them
 *   cgroup    /sys/fs/cgroup is the sandbox's own cgroup2 subtree (its
 *             cgroup namespace), read-only, when the host has cgroup v2
 *   /run      an empty tmpfs (slirp4netns makes it a slave mount)
 *   /etc      the host's container configuration (/etc/containers:
 *             policy.json, registries, storage.conf, containers.conf)
 *             read-only; not certs.d (client keys) nor auth files
 *
 * The outer walls are unchanged: the same user namespace (no capability
 * of the host), mount namespace (the inner sandbox sees at most what the
 * outer one shows), pid, net, ipc, uts and cgroup namespaces,
 * no_new_privs, the egress proxy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"
#include "oci_config.h"
#include "sandbox_nested.h"
#include "utils.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* clone and unshare first: nested_syscalls + 2 is the rest */
static const char *const nested_syscalls[] = {
	"clone",     "unshare",	   "setns",	  "mount",
	"umount",    "umount2",	   "pivot_root",  "mount_setattr",
	"open_tree", "move_mount", "fsopen",	  "fsconfig",
	"fsmount",   "fspick",	   "sethostname", "setdomainname",
	NULL,
};

/* Refused with ENOSYS rather than EPERM: the kernel keyring is not
 * namespaced, and crun/runc inside skip their session keyring on ENOSYS
 * (on EPERM they fail). */
static const char *const enosys_syscalls[] = { "keyctl", "add_key",
					       "request_key", NULL };

/* What podman and its tools read of the host's /etc/containers. */
static const char *const containers_etc[] = {
	"containers/policy.json",
	"containers/registries.conf",
	"containers/registries.conf.d",
	"containers/storage.conf",
	"containers/containers.conf",
	"containers/containers.conf.d",
	"containers/mounts.conf",
	"containers/seccomp.json",
	NULL,
};

static bool is_nested_syscall(const char *name)
{
	for (size_t i = 0; nested_syscalls[i]; i++)
		if (strcmp(name, nested_syscalls[i]) == 0)
			return true;
	return false;
}

bool sb_nested_holds_host_root(const struct oci_linux *l, const gid_t *groups,
			       size_t n_groups)
{
	for (size_t i = 0; i < l->uid_mappings.n; i++) {
		const struct oci_id_mapping *m = &l->uid_mappings.items[i];

		if (m->size > 0 && m->host_id == 0)
			return true;
	}
	for (size_t i = 0; i < l->gid_mappings.n; i++) {
		const struct oci_id_mapping *m = &l->gid_mappings.items[i];

		if (m->size > 0 && m->host_id == 0)
			return true;
	}
	for (size_t i = 0; i < n_groups; i++)
		if (groups[i] == 0)
			return true;
	return false;
}

/* sb_nested_holds_host_root for this process's mappings and groups */
static bool holds_host_root(const struct oci_linux *l)
{
	_cleanup_free_ gid_t *groups = NULL;
	int n = getgroups(0, NULL);

	if (n > 0) {
		groups = ar_xcalloc((size_t)n, sizeof(*groups));
		n = getgroups(n, groups);
	}
	return sb_nested_holds_host_root(l, groups, n > 0 ? (size_t)n : 0);
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

size_t sb_subid_ranges(const char *text, const char *user, uint32_t id,
		       struct sb_id_range *out, size_t max)
{
	char idbuf[16];
	size_t n = 0;

	snprintf(idbuf, sizeof(idbuf), "%u", id);
	while (text && *text && n < max) {
		size_t len = strcspn(text, "\n");
		const char *colon = memchr(text, ':', len);
		char *end;
		unsigned long long start, count;

		if (colon && text[0] != '#') {
			size_t nl = (size_t)(colon - text);
			bool mine = (user && strlen(user) == nl &&
				     strncmp(text, user, nl) == 0) ||
				    (strlen(idbuf) == nl &&
				     strncmp(text, idbuf, nl) == 0);

			errno = 0;
			start = strtoull(colon + 1, &end, 10);
			if (mine && errno == 0 && *end == ':' &&
			    end > colon + 1) {
				const char *c = end + 1;

				count = strtoull(c, &end, 10);
				if (errno == 0 && end > c &&
				    (end == text + len || *end == '\r') &&
				    count > 0 && start <= UINT32_MAX &&
				    count <= UINT32_MAX - start &&
				    !(id >= start && id - start < count))
					out[n++] = (struct sb_id_range){
						(uint32_t)start, (uint32_t)count
					};
			}
		}
		text += len;
		if (*text == '\n')
			text++;
	}
	return n;
}

size_t sb_nested_id_map(uint32_t own, const struct sb_id_range *r, size_t n,
			struct oci_id_mapping *out, size_t max)
{
	uint32_t next = 0;
	size_t k = 0;

	if (max == 0)
		return 0;
	out[k++] = (struct oci_id_mapping){ own, own, 1 };
	for (size_t i = 0; i < n; i++) {
		uint32_t host = r[i].start, count = r[i].count;

		while (count > 0 && k < max) {
			uint32_t chunk = count;

			if (next == own)
				next++;
			if (next < own && own - next < chunk)
				chunk = own - next;
			if (UINT32_MAX - 1 - next < chunk)
				chunk = UINT32_MAX - 1 - next;
			if (chunk == 0)
				return k;
			out[k++] = (struct oci_id_mapping){ next, host, chunk };
			next += chunk;
			host += chunk;
			count -= chunk;
		}
	}
	return k;
}

/* The ranges of FILE (subuid/subgid under the host's /etc) for the
 * user; 0 when none or unreadable. */
static size_t read_ranges(const struct ar_sandbox_host *h, const char *file,
			  uint32_t id, struct sb_id_range *out, size_t max)
{
	_cleanup_free_ char *path = ar_xasprintf("%s/%s", h->etc, file);
	_cleanup_free_ char *text = NULL;
	size_t len;

	struct ar_error ignored = AR_ERROR_INIT;

	if (ar_read_file_at(AT_FDCWD, path, 1 << 20, &text, &len, &ignored) < 0)
		return 0;
	return sb_subid_ranges(text, h->user, id, out, max);
}

#define SB_MAX_RANGES 8

/* The user's subordinate ids, around their own id, when they have some
 * and newuidmap/newgidmap are there to set them; *what: for the start
 * line. */
static void nested_ids(struct oci_config *cfg, const struct ar_sandbox_host *h,
		       char *what, size_t what_len)
{
	struct sb_id_range ur[SB_MAX_RANGES], gr[SB_MAX_RANGES];
	struct oci_linux *l = &cfg->linux_;
	size_t nu, ng, total = 0;

	what[0] = '\0';
	if (h->uid == 0 || !ar_in_path("newuidmap") || !ar_in_path("newgidmap"))
		return;
	nu = read_ranges(h, "subuid", h->uid, ur, SB_MAX_RANGES);
	ng = read_ranges(h, "subgid", h->gid, gr, SB_MAX_RANGES);
	if (nu == 0 || ng == 0)
		return;
	l->uid_mappings.items = oci_arena_calloc(&cfg->arena,
						 2 * SB_MAX_RANGES + 2,
						 sizeof(struct oci_id_mapping));
	l->uid_mappings.n = sb_nested_id_map(
		h->uid, ur, nu, l->uid_mappings.items, 2 * SB_MAX_RANGES + 2);
	l->gid_mappings.items = oci_arena_calloc(&cfg->arena,
						 2 * SB_MAX_RANGES + 2,
						 sizeof(struct oci_id_mapping));
	l->gid_mappings.n = sb_nested_id_map(
		h->gid, gr, ng, l->gid_mappings.items, 2 * SB_MAX_RANGES + 2);
	for (size_t i = 0; i < nu; i++)
		total += ur[i].count;
	snprintf(what, what_len, "; subids %u+%zu", ur[0].start, total);
}

/* The host's character device PATH, when it is one, into
 * linux.devices (rootless: the runtime binds the host's node). */
static void nested_device(struct oci_config *cfg, const char *path)
{
	struct oci_linux *l = &cfg->linux_;
	struct oci_device *v;
	struct stat st;

	if (stat(path, &st) < 0 || !S_ISCHR(st.st_mode))
		return;
	for (size_t i = 0; i < l->n_devices; i++)
		if (strcmp(l->devices[i].path, path) == 0)
			return;
	v = oci_arena_calloc(&cfg->arena, l->n_devices + 1, sizeof(*v));
	if (l->n_devices)
		memcpy(v, l->devices, l->n_devices * sizeof(*v));
	v[l->n_devices] = (struct oci_device){
		.path = oci_arena_strdup(&cfg->arena, path),
		.type = 'c',
		.major = major(st.st_rdev),
		.minor = minor(st.st_rdev),
		.file_mode = { .set = true, .v = 0666 },
	};
	l->devices = v;
	l->n_devices++;
}

static void add_mount(struct oci_config *cfg, const char *dest,
		      const char *type, const char *src,
		      const char *const *opts)
{
	struct oci_mount *v;
	struct oci_mount *mt;
	size_t n = 0;

	v = oci_arena_calloc(&cfg->arena, cfg->n_mounts + 1, sizeof(*v));
	if (cfg->n_mounts)
		memcpy(v, cfg->mounts, cfg->n_mounts * sizeof(*v));
	mt = &v[cfg->n_mounts];
	mt->destination = oci_arena_strdup(&cfg->arena, dest);
	mt->type = oci_arena_strdup(&cfg->arena, type);
	mt->source = oci_arena_strdup(&cfg->arena, src);
	while (opts[n])
		n++;
	mt->options.v = oci_arena_calloc(&cfg->arena, n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		mt->options.v[i] = oci_arena_strdup(&cfg->arena, opts[i]);
	mt->options.n = n;
	cfg->mounts = v;
	cfg->n_mounts++;
}

static bool has_mount(const struct oci_config *cfg, const char *dest)
{
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (strcmp(cfg->mounts[i].destination, dest) == 0)
			return true;
	return false;
}

/* cgroup2 (pure v2, or the unified hierarchy of a hybrid host). */
static bool host_has_cgroup2(void)
{
	struct statfs sfs;

	return (statfs("/sys/fs/cgroup", &sfs) == 0 &&
		sfs.f_type == CGROUP2_SUPER_MAGIC) ||
	       (statfs("/sys/fs/cgroup/unified", &sfs) == 0 &&
		sfs.f_type == CGROUP2_SUPER_MAGIC);
}

static void nested_mounts(struct oci_config *cfg,
			  const struct ar_sandbox_host *h)
{
	static const char *const ro_file[] = { "bind", "ro", "nosuid", "nodev",
					       NULL };
	static const char *const ro_dir[] = { "rbind", "rro", "nosuid", "nodev",
					      NULL };
	static const char *const cg[] = { "ro", "nosuid", "noexec", "nodev",
					  NULL };

	static const char *const run[] = { "nosuid", "nodev", "mode=755",
					   "size=1m", NULL };

	/* slirp4netns makes /run a slave mount in its own namespace */
	if (!has_mount(cfg, "/run"))
		add_mount(cfg, "/run", "tmpfs", "tmpfs", run);
	if (host_has_cgroup2() && !has_mount(cfg, "/sys/fs/cgroup"))
		add_mount(cfg, "/sys/fs/cgroup", "cgroup2", "cgroup2", cg);
	for (const char *const *e = containers_etc; *e; e++) {
		_cleanup_free_ char *src = ar_xasprintf("%s/%s", h->etc, *e);
		_cleanup_free_ char *dest = ar_xasprintf("/etc/%s", *e);
		struct stat st;

		if (stat(src, &st) < 0 || has_mount(cfg, dest))
			continue;
		add_mount(cfg, dest, "bind", src,
			  S_ISDIR(st.st_mode) ? ro_dir : ro_file);
	}
}

static void names_rule(struct oci_config *cfg, struct oci_seccomp_syscall *r,
		       const char *const *names, enum oci_seccomp_action action,
		       int errno_ret)
{
	size_t n = 0;

	while (names[n])
		n++;
	memset(r, 0, sizeof(*r));
	r->action = action;
	if (errno_ret >= 0)
		r->errno_ret = (struct oci_opt_u32){ .set = true,
						     .v = (uint32_t)errno_ret };
	r->names.v = oci_arena_calloc(&cfg->arena, n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		r->names.v[i] = oci_arena_strdup(&cfg->arena, names[i]);
	r->names.n = n;
}

/* NAME allowed when its flags (argument 0) hold no CLONE_NEWCGROUP: a
 * process holding the host's root id that owned a cgroup namespace could
 * mount the host's cgroup v1 hierarchies (rooted at the host's root
 * cgroups when no runtime placed the sandbox in them) and write their
 * files, which belong to that id. */
static void no_cgroupns_rule(struct oci_config *cfg,
			     struct oci_seccomp_syscall *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->action = OCI_SCMP_ACT_ALLOW;
	r->names.v = oci_arena_calloc(&cfg->arena, 2, sizeof(char *));
	r->names.v[0] = oci_arena_strdup(&cfg->arena, name);
	r->names.n = 1;
	r->args = oci_arena_calloc(&cfg->arena, 1, sizeof(*r->args));
	r->args[0] = (struct oci_seccomp_arg){
		.index = 0,
		.value = CLONE_NEWCGROUP,
		.value_two = 0,
		.op = OCI_SCMP_CMP_MASKED_EQ,
	};
	r->n_args = 1;
}

int sb_nested_apply(struct oci_config *cfg, const struct ar_sandbox_host *h,
		    char *protections, size_t protections_len,
		    struct ar_error *err)
{
	struct oci_seccomp *sc = cfg->linux_.seccomp;
	struct oci_seccomp_syscall *v;
	struct oci_linux *l = &cfg->linux_;
	char ids[64];
	size_t k = 0, len;
	bool host_root;

	if (!sc)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox --nested: the config has no seccomp profile to relax");
	nested_ids(cfg, h, ids, sizeof(ids));
	host_root = holds_host_root(l);
	/* the argument-conditioned clone/unshare rules go: one plain rule
	 * allows them (host root: two rules without CLONE_NEWCGROUP) */
	v = oci_arena_calloc(&cfg->arena, sc->n_syscalls + 4, sizeof(*v));
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		const struct oci_seccomp_syscall *s = &sc->syscalls[i];

		if (s->action == OCI_SCMP_ACT_ALLOW && s->n_args > 0 &&
		    s->names.n == 1 && is_nested_syscall(s->names.v[0]))
			continue;
		v[k++] = *s;
	}
	if (host_root) {
		names_rule(cfg, &v[k++], nested_syscalls + 2,
			   OCI_SCMP_ACT_ALLOW, -1);
		no_cgroupns_rule(cfg, &v[k++], "clone");
		no_cgroupns_rule(cfg, &v[k++], "unshare");
	} else
		names_rule(cfg, &v[k++], nested_syscalls, OCI_SCMP_ACT_ALLOW,
			   -1);
	names_rule(cfg, &v[k++], enosys_syscalls, OCI_SCMP_ACT_ERRNO, ENOSYS);
	sc->syscalls = v;
	sc->n_syscalls = k;

	if (host_root)
		ar_warn("sandbox: --nested started by root: /proc stays masked and /proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus, /proc/fs read-only, and no cgroup namespace can be made inside (the sandbox's root is the host's root, whom /proc/sys and the host's cgroup files obey); nested user namespaces cannot map root either (no CAP_SETFCAP), so bubblewrap and podman inside fail: run the sandbox as an ordinary user to nest");
	else {
		/* only the /sys masks stay */
		drop_proc(&l->masked_paths);
		drop_proc(&l->readonly_paths);
	}
	nested_device(cfg, "/dev/fuse");
	nested_device(cfg, "/dev/net/tun");
	nested_mounts(cfg, h);
	len = strlen(protections);
	snprintf(protections + len, protections_len - len,
		 ",nested(userns inside%s; landlock off; /proc %s)", ids,
		 host_root ? "masked: host root" : "unmasked");
	for (size_t i = 0; i < cfg->annotations.n; i++)
		if (strcmp(cfg->annotations.items[i].key,
			   "run.agentrun.sandbox.protections") == 0)
			cfg->annotations.items[i].value =
				oci_arena_strdup(&cfg->arena, protections);
	return 0;
}
