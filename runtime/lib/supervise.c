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
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "init.h"
#include "log.h"
#include "sd_notify.h"
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

/* The program under the init stopped (^Z in its terminal): give the
 * user's terminal back and stop our process group, as the terminal's ^Z
 * would have (the user's shell sees its job stopped, a wrapper script
 * stops with us); once the shell continues us (fg, bg), take the
 * terminal again and continue the program. Where nobody does job
 * control (an orphaned process group) the kernel discards SIGTSTP, and
 * without a terminal there is no job to stop: the program is continued
 * at once (as when it was pid 1, which ignored the stop). */
/* Is our own terminal still there? A hung-up one fails every ioctl (EIO). */
static bool terminal_alive(void)
{
	struct termios t;

	return tcgetattr(STDIN_FILENO, &t) == 0 ||
	       tcgetattr(STDOUT_FILENO, &t) == 0;
}

/*
 * Our terminal is gone (its window closed, the ssh connection lost): hang
 * up the command's as a terminal emulator does, by closing the pty's
 * master: the kernel sends SIGHUP to its session and foreground group, and
 * writes to it fail with EIO instead of blocking on a buffer nobody reads
 * (an agent blocked there never ran its SIGHUP or SIGTERM handler).
 * Returns false, the master's new state.
 */
static bool hang_up(int master)
{
	ar_debug("the terminal hung up: hanging up the command's");
	close(master);
	return false;
}

static void job_stop(int init_fd, struct ar_tty_relay *relay, bool tty)
{
	char c = AR_INIT_CONT;

	if (tty) {
		ar_tty_relay_restore(relay);
		kill(0, SIGTSTP); /* not blocked: its default action */
		ar_tty_relay_raw(relay);
		ar_tty_relay_winsize(relay);
	}
	if (send(init_fd, &c, 1, MSG_NOSIGNAL) < 0)
		ar_debug("continue the program: %m");
}

int ar_supervise(pid_t pid, int master, const sigset_t *mask, int nfd,
		 ar_refusal_fn on_refusal, void *on_refusal_arg, int init_fd,
		 int notify_fd, const char *notify_to, struct ar_watch *watch)
{
	_cleanup_close_ int sfd = -1, refusals = nfd, init = init_fd,
			    notify = notify_fd;
	struct ar_tty_relay relay;
	struct pollfd pfd[7];
	bool exited = false, master_open = master >= 0;
	bool watching = watch && watch->fd >= 0 && watch->ready;
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
		int n = 0, stdin_idx = -1, master_idx = -1, nfd_idx = -1,
		    init_idx = -1, notify_idx = -1, watch_idx = -1;

		if (exited && !master_open)
			break;
		pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (refusals >= 0 && !exited) {
			nfd_idx = n;
			pfd[n++] = (struct pollfd){ .fd = refusals,
						    .events = POLLIN };
		}
		if (init >= 0 && !exited) {
			init_idx = n;
			pfd[n++] =
				(struct pollfd){ .fd = init, .events = POLLIN };
		}
		if (notify >= 0 && !exited) {
			notify_idx = n;
			pfd[n++] = (struct pollfd){ .fd = notify,
						    .events = POLLIN };
		}
		if (watching && !exited) {
			watch_idx = n;
			pfd[n++] = (struct pollfd){ .fd = watch->fd,
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
			while (ar_tty_pump(master, STDOUT_FILENO, NULL) > 0)
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
				} else if (sig == SIGWINCH && master_open) {
					ar_tty_relay_winsize(&relay);
				} else {
					kill(pid, sig);
					/* our terminal hung up: the command's too */
					if (sig == SIGHUP && master_open &&
					    !terminal_alive())
						master_open = hang_up(master);
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
		if (init_idx >= 0 && pfd[init_idx].revents) {
			char c;

			if (recv(init, &c, 1, MSG_DONTWAIT) == 1) {
				if (c == AR_INIT_STOPPED)
					job_stop(init, &relay, master >= 0);
			} else if (errno != EAGAIN && errno != EINTR) {
				close(init);
				init = -1;
			}
		}
		if (notify_idx >= 0 && pfd[notify_idx].revents) {
			struct ar_error e = AR_ERROR_INIT;

			/* every READY=1 forwarded, as crun */
			if (ar_notify_pump(notify, notify_to, &e) < 0) {
				ar_warn("%s", e.msg);
				close(notify);
				notify = -1;
			}
		}
		if (watch_idx >= 0 && pfd[watch_idx].revents &&
		    !watch->ready(watch->arg))
			watching = false;
		if (master_idx >= 0 && master_open && pfd[master_idx].revents) {
			bool gone = false;

			if (ar_tty_pump(master, STDOUT_FILENO, &gone) == 0)
				master_open = gone ? hang_up(master) : false;
		}
		if (stdin_idx >= 0 && master_open && pfd[stdin_idx].revents) {
			if (ar_tty_pump(STDIN_FILENO, master, NULL) == 0) {
				/* in raw mode a read of 0 is no ^D: a hangup */
				if (relay.raw && !terminal_alive())
					master_open = hang_up(master);
				else
					ar_tty_relay_stdin_eof(&relay);
			}
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
