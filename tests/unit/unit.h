/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A tiny unit-test harness that prints TAP.
 *
 *   #include "unit.h"
 *   UNIT_TEST(parses_hostname) { ...; CHECK(x == 1); CHECK_STR_EQ(a, "b"); }
 *   ...
 *   UNIT_MAIN()
 *
 * Each UNIT_TEST is one TAP test point ("ok N - name"); a failed CHECK
 * prints a diagnostic ("# file:line: ...") and marks the test failed.
 * UNIT_SKIP("reason") ends a test as skipped. The exit status is non-zero
 * when any test failed. tests/run-tests.sh counts the TAP lines.
 */
#ifndef AGENTRUN_UNIT_H
#define AGENTRUN_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
	struct unit_test *next;
};

extern struct unit_test *unit_tests_head;
extern int unit_current_failed;
extern const char *unit_current_skip;

#define UNIT_TEST(name)                                                        \
	static void unit_fn_##name(void);                                      \
	static struct unit_test unit_t_##name = { #name, unit_fn_##name,       \
						  NULL };                      \
	__attribute__((constructor)) static void unit_reg_##name(void)         \
	{                                                                      \
		struct unit_test **pp = &unit_tests_head;                      \
		while (*pp)                                                    \
			pp = &(*pp)->next;                                     \
		*pp = &unit_t_##name;                                          \
	}                                                                      \
	static void unit_fn_##name(void)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("# %s:%d: CHECK failed: %s\n", __FILE__,        \
			       __LINE__, #cond);                               \
			unit_current_failed = 1;                               \
		}                                                              \
	} while (0)

#define CHECK_STR_EQ(a, b)                                                     \
	do {                                                                   \
		const char *_a = (a), *_b = (b);                               \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                       \
			printf("# %s:%d: CHECK_STR_EQ failed: %s == %s\n"      \
			       "#   got:      \"%s\"\n#   expected: \"%s\"\n", \
			       __FILE__, __LINE__, #a, #b, _a ? _a : "(null)", \
			       _b ? _b : "(null)");                            \
			unit_current_failed = 1;                               \
		}                                                              \
	} while (0)

/* Check that haystack contains needle. */
#define CHECK_STR_CONTAINS(hay, needle)                                        \
	do {                                                                   \
		const char *_h = (hay), *_n = (needle);                        \
		if (!_h || !_n || !strstr(_h, _n)) {                           \
			printf("# %s:%d: CHECK_STR_CONTAINS failed: %s\n"      \
			       "#   string:  \"%s\"\n#   missing: \"%s\"\n",   \
			       __FILE__, __LINE__, #hay, _h ? _h : "(null)",   \
			       _n ? _n : "(null)");                            \
			unit_current_failed = 1;                               \
		}                                                              \
	} while (0)

#define CHECK_INT_EQ(a, b)                                                     \
	do {                                                                   \
		long long _a = (long long)(a), _b = (long long)(b);            \
		if (_a != _b) {                                                \
			printf("# %s:%d: CHECK_INT_EQ failed: %s == %s "       \
			       "(got %lld, expected %lld)\n",                  \
			       __FILE__, __LINE__, #a, #b, _a, _b);            \
			unit_current_failed = 1;                               \
		}                                                              \
	} while (0)

#define UNIT_SKIP(reason)                                                      \
	do {                                                                   \
		unit_current_skip = (reason);                                  \
		return;                                                        \
	} while (0)

#define UNIT_MAIN()                                                            \
	struct unit_test *unit_tests_head;                                     \
	int unit_current_failed;                                               \
	const char *unit_current_skip;                                         \
	int main(void)                                                         \
	{                                                                      \
		int n = 0, failed = 0;                                         \
		for (struct unit_test *t = unit_tests_head; t; t = t->next)    \
			n++;                                                   \
		printf("1..%d\n", n);                                          \
		n = 0;                                                         \
		for (struct unit_test *t = unit_tests_head; t; t = t->next) {  \
			unit_current_failed = 0;                               \
			unit_current_skip = NULL;                              \
			fflush(stdout);                                        \
			t->fn();                                               \
			n++;                                                   \
			if (unit_current_skip)                                 \
				printf("ok %d - %s # SKIP %s\n", n, t->name,   \
				       unit_current_skip);                     \
			else if (unit_current_failed) {                        \
				printf("not ok %d - %s\n", n, t->name);        \
				failed++;                                      \
			} else                                                 \
				printf("ok %d - %s\n", n, t->name);            \
		}                                                              \
		fflush(stdout);                                                \
		return failed ? 1 : 0;                                         \
	}

#endif
