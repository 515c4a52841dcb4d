/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun update [OPTIONS] <id>: change the cgroup limits of a container,
 * from runc's flags and/or a linux.resources JSON (--resources FILE, "-"
 * for stdin). Flags override values from the file. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_container.h"
#include "cli.h"
#include "oci_config.h"
#include "parse_resources_doc.h"
#include "utils.h"

#define UPDATE_USAGE                                                                    \
	"Usage: agentrun update [OPTIONS] ID\n"                                         \
	"\n"                                                                            \
	"Change the cgroup limits of a running container. The flags\n"                  \
	"override the values of the --resources file.\n"                                \
	"\n"                                                                            \
	"Options:\n"                                                                    \
	"  -r, --resources FILE     linux.resources JSON (\"-\": stdin)\n"              \
	"  --memory N               memory limit (bytes; k, m, g suffixes; -1 = max)\n" \
	"  --memory-reservation N   soft limit (memory.low)\n"                          \
	"  --memory-swap N          memory+swap limit (-1 = unlimited swap)\n"          \
	"  --cpu-shares N           relative weight (v1 scale, 2..262144)\n"            \
	"  --cpu-quota N            microseconds per period (-1 = max)\n"               \
	"  --cpu-period N           period in microseconds\n"                           \
	"  --cpuset-cpus LIST       CPUs (\"0-3,5\")\n"                                 \
	"  --cpuset-mems LIST       memory nodes\n"                                     \
	"  --pids-limit N           maximum number of tasks (<= 0 = max)\n"             \
	"  --blkio-weight N         block IO weight (10..1000)\n"                       \
	"  --cpu-rt-runtime N       realtime runtime per period (us)\n"                 \
	"  --cpu-rt-period N        realtime period (us)\n"                             \
	"  --kernel-memory N        ignored (no cgroup v2 limit)\n"                     \
	"  --kernel-memory-tcp N    ignored (no cgroup v2 limit)\n"                     \
	"  -h, --help               this help\n"

enum {
	OPT_MEMORY = 256,
	OPT_MEMORY_RESERVATION,
	OPT_MEMORY_SWAP,
	OPT_KERNEL_MEMORY,
	OPT_CPU_SHARES,
	OPT_CPU_QUOTA,
	OPT_CPU_PERIOD,
	OPT_CPU_RT_RUNTIME,
	OPT_CPU_RT_PERIOD,
	OPT_CPUSET_CPUS,
	OPT_CPUSET_MEMS,
	OPT_PIDS_LIMIT,
	OPT_BLKIO_WEIGHT,
};

/* "512", "512k", "1.5g", "64MB", "-1" -> bytes (1024-based). */
static int parse_bytes(const char *opt, const char *s, int64_t *out)
{
	char *end;
	double v;
	double mul = 1;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno)
		goto bad;
	switch (tolower((unsigned char)*end)) {
	case '\0':
		break;
	case 'k':
		mul = 1024.0;
		break;
	case 'm':
		mul = 1024.0 * 1024;
		break;
	case 'g':
		mul = 1024.0 * 1024 * 1024;
		break;
	case 't':
		mul = 1024.0 * 1024 * 1024 * 1024;
		break;
	case 'b':
		break;
	default:
		goto bad;
	}
	if (*end) {
		end++;
		if (tolower((unsigned char)*end) == 'b' && mul > 1)
			end++;
		if (*end)
			goto bad;
	}
	v *= mul;
	if (v == -1) {
		*out = -1;
		return 0;
	}
	if (v < 0 || v > 9.2e18)
		goto bad;
	*out = (int64_t)v;
	return 0;
bad:
	fprintf(stderr, "agentrun update: --%s: invalid size `%s`\n", opt, s);
	return -1;
}

static int parse_int(const char *opt, const char *s, int64_t *out)
{
	long long v;

	if (ar_parse_i64(s, &v) < 0) {
		fprintf(stderr, "agentrun update: --%s: invalid number `%s`\n",
			opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_uint(const char *opt, const char *s, uint64_t *out)
{
	unsigned long long v;

	if (ar_parse_u64(s, &v) < 0) {
		fprintf(stderr,
			"agentrun update: --%s: invalid non-negative number `%s`\n",
			opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int load_resources(const char *file, struct oci_config **cfg,
			  struct ar_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;

	if (ar_read_file_at(AT_FDCWD,
			    strcmp(file, "-") == 0 ? "/dev/stdin" : file,
			    OCI_CONFIG_MAX_FILE_SIZE, &buf, &len, err) < 0)
		return -1;
	return oci_resources_parse(
		buf, len, strcmp(file, "-") == 0 ? "<stdin>" : file, cfg, err);
}

static const struct option update_longopts[] = {
	{ "resources", required_argument, NULL, 'r' },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "memory-reservation", required_argument, NULL,
	  OPT_MEMORY_RESERVATION },
	{ "memory-swap", required_argument, NULL, OPT_MEMORY_SWAP },
	{ "kernel-memory", required_argument, NULL, OPT_KERNEL_MEMORY },
	{ "kernel-memory-tcp", required_argument, NULL, OPT_KERNEL_MEMORY },
	{ "cpu-shares", required_argument, NULL, OPT_CPU_SHARES },
	{ "cpu-quota", required_argument, NULL, OPT_CPU_QUOTA },
	{ "cpu-period", required_argument, NULL, OPT_CPU_PERIOD },
	{ "cpu-rt-runtime", required_argument, NULL, OPT_CPU_RT_RUNTIME },
	{ "cpu-rt-period", required_argument, NULL, OPT_CPU_RT_PERIOD },
	{ "cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS },
	{ "cpuset-mems", required_argument, NULL, OPT_CPUSET_MEMS },
	{ "pids-limit", required_argument, NULL, OPT_PIDS_LIMIT },
	{ "blkio-weight", required_argument, NULL, OPT_BLKIO_WEIGHT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Apply one flag (option value c, long name `name`) to the resources of
 * cfg. -1 after printing the problem. */
static int apply_option(struct oci_config *cfg, int c, const char *name,
			const char *arg)
{
	struct oci_resources *r = &cfg->linux_.resources;
	int64_t i64;
	uint64_t u64;

	switch (c) {
	case OPT_MEMORY:
		if (parse_bytes(name, arg, &i64) < 0)
			return -1;
		r->memory.present = true;
		r->memory.limit = (struct oci_opt_i64){ true, i64 };
		break;
	case OPT_MEMORY_RESERVATION:
		if (parse_bytes(name, arg, &i64) < 0)
			return -1;
		r->memory.present = true;
		r->memory.reservation = (struct oci_opt_i64){ true, i64 };
		break;
	case OPT_MEMORY_SWAP:
		if (parse_bytes(name, arg, &i64) < 0)
			return -1;
		r->memory.present = true;
		r->memory.swap = (struct oci_opt_i64){ true, i64 };
		break;
	case OPT_KERNEL_MEMORY:
		fprintf(stderr,
			"agentrun update: --%s is ignored (no cgroup v2 equivalent)\n",
			name);
		break;
	case OPT_CPU_SHARES:
		if (parse_uint(name, arg, &u64) < 0)
			return -1;
		r->cpu.present = true;
		r->cpu.shares = (struct oci_opt_u64){ true, u64 };
		break;
	case OPT_CPU_QUOTA:
		if (parse_int(name, arg, &i64) < 0)
			return -1;
		r->cpu.present = true;
		r->cpu.quota = (struct oci_opt_i64){ true, i64 };
		break;
	case OPT_CPU_PERIOD:
		if (parse_uint(name, arg, &u64) < 0)
			return -1;
		r->cpu.present = true;
		r->cpu.period = (struct oci_opt_u64){ true, u64 };
		break;
	case OPT_CPU_RT_RUNTIME:
		if (parse_int(name, arg, &i64) < 0)
			return -1;
		r->cpu.present = true;
		r->cpu.realtime_runtime = (struct oci_opt_i64){ true, i64 };
		break;
	case OPT_CPU_RT_PERIOD:
		if (parse_uint(name, arg, &u64) < 0)
			return -1;
		r->cpu.present = true;
		r->cpu.realtime_period = (struct oci_opt_u64){ true, u64 };
		break;
	case OPT_CPUSET_CPUS:
		r->cpu.present = true;
		r->cpu.cpus = oci_arena_strdup(&cfg->arena, arg);
		break;
	case OPT_CPUSET_MEMS:
		r->cpu.present = true;
		r->cpu.mems = oci_arena_strdup(&cfg->arena, arg);
		break;
	case OPT_PIDS_LIMIT:
		if (parse_int(name, arg, &i64) < 0)
			return -1;
		r->pids.present = true;
		r->pids.limit = i64;
		break;
	case OPT_BLKIO_WEIGHT:
		if (parse_uint(name, arg, &u64) < 0)
			return -1;
		if (u64 != 0 && (u64 < 10 || u64 > 1000)) {
			fprintf(stderr,
				"agentrun update: --blkio-weight: must be 10..1000, got %llu\n",
				(unsigned long long)u64);
			return -1;
		}
		r->block_io.present = true;
		r->block_io.weight =
			(struct oci_opt_u32){ true, (uint32_t)u64 };
		break;
	default:
		break;
	}
	return 0;
}

int cmd_update(struct ar_global_opts *g, int argc, char **argv)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_config_ struct oci_config *cfg = NULL;
	const char *file = NULL, *id;
	struct oci_resources *r;
	bool any_flag = false;
	int c;

	/* First pass: --resources (the base the flags override). */
	while ((c = getopt_long(argc, argv, "r:h", update_longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'r':
			file = optarg;
			break;
		case 'h':
			return cli_usage(UPDATE_USAGE, 0);
		case '?':
			return cli_usage(UPDATE_USAGE, 1);
		default:
			any_flag = true;
			break;
		}
	}
	if (argc - optind != 1)
		return cli_usage(UPDATE_USAGE, 1);
	id = argv[optind];
	ar_log_set_container_id(id);
	if (file) {
		if (load_resources(file, &cfg, &err) < 0)
			return cli_fail(&err);
	} else {
		cfg = oci_config_new();
	}
	r = &cfg->linux_.resources;
	r->present = true;

	optind = 0;
	while ((c = getopt_long(argc, argv, "r:h", update_longopts, NULL)) !=
	       -1) {
		const char *name = NULL;

		for (size_t i = 0; update_longopts[i].name; i++)
			if (update_longopts[i].val == c)
				name = update_longopts[i].name;
		if (apply_option(cfg, c, name, optarg) < 0)
			return 1;
	}
	if (!file && !any_flag) {
		fprintf(stderr,
			"agentrun update: nothing to update (give limits as options or --resources FILE)\n");
		return 1;
	}
	if (ar_cgroup_container_update(cli_state_root(g), id, r, &err) < 0)
		return cli_fail(&err);
	return 0;
}
