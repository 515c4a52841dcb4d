/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pid 1 of the sandbox: see init_loop.h. */
#include "init_loop.h"

#include <asm-generic/errno-base.h>
#include <linux/poll.h>
#include <linux/signalfd.h>
#include <linux/wait.h>
/* libc's headers for their numbers only (SIGCHLD, SIG_BLOCK, _NSIG,
 * MSG_*): no libc function is called */
#include <signal.h>
#include <sys/socket.h>

#include "init_sys.h"

static int status_code(int st)
{
	if ((st & 0x7f) == 0) /* exited */
		return (st >> 8) & 0xff;
	if ((st & 0x7f) != 0x7f) /* killed by a signal */
		return 128 + (st & 0x7f);
	return 1;
}

static __attribute__((noreturn)) void die(int code)
{
	for (;;)
		ar_sys1(__NR_exit_group, code);
}

/* Reap every child that changed state; prog's stop is reported on
 * *chan, prog's end is ours. */
static void reap(int prog, int *chan)
{
	for (;;) {
		int st = 0;
		long w = ar_sys4(__NR_wait4, -1, &st, WNOHANG | WUNTRACED, 0);

		if (w <= 0)
			return;
		if (w != prog)
			continue; /* an orphan, reaped */
		if ((st & 0xff) == 0x7f) { /* stopped */
			char c = AR_INIT_STOPPED;

			if (*chan >= 0 &&
			    ar_sys6(__NR_sendto, *chan, &c, 1,
				    MSG_NOSIGNAL | MSG_DONTWAIT, 0, 0) < 0) {
				ar_sys1(__NR_close, *chan);
				*chan = -1;
			}
			continue;
		}
		die(status_code(st));
	}
}

void ar_init_loop(int prog, int chan)
{
	/* the kernel's sigset: _NSIG - 1 bits (libc's _NSIG counts 0) */
	unsigned char all[(_NSIG - 1) / 8];
	struct pollfd pfd[2];
	long sfd;

	for (unsigned int i = 0; i < sizeof(all); i++)
		all[i] = 0xff;
	ar_sys4(__NR_rt_sigprocmask, SIG_BLOCK, all, 0, sizeof(all));
	sfd = ar_sys4(__NR_signalfd4, -1, all, sizeof(all), SFD_CLOEXEC);
	if (sfd < 0) {
		/* no signalfd: reap and wait for the program, nothing more */
		for (;;) {
			int st = 0;
			long w = ar_sys4(__NR_wait4, -1, &st, 0, 0);

			if (w == prog)
				die(status_code(st));
			if (w == -ECHILD)
				die(1);
		}
	}
	for (;;) {
		int n = 1;

		pfd[0].fd = (int)sfd;
		pfd[0].events = POLLIN;
		pfd[0].revents = 0;
		if (chan >= 0) {
			pfd[1].fd = chan;
			pfd[1].events = POLLIN;
			pfd[1].revents = 0;
			n = 2;
		}
		if (ar_sys6(__NR_ppoll, pfd, n, 0, 0, 0, 0) < 0)
			continue; /* EINTR: nothing is caught, but */
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (ar_sys4(__NR_read, sfd, &si, sizeof(si), 0) ==
			    (long)sizeof(si)) {
				if (si.ssi_signo != SIGCHLD)
					ar_sys2(__NR_kill, prog, si.ssi_signo);
				else
					reap(prog, &chan);
			}
		}
		if (n > 1 && pfd[1].revents) {
			char c;
			long r = ar_sys6(__NR_recvfrom, chan, &c, 1,
					 MSG_DONTWAIT, 0, 0);

			if (r == 1) {
				if (c == AR_INIT_CONT)
					ar_sys2(__NR_kill, -prog, SIGCONT);
			} else if (r != -EAGAIN && r != -EINTR) {
				ar_sys1(__NR_close, chan);
				chan = -1;
			}
		}
	}
}
