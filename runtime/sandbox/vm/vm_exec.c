/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun vm-exec [--cwd DIR] [--user UID:GID] -- CMD` (vm_agent.h): the process `sandbox
 * exec` starts in a `--vm` sandbox (and `exec` in a plain bundle's
 * container under the vm handler). It asks vm-host (on the exec socket)
 * for a session in the guest: CMD with this process's environment and
 * directory (or DIR, a directory of the guest), on a terminal of the guest when its own stdin and stdout
 * are one; then relays stdin, the terminal's size and the signals it
 * gets, writes the session's output, and exits with its status (125
 * when the VM ended first).
 */
#include "config.h"

#include <errno.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "utils.h"
#include "vm/vm_agent.h"
#include "vm/vm_proto.h"
#include "vm/vm_relay.h"

#define HIGH_WATER (1u << 20)

static int connect_once(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	glob_t gl;
	int fd = -1;

	if (glob(AR_VM_EXEC_GLOB, 0, NULL, &gl) != 0) {
		errno = ENOENT;
		return -1;
	}
	if (gl.gl_pathc == 1 && strlen(gl.gl_pathv[0]) < sizeof(sa.sun_path)) {
		strcpy(sa.sun_path, gl.gl_pathv[0]);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 &&
		    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			int e = errno;

			close(fd);
			fd = -1;
			errno = e;
		}
	} else {
		errno = gl.gl_pathc == 1 ? ENAMETOOLONG : EEXIST;
	}
	globfree(&gl);
	return fd;
}

/* a `sandbox exec` right after `sandbox --vm --detach` comes while the
 * guest boots: vm-host listens once QEMU runs, and answers once the
 * guest agent is ready; wait as long as vm-host waits for the guest */
static int connect_host(void)
{
	const char *t = getenv("AGENTRUN_VM_START_TIMEOUT");
	long long sec, left_ms;
	int fd;

	if (!t || ar_parse_i64(t, &sec) < 0 || sec <= 0 || sec > 86400)
		sec = 180;
	left_ms = sec * 1000LL;

	while ((fd = connect_once()) < 0 &&
	       (errno == ENOENT || errno == ECONNREFUSED) && left_ms > 0) {
		usleep(100 * 1000);
		left_ms -= 100;
	}
	return fd;
}

struct xc {
	int sock;
	struct ar_vm_buf tx, rx;
	struct vm_out out;
	bool stdin_eof;
	bool exited;
	int code;
	struct vm_tty tty;
};

static void on_frame(struct xc *x, const struct ar_vm_frame *f)
{
	switch (f->type) {
	case AR_VM_STDOUT:
		vm_out_put(&x->out, STDOUT_FILENO, f->payload, f->len);
		break;
	case AR_VM_STDERR:
		vm_out_put(&x->out, STDERR_FILENO, f->payload, f->len);
		break;
	case AR_VM_EXIT:
		if (f->len == 1) {
			x->exited = true;
			x->code = (unsigned char)f->payload[0];
		}
		break;
	default:
		break;
	}
}

static void on_signal(struct xc *x, int sig)
{
	uint16_t rows, cols;
	char s = (char)sig;

	if (sig == SIGCHLD)
		return;
	if (sig == SIGWINCH) {
		if (vm_tty_size(&x->tty, &rows, &cols))
			ar_vm_resize_put(&x->tx, 0, rows, cols);
		return;
	}
	ar_vm_frame_put(&x->tx, AR_VM_SIGNAL, 0, &s, 1);
}

int ar_vm_exec_main(const char *dir, const struct ar_vm_user *user, char **argv)
{
	struct xc x = { .sock = -1 };
	_cleanup_free_ char *cwd = dir ? ar_xstrdup(dir) : getcwd(NULL, 0);
	struct ar_vm_spawn sp = { .cwd = cwd ? cwd : (char *)"/",
				  .has_user = user != NULL,
				  .argv = argv,
				  .env = environ };
	int sfd = vm_relay_signals();

	if (user)
		sp.user = *user; /* borrowed: not freed here */
	if (!argv[0]) {
		fprintf(stderr, "agentrun vm-exec: no command\n");
		return 125;
	}
	x.sock = connect_host();
	if (x.sock < 0 || sfd < 0) {
		fprintf(stderr,
			"agentrun sandbox exec: cannot reach the VM's guest agent (%s): %s\n",
			AR_VM_EXEC_GLOB, strerror(errno));
		return 125;
	}
	vm_tty_init(&x.tty);
	sp.tty = vm_tty_size(&x.tty, &sp.rows, &sp.cols);
	ar_vm_spawn_put(&x.tx, 0, &sp);
	vm_tty_raw(&x.tty);
	while (!x.exited) {
		bool tx = ar_vm_buf_pending(&x.tx) > 0;
		/* the guest is read only while its output is not far ahead
		 * of our reader */
		bool rx = vm_out_pending(&x.out) < HIGH_WATER;
		struct pollfd p[4] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = rx || tx ? x.sock : -1,
			  .events = (short)((rx ? POLLIN : 0) |
					    (tx ? POLLOUT : 0)) },
			{ .fd = !x.stdin_eof && ar_vm_buf_pending(&x.tx) <
							HIGH_WATER ?
					STDIN_FILENO :
					-1,
			  .events = POLLIN },
			{ .fd = vm_out_fd(&x.out), .events = POLLOUT },
		};
		struct ar_vm_frame f;
		ssize_t n;
		int r, sig;

		if (poll(p, 4, -1) < 0 && errno != EINTR)
			break;
		if (p[3].revents)
			vm_out_write(&x.out);
		if (p[0].revents & POLLIN)
			while ((sig = vm_relay_signal(sfd)) > 0)
				on_signal(&x, sig);
		if (p[2].revents & (POLLIN | POLLHUP)) {
			char buf[AR_VM_MAX_DATA];

			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n > 0) {
				ar_vm_frame_put(&x.tx, AR_VM_STDIN, 0, buf,
						(size_t)n);
			} else if (n == 0 || errno != EINTR) {
				x.stdin_eof = true;
				ar_vm_frame_put(&x.tx, AR_VM_EOF, 0, NULL, 0);
			}
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = ar_vm_buf_fill(x.sock, &x.rx);
			if (n <= 0)
				break;
			while ((r = ar_vm_frame_next(&x.rx, &f)) > 0)
				on_frame(&x, &f);
			if (r < 0)
				break;
		}
		if (ar_vm_buf_flush(x.sock, &x.tx) < 0)
			break;
	}
	vm_out_drain(&x.out, sfd);
	vm_tty_restore(&x.tty);
	ar_vm_buf_free(&x.tx);
	ar_vm_buf_free(&x.rx);
	vm_out_free(&x.out);
	close(x.sock);
	if (!x.exited) {
		fprintf(stderr,
			"agentrun sandbox exec: the VM ended before the command did\n");
		return 125;
	}
	return x.code;
}
