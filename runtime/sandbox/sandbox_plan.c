/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One sandbox resolved into a plan (struct sb_plan, sandbox_types.h)
 * before any process exists: the options with the profile and the host
 * facts, worked out once, in this order: the command, the network mode,
 * --nested, the workspace, the --overlay directory, --learn, the
 * allowlist (parsed once), --secret, the protected paths, Landlock, the
 * mounts, the cwd, the environment, the Landlock rules, the root's
 * content, the protections line. What comes after only reads the plan:
 * the config (sandbox_config.c), the egress proxy (sandbox_egress.c),
 * the audit log and learn mode (sandbox_audit.c).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protect/home_secrets.h"
#include "protect/run_record.h"
#include "egress/egress_tls.h"
#include "landlock.h"
#include "audit/learn.h"
#include "log.h"
#include "profile.h"
#include "sandbox_egress.h"
#include "sandbox_env.h"
#include "sandbox_etc.h"
#include "sandbox_exe.h"
#include "sandbox_gitconfig.h"
#include "sandbox_keep.h"
#include "sandbox_home.h"
#include "sandbox_kernfs.h"
#include "sandbox_mounts.h"
#include "sandbox_persist.h"
#include "sandbox_plan.h"
#include "sandbox_rootfs.h"
#include "utils.h"
#include "vm/vm_proto.h"

/* ---- the workspace ---- */

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
	_cleanup_free_ char *ws = NULL;

	if (!w && o->profile && o->profile->workspace)
		w = o->profile->workspace;
	if (!w) {
		ws = ar_sandbox_find_workspace(h->cwd);
		/* a dotfiles repository in ~ makes ~ the git top-level of
		 * every directory below it: take the current directory */
		if (ar_path_under(h->home, ws) &&
		    !ar_path_under(h->home, h->cwd)) {
			ar_log(AR_LOG_INFO,
			       "sandbox: the git top-level `%s` is your home directory (or above it), not taken as the workspace: using the current directory",
			       ws);
			free(ws);
			ws = ar_xstrdup(h->cwd);
		}
	} else {
		ws = sb_expand_path(h, w);
		if (!ws)
			return ar_error_set(err, errno,
					    "sandbox: workspace `%s`", w);
	}
	for (const char *const *d = shared_dirs; *d; d++)
		if (strcmp(ws, *d) == 0)
			return ar_error_set_plain(
				err, EINVAL,
				"sandbox: the workspace would be `%s`, a directory shared with the whole system (other users' files and sockets): run from a project directory or pass --workspace DIR",
				ws);
	if (sb_kernfs_refuse("--workspace", ws, ws, err) < 0)
		return -1;
	/* The home directory (or above it) only when named on the command
	 * line: everything in it would be readable and writable. */
	if (ar_path_under(h->home, ws) && !o->workspace)
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: the workspace would be `%s`, %s: the command could read every file in it and write your shell rc files, ~/.config and systemd user units; run from a project directory, or pass --workspace %s if you mean it",
			ws,
			strcmp(ws, h->home) == 0 ?
				"your home directory" :
				"a directory that contains your home directory",
			ws);
	if (ar_sandbox_path_is_secret(h->home, ws))
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: workspace `%s` is a secret store (on the never-share list)",
			ws);
	*out = ar_steal_ptr(&ws);
	return 0;
}

/* ---- the options ---- */

/* A list with `n_add` more entries at its end (in the plan's arena). */
static void list_append(struct sb_plan *p, struct ar_sandbox_list *l,
			const char *const *add, size_t n_add)
{
	const char **v;

	if (n_add == 0)
		return;
	v = oci_arena_calloc(&p->arena, l->n + n_add + 1, sizeof(char *));
	if (l->n)
		memcpy(v, l->v, l->n * sizeof(char *));
	memcpy(v + l->n, add, n_add * sizeof(char *));
	l->v = v;
	l->n += n_add;
}

/* none, host or allow: the command line's, else the profile's. */
static enum ar_sandbox_net net_mode(const struct ar_sandbox_opts *o)
{
	const struct oci_profile *pf = o->profile;

	if (o->net != AR_SANDBOX_NET_DEFAULT)
		return o->net;
	if (pf && pf->net_allow.n > 0)
		return AR_SANDBOX_NET_ALLOW;
	if (pf && pf->net && strcmp(pf->net, "host") == 0)
		return AR_SANDBOX_NET_HOST;
	return AR_SANDBOX_NET_NONE;
}

/* --learn: the host's top-level directories read-only (the home
 * directory stays the sandbox's tmpfs), every destination through the
 * proxy, in learn mode. */
static const char *learn_allow[] = { "*" };

static void learn_opts(struct sb_plan *p)
{
	char **extra;
	const char **add;
	size_t n = 0, k = 0;

	extra = sb_learn_extra_ro(p->workspace);
	while (extra[n])
		n++;
	add = oci_arena_calloc(&p->arena, n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		if (strcmp(extra[i], p->h->home) != 0)
			add[k++] = oci_arena_strdup(&p->arena, extra[i]);
		free(extra[i]);
	}
	free(extra);
	list_append(p, &p->o.ro, add, k);
	p->o.net = AR_SANDBOX_NET_ALLOW;
	p->o.net_allow.v = learn_allow;
	p->o.net_allow.n = 1;
	p->net = AR_SANDBOX_NET_ALLOW;
}

/* --nested: Landlock off (the kernel refuses mounts to a process under
 * Landlock); asking for both is an error. */
static int nested_opts(struct sb_plan *p, struct ar_error *err)
{
	const struct oci_profile *pf = p->o.profile;

	if (p->o.landlock == 1 ||
	    (p->o.landlock < 0 && pf && pf->landlock.set && pf->landlock.v))
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --nested needs Landlock off (the kernel refuses every mount to a Landlock-restricted process, and a nested sandbox mounts); drop --landlock on (or the profile's \"landlock\": true)");
	p->o.landlock = 0;
	return 0;
}

/* The allowlist: the profile's patterns, then the command line's (a
 * union; errors name the profile file and net.allow[i], or the
 * option). */
static int egress_policy(struct sb_plan *p, struct ar_error *err)
{
	const struct ar_sandbox_opts *o = &p->o;
	const struct oci_profile *pf = o->profile;

	for (size_t i = 0; pf && i < pf->net_allow.n; i++)
		if (ar_egress_policy_add(&p->policy, pf->net_allow.v[i], err) <
		    0)
			return ar_error_wrap(err, "%s: net.allow[%zu]",
					     pf->filename, i);
	for (size_t i = 0; i < o->net_allow.n; i++)
		if (ar_egress_policy_add(&p->policy, o->net_allow.v[i], err) <
		    0)
			return -1;
	p->policy.learn = o->learn != NULL;
	return 0;
}

/* --secret: the placeholders and the CA's variables in the environment,
 * the CA directory read-only. */
static int secrets_opts(struct sb_plan *p, struct ar_error *err)
{
	const char *dir[1];

	if (sb_secrets_prepare(&p->secrets, &p->o, p->net, p->made_in, err) < 0)
		return -1;
	if (!p->secrets.dir)
		return 0;
	/* a plain-HTTP gateway on loopback: its host service shown */
	for (size_t i = 0; i < p->secrets.n; i++)
		if (p->secrets.v[i].gateway &&
		    ar_egress_policy_add(&p->policy, p->secrets.v[i].gateway,
					 err) < 0)
			return -1;
	list_append(p, &p->o.env, (const char *const *)p->secrets.env,
		    p->secrets.n_env);
	dir[0] = p->secrets.dir;
	list_append(p, &p->o.ro, dir, 1);
	return 0;
}

/* ---- the mounts ---- */

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

/* `path` (as given: "~/x" or absolute) reached through a symbolic link
 * (real, its realpath, differs from the path by name): the target is
 * shown at the link's path too (~/.claude -> ~/dotfiles/claude), said
 * when it is outside the home directory; refused when the target is the
 * home directory or above it, or holds a never-share path (binds hide
 * secrets below their destination, not below a link's target). */
static int link_bind(struct sb_mounts *m, const struct ar_sandbox_host *h,
		     const char *what, const char *path, const char *real,
		     bool rw, struct ar_error *err)
{
	_cleanup_free_ char *lex = sb_lexical_path(h, path);

	if (!lex || strcmp(lex, real) == 0)
		return 0;
	if (ar_sandbox_path_is_secret(h->home, lex))
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: %s `%s`: refusing to share a secret store (on the never-share list, see " AR_SANDBOX_DOC
			")",
			what, path);
	if (ar_path_under(h->home, real))
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: %s `%s` is a symbolic link to %s, %s: refusing to show it (every secret in it would be readable)",
			what, path, real,
			strcmp(real, h->home) == 0 ?
				"your home directory" :
				"a parent of your home directory");
	for (const char *const *sec = ar_sandbox_home_secrets; *sec; sec++) {
		_cleanup_free_ char *sp = ar_xasprintf("%s/%s", h->home, *sec);
		struct stat st;

		if (ar_path_under(sp, real) && lstat(sp, &st) == 0)
			return ar_error_set_plain(
				err, EPERM,
				"sandbox: %s `%s` is a symbolic link to %s, which holds %s (on the never-share list): refusing to show it",
				what, path, real, sp);
	}
	if (!ar_path_under(real, h->home))
		ar_log(AR_LOG_WARNING,
		       "sandbox: %s `%s` is a symbolic link to %s, outside your home directory: shown at both paths%s",
		       what, path, real, rw ? ", read-write" : "");
	sb_bind_at(m, oci_arena_strdup(m->a, lex), oci_arena_strdup(m->a, real),
		   rw);
	return 0;
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
			"sandbox: %s `%s`: refusing to share a secret store (on the never-share list, see " AR_SANDBOX_DOC
			")",
			what, path);
	if (sb_kernfs_refuse(what, path, real, err) < 0)
		return -1;
	sb_bind(m, real, rw);
	return link_bind(m, h, what, path, real, rw, err);
}

/* A read-write bind of `path` (--rw, a profile's "rw"; in the workspace
 * an opt-out of its protected paths, bound over them): agentrun's own
 * state directory below it read-only, the directories between pinned (a
 * rename would carry the read-only mount along and free the name), as
 * protect_mounts does for the workspace (protect.h, sb_protect_state);
 * refused when `path` is at or below it, or reaches it through a
 * symbolic link (shown at both paths). */
static int state_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
			const char *what, const char *path,
			struct ar_error *err)
{
	_cleanup_free_ char *real = sb_expand_path(h, path);
	_cleanup_free_ char *lex = NULL;
	struct sb_protect sp;

	/* missing (a profile's, skipped). One in the workspace (an opt-out
	 * of protected paths) is bound over the workspace's own mounts: held
	 * again below it */
	if (!real)
		return 0;
	if (sb_protect_state(&sp, real, h->home, err) < 0)
		return ar_error_wrap(err, "sandbox: %s `%s`", what, path);
	lex = sb_lexical_path(h, path);
	if (sp.n && lex && strcmp(lex, real) != 0) {
		sb_protect_release(&sp);
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: %s `%s` is a symbolic link to `%s`, which holds agentrun's own state directory: pass its real path",
			what, path, real);
	}
	for (size_t i = 0; i < sp.n; i++) {
		if (sp.v[i].kind == SB_PROT_RO)
			sb_bind(m, sp.v[i].path, false);
		else if (sp.v[i].kind == SB_PROT_PIN)
			sb_mount_add(m, sp.v[i].path, "bind", sp.v[i].path,
				     SB_OPTS("rbind", "rw", "nosuid", "nodev"));
	}
	sb_protect_release(&sp);
	return 0;
}

/* agentrun's state root (the containers' state, every sandbox's control
 * socket in .control/, the --vm kernel cache's checksums), hidden when a
 * mount of the user's shows it (`--rw $XDG_RUNTIME_DIR`, `--ro` of a
 * parent, a workspace above it). Read-only would not do: connect(2) to
 * a unix socket needs no write on the mount. */
static void hide_state_root(struct sb_mounts *m, const char *root)
{
	if (root && sb_mounts_show(m, m->n, root))
		sb_hide(m, oci_arena_strdup(m->a, root));
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

/* A missing file below the home directory whose directory exists: made
 * empty, "{}" for .json (0600, never through a link). */
static void create_file(const char *p)
{
	_cleanup_close_ int fd = open(
		p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t n = strlen(p);

	if (fd >= 0 && n > 5 && strcmp(p + n - 5, ".json") == 0)
		(void)!write(fd, "{}\n", 3);
}

/* Before the profile's binds: its directories ("~/.claude/", a trailing
 * '/') are created on the host when missing, so what the agent CLI
 * writes there (its login) persists, and so are its read-write files
 * below the home directory whose directory exists (~/.claude.json: the
 * CLI's account state, created empty, "{}" for .json; never one the
 * host runs code from, sb_protect_home_why); its read-only
 * entries below one of
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
		} else if (p && !ends_with_slash(p) &&
			   ar_path_under(p, h->home) &&
			   strcmp(p, h->home) != 0 && !strstr(p, "/../") &&
			   !sb_protect_home_why(h->home, p, NULL) &&
			   access(p, F_OK) < 0) {
			_cleanup_free_ char *dir = ar_xstrdup(p);
			struct stat st;

			*strrchr(dir, '/') = '\0';
			if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode))
				create_file(p);
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
			create_file(p);
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
	if (ar_path_under(real, "/proc"))
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --hide `%s`: /proc is the sandbox's own (its processes; what reaches the whole host is already masked or read-only), nothing of it can be hidden",
			path);
	sb_hide(m, real);
	return 0;
}

/* The protected paths' mounts (protect.h); overlay: the workspace is an
 * overlay (only the read-only binds: nothing of the run reaches the
 * workspace before a commit); idmap_root: the workspace bind is
 * idmapped (root on another user's workspace), pinned gitdirs get the
 * same mapping. */
/* --nested, a project without .claude: Claude Code's own sandbox
 * (bubblewrap) binds over each name it protects below an existing
 * .claude, /dev/null over a missing one, and bubblewrap makes that
 * mount point first: in a read-only placeholder it cannot ("Can't create
 * file at .claude/settings.json: Read-only file system", every Bash
 * call). So the placeholder is a small writable tmpfs, discarded with
 * the run (nothing of it reaches the host), and the names agentrun
 * protects are placeholders inside it: an empty read-only file for
 * the settings files, empty read-only directories for commands/ and
 * agents/. */
static void claude_scratch(struct sb_mounts *m, const char *path,
			   const struct ar_sandbox_host *h, const char *ph,
			   struct sb_gitconfig *g)
{
	const char *empty = sb_gitconfig_empty_file(g);
	size_t n;
	const char *const *names = sb_protect_claude_names(&n);

	sb_mount_add(m, path, "tmpfs", "tmpfs",
		     SB_OPTS("rw", "nosuid", "nodev", "noexec",
			     oci_arena_printf(m->a, "mode=0755,uid=%u,gid=%u",
					      (unsigned)h->uid,
					      (unsigned)h->gid),
			     "size=1m", "nr_inodes=1024"));
	for (size_t i = 0; i < n; i++) {
		const char *d = oci_arena_printf(m->a, "%s/%s", path, names[i]);
		size_t l = strlen(names[i]);

		/* a settings file is an empty read-only regular file
		 * (Claude Code takes an empty one for {}; a directory there
		 * is a "fatal" EISDIR settings error on every start, and
		 * /dev/null "not a regular file") */
		if (l > 5 && strcmp(names[i] + l - 5, ".json") == 0 && empty)
			sb_mount_add(m, d, "bind", empty,
				     SB_OPTS("bind", "ro", "nosuid", "nodev",
					     "noexec"));
		else
			sb_mount_add(m, d, "tmpfs", "tmpfs",
				     SB_OPTS("ro", "nosuid", "nodev", "noexec",
					     ph, "size=4k"));
	}
}

static void protect_mounts(const struct sb_protect *p, struct sb_mounts *m,
			   bool overlay, bool idmap_root, bool nested,
			   struct sb_gitconfig *g,
			   const struct ar_sandbox_host *h)
{
	/* a placeholder: an empty read-only directory the user can list
	 * (git status reads every directory; a nested sandbox, bubblewrap,
	 * binds onto it), owned by the user inside like the home (the
	 * container's ids: with the keep-id map the user's own; --nested
	 * maps more ids, and an unset owner would show as the root of the
	 * subordinate range, mode 0500: unreadable to the user) */
	const char *ph = oci_arena_printf(m->a, "mode=0555,uid=%u,gid=%u",
					  (unsigned)h->uid, (unsigned)h->gid);

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
			if (nested && e->claude_dir) {
				claude_scratch(m, e->path, h, ph, g);
				break;
			}
			/* a file placeholder (empty on the host, made by
			 * placeholder.c): held read-only as it is */
			if (e->file) {
				sb_bind(m, e->path, false);
				break;
			}
			sb_mount_add(m, e->path, "tmpfs", "tmpfs",
				     SB_OPTS("ro", "nosuid", "nodev", "noexec",
					     ph, "size=4k"));
			break;
		case SB_PROT_WATCH:
			break;
		}
	}
}

/* --overlay: the workspace as an overlay (userxattr: the kernel's
 * unprivileged overlayfs) whose upper layer is outside it. */
static int overlay_mount(struct sb_mounts *m, const char *ws,
			 const struct ar_overlay *ov, struct ar_error *err)
{
	const char *paths[] = { ws, ov->upper, ov->work };
	char *lower, *upper, *work;

	for (size_t i = 0; i < AR_ARRAY_SIZE(paths); i++)
		if (strpbrk(paths[i], ",:\\"))
			return ar_error_set_plain(
				err, EINVAL,
				"--overlay: `%s` contains ',', ':' or '\\', which overlayfs options cannot carry",
				paths[i]);
	lower = oci_arena_printf(m->a, "lowerdir=%s", ws);
	upper = oci_arena_printf(m->a, "upperdir=%s", ov->upper);
	work = oci_arena_printf(m->a, "workdir=%s", ov->work);
	sb_mount_add(m, ws, "overlay", "overlay",
		     SB_OPTS(lower, upper, work, "userxattr", "nosuid",
			     "nodev"));
	return 0;
}

static bool visible_rw_or_ro(const struct sb_plan *p, const char *path)
{
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct oci_mount *mt = &p->mounts[i];

		if ((strcmp(mt->type, "bind") == 0 ||
		     strcmp(mt->type, "overlay") == 0) &&
		    strcmp(mt->source, "/dev/null") != 0 &&
		    ar_path_under(path, mt->destination))
			return true;
	}
	return false;
}

/* Landlock rules mirroring the mounts: read (and execute) everywhere,
 * write only where a mount is writable. The paths are the mounts'. */
static void landlock_rules(struct sb_plan *p)
{
	struct ar_landlock_rule *v =
		oci_arena_calloc(&p->arena, p->n_mounts + 3, sizeof(*v));
	size_t n = 0;

	v[n++] = (struct ar_landlock_rule){ "/", false };
	v[n++] = (struct ar_landlock_rule){ "/dev", true };
	v[n++] = (struct ar_landlock_rule){ "/proc", true };
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct oci_mount *mt = &p->mounts[i];
		bool rw = false;

		if (strcmp(mt->type, "tmpfs") == 0 ||
		    strcmp(mt->type, "bind") == 0 ||
		    strcmp(mt->type, "overlay") == 0) {
			rw = !oci_strv_has(&mt->options, "ro") &&
			     !oci_strv_has(&mt->options, "rro");
		}
		/* a newline cannot be written in the annotation: such a
		 * path gets no write rule (denied, the safe side) */
		if (!rw || ar_path_under(mt->destination, "/dev") ||
		    strcmp(mt->source, "/dev/null") == 0 ||
		    strchr(mt->destination, '\n'))
			continue;
		v[n++] = (struct ar_landlock_rule){ mt->destination, true };
	}
	p->landlock_rules.v = v;
	p->landlock_rules.n = n;
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

static int env_part(struct sb_plan *p, struct ar_error *err)
{
	const struct ar_sandbox_opts *o = &p->o;
	size_t np = o->profile ? o->profile->env.n : 0, ne = 0;
	_cleanup_free_ const char **req = NULL;
	bool egress = p->net == AR_SANDBOX_NET_ALLOW;

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
	return ar_sandbox_env_build(&p->arena, p->h->environ, req,
				    np + o->env.n + ne, p->h, &p->env, err);
}

/* --etc NAME: a name below /etc, never a way out of it (`../proc/sys`,
 * `../home/you/.ssh` would bypass the checks of --ro). */
static int check_etc_names(const char *const *v, size_t count, const char *what,
			   struct ar_error *err)
{
	for (size_t i = 0; i < count; i++) {
		const char *n = v[i];
		bool dotdot = strcmp(n, "..") == 0 ||
			      strncmp(n, "../", 3) == 0 ||
			      strstr(n, "/../") != NULL;
		size_t len = strlen(n);

		if (len >= 3 && strcmp(n + len - 3, "/..") == 0)
			dotdot = true;
		if (n[0] == '\0' || n[0] == '/' || dotdot)
			return ar_error_set_plain(
				err, EINVAL,
				"sandbox: %s `%s`: a name below /etc (relative, without `..`); use --ro for other paths",
				what, n);
	}
	return 0;
}

/* the helpers, the kernel and (KVM) /dev/kvm, read-only but /dev/kvm */
static void vm_mounts(struct sb_mounts *m, const struct ar_vm *vm)
{
	sb_bind_at(m, AR_VM_LIB_DEST, vm->lib, false);
	sb_bind_at(m, AR_VM_AGENT_DEST, vm->agent, false);
	sb_bind_at(m, AR_VM_KERNEL_DEST, vm->kernel, false);
	if (vm->vmlinux)
		sb_bind_at(m, AR_VM_VMLINUX_DEST, vm->vmlinux, false);
	if (vm->kvm)
		sb_mount_add(m, "/dev/kvm", "bind", "/dev/kvm",
			     SB_OPTS("bind", "rw", "nosuid", "noexec"));
}

/* The mount list, in the order that decides what wins (later entries
 * for the same path), then sorted parents first into the plan. */
static int plan_mounts(struct sb_plan *p, struct ar_error *err)
{
	const struct ar_sandbox_opts *o = &p->o;
	const struct ar_sandbox_host *h = p->h;
	const struct oci_profile *pf = o->profile;
	const char *ws = p->workspace;
	struct sb_mounts m = { .a = &p->arena };
	bool overlay = p->overlay.dir != NULL, ws_idmapped = false;
	int r = 0;

	/* (the profile's "etc" is checked by its parser) */
	if (check_etc_names(o->etc.v, o->etc.n, "--etc", err) < 0)
		return -1;
	system_mounts(&m);
	sb_etc_mounts(&m, h, &o->etc, pf ? &pf->etc : NULL);
	sb_home_mounts(&m, h, ar_path_under(h->home, ws), err);
	sb_gitconfig_mounts(&m, h, ws, &p->gitconfig);
	if (overlay) {
		r = overlay_mount(&m, ws, &p->overlay, err);
	} else {
		sb_bind(&m, ws, true);
		if (h->uid == 0)
			sb_workspace_idmap(&m, ws);
		ws_idmapped = m.v[m.n - 1].uid_mappings.n > 0;
	}
	if (!r)
		protect_mounts(&p->protect, &m, overlay, ws_idmapped, p->nested,
			       &p->gitconfig, h);
	if (!r)
		profile_prepare(pf, h);
	for (size_t i = 0; pf && i < pf->ro.n && !r; i++)
		r = user_bind(&m, h, "ro", pf->ro.v[i], false, true, err);
	for (size_t i = 0; pf && i < pf->rw.n && !r; i++) {
		r = user_bind(&m, h, "rw", pf->rw.v[i], true, true, err);
		if (!r)
			r = state_mounts(&m, h, "profile rw", pf->rw.v[i], err);
	}
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
		if (!r)
			r = state_mounts(&m, h, "--rw", o->rw.v[i], err);
	}
	if (!r)
		sb_persist_named_scripts(&m, h, ws, pf);
	if (!r)
		r = sb_exe_mounts(&m, h, ws, o->argv[0], pf != NULL, err);
	if (!r)
		sb_hide_secrets(&m, h);
	if (!r)
		hide_state_root(&m, p->state_root);
	for (size_t i = 0; pf && i < pf->hide.n && !r; i++)
		r = user_hide(&m, h, pf->hide.v[i], true, err);
	for (size_t i = 0; i < o->hide.n && !r; i++)
		r = user_hide(&m, h, o->hide.v[i], false, err);
	if (!r)
		sb_persist_warn(&m, h, ws);
	/* the profile's "keep" files: writable copies (after the warning:
	 * the host's file is never written) */
	if (!r && !overlay)
		sb_keep_mounts(&m, h, pf, &p->keep);
	if (!r && p->net == AR_SANDBOX_NET_ALLOW)
		sb_egress_mounts(&m);
	if (!r && o->vm)
		vm_mounts(&m, &p->vm);
	if (r < 0) {
		free(m.v);
		return -1;
	}
	sb_mounts_finish(&m, &p->mounts, &p->n_mounts);
	return 0;
}

/* --vm: the sandbox's writable directory binds other than the
 * workspace (which the helper shares anyway) and what is below it: --rw,
 * a profile's "rw", exported read-write to the guest at their paths */
static void vm_rw(struct sb_plan *p)
{
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct oci_mount *mt = &p->mounts[i];
		bool rw = false;
		struct stat st;

		if (strcmp(mt->type, "bind") != 0 ||
		    ar_path_under(mt->destination, p->workspace) ||
		    ar_path_under(mt->destination, "/dev") ||
		    ar_path_under(mt->destination, "/proc") ||
		    ar_path_under(mt->destination, AR_VM_LIB_DEST) ||
		    strchr(mt->destination, ',') || stat(mt->source, &st) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		for (size_t j = 0; j < mt->options.n; j++) {
			if (!strcmp(mt->options.v[j], "rw"))
				rw = true;
			if (!strcmp(mt->options.v[j], "ro") ||
			    !strcmp(mt->options.v[j], "rro"))
				rw = false;
		}
		if (rw)
			ar_vm_add_rw(&p->vm, mt->destination);
	}
}

/* --vm (vm/vm.h): what this first slice does not carry into the guest
 * yet is refused, never dropped (docs/vm.md); then what the VM needs */
static int vm_opts(struct sb_plan *p, struct ar_error *err)
{
	const struct ar_sandbox_opts *o = &p->o;
	const char *what = NULL;

	if (!o->vm) {
		if (o->vm_guest_root || o->vm_kernel)
			return ar_error_set_plain(err, EINVAL,
						  "sandbox: %s needs --vm",
						  o->vm_kernel ?
							  "--vm-kernel" :
							  "--vm-guest-root");
		return 0;
	}
	if (p->observe)
		what = "--audit/--learn (the syscall listener would see QEMU, not the guest)";
	else if (p->nested)
		what = "--nested";
	else if (p->agent_channel)
		what = "--agent-channel";
	else if (p->shadow)
		what = "--shadow";
	if (what)
		return ar_error_set_plain(
			err, ENOTSUP,
			"sandbox: --vm: %s is not available with --vm yet (docs/vm.md)",
			what);
	if (ar_vm_probe(&p->vm, o->vm_kernel, err) < 0)
		return ar_error_wrap(err, "sandbox: --vm");
	/* the guest's NIC is QEMU's user-mode network: every connection it
	 * makes is QEMU's socket, in the sandbox's network namespace, under
	 * the same policy as the command's own without --vm (docs/vm.md,
	 * "The network") */
	p->vm.net = p->net == AR_SANDBOX_NET_ALLOW ? "allow" :
		    p->net == AR_SANDBOX_NET_HOST  ? "host" :
						     NULL;
	/* --publish: agentrun's relay connects to the sandbox's
	 * 127.0.0.1:PORT, where QEMU listens and forwards into the guest
	 * (the spec is checked, with its error, by sb_egress_init) */
	if (p->publish) {
		const struct oci_profile *pf = o->profile;
		size_t np = pf ? pf->publish.n : 0;

		for (size_t i = 0; i < np + o->publish.n; i++) {
			const char *spec = i < np ? pf->publish.v[i] :
						    o->publish.v[i - np];
			const char *c = strrchr(spec, ':');
			char *end = NULL;
			unsigned long port = c && c[1] >= '0' && c[1] <= '9' ?
						     strtoul(c + 1, &end, 10) :
						     0;

			if (port > 0 && port <= 65535 && !*end)
				ar_vm_add_publish(&p->vm, (unsigned short)port);
		}
	}
	return 0;
}

static void protections(struct sb_plan *p)
{
	const struct ar_sandbox_host *h = p->h;

	snprintf(
		p->protections, sizeof(p->protections),
		"userns(keep-id %u:%u),mountns,pidns,ipcns,utsns,cgroupns,%s,seccomp,no-new-privileges,caps=none,%s%s,etc=minimal,env=filtered",
		(unsigned)h->uid, (unsigned)h->gid,
		p->net == AR_SANDBOX_NET_HOST ?
			"net=host" :
		p->net == AR_SANDBOX_NET_ALLOW ?
			"netns(loopback only),egress-proxy(allowlist)" :
			"netns(loopback only)",
		p->landlock ? "landlock," : "",
		p->workspace_home ? "home=WORKSPACE(read-write)" :
				    "home=tmpfs");
}

/* The profile's "etc_files", ${WORKSPACE} replaced (sandbox_etc.h). */
static void etc_files(struct sb_plan *p)
{
	const struct oci_profile *pf = p->o.profile;
	size_t n = pf ? pf->etc_files_name.n : 0;

	p->etc_names.v = oci_arena_calloc(&p->arena, n + 1, sizeof(char *));
	p->etc_texts.v = oci_arena_calloc(&p->arena, n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *t =
			sb_etc_file_text(pf->etc_files_text.v[i], p->workspace);

		p->etc_names.v[i] = pf->etc_files_name.v[i];
		p->etc_texts.v[i] = oci_arena_strdup(&p->arena, t);
	}
	p->etc_names.n = p->etc_texts.n = n;
}

static int plan_make(struct sb_plan *p, const struct ar_sandbox_run_opts *ro,
		     struct ar_error *err)
{
	const struct ar_sandbox_opts *o = &p->o;
	const struct ar_sandbox_host *h = p->h;
	bool run = ro && !ro->print_bundle;
	char *ws = NULL;

	/* the files the plan makes (filtered git config, keep copies, the
	 * CA): in /tmp, removed after the run; with --print-bundle in the
	 * bundle's directory, which the bundle's config.json names */
	p->made_in = ro && ro->print_bundle ? ro->print_bundle : "/tmp";
	p->gitconfig.parent = p->keep.parent = p->made_in;

	if (!o->argv || !o->argv[0])
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: no command given (agentrun sandbox [OPTIONS] -- CMD [ARGS...])");
	/* a profile's "vm": true is --vm (no option turns it off: a
	 * profile that asks for the kernel boundary keeps it) */
	if (o->profile && o->profile->vm.set && o->profile->vm.v)
		p->o.vm = true;
	p->net = net_mode(o);
	if (o->learn && p->net == AR_SANDBOX_NET_HOST)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --learn records network destinations through the egress proxy; it cannot be combined with --net host");
	p->nested = o->nested || (o->profile && o->profile->nested.set &&
				  o->profile->nested.v);
	/* off unless asked for, as srt's --agent-channel */
	p->agent_channel = o->agent_channel > 0 ||
			   (o->agent_channel == 0 && o->profile &&
			    o->profile->agent_channel.set &&
			    o->profile->agent_channel.v);
	if (p->nested && nested_opts(p, err) < 0)
		return -1;
	if (ro && ro->state_root)
		p->state_root = realpath(ro->state_root, NULL);
	if (strcmp(h->home, "/") == 0 || h->home[0] != '/')
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: the home directory is `%s`: set HOME to your home directory",
			h->home);
	if (ar_sandbox_workspace(o, h, &ws, err) < 0)
		return -1;
	p->workspace = oci_arena_strdup(&p->arena, ws);
	free(ws);
	p->workspace_home = ar_path_under(h->home, p->workspace);
	/* holds the sandbox's lock until the plan is released */
	if (o->overlay &&
	    ar_overlay_create(o->name, p->workspace, &p->overlay, err) < 0)
		return -1;
	p->observe = o->audit || o->learn;
	if (o->learn)
		learn_opts(p);
	if (p->net == AR_SANDBOX_NET_ALLOW && egress_policy(p, err) < 0)
		return -1;
	if (o->upstream_proxy && p->net != AR_SANDBOX_NET_ALLOW)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --upstream-proxy is for the egress proxy's own connections; it needs --net allow=... or --net ask");
	p->publish = o->publish.n > 0 || (o->profile && o->profile->publish.n);
	p->egress = p->net == AR_SANDBOX_NET_ALLOW || p->publish;
	/* --shadow (sandbox_shadow.h): what the rules refuse goes to the
	 * proxy's ask path, where the shadow grants and records it */
	p->shadow = o->shadow;
	if (p->shadow && p->net != AR_SANDBOX_NET_ALLOW)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --shadow evaluates the network allowlist (--net allow=..., or a profile's \"net\": {\"allow\": [...]}); with --net %s there is nothing to shadow",
			p->net == AR_SANDBOX_NET_HOST ? "host" : "none");
	if (p->shadow && o->learn)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --shadow and --learn: pick one (--learn allows every destination and writes a profile; --shadow evaluates one)");
	if (p->shadow)
		p->policy.ask = p->policy.shadow = true;
	if (vm_opts(p, err) < 0)
		return -1;
	if (run && p->egress && ar_egress_policy_load_self(&p->policy, err) < 0)
		return -1;
	if (secrets_opts(p, err) < 0)
		return -1;
	if (run && o->vm)
		ar_vm_cache(&p->vm, ro->state_root, h->home);
	/* agentrun's own state directory exists before the plan, so that
	 * it is held read-only wherever a sandbox could write it
	 * (run_record.h) */
	if (run) {
		_cleanup_free_ char *rdir =
			sb_run_record_dir(h->home, h->environ);
		int fd = ar_open_dir_p(rdir);

		if (fd >= 0)
			close(fd);
	}
	if (sb_protect_plan(&p->protect, p->workspace, h->home, o->rw.v,
			    o->rw.n, err) < 0)
		return -1;
	/* a plain run: the start of the end-of-run check, commondir
	 * placeholders (--overlay: nothing reaches the workspace before a
	 * commit) */
	if (run && !o->overlay)
		sb_hostexec_prevent(&p->hostexec, &p->protect);
	if (plan_mounts(p, err) < 0)
		return -1;
	if (o->vm) {
		struct ar_vm_user user = {
			.uid = o->vm_guest_root ? 0 : h->uid,
			.gid = o->vm_guest_root ? 0 : h->gid,
		};

		vm_rw(p);
		/* the mounts were made for the user's command (its exe);
		 * the sandbox runs the helper, which boots the guest */
		p->vm_argv =
			ar_vm_argv(&p->vm, &user, p->workspace, NULL, o->argv);
		p->o.argv = p->vm_argv;
	}
	p->cwd = visible_rw_or_ro(p, h->cwd) || strcmp(h->cwd, h->home) == 0 ?
			 h->cwd :
			 p->workspace;
	if (env_part(p, err) < 0)
		return -1;
	if (want_landlock(o, &p->landlock, err) < 0)
		return -1;
	if (p->landlock)
		landlock_rules(p);
	/* A plain run: the embedded seccomp profile is not parsed; the
	 * runtime loads it from its compiled-filter cache (parsed on a
	 * miss only). --print-bundle and --audit/--learn need it, and a
	 * session keeps the full config on disk for exec. */
	p->seccomp_deferred = run && !p->observe && !o->name && !p->nested;
	etc_files(p);
	p->rootfs = sb_rootfs_content(&p->arena, h, &p->etc_names,
				      &p->etc_texts, run ? p->mounts : NULL,
				      run ? p->n_mounts : 0);
	protections(p);
	if (o->vm) {
		/* first: what the command sees first is the guest */
		_cleanup_free_ char *with_vm = ar_xasprintf(
			"%s,%s", ar_vm_mode(&p->vm), p->protections);

		snprintf(p->protections, sizeof(p->protections), "%s", with_vm);
	}
	return 0;
}

int sb_plan_make(struct sb_plan *p, const struct ar_sandbox_opts *o,
		 const struct ar_sandbox_host *h,
		 const struct ar_sandbox_run_opts *ro, struct ar_error *err)
{
	memset(p, 0, sizeof(*p));
	p->o = *o;
	p->h = h;
	p->overlay.lock_fd = -1;
	if (plan_make(p, ro, err) == 0)
		return 0;
	ar_vm_release(&p->vm);
	ar_vm_argv_free(p->vm_argv);
	p->vm_argv = NULL;
	/* a failed start leaves no overlay directory behind */
	if (p->overlay.dir) {
		struct ar_error ignored = AR_ERROR_INIT;

		ar_overlay_discard(&p->overlay, &ignored);
		ar_overlay_release(&p->overlay);
	}
	return -1;
}

void sb_plan_keep_files(struct sb_plan *p)
{
	sb_hostexec_release(&p->hostexec, true);
	sb_gitconfig_release(&p->gitconfig, true);
	sb_keep_release(&p->keep, true);
	free(p->secrets.dir);
	p->secrets.dir = NULL;
}

void sb_plan_release(struct sb_plan *p)
{
	free(p->state_root);
	p->state_root = NULL;
	sb_secrets_release(&p->secrets);
	sb_gitconfig_release(&p->gitconfig, false);
	sb_keep_release(&p->keep, false);
	ar_egress_policy_release(&p->policy);
	sb_hostexec_release(&p->hostexec, false);
	sb_protect_release(&p->protect);
	ar_vm_release(&p->vm);
	ar_vm_argv_free(p->vm_argv);
	ar_overlay_release(&p->overlay);
	oci_arena_free(&p->arena);
	memset(p, 0, sizeof(*p));
	p->overlay.lock_fd = -1;
}
