/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "terminal.h"
#include "fd_passing.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "rootfs_path.h"
#include "utils.h"

int ar_console_socket_connect(const char *path, struct ar_error *err)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(addr.sun_path))
		return ar_error_set_plain(
			err, ENAMETOOLONG,
			"--console-socket: path too long: `%s`", path);
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ar_error_set(err, errno, "--console-socket: socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return ar_error_set(err, errno,
				    "--console-socket: connect to `%s`", path);
	return ar_steal_fd(&fd);
}

int ar_send_fd(int sock, int fd, const char *tag, struct ar_error *err)
{
	if (ar_sendmsg_fd(sock, tag, strlen(tag) + 1, fd) < 0)
		return ar_error_set(err, errno, "send the terminal fd");
	return 0;
}

int ar_recv_fd(int sock, int *fd, struct ar_error *err)
{
	char tag[256];

	if (ar_recvmsg_fd(sock, tag, sizeof(tag), fd) < 0)
		return ar_error_set(err, errno, "receive the terminal fd");
	if (*fd < 0)
		return ar_error_set_plain(
			err, EBADMSG,
			"receive the terminal fd: no fd in the message");
	return 0;
}

/* Bind the slave over /dev/console of the new root (best effort when the
 * root has no /dev we can write to, as runc). */
static int bind_console(int slave, struct ar_error *err)
{
	_cleanup_close_ int root = -1, target = -1;
	char src[64], dst[64];

	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return ar_error_set(err, errno, "open /");
	target = ar_mount_target_in_root(root, "/dev/console", false, err);
	if (target < 0)
		return ar_error_wrap(err, "/dev/console");
	snprintf(src, sizeof(src), "/proc/self/fd/%d", slave);
	snprintf(dst, sizeof(dst), "/proc/self/fd/%d", target);
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return ar_error_set(err, errno,
				    "bind the terminal over /dev/console");
	return 0;
}

static int terminal_setup(int sock, const struct oci_console_size *size,
			  bool console, struct ar_error *err)
{
	_cleanup_close_ int master = -1, slave = -1;
	char name[64];
	int unlock = 0;

	master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0)
		return ar_error_set(
			err, errno,
			"process.terminal: open /dev/ptmx of the container");
	if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
		return ar_error_set(err, errno, "process.terminal: unlockpt");
	/* TIOCGPTPEER opens the slave without a path lookup. */
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return ar_error_set(err, errno,
				    "process.terminal: open the pty slave");
	if (ptsname_r(master, name, sizeof(name)) != 0)
		snprintf(name, sizeof(name), "pty");
	if (size->set) {
		struct winsize ws = { .ws_row = (unsigned short)size->height,
				      .ws_col = (unsigned short)size->width };

		if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
			return ar_error_set(
				err, errno,
				"process.consoleSize: set the window size");
	}
	if (console && bind_console(slave, err) < 0) {
		ar_debug("%s (ignored)", err->msg);
		ar_error_clear(err);
	}
	/* the container process is a session leader already */
	if (getsid(0) != getpid() && setsid() < 0)
		return ar_error_set(err, errno, "process.terminal: setsid");
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return ar_error_set(
			err, errno,
			"process.terminal: make the pty the controlling terminal");
	for (int i = 0; i < 3; i++) {
		if (dup2(slave, i) < 0)
			return ar_error_set(
				err, errno,
				"process.terminal: dup the pty to fd %d", i);
	}
	if (ar_send_fd(sock, master, name, err) < 0)
		return ar_error_wrap(err, "process.terminal");
	return 0;
}

int ar_terminal_setup(int sock, const struct oci_console_size *size,
		      struct ar_error *err)
{
	return terminal_setup(sock, size, true, err);
}

int ar_terminal_setup_exec(int sock, const struct oci_console_size *size,
			   struct ar_error *err)
{
	return terminal_setup(sock, size, false, err);
}

void ar_tty_relay_raw(struct ar_tty_relay *r)
{
	struct termios raw;

	if (r->raw || !isatty(STDIN_FILENO) ||
	    tcgetattr(STDIN_FILENO, &r->saved) < 0)
		return;
	raw = r->saved;
	cfmakeraw(&raw);
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
		r->raw = true;
}

void ar_tty_relay_init(struct ar_tty_relay *r, int master)
{
	memset(r, 0, sizeof(*r));
	r->master = master;
	r->stdin_open = true;
	ar_tty_relay_raw(r);
	ar_tty_relay_winsize(r);
}

void ar_tty_relay_restore(struct ar_tty_relay *r)
{
	if (r->raw) {
		tcsetattr(STDIN_FILENO, TCSANOW, &r->saved);
		r->raw = false;
	}
}

void ar_tty_relay_stdin_eof(struct ar_tty_relay *r)
{
	struct termios t;
	char eof = 4; /* ^D */

	r->stdin_open = false;
	if (tcgetattr(r->master, &t) == 0 && t.c_cc[VEOF])
		eof = (char)t.c_cc[VEOF];
	if (write(r->master, &eof, 1) < 0)
		ar_debug("send EOF to the terminal: %m");
}

void ar_tty_relay_winsize(struct ar_tty_relay *r)
{
	struct winsize ws;

	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 ||
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(r->master, TIOCSWINSZ, &ws);
}

int ar_tty_pump(int from, int to, bool *write_failed)
{
	char buf[16384];
	ssize_t n;

	do
		n = read(from, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno == EAGAIN) ? -1 : 0; /* EIO: slave side closed */
	if (n == 0)
		return 0;
	if (ar_write_all(to, buf, (size_t)n) < 0) {
		if (write_failed)
			*write_failed = true;
		return 0;
	}
	return (int)n;
}
