/* SPDX-License-Identifier: GPL-2.0-or-later */
/* config.json: linux.resources (cgroup limits). */
#include <string.h>

#include "oci_config.h"
#include "parse_parts.h"

static int parse_device_rule(const struct jt_ctx *c, const struct jt_node *n,
			     const struct jt_path *ip, void *items, size_t i,
			     void *arg)
{
	struct oci_device_cgroup *d = (struct oci_device_cgroup *)items + i;
	char tmp[JT_SHORT_MAX];

	(void)arg;
	if (jt_as_object(c, n, ip) < 0)
		return -1;
	if (!jt_get(n, "allow"))
		return jt_fail(c, JT_KEY(ip, "allow"),
			       "missing required property");
	if (jt_member_bool(c, n, ip, "allow", &d->allow) < 0 ||
	    jt_member_string(c, n, ip, "type", &d->type) < 0 ||
	    jt_member_opt_i64(c, n, ip, "major", &d->major) < 0 ||
	    jt_member_opt_i64(c, n, ip, "minor", &d->minor) < 0 ||
	    jt_member_string(c, n, ip, "access", &d->access) < 0)
		return -1;
	if (d->type && strcmp(d->type, "a") != 0 && strcmp(d->type, "b") != 0 &&
	    strcmp(d->type, "c") != 0)
		return jt_fail(c, JT_KEY(ip, "type"),
			       "unknown device type \"%s\" (a, b or c)",
			       jt_short(d->type, tmp, sizeof(tmp)));
	if (d->access && d->access[strspn(d->access, "rwm")] != '\0')
		return jt_fail(
			c, JT_KEY(ip, "access"),
			"invalid access \"%s\" (a combination of r, w and m)",
			jt_short(d->access, tmp, sizeof(tmp)));
	return 0;
}

static int parse_memory(const struct jt_ctx *c, const struct jt_node *n,
			const struct jt_path *p, struct oci_resources *r)
{
	r->memory.present = true;
	if (jt_member_opt_i64(c, n, p, "limit", &r->memory.limit) < 0 ||
	    jt_member_opt_i64(c, n, p, "reservation", &r->memory.reservation) <
		    0 ||
	    jt_member_opt_i64(c, n, p, "swap", &r->memory.swap) < 0 ||
	    jt_member_opt_i64(c, n, p, "kernel", &r->memory.kernel) < 0 ||
	    jt_member_opt_i64(c, n, p, "kernelTCP", &r->memory.kernel_tcp) <
		    0 ||
	    jt_member_opt_u64(c, n, p, "swappiness", &r->memory.swappiness) <
		    0 ||
	    jt_member_opt_bool(c, n, p, "disableOOMKiller",
			       &r->memory.disable_oom_killer) < 0 ||
	    jt_member_opt_bool(c, n, p, "useHierarchy",
			       &r->memory.use_hierarchy) < 0 ||
	    jt_member_opt_bool(c, n, p, "checkBeforeUpdate",
			       &r->memory.check_before_update) < 0)
		return -1;
	return 0;
}

static int parse_cpu(const struct jt_ctx *c, const struct jt_node *n,
		     const struct jt_path *p, struct oci_resources *r)
{
	r->cpu.present = true;
	if (jt_member_opt_u64(c, n, p, "shares", &r->cpu.shares) < 0 ||
	    jt_member_opt_i64(c, n, p, "quota", &r->cpu.quota) < 0 ||
	    jt_member_opt_u64(c, n, p, "burst", &r->cpu.burst) < 0 ||
	    jt_member_opt_u64(c, n, p, "period", &r->cpu.period) < 0 ||
	    jt_member_opt_i64(c, n, p, "realtimeRuntime",
			      &r->cpu.realtime_runtime) < 0 ||
	    jt_member_opt_u64(c, n, p, "realtimePeriod",
			      &r->cpu.realtime_period) < 0 ||
	    jt_member_string(c, n, p, "cpus", &r->cpu.cpus) < 0 ||
	    jt_member_string(c, n, p, "mems", &r->cpu.mems) < 0 ||
	    jt_member_opt_i64(c, n, p, "idle", &r->cpu.idle) < 0)
		return -1;
	return 0;
}

static int parse_throttle(const struct jt_ctx *c, const struct jt_node *n,
			  const struct jt_path *ip, void *items, size_t i,
			  void *arg)
{
	struct oci_throttle_device *t = (struct oci_throttle_device *)items + i;
	struct oci_opt_u64 rate = { 0 };

	(void)arg;
	if (jt_as_object(c, n, ip) < 0 ||
	    jt_member_i64_req(c, n, ip, "major", &t->major) < 0 ||
	    jt_member_i64_req(c, n, ip, "minor", &t->minor) < 0 ||
	    jt_member_opt_u64(c, n, ip, "rate", &rate) < 0)
		return -1;
	t->rate = rate.v;
	return 0;
}

static int parse_throttle_list(const struct jt_ctx *c,
			       const struct jt_node *obj,
			       const struct jt_path *p, const char *key,
			       struct oci_throttle_list *out)
{
	return jt_member_list(c, obj, p, key, sizeof(*out->items),
			      parse_throttle, NULL, &out->items, &out->n);
}

static int parse_weight_device(const struct jt_ctx *c, const struct jt_node *d,
			       const struct jt_path *ip, void *items, size_t i,
			       void *arg)
{
	struct oci_weight_device *w = (struct oci_weight_device *)items + i;

	(void)arg;
	if (jt_as_object(c, d, ip) < 0 ||
	    jt_member_i64_req(c, d, ip, "major", &w->major) < 0 ||
	    jt_member_i64_req(c, d, ip, "minor", &w->minor) < 0 ||
	    jt_member_opt_u32_max(c, d, ip, "weight", UINT16_MAX, &w->weight) <
		    0 ||
	    jt_member_opt_u32_max(c, d, ip, "leafWeight", UINT16_MAX,
				  &w->leaf_weight) < 0)
		return -1;
	return 0;
}

static int parse_block_io(const struct jt_ctx *c, const struct jt_node *n,
			  const struct jt_path *p, struct oci_resources *r)
{
	r->block_io.present = true;
	if (jt_member_opt_u32_max(c, n, p, "weight", UINT16_MAX,
				  &r->block_io.weight) < 0 ||
	    jt_member_opt_u32_max(c, n, p, "leafWeight", UINT16_MAX,
				  &r->block_io.leaf_weight) < 0 ||
	    parse_throttle_list(c, n, p, "throttleReadBpsDevice",
				&r->block_io.throttle_read_bps) < 0 ||
	    parse_throttle_list(c, n, p, "throttleWriteBpsDevice",
				&r->block_io.throttle_write_bps) < 0 ||
	    parse_throttle_list(c, n, p, "throttleReadIOPSDevice",
				&r->block_io.throttle_read_iops) < 0 ||
	    parse_throttle_list(c, n, p, "throttleWriteIOPSDevice",
				&r->block_io.throttle_write_iops) < 0 ||
	    jt_member_list(c, n, p, "weightDevice",
			   sizeof(*r->block_io.weight_devices),
			   parse_weight_device, NULL,
			   &r->block_io.weight_devices,
			   &r->block_io.n_weight_devices) < 0)
		return -1;
	return 0;
}

static bool page_size_valid(const char *s)
{
	size_t digits = strspn(s, "0123456789");

	return digits > 0 && s[0] != '0' && s[digits] &&
	       strchr("KMG", s[digits]) && s[digits + 1] == 'B' &&
	       s[digits + 2] == '\0';
}

static int parse_hugepage(const struct jt_ctx *c, const struct jt_node *n,
			  const struct jt_path *ip, void *items, size_t i,
			  void *arg)
{
	struct oci_hugepage_limit *h = (struct oci_hugepage_limit *)items + i;
	char tmp[JT_SHORT_MAX];

	(void)arg;
	if (jt_as_object(c, n, ip) < 0 ||
	    jt_member_string_req(c, n, ip, "pageSize", &h->page_size) < 0 ||
	    jt_member_u64_req(c, n, ip, "limit", &h->limit) < 0)
		return -1;
	if (!page_size_valid(h->page_size))
		return jt_fail(c, JT_KEY(ip, "pageSize"),
			       "invalid page size \"%s\" (e.g. 2MB)",
			       jt_short(h->page_size, tmp, sizeof(tmp)));
	return 0;
}

static int parse_priority(const struct jt_ctx *c, const struct jt_node *e,
			  const struct jt_path *ip, void *items, size_t i,
			  void *arg)
{
	struct oci_net_priority *np = (struct oci_net_priority *)items + i;

	(void)arg;
	if (jt_as_object(c, e, ip) < 0 ||
	    jt_member_string_req(c, e, ip, "name", &np->name) < 0 ||
	    jt_member_u32_req(c, e, ip, "priority", &np->priority) < 0)
		return -1;
	return 0;
}

static int parse_network(const struct jt_ctx *c, const struct jt_node *n,
			 const struct jt_path *p, struct oci_resources *r)
{
	r->network.present = true;
	if (jt_member_opt_u32(c, n, p, "classID", &r->network.class_id) < 0 ||
	    jt_member_list(c, n, p, "priorities",
			   sizeof(*r->network.priorities), parse_priority, NULL,
			   &r->network.priorities,
			   &r->network.n_priorities) < 0)
		return -1;
	return 0;
}

static int parse_rdma(const struct jt_ctx *c, const struct jt_node *e,
		      const struct jt_path *ep, void *items, size_t i,
		      void *arg)
{
	struct oci_rdma_limit *l = (struct oci_rdma_limit *)items + i;

	(void)arg;
	l->device = (char *)e->key;
	if (jt_as_object(c, e, ep) < 0 ||
	    jt_member_opt_u32(c, e, ep, "hcaHandles", &l->hca_handles) < 0 ||
	    jt_member_opt_u32(c, e, ep, "hcaObjects", &l->hca_objects) < 0)
		return -1;
	return 0;
}

int oci_parse_resources(const struct jt_ctx *c, const struct jt_node *n,
			const struct jt_path *p, struct oci_resources *r)
{
	const struct jt_node *sub;

	r->present = true;
	if (jt_member_kv(c, n, p, "unified", &r->unified) < 0)
		return -1;
	if (jt_member_list(c, n, p, "devices", sizeof(*r->devices),
			   parse_device_rule, NULL, &r->devices,
			   &r->n_devices) < 0)
		return -1;
	if (jt_member_object(c, n, p, "memory", &sub) < 0 ||
	    (sub && parse_memory(c, sub, JT_KEY(p, "memory"), r) < 0))
		return -1;
	if (jt_member_object(c, n, p, "cpu", &sub) < 0 ||
	    (sub && parse_cpu(c, sub, JT_KEY(p, "cpu"), r) < 0))
		return -1;
	if (jt_member_object(c, n, p, "pids", &sub) < 0)
		return -1;
	if (sub) {
		r->pids.present = true;
		if (jt_member_i64_req(c, sub, JT_KEY(p, "pids"), "limit",
				      &r->pids.limit) < 0)
			return -1;
	}
	if (jt_member_object(c, n, p, "blockIO", &sub) < 0 ||
	    (sub && parse_block_io(c, sub, JT_KEY(p, "blockIO"), r) < 0))
		return -1;
	if (jt_member_list(c, n, p, "hugepageLimits",
			   sizeof(*r->hugepage_limits), parse_hugepage, NULL,
			   &r->hugepage_limits, &r->n_hugepage_limits) < 0)
		return -1;
	if (jt_member_object(c, n, p, "network", &sub) < 0 ||
	    (sub && parse_network(c, sub, JT_KEY(p, "network"), r) < 0))
		return -1;
	if (jt_member_object(c, n, p, "rdma", &sub) < 0 ||
	    (sub && jt_list(c, sub, JT_KEY(p, "rdma"), sizeof(*r->rdma),
			    parse_rdma, NULL, &r->rdma, &r->n_rdma) < 0))
		return -1;
	return 0;
}
