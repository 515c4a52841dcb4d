/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun vm-guest`: the guest agent of `sandbox --vm` (docs/vm.md, "The
 * guest agent"). vm-init.sh starts it as the guest's root on the
 * virtio-serial port named "agent"; it says READY, then runs each
 * session the host asks for (SPAWN: the command, session 0, and each
 * `sandbox exec`) as the sandbox's user (no capability, no-new-privs), on
 * a terminal of its own (a pty of the guest) or on pipes, and relays its
 * input, output, terminal size, signals and exit status as frames
 * (vm_proto.h). It ends with the command's exit status when session 0
 * has ended; vm-init.sh writes it for the host and powers off.
 *
 * With a root (`--root DIR`: a plain bundle's root under the vm handler,
 * docs/vm.md "Plain bundles"), it first moves into a mount namespace of
 * its own whose root is DIR (pivot_root, the guest's view of the rest
 * detached): every session runs in the bundle's root, as a container's
 * processes share one.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"
#include "vm/vm_agent.h"
#include "vm/vm_proto.h"

#define MAX_SESSIONS 64
/* after its process exited, a session's output is read until its end,
 * at most this long (a background job may hold it open) */
#define DRAIN_MS 2000
/* stop reading the port while this much input waits for commands that
 * do not read it: the host then stops reading its stdin (back-pressure,
 * never an unbounded buffer) */
#define IN_HIGH_WATER (8u << 20)

struct gsess {
	uint32_t id;
	pid_t pid;
	bool tty;
	int in_fd; /* the pty's master (tty) or the stdin pipe; -1 closed */
	int out_fd; /* the pty's master or the stdout pipe */
	int err_fd; /* the stderr pipe, -1 with a tty */
	struct ar_vm_buf in;
	bool in_eof; /* close in_fd once `in` is written */
	bool exited;
	int code;
	long long exited_at;
};

struct guest {
	int port;
	const struct ar_vm_user *user; /* --user: session 0's, the default */
	struct gsess *s[MAX_SESSIONS];
	size_t n;
	struct ar_vm_buf out; /* frames to the host */
	struct ar_vm_buf rx; /* bytes from the host */
};

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* the port is written whole frames at a time, blocking: the host reads
 * all the time (vm_host.c queues what it cannot pass on yet) */
static void send_out(struct guest *g)
{
	if (ar_vm_buf_pending(&g->out) == 0)
		return;
	if (ar_write_all(g->port, g->out.data + g->out.off,
			 ar_vm_buf_pending(&g->out)) < 0) {
		/* the host is gone: nothing to report to */
		_exit(125);
	}
	g->out.off = g->out.len = 0;
}

static struct gsess *find(struct guest *g, uint32_t id)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->s[i]->id == id)
			return g->s[i];
	return NULL;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* the child: its terminal or pipes, the user, the directory, the program */
static void __attribute__((noreturn))
child(struct guest *g, const struct ar_vm_spawn *sp, const char *pts,
      int fds[3])
{
	const struct ar_vm_user *u = sp->has_user ? &sp->user : g->user;
	uid_t uid = (uid_t)u->uid;
	gid_t gid = (gid_t)u->gid;
	sigset_t all;

	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	setsid();
	if (pts) {
		int t = open(pts, O_RDWR);

		if (t < 0 || ioctl(t, TIOCSCTTY, 0) < 0)
			_exit(125);
		fds[0] = fds[1] = fds[2] = t;
	}
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			_exit(125);
	/* the groups (process.user.additionalGids, none by default) and
	 * the gid, root's too: the guest's root is root in a kernel of its
	 * own (the VM is the boundary), but its groups are the bundle's */
	if (setgroups(u->n_groups, (const gid_t *)u->groups) < 0 ||
	    setresgid(gid, gid, gid) < 0) {
		perror("agentrun vm guest: set the groups");
		_exit(125);
	}
	if (uid != 0) {
		/* as vm-init.sh's setpriv did: no capability (the bounding
		 * set emptied while still root), no-new-privs */
		for (int cap = 0; cap <= 63; cap++)
			prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
		if (setresuid(uid, uid, uid) < 0) {
			perror("agentrun vm guest: drop to the user");
			_exit(125);
		}
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (sp->cwd[0] && chdir(sp->cwd) < 0) {
		fprintf(stderr, "agentrun vm guest: cd %s: %s\n", sp->cwd,
			strerror(errno));
		_exit(125);
	}
	static char *default_env[] = {
		(char *)"PATH=/usr/local/bin:/usr/bin:/bin", NULL
	};
	environ = sp->env[0] ? sp->env : default_env;
	execvp(sp->argv[0], sp->argv);
	fprintf(stderr, "agentrun vm guest: %s: %s\n", sp->argv[0],
		strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* a new session: 0, or -1 with a message on the session's stderr */
static int spawn(struct guest *g, uint32_t id, const struct ar_vm_spawn *sp)
{
	struct gsess *s;
	char pts[64] = "";
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	int master = -1, fds[3];
	pid_t pid;

	if (g->n >= MAX_SESSIONS || find(g, id))
		return -1;
	if (sp->tty) {
		struct winsize ws = { .ws_row = sp->rows, .ws_col = sp->cols };

		master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
		    ptsname_r(master, pts, sizeof(pts)) != 0) {
			close_fd(&master);
			return -1;
		}
		if (ws.ws_row && ws.ws_col)
			ioctl(master, TIOCSWINSZ, &ws);
	} else if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
		   pipe2(err, O_CLOEXEC) < 0) {
		close_fd(&in[0]), close_fd(&in[1]), close_fd(&out[0]);
		close_fd(&out[1]), close_fd(&err[0]);
		return -1;
	}
	fds[0] = in[0], fds[1] = out[1], fds[2] = err[1];
	pid = fork();
	if (pid == 0)
		child(g, sp, sp->tty ? pts : NULL, fds);
	close_fd(&in[0]), close_fd(&out[1]), close_fd(&err[1]);
	if (pid < 0) {
		close_fd(&master), close_fd(&in[1]), close_fd(&out[0]);
		close_fd(&err[0]);
		return -1;
	}
	s = ar_xcalloc(1, sizeof(*s));
	s->id = id;
	s->pid = pid;
	s->tty = sp->tty;
	if (sp->tty) {
		s->in_fd = master;
		s->out_fd = dup(master);
		s->err_fd = -1;
	} else {
		s->in_fd = in[1];
		s->out_fd = out[0];
		s->err_fd = err[0];
	}
	set_nonblock(s->in_fd);
	set_nonblock(s->out_fd);
	if (s->err_fd >= 0)
		set_nonblock(s->err_fd);
	g->s[g->n++] = s;
	return 0;
}

static void spawn_frame(struct guest *g, const struct ar_vm_frame *f)
{
	struct ar_vm_spawn sp;
	char msg[160];
	char code = 125;

	if (ar_vm_spawn_parse(f->payload, f->len, &sp) < 0) {
		snprintf(msg, sizeof(msg),
			 "agentrun vm guest: a malformed SPAWN\n");
	} else if (spawn(g, f->session, &sp) < 0) {
		snprintf(msg, sizeof(msg),
			 "agentrun vm guest: cannot start the session: %s\n",
			 strerror(errno ? errno : EBUSY));
	} else {
		ar_vm_spawn_free(&sp);
		return;
	}
	ar_vm_spawn_free(&sp);
	ar_vm_frame_put(&g->out, AR_VM_STDERR, f->session, msg, strlen(msg));
	ar_vm_frame_put(&g->out, AR_VM_EXIT, f->session, &code, 1);
}

static void host_frame(struct guest *g, const struct ar_vm_frame *f)
{
	struct gsess *s;
	uint16_t rows, cols;

	if (f->type == AR_VM_SPAWN) {
		spawn_frame(g, f);
		return;
	}
	s = find(g, f->session);
	if (!s)
		return;
	switch (f->type) {
	case AR_VM_STDIN:
		if (s->in_fd >= 0 && !s->in_eof)
			ar_vm_buf_append(&s->in, f->payload, f->len);
		break;
	case AR_VM_EOF:
		if (s->tty) {
			/* a terminal's end of input: its EOF character */
			if (s->in_fd >= 0)
				ar_vm_buf_append(&s->in, "\004", 1);
		} else {
			s->in_eof = true;
		}
		break;
	case AR_VM_RESIZE:
		if (s->tty && ar_vm_resize_parse(f, &rows, &cols) == 0) {
			struct winsize ws = { .ws_row = rows, .ws_col = cols };

			ioctl(s->in_fd, TIOCSWINSZ, &ws);
		}
		break;
	case AR_VM_SIGNAL:
		if (f->len == 1 && !s->exited) {
			int sig = (unsigned char)f->payload[0];

			if (sig > 0 && sig < NSIG)
				kill(-s->pid, sig);
		}
		break;
	default:
		break;
	}
}

/* pass what `fd` has to the host as `type`; false at its end */
static bool relay_out(struct guest *g, struct gsess *s, int *fd, uint8_t type)
{
	char buf[AR_VM_MAX_DATA];
	ssize_t n;

	for (int i = 0; i < 16; i++) {
		n = read(*fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) {
			ar_vm_frame_put(&g->out, type, s->id, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EAGAIN)
			return true;
		/* 0: end of file; EIO: the terminal's last user left */
		close_fd(fd);
		return false;
	}
	return true;
}

static void session_end(struct guest *g, size_t i)
{
	struct gsess *s = g->s[i];
	char code = (char)s->code;

	ar_vm_frame_put(&g->out, AR_VM_EXIT, s->id, &code, 1);
	/* with a tty, out_fd is a dup of the master in_fd: three fds */
	close_fd(&s->in_fd);
	close_fd(&s->out_fd);
	close_fd(&s->err_fd);
	ar_vm_buf_free(&s->in);
	free(s);
	g->s[i] = g->s[--g->n];
}

static void reap(struct guest *g)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		for (size_t i = 0; i < g->n; i++) {
			if (g->s[i]->pid == pid) {
				g->s[i]->exited = true;
				g->s[i]->code = ar_vm_exit_code(st);
				g->s[i]->exited_at = ar_now_ms();
			}
		}
	}
}

static void write_in(struct gsess *s)
{
	if (s->in_fd < 0)
		return;
	if (ar_vm_buf_flush(s->in_fd, &s->in) < 0) {
		/* the reader is gone (EPIPE): drop the rest */
		s->in.off = s->in.len = 0;
		s->in_eof = true;
	}
	if (s->in_eof && !s->tty && ar_vm_buf_pending(&s->in) == 0)
		close_fd(&s->in_fd);
}

/* the sessions' root: a mount namespace of vm-guest's own (the init's
 * stays as it was, it writes the status and powers off), DIR its root */
static int enter_root(const char *dir)
{
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    chdir(dir) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0) {
		fprintf(stderr, "agentrun vm guest: enter the root %s: %s\n",
			dir, strerror(errno));
		return -1;
	}
	return 0;
}

int ar_vm_guest_main(const char *port_path, const struct ar_vm_user *user,
		     const char *root)
{
	struct guest g = { .user = user };
	_cleanup_close_ int port = -1, sfd = -1;
	sigset_t mask;
	int main_code = -1;

	port = open(port_path, O_RDWR | O_CLOEXEC);
	g.port = port;
	if (g.port < 0) {
		fprintf(stderr, "agentrun vm guest: open %s: %s\n", port_path,
			strerror(errno));
		return 125;
	}
	if (root && enter_root(root) < 0)
		return 125;
	signal(SIGPIPE, SIG_IGN);
	/* the sessions' orphans are reaped here, not left to the init */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return 125;
	ar_vm_frame_put(&g.out, AR_VM_READY, 0, NULL, 0);
	send_out(&g);
	while (main_code < 0) {
		struct pollfd p[2 + 3 * MAX_SESSIONS];
		struct ar_vm_frame f;
		size_t np = 2, waiting = 0;
		int timeout = -1, r;

		for (size_t i = 0; i < g.n; i++)
			waiting += ar_vm_buf_pending(&g.s[i]->in);
		p[0] = (struct pollfd){ .fd = waiting < IN_HIGH_WATER ? g.port :
									-1,
					.events = POLLIN };
		p[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (size_t i = 0; i < g.n; i++) {
			struct gsess *s = g.s[i];

			p[np++] = (struct pollfd){ .fd = s->out_fd,
						   .events = POLLIN };
			p[np++] = (struct pollfd){ .fd = s->err_fd,
						   .events = POLLIN };
			p[np++] = (struct pollfd){
				.fd = ar_vm_buf_pending(&s->in) ? s->in_fd : -1,
				.events = POLLOUT
			};
			if (s->exited)
				timeout = 100;
		}
		r = poll(p, np, timeout);
		if (r < 0 && errno != EINTR)
			return 125;
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) > 0)
				;
			reap(&g);
		}
		if (p[0].revents & (POLLIN | POLLHUP)) {
			ssize_t n = ar_vm_buf_fill(g.port, &g.rx);

			if (n == 0 || (n < 0 && errno != EAGAIN))
				return 125; /* the host is gone */
			while ((r = ar_vm_frame_next(&g.rx, &f)) > 0)
				host_frame(&g, &f);
			if (r < 0)
				return 125;
		}
		for (size_t i = 0; i < g.n; i++) {
			struct gsess *s = g.s[i];

			if (s->out_fd >= 0)
				relay_out(&g, s, &s->out_fd, AR_VM_STDOUT);
			if (s->err_fd >= 0)
				relay_out(&g, s, &s->err_fd, AR_VM_STDERR);
			write_in(s);
		}
		send_out(&g);
		for (size_t i = 0; i < g.n;) {
			struct gsess *s = g.s[i];

			if (s->exited &&
			    ((s->out_fd < 0 && s->err_fd < 0) ||
			     ar_now_ms() - s->exited_at > DRAIN_MS)) {
				if (s->id == 0)
					main_code = s->code;
				session_end(&g, i);
				continue;
			}
			i++;
		}
		send_out(&g);
	}
	return main_code;
}
