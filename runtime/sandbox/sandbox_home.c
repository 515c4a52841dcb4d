/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The home directory: a private tmpfs at the user's home path holding only
 * allowlisted dotfiles (read-only binds), and the hiding of the never-share
 * list (home_secrets.c): secret stores that stay hidden whatever is bound,
 * even when the user binds a parent (binding ~/.config still hides
 * ~/.config/gcloud, binding $HOME as the workspace still hides ~/.ssh).
 * docs/sandbox.md lists both.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "protect/home_secrets.h"
#include "sandbox_home.h"
#include "utils.h"

/* Read-only, when present: enough for a shell to behave (git's files:
 * sandbox_gitconfig.c). Not the shell rc files: people export tokens in
 * them (`--ro ~/.bashrc` brings one back); the distribution's defaults
 * stand in for them. */
static const char *const home_default_ro[] = {
	".inputrc",
	".editorconfig",
	NULL,
};

/* A minimal rc inside: the distribution's skeleton files (no secrets),
 * read-only at the rc files' paths, when the host has them. */
static const char *const home_skel[] = { ".bashrc", ".profile", NULL };

int sb_home_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		   bool home_is_workspace, struct ar_error *err)
{
	char *opts;
	struct stat st;

	(void)err;
	/* Owned by the user inside (the ids are the container's; with the
	 * keep-id map they are the user's own). */
	opts = oci_arena_printf(m->a, "mode=0700,uid=%u,gid=%u",
				(unsigned)h->uid, (unsigned)h->gid);
	sb_mount_add(m, h->home, "tmpfs", "tmpfs",
		     SB_OPTS("nosuid", "nodev", opts, "size=1g"));
	for (const char *const *d = home_default_ro; *d; d++) {
		char *p = sb_path_join(m->a, h->home, *d);

		if (lstat(p, &st) < 0 ||
		    ar_sandbox_path_is_secret(h->home, p) || sb_has_dest(m, p))
			continue;
		sb_bind(m, p, false);
	}
	for (const char *const *d = home_skel; *d && !home_is_workspace; d++) {
		char *src = oci_arena_printf(m->a, "%s/skel/%s", h->etc, *d);

		if (stat(src, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		sb_mount_add(m, sb_path_join(m->a, h->home, *d), "bind", src,
			     SB_OPTS("bind", "ro", "nosuid", "nodev"));
	}
	return 0;
}

/* Every secret that exists on the host and lies below a bind (other than
 * the home tmpfs itself, which shows nothing of the host) gets hidden. */
void sb_hide_secrets(struct sb_mounts *m, const struct ar_sandbox_host *h)
{
	size_t n = m->n;

	for (const char *const *s = ar_sandbox_home_secrets; *s; s++) {
		char *p = sb_path_join(m->a, h->home, *s);
		struct stat st;

		if (lstat(p, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			/* The link itself reveals nothing; what it points to
			 * is hidden if some bind shows it. */
			_cleanup_free_ char *t = realpath(p, NULL);

			if (!t)
				continue;
			p = oci_arena_strdup(m->a, t);
		}
		if (sb_mounts_show(m, n, p))
			sb_hide(m, p);
	}
}
