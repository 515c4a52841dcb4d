/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Transparent capture inside the sandbox's network namespace (called by
 * the helper that has joined it, egress_listen.c): a default route on lo
 * (so a connect to any address gets as far as netfilter instead of
 * failing with "network unreachable"), and one nftables rule,
 *
 *   table ip agentrun {
 *     chain out { type nat hook output priority -100;
 *       meta l4proto tcp ip daddr != 127.0.0.0/8 redirect to :PORT } }
 *
 * so every TCP connection to a non-loopback address lands on the relay's
 * socket on 127.0.0.1:PORT, which reads the original destination with
 * SO_ORIGINAL_DST. Nothing else leaves: the namespace has no interface
 * but lo. Spoken as raw netlink (rtnetlink, nfnetlink): no nft or ip
 * binary, no library. Needs CAP_NET_ADMIN over the namespace only (its
 * user namespace: works rootless).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress_proxy.h"
#include "utils.h"

struct nlbuf {
	uint8_t b[4096];
	size_t len;
	uint32_t seq;
};

static void *nl_put(struct nlbuf *m, size_t n)
{
	void *p = m->b + m->len;

	memset(p, 0, NLMSG_ALIGN(n));
	m->len += NLMSG_ALIGN(n);
	return p;
}

static struct nlmsghdr *nl_msg(struct nlbuf *m, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *h = nl_put(m, sizeof(*h));

	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	h->nlmsg_seq = ++m->seq;
	return h;
}

static void nl_end(struct nlbuf *m, struct nlmsghdr *h)
{
	h->nlmsg_len = (uint32_t)(m->b + m->len - (uint8_t *)h);
}

static struct nlattr *attr(struct nlbuf *m, uint16_t type, const void *data,
			   size_t len)
{
	struct nlattr *a = nl_put(m, NLA_HDRLEN + len);

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len)
		memcpy((uint8_t *)a + NLA_HDRLEN, data, len);
	return a;
}

static void attr_u32(struct nlbuf *m, uint16_t type, uint32_t v)
{
	v = htonl(v);
	attr(m, type, &v, sizeof(v));
}

static void attr_str(struct nlbuf *m, uint16_t type, const char *s)
{
	attr(m, type, s, strlen(s) + 1);
}

static struct nlattr *nest(struct nlbuf *m, uint16_t type)
{
	return attr(m, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct nlbuf *m, struct nlattr *a)
{
	a->nla_len = (uint16_t)(m->b + m->len - (uint8_t *)a);
}

static void nfgen(struct nlbuf *m, uint8_t family, uint16_t res_id)
{
	struct nfgenmsg *g = nl_put(m, sizeof(*g));

	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = htons(res_id);
}

/* Send m and read the acks of every message asking for one. */
static int nl_talk(int proto, struct nlbuf *m, int acks, const char *what,
		   struct ar_error *err)
{
	_cleanup_close_ int fd =
		socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	uint8_t buf[8192];

	if (fd < 0)
		return ar_error_set(err, errno, "%s: netlink socket", what);
	if (sendto(fd, m->b, m->len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return ar_error_set(err, errno, "%s: netlink send", what);
	while (acks > 0) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ar_error_set(err, n < 0 ? errno : EIO,
					    "%s: netlink receive", what);
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf;
		     NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type != NLMSG_ERROR)
				continue;
			{
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (e->error)
					return ar_error_set(err, -e->error,
							    "%s", what);
			}
			acks--;
		}
	}
	return 0;
}

static int route_default_lo(struct ar_error *err)
{
	struct nlbuf m = { .len = 0 };
	struct nlmsghdr *h =
		nl_msg(&m, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
	struct rtmsg *r = nl_put(&m, sizeof(*r));
	uint32_t oif = if_nametoindex("lo");
	struct in_addr src = { .s_addr = htonl(INADDR_LOOPBACK) };

	r->rtm_family = AF_INET;
	r->rtm_table = RT_TABLE_MAIN;
	r->rtm_protocol = RTPROT_STATIC;
	r->rtm_scope = RT_SCOPE_LINK;
	r->rtm_type = RTN_UNICAST;
	attr(&m, RTA_OIF, &oif, sizeof(oif));
	/* lo's addresses are host-scoped: without a preferred source a
	 * connection would leave from 0.0.0.0, and nothing could answer it */
	attr(&m, RTA_PREFSRC, &src, sizeof(src));
	nl_end(&m, h);
	return nl_talk(NETLINK_ROUTE, &m, 1,
		       "transparent egress: default route on lo", err);
}

/* One expression of a rule. */
static struct nlattr *expr_begin(struct nlbuf *m, const char *name)
{
	struct nlattr *e = nest(m, NFTA_LIST_ELEM);

	attr_str(m, NFTA_EXPR_NAME, name);
	return e;
}

static void data_value(struct nlbuf *m, uint16_t type, const void *v,
		       size_t len)
{
	struct nlattr *d = nest(m, type);

	attr(m, NFTA_DATA_VALUE, v, len);
	nest_end(m, d);
}

static void expr_cmp(struct nlbuf *m, uint32_t op, const void *v, size_t len)
{
	struct nlattr *e = expr_begin(m, "cmp"), *d = nest(m, NFTA_EXPR_DATA);

	attr_u32(m, NFTA_CMP_SREG, NFT_REG_1);
	attr_u32(m, NFTA_CMP_OP, op);
	data_value(m, NFTA_CMP_DATA, v, len);
	nest_end(m, d);
	nest_end(m, e);
}

static int nft_redirect(uint16_t port, struct ar_error *err)
{
	struct nlbuf m = { .len = 0 };
	struct nlmsghdr *h;
	struct nlattr *a, *e, *d, *x;
	const uint8_t tcp = IPPROTO_TCP, lo_net = 127;
	uint16_t nport = htons(port);
	int32_t prio = -100;

	h = nl_msg(&m, NFNL_MSG_BATCH_BEGIN, 0);
	nfgen(&m, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	nl_end(&m, h);

	h = nl_msg(&m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE,
		   NLM_F_CREATE | NLM_F_ACK);
	nfgen(&m, NFPROTO_IPV4, 0);
	attr_str(&m, NFTA_TABLE_NAME, "agentrun");
	nl_end(&m, h);

	h = nl_msg(&m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWCHAIN,
		   NLM_F_CREATE | NLM_F_ACK);
	nfgen(&m, NFPROTO_IPV4, 0);
	attr_str(&m, NFTA_CHAIN_TABLE, "agentrun");
	attr_str(&m, NFTA_CHAIN_NAME, "out");
	a = nest(&m, NFTA_CHAIN_HOOK);
	attr_u32(&m, NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_OUT);
	attr_u32(&m, NFTA_HOOK_PRIORITY, (uint32_t)prio);
	nest_end(&m, a);
	attr_str(&m, NFTA_CHAIN_TYPE, "nat");
	nl_end(&m, h);

	h = nl_msg(&m, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
		   NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK);
	nfgen(&m, NFPROTO_IPV4, 0);
	attr_str(&m, NFTA_RULE_TABLE, "agentrun");
	attr_str(&m, NFTA_RULE_CHAIN, "out");
	a = nest(&m, NFTA_RULE_EXPRESSIONS);
	/* meta l4proto tcp */
	e = expr_begin(&m, "meta");
	d = nest(&m, NFTA_EXPR_DATA);
	attr_u32(&m, NFTA_META_DREG, NFT_REG_1);
	attr_u32(&m, NFTA_META_KEY, NFT_META_L4PROTO);
	nest_end(&m, d);
	nest_end(&m, e);
	expr_cmp(&m, NFT_CMP_EQ, &tcp, 1);
	/* the first byte of ip daddr != 127 */
	e = expr_begin(&m, "payload");
	d = nest(&m, NFTA_EXPR_DATA);
	attr_u32(&m, NFTA_PAYLOAD_DREG, NFT_REG_1);
	attr_u32(&m, NFTA_PAYLOAD_BASE, NFT_PAYLOAD_NETWORK_HEADER);
	attr_u32(&m, NFTA_PAYLOAD_OFFSET, 16);
	attr_u32(&m, NFTA_PAYLOAD_LEN, 1);
	nest_end(&m, d);
	nest_end(&m, e);
	expr_cmp(&m, NFT_CMP_NEQ, &lo_net, 1);
	/* redirect to :port */
	e = expr_begin(&m, "immediate");
	d = nest(&m, NFTA_EXPR_DATA);
	attr_u32(&m, NFTA_IMMEDIATE_DREG, NFT_REG_1);
	x = nest(&m, NFTA_IMMEDIATE_DATA);
	attr(&m, NFTA_DATA_VALUE, &nport, sizeof(nport));
	nest_end(&m, x);
	nest_end(&m, d);
	nest_end(&m, e);
	e = expr_begin(&m, "redir");
	d = nest(&m, NFTA_EXPR_DATA);
	attr_u32(&m, NFTA_REDIR_REG_PROTO_MIN, NFT_REG_1);
	nest_end(&m, d);
	nest_end(&m, e);
	nest_end(&m, a);
	nl_end(&m, h);

	h = nl_msg(&m, NFNL_MSG_BATCH_END, 0);
	nfgen(&m, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
	nl_end(&m, h);
	return nl_talk(NETLINK_NETFILTER, &m, 3,
		       "transparent egress: nftables redirect rule", err);
}

int ar_egress_capture_setup(uint16_t port, struct ar_error *err)
{
	if (route_default_lo(err) < 0)
		return -1;
	return nft_redirect(port, err);
}
