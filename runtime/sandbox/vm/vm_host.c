/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun vm-host` (vm_agent.h): the sandbox's side of the guest
 * agent. It starts QEMU with one end of a socket pair on fd 3 (the
 * chardev of the virtio-serial port "agent"), waits for the guest
 * agent's READY, asks it for session 0 (the command) on a terminal when
 * its own stdin and stdout are one, and relays: stdin, SIGWINCH and the
 * signals it gets to session 0, the guest's output to stdout and stderr;
 * each `sandbox exec` (vm_exec.c, on the exec socket) is one more
 * session. Everything from the guest is untrusted: a malformed frame
 * stops the VM, a frame for no session is dropped, nothing of it is ever
 * run here. It exits with the command's status, or 125 with the reason
 * and the end of the guest console when the VM stopped without one.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "utils.h"
#include "vm/vm_agent.h"
#include "vm/vm_proto.h"
#include "vm/vm_relay.h"

#define MAX_CLIENTS 32
/* stop reading a source while this much waits for a slow reader */
#define HIGH_WATER (1u << 20)
/* the guest powers off right after the command's end */
#define POWEROFF_GRACE_MS 10000

struct client {
	int fd;
	uint32_t session; /* 0 until its SPAWN */
	struct ar_vm_buf rx, tx;
	bool closing; /* close once tx is written */
};

struct host {
	const struct ar_vm_host_opts *o;
	int sock; /* QEMU's port */
	pid_t qemu;
	bool qemu_exited;
	int qemu_status;
	bool ready;
	bool start_timed_out;
	bool stdin_eof;
	bool main_exited;
	int main_code;
	long long main_exited_at;
	bool broken; /* the guest sent a malformed frame */
	int listener;
	struct client *c[MAX_CLIENTS];
	size_t n;
	uint32_t next_session;
	struct ar_vm_buf tx; /* frames to the guest */
	struct ar_vm_buf rx;
	struct vm_out out; /* session 0's output, for stdout and stderr */
	struct vm_tty tty;
	char *main_buf[2]; /* --main-argv, --main-env: the files */
	char **main_argv, **main_env; /* into them */
};

static void main_free(struct host *h)
{
	free(h->main_argv);
	free(h->main_env);
	free(h->main_buf[0]);
	free(h->main_buf[1]);
}

/* a NUL-separated list file into a NULL-ended vector of its strings
 * (which stay in *buf) */
static char **read_list(const char *path, char **buf)
{
	struct ar_error err = AR_ERROR_INIT;
	size_t len, n = 0, k = 0;
	char **v;

	if (ar_read_file_at(AT_FDCWD, path, AR_VM_MAX_PAYLOAD, buf, &len,
			    &err) < 0) {
		fprintf(stderr, "agentrun vm-host: %s\n", err.msg);
		ar_error_clear(&err);
		return NULL;
	}
	for (size_t i = 0; i < len; i++)
		n += (*buf)[i] == '\0';
	v = ar_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < len && k < n; i += strlen(*buf + i) + 1)
		v[k++] = *buf + i;
	return v;
}

static pid_t start_qemu(char **argv, int fd)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	vm_relay_child_signals();
	if (dup2(fd, 3) < 0)
		_exit(125);
	{
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, STDIN_FILENO);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "agentrun sandbox --vm: %s: %s\n", argv[0],
		strerror(errno));
	_exit(125);
}

static int listen_exec(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0600) < 0 || listen(fd, 16) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct client *client_of(struct host *h, uint32_t session)
{
	if (session == 0)
		return NULL;
	for (size_t i = 0; i < h->n; i++)
		if (h->c[i]->session == session)
			return h->c[i];
	return NULL;
}

static void client_drop(struct host *h, size_t i)
{
	struct client *c = h->c[i];

	if (c->session && !c->closing) {
		/* its command is left without a reader: hang it up */
		char sig = SIGHUP;

		ar_vm_frame_put(&h->tx, AR_VM_SIGNAL, c->session, &sig, 1);
		ar_vm_frame_put(&h->tx, AR_VM_EOF, c->session, NULL, 0);
	}
	close(c->fd);
	ar_vm_buf_free(&c->rx);
	ar_vm_buf_free(&c->tx);
	free(c);
	h->c[i] = h->c[--h->n];
}

/* the proxy variables of an exec name the sandbox's 127.0.0.1, which
 * the guest reaches at the gateway (agentrun-vm does the same for the
 * command's) */
static void rewrite_env(const char *gateway, char **env)
{
	static const char *const names[] = { "HTTP_PROXY=",  "HTTPS_PROXY=",
					     "ALL_PROXY=",   "http_proxy=",
					     "https_proxy=", "all_proxy=" };

	if (!gateway)
		return;
	for (size_t i = 0; env[i]; i++) {
		for (size_t k = 0; k < AR_ARRAY_SIZE(names); k++) {
			char *at;

			if (strncmp(env[i], names[k], strlen(names[k])) != 0)
				continue;
			at = strstr(env[i], "127.0.0.1:");
			if (at) {
				char *v = ar_xasprintf(
					"%.*s%s:%s", (int)(at - env[i]), env[i],
					gateway, at + strlen("127.0.0.1:"));

				free(env[i]);
				env[i] = v;
			}
		}
	}
}

/* a frame from an exec client: SPAWN first, then its input */
static int client_frame(struct host *h, struct client *c,
			const struct ar_vm_frame *f)
{
	if (c->session == 0) {
		struct ar_vm_spawn sp;

		if (f->type != AR_VM_SPAWN ||
		    ar_vm_spawn_parse(f->payload, f->len, &sp) < 0)
			return -1;
		rewrite_env(h->o->proxy_gateway, sp.env);
		c->session = ++h->next_session;
		ar_vm_spawn_put(&h->tx, c->session, &sp);
		ar_vm_spawn_free(&sp);
		return 0;
	}
	switch (f->type) {
	case AR_VM_STDIN:
	case AR_VM_EOF:
	case AR_VM_RESIZE:
	case AR_VM_SIGNAL:
		ar_vm_frame_put(&h->tx, f->type, c->session, f->payload,
				f->len);
		return 0;
	default:
		return -1;
	}
}

static void main_spawn(struct host *h)
{
	static const char script[] =
		"cd \"$1\" || exit 125; . /run/vm/ctl/cmd || exit 125; exec \"$@\"";
	char *argv[] = { (char *)"/bin/sh", (char *)"-c",      (char *)script,
			 (char *)"command", (char *)h->o->cwd, NULL };
	char *env[] = { NULL };
	/* a plain bundle's command: its own argv, environment, directory;
	 * else the sandbox's, ctl/cmd through the guest's shell */
	struct ar_vm_spawn sp =
		h->main_argv ? (struct ar_vm_spawn){ .cwd = (char *)h->o->cwd,
						     .argv = h->main_argv,
						     .env = h->main_env } :
			       (struct ar_vm_spawn){ .cwd = (char *)"/",
						     .argv = argv,
						     .env = env };

	sp.tty = vm_tty_size(&h->tty, &sp.rows, &sp.cols);
	ar_vm_spawn_put(&h->tx, 0, &sp);
	vm_tty_raw(&h->tty);
}

/* a frame from the guest */
static void guest_frame(struct host *h, const struct ar_vm_frame *f)
{
	struct client *c;

	if (f->type == AR_VM_READY) {
		if (!h->ready) {
			h->ready = true;
			main_spawn(h);
		}
		return;
	}
	if (f->type != AR_VM_STDOUT && f->type != AR_VM_STDERR &&
	    f->type != AR_VM_EXIT)
		return;
	if (f->session == 0) {
		if (f->type == AR_VM_EXIT) {
			if (f->len == 1 && !h->main_exited) {
				h->main_exited = true;
				h->main_code = (unsigned char)f->payload[0];
				h->main_exited_at = ar_now_ms();
			}
			return;
		}
		vm_out_put(&h->out,
			   f->type == AR_VM_STDOUT ? STDOUT_FILENO :
						     STDERR_FILENO,
			   f->payload, f->len);
		return;
	}
	c = client_of(h, f->session);
	if (!c || c->closing)
		return;
	ar_vm_frame_put(&c->tx, f->type, 0, f->payload, f->len);
	if (f->type == AR_VM_EXIT)
		c->closing = true;
}

static void on_signal(struct host *h, int sig)
{
	if (sig == SIGCHLD) {
		int st;

		if (waitpid(h->qemu, &st, WNOHANG) == h->qemu) {
			h->qemu_exited = true;
			h->qemu_status = st;
		}
		return;
	}
	if (sig == SIGWINCH) {
		uint16_t rows, cols;

		if (h->ready && vm_tty_size(&h->tty, &rows, &cols))
			ar_vm_resize_put(&h->tx, 0, rows, cols);
		return;
	}
	if (h->ready && !h->main_exited) {
		char s = (char)sig;

		ar_vm_frame_put(&h->tx, AR_VM_SIGNAL, 0, &s, 1);
		return;
	}
	/* before the guest runs the command (or after): stop the VM */
	kill(h->qemu, SIGKILL);
	if (!h->main_exited) {
		h->main_exited = true;
		h->main_code = 128 + sig;
		h->main_exited_at = ar_now_ms();
	}
}

static void from_stdin(struct host *h)
{
	char buf[AR_VM_MAX_DATA];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0) {
		ar_vm_frame_put(&h->tx, AR_VM_STDIN, 0, buf, (size_t)n);
		return;
	}
	h->stdin_eof = true;
	ar_vm_frame_put(&h->tx, AR_VM_EOF, 0, NULL, 0);
}

static void from_guest(struct host *h)
{
	struct ar_vm_frame f;
	ssize_t n = ar_vm_buf_fill(h->sock, &h->rx);
	int r;

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		close(h->sock);
		h->sock = -1;
		return;
	}
	while ((r = ar_vm_frame_next(&h->rx, &f)) > 0)
		guest_frame(h, &f);
	if (r < 0) {
		h->broken = true;
		kill(h->qemu, SIGKILL);
		close(h->sock);
		h->sock = -1;
	}
}

static void from_client(struct host *h, size_t i)
{
	struct client *c = h->c[i];
	struct ar_vm_frame f;
	ssize_t n = ar_vm_buf_fill(c->fd, &c->rx);
	int r = 0;

	if (n < 0 && errno == EAGAIN)
		return;
	if (n > 0) {
		while ((r = ar_vm_frame_next(&c->rx, &f)) > 0)
			if (client_frame(h, c, &f) < 0) {
				r = -1;
				break;
			}
	}
	if (n <= 0 || r < 0)
		client_drop(h, i);
}

static void accept_client(struct host *h)
{
	int fd = accept4(h->listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct client *c;

	if (fd < 0)
		return;
	if (h->n >= MAX_CLIENTS) {
		close(fd);
		return;
	}
	c = ar_xcalloc(1, sizeof(*c));
	c->fd = fd;
	h->c[h->n++] = c;
}

/* the most output waiting for a slow reader: ours, or a client's */
static size_t backlog(const struct host *h)
{
	size_t most = vm_out_pending(&h->out);

	for (size_t i = 0; i < h->n; i++)
		if (ar_vm_buf_pending(&h->c[i]->tx) > most)
			most = ar_vm_buf_pending(&h->c[i]->tx);
	return most;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* a file of at most 1 MiB, or NULL */
static char *slurp(const char *dir, const char *name)
{
	_cleanup_free_ char *path = name ? ar_xasprintf("%s/%s", dir, name) :
					   ar_xstrdup(dir);
	struct ar_error err = AR_ERROR_INIT;
	char *data = NULL;

	if (ar_read_file_at(AT_FDCWD, path, 1u << 20, &data, NULL, &err) < 0)
		return NULL;
	return data;
}

/* the command's status, or 125 and why the VM stopped without one */
static int finish(struct host *h)
{
	_cleanup_free_ char *status = NULL, *error = NULL, *console = NULL;
	const char *tail;
	char *end;
	long v;
	int lines = 0;

	vm_tty_restore(&h->tty);
	if (h->main_exited && !h->broken)
		return h->main_code;
	status = h->o->ctl && !h->broken ? slurp(h->o->ctl, "status") : NULL;
	if (status) {
		v = strtol(status, &end, 10);
		if (end != status && v >= 0 && v <= 255)
			return (int)v;
	}
	fprintf(stderr,
		"agentrun sandbox --vm: the VM stopped without an exit status (QEMU exit %d)\n",
		WIFEXITED(h->qemu_status) ? WEXITSTATUS(h->qemu_status) :
					    128 + WTERMSIG(h->qemu_status));
	if (h->broken)
		fprintf(stderr,
			"agentrun sandbox --vm: the guest agent sent a malformed frame: the VM was stopped\n");
	error = h->o->ctl ? slurp(h->o->ctl, "error") : NULL;
	if (error)
		fputs(error, stderr);
	console = h->o->console ? slurp(h->o->console, NULL) : NULL;
	if (console) {
		/* its last 25 lines */
		tail = console + strlen(console);
		while (tail > console && lines <= 25)
			if (*--tail == '\n')
				lines++;
		if (*tail == '\n')
			tail++;
		fprintf(stderr,
			"agentrun sandbox --vm: the end of the guest console:\n");
		for (const char *l = tail; *l;) {
			const char *nl = strchr(l, '\n');
			int len = nl ? (int)(nl - l) : (int)strlen(l);

			fprintf(stderr, "  %.*s\n", len, l);
			l += len + (nl ? 1 : 0);
		}
	}
	return 125;
}

/* the guest agent did not say READY in time: stop the VM, say why */
static void start_timeout(struct host *h)
{
	_cleanup_free_ char *path =
		h->o->ctl ? ar_xasprintf("%s/error", h->o->ctl) : NULL;
	FILE *e = path ? fopen(path, "ae") : NULL;

	h->start_timed_out = true;
	if (e) {
		fprintf(e, "the guest did not start the command within %d s\n",
			h->o->start_timeout);
		fclose(e);
	}
	kill(h->qemu, SIGKILL);
}

static void poll_add(struct pollfd *p, size_t *n, int fd, short events)
{
	p[*n] = (struct pollfd){ .fd = fd, .events = events };
	(*n)++;
}

static void run(struct host *h, int sfd)
{
	long long start_deadline =
		ar_now_ms() + (long long)h->o->start_timeout * 1000;

	while (!h->qemu_exited) {
		struct pollfd p[5 + MAX_CLIENTS];
		size_t np = 0, waiting = backlog(h);
		bool tx = ar_vm_buf_pending(&h->tx) > 0;
		bool in_ok = ar_vm_buf_pending(&h->tx) < HIGH_WATER;
		int timeout = -1;
		short gev;

		poll_add(p, &np, sfd, POLLIN);
		/* the guest is read only while no reader (ours, a client's)
		 * is far behind */
		gev = (short)((waiting < HIGH_WATER ? POLLIN : 0) |
			      (tx ? POLLOUT : 0));
		poll_add(p, &np, gev ? h->sock : -1, gev);
		poll_add(p, &np,
			 h->ready && !h->main_exited && !h->stdin_eof && in_ok ?
				 STDIN_FILENO :
				 -1,
			 POLLIN);
		poll_add(p, &np,
			 h->ready && h->listener >= 0 && h->n < MAX_CLIENTS ?
				 h->listener :
				 -1,
			 POLLIN);
		poll_add(p, &np, vm_out_fd(&h->out), POLLOUT);
		for (size_t i = 0; i < h->n; i++) {
			struct client *c = h->c[i];
			short ev = ar_vm_buf_pending(&c->tx) ? POLLOUT : 0;

			if (!c->closing && in_ok)
				ev |= POLLIN;
			poll_add(p, &np, c->fd, ev);
		}
		if (!h->ready && !h->start_timed_out) {
			long long left = start_deadline - ar_now_ms();

			if (left <= 0) {
				start_timeout(h);
				timeout = 1000;
			} else {
				timeout = (int)(left > 1000 ? 1000 : left);
			}
		} else if (h->main_exited) {
			if (ar_now_ms() - h->main_exited_at > POWEROFF_GRACE_MS)
				kill(h->qemu, SIGKILL);
			timeout = 1000;
		}
		if (poll(p, np, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN) {
			int sig;

			while ((sig = vm_relay_signal(sfd)) > 0)
				on_signal(h, sig);
		}
		if (h->sock >= 0 && (p[1].revents & POLLOUT) &&
		    ar_vm_buf_flush(h->sock, &h->tx) < 0) {
			close(h->sock);
			h->sock = -1;
		}
		if (h->sock >= 0 && (p[1].revents & (POLLIN | POLLHUP)))
			from_guest(h);
		if (p[2].revents & (POLLIN | POLLHUP))
			from_stdin(h);
		if (p[3].revents & POLLIN)
			accept_client(h);
		if (p[4].revents)
			vm_out_write(&h->out);
		/* clients: from the end, client_drop moves the last one */
		for (size_t i = h->n; i-- > 0;) {
			struct client *c = h->c[i];
			short re = p[5 + i].revents;

			if ((re & POLLOUT) &&
			    ar_vm_buf_flush(c->fd, &c->tx) < 0) {
				c->closing = true;
				c->tx.off = c->tx.len = 0;
			}
			if (c->closing && ar_vm_buf_pending(&c->tx) == 0) {
				c->session = 0; /* ended: nothing to hang up */
				client_drop(h, i);
				continue;
			}
			if (re & (POLLIN | POLLHUP | POLLERR))
				from_client(h, i);
		}
		if (h->sock >= 0 && ar_vm_buf_pending(&h->tx))
			if (ar_vm_buf_flush(h->sock, &h->tx) < 0) {
				close(h->sock);
				h->sock = -1;
			}
	}
	/* what the guest wrote before it powered off */
	while (h->sock >= 0) {
		struct pollfd p = { .fd = h->sock, .events = POLLIN };

		if (poll(&p, 1, 1000) <= 0)
			break;
		from_guest(h);
	}
	/* ... to a reader that may be slow; a signal gives it up */
	vm_out_drain(&h->out, sfd);
}

int ar_vm_host_main(const struct ar_vm_host_opts *o)
{
	struct host h = { .o = o, .listener = -1 };
	int sv[2], sfd, code;

	if (o->main_argv) {
		h.main_argv = read_list(o->main_argv, &h.main_buf[0]);
		h.main_env = o->main_env ?
				     read_list(o->main_env, &h.main_buf[1]) :
				     ar_xcalloc(1, sizeof(char *));
		if (!h.main_argv || !h.main_env || !h.main_argv[0]) {
			fprintf(stderr,
				"agentrun vm-host: --main-argv: no command\n");
			main_free(&h);
			return 125;
		}
	}
	sfd = vm_relay_signals();
	if (sfd < 0) {
		perror("agentrun vm-host: signalfd");
		return 125;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("agentrun vm-host: socketpair");
		return 125;
	}
	vm_tty_init(&h.tty);
	h.qemu = start_qemu(o->qemu, sv[1]);
	close(sv[1]);
	if (h.qemu < 0) {
		perror("agentrun vm-host: fork");
		return 125;
	}
	h.sock = sv[0];
	{
		int fl = fcntl(h.sock, F_GETFL);

		fcntl(h.sock, F_SETFL, fl | O_NONBLOCK);
	}
	if (o->exec_socket) {
		h.listener = listen_exec(o->exec_socket);
		if (h.listener < 0)
			fprintf(stderr,
				"agentrun sandbox --vm: cannot listen on %s (sandbox exec will fail): %s\n",
				o->exec_socket, strerror(errno));
	}
	run(&h, sfd);
	code = finish(&h);
	while (h.n)
		client_drop(&h, h.n - 1);
	ar_vm_buf_free(&h.tx);
	ar_vm_buf_free(&h.rx);
	vm_out_free(&h.out);
	if (o->exec_socket && h.listener >= 0) {
		close(h.listener);
		unlink(o->exec_socket);
	}
	if (o->cleanup)
		nftw(o->cleanup, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	main_free(&h);
	return code;
}
