/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which process of the sandbox opened a connection the egress proxy
 * accepted (a --net ask request names it: docs/sandbox.md, "The control
 * plane"). The proxy holds the accepted socket; its peer's address and
 * port are the agent socket's local ones, in the sandbox's network
 * namespace: /proc/SANDBOX_PID/net/tcp{,6} gives that socket's inode,
 * and the fds of the processes of the sandbox's pid namespace (host
 * /proc, compared by /proc/PID/ns/pid) the process that holds it.
 *
 * Bounded: at most CTL_PEER_MAX_PROCS processes of the sandbox and
 * CTL_PEER_MAX_FDS fds of each are looked at; the rest is "not found"
 * (pid null). Called once per new request (not per merged connection),
 * and new requests are rate-limited (control_queue.h).
 */
#ifndef AGENTRUN_CONTROL_PEER_H
#define AGENTRUN_CONTROL_PEER_H

#include <stdbool.h>
#include <sys/types.h>

#define CTL_PEER_MAX_PROCS 4096
#define CTL_PEER_MAX_FDS 4096

struct ctl_peer {
	pid_t pid; /* as the host sees it; 0: not found */
	pid_t ns_pid; /* as the sandbox sees it */
	char exe[256]; /* quoted (ar_quote): the agent's */
	char cmdline[512]; /* quoted words */
};

/* The process of the sandbox (its init: sandbox_pid, as the host sees
 * it) that holds the other end of `client`: true with *out filled. */
bool ctl_peer_find(pid_t sandbox_pid, int client, struct ctl_peer *out);

/* The inode of the TCP socket whose local address is ADDR:PORT in a
 * /proc/net/tcp{,6} table (text): 0 when absent. addr: 4 or 16 bytes
 * (network order). Pure, for the tests. */
unsigned long ctl_peer_tcp_inode(const char *table, const unsigned char *addr,
				 size_t alen, unsigned port);

#endif
