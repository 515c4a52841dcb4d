/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <signal.h>

#include "signals.h"
#include "unit.h"

static int parse(const char *s)
{
	struct ar_error err = AR_ERROR_INIT;
	int sig = -1;

	if (ar_signal_parse(s, &sig, &err) < 0)
		return -1;
	return sig;
}

UNIT_TEST(names_with_and_without_prefix)
{
	CHECK_INT_EQ(parse("TERM"), SIGTERM);
	CHECK_INT_EQ(parse("SIGTERM"), SIGTERM);
	CHECK_INT_EQ(parse("sigkill"), SIGKILL);
	CHECK_INT_EQ(parse("hup"), SIGHUP);
	CHECK_INT_EQ(parse("USR1"), SIGUSR1);
	CHECK_INT_EQ(parse("SIGWINCH"), SIGWINCH);
	CHECK_INT_EQ(parse("CHLD"), SIGCHLD);
}

UNIT_TEST(numbers)
{
	CHECK_INT_EQ(parse("9"), 9);
	CHECK_INT_EQ(parse("15"), 15);
	CHECK_INT_EQ(parse("0"), -1);
	CHECK_INT_EQ(parse("65"), -1);
	CHECK_INT_EQ(parse("-9"), -1);
	CHECK_INT_EQ(parse("9x"), -1);
}

UNIT_TEST(realtime)
{
	CHECK_INT_EQ(parse("RTMIN"), SIGRTMIN);
	CHECK_INT_EQ(parse("SIGRTMIN+3"), SIGRTMIN + 3);
	CHECK_INT_EQ(parse("RTMAX-1"), SIGRTMAX - 1);
	CHECK_INT_EQ(parse("RTMAX"), SIGRTMAX);
	CHECK_INT_EQ(parse("RTMIN-1"), -1);
	CHECK_INT_EQ(parse("RTMIN+100"), -1);
}

UNIT_TEST(unknown_names_an_error)
{
	struct ar_error err = AR_ERROR_INIT;
	int sig;

	CHECK(ar_signal_parse("SIGFOO", &sig, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "unknown signal `SIGFOO`");
	ar_error_clear(&err);
	CHECK(ar_signal_parse("", &sig, &err) < 0);
}

UNIT_TEST(forward_set)
{
	sigset_t s;

	ar_signal_forward_set(&s);
	CHECK(sigismember(&s, SIGTERM));
	CHECK(sigismember(&s, SIGINT));
	CHECK(sigismember(&s, SIGUSR1));
	CHECK(sigismember(&s, SIGWINCH));
	CHECK(!sigismember(&s, SIGKILL));
	CHECK(!sigismember(&s, SIGSEGV));
	CHECK(!sigismember(&s, SIGTSTP));
}

UNIT_MAIN()
