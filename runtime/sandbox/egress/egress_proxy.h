/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox's egress proxy: HTTP (CONNECT and absolute-URI requests)
 * and SOCKS5 (CONNECT; IPv4, IPv6 and domain addresses) on one
 * listening socket, deciding every connection with egress_policy.h.
 *
 * It runs in agentrun's own process (the one that waits for the
 * sandbox), outside the sandbox: the listening socket is created inside
 * the sandbox's network namespace (ar_egress_listen_in) and accepted
 * here, so the agent talks to 127.0.0.1:PORT and nothing of the agent's
 * runs the proxy. Names are resolved here (getaddrinfo), never inside.
 *
 * Threads: one accepts; each connection gets one that sets it up
 * (request parsing, DNS, connect; at most AR_EGRESS_MAX_SETUP at once)
 * and then relays client -> upstream, and one more for upstream ->
 * client: blocking splice through a bounded pipe per direction, end of
 * file passed on as shutdown(SHUT_WR). At most AR_EGRESS_MAX_CONNS
 * connections with an upstream at once; more are refused with a reason.
 */
#ifndef AGENTRUN_EGRESS_PROXY_H
#define AGENTRUN_EGRESS_PROXY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "egress_policy.h"
#include "error.h"

/* The proxy's port on the sandbox's loopback. */
#define AR_EGRESS_PORT 3128
/* Where the sandbox's nftables rule sends every other TCP connection
 * (transparent egress), on the sandbox's loopback. */
#define AR_EGRESS_CAPTURE_PORT 3129

/* One decision, for the deny line on stderr and for an audit writer.
 * Called from the proxy's threads (concurrently): keep it thread-safe. */
struct ar_egress_event {
	const char *proto; /* "http", "connect" (HTTP CONNECT), "socks5" */
	const char *host; /* as requested, normalised */
	uint16_t port;
	const char *addr; /* the address connected to or refused, or NULL */
	bool allowed; /* the connection was made */
	const char *reason; /* refused: the deny line; failed: why */
	bool denied; /* refused by the policy or a limit (not a failure) */
	/* --secret: a request on an intercepted connection to host:port
	 * that named another host (or was malformed): its secrets were
	 * withheld (or it was refused: denied). `asked` is what it named,
	 * quoted (ar_quote_to: the agent's); `reason` the line to log. The
	 * connection itself was allowed before (its own event). */
	bool withheld;
	const char *asked;
	/* --secret: a request carried a secret's placeholder to host:port,
	 * which that secret does not list (`reason`: the line naming the
	 * variable, the host and the option) */
	bool placeholder_out;
};
typedef void (*ar_egress_event_fn)(const struct ar_egress_event *ev,
				   void *data);

struct ar_egress_proxy;
struct ar_egress_sockmaker;

/* Start serving `listen_fd` (taken over) with `policy` (borrowed: it
 * outlives the proxy). `fn` (may be NULL) sees every decision. */
int ar_egress_proxy_start(int listen_fd, const struct ar_egress_policy *policy,
			  ar_egress_event_fn fn, void *data,
			  struct ar_egress_proxy **out, struct ar_error *err);
/* Stop accepting, close every connection, free. NULL is fine. Once it
 * returns, `fn` is not called any more (connections still being set up
 * finish silently). */
void ar_egress_proxy_stop(struct ar_egress_proxy *p);

/* An address to listen on inside the sandbox (network order; IPv4 in
 * the first 4 bytes). optional: skipped (fd -1) when the namespace has
 * no such address (::1 without IPv6). */
struct ar_egress_addr {
	int family;
	uint8_t addr[16];
	uint16_t port;
	bool optional;
	bool udp; /* a UDP socket (bound, no listen) */
};

/* TCP sockets listening on addrs[i] inside the network namespace of
 * process `pid` (through its user namespace, which owns it), lo brought
 * up: fds[i]. A short-lived child joins the namespaces and passes the
 * sockets back; the caller's own namespaces never change. capture_port
 * (0: none): first set up transparent capture to 127.0.0.1:capture_port
 * there (ar_egress_capture_setup). */
int ar_egress_listen_in(pid_t pid, const struct ar_egress_addr *addrs, size_t n,
			uint16_t capture_port, int *fds, struct ar_error *err);
/* A helper process in the network namespace of `pid` (joined through
 * its user namespace) that makes unconnected TCP sockets there: a
 * socket keeps the namespace it was made in, so agentrun connects it
 * from outside. Thread-safe; stop closes its channel and reaps it. */
int ar_egress_sockmaker_start(pid_t pid, struct ar_egress_sockmaker **out,
			      struct ar_error *err);
/* A blocking TCP socket of `family` in the namespace, or -1 (errno). */
int ar_egress_sockmaker_socket(struct ar_egress_sockmaker *m, int family);
void ar_egress_sockmaker_stop(struct ar_egress_sockmaker *m);

/* In the sandbox's network namespace: a default route on lo and an
 * nftables rule redirecting every TCP connection to a non-loopback
 * address to 127.0.0.1:port (egress_capture.c). */
int ar_egress_capture_setup(uint16_t port, struct ar_error *err);
/* family/addr/port as a sockaddr; its length. */
socklen_t ar_egress_sockaddr(int family, const uint8_t *addr, uint16_t port,
			     struct sockaddr_storage *ss);

/* A host loopback service shown inside the sandbox at the same address
 * (--net allow=127.0.0.1:PORT, [::1]:PORT, localhost:PORT): connections
 * accepted on listen_fd (a socket inside) are relayed, without looking
 * at what they carry, to `to` on the host, else to `alt` (the other
 * loopback family of a localhost:PORT rule) when that one refuses. */
struct ar_egress_forward {
	int listen_fd;
	struct ar_egress_addr to;
	struct ar_egress_addr alt; /* family 0: none */
	/* --publish: listen_fd is on the host, `to` inside the sandbox,
	 * reached with sockets this helper makes there; NULL otherwise */
	struct ar_egress_sockmaker *maker;
};
#define AR_EGRESS_MAX_FORWARDS 64

/* Serve `f` too (listen_fd taken over). Any time after start. */
int ar_egress_proxy_add_forward(struct ar_egress_proxy *p,
				const struct ar_egress_forward *f,
				struct ar_error *err);

/* Transparent egress: serve connections the sandbox's nftables rule
 * captured (tcp_fd, ar_egress_capture_setup) and the sandbox's DNS
 * (dns_fd: UDP sockets on 127.0.0.1:53 and [::1]:53 inside, -1 when
 * absent; egress_dns.h). The fds are taken over. */
int ar_egress_proxy_add_transparent(struct ar_egress_proxy *p, int tcp_fd,
				    const int dns_fd[2]);

/* --secret: intercept HTTPS to the hosts of these secrets with tls
 * (egress_tls.h); both stay the caller's and must outlive the proxy.
 * Before the first connection. */
struct ar_egress_tls;
struct ar_egress_secret;
struct ar_upstreams;
/* The caller's proxy for the proxy's own dials (egress_upstream.h):
 * borrowed, outlives the proxy. Before the first connection. */
void ar_egress_proxy_set_upstream(struct ar_egress_proxy *p,
				  const struct ar_upstreams *ups);
void ar_egress_proxy_set_secrets(struct ar_egress_proxy *p,
				 struct ar_egress_tls *tls,
				 const struct ar_egress_secret *s, size_t n);

/* --net ask: a connection whose host the policy does not allow by name
 * asks `fn` (the control plane, control/control.h), which may block
 * until the user answers. Called from the connection's setup thread,
 * which meanwhile does not count among the AR_EGRESS_MAX_SETUP (the
 * proxy goes on accepting). True: connect; a grant of an address
 * literal (host is an IP address) is a grant of that exact address:port,
 * any other keeps the address classes. False: refused, `reason` filled
 * (the deny line). Whoever stops the proxy first makes `fn` return at
 * once (ar_egress_proxy_stop waits for calls under way). */
struct ar_egress_ask {
	const char *proto;
	const char *host; /* normalised; an IPv6 literal without brackets */
	uint16_t port;
	const char *addr; /* the first address it resolves to, or NULL */
	int client; /* the agent's connection (the accepted socket), or -1 */
};
typedef bool (*ar_egress_ask_fn)(const struct ar_egress_ask *q, char *reason,
				 size_t size, void *data);
/* Before the first connection. */
void ar_egress_proxy_set_ask(struct ar_egress_proxy *p, ar_egress_ask_fn fn,
			     void *data);

/* agentrun sandbox allow --net (control/control_grant.c): live grants,
 * asked (before `ask`) for a HOST:PORT the policy does not allow; port
 * 0 (the transparent DNS) asks whether any port of the name is granted.
 * True: allowed; *exact set when the grant is of that address literal
 * and port (it then opens loopback/private classes, as an answer does).
 * Called from the proxy's threads: thread-safe. Before the first
 * connection. */
typedef bool (*ar_egress_grant_fn)(const char *host, uint16_t port, bool *exact,
				   void *data);
void ar_egress_proxy_set_grant(struct ar_egress_proxy *p, ar_egress_grant_fn fn,
			       void *data);

/* The deny line printed on stderr (the default event function): data
 * is unused. */
void ar_egress_event_stderr(const struct ar_egress_event *ev, void *data);

#endif
