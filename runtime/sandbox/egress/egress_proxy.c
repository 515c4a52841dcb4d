/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The egress proxy (see egress_proxy.h): HTTP CONNECT, plain HTTP with an
 * absolute URI (filtered by its target and Host header, forwarded in
 * origin form with "Connection: close") and SOCKS5 CONNECT, all on the
 * same socket (a first byte 0x05 is SOCKS5). Every target goes through
 * the policy twice: by name, then by each address the name resolves to.
 */
#define _GNU_SOURCE
#include "egress_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/netfilter_ipv4.h>

#include "egress_dns.h"
#include "egress_gateway.h"
#include "egress_tls.h"
#include "egress_upstream.h"
#include "log.h"
#include "utils.h"

#define AR_EGRESS_MAX_SETUP 64 /* connections being set up at once */
/* Connections with an upstream (dialled or relaying) at once: two
 * threads each while relaying; beyond it a request is refused with a
 * reason (HTTP 503, SOCKS general failure). */
#define AR_EGRESS_MAX_CONNS 256
#define HEAD_MAX 16384 /* request head (HTTP) */
#define SETUP_TIMEOUT_S 30 /* to receive the request, in all */
#define CONNECT_TIMEOUT_MS 10000 /* per address */
/* Bound per direction. Pipes start at the kernel's default (64 KiB) and
 * grow to this once a splice half fills one (a bulk transfer): pipe
 * pages count against the user's pipe-user-pages-soft, shared with the
 * agent's own pipes, so idle and interactive connections keep the
 * default. */
#define RELAY_PIPE_BYTES (1024 * 1024)
/* A relay thread only calls splice and shutdown. */
#define RELAY_STACK_BYTES (128 * 1024)

/* An established connection: fd[0] the client (the sandbox), fd[1] the
 * upstream. Direction d, a thread of its own, moves what fd[d] gives
 * through a pipe into fd[!d] with blocking splices (no copy to user
 * space, no poll: the thread sleeps in the kernel until there is
 * something to move). The last direction to finish closes the fds. */
struct conn {
	struct ar_egress_proxy *p;
	int fd[2];
	int running; /* directions not finished */
	struct conn *prev, *next; /* p->conns */
};

struct ar_egress_proxy {
	int listen_fd;
	int wake_fd; /* eventfd: a finished setup, stop */
	const struct ar_egress_policy *policy; /* borrowed */
	ar_egress_event_fn fn;
	void *data;
	ar_egress_ask_fn ask_fn; /* --net ask, or NULL */
	void *ask_data;
	ar_egress_grant_fn grant_fn; /* sandbox allow --net, or NULL */
	void *grant_data;
	pthread_t thread; /* accepts */
	pthread_mutex_t lock;
	pthread_cond_t idle; /* n_relays or n_emitting reached 0 */
	struct conn *conns; /* relaying */
	int n_relays; /* conns not yet closed and freed */
	int n_emitting; /* threads in fn */
	int n_setup; /* setup threads */
	int n_conns; /* upstreams: dialled or relaying */
	int refs; /* the owner and each setup or relay thread */
	bool stopping;
	/* host loopback services shown inside: appended under lock,
	 * never moved (setups point at them) */
	struct ar_egress_forward fwd[AR_EGRESS_MAX_FORWARDS];
	size_t n_fwd;
	/* transparent egress (ar_egress_proxy_add_transparent) */
	int tcp_fd; /* captured connections, -1 when off */
	int dns_fd[2]; /* the sandbox's resolver (UDP), -1 when absent */
	/* --secret: intercepted hosts (ar_egress_proxy_set_secrets) */
	struct ar_egress_tls *tls;
	const struct ar_egress_secret *secrets;
	size_t n_secrets;
	const struct ar_upstreams *ups; /* the caller's proxy, or NULL */
	char **fake_name; /* pool index -> name (AR_DNS_POOL_SIZE) */
	uint32_t *fake_hash; /* name hash slot -> index + 1 */
	uint32_t n_fake;
};

#define FAKE_HASH_SIZE (2 * AR_DNS_POOL_SIZE)

/* The TLS target of the connection a setup thread set up (CONNECT, or
 * captured): where credential injection may apply. Set by http_setup
 * and transparent_setup, read by setup_main, in the same thread. */
static __thread struct {
	bool tls;
	uint16_t port;
	char host[256];
} tls_target;

/* The agent's connection a setup thread sets up (for --net ask: who
 * asks, ar_egress_ask.client). */
static __thread int setup_client = -1;

static void tls_target_set(const char *host, uint16_t port)
{
	tls_target.tls = true;
	tls_target.port = port;
	snprintf(tls_target.host, sizeof(tls_target.host), "%s", host);
}

/* ---- helpers ---- */

static void wake(struct ar_egress_proxy *p)
{
	uint64_t one = 1;

	if (write(p->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: a wakeup is pending anyway */
	}
}

static void proxy_free(struct ar_egress_proxy *p)
{
	for (size_t i = 0; i < p->n_fwd; i++)
		if (p->fwd[i].listen_fd >= 0)
			close(p->fwd[i].listen_fd);
	if (p->tcp_fd >= 0)
		close(p->tcp_fd);
	for (int i = 0; i < 2; i++)
		if (p->dns_fd[i] >= 0)
			close(p->dns_fd[i]);
	for (uint32_t i = 0; i < p->n_fake; i++)
		free(p->fake_name[i]);
	free(p->fake_name);
	free(p->fake_hash);
	if (p->wake_fd >= 0)
		close(p->wake_fd);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->idle);
	free(p);
}

static void proxy_unref(struct ar_egress_proxy *p)
{
	bool last;

	pthread_mutex_lock(&p->lock);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (last)
		proxy_free(p);
}

static void emit_event(struct ar_egress_proxy *p,
		       const struct ar_egress_event *ev)
{
	bool stopping;

	if (!p->fn)
		return;
	/* never after ar_egress_proxy_stop returned: it waits for calls
	 * under way, later ones (setups finishing) are dropped */
	pthread_mutex_lock(&p->lock);
	stopping = p->stopping;
	if (!stopping)
		p->n_emitting++;
	pthread_mutex_unlock(&p->lock);
	if (stopping)
		return;
	p->fn(ev, p->data);
	pthread_mutex_lock(&p->lock);
	if (--p->n_emitting == 0)
		pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->lock);
}

static void emit(struct ar_egress_proxy *p, const char *proto, const char *host,
		 uint16_t port, const char *addr, bool allowed,
		 const char *reason, bool denied)
{
	struct ar_egress_event ev = { .proto = proto,
				      .host = host,
				      .port = port,
				      .addr = addr,
				      .allowed = allowed,
				      .reason = reason,
				      .denied = denied };

	emit_event(p, &ev);
}

static void placeholder_check(struct ar_egress_proxy *p, const char *proto,
			      const char *host, uint16_t port, const char *buf,
			      size_t len);

void ar_egress_event_stderr(const struct ar_egress_event *ev, void *data)
{
	(void)data;
	if (!ev->allowed && ev->reason) {
		char line[1100];
		int n = snprintf(line, sizeof(line), "%s\n", ev->reason);

		/* one write: lines of concurrent threads do not mix */
		if (n > 0 &&
		    write(STDERR_FILENO, line,
			  (size_t)n < sizeof(line) ? (size_t)n :
						     sizeof(line) - 1) < 0) {
			/* nothing to do about a closed stderr */
		}
	} else if (ev->allowed) {
		ar_debug("egress: %s %s:%u via %s allowed", ev->proto, ev->host,
			 (unsigned)ev->port, ev->addr ? ev->addr : "?");
	}
}

/* The end of the current setup (CLOCK_MONOTONIC ms; 0: none), set by
 * setup_main for its thread: the request head (or SOCKS5 exchange) must
 * be in by then, however it is trickled. */
static __thread long long setup_deadline;

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Before each read of a setup: what is left of SETUP_TIMEOUT_S as the
 * socket's receive timeout (a per-read timeout alone never fires for a
 * client sending a byte a second). -1 with ETIMEDOUT once it is over. */
static int setup_read_budget(int fd)
{
	struct timeval tv;
	long long left;

	if (!setup_deadline)
		return 0;
	left = setup_deadline - mono_ms();
	if (left <= 0) {
		errno = ETIMEDOUT;
		return -1;
	}
	tv.tv_sec = (time_t)(left / 1000);
	tv.tv_usec = (suseconds_t)(left % 1000) * 1000;
	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r;

		if (setup_read_budget(fd) < 0)
			return -1;
		r = read(fd, (char *)buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static void addr_text(const struct sockaddr *sa, char *buf, size_t size)
{
	const void *a =
		sa->sa_family == AF_INET ?
			(const void *)&(
				(const struct sockaddr_in *)(const void *)sa)
				->sin_addr :
			(const void *)&(
				(const struct sockaddr_in6 *)(const void *)sa)
				->sin6_addr;

	if (!inet_ntop(sa->sa_family, a, buf, (socklen_t)size))
		snprintf(buf, size, "?");
}

/* A socket of the proxy whose peer is on a loopback address (the
 * sandbox's end of every connection, a host loopback service) sends
 * with Reno, from the start. Such a hop never leaves the machine: no
 * loss, a round trip of microseconds. The host's default congestion
 * control may be BBR, whose pacing and per-ACK model cost the relay a
 * quarter more CPU per byte there and slow a bulk transfer down when
 * the CPU is contended (docs/performance.md). A socket toward a network
 * keeps the host's choice. Reno is open to every user; when refused,
 * nothing changes. */
static void loopback_tune(int fd)
{
	static const char reno[] = "reno";
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);
	bool lo = false;

	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)&ss;

		lo = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)&ss;
		const uint8_t *a = in6->sin6_addr.s6_addr;

		lo = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
		     (memcmp(a, v4mapped, sizeof(v4mapped)) == 0 &&
		      a[12] == 127);
	}
	if (lo)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, reno,
				 sizeof(reno) - 1);
}

/* Non-blocking connect of fd (a fresh TCP socket, taken over) bounded by
 * CONNECT_TIMEOUT_MS; the blocking socket on success. */
static int connect_fd_timeout(int fd, const struct addrinfo *ai)
{
	struct pollfd pfd;
	int e = 0, r;
	socklen_t len = sizeof(e);

	if (fd < 0)
		return -1;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
		do
			r = poll(&pfd, 1, CONNECT_TIMEOUT_MS);
		while (r < 0 && errno == EINTR);
		if (r == 0)
			e = ETIMEDOUT;
		else if (r < 0 ||
			 getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
			e = errno;
		if (e) {
			close(fd);
			errno = e;
			return -1;
		}
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	loopback_tune(fd);
	return fd;
}

static int connect_timeout(const struct addrinfo *ai)
{
	return connect_fd_timeout(
		socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), ai);
}

enum dial_result {
	DIAL_OK,
	DIAL_DENIED,
	DIAL_NORESOLVE,
	DIAL_FAILED,
	DIAL_BUSY /* AR_EGRESS_MAX_CONNS reached */
};

/* A place among AR_EGRESS_MAX_CONNS for an upstream: taken by dial(),
 * given back when the upstream is closed. */
static bool slot_take(struct ar_egress_proxy *p)
{
	bool ok;

	pthread_mutex_lock(&p->lock);
	ok = p->n_conns < AR_EGRESS_MAX_CONNS;
	if (ok)
		p->n_conns++;
	pthread_mutex_unlock(&p->lock);
	return ok;
}

static void slot_put(struct ar_egress_proxy *p)
{
	pthread_mutex_lock(&p->lock);
	p->n_conns--;
	pthread_mutex_unlock(&p->lock);
}

/* An upstream proxy would take HOST by name when agentrun's resolver
 * does not know it (a split DNS): set, and NO_PROXY does not name it. */
static bool upstream_names(const struct ar_egress_proxy *p, const char *host)
{
	return p->ups && (p->ups->tunnel.host[0] || p->ups->http.host[0]) &&
	       !ar_no_proxy_match(&p->ups->no_proxy, host);
}

/* --net ask (ar_egress_proxy_set_ask): HOST:PORT, not allowed by name,
 * resolved (*res, for dial to use) and asked. DIAL_OK when granted
 * (*exact: the grant is of the address literal HOST); else the refusal,
 * emitted. The setup thread waits outside AR_EGRESS_MAX_SETUP. */
static int ask(struct ar_egress_proxy *p, const char *proto, const char *host,
	       uint16_t port, struct addrinfo **res, bool *exact, char *reason,
	       size_t size)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	char ports[8], addr[INET6_ADDRSTRLEN] = "";
	struct ar_egress_ask q = { .proto = proto,
				   .host = host,
				   .port = port,
				   .client = setup_client };
	uint8_t lit[16];
	bool stopping, granted;
	int r;

	if (!p->ask_fn) {
		ar_egress_deny_reason(reason, size, host, port, AR_ADDR_PUBLIC,
				      NULL);
		emit(p, proto, host, port, NULL, false, reason, true);
		return DIAL_DENIED;
	}
	snprintf(ports, sizeof(ports), "%u", (unsigned)port);
	r = getaddrinfo(host, ports, &hints, res);
	if (r != 0 && !upstream_names(p, host)) {
		*res = NULL;
		snprintf(reason, size, "agentrun: cannot resolve %s: %s", host,
			 r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		emit(p, proto, host, port, NULL, false, reason, false);
		return DIAL_NORESOLVE;
	}
	if (r != 0)
		*res = NULL; /* asked by name: the upstream resolves it */
	for (struct addrinfo *ai = *res; ai && !addr[0]; ai = ai->ai_next)
		if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6)
			addr_text(ai->ai_addr, addr, sizeof(addr));
	q.addr = addr[0] ? addr : NULL;
	/* counted like a call of fn: stop waits for it (the asker makes
	 * it return first); not a setup while it waits */
	pthread_mutex_lock(&p->lock);
	stopping = p->stopping;
	if (!stopping) {
		p->n_emitting++;
		p->n_setup--;
	}
	pthread_mutex_unlock(&p->lock);
	if (stopping) {
		granted = false;
		snprintf(
			reason, size,
			"agentrun: blocked %s:%u \xe2\x80\x94 the sandbox is ending",
			host, (unsigned)port);
	} else {
		wake(p);
		granted = p->ask_fn(&q, reason, size, p->ask_data);
		pthread_mutex_lock(&p->lock);
		p->n_setup++;
		if (--p->n_emitting == 0)
			pthread_cond_broadcast(&p->idle);
		pthread_mutex_unlock(&p->lock);
	}
	if (!granted) {
		if (*res)
			freeaddrinfo(*res);
		*res = NULL;
		emit(p, proto, host, port, q.addr, false, reason, true);
		return DIAL_DENIED;
	}
	*exact = !p->policy->shadow && (inet_pton(AF_INET, host, lit) == 1 ||
					inet_pton(AF_INET6, host, lit) == 1);
	return DIAL_OK;
}

void ar_egress_proxy_set_ask(struct ar_egress_proxy *p, ar_egress_ask_fn fn,
			     void *data)
{
	pthread_mutex_lock(&p->lock);
	p->ask_fn = fn;
	p->ask_data = data;
	pthread_mutex_unlock(&p->lock);
}

void ar_egress_proxy_set_grant(struct ar_egress_proxy *p, ar_egress_grant_fn fn,
			       void *data)
{
	pthread_mutex_lock(&p->lock);
	p->grant_fn = fn;
	p->grant_data = data;
	pthread_mutex_unlock(&p->lock);
}

static bool granted(struct ar_egress_proxy *p, const char *host, uint16_t port,
		    bool *exact)
{
	*exact = false;
	return p->grant_fn && p->grant_fn(host, port, exact, p->grant_data);
}

/* The policy, DNS and the connection for HOST:PORT. `reason` gets the
 * line to show the agent when the result is not DIAL_OK. DIAL_OK takes
 * a slot (slot_put when *out is closed). */
/* The upstream for HOST (plain: a plain HTTP request), or NULL: none
 * set, or NO_PROXY names it. A loopback address goes direct (the
 * host's own service, not one the upstream could reach). */
static const struct ar_upstream *upstream_for(const struct ar_egress_proxy *p,
					      const char *host, bool plain)
{
	const struct ar_upstream *u;

	if (!p->ups)
		return NULL;
	u = plain ? &p->ups->http : &p->ups->tunnel;
	if (!u->host[0] || ar_no_proxy_match(&p->ups->no_proxy, host))
		return NULL;
	return u;
}

static bool ai_loopback(const struct addrinfo *ai)
{
	const void *a =
		ai->ai_family == AF_INET ?
			(const void *)&(
				(const struct sockaddr_in *)(const void *)
					ai->ai_addr)
				->sin_addr :
			(const void *)&(
				(const struct sockaddr_in6 *)(const void *)
					ai->ai_addr)
				->sin6_addr;

	return ar_egress_addr_class(ai->ai_family, a) == AR_ADDR_LOOPBACK;
}

/* Through upstream u: a tunnel to HOST:PORT, or (plain) a connection
 * to the upstream for an absolute-form request. */
static int upstream_dial(const struct ar_upstream *u, bool plain,
			 const char *host, uint16_t port, char *reason,
			 size_t size)
{
	return plain ? ar_upstream_connect(u, CONNECT_TIMEOUT_MS, reason,
					   size) :
		       ar_upstream_tunnel(u, host, port, CONNECT_TIMEOUT_MS,
					  reason, size);
}

static enum dial_result dial_ex(struct ar_egress_proxy *p, const char *proto,
				const char *host, uint16_t port, bool plain,
				bool *proxied, int *out, char *reason,
				size_t size);

static enum dial_result dial(struct ar_egress_proxy *p, const char *proto,
			     const char *host, uint16_t port, int *out,
			     char *reason, size_t size)
{
	return dial_ex(p, proto, host, port, false, NULL, out, reason, size);
}

/* plain: a plain HTTP request, which an upstream takes in absolute form
 * (*proxied set: *out is a connection to the upstream). */
static enum dial_result dial_ex(struct ar_egress_proxy *p, const char *proto,
				const char *host, uint16_t port, bool plain,
				bool *proxied, int *out, char *reason,
				size_t size)
{
	const struct ar_upstream *up = upstream_for(p, host, plain);
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	enum ar_addr_class refused = AR_ADDR_PUBLIC;
	char refused_addr[INET6_ADDRSTRLEN] = "", addr[INET6_ADDRSTRLEN];
	char ports[8];
	int r = 0, e = 0;
	bool exact = false;

	*out = -1;
	if (proxied)
		*proxied = false;
	if (!ar_egress_host_allowed(p->policy, host, port) &&
	    !granted(p, host, port, &exact)) {
		int k = ask(p, proto, host, port, &res, &exact, reason, size);

		if (k != DIAL_OK)
			return (enum dial_result)k;
	}
	if (!slot_take(p)) {
		snprintf(
			reason, size,
			"agentrun: refused %s:%u \xe2\x80\x94 %d connections through the egress proxy are open, its limit; close some and retry",
			host, (unsigned)port, AR_EGRESS_MAX_CONNS);
		if (res)
			freeaddrinfo(res);
		emit(p, proto, host, port, NULL, false, reason, true);
		return DIAL_BUSY;
	}
	snprintf(ports, sizeof(ports), "%u", (unsigned)port);
	if (!res)
		r = getaddrinfo(host, ports, &hints, &res);
	if (r != 0 && up) {
		/* a name only the upstream resolves (a split DNS): allowed
		 * by name above, its addresses are the upstream's to check */
		*out = upstream_dial(up, plain, host, port, reason, size);
		goto through_upstream;
	}
	if (r != 0) {
		snprintf(reason, size, "agentrun: cannot resolve %s: %s", host,
			 r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		slot_put(p);
		emit(p, proto, host, port, NULL, false, reason, false);
		return DIAL_NORESOLVE;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		enum ar_addr_class c;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		addr_text(ai->ai_addr, addr, sizeof(addr));
		c = exact ? AR_ADDR_PUBLIC :
			    ar_egress_addr_check(p->policy, ai->ai_addr);
		if (c != AR_ADDR_PUBLIC) {
			if (refused == AR_ADDR_PUBLIC) {
				refused = c;
				snprintf(refused_addr, sizeof(refused_addr),
					 "%s", addr);
			}
			continue;
		}
		if (up && !ai_loopback(ai)) {
			/* decided: the upstream makes the connection */
			freeaddrinfo(res);
			*out = upstream_dial(up, plain, host, port, reason,
					     size);
			goto through_upstream;
		}
		*out = connect_timeout(ai);
		if (*out >= 0) {
			freeaddrinfo(res);
			emit(p, proto, host, port, addr, true, NULL, false);
			return DIAL_OK;
		}
		e = errno;
		snprintf(refused_addr, sizeof(refused_addr), "%s", addr);
	}
	freeaddrinfo(res);
	slot_put(p);
	if (e) {
		snprintf(reason, size,
			 "agentrun: cannot connect to %s:%u (%s): %s", host,
			 (unsigned)port, refused_addr, strerror(e));
		emit(p, proto, host, port, refused_addr, false, reason, false);
		errno = e;
		return DIAL_FAILED;
	}
	if (refused == AR_ADDR_PUBLIC) {
		snprintf(reason, size,
			 "agentrun: cannot resolve %s: no address", host);
		emit(p, proto, host, port, NULL, false, reason, false);
		return DIAL_NORESOLVE;
	}
	ar_egress_deny_reason(reason, size, host, port, refused, refused_addr);
	emit(p, proto, host, port, refused_addr, false, reason, true);
	return DIAL_DENIED;
through_upstream:
	if (*out < 0) {
		slot_put(p);
		emit(p, proto, host, port, up->shown, false, reason, false);
		errno = ECONNREFUSED;
		return DIAL_FAILED;
	}
	if (proxied)
		*proxied = plain;
	emit(p, proto, host, port, up->shown, true, NULL, false);
	return DIAL_OK;
}

/* ---- HTTP ---- */

/* The reason phrase: STATUS (BODY), BODY in printable ASCII (a client
 * that shows only the status line, as most do for a failed CONNECT,
 * still shows why). */
static void reason_phrase(char *out, size_t size, const char *status,
			  const char *body)
{
	size_t o = (size_t)snprintf(out, size, "%s (", status);

	for (const unsigned char *s = (const unsigned char *)body;
	     *s && o + 2 < size; s++) {
		if (s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0x94) {
			out[o++] = '-'; /* the em dash of the deny lines */
			s += 2;
		} else if (*s >= 0x20 && *s < 0x7f) {
			out[o++] = (char)*s;
		} else if (*s < 0x80 || *s >= 0xc0) {
			out[o++] = '?'; /* one per character */
		}
	}
	out[o++] = ')';
	out[o] = '\0';
}

static void http_reply(int fd, int code, const char *status, const char *body)
{
	char buf[4096], phrase[1200];
	int n;

	reason_phrase(phrase, sizeof(phrase), status, body);
	n = snprintf(buf, sizeof(buf),
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: text/plain; charset=utf-8\r\n"
		     "Content-Length: %zu\r\n"
		     "Connection: close\r\n"
		     "X-Agentrun-Egress: %s\r\n\r\n%s\n",
		     code, phrase, strlen(body) + 1,
		     code == 403 ? "blocked" : "error", body);

	if (n > 0)
		(void)!ar_write_all(fd, buf,
				    (size_t)n < sizeof(buf) ? (size_t)n :
							      sizeof(buf) - 1);
}

static void http_dial_failed(int fd, enum dial_result r, const char *reason)
{
	if (r == DIAL_DENIED)
		http_reply(fd, 403, "Forbidden", reason);
	else if (r == DIAL_BUSY)
		http_reply(fd, 503, "Service Unavailable", reason);
	else
		http_reply(fd, 502, "Bad Gateway", reason);
}

/* Read the request head; returns its length (through "\r\n\r\n"), -1 on
 * errors (a reply was sent when there is anything to say), *len the
 * bytes read (the head and anything after it). */
static ssize_t http_read_head(int fd, char *buf, size_t size, size_t *len)
{
	*len = 0;
	for (;;) {
		char *end;
		ssize_t n;

		buf[*len] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end)
			return end + 4 - buf;
		if (*len + 1 >= size) {
			http_reply(fd, 431, "Request Header Fields Too Large",
				   "agentrun: request head too large");
			return -1;
		}
		if (setup_read_budget(fd) < 0) {
			http_reply(
				fd, 408, "Request Timeout",
				"agentrun: request head not received in time");
			return -1;
		}
		n = read(fd, buf + *len, size - 1 - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			http_reply(
				fd, 408, "Request Timeout",
				"agentrun: request head not received in time");
			return -1;
		}
		if (n <= 0)
			return -1;
		if (memchr(buf + *len, '\0', (size_t)n)) {
			http_reply(fd, 400, "Bad Request",
				   "agentrun: NUL byte in the request head");
			return -1;
		}
		*len += (size_t)n;
	}
}

/* The value of header `name` in the head (lines after the first), or
 * NULL; *vlen its length without surrounding blanks. */
static const char *header_find(const char *head, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);

	for (const char *l = strstr(head, "\r\n"); l && l[2] != '\r';
	     l = strstr(l + 2, "\r\n")) {
		const char *s = l + 2, *e = strstr(s, "\r\n");

		if (e && (size_t)(e - s) > nl && s[nl] == ':' &&
		    strncasecmp(s, name, nl) == 0) {
			s += nl + 1;
			while (s < e && (*s == ' ' || *s == '\t'))
				s++;
			while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			*vlen = (size_t)(e - s);
			return s;
		}
	}
	return NULL;
}

/* More than one header `name`: requests that two hops could read
 * differently (which Host counts?) are refused. */
static bool header_repeated(const char *head, const char *name)
{
	size_t vlen;
	const char *v = header_find(head, name, &vlen);
	const char *next;

	if (!v)
		return false;
	next = strstr(v, "\r\n");
	return next && next[2] != '\r' && header_find(next, name, &vlen);
}

static bool hop_by_hop(const char *line, size_t len)
{
	static const char *const names[] = { "connection", "proxy-connection",
					     "keep-alive",
					     "proxy-authorization", NULL };

	for (const char *const *n = names; *n; n++) {
		size_t nl = strlen(*n);

		if (len > nl && line[nl] == ':' &&
		    strncasecmp(line, *n, nl) == 0)
			return true;
	}
	return false;
}

/* Plain HTTP: check, connect, send the head rewritten to origin form. */
static int http_forward(struct ar_egress_proxy *p, int c, char *buf,
			size_t head_len, size_t len, const char *method,
			const char *target, const char *version, int *up)
{
	char host[256], reason[1024], hhost[256];
	const char *auth, *path, *hv;
	size_t alen, hvlen;
	uint16_t port, hport;
	enum dial_result r;
	char *out;
	const char *pauth;
	size_t olen = 0, cap = head_len + 256;
	bool proxied = false;

	if (strncasecmp(target, "http://", 7) == 0) {
		auth = target + 7;
		alen = strcspn(auth, "/?#");
		path = auth[alen] == '/' ? auth + alen : NULL;
	} else if (target[0] == '/') {
		auth = header_find(buf, "Host", &alen);
		path = target;
		if (!auth) {
			http_reply(
				c, 400, "Bad Request",
				"agentrun: no Host header and no absolute URI");
			return -1;
		}
	} else {
		http_reply(
			c, 400, "Bad Request",
			"agentrun: this proxy takes http:// URIs and CONNECT (https)");
		return -1;
	}
	if (memchr(auth, '@', alen) ||
	    !ar_egress_split_hostport(auth, alen, host, sizeof(host), 80,
				      &port)) {
		http_reply(c, 400, "Bad Request",
			   "agentrun: malformed host in the request target");
		return -1;
	}
	if (header_repeated(buf, "Host")) {
		http_reply(c, 400, "Bad Request",
			   "agentrun: more than one Host header");
		return -1;
	}
	hv = header_find(buf, "Host", &hvlen);
	if (hv && (!ar_egress_split_hostport(hv, hvlen, hhost, sizeof(hhost),
					     80, &hport) ||
		   strcmp(hhost, host) != 0)) {
		char qh[256]; /* the agent's: quoted */

		ar_quote_to(qh, sizeof(qh), hv, hvlen > 200 ? 200 : hvlen);
		snprintf(
			reason, sizeof(reason),
			"agentrun: blocked %s:%u \xe2\x80\x94 the Host header (%s) names another host than the request",
			host, (unsigned)port, qh);
		emit(p, "http", host, port, NULL, false, reason, true);
		http_reply(c, 403, "Forbidden", reason);
		return -1;
	}
	if (strpbrk(target, " \t")) {
		/* "GET /a http://b/ HTTP/1.1": two hops could read two
		 * targets (an upstream proxy takes the first) */
		http_reply(c, 400, "Bad Request",
			   "agentrun: a blank in the request target");
		return -1;
	}
	r = dial_ex(p, "http", host, port, true, &proxied, up, reason,
		    sizeof(reason));
	if (r != DIAL_OK) {
		http_dial_failed(c, r, reason);
		return -1;
	}
	if (p->n_secrets)
		placeholder_check(p, "http", host, port, buf, head_len);
	/* origin form (absolute form to an upstream proxy), hop-by-hop
	 * headers dropped, one request only */
	pauth = proxied && p->ups->http.auth ? p->ups->http.auth : NULL;
	out = ar_xmalloc(cap + 2 * alen + strlen(host) + 64 +
			 (pauth ? strlen(pauth) + 32 : 0));
	/* "http://h?q" has the path "/?q"; a fragment is never sent */
	olen = (size_t)sprintf(
		out, "%s %s%.*s%s%.*s %s\r\n", method, proxied ? "http://" : "",
		proxied ? (int)alen : 0, auth, path ? "" : "/",
		path ? (int)strcspn(path, "#") : (int)strcspn(auth + alen, "#"),
		path ? path : auth + alen, version);
	if (pauth)
		olen += (size_t)sprintf(out + olen,
					"Proxy-Authorization: %s\r\n", pauth);
	if (!hv)
		olen += (size_t)sprintf(out + olen, "Host: %.*s\r\n", (int)alen,
					auth);
	for (const char *l = strstr(buf, "\r\n") + 2; l < buf + head_len - 2;) {
		const char *e = strstr(l, "\r\n");
		size_t ll = (size_t)(e - l);

		if (!hop_by_hop(l, ll)) {
			memcpy(out + olen, l, ll + 2);
			olen += ll + 2;
		}
		l = e + 2;
	}
	olen += (size_t)sprintf(out + olen, "Connection: close\r\n\r\n");
	if (ar_write_all(*up, out, olen) < 0 ||
	    (len > head_len &&
	     ar_write_all(*up, buf + head_len, len - head_len) < 0)) {
		free(out);
		return -1;
	}
	if (pauth)
		explicit_bzero(out, olen);
	free(out);
	return 0;
}

static int http_setup(struct ar_egress_proxy *p, int c, int *up)
{
	_cleanup_free_ char *buf = ar_xmalloc(HEAD_MAX + 1);
	char method[32], version[16], host[256], reason[1024];
	_cleanup_free_ char *target = NULL;
	char *sp1, *sp2, *eol;
	size_t len, tlen;
	ssize_t head_len = http_read_head(c, buf, HEAD_MAX + 1, &len);
	uint16_t port;
	enum dial_result r;

	if (head_len < 0)
		return -1;
	eol = strstr(buf, "\r\n");
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	sp2 = sp1 ? memrchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1 == sp2 ||
	    (size_t)(sp1 - buf) >= sizeof(method) ||
	    (size_t)(eol - sp2 - 1) >= sizeof(version) ||
	    strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		http_reply(c, 400, "Bad Request",
			   "agentrun: malformed request line");
		return -1;
	}
	memcpy(method, buf, (size_t)(sp1 - buf));
	method[sp1 - buf] = '\0';
	memcpy(version, sp2 + 1, (size_t)(eol - sp2 - 1));
	version[eol - sp2 - 1] = '\0';
	tlen = (size_t)(sp2 - sp1 - 1);
	target = ar_xasprintf("%.*s", (int)tlen, sp1 + 1);
	if (strcmp(method, "CONNECT") != 0)
		return http_forward(p, c, buf, (size_t)head_len, len, method,
				    target, version, up);
	if (!ar_egress_split_hostport(target, tlen, host, sizeof(host), 443,
				      &port)) {
		http_reply(c, 400, "Bad Request",
			   "agentrun: CONNECT needs HOST:PORT");
		return -1;
	}
	r = dial(p, "connect", host, port, up, reason, sizeof(reason));
	if (r == DIAL_OK)
		tls_target_set(host, port);
	if (r != DIAL_OK) {
		http_dial_failed(c, r, reason);
		return -1;
	}
	if (ar_write_all(c, "HTTP/1.1 200 Connection established\r\n\r\n", 39) <
		    0 ||
	    (len > (size_t)head_len &&
	     ar_write_all(*up, buf + head_len, len - (size_t)head_len) < 0))
		return -1;
	return 0;
}

/* ---- SOCKS5 (RFC 1928) ---- */

static void socks_reply(int fd, uint8_t code)
{
	uint8_t b[10] = { 5, code, 0, 1 }; /* bound address 0.0.0.0:0 */

	(void)!ar_write_all(fd, b, sizeof(b));
}

static int socks_setup(struct ar_egress_proxy *p, int c, int *up)
{
	uint8_t b[262], hdr[4], pb[2];
	char host[256], reason[1024];
	uint16_t port;
	enum dial_result r;
	bool noauth = false;

	if (read_full(c, b, 2) < 0 || read_full(c, b + 2, b[1]) < 0)
		return -1;
	for (size_t i = 0; i < b[1]; i++)
		noauth |= b[2 + i] == 0;
	if (!noauth) {
		(void)!ar_write_all(c, "\x05\xff", 2);
		return -1;
	}
	if (ar_write_all(c, "\x05\x00", 2) < 0 || read_full(c, hdr, 4) < 0 ||
	    hdr[0] != 5)
		return -1;
	if (hdr[3] == 1 || hdr[3] == 4) {
		size_t n = hdr[3] == 1 ? 4 : 16;

		if (read_full(c, b, n) < 0 ||
		    !inet_ntop(hdr[3] == 1 ? AF_INET : AF_INET6, b, host,
			       sizeof(host)))
			return -1;
	} else if (hdr[3] == 3) {
		if (read_full(c, b, 1) < 0 || read_full(c, b + 1, b[0]) < 0)
			return -1;
		if (!ar_egress_host_normalize((char *)b + 1, b[0], host,
					      sizeof(host))) {
			socks_reply(c, 0x04);
			return -1;
		}
	} else {
		socks_reply(c, 0x08); /* address type not supported */
		return -1;
	}
	if (read_full(c, pb, 2) < 0)
		return -1;
	port = (uint16_t)((pb[0] << 8) | pb[1]);
	if (hdr[1] != 1) {
		socks_reply(c, 0x07); /* only CONNECT */
		return -1;
	}
	if (port == 0) {
		socks_reply(c, 0x02);
		return -1;
	}
	r = dial(p, "socks5", host, port, up, reason, sizeof(reason));
	if (r != DIAL_OK) {
		socks_reply(c, r == DIAL_DENIED	     ? 0x02 :
			       r == DIAL_BUSY	     ? 0x01 :
			       r == DIAL_NORESOLVE   ? 0x04 :
			       errno == ECONNREFUSED ? 0x05 :
			       errno == ETIMEDOUT    ? 0x06 :
						       0x04);
		return -1;
	}
	socks_reply(c, 0x00);
	return 0;
}

/* ---- host loopback forwards ---- */

static int forward_dial(const struct ar_egress_forward *f,
			const struct ar_egress_addr *a, char *text, size_t size)
{
	struct sockaddr_storage ss;
	struct addrinfo ai = { .ai_family = a->family,
			       .ai_socktype = SOCK_STREAM };

	ai.ai_addrlen = ar_egress_sockaddr(a->family, a->addr, a->port, &ss);
	ai.ai_addr = (struct sockaddr *)&ss;
	if (!inet_ntop(a->family, a->addr, text, (socklen_t)size))
		snprintf(text, size, "?");
	if (f->maker) /* inside the sandbox */
		return connect_fd_timeout(
			ar_egress_sockmaker_socket(f->maker, a->family), &ai);
	return connect_timeout(&ai);
}

/* A connection to a forward's socket inside: connect to its host
 * address (or the alternative when that one refuses). Nothing is read
 * first: server-first protocols (SMTP, MySQL, ...) work. */
static int forward_setup(struct ar_egress_proxy *p, int c,
			 const struct ar_egress_forward *f, int *up)
{
	char host[INET6_ADDRSTRLEN], addr[INET6_ADDRSTRLEN], reason[512];
	int e;

	(void)c;
	inet_ntop(f->to.family, f->to.addr, host, sizeof(host));
	if (!slot_take(p)) {
		snprintf(
			reason, sizeof(reason),
			"agentrun: refused %s:%u \xe2\x80\x94 %d connections through the egress proxy are open, its limit; close some and retry",
			host, (unsigned)f->to.port, AR_EGRESS_MAX_CONNS);
		emit(p, "forward", host, f->to.port, NULL, false, reason, true);
		return -1;
	}
	*up = forward_dial(f, &f->to, addr, sizeof(addr));
	if (*up < 0 && errno == ECONNREFUSED && f->alt.family)
		*up = forward_dial(f, &f->alt, addr, sizeof(addr));
	if (*up < 0) {
		e = errno;
		slot_put(p);
		snprintf(reason, sizeof(reason),
			 "agentrun: cannot connect to %s%s%s:%u %s: %s",
			 f->to.family == AF_INET6 ? "[" : "", host,
			 f->to.family == AF_INET6 ? "]" : "",
			 (unsigned)f->to.port,
			 f->maker ? "in the sandbox (--publish)" :
				    "on the host",
			 strerror(e));
		emit(p, f->maker ? "publish" : "forward", host, f->to.port,
		     NULL, false, reason, false);
		return -1;
	}
	emit(p, f->maker ? "publish" : "forward", host, f->to.port, addr, true,
	     NULL, false);
	return 0;
}

int ar_egress_proxy_add_forward(struct ar_egress_proxy *p,
				const struct ar_egress_forward *f,
				struct ar_error *err)
{
	bool full;

	pthread_mutex_lock(&p->lock);
	full = p->n_fwd == AR_EGRESS_MAX_FORWARDS;
	if (!full) {
		p->fwd[p->n_fwd] = *f;
		p->n_fwd++;
	}
	pthread_mutex_unlock(&p->lock);
	if (full) {
		close(f->listen_fd);
		return ar_error_set_plain(
			err, E2BIG,
			"egress proxy: more than %d host loopback services",
			AR_EGRESS_MAX_FORWARDS);
	}
	fcntl(f->listen_fd, F_SETFL, fcntl(f->listen_fd, F_GETFL) | O_NONBLOCK);
	wake(p);
	return 0;
}

/* ---- transparent egress: the sandbox's DNS and captured TCP ---- */

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* The pool address standing for `name` (made at its first query);
 * false when the pool is used up. Under p->lock. */
static bool fake_addr(struct ar_egress_proxy *p, const char *name, uint8_t a[4])
{
	uint32_t slot = name_hash(name) % FAKE_HASH_SIZE;

	for (;; slot = (slot + 1) % FAKE_HASH_SIZE) {
		uint32_t v = p->fake_hash[slot];

		if (v == 0)
			break;
		if (strcmp(p->fake_name[v - 1], name) == 0) {
			ar_dns_pool_addr(v - 1, a);
			return true;
		}
	}
	if (p->n_fake == AR_DNS_POOL_SIZE)
		return false;
	p->fake_name[p->n_fake] = ar_xstrdup(name);
	p->fake_hash[slot] = ++p->n_fake;
	ar_dns_pool_addr(p->n_fake - 1, a);
	return true;
}

/* One query on a DNS socket: answered from the policy, never sent on. */
static void dns_serve(struct ar_egress_proxy *p, int fd)
{
	uint8_t q[512], out[600], a4[4];
	struct sockaddr_storage from;
	socklen_t flen = sizeof(from);
	char name[256], reason[1024];
	uint16_t qtype;
	size_t qend, n;
	ssize_t len;
	int rcode;
	bool allowed, have = false, exact;

	len = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&from, &flen);
	if (len < 12)
		return;
	if (!ar_dns_parse_query(q, (size_t)len, name, &qtype, &qend)) {
		/* the header alone, FORMERR */
		n = ar_dns_reply(q, 12, AR_DNS_FORMERR, NULL, out, sizeof(out));
		if (n) {
			out[4] = out[5] = 0;
			(void)!sendto(fd, out, n, 0, (struct sockaddr *)&from,
				      flen);
		}
		return;
	}
	/* --net ask: every name has a pool address; its connection asks */
	allowed = ar_egress_name_allowed(p->policy, name) || p->ask_fn ||
		  granted(p, name, 0, &exact);
	rcode = allowed ? AR_DNS_NOERROR : AR_DNS_NXDOMAIN;
	if (allowed && qtype == AR_DNS_TYPE_A) {
		pthread_mutex_lock(&p->lock);
		have = fake_addr(p, name, a4);
		pthread_mutex_unlock(&p->lock);
		if (!have)
			rcode = AR_DNS_SERVFAIL;
	}
	n = ar_dns_reply(q, qend, rcode, have ? a4 : NULL, out, sizeof(out));
	if (n)
		(void)!sendto(fd, out, n, 0, (struct sockaddr *)&from, flen);
	if (!allowed && qtype == AR_DNS_TYPE_A) {
		snprintf(
			reason, sizeof(reason),
			"agentrun: blocked %s (DNS) \xe2\x80\x94 not in the allowlist; add --net allow=%s",
			name, name);
		emit(p, "dns", name, 0, NULL, false, reason, true);
	}
}

/* A captured connection: its original destination is a pool address
 * (decided by the name it stands for) or a raw address (decided as
 * one). A refusal resets it; the reason goes to the log. */
static int transparent_setup(struct ar_egress_proxy *p, int c, int *up)
{
	struct sockaddr_in dst;
	socklen_t len = sizeof(dst);
	char host[256], reason[1024];
	uint16_t port;
	long idx;
	enum dial_result r;

	if (getsockopt(c, SOL_IP, SO_ORIGINAL_DST, &dst, &len) < 0 ||
	    dst.sin_family != AF_INET)
		return -1;
	port = ntohs(dst.sin_port);
	idx = ar_dns_pool_index((const uint8_t *)&dst.sin_addr);
	if (idx >= 0) {
		pthread_mutex_lock(&p->lock);
		if ((uint32_t)idx < p->n_fake)
			snprintf(host, sizeof(host), "%s", p->fake_name[idx]);
		else
			host[0] = '\0';
		pthread_mutex_unlock(&p->lock);
		if (!host[0]) {
			inet_ntop(AF_INET, &dst.sin_addr, host, sizeof(host));
			snprintf(
				reason, sizeof(reason),
				"agentrun: blocked %s:%u \xe2\x80\x94 an address of the sandbox's DNS pool that no name was given",
				host, (unsigned)port);
			emit(p, "tcp", host, port, NULL, false, reason, true);
			return -1;
		}
	} else {
		inet_ntop(AF_INET, &dst.sin_addr, host, sizeof(host));
	}
	r = dial(p, "tcp", host, port, up, reason, sizeof(reason));
	if (r == DIAL_OK)
		tls_target_set(host, port);
	return r == DIAL_OK ? 0 : -1;
}

int ar_egress_proxy_add_transparent(struct ar_egress_proxy *p, int tcp_fd,
				    const int dns_fd[2])
{
	pthread_mutex_lock(&p->lock);
	p->fake_name = ar_xcalloc(AR_DNS_POOL_SIZE, sizeof(*p->fake_name));
	p->fake_hash = ar_xcalloc(FAKE_HASH_SIZE, sizeof(*p->fake_hash));
	p->tcp_fd = tcp_fd;
	for (int i = 0; i < 2; i++) {
		p->dns_fd[i] = dns_fd[i];
		if (dns_fd[i] >= 0)
			fcntl(dns_fd[i], F_SETFL,
			      fcntl(dns_fd[i], F_GETFL) | O_NONBLOCK);
	}
	fcntl(tcp_fd, F_SETFL, fcntl(tcp_fd, F_GETFL) | O_NONBLOCK);
	pthread_mutex_unlock(&p->lock);
	wake(p);
	return 0;
}

/* ---- relaying ---- */

/* Grow a pipe to RELAY_PIPE_BYTES; its size (unchanged when over the
 * user's pipe limits). */
static size_t pipe_grow(int wfd, size_t cap)
{
	int sz;

	if (fcntl(wfd, F_SETPIPE_SZ, RELAY_PIPE_BYTES) < 0)
		return cap;
	sz = fcntl(wfd, F_GETPIPE_SZ);
	return sz > 0 && (size_t)sz > cap ? (size_t)sz : cap;
}

/* Direction d of `c` until fd[d] ends (then fd[!d] is shut down for
 * writing: half-close reaches the other side) or breaks (then both
 * sockets are shut down, which ends the other direction too). Each
 * round is one splice in, as much as the socket has queued up to the
 * pipe's size, and splices out until the pipe is empty again. */
static void relay_dir(struct conn *c, int d)
{
	int src = c->fd[d], dst = c->fd[!d], pp[2];
	size_t cap;
	bool grown = false, broken = false, reset = false;

	if (pipe2(pp, O_CLOEXEC) < 0) {
		ar_warn("egress proxy: pipe: %s", strerror(errno));
		shutdown(c->fd[0], SHUT_RDWR);
		shutdown(c->fd[1], SHUT_RDWR);
		return;
	}
	{
		int sz = fcntl(pp[1], F_GETPIPE_SZ);

		cap = sz > 0 ? (size_t)sz : 65536;
	}
	while (!broken) {
		ssize_t n = splice(src, NULL, pp[1], NULL, cap, SPLICE_F_MOVE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			broken = n < 0;
			reset = n < 0 && errno == ECONNRESET;
			break;
		}
		/* half full at once: a bulk transfer, batch more per call */
		if (!grown && (size_t)n >= cap / 2) {
			grown = true;
			cap = pipe_grow(pp[1], cap);
		}
		while (n > 0) {
			ssize_t m = splice(pp[0], NULL, dst, NULL, (size_t)n,
					   SPLICE_F_MOVE);

			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0) {
				broken = true;
				break;
			}
			n -= m;
		}
	}
	close(pp[0]);
	close(pp[1]);
	if (reset) {
		/* a reset goes on as a reset (the close in conn_put sends
		 * it): a FIN would make a cut transfer look complete */
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(dst, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		shutdown(dst, SHUT_RD);
		shutdown(src, SHUT_RDWR);
	} else if (broken) {
		shutdown(c->fd[0], SHUT_RDWR);
		shutdown(c->fd[1], SHUT_RDWR);
	} else {
		shutdown(dst, SHUT_WR);
	}
}

/* A direction finished: the last one closes and frees the connection. */
static void conn_put(struct conn *c)
{
	struct ar_egress_proxy *p = c->p;
	bool last;

	pthread_mutex_lock(&p->lock);
	last = --c->running == 0;
	if (last) {
		if (c->prev)
			c->prev->next = c->next;
		else
			p->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
	}
	pthread_mutex_unlock(&p->lock);
	if (!last)
		return;
	close(c->fd[0]);
	close(c->fd[1]);
	free(c);
	pthread_mutex_lock(&p->lock);
	p->n_conns--;
	if (--p->n_relays == 0)
		pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->lock);
}

static void *relay_main(void *arg)
{
	struct conn *c = arg;
	struct ar_egress_proxy *p = c->p;

	relay_dir(c, 1);
	conn_put(c);
	proxy_unref(p);
	return NULL;
}

/* A connection of client and up listed among the proxy's relays, with
 * `threads` threads to run it (each beyond the caller's holds a proxy
 * reference). NULL when the proxy is stopping: both fds are closed and
 * the slot given back. */
static struct conn *conn_register(struct ar_egress_proxy *p, int client, int up,
				  int threads)
{
	struct conn *c = ar_xcalloc(1, sizeof(*c));
	bool stopping;

	c->p = p;
	c->fd[0] = client;
	c->fd[1] = up;
	c->running = threads;
	pthread_mutex_lock(&p->lock);
	stopping = p->stopping;
	if (!stopping) {
		c->next = p->conns;
		if (c->next)
			c->next->prev = c;
		p->conns = c;
		p->n_relays++;
		p->refs += threads - 1; /* the threads besides the caller's */
	}
	pthread_mutex_unlock(&p->lock);
	if (stopping) {
		close(client);
		close(up);
		free(c);
		slot_put(p);
		return NULL;
	}
	return c;
}

/* The setup thread of `client`, with its upstream `up` connected and a
 * slot taken, goes on as direction 0 and starts a thread for direction
 * 1. Both fds are taken over. */
static void relay(struct ar_egress_proxy *p, int client, int up)
{
	struct conn *c;
	pthread_attr_t attr;
	pthread_t t;
	int e;

	fcntl(client, F_SETFL, fcntl(client, F_GETFL) & ~O_NONBLOCK);
	fcntl(up, F_SETFL, fcntl(up, F_GETFL) & ~O_NONBLOCK);
	c = conn_register(p, client, up, 2);
	if (!c)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, RELAY_STACK_BYTES);
	e = pthread_create(&t, &attr, relay_main, c);
	pthread_attr_destroy(&attr);
	if (e != 0) {
		ar_warn("egress proxy: cannot start a relay thread: %s",
			strerror(e));
		/* direction 1 never runs; direction 0 ends at once */
		shutdown(client, SHUT_RDWR);
		shutdown(up, SHUT_RDWR);
		pthread_mutex_lock(&p->lock);
		c->running--;
		p->refs--; /* not the last: this thread holds one */
		pthread_mutex_unlock(&p->lock);
	}
	relay_dir(c, 0);
	conn_put(c);
}

/* A connection to a host a secret is meant for: TLS terminated and
 * re-opened (egress_tls.h) in this thread; listed among the relays, so
 * that stopping the proxy ends it too. Both fds and the slot are taken
 * over. */
struct intercept_ctx {
	struct ar_egress_proxy *p;
	const char *host;
	uint16_t port;
};

/* A request that gets no secret: its event, before it is sent. */
static void intercept_verdict(const struct ar_egress_tls_outcome *res,
			      void *data)
{
	const struct intercept_ctx *x = data;
	char reason[1024];
	struct ar_egress_event ev = {
		.proto = "tls",
		.host = x->host,
		.port = x->port,
		.reason = reason,
		.denied = res->verdict == AR_SECRET_REFUSE,
		.withheld = true,
		.asked = res->asked[0] ? res->asked : NULL,
	};

	if (res->verdict == AR_SECRET_INJECT)
		return;
	snprintf(
		reason, sizeof(reason),
		"agentrun: %s a request to %s:%u without its --secret value \xe2\x80\x94 %s%s%s",
		ev.denied ? "refused" : "sent", x->host, (unsigned)x->port,
		res->why, res->asked[0] ? ": " : "", res->asked);
	emit_event(x->p, &ev);
}

static void intercept(struct ar_egress_proxy *p, int client, int up,
		      const char *host, uint16_t port)
{
	struct conn *c = conn_register(p, client, up, 1);
	struct intercept_ctx x = { .p = p, .host = host, .port = port };
	struct ar_egress_tls_outcome res = { .on_verdict = intercept_verdict,
					     .data = &x };

	if (!c)
		return;
	ar_egress_tls_relay(p->tls, client, up, host, port, p->secrets,
			    p->n_secrets, &res);
	if (res.reason[0])
		emit(p, "tls", host, port, NULL, false, res.reason, false);
	conn_put(c);
}

void ar_egress_proxy_set_upstream(struct ar_egress_proxy *p,
				  const struct ar_upstreams *ups)
{
	pthread_mutex_lock(&p->lock);
	p->ups = ups;
	pthread_mutex_unlock(&p->lock);
}

/* A secret's placeholder in buf going to host:port, which that secret
 * does not list: its event (the diag says it once, at the end). */
static void placeholder_check(struct ar_egress_proxy *p, const char *proto,
			      const char *host, uint16_t port, const char *buf,
			      size_t len)
{
	const struct ar_egress_secret *x =
		ar_egress_placeholder_in(p->secrets, p->n_secrets, buf, len);
	bool v6 = strchr(host, ':') != NULL;
	char reason[1024];
	struct ar_egress_event ev = { .proto = proto,
				      .host = host,
				      .port = port,
				      .reason = reason,
				      .placeholder_out = true };

	if (!x || ar_egress_host_allowed(&x->hosts, host, port))
		return;
	snprintf(
		reason, sizeof(reason),
		"agentrun: %s's placeholder went to %s%s%s:%u, which its --secret does not list: that host got the placeholder, not the value; to give it the value: --secret %s=%s%s%s%s:%u%s",
		x->name, v6 ? "[" : "", host, v6 ? "]" : "", (unsigned)port,
		x->name, ar_egress_gateway_loopback(host) ? "http://" : "",
		v6 ? "[" : "", host, v6 ? "]" : "", (unsigned)port,
		ar_egress_gateway_loopback(host) ?
			" (a plain-HTTP gateway on the host's loopback)" :
			" (HTTPS only)");
	emit_event(p, &ev);
}

/* A connection to a host loopback service while secrets exist: a
 * plain-HTTP gateway's first request gets its values
 * (egress_gateway.h); any other service's first bytes (read within
 * 100 ms, left in the socket) are checked for a placeholder. */
static int forward_secrets(struct ar_egress_proxy *p, int c, int up,
			   const struct ar_egress_forward *f)
{
	char host[INET6_ADDRSTRLEN], peek[8192];
	struct pollfd pfd = { .fd = c, .events = POLLIN };
	struct intercept_ctx x = { .p = p, .host = host, .port = f->to.port };
	struct ar_egress_tls_outcome res = { .on_verdict = intercept_verdict,
					     .data = &x };
	ssize_t k;

	if (!inet_ntop(f->to.family, f->to.addr, host, sizeof(host)))
		return 0;
	if (ar_egress_gateway_for(p->secrets, p->n_secrets, host, f->to.port))
		return ar_egress_gateway_request(c, up, host, f->to.port,
						 p->secrets, p->n_secrets,
						 &res);
	if (poll(&pfd, 1, 100) != 1)
		return 0;
	k = recv(c, peek, sizeof(peek), MSG_PEEK | MSG_DONTWAIT);
	if (k > 0)
		placeholder_check(p, "forward", host, f->to.port, peek,
				  (size_t)k);
	return 0;
}

void ar_egress_proxy_set_secrets(struct ar_egress_proxy *p,
				 struct ar_egress_tls *tls,
				 const struct ar_egress_secret *s, size_t n)
{
	pthread_mutex_lock(&p->lock);
	p->tls = tls;
	p->secrets = s;
	p->n_secrets = n;
	pthread_mutex_unlock(&p->lock);
}

/* ---- connection setup threads ---- */

struct setup {
	struct ar_egress_proxy *p;
	int fd;
	const struct ar_egress_forward *fwd; /* or NULL: the proxy port */
	bool transparent; /* a captured connection */
};

static void *setup_main(void *arg)
{
	struct setup *s = arg;
	struct ar_egress_proxy *p = s->p;
	int c = s->fd, up = -1, rc;
	struct timeval tv = { .tv_sec = SETUP_TIMEOUT_S };
	const struct ar_egress_forward *fwd = s->fwd;
	bool transparent = s->transparent;
	uint8_t first;

	free(s);
	tls_target.tls = false;
	setup_client = c;
	setup_deadline = mono_ms() + SETUP_TIMEOUT_S * 1000LL;
	loopback_tune(c);
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (fwd)
		rc = forward_setup(p, c, fwd, &up);
	else if (transparent)
		rc = transparent_setup(p, c, &up);
	else if (recv(c, &first, 1, MSG_PEEK) == 1)
		rc = first == 5 ? socks_setup(p, c, &up) :
				  http_setup(p, c, &up);
	else
		rc = -1;
	setup_deadline = 0;
	/* no longer a setup: the accept thread may take another one */
	pthread_mutex_lock(&p->lock);
	p->n_setup--;
	pthread_mutex_unlock(&p->lock);
	wake(p);
	if (rc == 0 && fwd && !fwd->maker && p->n_secrets)
		rc = forward_secrets(p, c, up, fwd);
	if (rc == 0) {
		tv.tv_sec = 0;
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (tls_target.tls && p->n_secrets &&
		    ar_egress_secrets_for(p->secrets, p->n_secrets,
					  tls_target.host, tls_target.port))
			intercept(p, c, up, tls_target.host, tls_target.port);
		else
			relay(p, c, up);
	} else {
		if (fwd || transparent) {
			/* a reset, as close to "refused" as it gets */
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };

			setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		}
		close(c);
		if (up >= 0) {
			close(up);
			slot_put(p);
		}
	}
	proxy_unref(p);
	return NULL;
}

static void start_setup(struct ar_egress_proxy *p, int c,
			const struct ar_egress_forward *fwd, bool transparent)
{
	struct setup *s = ar_xmalloc(sizeof(*s));
	pthread_attr_t attr;
	pthread_t t;

	s->p = p;
	s->fd = c;
	s->fwd = fwd;
	s->transparent = transparent;
	pthread_mutex_lock(&p->lock);
	p->n_setup++;
	p->refs++;
	pthread_mutex_unlock(&p->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 1024 * 1024); /* NSS modules */
	if (pthread_create(&t, &attr, setup_main, s) != 0) {
		close(c);
		free(s);
		pthread_mutex_lock(&p->lock);
		p->n_setup--;
		p->refs--;
		pthread_mutex_unlock(&p->lock);
	}
	pthread_attr_destroy(&attr);
}

/* ---- the accept thread ---- */

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 8192 &&
	    rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < 8192 ? rl.rlim_max : 8192;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void *accept_main(void *arg)
{
	struct ar_egress_proxy *p = arg;

	for (;;) {
		struct pollfd pfd[5 + AR_EGRESS_MAX_FORWARDS];
		int tcp_fd, dns_fd[2];
		bool stopping, accepting;
		size_t n_fwd;

		pthread_mutex_lock(&p->lock);
		stopping = p->stopping;
		accepting = p->n_setup < AR_EGRESS_MAX_SETUP;
		n_fwd = p->n_fwd;
		tcp_fd = p->tcp_fd;
		dns_fd[0] = p->dns_fd[0];
		dns_fd[1] = p->dns_fd[1];
		pthread_mutex_unlock(&p->lock);
		if (stopping)
			break;
		pfd[0] = (struct pollfd){ .fd = p->wake_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = accepting ? p->listen_fd : -1,
					  .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = accepting ? tcp_fd : -1,
					  .events = POLLIN };
		pfd[3] = (struct pollfd){ .fd = dns_fd[0], .events = POLLIN };
		pfd[4] = (struct pollfd){ .fd = dns_fd[1], .events = POLLIN };
		for (size_t i = 0; i < n_fwd; i++)
			pfd[5 + i] = (struct pollfd){
				.fd = accepting ? p->fwd[i].listen_fd : -1,
				.events = POLLIN
			};
		if (poll(pfd, 5 + n_fwd, -1) < 0) {
			if (errno == EINTR)
				continue;
			ar_warn("egress proxy: poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents) {
			uint64_t v;

			(void)!read(p->wake_fd, &v, sizeof(v));
		}
		for (int k = 3; k < 5; k++)
			if (pfd[k].revents & POLLIN)
				dns_serve(p, pfd[k].fd);
		for (size_t i = 1; i < 5 + n_fwd; i++) {
			int c;

			if (i == 3 || i == 4 || !(pfd[i].revents & POLLIN))
				continue;
			c = accept4(pfd[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				start_setup(p, c,
					    i >= 5 ? &p->fwd[i - 5] : NULL,
					    i == 2);
			} else if (errno == EMFILE || errno == ENFILE ||
				   errno == ENOBUFS || errno == ENOMEM) {
				/* the pending connection stays readable:
				 * do not spin on it */
				ar_warn("egress proxy: accept: %s",
					strerror(errno));
				poll(NULL, 0, 100);
			}
		}
	}
	return NULL;
}

/* ---- start / stop ---- */

int ar_egress_proxy_start(int listen_fd, const struct ar_egress_policy *policy,
			  ar_egress_event_fn fn, void *data,
			  struct ar_egress_proxy **out, struct ar_error *err)
{
	struct ar_egress_proxy *p = ar_xcalloc(1, sizeof(*p));
	sigset_t all, old;
	int e;

	*out = NULL;
	p->listen_fd = listen_fd;
	p->policy = policy;
	p->fn = fn;
	p->data = data;
	p->refs = 1;
	p->tcp_fd = p->dns_fd[0] = p->dns_fd[1] = -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->idle, NULL);
	p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->wake_fd < 0) {
		e = errno;
		close(listen_fd);
		proxy_free(p);
		return ar_error_set(err, e, "egress proxy: eventfd");
	}
	fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
	raise_nofile();
	/* the proxy's threads (and the ones they start) take no signals:
	 * signals stay with the thread that forwards them to the sandbox,
	 * and a SIGPIPE of a splice into a closed socket stays with the
	 * thread that got it (the splice fails with EPIPE) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&p->thread, NULL, accept_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		close(listen_fd);
		proxy_free(p);
		return ar_error_set(err, e, "egress proxy: start its thread");
	}
	*out = p;
	return 0;
}

void ar_egress_proxy_stop(struct ar_egress_proxy *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_mutex_unlock(&p->lock);
	wake(p);
	pthread_join(p->thread, NULL);
	close(p->listen_fd);
	p->listen_fd = -1;
	/* end every relay (a shut down socket wakes its splices) and wait
	 * until they are closed, and for calls of fn under way; setups
	 * still under way close theirs when they see `stopping` */
	pthread_mutex_lock(&p->lock);
	for (struct conn *c = p->conns; c; c = c->next) {
		shutdown(c->fd[0], SHUT_RDWR);
		shutdown(c->fd[1], SHUT_RDWR);
	}
	while (p->n_relays > 0 || p->n_emitting > 0)
		pthread_cond_wait(&p->idle, &p->lock);
	pthread_mutex_unlock(&p->lock);
	proxy_unref(p);
}
