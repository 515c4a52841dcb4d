/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pid 1 of a container's pid namespace: see init.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "init.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "signals.h"

static char *argv_area;
static size_t argv_area_len;

void ar_init_save_argv(int argc, char **argv)
{
	char *end;

	if (argc < 1 || !argv[0])
		return;
	/* The kernel lays the strings out one after the other. */
	end = argv[0];
	for (int i = 0; i < argc; i++) {
		if (argv[i] != end)
			return;
		end += strlen(argv[i]) + 1;
	}
	argv_area = argv[0];
	argv_area_len = (size_t)(end - argv[0]);
}

/* /proc/1/cmdline and comm say `init`, not the runtime's command line. */
static void set_title(void)
{
	static const char title[] = "init";

	prctl(PR_SET_NAME, title);
	if (argv_area_len < sizeof(title))
		return;
	memset(argv_area, 0, argv_area_len);
	memcpy(argv_area, title, sizeof(title));
}

/* Every fd but 2 (messages) and chan: the init holds no terminal, pipe or
 * file of the program's, so their ends close when the program's do. */
static void close_all_but(int chan)
{
	unsigned int lo = 3;

	close(0);
	close(1);
	if (chan >= 3) {
		if ((unsigned int)chan > lo)
			syscall(SYS_close_range, lo, (unsigned int)chan - 1, 0);
		lo = (unsigned int)chan + 1;
	}
	if (syscall(SYS_close_range, lo, ~0U, 0) < 0) {
		/* a profile that refuses close_range: the slow way */
		for (int fd = (int)lo; fd < 1024; fd++)
			if (fd != chan)
				close(fd);
	}
}

static int status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

__attribute__((noreturn)) static void init_loop(pid_t prog, int chan,
						const sigset_t *all)
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
			if (si.ssi_signo != SIGCHLD) {
				kill(prog, (int)si.ssi_signo);
				continue;
			}
			for (;;) {
				int st;
				pid_t w = waitpid(-1, &st, WNOHANG | WUNTRACED);

				if (w <= 0)
					break;
				if (w != prog)
					continue; /* an orphan, reaped */
				if (WIFSTOPPED(st)) {
					char c = AR_INIT_STOPPED;

					if (chan >= 0 &&
					    send(chan, &c, 1,
						 MSG_NOSIGNAL | MSG_DONTWAIT) <
						    0) {
						close(chan);
						chan = -1;
					}
					continue;
				}
				_exit(status_code(st));
			}
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

int ar_init_exec(const char *exe, char *const argv[], char *const envp[],
		 bool tty, int chan, struct ar_error *err)
{
	sigset_t all, old;
	pid_t pid;

	/* Blocked before the fork: nothing sent to pid 1 in between is
	 * lost (the signalfd reads what is pending). */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		sigprocmask(SIG_SETMASK, &old, NULL);
		return ar_error_set(err, e, "fork the program under the init");
	}
	if (pid == 0) {
		if (chan >= 0)
			close(chan);
		setpgid(0, 0);
		/* SIGTTOU is blocked: a background group may take the
		 * terminal's foreground */
		if (tty)
			tcsetpgrp(STDIN_FILENO, getpid());
		ar_signals_reset_for_exec();
		execve(exe, argv, envp);
		return ar_error_set(err, errno, "exec `%s`", exe);
	}
	/* both sides, so neither order of the two races */
	setpgid(pid, pid);
	close_all_but(chan);
	set_title();
	init_loop(pid, chan, &all);
}
