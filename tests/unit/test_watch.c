/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun watch's pure parts: the events as lines (quoted), the kinds,
 * the frame at 80x24, the diff written to the terminal, the keys. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "watch/watch_model.h"
#include "watch/watch_term.h"
#include "watch/watch_view.h"

static void ev(struct watch_model *m, const char *json)
{
	watch_model_event(m, "sb1", json, strlen(json));
}

static const char *last(const struct watch_model *m)
{
	return m->ev[(m->ev_head + m->ev_n - 1) % WATCH_MAX_EVENTS].text;
}

UNIT_TEST(kinds)
{
	CHECK(watch_kind_of("proxy") == WATCH_NET);
	CHECK(watch_kind_of("request") == WATCH_NET);
	CHECK(watch_kind_of("exec") == WATCH_EXEC);
	CHECK(watch_kind_of("files") == WATCH_FILE);
	CHECK(watch_kind_of("protected_attempt") == WATCH_PROTECTED);
	CHECK(watch_kind_of("exit") == WATCH_OTHER);
	CHECK(watch_kind_of(NULL) == WATCH_OTHER);
}

UNIT_TEST(events_quoted_and_bounded)
{
	struct watch_model m;

	watch_model_init(&m, "/nonexistent", NULL);
	m.dirty_reqs = false;
	ev(&m,
	   "{\"time\":\"2026-01-01T10:11:12.5Z\",\"event\":\"exec\",\"pid\":7,"
	   "\"argv\":[\"echo\",\"a\\u001b]2;X\\u0007\"]}");
	CHECK_STR_EQ(
		last(&m),
		"10:11:12 sb1            exec  pid 7 echo \"a\\033]2;X\\a\"");
	CHECK(strchr(last(&m), '\033') == NULL);
	ev(&m, "{\"event\":\"request\",\"request\":{\"id\":\"3\"}}");
	CHECK(m.dirty_reqs);
	ev(&m, "not json");
	ev(&m, "[1]");
	for (int i = 0; i < 2 * WATCH_MAX_EVENTS; i++)
		ev(&m, "{\"event\":\"proxy\",\"host\":\"h\",\"port\":1,"
		       "\"allowed\":true}");
	CHECK(m.ev_n == WATCH_MAX_EVENTS);
	CHECK(strstr(last(&m), "net   h:1 (-) allowed") != NULL);
	watch_model_free(&m);
}

UNIT_TEST(view_80x24_and_filters)
{
	struct watch_model m;
	char *lines[24];

	watch_model_init(&m, "/nonexistent", NULL);
	ev(&m, "{\"event\":\"exec\",\"pid\":1,\"argv\":[\"EXECLINE\"]}");
	ev(&m, "{\"event\":\"proxy\",\"host\":\"NETLINE\",\"port\":1,"
	       "\"allowed\":false,\"reason\":\"" /* long */
	       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	       "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}");
	m.reqs = calloc(2, sizeof(*m.reqs));
	m.n_reqs = 2;
	snprintf(m.reqs[0].text, sizeof(m.reqs[0].text), "REQ-A");
	snprintf(m.reqs[1].text, sizeof(m.reqs[1].text), "REQ-B");
	m.sel = 1;
	watch_view(&m, 24, 80, lines);
	for (int i = 0; i < 24; i++)
		CHECK(strlen(lines[i]) <= 81); /* + the attribute byte */
	CHECK(lines[0][0] == '\x01'); /* the title in reverse */
	CHECK_STR_EQ(lines[3], "  REQ-A");
	CHECK_STR_EQ(lines[4], "\x01> REQ-B");
	CHECK(strstr(lines[22], "NETLINE") != NULL);
	CHECK(strstr(lines[21], "EXECLINE") != NULL);
	CHECK(strstr(lines[23], "q quit") != NULL);
	for (int i = 0; i < 24; i++)
		free(lines[i]);
	watch_model_key(&m, 'n'); /* net hidden */
	CHECK(!m.show[WATCH_NET]);
	watch_view(&m, 24, 80, lines);
	CHECK(strstr(lines[22], "EXECLINE") != NULL);
	CHECK(strstr(lines[0], "[n]net(off)") != NULL);
	for (int i = 0; i < 24; i++)
		free(lines[i]);
	/* up/down move the selection within the list */
	watch_model_key(&m, WATCH_KEY_UP);
	CHECK(m.sel == 0);
	watch_model_key(&m, WATCH_KEY_UP);
	CHECK(m.sel == 0);
	watch_model_key(&m, 'a'); /* always: confirmation first */
	CHECK(m.confirm_always);
	watch_view(&m, 24, 80, lines);
	CHECK(strstr(lines[23], "y/n") != NULL);
	for (int i = 0; i < 24; i++)
		free(lines[i]);
	watch_model_key(&m, 'n');
	CHECK(!m.confirm_always);
	CHECK(m.show[WATCH_NET] == false); /* n answered the question */
	CHECK(watch_model_key(&m, 'q'));
	CHECK(watch_model_key(&m, 3));
	/* tiny terminals do not crash */
	for (int r = 1; r < 6; r++) {
		watch_view(&m, r, 3, lines);
		for (int i = 0; i < r; i++)
			free(lines[i]);
	}
	watch_model_free(&m);
}

UNIT_TEST(frame_writes_only_changed_lines)
{
	char *a[3] = { "one", "two", "\x01three" };
	char *b[3] = { "one", "TWO", "\x01three" };
	char *out;
	size_t len;

	watch_term_frame(NULL, a, 3, &out, &len);
	CHECK(strncmp(out, "\033[H\033[2J", 7) == 0);
	CHECK(strstr(out, "\033[3;1H\033[7mthree\033[K\033[0m") != NULL);
	free(out);
	watch_term_frame(a, b, 3, &out, &len);
	CHECK_STR_EQ(out, "\033[2;1HTWO\033[K");
	CHECK(len == strlen(out));
	free(out);
	watch_term_frame(a, a, 3, &out, &len);
	CHECK(len == 0);
	free(out);
}

UNIT_TEST(keys)
{
	int k[16];
	size_t n = watch_term_keys("o\033[Aj\033OB\033[5~q", 13, k, 16);

	CHECK(n == 5);
	CHECK(k[0] == 'o');
	CHECK(k[1] == WATCH_KEY_UP);
	CHECK(k[2] == 'j');
	CHECK(k[3] == WATCH_KEY_DOWN);
	CHECK(k[4] == 'q');
}

UNIT_MAIN()
