/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pid 1 of the sandbox: see init_loop.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "init_loop.h"

#include <errno.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* Reap every child that changed state; prog's stop is reported on
 * *chan, prog's end is ours. */
static void reap(pid_t prog, int *chan)
{
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, WNOHANG | WUNTRACED);

		if (w <= 0)
			return;
		if (w != prog)
			continue; /* an orphan, reaped */
		if (WIFSTOPPED(st)) {
			char c = AR_INIT_STOPPED;

			if (*chan >= 0 &&
			    send(*chan, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) <
				    0) {
				close(*chan);
				*chan = -1;
			}
			continue;
		}
		_exit(status_code(st));
	}
}

void ar_init_loop(pid_t prog, int chan, const sigset_t *all)
{
	struct pollfd pfd[2];
	int sfd = signalfd(-1, all, SFD_CLOEXEC);

	if (sfd < 0) {
		/* no signalfd: reap and wait for the program, nothing more */
		for (;;) {
			int st;
			pid_t w = waitpid(-1, &st, 0);

			if (w == prog || (w < 0 && errno == ECHILD))
				_exit(w == prog ? status_code(st) : 1);
		}
	}
	for (;;) {
		int n = 1;

		pfd[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (chan >= 0)
			pfd[n++] =
				(struct pollfd){ .fd = chan, .events = POLLIN };
		if (poll(pfd, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo != SIGCHLD)
				kill(prog, (int)si.ssi_signo);
			else
				reap(prog, &chan);
		}
		if (n > 1 && pfd[1].revents) {
			char c;

			if (recv(chan, &c, 1, MSG_DONTWAIT) == 1) {
				if (c == AR_INIT_CONT)
					kill(-prog, SIGCONT);
			} else if (errno != EAGAIN && errno != EINTR) {
				close(chan);
				chan = -1;
			}
		}
	}
}
