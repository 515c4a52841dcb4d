/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup v2 statistics and events: cpu.stat, memory.*, pids.*, io.stat;
 * the OOM counter of memory.events; the JSON of `events` in runc's shape
 * ({"type":"stats","id":...,"data":{"cpu":...,"memory":...,"pids":...,
 * "blkio":...}} and {"type":"oom","id":...}).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_file.h"
#include "json_gen.h"
#include "utils.h"

static void read_keyed(int dirfd, const char *file, const char *const *keys,
		       uint64_t *const *vals, size_t n, bool *found)
{
	_cleanup_free_ char *buf = NULL;
	struct ar_error e = AR_ERROR_INIT;

	if (ar_cg_read(dirfd, file, &buf, &e) < 0)
		return;
	*found = true;
	for (size_t i = 0; i < n; i++)
		(void)ar_cg_keyed(buf, keys[i], vals[i]);
}

static void read_num(int dirfd, const char *file, uint64_t *v, bool *found)
{
	struct ar_error e = AR_ERROR_INIT;

	if (ar_cg_read_u64(dirfd, file, v, &e) == 0)
		*found = true;
}

static void parse_io_stat(const char *buf, struct ar_cgroup_stats *s)
{
	const char *line = buf;

	while (line && *line) {
		struct ar_cgroup_io_stat st = { 0 };
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		_cleanup_free_ char *copy =
			ar_xasprintf("%.*s", (int)len, line);
		char *save = NULL, *tok;

		line = end ? end + 1 : NULL;
		tok = strtok_r(copy, " ", &save);
		/* NOLINTNEXTLINE(cert-err34-c): kernel-made "MAJ:MIN" */
		if (!tok || sscanf(tok, "%u:%u", &st.major, &st.minor) != 2)
			continue;
		while ((tok = strtok_r(NULL, " ", &save))) {
			static const struct {
				const char *k;
				size_t off;
			} keys[] = {
				{ "rbytes=",
				  offsetof(struct ar_cgroup_io_stat, rbytes) },
				{ "wbytes=",
				  offsetof(struct ar_cgroup_io_stat, wbytes) },
				{ "rios=",
				  offsetof(struct ar_cgroup_io_stat, rios) },
				{ "wios=",
				  offsetof(struct ar_cgroup_io_stat, wios) },
				{ "dbytes=",
				  offsetof(struct ar_cgroup_io_stat, dbytes) },
				{ "dios=",
				  offsetof(struct ar_cgroup_io_stat, dios) },
			};

			for (size_t i = 0; i < AR_ARRAY_SIZE(keys); i++) {
				size_t kl = strlen(keys[i].k);

				if (strncmp(tok, keys[i].k, kl) == 0)
					*(uint64_t *)((char *)&st +
						      keys[i].off) =
						strtoull(tok + kl, NULL, 10);
			}
		}
		s->io = ar_xrealloc(s->io, (s->n_io + 1) * sizeof(*s->io));
		s->io[s->n_io++] = st;
	}
}

int ar_cgroup_stats(const char *path, struct ar_cgroup_stats *s,
		    struct ar_error *err)
{
	_cleanup_close_ int fd = ar_cg_open(path, err);
	_cleanup_free_ char *io = NULL;
	struct ar_error e = AR_ERROR_INIT;
	bool dummy = false;

	memset(s, 0, sizeof(*s));
	if (fd < 0)
		return -1;
	{
		static const char *const k[] = {
			"usage_usec", "user_usec",    "system_usec",
			"nr_periods", "nr_throttled", "throttled_usec"
		};
		uint64_t *const v[] = {
			&s->cpu_usage_usec,   &s->cpu_user_usec,
			&s->cpu_system_usec,  &s->cpu_nr_periods,
			&s->cpu_nr_throttled, &s->cpu_throttled_usec
		};

		read_keyed(fd, "cpu.stat", k, v, AR_ARRAY_SIZE(k), &s->has_cpu);
	}
	read_num(fd, "memory.current", &s->mem_current, &s->has_memory);
	if (s->has_memory) {
		static const char *const ks[] = { "anon", "file", "kernel" };
		uint64_t *const vs[] = { &s->mem_anon, &s->mem_file,
					 &s->mem_kernel };
		static const char *const ke[] = { "low", "high", "max", "oom",
						  "oom_kill" };
		uint64_t *const ve[] = { &s->ev_low, &s->ev_high, &s->ev_max,
					 &s->ev_oom, &s->ev_oom_kill };

		s->mem_max = s->swap_max = AR_CG_MAX;
		read_num(fd, "memory.max", &s->mem_max, &dummy);
		read_num(fd, "memory.peak", &s->mem_peak, &dummy);
		read_num(fd, "memory.swap.current", &s->swap_current, &dummy);
		read_num(fd, "memory.swap.max", &s->swap_max, &dummy);
		read_keyed(fd, "memory.stat", ks, vs, AR_ARRAY_SIZE(ks),
			   &dummy);
		read_keyed(fd, "memory.events", ke, ve, AR_ARRAY_SIZE(ke),
			   &dummy);
		if (ar_cg_read(fd, "memory.stat", &s->memory_stat, &e) < 0)
			s->memory_stat = NULL;
	}
	read_num(fd, "pids.current", &s->pids_current, &s->has_pids);
	if (s->has_pids) {
		s->pids_max = AR_CG_MAX;
		read_num(fd, "pids.max", &s->pids_max, &dummy);
	}
	if (ar_cg_read(fd, "io.stat", &io, &e) == 0)
		parse_io_stat(io, s);
	return 0;
}

void ar_cgroup_stats_release(struct ar_cgroup_stats *s)
{
	free(s->io);
	free(s->memory_stat);
	s->io = NULL;
	s->memory_stat = NULL;
	s->n_io = 0;
}

int ar_cgroup_oom_count(const char *path, uint64_t *out, struct ar_error *err)
{
	_cleanup_close_ int fd = ar_cg_open(path, err);
	_cleanup_free_ char *buf = NULL;

	*out = 0;
	if (fd < 0)
		return -1;
	if (ar_cg_read(fd, "memory.events", &buf, err) < 0) {
		if (err->code != ENOENT)
			return -1;
		ar_error_clear(err);
		return 0;
	}
	(void)ar_cg_keyed(buf, "oom_kill", out);
	return 0;
}

/* ---- JSON (runc's `events` types) ---- */

/* memory.stat ("key value" lines) as an object of numbers. */
static void json_raw_map(struct jgen *g, const char *buf)
{
	const char *line = buf;

	jg_map_open(g);
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		_cleanup_free_ char *copy =
			ar_xasprintf("%.*s", (int)len, line);
		char *sp = strchr(copy, ' ');
		unsigned long long v;

		line = end ? end + 1 : NULL;
		if (!sp)
			continue;
		*sp = '\0';
		if (ar_parse_u64(sp + 1, &v) < 0)
			continue;
		jg_key_u64(g, copy, v);
	}
	jg_map_close(g);
}

static void json_io_entry(struct jgen *g, const struct ar_cgroup_io_stat *io,
			  const char *op, uint64_t v)
{
	jg_map_open(g);
	jg_key_u64(g, "major", io->major);
	jg_key_u64(g, "minor", io->minor);
	jg_key_str(g, "op", op);
	jg_key_u64(g, "value", v);
	jg_map_close(g);
}

static void json_io_list(struct jgen *g, const char *key,
			 const struct ar_cgroup_stats *s, size_t rd, size_t wr)
{
	jg_str(g, key);
	jg_array_open(g);
	for (size_t i = 0; i < s->n_io; i++) {
		const struct ar_cgroup_io_stat *io = &s->io[i];
		const uint64_t r = *(const uint64_t *)((const char *)io + rd);
		const uint64_t w = *(const uint64_t *)((const char *)io + wr);

		json_io_entry(g, io, "Read", r);
		json_io_entry(g, io, "Write", w);
		json_io_entry(g, io, "Total", r + w);
	}
	jg_array_close(g);
}

int ar_cgroup_stats_json(const char *id, const struct ar_cgroup_stats *s,
			 char **out, struct ar_error *err)
{
	_cleanup_jgen_ struct jgen g = { 0 };
	size_t len;

	if (jg_init_compact(&g, err) < 0)
		return -1;
	jg_map_open(&g);
	jg_key_str(&g, "type", "stats");
	jg_key_str(&g, "id", id);
	jg_str(&g, "data");
	jg_map_open(&g);
	if (s->has_cpu) {
		jg_str(&g, "cpu");
		jg_map_open(&g);
		jg_str(&g, "usage");
		jg_map_open(&g);
		jg_key_u64(&g, "total", s->cpu_usage_usec * 1000);
		jg_key_u64(&g, "kernel", s->cpu_system_usec * 1000);
		jg_key_u64(&g, "user", s->cpu_user_usec * 1000);
		jg_map_close(&g);
		jg_str(&g, "throttling");
		jg_map_open(&g);
		jg_key_u64(&g, "periods", s->cpu_nr_periods);
		jg_key_u64(&g, "throttledPeriods", s->cpu_nr_throttled);
		jg_key_u64(&g, "throttledTime", s->cpu_throttled_usec * 1000);
		jg_map_close(&g);
		jg_map_close(&g);
	}
	if (s->has_memory) {
		jg_str(&g, "memory");
		jg_map_open(&g);
		jg_key_u64(&g, "cache", s->mem_file);
		jg_str(&g, "usage");
		jg_map_open(&g);
		jg_key_u64(&g, "limit", s->mem_max);
		jg_key_u64(&g, "usage", s->mem_current);
		jg_key_u64(&g, "max", s->mem_peak);
		jg_key_u64(&g, "failcnt", s->ev_max);
		jg_map_close(&g);
		jg_str(&g, "swap");
		jg_map_open(&g);
		jg_key_u64(&g, "limit", s->swap_max);
		jg_key_u64(&g, "usage", s->swap_current);
		jg_map_close(&g);
		jg_str(&g, "kernel");
		jg_map_open(&g);
		jg_key_u64(&g, "usage", s->mem_kernel);
		jg_map_close(&g);
		jg_key_u64(&g, "oom", s->ev_oom);
		jg_key_u64(&g, "oomKill", s->ev_oom_kill);
		if (s->memory_stat) {
			jg_str(&g, "raw");
			json_raw_map(&g, s->memory_stat);
		}
		jg_map_close(&g);
	}
	if (s->has_pids) {
		jg_str(&g, "pids");
		jg_map_open(&g);
		jg_key_u64(&g, "current", s->pids_current);
		jg_key_u64(&g, "limit",
			   s->pids_max == AR_CG_MAX ? 0 : s->pids_max);
		jg_map_close(&g);
	}
	jg_str(&g, "blkio");
	jg_map_open(&g);
	json_io_list(&g, "ioServiceBytesRecursive", s,
		     offsetof(struct ar_cgroup_io_stat, rbytes),
		     offsetof(struct ar_cgroup_io_stat, wbytes));
	json_io_list(&g, "ioServicedRecursive", s,
		     offsetof(struct ar_cgroup_io_stat, rios),
		     offsetof(struct ar_cgroup_io_stat, wios));
	jg_map_close(&g);
	jg_map_close(&g);
	jg_map_close(&g);
	return jg_finish(&g, "events: stats", out, &len, err);
}

static int emit_oom(const char *id, FILE *out, struct ar_error *err)
{
	_cleanup_jgen_ struct jgen g = { 0 };
	_cleanup_free_ char *json = NULL;
	size_t len;

	if (jg_init_compact(&g, err) < 0)
		return -1;
	jg_map_open(&g);
	jg_key_str(&g, "type", "oom");
	jg_key_str(&g, "id", id);
	jg_map_close(&g);
	if (jg_finish(&g, "events: oom", &json, &len, err) < 0)
		return -1;
	fputs(json, out);
	fflush(out);
	return 0;
}

/* ---- events ---- */

static int emit_stats(const char *path, const char *id, FILE *out,
		      struct ar_error *err)
{
	struct ar_cgroup_stats s;
	_cleanup_free_ char *json = NULL;

	if (ar_cgroup_stats(path, &s, err) < 0)
		return -1;
	if (ar_cgroup_stats_json(id, &s, &json, err) < 0) {
		ar_cgroup_stats_release(&s);
		return -1;
	}
	ar_cgroup_stats_release(&s);
	fputs(json, out);
	fflush(out);
	return 0;
}

static uint64_t oom_total(int evfd)
{
	char buf[512];
	ssize_t n;
	uint64_t oom = 0, kill = 0;

	if (evfd < 0)
		return 0;
	n = pread(evfd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	(void)ar_cg_keyed(buf, "oom", &oom);
	(void)ar_cg_keyed(buf, "oom_kill", &kill);
	return oom > kill ? oom : kill;
}

int ar_cgroup_events(const char *path, const char *id, bool stats_once,
		     int interval_ms, bool (*alive)(void *ctx), void *ctx,
		     FILE *out, struct ar_error *err)
{
	_cleanup_close_ int fd = -1, evfd = -1;
	uint64_t ooms;
	long long next;

	if (stats_once)
		return emit_stats(path, id, out, err);
	fd = ar_cg_open(path, err);
	if (fd < 0)
		return -1;
	evfd = openat(fd, "memory.events", O_RDONLY | O_CLOEXEC);
	ooms = oom_total(evfd);
	next = ar_now_ms() + interval_ms;
	for (;;) {
		struct pollfd pfd = { .fd = evfd, .events = POLLPRI };
		long long left = next - ar_now_ms();
		uint64_t cur;

		if (left > 0) {
			/* wake up at least every 200 ms to notice the
			 * container's end */
			int r = poll(&pfd, evfd >= 0 ? 1 : 0,
				     left > 200 ? 200 : (int)left);

			if (r < 0 && errno != EINTR)
				return ar_error_set(err, errno, "poll");
		}
		cur = oom_total(evfd);
		if (cur > ooms) {
			if (emit_oom(id, out, err) < 0)
				return -1;
			ooms = cur;
		}
		if (faccessat(fd, "cgroup.procs", F_OK, 0) < 0 ||
		    (alive && !alive(ctx)))
			return 0;
		if (ar_now_ms() >= next) {
			if (emit_stats(path, id, out, err) < 0)
				return -1;
			next = ar_now_ms() + interval_ms;
		}
	}
}
