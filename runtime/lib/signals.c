/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "signals.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utils.h"

static const struct {
	const char *name;
	int sig;
} signal_names[] = {
	{ "HUP", SIGHUP },	 { "INT", SIGINT },	  { "QUIT", SIGQUIT },
	{ "ILL", SIGILL },	 { "TRAP", SIGTRAP },	  { "ABRT", SIGABRT },
	{ "IOT", SIGIOT },	 { "BUS", SIGBUS },	  { "FPE", SIGFPE },
	{ "KILL", SIGKILL },	 { "USR1", SIGUSR1 },	  { "SEGV", SIGSEGV },
	{ "USR2", SIGUSR2 },	 { "PIPE", SIGPIPE },	  { "ALRM", SIGALRM },
	{ "TERM", SIGTERM },	 { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD },
	{ "CLD", SIGCHLD },	 { "CONT", SIGCONT },	  { "STOP", SIGSTOP },
	{ "TSTP", SIGTSTP },	 { "TTIN", SIGTTIN },	  { "TTOU", SIGTTOU },
	{ "URG", SIGURG },	 { "XCPU", SIGXCPU },	  { "XFSZ", SIGXFSZ },
	{ "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },	  { "WINCH", SIGWINCH },
	{ "IO", SIGIO },	 { "POLL", SIGPOLL },	  { "PWR", SIGPWR },
	{ "SYS", SIGSYS },
};

/* "RTMIN", "RTMIN+N", "RTMAX", "RTMAX-N" */
static int parse_rt(const char *s, int *sig)
{
	unsigned long long n = 0;
	int base;
	char sign;

	if (strncasecmp(s, "RTMIN", 5) == 0) {
		base = SIGRTMIN;
		sign = '+';
	} else if (strncasecmp(s, "RTMAX", 5) == 0) {
		base = SIGRTMAX;
		sign = '-';
	} else {
		return -1;
	}
	s += 5;
	if (*s) {
		if (*s != sign || ar_parse_u64(s + 1, &n) < 0)
			return -1;
	}
	if (n > (unsigned long long)(SIGRTMAX - SIGRTMIN))
		return -1;
	*sig = sign == '+' ? base + (int)n : base - (int)n;
	return 0;
}

int ar_signal_parse(const char *s, int *sig, struct ar_error *err)
{
	unsigned long long n;
	const char *name = s;

	if (!s || !*s)
		return ar_error_set_plain(err, EINVAL, "empty signal");
	if (isdigit((unsigned char)*s)) {
		if (ar_parse_u64(s, &n) < 0 || n == 0 || n > (unsigned)SIGRTMAX)
			return ar_error_set_plain(
				err, EINVAL, "invalid signal number `%s`", s);
		*sig = (int)n;
		return 0;
	}
	if (strncasecmp(name, "SIG", 3) == 0)
		name += 3;
	for (size_t i = 0; i < AR_ARRAY_SIZE(signal_names); i++) {
		if (strcasecmp(name, signal_names[i].name) == 0) {
			*sig = signal_names[i].sig;
			return 0;
		}
	}
	if (parse_rt(name, sig) == 0)
		return 0;
	return ar_error_set_plain(err, EINVAL, "unknown signal `%s`", s);
}

void ar_signal_forward_set(sigset_t *set)
{
	sigfillset(set);
	sigdelset(set, SIGKILL);
	sigdelset(set, SIGSTOP);
	/* Synchronous faults of the runtime itself must not be swallowed. */
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGFPE);
	sigdelset(set, SIGTRAP);
	sigdelset(set, SIGSYS);
	sigdelset(set, SIGABRT);
	/* Job control of our own terminal: keep the default behaviour. */
	sigdelset(set, SIGTSTP);
	sigdelset(set, SIGTTIN);
	sigdelset(set, SIGTTOU);
}

/* The kernel's struct sigaction for rt_sigaction(2) (generic layout). */
struct ar_kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long long mask;
};

void ar_signals_reset_all(void)
{
	struct ar_kernel_sigaction dfl = { .handler = SIG_DFL };

	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		/* The raw syscall, because glibc's sigaction() rejects its
		 * internal signals with EINVAL. */
		(void)syscall(SYS_rt_sigaction, sig, &dfl, NULL,
			      sizeof(dfl.mask));
	}
}

void ar_signals_reset_for_exec(void)
{
	sigset_t none;

	ar_signals_reset_all();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}
