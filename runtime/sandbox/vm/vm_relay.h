/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What vm-host and vm-exec share (vm_relay.c): the caller's terminal in
 * raw mode while a session in the guest has one of its own, and the
 * signals they relay, read from a signalfd. */
#ifndef AGENTRUN_SANDBOX_VM_RELAY_H
#define AGENTRUN_SANDBOX_VM_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

#include "vm/vm_proto.h"

struct vm_tty {
	bool is_tty; /* stdin and stdout are one terminal */
	bool raw; /* saved holds the mode to restore */
	struct termios saved;
};

void vm_tty_init(struct vm_tty *t);
/* whether the session gets a terminal; its size (0 0 unknown) */
bool vm_tty_size(const struct vm_tty *t, uint16_t *rows, uint16_t *cols);
void vm_tty_raw(struct vm_tty *t);
void vm_tty_restore(struct vm_tty *t);

/* block the relayed signals (INT TERM HUP QUIT USR1 USR2 WINCH CHLD),
 * each with a handler (a pid namespace's init drops a signal it has no
 * handler for), and return a signalfd for them, or -1 */
int vm_relay_signals(void);
/* the next pending signal of the signalfd, 0 when none */
int vm_relay_signal(int sfd);
/* in a child before its exec: default dispositions, nothing blocked */
void vm_relay_child_signals(void);

/* The guest's output on its way to the caller's stdout and stderr, in
 * the order it came. It is written a piece at a time once poll says the
 * file takes more, so a reader that stops reading (a pager, a stopped
 * pipeline) never stops the relay: a signal still reaches the guest.
 * A stream whose reader is gone (EPIPE) loses the rest, as the
 * command's own output would without --vm. */
struct vm_out {
	struct ar_vm_buf q; /* records: u8 fd (1 or 2), u32 length, bytes */
	size_t done; /* bytes of the head record written */
	bool gone[3]; /* by fd */
};

/* queue n bytes for fd (STDOUT_FILENO or STDERR_FILENO) */
void vm_out_put(struct vm_out *o, int fd, const void *p, size_t n);
size_t vm_out_pending(const struct vm_out *o);
/* the fd the next bytes go to, -1 when nothing waits */
int vm_out_fd(struct vm_out *o);
/* once poll said vm_out_fd() takes more: write what it takes without
 * blocking (pieces of at most PIPE_BUF while it stays writable) */
void vm_out_write(struct vm_out *o);
/* at the end: write the rest, waiting for the reader; a SIGINT, SIGTERM,
 * SIGHUP or SIGQUIT read from the signalfd gives the rest up */
void vm_out_drain(struct vm_out *o, int sfd);
void vm_out_free(struct vm_out *o);

#endif
