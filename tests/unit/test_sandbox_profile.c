/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for spec/profile.c: sandbox profile files. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "profile.h"
#include "sandbox_etc.h"
#include "unit.h"

static struct oci_profile *parse(const char *json, struct ar_error *err)
{
	struct oci_profile *p = NULL;

	if (oci_profile_parse(json, strlen(json), "p.json", &p, err) < 0)
		return NULL;
	return p;
}

UNIT_TEST(full_profile)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_profile *p = parse(
		"{\"description\": \"Claude Code\","
		" \"ro\": [\"~/.gitconfig\", \"/srv\"],"
		" \"rw\": [\"~/.claude\"], \"hide\": [\"~/.claude/x\"],"
		" \"env\": [\"ANTHROPIC_API_KEY\", \"FOO=bar\", \"LC_*\"],"
		" \"etc\": [\"gitconfig\", \"vim/vimrc\"], \"net\": \"host\","
		" \"workspace\": \"~/src\", \"landlock\": false}",
		&err);

	CHECK(p != NULL);
	if (!p) {
		printf("# %s\n", err.msg);
		return;
	}
	CHECK_STR_EQ(p->description, "Claude Code");
	CHECK_INT_EQ(p->ro.n, 2);
	CHECK_STR_EQ(p->ro.v[1], "/srv");
	CHECK_STR_EQ(p->rw.v[0], "~/.claude");
	CHECK_INT_EQ(p->env.n, 3);
	CHECK_STR_EQ(p->etc.v[1], "vim/vimrc");
	CHECK_STR_EQ(p->net, "host");
	CHECK_STR_EQ(p->workspace, "~/src");
	CHECK(p->landlock.set && !p->landlock.v);
	oci_profile_free(p);
}

UNIT_TEST(empty_profile)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_profile *p = parse("{}", &err);

	CHECK(p != NULL);
	if (p) {
		CHECK(p->net == NULL);
		CHECK_INT_EQ(p->ro.n, 0);
	}
	oci_profile_free(p);
}

struct bad_case {
	const char *json;
	const char *msg;
};

UNIT_TEST(errors_name_the_path)
{
	static const struct bad_case cases[] = {
		{ "{\"rw\": [\"~/.a\", 3]}", "p.json: rw[1]: " },
		{ "{\"ro\": [\"relative/path\"]}", "p.json: ro[0]: " },
		{ "{\"nett\": \"none\"}", "unknown property" },
		{ "{\"net\": \"bridge\"}", "p.json: net: " },
		{ "{\"env\": [\"A*=b\"]}", "p.json: env[0]: " },
		{ "{\"env\": [\"1A\"]}", "p.json: env[0]: " },
		{ "{\"etc\": [\"../shadow\"]}", "p.json: etc[0]: " },
		{ "{\"etc\": [\"/etc/shadow\"]}", "p.json: etc[0]: " },
		{ "{\"workspace\": \"x\"}", "p.json: workspace: " },
		{ "{\"etc_files\": [\"a\"]}", "p.json: etc_files: " },
		{ "{\"etc_files\": {\"a\": 1}}", "p.json: etc_files.a: " },
		{ "{\"etc_files\": {\"../shadow\": \"x\"}}",
		  "p.json: etc_files: " },
		{ "{\"etc_files\": {\"a/../../x\": \"x\"}}",
		  "p.json: etc_files: " },
		{ "{\"etc_files\": {\"/etc/x\": \"x\"}}",
		  "p.json: etc_files: " },
		{ "{\"etc_files\": {\"a//b\": \"x\"}}", "p.json: etc_files: " },
		{ "{\"etc_files\": {\"a/\": \"x\"}}", "p.json: etc_files: " },
		{ "{\"etc_files\": {\"passwd\": \"x\"}}",
		  "p.json: etc_files: " },
		{ "{\"etc_files\": {\"a\": \"x\\u0000y\"}}",
		  "p.json: etc_files.a: " },
		{ "{\"keep\": [\"~/.a.json\"]}", "p.json: keep: " },
		{ "{\"keep\": {\"/etc/x.json\": [\"a\"]}}", "p.json: keep: " },
		{ "{\"keep\": {\"~/../x.json\": [\"a\"]}}", "p.json: keep: " },
		{ "{\"keep\": {\"~/.a/s.toml\": [\"a\"]}}", "p.json: keep: " },
		{ "{\"keep\": {\"~/.a/s.json\": []}}",
		  "p.json: keep[\"~/.a/s.json\"]: " },
		{ "{\"keep\": {\"~/.a/s.json\": [\"a..b\"]}}",
		  "p.json: keep[\"~/.a/s.json\"][0]: " },
		{ "{\"keep\": {\"~/.a/s.json\": [\"a b\"]}}",
		  "p.json: keep[\"~/.a/s.json\"][0]: " },
		{ "{\"landlock\": \"yes\"}", "p.json: landlock: " },
		{ "[1]", "p.json" },
		{ "{\"ro\": ", "invalid JSON" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ar_error err = AR_ERROR_INIT;
		struct oci_profile *p = parse(cases[i].json, &err);

		CHECK(p == NULL);
		oci_profile_free(p);
		CHECK_STR_CONTAINS(err.msg, cases[i].msg);
	}
}

UNIT_TEST(etc_files)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_profile *p =
		parse("{\"etc_files\": {\"codex/config.toml\": \"a = 1\\n\","
		      " \"x.json\": \"{}\"}}",
		      &err);

	CHECK(p != NULL);
	if (!p) {
		printf("# %s\n", err.msg);
		return;
	}
	CHECK_INT_EQ(p->etc_files_name.n, 2);
	CHECK_INT_EQ(p->etc_files_text.n, 2);
	CHECK_STR_EQ(p->etc_files_name.v[0], "codex/config.toml");
	CHECK_STR_EQ(p->etc_files_text.v[0], "a = 1\n");
	CHECK_STR_EQ(p->etc_files_name.v[1], "x.json");
	oci_profile_free(p);
}

UNIT_TEST(keep)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_profile *p = parse(
		"{\"keep\": {\"~/.gemini/settings.json\": [\"security.auth.selectedType\", \"ui.theme\"]}}",
		&err);

	CHECK(p != NULL);
	if (!p) {
		printf("# %s\n", err.msg);
		return;
	}
	CHECK_INT_EQ(p->keep_path.n, 1);
	CHECK_STR_EQ(p->keep_path.v[0], "~/.gemini/settings.json");
	CHECK_INT_EQ(p->keep_keys[0].n, 2);
	CHECK_STR_EQ(p->keep_keys[0].v[0], "security.auth.selectedType");
	CHECK_STR_EQ(p->keep_keys[0].v[1], "ui.theme");
	oci_profile_free(p);
}

/* ${WORKSPACE} goes into a double-quoted TOML or JSON string: a path with
 * a quote, a backslash or a newline must not end the string and add
 * keys of its own (a workspace named `x"]\nnotify = ["sh"` would). */
UNIT_TEST(etc_file_text_escapes_the_workspace)
{
	char *t =
		sb_etc_file_text("[projects.\"${WORKSPACE}\"]\n", "/home/u/p");

	CHECK_STR_EQ(t, "[projects.\"/home/u/p\"]\n");
	free(t);
	t = sb_etc_file_text("a=\"${WORKSPACE}\" b=\"${WORKSPACE}\"",
			     "/x\"]\nnotify = [\"sh\"\\\t");
	CHECK_STR_EQ(t, "a=\"/x\\\"]\\u000anotify = [\\\"sh\\\"\\\\\\u0009\""
			" b=\"/x\\\"]\\u000anotify = [\\\"sh\\\"\\\\\\u0009\"");
	free(t);
	t = sb_etc_file_text("no variable", "/w");
	CHECK_STR_EQ(t, "no variable");
	free(t);
}

UNIT_TEST(contrib_profiles_parse)
{
	static const char *const names[] = { "claude", "codex", "aider",
					     "gemini", "opencode" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct ar_error err = AR_ERROR_INIT;
		struct oci_profile *p = NULL;
		char path[512];

		snprintf(path, sizeof(path), "%s/contrib/profiles/%s.json",
			 AGENTRUN_TOP_SRCDIR, names[i]);
		CHECK(oci_profile_load_file(path, &p, &err) == 0);
		if (!p)
			printf("# %s\n", err.msg);
		oci_profile_free(p);
	}
}

UNIT_TEST(default_seccomp_as_struct)
{
	struct ar_arena a = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp *sc = NULL;

	CHECK(oci_seccomp_default(&a, &sc, &err) == 0);
	CHECK(sc && sc->n_syscalls > 0);
	oci_arena_free(&a);
}

UNIT_MAIN()
