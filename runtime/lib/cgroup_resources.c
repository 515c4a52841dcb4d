/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * linux.resources -> cgroup v2 interface files.
 *
 * The OCI resources are the v1 model; the v2 equivalents and the
 * conversions (the same ones runc and crun document):
 *
 *   memory.limit          memory.max              -1 -> max, 0 = unset
 *   memory.reservation    memory.low              -1 -> max
 *   memory.swap           memory.swap.max         v1 counts memory+swap:
 *                                                 swap.max = swap - limit
 *   memory.disableOOMKiller  -- v2 cannot disable the OOM killer: warned
 *                            and ignored (memory.oom.group is a different
 *                            thing: kill the whole group; use unified)
 *   memory.swappiness, kernel, kernelTCP  -- no v2 file: warned, ignored
 *   cpu.shares            cpu.weight              linear, see below
 *   cpu.quota/period      cpu.max "QUOTA PERIOD"  quota <= 0 -> max; the
 *                                                 part not given is kept
 *   cpu.burst             cpu.max.burst
 *   cpu.idle              cpu.idle
 *   cpu.cpus/mems         cpuset.cpus/cpuset.mems
 *   cpu.realtime*         -- not in v2: an error when non-zero
 *   pids.limit            pids.max                <= 0 -> max
 *   blockIO.weight        io.bfq.weight as is when BFQ is there, else
 *                         io.weight "default W'" (10..1000 -> 1..10000)
 *   blockIO.weightDevice  the same, "MAJ:MIN W"
 *   blockIO.throttle*     io.max "MAJ:MIN rbps=|wbps=|riops=|wiops=N"
 *   hugepageLimits        hugetlb.<size>.max
 *   rdma                  rdma.max "DEV hca_handle=N hca_object=N"
 *   network               -- no v2 controller: warned, ignored
 *   unified               written verbatim; the key must be a plain file
 *                         name "controller.file" (no '/', no "..")
 *   devices               -- an eBPF program, cgroup_devices.c (attached
 *                         by ar_cgroup_create, not here)
 *
 * cpu.shares -> cpu.weight: agentrun uses the linear mapping of runc and
 * crun before 1.20 (1 + (shares - 2) * 9999 / 262142), which maps the v1
 * default 1024 to 39 rather than the v2 default 100; the newer quadratic
 * mapping of crun 1.20 needs libm and is not what podman's tests assume.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_file.h"
#include "log.h"
#include "utils.h"

static const struct {
	const char *name;
	unsigned bit;
} ctrl_names[] = {
	{ "cpu", AR_CG_CPU },	{ "cpuset", AR_CG_CPUSET },
	{ "io", AR_CG_IO },	{ "memory", AR_CG_MEMORY },
	{ "pids", AR_CG_PIDS }, { "hugetlb", AR_CG_HUGETLB },
	{ "rdma", AR_CG_RDMA }, { "misc", AR_CG_MISC },
};

unsigned ar_cgroup_ctrl_from_name(const char *name, size_t len)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(ctrl_names); i++)
		if (strlen(ctrl_names[i].name) == len &&
		    memcmp(ctrl_names[i].name, name, len) == 0)
			return ctrl_names[i].bit;
	return 0;
}

const char *ar_cgroup_ctrl_name(unsigned bit)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(ctrl_names); i++)
		if (ctrl_names[i].bit == bit)
			return ctrl_names[i].name;
	return "?";
}

/* ---- pure conversions ---- */

uint64_t ar_cgroup_shares_to_weight(uint64_t shares)
{
	if (shares == 0)
		return 0;
	if (shares <= 2)
		return 1;
	if (shares >= 262144)
		return 10000;
	return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t ar_cgroup_blkio_to_io_weight(uint64_t w)
{
	if (w == 0)
		return 0;
	if (w <= 10)
		return 1;
	if (w >= 1000)
		return 10000;
	return 1 + ((w - 10) * 9999) / 990;
}

int ar_cgroup_swap_to_v2(int64_t swap, int64_t limit, int64_t *out, bool *set,
			 struct ar_error *err)
{
	*set = true;
	if (swap == -1) {
		*out = -1;
		return 0;
	}
	if (swap == 0) {
		/* 0 is "unset" in the v1 model */
		*out = 0;
		*set = false;
		return 0;
	}
	if (swap < -1)
		return ar_error_set_plain(err, EINVAL,
					  "invalid memory.swap value %" PRId64,
					  swap);
	if (limit <= 0)
		return ar_error_set_plain(
			err, EINVAL,
			"memory.swap %" PRId64
			" needs a memory limit (v1 swap is memory+swap)",
			swap);
	if (swap < limit)
		return ar_error_set_plain(err, EINVAL,
					  "memory.swap (memory+swap, %" PRId64
					  ") must be >= memory.limit (%" PRId64
					  ")",
					  swap, limit);
	*out = swap - limit;
	return 0;
}

int ar_cgroup_unified_key_check(const char *key, unsigned *ctrl,
				struct ar_error *err)
{
	const char *dot;

	*ctrl = 0;
	if (!key || !*key)
		return ar_error_set_plain(err, EINVAL,
					  "linux.resources.unified: empty key");
	if (strchr(key, '/') || strcmp(key, ".") == 0 ||
	    strcmp(key, "..") == 0 || strstr(key, ".."))
		return ar_error_set_plain(
			err, EINVAL,
			"linux.resources.unified.%s: not a cgroup interface file name (no '/' or '..' allowed)",
			key);
	dot = strchr(key, '.');
	if (!dot || dot == key || dot[1] == '\0')
		return ar_error_set_plain(
			err, EINVAL,
			"linux.resources.unified.%s: expected \"controller.file\"",
			key);
	for (const char *p = key; *p; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
			return ar_error_set_plain(
				err, EINVAL,
				"linux.resources.unified.%s: invalid character in key",
				key);
	if ((size_t)(dot - key) == 6 && memcmp(key, "cgroup", 6) == 0)
		return 0;
	*ctrl = ar_cgroup_ctrl_from_name(key, (size_t)(dot - key));
	if (!*ctrl)
		return ar_error_set_plain(
			err, EINVAL,
			"linux.resources.unified.%s: unknown controller `%.*s`",
			key, (int)(dot - key), key);
	return 0;
}

/* ---- what is requested ---- */

static bool mem_any(const struct oci_resources *r)
{
	return (r->memory.limit.set && r->memory.limit.v != 0) ||
	       r->memory.reservation.set || r->memory.swap.set;
}

static bool cpu_any(const struct oci_resources *r)
{
	return (r->cpu.shares.set && r->cpu.shares.v) || r->cpu.quota.set ||
	       r->cpu.period.set || r->cpu.burst.set || r->cpu.idle.set;
}

static bool cpuset_any(const struct oci_resources *r)
{
	return (r->cpu.cpus && *r->cpu.cpus) || (r->cpu.mems && *r->cpu.mems);
}

static bool io_any(const struct oci_resources *r)
{
	const typeof(r->block_io) *b = &r->block_io;

	return (b->weight.set && b->weight.v) || b->n_weight_devices ||
	       b->throttle_read_bps.n || b->throttle_write_bps.n ||
	       b->throttle_read_iops.n || b->throttle_write_iops.n;
}

int ar_cgroup_resources_ctrls(const struct oci_resources *r, unsigned *mask,
			      struct ar_error *err)
{
	unsigned m = 0, c;

	*mask = 0;
	if (!r)
		return 0;
	if (mem_any(r))
		m |= AR_CG_MEMORY;
	if (cpu_any(r))
		m |= AR_CG_CPU;
	if (cpuset_any(r))
		m |= AR_CG_CPUSET;
	if (r->pids.present && r->pids.limit > 0)
		m |= AR_CG_PIDS; /* 0 or less: no limit, as crun */
	if (io_any(r))
		m |= AR_CG_IO;
	if (r->n_hugepage_limits)
		m |= AR_CG_HUGETLB;
	if (r->n_rdma)
		m |= AR_CG_RDMA;
	for (size_t i = 0; i < r->unified.n; i++) {
		if (ar_cgroup_unified_key_check(r->unified.items[i].key, &c,
						err) < 0)
			return -1;
		m |= c;
	}
	*mask = m;
	return 0;
}

bool ar_cgroup_resources_any(const struct oci_resources *r)
{
	unsigned m;
	struct ar_error e = AR_ERROR_INIT;

	if (!r)
		return false;
	if (r->unified.n)
		return true;
	return ar_cgroup_resources_ctrls(r, &m, &e) < 0 || m != 0;
}

/* ---- writers, one per controller ---- */

static bool skip(unsigned avail, unsigned ctrl, const char *what)
{
	if (avail & ctrl)
		return false;
	ar_warn("cgroup controller `%s` is not available: %s not applied",
		ar_cgroup_ctrl_name(ctrl), what);
	return true;
}

static void fmt_limit(char *buf, size_t sz, int64_t v)
{
	if (v < 0)
		snprintf(buf, sz, "max");
	else
		snprintf(buf, sz, "%" PRId64, v);
}

/* memory.max as a number; -1 for max/absent. */
static int64_t current_memory_max(int dirfd)
{
	struct ar_error e = AR_ERROR_INIT;
	uint64_t v;

	if (ar_cg_read_u64(dirfd, "memory.max", &v, &e) < 0 || v == AR_CG_MAX ||
	    v > INT64_MAX)
		return -1;
	return (int64_t)v;
}

static int apply_memory(int dirfd, const struct oci_resources *r,
			unsigned avail, struct ar_error *err)
{
	char buf[64];
	int64_t limit = -1, swap;
	bool swap_set;

	if (r->memory.disable_oom_killer.set && r->memory.disable_oom_killer.v)
		ar_warn("memory.disableOOMKiller: cgroup v2 cannot disable the OOM killer; ignored");
	if (r->memory.swappiness.set)
		ar_warn("memory.swappiness: no cgroup v2 equivalent; ignored");
	if ((r->memory.kernel.set && r->memory.kernel.v) ||
	    (r->memory.kernel_tcp.set && r->memory.kernel_tcp.v))
		ar_warn("memory.kernel/kernelTCP: no cgroup v2 equivalent; ignored");
	if (!mem_any(r) || skip(avail, AR_CG_MEMORY, "linux.resources.memory"))
		return 0;

	if (r->memory.limit.set && r->memory.limit.v != 0) {
		limit = r->memory.limit.v;
		if (limit < -1)
			return ar_error_set_plain(
				err, EINVAL,
				"linux.resources.memory.limit: invalid value %" PRId64,
				limit);
	} else {
		limit = current_memory_max(dirfd);
	}
	if (r->memory.swap.set) {
		if (ar_cgroup_swap_to_v2(r->memory.swap.v, limit, &swap,
					 &swap_set, err) < 0)
			return ar_error_wrap(err, "linux.resources.memory");
		if (swap_set) {
			fmt_limit(buf, sizeof(buf), swap);
			if (ar_cg_write(dirfd, "memory.swap.max", buf, err) <
			    0) {
				/* no swap accounting in the kernel */
				if (err->code != ENOENT)
					return -1;
				if (swap != -1)
					return ar_error_wrap(
						err,
						"swap limit requested but the kernel has no swap accounting");
				ar_error_clear(err);
			}
		}
	} else if (r->memory.limit.set && r->memory.limit.v == -1) {
		/* v1 compatibility: unlimited memory without a swap value
		 * means unlimited swap too */
		if (ar_cg_write(dirfd, "memory.swap.max", "max", err) < 0) {
			if (err->code != ENOENT)
				return -1;
			ar_error_clear(err);
		}
	}
	if (r->memory.limit.set && r->memory.limit.v != 0) {
		fmt_limit(buf, sizeof(buf), r->memory.limit.v);
		if (ar_cg_write(dirfd, "memory.max", buf, err) < 0)
			return -1;
	}
	if (r->memory.reservation.set) {
		fmt_limit(buf, sizeof(buf), r->memory.reservation.v);
		if (ar_cg_write(dirfd, "memory.low", buf, err) < 0)
			return -1;
	}
	return 0;
}

static int apply_cpu_max(int dirfd, const struct oci_resources *r,
			 struct ar_error *err)
{
	_cleanup_free_ char *cur = NULL;
	char quota[32] = "max", buf[80];
	unsigned long long period = 0;

	if (!r->cpu.quota.set && !r->cpu.period.set)
		return 0;
	/* Keep the half that is not given (e.g. update --cpu-period). */
	if (ar_cg_read(dirfd, "cpu.max", &cur, err) < 0) {
		ar_error_clear(err);
	} else {
		char *sp = strchr(cur, ' ');

		if (sp) {
			*sp = '\0';
			snprintf(quota, sizeof(quota), "%s", cur);
			period = strtoull(sp + 1, NULL, 10);
		}
	}
	if (r->cpu.quota.set) {
		if (r->cpu.quota.v > 0)
			snprintf(quota, sizeof(quota), "%" PRId64,
				 r->cpu.quota.v);
		else
			snprintf(quota, sizeof(quota), "max");
	}
	if (r->cpu.period.set && r->cpu.period.v)
		period = r->cpu.period.v;
	if (period)
		snprintf(buf, sizeof(buf), "%s %llu", quota, period);
	else
		snprintf(buf, sizeof(buf), "%s", quota);
	return ar_cg_write(dirfd, "cpu.max", buf, err);
}

static int apply_cpu(int dirfd, const struct oci_resources *r, unsigned avail,
		     struct ar_error *err)
{
	char buf[64];

	if ((r->cpu.realtime_runtime.set && r->cpu.realtime_runtime.v) ||
	    (r->cpu.realtime_period.set && r->cpu.realtime_period.v))
		return ar_error_set_plain(
			err, EINVAL,
			"linux.resources.cpu.realtimeRuntime/realtimePeriod: not supported with cgroup v2");
	if (cpu_any(r) && !skip(avail, AR_CG_CPU, "linux.resources.cpu")) {
		if (r->cpu.shares.set && r->cpu.shares.v) {
			snprintf(buf, sizeof(buf), "%" PRIu64,
				 ar_cgroup_shares_to_weight(r->cpu.shares.v));
			if (ar_cg_write(dirfd, "cpu.weight", buf, err) < 0)
				return -1;
		}
		if (apply_cpu_max(dirfd, r, err) < 0)
			return -1;
		if (r->cpu.burst.set) {
			snprintf(buf, sizeof(buf), "%" PRIu64, r->cpu.burst.v);
			if (ar_cg_write(dirfd, "cpu.max.burst", buf, err) < 0)
				return -1;
		}
		if (r->cpu.idle.set) {
			snprintf(buf, sizeof(buf), "%" PRId64, r->cpu.idle.v);
			if (ar_cg_write(dirfd, "cpu.idle", buf, err) < 0)
				return -1;
		}
	}
	if (cpuset_any(r) &&
	    !skip(avail, AR_CG_CPUSET, "linux.resources.cpu.cpus/mems")) {
		if (r->cpu.cpus && *r->cpu.cpus &&
		    ar_cg_write(dirfd, "cpuset.cpus", r->cpu.cpus, err) < 0)
			return -1;
		if (r->cpu.mems && *r->cpu.mems &&
		    ar_cg_write(dirfd, "cpuset.mems", r->cpu.mems, err) < 0)
			return -1;
	}
	return 0;
}

static int apply_pids(int dirfd, const struct oci_resources *r, unsigned avail,
		      struct ar_error *err)
{
	char buf[32];

	if (!r->pids.present || (r->pids.limit <= 0 && !(avail & AR_CG_PIDS)) ||
	    skip(avail, AR_CG_PIDS, "linux.resources.pids"))
		return 0;
	fmt_limit(buf, sizeof(buf), r->pids.limit > 0 ? r->pids.limit : -1);
	return ar_cg_write(dirfd, "pids.max", buf, err);
}

/* Append "MAJ:MIN key=rate" lines for one throttle list. */
static void throttle_lines(const struct oci_throttle_list *l, const char *key,
			   char ***lines, size_t *n)
{
	for (size_t i = 0; i < l->n; i++) {
		*lines = ar_xrealloc(*lines, (*n + 2) * sizeof(char *));
		(*lines)[(*n)++] =
			ar_xasprintf("%" PRId64 ":%" PRId64 " %s=%" PRIu64,
				     l->items[i].major, l->items[i].minor, key,
				     l->items[i].rate);
		(*lines)[*n] = NULL;
	}
}

static int apply_io(int dirfd, const struct oci_resources *r, unsigned avail,
		    struct ar_error *err)
{
	const typeof(r->block_io) *b = &r->block_io;
	_cleanup_strv_ char **lines = NULL;
	size_t n = 0;
	bool bfq;
	const char *wfile;
	char buf[96];

	if (b->leaf_weight.set)
		ar_warn("blockIO.leafWeight: no cgroup v2 equivalent; ignored");
	if (!io_any(r) || skip(avail, AR_CG_IO, "linux.resources.blockIO"))
		return 0;
	bfq = faccessat(dirfd, "io.bfq.weight", F_OK, 0) == 0;
	wfile = bfq ? "io.bfq.weight" : "io.weight";
	if (b->weight.set && b->weight.v) {
		uint64_t w = bfq ? b->weight.v :
				   ar_cgroup_blkio_to_io_weight(b->weight.v);

		snprintf(buf, sizeof(buf), "default %" PRIu64, w);
		if (ar_cg_write(dirfd, wfile, buf, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < b->n_weight_devices; i++) {
		const struct oci_weight_device *d = &b->weight_devices[i];
		uint64_t w;

		if (!d->weight.set)
			continue;
		w = bfq ? d->weight.v :
			  ar_cgroup_blkio_to_io_weight(d->weight.v);
		snprintf(buf, sizeof(buf), "%" PRId64 ":%" PRId64 " %" PRIu64,
			 d->major, d->minor, w);
		if (ar_cg_write(dirfd, wfile, buf, err) < 0)
			return -1;
	}
	throttle_lines(&b->throttle_read_bps, "rbps", &lines, &n);
	throttle_lines(&b->throttle_write_bps, "wbps", &lines, &n);
	throttle_lines(&b->throttle_read_iops, "riops", &lines, &n);
	throttle_lines(&b->throttle_write_iops, "wiops", &lines, &n);
	if (n && ar_cg_write_lines(dirfd, "io.max", lines, n, err) < 0)
		return -1;
	return 0;
}

static bool page_size_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 16)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= 'a' && *s <= 'z')))
			return false;
	return true;
}

static int apply_hugetlb(int dirfd, const struct oci_resources *r,
			 unsigned avail, struct ar_error *err)
{
	if (!r->n_hugepage_limits ||
	    skip(avail, AR_CG_HUGETLB, "linux.resources.hugepageLimits"))
		return 0;
	for (size_t i = 0; i < r->n_hugepage_limits; i++) {
		const struct oci_hugepage_limit *h = &r->hugepage_limits[i];
		char file[64], buf[32];

		if (!page_size_ok(h->page_size))
			return ar_error_set_plain(
				err, EINVAL,
				"linux.resources.hugepageLimits[%zu].pageSize: invalid page size `%s`",
				i, h->page_size ? h->page_size : "");
		snprintf(file, sizeof(file), "hugetlb.%s.max", h->page_size);
		snprintf(buf, sizeof(buf), "%" PRIu64, h->limit);
		if (ar_cg_write(dirfd, file, buf, err) < 0)
			return ar_error_wrap(
				err, "linux.resources.hugepageLimits[%zu]", i);
	}
	return 0;
}

static int apply_rdma(int dirfd, const struct oci_resources *r, unsigned avail,
		      struct ar_error *err)
{
	if (!r->n_rdma || skip(avail, AR_CG_RDMA, "linux.resources.rdma"))
		return 0;
	for (size_t i = 0; i < r->n_rdma; i++) {
		const struct oci_rdma_limit *l = &r->rdma[i];
		char h[24] = "max", o[24] = "max";
		_cleanup_free_ char *line = NULL;

		if (!l->device || !*l->device || strpbrk(l->device, " \n\t"))
			return ar_error_set_plain(
				err, EINVAL,
				"linux.resources.rdma: invalid device name `%s`",
				l->device ? l->device : "");
		if (l->hca_handles.set)
			snprintf(h, sizeof(h), "%u", l->hca_handles.v);
		if (l->hca_objects.set)
			snprintf(o, sizeof(o), "%u", l->hca_objects.v);
		line = ar_xasprintf("%s hca_handle=%s hca_object=%s", l->device,
				    h, o);
		if (ar_cg_write(dirfd, "rdma.max", line, err) < 0)
			return -1;
	}
	return 0;
}

static int apply_unified(int dirfd, const struct oci_resources *r,
			 unsigned avail, struct ar_error *err)
{
	for (size_t i = 0; i < r->unified.n; i++) {
		const struct oci_kv *kv = &r->unified.items[i];
		unsigned c;

		if (ar_cgroup_unified_key_check(kv->key, &c, err) < 0)
			return -1;
		if (c && skip(avail, c, kv->key))
			continue;
		if (ar_cg_write(dirfd, kv->key, kv->value ? kv->value : "",
				err) < 0)
			return ar_error_wrap(err, "linux.resources.unified.%s",
					     kv->key);
	}
	return 0;
}

int ar_cgroup_apply_resources(int dirfd, const struct oci_resources *r,
			      unsigned avail, struct ar_error *err)
{
	if (!r)
		return 0;
	if (r->network.present &&
	    (r->network.class_id.set || r->network.n_priorities))
		ar_warn("linux.resources.network: no cgroup v2 controller; ignored");
	if (apply_memory(dirfd, r, avail, err) < 0 ||
	    apply_cpu(dirfd, r, avail, err) < 0 ||
	    apply_pids(dirfd, r, avail, err) < 0 ||
	    apply_io(dirfd, r, avail, err) < 0 ||
	    apply_hugetlb(dirfd, r, avail, err) < 0 ||
	    apply_rdma(dirfd, r, avail, err) < 0 ||
	    apply_unified(dirfd, r, avail, err) < 0)
		return -1;
	return 0;
}
