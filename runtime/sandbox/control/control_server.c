/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket of a running sandbox (control.h): bound in
 * ROOT/.control (0700) as NAME.sock (0600) by the runtime's thread while
 * the container process sets up, watched by the runtime's supervision
 * (create_opts.watch) and served by one thread of the monitor process,
 * started when the first client connects (a sandbox nobody watches has
 * none): each client sends one request line (control_proto.h)
 * and gets its reply; an "events" client stays, and every event is
 * written to it without blocking (a client that does not keep up is
 * dropped). Peers other than the sandbox's user and root are refused
 * (SO_PEERCRED), whatever the file modes.
 */
#define _GNU_SOURCE
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "control_always.h"
#include "control_grant.h"
#include "control_channel.h"
#include "control_policy.h"
#include "control_proto.h"
#include "control_queue.h"
#include "log.h"
#include "utils.h"

#define CTL_MAX_SUBS 16 /* event-stream clients at once */
#define CTL_CLIENT_TIMEOUT_MS 2000 /* to send the request line */
/* The thread's stack: request lines, replies and events are on the
 * heap; a small mapping is quicker to make than the default 8 MiB. */
#define CTL_STACK_BYTES (256 * 1024)

struct sb_control {
	char *name;
	char *root;
	char *profile; /* --profile FILE, for `always`; or NULL */
	char *dir; /* ROOT/.control */
	char *path; /* ROOT/.control/NAME.sock */
	int listen_fd;
	int wake_fd;
	pthread_t thread;
	bool running; /* the thread */
	bool served; /* sb_control_serve: the container process exists */
	struct ar_watch watch; /* the runtime watches listen_fd for us */
	bool stopping; /* under lock */
	struct ctl_queue q;
	struct ctl_grants grants; /* sandbox allow/revoke */
	struct ctl_policy policy; /* the start's, for {"op":"policy"} */
	pthread_mutex_t lock; /* subs */
	int subs[CTL_MAX_SUBS];
	atomic_int n_subs;
	struct ar_audit *audit; /* --audit, or NULL */
	struct ctl_channel *chan; /* the agent channel, or NULL */
	ar_egress_event_fn next; /* the proxy's decisions, after us */
	void *next_data;
	/* what it costs a run, ns: start (memory), serve (on_spawn), bind
	 * (the socket, while the container process sets up), free (stop):
	 * the runtime's thread; thread: its creation, at the first client
	 * (0: nobody connected); logged with --debug */
	long long ns_start, ns_serve, ns_bind, ns_free, ns_thread;
	long long ns_chan; /* the agent channel: open, serve, free */
};

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* ---- the event stream ---- */

/* One line (newline-ended) to every stream client; one that cannot take
 * it now is dropped (shut down: the thread closes it). */
static void publish(struct sb_control *c, const char *line, size_t len)
{
	if (atomic_load(&c->n_subs) == 0)
		return;
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < CTL_MAX_SUBS; i++) {
		ssize_t w;

		if (c->subs[i] < 0)
			continue;
		w = send(c->subs[i], line, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w != (ssize_t)len)
			shutdown(c->subs[i], SHUT_RDWR);
	}
	pthread_mutex_unlock(&c->lock);
}

static void audit_tee(void *data, const char *line, size_t len)
{
	struct sb_control *c = data;

	publish(c, line, len);
	/* a refused write on a protected path: the agent is told */
	ctl_channel_audit_line(c->chan, line, len);
}

/* An event of the control plane itself: into the log (which streams
 * it) or straight to the stream. b is begun (ar_audit_begin). */
static void emit(struct sb_control *c, struct ar_jbuf *b)
{
	if (c->audit) {
		ar_audit_emit(c->audit, b);
		return;
	}
	ar_jbuf_lit(b, "}\n");
	publish(c, b->p, b->len);
	ar_jbuf_free(b);
}

static void egress_event(const struct ar_egress_event *ev, void *data)
{
	struct sb_control *c = data;

	/* with --audit the log's line is streamed (audit_tee) */
	if (!c->audit && atomic_load(&c->n_subs) > 0) {
		struct ar_jbuf b = { 0 };

		ar_audit_egress_json(&b, ev);
		ar_jbuf_lit(&b, "}\n");
		publish(c, b.p, b.len);
		ar_jbuf_free(&b);
	}
	/* the agent learns what was refused, and why */
	if (c->chan && ev->denied && !ev->allowed && !ev->withheld)
		ctl_channel_blocked(c->chan, ev->host, ev->port, ev->reason);
	if (c->next)
		c->next(ev, c->next_data);
}

static void on_request(void *data, const struct ar_jbuf *req)
{
	struct sb_control *c = data;
	struct ar_jbuf b = { 0 };

	ar_audit_begin(&b, "request");
	ar_jbuf_key(&b, "request");
	ar_jbuf_add(&b, req->p, req->len);
	emit(c, &b);
}

void sb_control_event(struct sb_control *c, struct ar_jbuf *b)
{
	if (!c) {
		ar_jbuf_free(b);
		return;
	}
	emit(c, b);
}

static void channel_emit(void *data, struct ar_jbuf *b)
{
	emit(data, b);
}

int sb_control_agent_channel(struct sb_control *c, bool can_ask, int *inner,
			     struct ar_error *err)
{
	long long t0 = now_ns();
	int r;

	if (!c || c->chan)
		return 0;
	r = ctl_channel_open(&c->q, can_ask, channel_emit, c, inner, &c->chan,
			     err);
	c->ns_chan += now_ns() - t0;
	return r;
}

void sb_control_set_profile(struct sb_control *c, const char *path)
{
	if (c && path) {
		free(c->profile);
		c->profile = ar_xstrdup(path);
	}
}

void sb_control_set_audit(struct sb_control *c, struct ar_audit *a)
{
	if (!c || !a)
		return;
	c->audit = a;
	ar_audit_set_tee(a, audit_tee, c);
}

void sb_control_tap_egress(struct sb_control *c, ar_egress_event_fn *fn,
			   void **data)
{
	if (!c)
		return;
	c->next = *fn;
	c->next_data = *data;
	*fn = egress_event;
	*data = c;
	c->grants.egress = true;
}

void sb_control_set_policy(struct sb_control *c,
			   const struct ar_egress_policy *p,
			   const struct ar_egress_secret *secrets, size_t n)
{
	if (c && p)
		ctl_policy_set(&c->policy, p, secrets, n);
}

void sb_control_set_pid(struct sb_control *c, pid_t pid)
{
	if (!c)
		return;
	ctl_grants_set_pid(&c->grants, pid);
	pthread_mutex_lock(&c->q.lock);
	c->q.sandbox_pid = pid;
	pthread_mutex_unlock(&c->q.lock);
}

void sb_control_set_path_check(struct sb_control *c, ctl_path_check_fn fn,
			       void *data)
{
	if (!c)
		return;
	c->grants.check = fn;
	c->grants.check_data = data;
}

void sb_control_set_path_done(struct sb_control *c, ctl_path_done_fn fn)
{
	if (c)
		c->grants.done = fn;
}

bool sb_control_net_granted(const char *host, uint16_t port, bool *exact,
			    void *data)
{
	struct sb_control *c = data;

	return ctl_grants_net(&c->grants, host, port, exact);
}

bool sb_control_ask(const struct ar_egress_ask *q, char *reason, size_t size,
		    void *data)
{
	struct sb_control *c = data;

	return ctl_queue_ask_from(&c->q, q->proto, q->host, q->port, q->addr,
				  q->client, reason, size);
}

/* ---- clients ---- */

static void reply(int fd, const struct ar_jbuf *b)
{
	(void)!ar_write_all(fd, b->p, b->len);
}

static void reply_error(int fd, const char *msg)
{
	struct ar_jbuf b = { 0 };

	ctl_proto_error(&b, msg);
	reply(fd, &b);
	ar_jbuf_free(&b);
}

/* The request line, within CTL_CLIENT_TIMEOUT_MS: its length, or -1. */
static ssize_t read_line(int fd, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *nl;
		ssize_t n;

		if (poll(&p, 1, CTL_CLIENT_TIMEOUT_MS) <= 0)
			return -1;
		n = recv(fd, buf + got, size - got, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
		nl = memchr(buf, '\n', got);
		if (nl)
			return nl - buf;
	}
	return -1;
}

static void answer(struct sb_control *c, int fd, const struct ctl_msg *m,
		   const struct ucred *cred)
{
	char host[256], why[512];
	uint16_t port = 0;
	struct ar_jbuf b = { 0 }, diff = { 0 };
	enum ctl_answer a = m->answer;

	if (a == CTL_ANSWER_ALWAYS) {
		struct ar_error err = AR_ERROR_INIT;

		/* the profile first: `always` is `session` once written */
		if (ctl_queue_target(&c->q, m->id, host, sizeof(host), &port,
				     why, sizeof(why)) < 0) {
			reply_error(fd, why);
			return;
		}
		if (ctl_always_write(c->profile, host, port, &diff, &err) < 0) {
			reply_error(fd, err.msg);
			return;
		}
		/* a `session` answer from now on, listed as `always` */
	}
	if (ctl_queue_answer(&c->q, m->id, a, cred->uid, m->iface, host,
			     sizeof(host), &port, why, sizeof(why)) < 0) {
		reply_error(fd, why);
		ar_jbuf_free(&diff);
		return;
	}
	/* who granted or refused what: an audit event */
	ar_audit_begin(&b, "answer");
	ar_jbuf_key(&b, "sandbox");
	ar_jbuf_cstr(&b, c->name);
	ar_jbuf_addf(&b, ",\"id\":\"%llu\"", (unsigned long long)m->id);
	ar_jbuf_key(&b, "answer");
	ar_jbuf_cstr(&b, ctl_answer_name(m->answer));
	ar_jbuf_key(&b, "host");
	ar_jbuf_cstr(&b, host);
	ar_jbuf_addf(&b, ",\"port\":%u,\"uid\":%u,\"pid\":%d", (unsigned)port,
		     (unsigned)cred->uid, (int)cred->pid);
	ar_jbuf_key(&b, "interface");
	ar_jbuf_cstr(&b, m->iface);
	if (m->answer == CTL_ANSWER_ALWAYS) {
		ar_jbuf_key(&b, "profile");
		ar_jbuf_cstr(&b, c->profile);
	}
	emit(c, &b);
	ar_jbuf_lit(&b, "{\"ok\":true");
	if (diff.p) {
		ar_jbuf_key(&b, "diff");
		ar_jbuf_str(&b, diff.p, diff.len);
	}
	ar_jbuf_lit(&b, "}\n");
	reply(fd, &b);
	ar_jbuf_free(&b);
	ar_jbuf_free(&diff);
}

/* allow / revoke (control_grant.h): done, or refused with the reason;
 * either way an audit event naming who asked, through what */
static void grant(struct sb_control *c, int fd, const struct ctl_msg *m,
		  const struct ucred *cred)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_jbuf b = { 0 };
	char done[512] = "";
	int r = ctl_grants_apply(&c->grants, m, done, sizeof(done), &err);

	ar_audit_begin(&b, m->revoke ? "revoke" : "allow");
	ar_jbuf_key(&b, "sandbox");
	ar_jbuf_cstr(&b, c->name);
	ar_jbuf_key(&b, "kind");
	ar_jbuf_cstr(&b, m->kind);
	ar_jbuf_key(&b, "target");
	ar_jbuf_cstr(&b, m->target);
	ar_jbuf_addf(&b, ",\"force\":%s,\"ok\":%s,\"uid\":%u,\"pid\":%d",
		     m->force ? "true" : "false", r == 0 ? "true" : "false",
		     (unsigned)cred->uid, (int)cred->pid);
	ar_jbuf_key(&b, "interface");
	ar_jbuf_cstr(&b, m->iface);
	if (r < 0) {
		ar_jbuf_key(&b, "error");
		ar_jbuf_cstr(&b, err.msg);
	}
	emit(c, &b);
	if (r < 0) {
		reply_error(fd, err.msg);
		return;
	}
	ar_jbuf_lit(&b, "{\"ok\":true,\"done\":");
	ar_jbuf_cstr(&b, done);
	ar_jbuf_lit(&b, "}\n");
	reply(fd, &b);
	ar_jbuf_free(&b);
}

/* Keep fd as a stream client: true when taken. */
static bool subscribe(struct sb_control *c, int fd)
{
	struct ar_jbuf b = { 0 };
	bool taken = false;

	ar_jbuf_lit(&b, "{\"ok\":true,\"sandbox\":");
	ar_jbuf_cstr(&b, c->name);
	ar_jbuf_lit(&b, "}\n");
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < CTL_MAX_SUBS && !taken; i++) {
		if (c->subs[i] >= 0)
			continue;
		/* the greeting before any event, under the lock */
		reply(fd, &b);
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		c->subs[i] = fd;
		atomic_fetch_add(&c->n_subs, 1);
		taken = true;
	}
	pthread_mutex_unlock(&c->lock);
	ar_jbuf_free(&b);
	if (!taken) {
		char msg[128];

		snprintf(msg, sizeof(msg),
			 "%d event streams are open on this sandbox, its limit",
			 CTL_MAX_SUBS);
		reply_error(fd, msg);
	}
	return taken;
}

/* Whether the peer runs in this process's pid namespace: never a
 * process of the sandbox (its own pid namespace, and any it nests),
 * even when the user showed the socket's directory inside (--ro of
 * the state root) and the uid is the same. A peer whose namespace
 * cannot be read is refused, except a uid-0 peer of an unprivileged
 * monitor (root of the host: no sandbox of this user has host uid 0;
 * and root could ptrace the monitor anyway). */
static bool peer_outside(pid_t pid, uid_t uid)
{
	char path[64];
	struct stat mine, theirs;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	if (stat("/proc/self/ns/pid", &mine) < 0)
		return false;
	if (pid <= 0 || stat(path, &theirs) < 0)
		return uid == 0 && geteuid() != 0 && pid > 0 &&
		       (errno == EACCES || errno == EPERM);
	return mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
}

/* One accepted client: checked, its request served. Closes fd unless it
 * became a stream client. */
static void serve(struct sb_control *c, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char line[CTL_LINE_MAX + 1], why[512];
	struct ctl_msg m;
	ssize_t n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		snprintf(
			why, sizeof(why),
			"refused: uid %u is neither this sandbox's user nor root",
			(unsigned)cred.uid);
		reply_error(fd, why);
		close(fd);
		return;
	}
	if (!peer_outside(cred.pid, cred.uid)) {
		snprintf(
			why, sizeof(why),
			"refused: pid %d is not in the pid namespace of the sandbox's monitor (a process of a sandbox never answers)",
			(int)cred.pid);
		reply_error(fd, why);
		close(fd);
		return;
	}
	n = read_line(fd, line, sizeof(line));
	if (n < 0) {
		reply_error(fd, "expected one request line (JSON)");
		close(fd);
		return;
	}
	if (ctl_proto_parse(line, (size_t)n, &m, why, sizeof(why)) < 0) {
		reply_error(fd, why);
		close(fd);
		return;
	}
	if (m.op == CTL_OP_EVENTS) {
		if (!subscribe(c, fd))
			close(fd);
		return;
	}
	if (m.op == CTL_OP_ANSWER) {
		answer(c, fd, &m, &cred);
	} else if (m.op == CTL_OP_GRANT) {
		grant(c, fd, &m, &cred);
	} else if (m.op == CTL_OP_POLICY) {
		struct ar_jbuf b = { 0 };

		ctl_policy_reply(&c->policy, c->name, c->profile, &c->grants,
				 &c->q, &b);
		reply(fd, &b);
		ar_jbuf_free(&b);
	} else {
		struct ar_jbuf b = { 0 };

		ar_jbuf_lit(&b, "{\"ok\":true,\"sandbox\":");
		ar_jbuf_cstr(&b, c->name);
		ar_jbuf_lit(&b, ",\"requests\":");
		ctl_queue_list(&c->q, &b);
		ar_jbuf_lit(&b, "}\n");
		reply(fd, &b);
		ar_jbuf_free(&b);
	}
	close(fd);
}

static void drop_sub(struct sb_control *c, int i)
{
	pthread_mutex_lock(&c->lock);
	close(c->subs[i]);
	c->subs[i] = -1;
	atomic_fetch_sub(&c->n_subs, 1);
	pthread_mutex_unlock(&c->lock);
}

static void *server_main(void *arg)
{
	struct sb_control *c = arg;

	/* named: a watched sandbox's monitor shows it (tests, ps -L) */
	prctl(PR_SET_NAME, "agentrun-ctl", 0, 0, 0);
	for (;;) {
		struct pollfd pfd[2 + CTL_MAX_SUBS];
		bool stopping;

		pthread_mutex_lock(&c->lock);
		stopping = c->stopping;
		for (int i = 0; i < CTL_MAX_SUBS; i++)
			pfd[2 + i] = (struct pollfd){ .fd = c->subs[i],
						      .events = POLLIN };
		pthread_mutex_unlock(&c->lock);
		if (stopping)
			break;
		pfd[0] = (struct pollfd){ .fd = c->wake_fd, .events = POLLIN };
		pfd[1] =
			(struct pollfd){ .fd = c->listen_fd, .events = POLLIN };
		if (poll(pfd, 2 + CTL_MAX_SUBS, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents) {
			uint64_t v;

			(void)!read(c->wake_fd, &v, sizeof(v));
		}
		/* a stream client that sent more, closed or was dropped */
		for (int i = 0; i < CTL_MAX_SUBS; i++)
			if (pfd[2 + i].fd >= 0 && pfd[2 + i].revents)
				drop_sub(c, i);
		if (pfd[1].revents & POLLIN) {
			int fd =
				accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0)
				serve(c, fd);
			else if (errno == EMFILE || errno == ENFILE)
				poll(NULL, 0, 100);
		}
	}
	return NULL;
}

/* ---- start / stop ---- */

static int control_dir(const char *root, const char *dir, struct ar_error *err);
static int control_bind(struct sb_control *c, struct ar_error *err);

/* ar_watch.open: the socket, made by the runtime's thread once the
 * container process was let go (it would only wait for the process's
 * setup). A failure leaves the sandbox without a control plane, said
 * once: a --net ask connection then waits for its timeout and is
 * refused; nothing is granted. */
static int watch_open(void *arg)
{
	struct sb_control *c = arg;
	struct ar_error err = AR_ERROR_INIT;
	long long t0 = now_ns();

	if (!c->served || c->listen_fd >= 0)
		return c->listen_fd;
	if (control_dir(c->root, c->dir, &err) < 0 || control_bind(c, &err) < 0)
		ar_warn("sandbox: no control plane (agentrun sandbox requests/answer): %s",
			err.msg);
	c->ns_bind = now_ns() - t0;
	return c->listen_fd;
}

/* The thread that serves the socket and the stream. */
static int start_thread(struct sb_control *c, struct ar_error *err)
{
	pthread_attr_t attr;
	sigset_t all, old;
	long long t0 = now_ns();
	int e;

	if (c->running)
		return 0;
	c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->wake_fd < 0)
		return ar_error_set(err, errno, "control plane: eventfd");
	/* no signal for this thread: they stay with the one relaying them */
	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, CTL_STACK_BYTES);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&c->thread, &attr, server_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (e != 0)
		return ar_error_set(err, e, "control plane: start its thread");
	c->running = true;
	c->ns_thread = now_ns() - t0;
	return 0;
}

/* ar_watch.ready: the first client knocks; from now on the thread
 * accepts (the runtime stops watching). Without a thread the socket
 * goes: a client is refused rather than left waiting. */
static bool watch_ready(void *arg)
{
	struct sb_control *c = arg;
	struct ar_error err = AR_ERROR_INIT;

	if (start_thread(c, &err) < 0) {
		ar_warn("sandbox: no control plane (agentrun sandbox requests/answer): %s",
			err.msg);
		close(c->listen_fd);
		c->listen_fd = -1;
		unlink(c->path);
	}
	return false;
}

struct ar_watch *sb_control_watch(struct sb_control *c)
{
	return c ? &c->watch : NULL;
}

/* ROOT/.control, 0700, ours (ROOT made when missing). */
static int control_dir(const char *root, const char *dir, struct ar_error *err)
{
	struct stat st;

	int r = mkdir(dir, 0700);

	if (r < 0 && errno == ENOENT) {
		if (ar_mkdir_p(root, 0700) < 0)
			return ar_error_set(err, errno, "create `%s`", root);
		r = mkdir(dir, 0700);
	}
	if (r < 0 && errno != EEXIST)
		return ar_error_set(err, errno, "control plane: create `%s`",
				    dir);
	if (lstat(dir, &st) < 0)
		return ar_error_set(err, errno, "control plane: `%s`", dir);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return ar_error_set_plain(
			err, EPERM,
			"control plane: `%s` is not a directory of uid %u", dir,
			(unsigned)geteuid());
	if ((st.st_mode & 07777) != 0700 && chmod(dir, 0700) < 0)
		return ar_error_set(err, errno, "control plane: chmod `%s`",
				    dir);
	return 0;
}

/* NAME.sock, 0600 from its bind on (the socket's mode set before it:
 * the node takes it), listening. As few calls as it takes: this is
 * paid by every run. */
static int control_bind(struct sb_control *c, struct ar_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int dfd = -1;
	_cleanup_close_ int fd = -1;
	const char *base = strrchr(c->path, '/') + 1;
	int r;

	if (strlen(c->path) < sizeof(sa.sun_path)) {
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", c->path);
	} else {
		/* a long ROOT: through the directory's fd */
		dfd = open(c->dir,
			   O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dfd < 0)
			return ar_error_set(err, errno,
					    "control plane: open `%s`", c->dir);
		snprintf(sa.sun_path, sizeof(sa.sun_path),
			 "/proc/self/fd/%d/%s", dfd, base);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ar_error_set(err, errno, "control plane: socket");
	if (fchmod(fd, 0600) < 0)
		return ar_error_set(err, errno, "control plane: fchmod");
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r < 0 && errno == EADDRINUSE) {
		/* a socket left by a monitor that was killed */
		if (dfd >= 0)
			unlinkat(dfd, base, 0);
		else
			unlink(c->path);
		r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	}
	if (r < 0 || listen(fd, 32) < 0)
		return ar_error_set(err, errno, "control plane: listen on `%s`",
				    c->path);
	c->listen_fd = ar_steal_fd(&fd);
	return 0;
}

int sb_control_start(const char *root, const char *name, int ask_timeout,
		     struct sb_control **out, struct ar_error *err)
{
	struct sb_control *c = ar_xcalloc(1, sizeof(*c));
	long long t0 = now_ns();

	(void)err;
	c->listen_fd = c->wake_fd = -1;
	c->watch = (struct ar_watch){ watch_open, watch_ready, c, -1 };
	for (int i = 0; i < CTL_MAX_SUBS; i++)
		c->subs[i] = -1;
	pthread_mutex_init(&c->lock, NULL);
	c->name = ar_xstrdup(name);
	c->root = ar_xstrdup(root);
	c->dir = ar_xasprintf("%s/.control", root);
	c->path = ar_xasprintf("%s/%s.sock", c->dir, name);
	ctl_queue_init(&c->q, c->name, ask_timeout);
	ctl_grants_init(&c->grants, &c->q);
	c->q.on_request = on_request;
	c->q.on_request_data = c;
	c->ns_start = now_ns() - t0;
	*out = c;
	return 0;
}

int sb_control_serve(struct sb_control *c, struct ar_error *err)
{
	long long t0 = now_ns();

	if (!c || c->served)
		return 0;
	/* the socket: bound by watch_open, its thread at the first client */
	c->served = true;
	if (c->chan) {
		long long t1 = now_ns();

		if (ctl_channel_serve(c->chan, err) < 0)
			return -1;
		c->ns_chan += now_ns() - t1;
	}
	c->ns_serve = now_ns() - t0;
	return 0;
}

void sb_control_close(struct sb_control *c)
{
	if (!c)
		return;
	ctl_queue_close(&c->q);
	/* its counts go to the log while the log is open */
	if (c->chan) {
		long long t0 = now_ns();

		ctl_channel_free(c->chan);
		c->chan = NULL;
		c->ns_chan += now_ns() - t0;
	}
}

void sb_control_free(struct sb_control *c)
{
	uint64_t one = 1;
	long long t0 = now_ns();

	if (!c)
		return;
	ctl_queue_close(&c->q);
	ctl_channel_free(c->chan);
	c->chan = NULL;
	if (c->running) {
		pthread_mutex_lock(&c->lock);
		c->stopping = true;
		pthread_mutex_unlock(&c->lock);
		(void)!write(c->wake_fd, &one, sizeof(one));
		pthread_join(c->thread, NULL);
	}
	if (c->audit)
		ar_audit_set_tee(c->audit, NULL, NULL);
	if (c->listen_fd >= 0) {
		close(c->listen_fd);
		unlink(c->path);
	}
	for (int i = 0; i < CTL_MAX_SUBS; i++)
		if (c->subs[i] >= 0)
			close(c->subs[i]);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	c->ns_free = now_ns() - t0;
	if (c->served)
		ar_debug(
			"control plane `%s`: %.1f us on the runtime's thread (start %.1f, spawn %.1f, socket %.1f, stop %.1f; the socket beside the container's setup); its thread: %s %.1f us; the agent channel %.1f us (open, serve, close)",
			c->name,
			(double)(c->ns_start + c->ns_serve + c->ns_bind +
				 c->ns_free) /
				1e3,
			(double)c->ns_start / 1e3, (double)c->ns_serve / 1e3,
			(double)c->ns_bind / 1e3, (double)c->ns_free / 1e3,
			c->running ? "started at the first client in" :
				     "none (nobody connected),",
			(double)c->ns_thread / 1e3, (double)c->ns_chan / 1e3);
	ctl_queue_release(&c->q);
	ctl_grants_release(&c->grants);
	ctl_policy_release(&c->policy);
	pthread_mutex_destroy(&c->lock);
	free(c->name);
	free(c->root);
	free(c->profile);
	free(c->dir);
	free(c->path);
	free(c);
}
