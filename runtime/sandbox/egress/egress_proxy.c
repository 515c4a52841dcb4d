/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The egress proxy (see egress_proxy.h): HTTP CONNECT, plain HTTP with an
 * absolute URI (filtered by its target and Host header, forwarded in
 * origin form with "Connection: close") and SOCKS5 CONNECT, all on the
 * same socket (a first byte 0x05 is SOCKS5). Every target goes through
 * the policy twice: by name, then by each address the name resolves to.
 * This file owns the proxy's lifecycle (start, stop), the accept thread
 * and the setup threads that dispatch each connection, host loopback
 * forwards and transparent egress (the sandbox's DNS, captured TCP).
 * The front ends are in egress_http.c, relaying and --secret
 * interception in egress_relay.c, events and dialling (policy, --net
 * ask, upstream proxies) in egress_dial.c.
 */
#define _GNU_SOURCE
#include "egress_proxy.h"
#include "egress_proxy_internal.h"

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
#define SETUP_TIMEOUT_S 30 /* to receive the request, in all */

#define FAKE_HASH_SIZE (2 * AR_DNS_POOL_SIZE)

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
		return eg_connect_fd_timeout(
			ar_egress_sockmaker_socket(f->maker, a->family), &ai);
	return eg_connect_timeout(&ai);
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
	if (!eg_slot_take(p)) {
		snprintf(
			reason, sizeof(reason),
			"agentrun: refused %s:%u \xe2\x80\x94 %d connections through the egress proxy are open, its limit; close some and retry",
			host, (unsigned)f->to.port, AR_EGRESS_MAX_CONNS);
		eg_emit(p, "forward", host, f->to.port, NULL, false, reason,
			true);
		return -1;
	}
	*up = forward_dial(f, &f->to, addr, sizeof(addr));
	if (*up < 0 && errno == ECONNREFUSED && f->alt.family)
		*up = forward_dial(f, &f->alt, addr, sizeof(addr));
	if (*up < 0) {
		e = errno;
		eg_slot_put(p);
		snprintf(reason, sizeof(reason),
			 "agentrun: cannot connect to %s%s%s:%u %s: %s",
			 f->to.family == AF_INET6 ? "[" : "", host,
			 f->to.family == AF_INET6 ? "]" : "",
			 (unsigned)f->to.port,
			 f->maker ? "in the sandbox (--publish)" :
				    "on the host",
			 strerror(e));
		eg_emit(p, f->maker ? "publish" : "forward", host, f->to.port,
			NULL, false, reason, false);
		return -1;
	}
	eg_emit(p, f->maker ? "publish" : "forward", host, f->to.port, addr,
		true, NULL, false);
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
	eg_wake(p);
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
		  eg_granted(p, name, 0, &exact);
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
		eg_emit(p, "dns", name, 0, NULL, false, reason, true);
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
			eg_emit(p, "tcp", host, port, NULL, false, reason,
				true);
			return -1;
		}
	} else {
		inet_ntop(AF_INET, &dst.sin_addr, host, sizeof(host));
	}
	r = eg_dial(p, "tcp", host, port, up, reason, sizeof(reason));
	if (r == DIAL_OK)
		eg_tls_target_set(host, port);
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
	eg_wake(p);
	return 0;
}

void ar_egress_proxy_set_upstream(struct ar_egress_proxy *p,
				  const struct ar_upstreams *ups)
{
	pthread_mutex_lock(&p->lock);
	p->ups = ups;
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
	eg_tls_target.tls = false;
	eg_setup_client = c;
	eg_setup_deadline = eg_mono_ms() + SETUP_TIMEOUT_S * 1000LL;
	eg_loopback_tune(c);
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (fwd)
		rc = forward_setup(p, c, fwd, &up);
	else if (transparent)
		rc = transparent_setup(p, c, &up);
	else if (recv(c, &first, 1, MSG_PEEK) == 1)
		rc = first == 5 ? eg_socks_setup(p, c, &up) :
				  eg_http_setup(p, c, &up);
	else
		rc = -1;
	eg_setup_deadline = 0;
	/* no longer a setup: the accept thread may take another one */
	pthread_mutex_lock(&p->lock);
	p->n_setup--;
	pthread_mutex_unlock(&p->lock);
	eg_wake(p);
	if (rc == 0 && fwd && !fwd->maker && p->n_secrets)
		rc = eg_forward_secrets(p, c, up, fwd);
	if (rc == 0) {
		tv.tv_sec = 0;
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (eg_tls_target.tls && p->n_secrets &&
		    ar_egress_secrets_for(p->secrets, p->n_secrets,
					  eg_tls_target.host,
					  eg_tls_target.port))
			eg_intercept(p, c, up, eg_tls_target.host,
				     eg_tls_target.port);
		else
			eg_relay(p, c, up);
	} else {
		if (fwd || transparent) {
			/* a reset, as close to "refused" as it gets */
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };

			setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		}
		close(c);
		if (up >= 0) {
			close(up);
			eg_slot_put(p);
		}
	}
	eg_proxy_unref(p);
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
		eg_proxy_free(p);
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
		eg_proxy_free(p);
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
	eg_wake(p);
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
	eg_proxy_unref(p);
}
