/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for direnv.c: the files a direnv .envrc loads at cd
 * (dotenv, source_env, use flake, use nix), commands after shell
 * keywords and separators, comments, and the paths left out (outside
 * the project, or not known before the shell runs). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/sandbox/protect/direnv.h"
#include "unit.h"
#include "utils.h"

/* The files, joined by ' ', and whether nix is set ("+nix"). */
static char *loads(const char *text)
{
	struct sb_direnv_loads l;
	char buf[1024] = "";

	sb_direnv_parse(text, &l);
	for (size_t i = 0; i < l.n; i++) {
		if (i)
			strcat(buf, " ");
		strcat(buf, l.files[i].path);
		if (l.files[i].nix)
			strcat(buf, "*");
	}
	if (l.nix)
		strcat(buf, " +nix");
	sb_direnv_loads_release(&l);
	return ar_xstrdup(buf);
}

#define LOADS(text, want)                                                      \
	do {                                                                   \
		char *got_ = loads(text);                                      \
		CHECK_STR_EQ(got_, want);                                      \
		free(got_);                                                    \
	} while (0)

UNIT_TEST(direnv_dotenv)
{
	LOADS("dotenv\n", ".env");
	LOADS("dotenv_if_exists\n", ".env");
	LOADS("dotenv .env.local\n", ".env.local");
	LOADS("dotenv_if_exists './config/.env'\n", "config/.env");
	LOADS("dotenv \"x.env\"", "x.env");
	LOADS("export FOO=1\ndotenv\ndotenv\n", ".env");
}

UNIT_TEST(direnv_source_env)
{
	LOADS("source_env .envrc.private\n", ".envrc.private");
	LOADS("source_env_if_exists .envrc.local\n", ".envrc.local");
	LOADS("source_env ./sub/\n", "sub");
	LOADS("source_env\n", "");
}

UNIT_TEST(direnv_nix)
{
	LOADS("use flake\n", "flake.nix* flake.lock* +nix");
	LOADS("use flake .#dev\n", "flake.nix* flake.lock* +nix");
	LOADS("use flake ./nix#shell\n", "nix/flake.nix* nix/flake.lock* +nix");
	LOADS("use flake path:.#x\n", "flake.nix* flake.lock* +nix");
	LOADS("use_flake\n", "flake.nix* flake.lock* +nix");
	/* a remote flake: nothing of the project's, the cache still */
	LOADS("use flake github:o/r\n", " +nix");
	LOADS("use nix\n", "shell.nix* default.nix* +nix");
	LOADS("use nix dev.nix -p hello\n", "dev.nix* +nix");
	LOADS("use_nix\n", "shell.nix* default.nix* +nix");
}

UNIT_TEST(direnv_shell_syntax)
{
	LOADS("if has nix; then use flake; fi\n",
	      "flake.nix* flake.lock* +nix");
	LOADS("[ -f .env ] && dotenv\n", ".env");
	LOADS("has nix || dotenv .env.dev\n", ".env.dev");
	LOADS("  \tdotenv a.env # and a comment: dotenv b.env\n", "a.env");
	LOADS("# dotenv c.env\n", "");
	LOADS("export X=a#b; dotenv d.env\n", "d.env");
	LOADS("layout python\nPATH_add bin\nwatch_file x.nix\n", "");
	LOADS("echo dotenv e.env\n", "");
	LOADS("", "");
}

UNIT_TEST(direnv_paths_left_out)
{
	LOADS("dotenv /etc/x\n", "");
	LOADS("dotenv ~/secrets.env\n", "");
	LOADS("dotenv ../up.env\n", "");
	LOADS("dotenv a/../../b\n", "");
	LOADS("dotenv a/..\n", "");
	LOADS("dotenv $HOME/x\n", "");
	LOADS("dotenv \"${X}.env\"\n", "");
	LOADS("dotenv *.env\n", "");
	LOADS("dotenv `pwd`/x\n", "");
	LOADS("source_env .\n", "");
	LOADS("dotenv ..env\n", "..env");
}

UNIT_MAIN()
