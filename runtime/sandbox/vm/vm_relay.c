/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The terminal and signals of vm-host and vm-exec (vm_relay.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
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

#define OUT_HDR 5

void vm_out_put(struct vm_out *o, int fd, const void *p, size_t n)
{
	char hdr[OUT_HDR];
	uint32_t len = (uint32_t)n;

	if (n == 0 || (fd != STDOUT_FILENO && fd != STDERR_FILENO) ||
	    o->gone[fd])
		return;
	hdr[0] = (char)fd;
	memcpy(hdr + 1, &len, sizeof(len));
	ar_vm_buf_append(&o->q, hdr, sizeof(hdr));
	ar_vm_buf_append(&o->q, p, n);
}

size_t vm_out_pending(const struct vm_out *o)
{
	return ar_vm_buf_pending(&o->q);
}

static uint32_t head_len(const struct vm_out *o)
{
	uint32_t len;

	memcpy(&len, o->q.data + o->q.off + 1, sizeof(len));
	return len;
}

static void skip_head(struct vm_out *o)
{
	o->q.off += OUT_HDR + head_len(o);
	o->done = 0;
	if (o->q.off == o->q.len)
		o->q.off = o->q.len = 0;
}

int vm_out_fd(struct vm_out *o)
{
	while (ar_vm_buf_pending(&o->q) > 0) {
		int fd = (unsigned char)o->q.data[o->q.off];

		if (!o->gone[fd])
			return fd;
		skip_head(o);
	}
	return -1;
}

static bool writable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT);
}

void vm_out_write(struct vm_out *o)
{
	int fd = vm_out_fd(o);

	/* a pipe that polls writable takes PIPE_BUF bytes without blocking;
	 * at most 16 pieces a turn leave the relay its other work */
	for (int k = 0; fd >= 0 && k < 16; k++) {
		size_t left = head_len(o) - o->done;
		ssize_t n;

		if (k > 0 && !writable(fd))
			return;
		n = write(fd, o->q.data + o->q.off + OUT_HDR + o->done,
			  left > PIPE_BUF ? PIPE_BUF : left);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			o->gone[fd] = true; /* the reader went away */
			skip_head(o);
			return;
		}
		o->done += (size_t)n;
		if (o->done == head_len(o))
			skip_head(o);
		fd = vm_out_fd(o);
	}
}

void vm_out_drain(struct vm_out *o, int sfd)
{
	int fd;

	while ((fd = vm_out_fd(o)) >= 0) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLOUT },
				       { .fd = sfd, .events = POLLIN } };
		int sig;
		bool stop = false;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return;
		if (p[1].revents & POLLIN)
			while ((sig = vm_relay_signal(sfd)) > 0)
				stop = stop || sig == SIGINT ||
				       sig == SIGTERM || sig == SIGHUP ||
				       sig == SIGQUIT;
		if (stop)
			return;
		if (p[0].revents)
			vm_out_write(o);
	}
}

void vm_out_free(struct vm_out *o)
{
	ar_vm_buf_free(&o->q);
	memset(o, 0, sizeof(*o));
}
