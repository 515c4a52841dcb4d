/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/overlay/overlay*.c on a hand-made upper layer
 * (whiteouts need mknod: root only, skipped otherwise). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../runtime/sandbox/overlay/overlay.h"
#include "unit.h"
#include "utils.h"

static char top[] = "/tmp/ar-ov-unit-XXXXXX";
static char lower[600];

static void put(const char *dir, const char *rel, const char *content)
{
	char p[1200];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "we");
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static void mkd(const char *dir, const char *rel)
{
	char p[1200];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	mkdir(p, 0755);
}

static char *slurp(const char *dir, const char *rel)
{
	static char buf[256];
	char p[1200];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "re");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static char *changes_text(const struct ar_overlay *ov)
{
	static char buf[4096];
	struct ar_error err = AR_ERROR_INIT;
	FILE *f;

	memset(buf, 0, sizeof(buf)); /* nothing written leaves buf as is */
	f = fmemopen(buf, sizeof(buf), "w");
	if (!f || ar_overlay_print_changes(ov, NULL, 0, f, &err) < 0)
		printf("# %s\n", err.msg);
	if (f)
		fclose(f);
	return buf;
}

UNIT_TEST(changes_commit_discard)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_overlay ov;
	char wh[1200], *outside[] = { "/etc/passwd" }, *sel[] = { "d" };
	struct stat st;
	ino_t ino;
	struct ar_commit_opts quiet = { .out = fopen("/dev/null", "we") };

	if (geteuid() != 0)
		UNIT_SKIP("whiteouts need mknod (root)");
	CHECK(mkdtemp(top) != NULL);
	snprintf(lower, sizeof(lower), "%s/ws", top);
	mkdir(lower, 0755);
	put(lower, "same", "s\n");
	put(lower, "mod", "old\n");
	put(lower, "gone", "g\n");
	mkd(lower, "d");
	put(lower, "d/old", "o\n");
	mkd(lower, "keep");
	put(lower, "keep/k", "k\n");
	setenv("XDG_DATA_HOME", top, 1);

	CHECK(ar_overlay_create("bad/name", lower, &ov, &err) < 0);
	ar_error_clear(&err);
	CHECK(ar_overlay_create("t", lower, &ov, &err) == 0);
	if (!ov.upper) {
		printf("# %s\n", err.msg);
		return;
	}
	/* what a sandbox would leave in the upper layer */
	put(ov.upper, "same", "s\n"); /* copied up, unchanged */
	put(ov.upper, "mod", "new\n");
	put(ov.upper, "added", "a\n");
	snprintf(wh, sizeof(wh), "%s/gone", ov.upper);
	CHECK(mknod(wh, S_IFCHR | 0, makedev(0, 0)) == 0);
	mkd(ov.upper, "d"); /* d replaced: opaque */
	snprintf(wh, sizeof(wh), "%s/d", ov.upper);
	if (setxattr(wh, "user.overlay.opaque", "y", 1, 0) < 0) {
		ar_overlay_discard(&ov, &err);
		ar_overlay_release(&ov);
		UNIT_SKIP("no user xattrs on /tmp");
	}
	put(ov.upper, "d/new", "n\n");
	mkd(ov.upper, "nd");
	put(ov.upper, "nd/x", "x\n");
	mkd(ov.upper, "keep"); /* only a parent of nothing changed */

	CHECK_STR_EQ(
		changes_text(&ov),
		"A  added\nA  d/new\nD  d/old\nD  gone\nM  mod\nA  nd/\nA  nd/x\n");

	CHECK(ar_overlay_commit(&ov, outside, 1, &quiet, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "not inside the workspace");
	ar_error_clear(&err);

	CHECK(ar_overlay_commit(&ov, sel, 1, &quiet, &err) == 0);
	CHECK(slurp(lower, "d/old") == NULL);
	CHECK_STR_EQ(slurp(lower, "d/new"), "n\n");
	CHECK(slurp(lower, "added") == NULL);
	CHECK_STR_EQ(changes_text(&ov),
		     "A  added\nD  gone\nM  mod\nA  nd/\nA  nd/x\n");

	snprintf(wh, sizeof(wh), "%s/mod", lower);
	CHECK(stat(wh, &st) == 0);
	ino = st.st_ino;
	CHECK(ar_overlay_commit(&ov, NULL, 0, &quiet, &err) == 0);
	CHECK_STR_EQ(slurp(lower, "mod"), "new\n");
	CHECK(stat(wh, &st) == 0 && st.st_ino != ino); /* renamed over */
	CHECK(slurp(lower, "gone") == NULL);
	CHECK_STR_EQ(slurp(lower, "nd/x"), "x\n");
	CHECK_STR_EQ(slurp(lower, "keep/k"), "k\n");
	CHECK_STR_EQ(changes_text(&ov), "");

	CHECK(ar_overlay_discard(&ov, &err) == 0);
	CHECK(access(ov.dir, F_OK) < 0);
	ar_overlay_release(&ov);
	CHECK(ar_overlay_open("t", &ov, &err) < 0);
	if (quiet.out)
		fclose(quiet.out);
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		CHECK(system(cmd) == 0);
	}
}

UNIT_TEST(quote_path)
{
	char *q;

	q = ar_quote_path("plain/name.txt");
	CHECK_STR_EQ(q, "plain/name.txt");
	free(q);
	q = ar_quote_path("a\033[2Kb");
	CHECK_STR_EQ(q, "\"a\\033[2Kb\"");
	free(q);
	q = ar_quote_path("tab\there\nq\"b\\");
	CHECK_STR_EQ(q, "\"tab\\there\\nq\\\"b\\\\\"");
	free(q);
	q = ar_quote_path("caf\xc3\xa9");
	CHECK_STR_EQ(q, "\"caf\\303\\251\"");
	free(q);
}

/* Protected changes (overlay_protect.c): marked, grouped, held back by
 * commit unless named or --include-protected. A git directory made of
 * the workspace's HEAD and the upper layer's objects/ and refs/ counts. */
UNIT_TEST(protected_changes_held_back)
{
	static char top2[] = "/tmp/ar-ov-prot-XXXXXX";
	struct ar_error err = AR_ERROR_INIT;
	struct ar_overlay ov;
	char ws[600], *txt, *vs[] = { ".vscode/tasks.json" },
			    *repo[] = { "repo" };
	char *above[] = { "sub" };
	char errbuf[4096] = "";
	FILE *ef = fmemopen(errbuf, sizeof(errbuf), "w");
	struct ar_commit_opts quiet = { .out = fopen("/dev/null", "we"),
					.err = ef };

	CHECK(mkdtemp(top2) != NULL);
	snprintf(ws, sizeof(ws), "%s/ws", top2);
	mkdir(ws, 0755);
	mkd(ws, "repo");
	put(ws, "repo/HEAD", "ref: refs/heads/main\n");
	setenv("XDG_DATA_HOME", top2, 1);
	CHECK(ar_overlay_create("p", ws, &ov, &err) == 0);
	if (!ov.upper) {
		printf("# %s\n", err.msg);
		return;
	}
	put(ov.upper, "ok.txt", "ok\n");
	mkd(ov.upper, ".claude");
	put(ov.upper, ".claude/notes.md", "n\n");
	put(ov.upper, ".claude/settings.json", "{}\n");
	mkd(ov.upper, ".vscode");
	put(ov.upper, ".vscode/tasks.json", "{}\n");
	mkd(ov.upper, "repo");
	mkd(ov.upper, "repo/objects");
	mkd(ov.upper, "repo/refs");
	put(ov.upper, "repo/config", "[core]\n");
	mkd(ov.upper, "sub");
	mkd(ov.upper, "sub/.git");
	put(ov.upper, "sub/.git/HEAD", "x\n");

	txt = changes_text(&ov);
	CHECK_STR_CONTAINS(txt,
			   "A  .claude/\nA  .claude/notes.md\n"
			   "A! .claude/settings.json (protected: agent config");
	CHECK_STR_CONTAINS(txt, "A! .vscode/ (protected: editor config");
	CHECK_STR_CONTAINS(txt,
			   "A  ok.txt\nA! repo/config (protected: git config)\n"
			   "M! repo/ (in the git directory: 2 changes");
	CHECK_STR_CONTAINS(
		txt, "A  sub/\nA! sub/.git/ (new git directory: 2 changes");
	CHECK_STR_CONTAINS(
		txt,
		"! 8 protected changes (.claude/settings.json, .vscode, repo, sub/.git): marked `!`");

	/* all: the ordinary ones only, the others listed on err */
	CHECK(ar_overlay_commit(&ov, NULL, 0, &quiet, &err) == 0);
	fflush(ef);
	CHECK_STR_CONTAINS(errbuf, "  A! .vscode/tasks.json");
	CHECK_STR_CONTAINS(errbuf, "8 protected changes (");
	CHECK_STR_EQ(slurp(ws, "ok.txt"), "ok\n");
	CHECK_STR_EQ(slurp(ws, ".claude/notes.md"), "n\n");
	CHECK(slurp(ws, ".claude/settings.json") == NULL);
	CHECK(slurp(ws, ".vscode/tasks.json") == NULL);
	CHECK(slurp(ws, "repo/config") == NULL);
	/* a PATH above a protected path does not name it */
	CHECK(ar_overlay_commit(&ov, above, 1, &quiet, &err) == 0);
	CHECK(slurp(ws, "sub/.git/HEAD") == NULL);
	/* one at or below it does */
	CHECK(ar_overlay_commit(&ov, vs, 1, &quiet, &err) == 0);
	CHECK_STR_EQ(slurp(ws, ".vscode/tasks.json"), "{}\n");
	CHECK(ar_overlay_commit(&ov, repo, 1, &quiet, &err) == 0);
	CHECK_STR_EQ(slurp(ws, "repo/config"), "[core]\n");
	txt = changes_text(&ov);
	CHECK_STR_CONTAINS(txt, "A! sub/.git/ (new git directory: 2 changes");
	{ /* named: one by one */
		char buf[2048] = "", *named[] = { "sub/.git" };
		FILE *f = fmemopen(buf, sizeof(buf), "w");

		CHECK(f &&
		      ar_overlay_print_changes(&ov, named, 1, f, &err) == 0);
		if (f)
			fclose(f);
		CHECK_STR_CONTAINS(
			buf, "A! sub/.git/ (protected: git directory)\n"
			     "A! sub/.git/HEAD (protected: git directory)\n");
	}
	quiet.include_protected = true;
	CHECK(ar_overlay_commit(&ov, NULL, 0, &quiet, &err) == 0);
	CHECK_STR_EQ(slurp(ws, "sub/.git/HEAD"), "x\n");
	CHECK_STR_EQ(changes_text(&ov), "");

	CHECK(ar_overlay_discard(&ov, &err) == 0);
	ar_overlay_release(&ov);
	fclose(quiet.out);
	fclose(ef);
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top2);
		CHECK(system(cmd) == 0);
	}
}

UNIT_MAIN()
