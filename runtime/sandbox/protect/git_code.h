/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What in git's own files makes git run a command (git_code.c): the
 * config keys whose value is a command, a program, a hook directory, an
 * included file or an alias, and the `exec` lines of a rebase todo.
 * Pure text in, text out: the end-of-run check (host_exec_check.c)
 * reads the files and writes the results.
 */
#ifndef AGENTRUN_SANDBOX_GIT_CODE_H
#define AGENTRUN_SANDBOX_GIT_CODE_H

#include <stdbool.h>
#include <stddef.h>

/* `section` and `name` in lower case, `sub` as written (NULL: none),
 * `value` NULL for a bare key (boolean true). */
bool sb_git_code_key(const char *section, const char *sub, const char *name,
		     const char *value);

/* The config text `in` with every code-running key commented out
 * ("#agentrun# " before each of its lines). *out (malloc'd) is the new
 * text, *keys (malloc'd) the keys as git names them, ", " between
 * ("core.fsmonitor, alias.st"). Returns how many keys, or -1 for a text
 * git would reject or that is not understood here (then nothing is
 * set: the caller sets the whole file aside). */
int sb_git_config_neutralise(const char *in, size_t len, char **out,
			     char **keys);

/* The same, with include.path and includeIf.*.path kept (the caller
 * shows the included files filtered in turn: the user's git
 * configuration inside the sandbox, sandbox_gitconfig.c). */
int sb_git_config_filter(const char *in, size_t len, char **out, char **keys);

/* The values of include.path and includeIf.*.path in `in`, NULL
 * terminated (malloc'd), or NULL for a text not understood. */
char **sb_git_config_includes(const char *in, size_t len);

/* The last value of section.name (no subsection; both in lower case),
 * malloc'd, or NULL (none, or a text not understood). */
char *sb_git_config_value(const char *in, size_t len, const char *section,
			  const char *name);

/* The value of core.hooksPath (the last one), malloc'd, or NULL. */
char *sb_git_config_hookspath(const char *in, size_t len);

/* A rebase or sequencer todo with its `exec`/`x` lines commented out;
 * returns how many (0: *out not set). */
int sb_git_todo_neutralise(const char *in, size_t len, char **out);

#endif
