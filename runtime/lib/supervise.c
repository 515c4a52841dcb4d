/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Foreground supervision of a child process (run, exec); see supervise.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "seccomp_refusal.h"
#include "terminal.h"
#include "utils.h"

static int wait_status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

int ar_supervise(pid_t pid, int master, const sigset_t *mask, int nfd,
		 ar_refusal_fn on_refusal, void *on_refusal_arg)
{
	_cleanup_close_ int sfd = -1, refusals = nfd;
	struct ar_tty_relay relay;
	struct pollfd pfd[4];
	bool exited = false, master_open = master >= 0;
	int code = 1;

	sfd = signalfd(-1, mask, SFD_CLOEXEC);
	if (sfd < 0) {
		int st;

		ar_warn("signalfd: %m: signals are not forwarded");
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return wait_status_code(st);
	}
	if (master >= 0) {
		ar_tty_relay_init(&relay, master);
		fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	}
	for (;;) {
		int n = 0, stdin_idx = -1, master_idx = -1, nfd_idx = -1;

		if (exited && !master_open)
			break;
		pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (refusals >= 0 && !exited) {
			nfd_idx = n;
			pfd[n++] = (struct pollfd){ .fd = refusals,
						    .events = POLLIN };
		}
		if (master_open) {
			master_idx = n;
			pfd[n++] = (struct pollfd){ .fd = master,
						    .events = POLLIN };
			if (relay.stdin_open && !exited) {
				stdin_idx = n;
				pfd[n++] = (struct pollfd){ .fd = STDIN_FILENO,
							    .events = POLLIN };
			}
		}
		if (exited) {
			/* drain what the container wrote before exiting */
			while (ar_tty_pump(master, STDOUT_FILENO) > 0)
				;
			master_open = false;
			continue;
		}
		if (poll(pfd, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				int sig = (int)si.ssi_signo;

				if (sig == SIGCHLD) {
					int st;
					pid_t w;

					while ((w = waitpid(-1, &st, WNOHANG)) >
					       0) {
						if (w == pid) {
							code = wait_status_code(
								st);
							exited = true;
						}
					}
				} else if (sig == SIGWINCH && master >= 0) {
					ar_tty_relay_winsize(&relay);
				} else {
					kill(pid, sig);
				}
			}
		}
		if (nfd_idx >= 0 && pfd[nfd_idx].revents) {
			/* POLLHUP: no process of the filter is left */
			if (!(pfd[nfd_idx].revents & POLLIN) ||
			    ar_seccomp_refusal_answer(refusals, on_refusal,
						      on_refusal_arg) < 0) {
				close(refusals);
				refusals = -1;
			}
		}
		if (master_idx >= 0 && pfd[master_idx].revents) {
			if (ar_tty_pump(master, STDOUT_FILENO) == 0)
				master_open = false;
		}
		if (stdin_idx >= 0 && pfd[stdin_idx].revents) {
			if (ar_tty_pump(STDIN_FILENO, master) == 0)
				ar_tty_relay_stdin_eof(&relay);
		}
	}
	if (master >= 0)
		ar_tty_relay_restore(&relay);
	if (!exited) {
		int st;

		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		code = wait_status_code(st);
	}
	return code;
}
