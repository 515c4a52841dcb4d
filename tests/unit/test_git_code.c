/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for git_code.c: which config keys run code, the config
 * text with them commented out (git's syntax: headers with a key on the
 * same line, old-style subsections, continuation lines, quotes,
 * comments), what git would reject, include paths, core.hooksPath and
 * the exec lines of a rebase todo. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/sandbox/protect/git_code.h"
#include "unit.h"
#include "utils.h"

UNIT_TEST(git_code_keys)
{
	CHECK(sb_git_code_key("core", NULL, "fsmonitor", "echo x"));
	CHECK(!sb_git_code_key("core", NULL, "fsmonitor", "true"));
	CHECK(!sb_git_code_key("core", NULL, "fsmonitor", NULL));
	CHECK(sb_git_code_key("core", NULL, "hookspath", ".husky"));
	CHECK(sb_git_code_key("core", NULL, "pager", "less"));
	CHECK(sb_git_code_key("core", NULL, "sshcommand", "ssh"));
	CHECK(sb_git_code_key("credential", NULL, "helper", "!x"));
	CHECK(sb_git_code_key("credential", "https://h", "helper", "x"));
	CHECK(sb_git_code_key("filter", "lfs", "smudge", "x"));
	CHECK(sb_git_code_key("filter", "x", "process", "x"));
	CHECK(sb_git_code_key("diff", "x", "textconv", "x"));
	CHECK(sb_git_code_key("merge", "x", "driver", "x"));
	CHECK(sb_git_code_key("include", NULL, "path", "x"));
	CHECK(sb_git_code_key("includeif", "gitdir:/x", "path", "x"));
	CHECK(sb_git_code_key("alias", NULL, "st", "status"));
	CHECK(sb_git_code_key("pager", NULL, "log", "x"));
	CHECK(sb_git_code_key("sequence", NULL, "editor", "x"));
	CHECK(sb_git_code_key("gpg", NULL, "program", "x"));
	CHECK(sb_git_code_key("gpg", "ssh", "program", "x"));
	CHECK(sb_git_code_key("submodule", "m", "update", "!x"));
	CHECK(!sb_git_code_key("submodule", "m", "update", "rebase"));
	CHECK(!sb_git_code_key("user", NULL, "name", "x"));
	CHECK(!sb_git_code_key("core", NULL, "bare", "false"));
	CHECK(!sb_git_code_key("remote", "origin", "url", "x"));
	CHECK(sb_git_code_key("remote", "origin", "uploadpack", "x"));
	/* core.editor without a subsection only */
	CHECK(sb_git_code_key("core", NULL, "editor", "vi"));
}

static char *neut(const char *in, int *n, char **keys)
{
	char *out = NULL;

	*keys = NULL;
	*n = sb_git_config_neutralise(in, strlen(in), &out, keys);
	return out;
}

UNIT_TEST(git_code_neutralise)
{
	char *out, *keys;
	int n;

	out = neut(
		"[core]\n\tbare = false\n\tfsmonitor = echo x; false\n[user]\n\tname = T\n",
		&n, &keys);
	CHECK_INT_EQ(n, 1);
	CHECK_STR_EQ(
		out,
		"[core]\n\tbare = false\n\t#agentrun# fsmonitor = echo x; false\n[user]\n\tname = T\n");
	CHECK_STR_EQ(keys, "core.fsmonitor");
	free(out);
	free(keys);

	/* a key on the header's line, an old-style subsection, a
	 * continuation line, a quoted '#', a CRLF line */
	out = neut(
		"[core] pager = less\n[alias.St]\n\tx = !sh -c \\\n  'evil'\n[diff \"T\"]\r\n\ttextconv = \"a # b\"\r\n",
		&n, &keys);
	CHECK_INT_EQ(n, 3);
	CHECK_STR_EQ(
		out,
		"[core] \n#agentrun# pager = less\n[alias.St]\n\t#agentrun# x = !sh -c \\\n#agentrun#   'evil'\n[diff \"T\"]\r\n\t#agentrun# textconv = \"a # b\"\r\n");
	CHECK_STR_EQ(keys, "core.pager, alias.st.x, diff.T.textconv");
	free(out);
	free(keys);

	/* nothing to do: the text unchanged */
	out = neut("# c\n[user]\n\tname = x ; c\n\tflag\n", &n, &keys);
	CHECK_INT_EQ(n, 0);
	CHECK_STR_EQ(out, "# c\n[user]\n\tname = x ; c\n\tflag\n");
	free(out);
	free(keys);

	/* no final newline */
	out = neut("[core]\n\tfsmonitor=x", &n, &keys);
	CHECK_INT_EQ(n, 1);
	CHECK_STR_EQ(out, "[core]\n\t#agentrun# fsmonitor=x");
	free(out);
	free(keys);

	/* what git rejects is rejected */
	CHECK(neut("[core\n", &n, &keys) == NULL);
	CHECK_INT_EQ(n, -1);
	neut("fsmonitor = x\n", &n, &keys);
	CHECK_INT_EQ(n, -1);
	neut("[core]\n\tfsmonitor = \"x\n", &n, &keys);
	CHECK_INT_EQ(n, -1);
	neut("[core]\n\t1x = y\n", &n, &keys);
	CHECK_INT_EQ(n, -1);
	neut("[core]\n\tfsmonitor = \\q\n", &n, &keys);
	CHECK_INT_EQ(n, -1);
}

UNIT_TEST(git_code_includes_and_hookspath)
{
	const char *t =
		"[include]\n\tpath = a.cfg\n[includeIf \"gitdir:/x/\"]\n\tpath = ~/b.cfg\n[core]\n\thooksPath = .husky/_\n";
	char **v = sb_git_config_includes(t, strlen(t));
	char *h = sb_git_config_hookspath(t, strlen(t));

	CHECK(v != NULL);
	CHECK_STR_EQ(v[0], "a.cfg");
	CHECK_STR_EQ(v[1], "~/b.cfg");
	CHECK(v[2] == NULL);
	CHECK_STR_EQ(h, ".husky/_");
	ar_strv_free(v);
	free(h);
}

/* The user's config inside the sandbox: code keys out, includes kept,
 * core.excludesFile read. */
UNIT_TEST(git_code_filter_keeps_includes)
{
	const char *t =
		"[include]\n\tpath = a.cfg\n[core]\n\tpager = less\n\texcludesFile = ~/.gi\n[credential]\n\thelper = store\n";
	char *out = NULL, *keys = NULL, *x;

	CHECK_INT_EQ(sb_git_config_filter(t, strlen(t), &out, &keys), 2);
	CHECK_STR_EQ(keys, "core.pager, credential.helper");
	CHECK_STR_EQ(
		out,
		"[include]\n\tpath = a.cfg\n[core]\n\t#agentrun# pager = less\n\texcludesFile = ~/.gi\n[credential]\n\t#agentrun# helper = store\n");
	x = sb_git_config_value(t, strlen(t), "core", "excludesfile");
	CHECK_STR_EQ(x, "~/.gi");
	free(x);
	free(out);
	free(keys);
	CHECK_INT_EQ(sb_git_config_filter("[x\n", 3, &out, &keys), -1);
}

UNIT_TEST(git_code_todo)
{
	const char *t =
		"pick 123 one\nexec echo x\n  x evil\nbreak\nxpick\n# exec no\n";
	char *out = NULL;

	CHECK_INT_EQ(sb_git_todo_neutralise(t, strlen(t), &out), 2);
	CHECK_STR_EQ(
		out,
		"pick 123 one\n# agentrun: exec echo x\n# agentrun:   x evil\nbreak\nxpick\n# exec no\n");
	free(out);
	CHECK_INT_EQ(sb_git_todo_neutralise("pick 1 a\n", 9, &out), 0);
}

UNIT_MAIN()
