/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox as an ordinary OCI config, built from the host: who the user
 * is, where the workspace is, which host paths show through. Everything
 * below (mounts, namespaces, seccomp, the lifecycle) is the code every
 * `agentrun run` uses.
 *
 * Identity: a keep-id user namespace maps the user's uid and gid to
 * themselves (one range of size 1: no newuidmap, no /etc/subuid needed).
 * The container process holds the capabilities of its own namespace
 * while it sets up the mounts and loses them at execve: it is not uid 0,
 * it has no ambient capabilities and the config clears every set. Files
 * it creates in the workspace belong to the user on the host; nothing is
 * ever re-owned. Host files of other owners show as nobody/nogroup.
 * Run by root, the same map keeps uid 0 (0 -> 0) and the empty capability
 * sets leave it root in name only: no CAP_DAC_OVERRIDE, no CAP_SYS_ADMIN,
 * in a namespace that owns nothing of the host.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landlock.h"
#include "log.h"
#include "net_loopback.h"
#include "profile.h"
#include "protect.h"
#include "home_secrets.h"
#include "sandbox_config.h"
#include "sandbox_egress.h"
#include "sandbox_env.h"
#include "sandbox_etc.h"
#include "sandbox_home.h"
#include "sandbox_mounts.h"
#include "utils.h"

/* ---- paths ---- */

char *ar_sandbox_find_workspace(const char *cwd)
{
	_cleanup_free_ char *dir = ar_xstrdup(cwd);
	struct stat st;

	/* Walk up looking for .git (a directory, or a file for worktrees
	 * and submodules) instead of exec'ing git on every start. */
	for (;;) {
		_cleanup_free_ char *g = ar_xasprintf(
			"%s/.git", strcmp(dir, "/") == 0 ? "" : dir);
		char *slash;

		if (lstat(g, &st) == 0)
			return ar_steal_ptr(&dir);
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	return ar_xstrdup(cwd);
}

/* ---- the host ---- */

int ar_sandbox_host_detect(struct ar_sandbox_host *h, struct ar_error *err)
{
	struct passwd *pw;
	struct group *gr;
	const char *home;
	char buf[PATH_MAX];
	extern char **environ;

	memset(h, 0, sizeof(*h));
	h->uid = getuid();
	h->gid = getgid();
	h->environ = environ;
	h->etc = "/etc";
	h->proc = "/proc";
	pw = getpwuid(h->uid);
	h->user = pw ? ar_xstrdup(pw->pw_name) :
		       ar_xasprintf("user%u", (unsigned)h->uid);
	gr = getgrgid(h->gid);
	h->group = gr ? ar_xstrdup(gr->gr_name) : ar_xstrdup(h->user);
	h->shell = ar_xstrdup(
		pw && pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh");
	home = getenv("HOME");
	if (!home || home[0] != '/')
		home = pw ? pw->pw_dir : NULL;
	if (!home)
		return ar_error_set_plain(
			err, ENOENT,
			"sandbox: no home directory for uid %u ($HOME unset, no passwd entry)",
			(unsigned)h->uid);
	h->home = realpath(home, NULL);
	if (!h->home)
		h->home = ar_xstrdup(home); /* a home that does not exist */
	if (!getcwd(buf, sizeof(buf)))
		return ar_error_set(err, errno, "sandbox: current directory");
	h->cwd = ar_xstrdup(buf);
	return 0;
}

void ar_sandbox_host_release(struct ar_sandbox_host *h)
{
	free(h->user);
	free(h->group);
	free(h->home);
	free(h->shell);
	free(h->cwd);
	memset(h, 0, sizeof(*h));
}

void ar_sandbox_info_release(struct ar_sandbox_info *info)
{
	free(info->workspace);
	free(info->landlock_rules);
	if (info->protect)
		sb_protect_release(info->protect);
	free(info->protect);
	memset(info, 0, sizeof(*info));
}

/* ---- the config ---- */

static char **strv_dup(struct ar_arena *a, const char *const *v, size_t n)
{
	char **r = oci_arena_calloc(a, n + 1, sizeof(char *));

	for (size_t i = 0; i < n; i++)
		r[i] = oci_arena_strdup(a, v[i]);
	return r;
}

static void strv_set(struct ar_arena *a, struct oci_strv *out,
		     const char *const *v)
{
	size_t n = 0;

	while (v[n])
		n++;
	out->v = strv_dup(a, v, n);
	out->n = n;
}

static void kv_add(struct oci_config *cfg, struct oci_kv **items, size_t *cap,
		   const char *k, const char *v)
{
	struct oci_kv_list *l = &cfg->annotations;

	if (l->n >= *cap) { /* never write past the vector */
		*cap = (l->n + 4) * 2;
		*items = ar_xrealloc(*items, *cap * sizeof(**items));
	}
	(*items)[l->n].key = oci_arena_strdup(&cfg->arena, k);
	(*items)[l->n].value = oci_arena_strdup(&cfg->arena, v);
	l->n++;
	l->items = *items;
}

/* Host system directories, read-only. Merged-/usr links (/bin -> usr/bin)
 * are recreated in the rootfs by ar_sandbox_bundle_write instead. */
static void system_mounts(struct sb_mounts *m)
{
	static const char *const sys_dirs[] = {
		"/usr",	  "/bin",    "/sbin", "/lib", "/lib32",
		"/lib64", "/libx32", "/opt",  "/nix", NULL,
	};
	struct stat st;

	sb_mount_add(m, "/proc", "proc", "proc",
		     SB_OPTS("nosuid", "noexec", "nodev"));
	sb_mount_add(m, "/dev", "tmpfs", "tmpfs",
		     SB_OPTS("nosuid", "strictatime", "mode=755",
			     "size=65536k"));
	sb_mount_add(m, "/dev/pts", "devpts", "devpts",
		     SB_OPTS("nosuid", "noexec", "newinstance", "ptmxmode=0666",
			     "mode=0620"));
	sb_mount_add(m, "/dev/shm", "tmpfs", "shm",
		     SB_OPTS("nosuid", "noexec", "nodev", "mode=1777",
			     "size=65536k"));
	sb_mount_add(m, "/sys", "sysfs", "sysfs",
		     SB_OPTS("nosuid", "noexec", "nodev", "ro"));
	for (const char *const *d = sys_dirs; *d; d++) {
		if (lstat(*d, &st) < 0 || !S_ISDIR(st.st_mode))
			continue; /* absent, or a link made in the rootfs */
		sb_mount_add(m, *d, "bind", *d,
			     SB_OPTS("rbind", "rro", "rnodev"));
	}
	sb_mount_add(m, "/tmp", "tmpfs", "tmpfs",
		     SB_OPTS("nosuid", "nodev", "mode=1777", "size=50%"));
	sb_mount_add(m, "/var/tmp", "tmpfs", "tmpfs",
		     SB_OPTS("nosuid", "nodev", "mode=1777", "size=10%"));
}

/* A user-requested bind (--ro/--rw or the profile). Command-line paths
 * must exist; profile paths are skipped when absent. */
static int user_bind(struct sb_mounts *m, const struct ar_sandbox_host *h,
		     const char *what, const char *path, bool rw,
		     bool from_profile, struct ar_error *err)
{
	_cleanup_free_ char *real = sb_expand_path(h, path);

	if (!real) {
		if (from_profile && errno == ENOENT) {
			ar_debug(
				"sandbox: profile %s `%s` does not exist, skipped",
				what, path);
			return 0;
		}
		return ar_error_set(err, errno, "sandbox: %s `%s`", what, path);
	}
	if (ar_sandbox_path_is_secret(h->home, real))
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: %s `%s`: refusing to share a secret store (on the never-share list, see docs/sandbox.md)",
			what, path);
	sb_bind(m, real, rw);
	return 0;
}

/* "~/x" -> HOME/x, an absolute path kept, no symlink resolution (the
 * path may not exist yet). Malloc'd, NULL for anything else. */
static char *profile_lexical(const struct ar_sandbox_host *h, const char *p)
{
	if (p[0] == '~' && (p[1] == '/' || p[1] == '\0'))
		return ar_xasprintf("%s%s", h->home, p + 1);
	return p[0] == '/' ? ar_xstrdup(p) : NULL;
}

static bool ends_with_slash(const char *p)
{
	size_t n = strlen(p);

	return n > 1 && p[n - 1] == '/';
}

/* mkdir -p below the home directory (0700; the user's, since agentrun
 * runs as the user). Components are made one by one without following
 * a symbolic link at the end of each. */
static int mkdir_below_home(const struct ar_sandbox_host *h, const char *path)
{
	_cleanup_free_ char *p = ar_xstrdup(path);
	struct stat st;

	if (!ar_path_under(p, h->home) || strcmp(p, h->home) == 0 ||
	    strstr(p, "/../") || strstr(p, "/./"))
		return -1;
	for (char *s = strchr(p + strlen(h->home) + 1, '/');;
	     s = strchr(s + 1, '/')) {
		if (s)
			*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -1;
		if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode))
			return -1; /* a link or a file: not ours to follow */
		if (!s)
			return 0;
		*s = '/';
	}
}

/* Before the profile's binds: its directories ("~/.claude/", a trailing
 * '/') are created on the host when missing, so what the agent CLI
 * writes there (its login) persists; its read-only entries below one of
 * its read-write directories are created too (a directory for a
 * trailing '/', else a file: "{}" for .json, empty otherwise), so that
 * the agent cannot create them with content the CLI runs outside the
 * sandbox later (hooks, notify commands). Only below $HOME. */
static void profile_prepare(const struct oci_profile *pf,
			    const struct ar_sandbox_host *h)
{
	for (size_t i = 0; pf && i < pf->rw.n; i++) {
		_cleanup_free_ char *p = profile_lexical(h, pf->rw.v[i]);

		if (p && ends_with_slash(p) && access(p, F_OK) < 0) {
			p[strlen(p) - 1] = '\0';
			if (mkdir_below_home(h, p) == 0)
				ar_log(AR_LOG_INFO,
				       "sandbox: profile: created %s (0700) for the agent's config",
				       p);
		}
	}
	for (size_t i = 0; pf && i < pf->ro.n; i++) {
		_cleanup_free_ char *p = profile_lexical(h, pf->ro.v[i]);
		bool under_rw = false;
		struct stat st;

		if (!p || lstat(p, &st) == 0)
			continue;
		for (size_t j = 0; j < pf->rw.n && !under_rw; j++) {
			_cleanup_free_ char *d =
				profile_lexical(h, pf->rw.v[j]);

			under_rw = d && ends_with_slash(d) &&
				   ar_path_under(p, d) && strcmp(p, d) != 0;
		}
		if (!under_rw)
			continue;
		if (ends_with_slash(p)) {
			p[strlen(p) - 1] = '\0';
			mkdir_below_home(h, p);
		} else {
			_cleanup_close_ int fd =
				open(p,
				     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					     O_CLOEXEC,
				     0600);
			size_t n = strlen(p);

			if (fd >= 0 && n > 5 && strcmp(p + n - 5, ".json") == 0)
				(void)!write(fd, "{}\n", 3);
		}
	}
}

static int user_hide(struct sb_mounts *m, const struct ar_sandbox_host *h,
		     const char *path, bool from_profile, struct ar_error *err)
{
	_cleanup_free_ char *real = sb_expand_path(h, path);

	if (!real) {
		if (errno == ENOENT && from_profile)
			return 0;
		return ar_error_set(err, errno, "sandbox: --hide `%s`", path);
	}
	sb_hide(m, real);
	return 0;
}

/* Never a workspace: binding one read-write would share the host. */
static const char *const shared_dirs[] = {
	"/",	"/tmp", "/var/tmp", "/dev",   "/dev/shm", "/proc",
	"/sys", "/run", "/etc",	    "/usr",   "/var",	  "/home",
	"/opt", "/srv", "/mnt",	    "/media", "/boot",	  NULL,
};

int ar_sandbox_workspace(const struct ar_sandbox_opts *o,
			 const struct ar_sandbox_host *h, char **out,
			 struct ar_error *err)
{
	const char *w = o->workspace;

	if (!w && o->profile && o->profile->workspace)
		w = o->profile->workspace;
	if (!w) {
		*out = ar_sandbox_find_workspace(h->cwd);
		/* a dotfiles repository in ~ makes ~ the git top-level of
		 * every directory below it: take the current directory */
		if (ar_path_under(h->home, *out) &&
		    !ar_path_under(h->home, h->cwd)) {
			ar_log(AR_LOG_INFO,
			       "sandbox: the git top-level `%s` is your home directory (or above it), not taken as the workspace: using the current directory",
			       *out);
			free(*out);
			*out = ar_xstrdup(h->cwd);
		}
	} else {
		*out = sb_expand_path(h, w);
		if (!*out)
			return ar_error_set(err, errno,
					    "sandbox: workspace `%s`", w);
	}
	for (const char *const *d = shared_dirs; *d; d++)
		if (strcmp(*out, *d) == 0)
			return ar_error_set_plain(
				err, EINVAL,
				"sandbox: the workspace would be `%s`, a directory shared with the whole system (other users' files and sockets): run from a project directory or pass --workspace DIR",
				*out);
	/* The home directory (or above it) only when named on the command
	 * line: everything in it would be readable and writable. */
	if (ar_path_under(h->home, *out) && !o->workspace)
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: the workspace would be `%s`, %s: the command could read every file in it and write your shell rc files, ~/.config and systemd user units; run from a project directory, or pass --workspace %s if you mean it",
			*out,
			strcmp(*out, h->home) == 0 ?
				"your home directory" :
				"a directory that contains your home directory",
			*out);
	if (ar_sandbox_path_is_secret(h->home, *out))
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: workspace `%s` is a secret store (on the never-share list)",
			*out);
	return 0;
}

/* The protected paths' mounts (protect.h); overlay: the workspace is an
 * overlay (only the read-only binds: nothing of the run reaches the
 * workspace before a commit); idmap_root: the workspace bind is
 * idmapped (root on another user's workspace), pinned gitdirs get the
 * same mapping. */
static void protect_mounts(const struct sb_protect *p, struct sb_mounts *m,
			   bool overlay, bool idmap_root)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct sb_protect_entry *e = &p->v[i];

		switch (e->kind) {
		case SB_PROT_RO:
			sb_bind(m, e->path, false);
			break;
		case SB_PROT_PIN:
			if (overlay)
				break;
			sb_mount_add(m, e->path, "bind", e->path,
				     SB_OPTS("rbind", "rw", "nosuid", "nodev"));
			if (idmap_root)
				sb_workspace_idmap(m, e->path);
			break;
		case SB_PROT_ABSENT:
			if (overlay)
				break;
			sb_mount_add(m, e->path, "tmpfs", "tmpfs",
				     SB_OPTS("ro", "nosuid", "nodev", "noexec",
					     "mode=0500", "size=4k"));
			break;
		case SB_PROT_WATCH:
			break;
		}
	}
}

/* --overlay: the workspace as an overlay (userxattr: the kernel's
 * unprivileged overlayfs) whose upper layer is outside it. */
static int overlay_mount(struct sb_mounts *m, const char *ws,
			 const struct ar_sandbox_opts *o, struct ar_error *err)
{
	const char *paths[] = { ws, o->overlay_upper, o->overlay_work };
	char *lower, *upper, *work;

	for (size_t i = 0; i < AR_ARRAY_SIZE(paths); i++)
		if (strpbrk(paths[i], ",:\\"))
			return ar_error_set_plain(
				err, EINVAL,
				"--overlay: `%s` contains ',', ':' or '\\', which overlayfs options cannot carry",
				paths[i]);
	lower = oci_arena_printf(m->a, "lowerdir=%s", ws);
	upper = oci_arena_printf(m->a, "upperdir=%s", o->overlay_upper);
	work = oci_arena_printf(m->a, "workdir=%s", o->overlay_work);
	sb_mount_add(m, ws, "overlay", "overlay",
		     SB_OPTS(lower, upper, work, "userxattr", "nosuid",
			     "nodev"));
	return 0;
}

static bool visible_rw_or_ro(const struct oci_config *cfg, const char *p)
{
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct oci_mount *mt = &cfg->mounts[i];

		if ((strcmp(mt->type, "bind") == 0 ||
		     strcmp(mt->type, "overlay") == 0) &&
		    strcmp(mt->source, "/dev/null") != 0 &&
		    ar_path_under(p, mt->destination))
			return true;
	}
	return false;
}

/* Landlock rules mirroring the mounts: read (and execute) everywhere,
 * write only where a mount is writable. The paths are the config's. */
static void landlock_rules(const struct oci_config *cfg,
			   struct ar_sandbox_info *info)
{
	struct ar_landlock_rule *v = ar_xcalloc(cfg->n_mounts + 3, sizeof(*v));
	size_t n = 0;

	v[n++] = (struct ar_landlock_rule){ "/", false };
	v[n++] = (struct ar_landlock_rule){ "/dev", true };
	v[n++] = (struct ar_landlock_rule){ "/proc", true };
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct oci_mount *mt = &cfg->mounts[i];
		bool rw = false;

		if (strcmp(mt->type, "tmpfs") == 0 ||
		    strcmp(mt->type, "bind") == 0 ||
		    strcmp(mt->type, "overlay") == 0) {
			rw = true;
			for (size_t j = 0; j < mt->options.n; j++)
				if (!strcmp(mt->options.v[j], "ro") ||
				    !strcmp(mt->options.v[j], "rro"))
					rw = false;
		}
		/* a newline cannot be written in the annotation: such a
		 * path gets no write rule (denied, the safe side) */
		if (!rw || ar_path_under(mt->destination, "/dev") ||
		    strcmp(mt->source, "/dev/null") == 0 ||
		    strchr(mt->destination, '\n'))
			continue;
		v[n++] = (struct ar_landlock_rule){ mt->destination, true };
	}
	info->landlock_rules = v;
	info->n_landlock_rules = n;
}

static int want_landlock(const struct ar_sandbox_opts *o, bool *on,
			 struct ar_error *err)
{
	int want = o->landlock;

	if (want < 0 && o->profile && o->profile->landlock.set)
		want = o->profile->landlock.v;
	*on = want != 0 && ar_landlock_abi() > 0;
	if (want == 1 && !*on)
		return ar_error_set_plain(
			err, ENOTSUP,
			"sandbox: refusing to start without Landlock (--landlock on; doctor check `landlock`): the kernel has none");
	return 0;
}

static void linux_part(struct oci_config *cfg, const struct ar_sandbox_host *h,
		       bool netns)
{
	struct ar_arena *a = &cfg->arena;
	struct oci_linux *l = &cfg->linux_;
	static const enum oci_ns_type types[] = {
		OCI_NS_USER, OCI_NS_MOUNT,  OCI_NS_PID,	    OCI_NS_IPC,
		OCI_NS_UTS,  OCI_NS_CGROUP, OCI_NS_NETWORK,
	};
	/* What the parser derives from the type: the config is handed to
	 * the runtime in memory, not re-read from a file. */
	static const int flags[] = {
		CLONE_NEWUSER, CLONE_NEWNS,	CLONE_NEWPID, CLONE_NEWIPC,
		CLONE_NEWUTS,  CLONE_NEWCGROUP, CLONE_NEWNET,
	};
	size_t n = netns ? AR_ARRAY_SIZE(types) : AR_ARRAY_SIZE(types) - 1;

	l->present = true;
	l->uid_mappings.items =
		oci_arena_calloc(a, 1, sizeof(struct oci_id_mapping));
	l->uid_mappings.items[0] = (struct oci_id_mapping){ h->uid, h->uid, 1 };
	l->uid_mappings.n = 1;
	l->gid_mappings.items =
		oci_arena_calloc(a, 1, sizeof(struct oci_id_mapping));
	l->gid_mappings.items[0] = (struct oci_id_mapping){ h->gid, h->gid, 1 };
	l->gid_mappings.n = 1;
	l->namespaces = oci_arena_calloc(a, n, sizeof(*l->namespaces));
	for (size_t i = 0; i < n; i++) {
		l->namespaces[i].type = types[i];
		l->namespaces[i].clone_flag = flags[i];
	}
	l->n_namespaces = n;
	strv_set(a, &l->masked_paths,
		 SB_OPTS("/proc/acpi", "/proc/asound", "/proc/kcore",
			 "/proc/keys", "/proc/latency_stats",
			 "/proc/timer_list", "/proc/timer_stats",
			 "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
			 "/sys/fs/selinux", "/sys/dev/block",
			 "/sys/devices/virtual/powercap"));
	strv_set(a, &l->readonly_paths,
		 SB_OPTS("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
			 "/proc/sysrq-trigger"));
}

static void process_part(struct oci_config *cfg,
			 const struct ar_sandbox_opts *o,
			 const struct ar_sandbox_host *h, const char *cwd)
{
	struct oci_process *p = &cfg->process;
	size_t n = 0;

	while (o->argv[n])
		n++;
	p->present = true;
	p->terminal = o->tty < 0 ?
			      isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) :
			      o->tty > 0;
	if (p->terminal) {
		struct winsize ws;

		if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row) {
			p->console_size.set = true;
			p->console_size.height = ws.ws_row;
			p->console_size.width = ws.ws_col;
		}
	}
	p->user.uid = h->uid;
	p->user.gid = h->gid;
	p->args.v = strv_dup(&cfg->arena, (const char *const *)o->argv, n);
	p->args.n = n;
	p->cwd = oci_arena_strdup(&cfg->arena, cwd);
	/* Every capability set present and empty: nothing survives. */
	p->capabilities.present = true;
	for (int i = 0; i < OCI_CAP_NSETS; i++) {
		p->capabilities.set_present[i] = true;
		p->capabilities.names[i].v =
			oci_arena_calloc(&cfg->arena, 1, sizeof(char *));
	}
	p->no_new_privileges = true;
}

static int env_part(struct oci_config *cfg, const struct ar_sandbox_opts *o,
		    const struct ar_sandbox_host *h, bool egress,
		    struct ar_error *err)
{
	size_t np = o->profile ? o->profile->env.n : 0, ne = 0;
	_cleanup_free_ const char **req = NULL;

	while (egress && sb_egress_env[ne])
		ne++;
	req = ar_xcalloc(np + o->env.n + ne + 1, sizeof(char *));
	for (size_t i = 0; i < np; i++)
		req[i] = o->profile->env.v[i];
	for (size_t i = 0; i < o->env.n; i++)
		req[np + i] = o->env.v[i];
	/* last: the proxy variables win over the host's and --env */
	for (size_t i = 0; i < ne; i++)
		req[np + o->env.n + i] = sb_egress_env[i];
	return ar_sandbox_env_build(&cfg->arena, h->environ, req,
				    np + o->env.n + ne, h, &cfg->process.env,
				    err);
}

int ar_sandbox_build_config(const struct ar_sandbox_opts *o,
			    const struct ar_sandbox_host *h,
			    struct oci_config **out,
			    struct ar_sandbox_info *info, struct ar_error *err)
{
	_cleanup_config_ struct oci_config *cfg = oci_config_new();
	const struct oci_profile *pf = o->profile;
	_cleanup_free_ struct oci_kv *ann = NULL;
	_cleanup_free_ char *ws = NULL;
	struct sb_mounts m = { .a = &cfg->arena };
	enum ar_sandbox_net net = o->net;
	size_t ann_cap = 0;
	bool ws_idmapped = false;
	const char *cwd;
	int r = 0;

	memset(info, 0, sizeof(*info));
	if (!o->argv || !o->argv[0])
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: no command given (agentrun sandbox [OPTIONS] -- CMD [ARGS...])");
	net = sb_net_mode(o);
	if (net == AR_SANDBOX_NET_ALLOW) {
		struct ar_egress_policy pol;

		if (sb_egress_policy(o, &pol, err) < 0)
			return -1;
		ar_egress_policy_release(&pol);
	}
	if (strcmp(h->home, "/") == 0 || h->home[0] != '/')
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: the home directory is `%s`: set HOME to your home directory",
			h->home);
	if (ar_sandbox_workspace(o, h, &ws, err) < 0)
		return -1;
	info->protect = ar_xcalloc(1, sizeof(*info->protect));
	if (sb_protect_plan(info->protect, ws, h->home, o->rw.v, o->rw.n, err) <
	    0)
		return -1;

	/* Nothing here is newer than runtime-spec 1.1 (rro, idmapped
	 * mounts); crun 1.8 refuses "1.2.0" (--print-bundle runs there). */
	cfg->oci_version = oci_arena_strdup(&cfg->arena, "1.1.0");
	cfg->hostname = oci_arena_strdup(&cfg->arena, "agentrun-sandbox");
	cfg->root.present = true;
	cfg->root.path = oci_arena_strdup(&cfg->arena, "rootfs");
	cfg->root.readonly = true;

	system_mounts(&m);
	sb_etc_mounts(&m, h, &o->etc, pf ? &pf->etc : NULL);
	sb_home_mounts(&m, h, ar_path_under(h->home, ws), err);
	if (o->overlay_upper) {
		if (overlay_mount(&m, ws, o, err) < 0) {
			free(m.v);
			return -1;
		}
	} else {
		sb_bind(&m, ws, true);
		if (h->uid == 0)
			sb_workspace_idmap(&m, ws);
		ws_idmapped = m.v[m.n - 1].uid_mappings.n > 0;
	}
	protect_mounts(info->protect, &m, o->overlay_upper != NULL,
		       ws_idmapped);
	profile_prepare(pf, h);
	for (size_t i = 0; pf && i < pf->ro.n && !r; i++)
		r = user_bind(&m, h, "ro", pf->ro.v[i], false, true, err);
	for (size_t i = 0; pf && i < pf->rw.n && !r; i++)
		r = user_bind(&m, h, "rw", pf->rw.v[i], true, true, err);
	for (size_t i = 0; i < o->ro.n && !r; i++)
		r = user_bind(&m, h, "--ro", o->ro.v[i], false, false, err);
	for (size_t i = 0; i < o->rw.n && !r; i++) {
		_cleanup_free_ char *q =
			sb_protect_lexical(h->home, o->rw.v[i]);

		/* a protected path opted back in that does not exist yet:
		 * nothing to bind, the workspace is writable */
		if (q && ar_path_under(q, ws) && access(q, F_OK) < 0)
			continue;
		r = user_bind(&m, h, "--rw", o->rw.v[i], true, false, err);
	}
	if (!r)
		sb_hide_secrets(&m, h);
	for (size_t i = 0; pf && i < pf->hide.n && !r; i++)
		r = user_hide(&m, h, pf->hide.v[i], true, err);
	for (size_t i = 0; i < o->hide.n && !r; i++)
		r = user_hide(&m, h, o->hide.v[i], false, err);
	if (net == AR_SANDBOX_NET_ALLOW)
		sb_egress_mounts(&m);
	if (r < 0) {
		free(m.v);
		return -1;
	}
	sb_mounts_finish(&m, cfg);

	cwd = visible_rw_or_ro(cfg, h->cwd) || strcmp(h->cwd, h->home) == 0 ?
		      h->cwd :
		      ws;
	process_part(cfg, o, h, cwd);
	if (env_part(cfg, o, h, net == AR_SANDBOX_NET_ALLOW, err) < 0)
		return -1;
	linux_part(cfg, h, net != AR_SANDBOX_NET_HOST);
	if (!o->seccomp_deferred &&
	    oci_seccomp_default(&cfg->arena, &cfg->linux_.seccomp, err) < 0)
		return ar_error_wrap(err, "sandbox");

	if (want_landlock(o, &info->landlock, err) < 0)
		return -1;
	info->workspace = ar_xstrdup(ws);
	info->net_host = net == AR_SANDBOX_NET_HOST;
	info->net_allow = net == AR_SANDBOX_NET_ALLOW;
	info->workspace_home = ar_path_under(h->home, ws);
	snprintf(
		info->protections, sizeof(info->protections),
		"userns(keep-id %u:%u),mountns,pidns,ipcns,utsns,cgroupns,%s,seccomp,no-new-privileges,caps=none,%s%s,etc=minimal,env=filtered",
		(unsigned)h->uid, (unsigned)h->gid,
		info->net_host ?
			"net=host" :
		info->net_allow ?
			"netns(loopback only),egress-proxy(allowlist)" :
			"netns(loopback only)",
		info->landlock ? "landlock," : "",
		info->workspace_home ? "home=WORKSPACE(read-write)" :
				       "home=tmpfs");
	kv_add(cfg, &ann, &ann_cap, "run.agentrun.sandbox", "1");
	kv_add(cfg, &ann, &ann_cap, "run.agentrun.sandbox.workspace", ws);
	kv_add(cfg, &ann, &ann_cap, "run.agentrun.sandbox.net",
	       info->net_host  ? "host" :
	       info->net_allow ? "allow" :
				 "none");
	if (!info->net_host)
		kv_add(cfg, &ann, &ann_cap, AR_ANNOTATION_NET_LOOPBACK, "up");
	kv_add(cfg, &ann, &ann_cap, "run.agentrun.sandbox.protections",
	       info->protections);
	if (info->landlock) {
		struct ar_landlock_rules ll;
		_cleanup_free_ char *text = NULL;

		landlock_rules(cfg, info);
		ll = (struct ar_landlock_rules){ info->landlock_rules,
						 info->n_landlock_rules };
		/* the record of the rules, for `state`, --print-bundle and a
		 * session's exec: the run itself gets them as data */
		text = ar_landlock_rules_text(&ll);
		kv_add(cfg, &ann, &ann_cap, AR_ANNOTATION_LANDLOCK, text);
	}
	/* move the annotation vector into the arena */
	{
		struct oci_kv *items = oci_arena_calloc(
			&cfg->arena, cfg->annotations.n, sizeof(*items));

		memcpy(items, ann, cfg->annotations.n * sizeof(*items));
		cfg->annotations.items = items;
	}
	*out = ar_steal_ptr(&cfg);
	return 0;
}
