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

/* write all of buf to the caller's stdout or stderr, waiting when the
 * file description is non-blocking: 0, or -1 (the reader is gone) */
int vm_write_out(int fd, const void *buf, size_t len);

#endif
