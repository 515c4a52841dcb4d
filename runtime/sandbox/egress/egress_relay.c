/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The egress proxy's established connections (see egress_proxy.c):
 * relaying both directions with splice, one thread each, and --secret
 * interception (TLS terminated for a host a secret is meant for, a
 * plain-HTTP gateway's request, a placeholder sent elsewhere).
 */
#define _GNU_SOURCE
#include "egress_proxy_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress_gateway.h"
#include "egress_tls.h"
#include "log.h"
#include "utils.h"

/* Bound per direction. Pipes start at the kernel's default (64 KiB) and
 * grow to this once a splice half fills one (a bulk transfer): pipe
 * pages count against the user's pipe-user-pages-soft, shared with the
 * agent's own pipes, so idle and interactive connections keep the
 * default. */
#define RELAY_PIPE_BYTES (1024 * 1024)
/* A relay thread only calls splice and shutdown. */
#define RELAY_STACK_BYTES (128 * 1024)

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
	eg_proxy_unref(p);
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
		eg_slot_put(p);
		return NULL;
	}
	return c;
}

/* The setup thread of `client`, with its upstream `up` connected and a
 * slot taken, goes on as direction 0 and starts a thread for direction
 * 1. Both fds are taken over. */
void eg_relay(struct ar_egress_proxy *p, int client, int up)
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
	eg_emit_event(x->p, &ev);
}

void eg_intercept(struct ar_egress_proxy *p, int client, int up,
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
		eg_emit(p, "tls", host, port, NULL, false, res.reason, false);
	conn_put(c);
}

/* A secret's placeholder in buf going to host:port, which that secret
 * does not list: its event (the diag says it once, at the end). */
void eg_placeholder_check(struct ar_egress_proxy *p, const char *proto,
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
	eg_emit_event(p, &ev);
}

/* A connection to a host loopback service while secrets exist: a
 * plain-HTTP gateway's first request gets its values
 * (egress_gateway.h); any other service's first bytes (read within
 * 100 ms, left in the socket) are checked for a placeholder. */
int eg_forward_secrets(struct ar_egress_proxy *p, int c, int up,
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
		eg_placeholder_check(p, "forward", host, f->to.port, peek,
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
