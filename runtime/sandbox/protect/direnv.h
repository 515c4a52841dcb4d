/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a direnv `.envrc` makes the host's shell load at the next `cd`
 * into its directory (direnv.c). direnv runs `.envrc` only once the user
 * allowed that content, but not the files it loads: `dotenv` and
 * `source_env` read other files of the project (a PROMPT_COMMAND or
 * BASH_ENV in `.env` runs in the user's shell), `use flake` and `use
 * nix` evaluate the project's Nix files and source the dev shell's
 * hook, cached in `.direnv`. Text in, names out (and the reading of a
 * .envrc itself): protect.c holds them read-only, overlay_protect.c
 * holds their changes back.
 */
#ifndef AGENTRUN_SANDBOX_DIRENV_H
#define AGENTRUN_SANDBOX_DIRENV_H

#include <stdbool.h>
#include <stddef.h>

/* The most of a .envrc read (sb_direnv_read_at); a longer one is held
 * read-only without the files it loads. */
#define SB_DIRENV_MAX (256u * 1024)
/* Why each is protected (protect.c, overlay_protect.c). */
#define SB_DIRENV_WHY_RC "direnv config (.envrc: run by the shell at cd)"
#define SB_DIRENV_WHY_LOADED                                                   \
	"a file .envrc loads (direnv: run by the shell at cd)"
#define SB_DIRENV_WHY_CACHE                                                    \
	"direnv's cache of the Nix dev shell (sourced at cd)"

struct sb_direnv_file {
	char *path; /* relative to the .envrc's directory, no "..", no
		       leading "./"; a source_env target may be a directory
		       (then its .envrc) */
	bool nix; /* a Nix file (evaluated; an empty one would fail the
		     host's direnv), else a file sourced or read as
		     variables (an empty one is harmless) */
};

struct sb_direnv_loads {
	struct sb_direnv_file *files;
	size_t n;
	bool nix; /* use flake / use nix: .direnv holds the cached hook */
};

/* The files `.envrc` text loads: dotenv and dotenv_if_exists (FILE, else
 * .env), source_env and source_env_if_exists PATH, use flake [./DIR]
 * (DIR/flake.nix and flake.lock), use nix (shell.nix and default.nix, or
 * the .nix files named). Paths with a variable, a glob, `~`, `..` or
 * absolute ones are left out (not inside the project, or not known
 * before the shell runs). */
void sb_direnv_parse(const char *text, struct sb_direnv_loads *out);
/* The same for the .envrc at `path` (relative to dirfd, or AT_FDCWD):
 * a regular file, not through a symbolic link, at most SB_DIRENV_MAX
 * bytes. -1 when it is none of these or cannot be read (*out untouched,
 * nothing to release). */
int sb_direnv_read_at(int dirfd, const char *path, struct sb_direnv_loads *out);
void sb_direnv_loads_release(struct sb_direnv_loads *l);

#endif
