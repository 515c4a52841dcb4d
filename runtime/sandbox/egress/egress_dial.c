/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every part of the egress proxy (see egress_proxy.c) uses: its
 * references and events, a setup thread's state (its read budget, its
 * client, its TLS target), and dialling: the policy by name then by
 * each address, --net ask and grants, the caller's upstream proxy, a
 * bounded connect, the AR_EGRESS_MAX_CONNS slots.
 */
#define _GNU_SOURCE
#include "egress_proxy_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "egress_tls.h"
#include "egress_upstream.h"
#include "log.h"
#include "utils.h"

#define CONNECT_TIMEOUT_MS 10000 /* per address */

/* The TLS target of the connection a setup thread set up (CONNECT, or
 * captured): where credential injection may apply. Set by eg_http_setup
 * and transparent_setup, read by setup_main, in the same thread
 * (egress_proxy.c). */
__thread struct eg_tls_target eg_tls_target;

/* The agent's connection a setup thread sets up (for --net ask: who
 * asks, ar_egress_ask.client). */
__thread int eg_setup_client = -1;

void eg_tls_target_set(const char *host, uint16_t port)
{
	eg_tls_target.tls = true;
	eg_tls_target.port = port;
	snprintf(eg_tls_target.host, sizeof(eg_tls_target.host), "%s", host);
}

/* ---- helpers ---- */

void eg_wake(struct ar_egress_proxy *p)
{
	uint64_t one = 1;

	if (write(p->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: a wakeup is pending anyway */
	}
}

void eg_proxy_free(struct ar_egress_proxy *p)
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

void eg_proxy_unref(struct ar_egress_proxy *p)
{
	bool last;

	pthread_mutex_lock(&p->lock);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (last)
		eg_proxy_free(p);
}

void eg_emit_event(struct ar_egress_proxy *p, const struct ar_egress_event *ev)
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

void eg_emit(struct ar_egress_proxy *p, const char *proto, const char *host,
	     uint16_t port, const char *addr, bool allowed, const char *reason,
	     bool denied)
{
	struct ar_egress_event ev = { .proto = proto,
				      .host = host,
				      .port = port,
				      .addr = addr,
				      .allowed = allowed,
				      .reason = reason,
				      .denied = denied };

	eg_emit_event(p, &ev);
}

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
__thread long long eg_setup_deadline;

long long eg_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Before each read of a setup: what is left of SETUP_TIMEOUT_S as the
 * socket's receive timeout (a per-read timeout alone never fires for a
 * client sending a byte a second). -1 with ETIMEDOUT once it is over. */
int eg_setup_read_budget(int fd)
{
	struct timeval tv;
	long long left;

	if (!eg_setup_deadline)
		return 0;
	left = eg_setup_deadline - eg_mono_ms();
	if (left <= 0) {
		errno = ETIMEDOUT;
		return -1;
	}
	tv.tv_sec = (time_t)(left / 1000);
	tv.tv_usec = (suseconds_t)(left % 1000) * 1000;
	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

int eg_read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r;

		if (eg_setup_read_budget(fd) < 0)
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
void eg_loopback_tune(int fd)
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
int eg_connect_fd_timeout(int fd, const struct addrinfo *ai)
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
	eg_loopback_tune(fd);
	return fd;
}

int eg_connect_timeout(const struct addrinfo *ai)
{
	return eg_connect_fd_timeout(
		socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), ai);
}

/* A place among AR_EGRESS_MAX_CONNS for an upstream: taken by eg_dial(),
 * given back when the upstream is closed. */
bool eg_slot_take(struct ar_egress_proxy *p)
{
	bool ok;

	pthread_mutex_lock(&p->lock);
	ok = p->n_conns < AR_EGRESS_MAX_CONNS;
	if (ok)
		p->n_conns++;
	pthread_mutex_unlock(&p->lock);
	return ok;
}

void eg_slot_put(struct ar_egress_proxy *p)
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
				   .client = eg_setup_client };
	uint8_t lit[16];
	bool stopping, granted;
	int r;

	if (!p->ask_fn) {
		ar_egress_deny_reason(reason, size, host, port, AR_ADDR_PUBLIC,
				      NULL);
		eg_emit(p, proto, host, port, NULL, false, reason, true);
		return DIAL_DENIED;
	}
	snprintf(ports, sizeof(ports), "%u", (unsigned)port);
	r = getaddrinfo(host, ports, &hints, res);
	if (r != 0 && !upstream_names(p, host)) {
		*res = NULL;
		snprintf(reason, size, "agentrun: cannot resolve %s: %s", host,
			 r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		eg_emit(p, proto, host, port, NULL, false, reason, false);
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
		eg_wake(p);
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
		eg_emit(p, proto, host, port, q.addr, false, reason, true);
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

bool eg_granted(struct ar_egress_proxy *p, const char *host, uint16_t port,
		bool *exact)
{
	*exact = false;
	return p->grant_fn && p->grant_fn(host, port, exact, p->grant_data);
}

/* The policy, DNS and the connection for HOST:PORT. `reason` gets the
 * line to show the agent when the result is not DIAL_OK. DIAL_OK takes
 * a slot (eg_slot_put when *out is closed). */
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

enum dial_result eg_dial(struct ar_egress_proxy *p, const char *proto,
			 const char *host, uint16_t port, int *out,
			 char *reason, size_t size)
{
	return eg_dial_ex(p, proto, host, port, false, NULL, out, reason, size);
}

/* plain: a plain HTTP request, which an upstream takes in absolute form
 * (*proxied set: *out is a connection to the upstream). */
enum dial_result eg_dial_ex(struct ar_egress_proxy *p, const char *proto,
			    const char *host, uint16_t port, bool plain,
			    bool *proxied, int *out, char *reason, size_t size)
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
	    !eg_granted(p, host, port, &exact)) {
		int k = ask(p, proto, host, port, &res, &exact, reason, size);

		if (k != DIAL_OK)
			return (enum dial_result)k;
	}
	if (!eg_slot_take(p)) {
		snprintf(
			reason, size,
			"agentrun: refused %s:%u \xe2\x80\x94 %d connections through the egress proxy are open, its limit; close some and retry",
			host, (unsigned)port, AR_EGRESS_MAX_CONNS);
		if (res)
			freeaddrinfo(res);
		eg_emit(p, proto, host, port, NULL, false, reason, true);
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
		eg_slot_put(p);
		eg_emit(p, proto, host, port, NULL, false, reason, false);
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
		*out = eg_connect_timeout(ai);
		if (*out >= 0) {
			freeaddrinfo(res);
			eg_emit(p, proto, host, port, addr, true, NULL, false);
			return DIAL_OK;
		}
		e = errno;
		snprintf(refused_addr, sizeof(refused_addr), "%s", addr);
	}
	freeaddrinfo(res);
	eg_slot_put(p);
	if (e) {
		snprintf(reason, size,
			 "agentrun: cannot connect to %s:%u (%s): %s", host,
			 (unsigned)port, refused_addr, strerror(e));
		eg_emit(p, proto, host, port, refused_addr, false, reason,
			false);
		errno = e;
		return DIAL_FAILED;
	}
	if (refused == AR_ADDR_PUBLIC) {
		snprintf(reason, size,
			 "agentrun: cannot resolve %s: no address", host);
		eg_emit(p, proto, host, port, NULL, false, reason, false);
		return DIAL_NORESOLVE;
	}
	ar_egress_deny_reason(reason, size, host, port, refused, refused_addr);
	eg_emit(p, proto, host, port, refused_addr, false, reason, true);
	return DIAL_DENIED;
through_upstream:
	if (*out < 0) {
		eg_slot_put(p);
		eg_emit(p, proto, host, port, up->shown, false, reason, false);
		errno = ECONNREFUSED;
		return DIAL_FAILED;
	}
	if (proxied)
		*proxied = plain;
	eg_emit(p, proto, host, port, up->shown, true, NULL, false);
	return DIAL_OK;
}
