/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The terminal and signals of vm-host and vm-exec (vm_relay.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "vm/vm_relay.h"

static const int relayed[] = { SIGINT,	SIGTERM, SIGHUP,   SIGQUIT,
			       SIGUSR1, SIGUSR2, SIGWINCH, SIGCHLD };

void vm_tty_init(struct vm_tty *t)
{
	memset(t, 0, sizeof(*t));
	t->is_tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
}

bool vm_tty_size(const struct vm_tty *t, uint16_t *rows, uint16_t *cols)
{
	struct winsize ws = { 0 };

	*rows = *cols = 0;
	if (!t->is_tty)
		return false;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
	return true;
}

void vm_tty_raw(struct vm_tty *t)
{
	struct termios raw;

	if (!t->is_tty || t->raw || tcgetattr(STDIN_FILENO, &t->saved) < 0)
		return;
	raw = t->saved;
	cfmakeraw(&raw);
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0)
		t->raw = true;
}

void vm_tty_restore(struct vm_tty *t)
{
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &t->saved);
	t->raw = false;
}

static void on_relayed(int sig)
{
	(void)sig; /* never runs: the signals are blocked, read from the fd */
}

int vm_relay_signals(void)
{
	struct sigaction sa = { .sa_handler = on_relayed };
	sigset_t mask;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(relayed) / sizeof(relayed[0]); i++) {
		sigaddset(&mask, relayed[i]);
		sigaction(relayed[i], &sa, NULL);
	}
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -1;
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

int vm_relay_signal(int sfd)
{
	struct signalfd_siginfo si;

	if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}

void vm_relay_child_signals(void)
{
	sigset_t none;

	for (size_t i = 0; i < sizeof(relayed) / sizeof(relayed[0]); i++)
		signal(relayed[i], SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int vm_write_out(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EAGAIN) {
			/* a non-blocking file description shared with
			 * whoever gave it: wait until it takes more */
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, -1);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
