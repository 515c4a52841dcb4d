/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the files of the egress proxy (egress_proxy.c, egress_dial.c,
 * egress_http.c, egress_relay.c); not for other users. Calls go down
 * only: egress_proxy.c -> egress_http.c -> egress_relay.c ->
 * egress_dial.c. */
#ifndef AGENTRUN_EGRESS_PROXY_INTERNAL_H
#define AGENTRUN_EGRESS_PROXY_INTERNAL_H

#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "egress_proxy.h"

struct ar_egress_tls;
struct ar_egress_secret;
struct ar_upstreams;

/* Connections with an upstream (dialled or relaying) at once: two
 * threads each while relaying; beyond it a request is refused with a
 * reason (HTTP 503, SOCKS general failure). */
#define AR_EGRESS_MAX_CONNS 256

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

enum dial_result {
	DIAL_OK,
	DIAL_DENIED,
	DIAL_NORESOLVE,
	DIAL_FAILED,
	DIAL_BUSY /* AR_EGRESS_MAX_CONNS reached */
};

/* egress_dial.c: a setup thread's state (set by setup_main) */
struct eg_tls_target {
	bool tls;
	uint16_t port;
	char host[256];
};
extern __thread struct eg_tls_target eg_tls_target;
extern __thread int eg_setup_client;
extern __thread long long eg_setup_deadline;

/* egress_dial.c: references, events, setup budget, dialling */
void eg_tls_target_set(const char *host, uint16_t port);
void eg_wake(struct ar_egress_proxy *p);
void eg_proxy_free(struct ar_egress_proxy *p);
void eg_proxy_unref(struct ar_egress_proxy *p);
void eg_emit_event(struct ar_egress_proxy *p, const struct ar_egress_event *ev);
void eg_emit(struct ar_egress_proxy *p, const char *proto, const char *host,
	     uint16_t port, const char *addr, bool allowed, const char *reason,
	     bool denied);
long long eg_mono_ms(void);
int eg_setup_read_budget(int fd);
int eg_read_full(int fd, void *buf, size_t n);
void eg_loopback_tune(int fd);
int eg_connect_fd_timeout(int fd, const struct addrinfo *ai);
int eg_connect_timeout(const struct addrinfo *ai);
bool eg_slot_take(struct ar_egress_proxy *p);
void eg_slot_put(struct ar_egress_proxy *p);
bool eg_granted(struct ar_egress_proxy *p, const char *host, uint16_t port,
		bool *exact);
enum dial_result eg_dial(struct ar_egress_proxy *p, const char *proto,
			 const char *host, uint16_t port, int *out,
			 char *reason, size_t size);
enum dial_result eg_dial_ex(struct ar_egress_proxy *p, const char *proto,
			    const char *host, uint16_t port, bool plain,
			    bool *proxied, int *out, char *reason, size_t size);

/* egress_http.c: the HTTP and SOCKS5 front ends of the proxy port */
int eg_http_setup(struct ar_egress_proxy *p, int c, int *up);
int eg_socks_setup(struct ar_egress_proxy *p, int c, int *up);

/* egress_relay.c: relaying and --secret interception */
void eg_relay(struct ar_egress_proxy *p, int client, int up);
void eg_intercept(struct ar_egress_proxy *p, int client, int up,
		  const char *host, uint16_t port);
void eg_placeholder_check(struct ar_egress_proxy *p, const char *proto,
			  const char *host, uint16_t port, const char *buf,
			  size_t len);
int eg_forward_secrets(struct ar_egress_proxy *p, int c, int up,
		       const struct ar_egress_forward *f);

#endif
