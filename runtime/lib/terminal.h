/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * process.terminal: the container's pseudo-terminal.
 *
 * The container process opens a new pty from the container's own devpts
 * instance (after pivot_root, as runc does, so ttyname() works inside),
 * makes the slave its controlling terminal and stdio, binds it over
 * /dev/console and sends the master over a unix socket (SCM_RIGHTS):
 * the --console-socket given by podman/conmon, or the runtime's own sync
 * socket when `run` relays the terminal itself.
 */
#ifndef AGENTRUN_TERMINAL_H
#define AGENTRUN_TERMINAL_H

#include <stdbool.h>
#include <termios.h>

#include "error.h"
#include "oci_config.h"

/* Runtime side: connect to the --console-socket (a unix stream socket
 * path). Returns the fd or -1. */
int ar_console_socket_connect(const char *path, struct ar_error *err);

/* Send/receive one fd with SCM_RIGHTS; `tag` is the payload (the slave's
 * name, as conmon does not care and runc sends the pty name). */
int ar_send_fd(int sock, int fd, const char *tag, struct ar_error *err);
int ar_recv_fd(int sock, int *fd, struct ar_error *err);

/* Container side, inside the new root: open the pty, apply consoleSize,
 * setsid + controlling terminal, slave on fds 0-2, bind over /dev/console,
 * send the master over `sock`, close it. */
int ar_terminal_setup(int sock, const struct oci_console_size *size,
		      struct ar_error *err);
/* The same for `exec` (a process joining a running container): nothing is
 * mounted over /dev/console. */
int ar_terminal_setup_exec(int sock, const struct oci_console_size *size,
			   struct ar_error *err);

/* `run` in the foreground relaying the pty: our stdin in raw mode while
 * the relay runs (only when it is a tty), restored at the end. */
struct ar_tty_relay {
	int master;
	bool stdin_open;
	bool raw;
	struct termios saved;
};

void ar_tty_relay_init(struct ar_tty_relay *r, int master);
void ar_tty_relay_restore(struct ar_tty_relay *r);
/* Our terminal raw again after a restore (a job continued by the shell,
 * whose own settings it had meanwhile). */
void ar_tty_relay_raw(struct ar_tty_relay *r);
/* Our stdin reached EOF: send the pty's EOF character so the container
 * sees the end of its input too (`echo x | agentrun run` with a tty). */
void ar_tty_relay_stdin_eof(struct ar_tty_relay *r);
/* Copy our terminal's window size to the pty (SIGWINCH). */
void ar_tty_relay_winsize(struct ar_tty_relay *r);
/* Copy what is readable from `from` to `to`. Returns bytes copied, 0 at
 * EOF (or EIO of a master whose slaves are all closed) or when writing to
 * `to` failed (then *write_failed is set, when not NULL), -1 on EAGAIN. */
int ar_tty_pump(int from, int to, bool *write_failed);

#endif
