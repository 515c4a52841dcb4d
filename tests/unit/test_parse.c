/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for spec/: config.json -> struct oci_config. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "oci_config.h"
#include "unit.h"
#include "utils.h"

#ifndef UNIT_DATA_DIR
#define UNIT_DATA_DIR "tests/unit/data"
#endif

/* JSON written with ' for " to keep the tests readable. */
static char *json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *json(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	return s;
}

static struct oci_config *parse_ok(const char *text)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *cfg = NULL;

	if (oci_config_parse(text, strlen(text), "config.json", &cfg, &err) <
	    0) {
		printf("# unexpected error: %s\n#   input: %s\n", err.msg,
		       text);
		return NULL;
	}
	return cfg;
}

/* Parse `text` (with ' quotes) and check that it fails with a message
 * containing `needle`. Returns 1 when it did. */
static int fails_with(int line, const char *text_q, const char *needle)
{
	_cleanup_free_ char *text = json("%s", text_q);
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *cfg = NULL;

	if (oci_config_parse(text, strlen(text), "config.json", &cfg, &err) ==
	    0) {
		printf("# line %d: parse succeeded, expected error \"%s\"\n",
		       line, needle);
		oci_config_free(cfg);
		return 0;
	}
	if (!strstr(err.msg, needle)) {
		printf("# line %d: error \"%s\"\n#   does not contain \"%s\"\n",
		       line, err.msg, needle);
		return 0;
	}
	if (cfg)
		return 0;
	return 1;
}

#define FAILS(text, needle) CHECK(fails_with(__LINE__, text, needle))
/* A config with ociVersion and the given extra top-level members. */
#define BASE(members) "{'ociVersion': '1.2.0', " members "}"
#define PROC(members) BASE("'process': {'cwd': '/', " members "}")
#define LINUX(members) BASE("'linux': {" members "}")

/* ------------------------------------------------------------ success */

UNIT_TEST(full_config_every_field)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_config_ struct oci_config *cfg = NULL;

	if (oci_config_load_file(UNIT_DATA_DIR "/full-config.json", &cfg,
				 &err) < 0) {
		printf("# %s\n", err.msg);
		CHECK(0);
		return;
	}
	CHECK_STR_CONTAINS(cfg->filename, "full-config.json");
	CHECK_STR_EQ(cfg->oci_version, "1.2.0");
	CHECK_STR_EQ(cfg->hostname, "full-host");
	CHECK_STR_EQ(cfg->domainname, "example.org");
	CHECK_INT_EQ(cfg->annotations.n, 2);
	CHECK_STR_EQ(oci_config_annotation(cfg, "org.example.key"), "value");
	CHECK_STR_EQ(oci_config_annotation(cfg, "empty"), "");
	CHECK(oci_config_annotation(cfg, "nope") == NULL);
	CHECK(cfg->root.present);
	CHECK_STR_EQ(cfg->root.path, "rootfs");
	CHECK(cfg->root.readonly);

	/* process */
	const struct oci_process *p = &cfg->process;
	CHECK(p->present);
	CHECK(p->terminal);
	CHECK(p->console_size.set);
	CHECK_INT_EQ(p->console_size.height, 24);
	CHECK_INT_EQ(p->console_size.width, 80);
	CHECK_INT_EQ(p->user.uid, 1000);
	CHECK_INT_EQ(p->user.gid, 1001);
	CHECK(p->user.umask.set);
	CHECK_INT_EQ(p->user.umask.v, 18);
	CHECK_INT_EQ(p->user.n_additional_gids, 2);
	CHECK_INT_EQ(p->user.additional_gids[0], 5);
	CHECK(p->user.additional_gids[1] == UINT32_MAX);
	CHECK_STR_EQ(p->user.username, "agent");
	CHECK_INT_EQ(p->args.n, 3);
	CHECK_STR_EQ(p->args.v[0], "/bin/sh");
	CHECK_STR_EQ(p->args.v[2], "echo hi");
	CHECK(p->args.v[3] == NULL);
	CHECK_STR_EQ(p->command_line, "ignored on linux");
	CHECK_INT_EQ(p->env.n, 2);
	CHECK_STR_EQ(p->env.v[1], "TERM=xterm");
	CHECK(p->env.v[2] == NULL);
	CHECK_STR_EQ(p->cwd, "/work");
	CHECK(p->capabilities.present);
	for (int s = 0; s < OCI_CAP_NSETS; s++)
		CHECK(p->capabilities.set_present[s]);
	CHECK_INT_EQ(p->capabilities.names[OCI_CAP_BOUNDING].n, 3);
	CHECK_STR_EQ(p->capabilities.names[OCI_CAP_BOUNDING].v[2],
		     "CAP_SYS_ADMIN");
	CHECK(p->capabilities.mask[OCI_CAP_BOUNDING] ==
	      ((1ULL << 0) | (1ULL << 5) | (1ULL << 21)));
	CHECK(p->capabilities.mask[OCI_CAP_EFFECTIVE] == (1ULL << 5));
	CHECK(p->capabilities.mask[OCI_CAP_INHERITABLE] == 0);
	CHECK_INT_EQ(p->capabilities.names[OCI_CAP_INHERITABLE].n, 0);
	CHECK(p->capabilities.mask[OCI_CAP_PERMITTED] ==
	      ((1ULL << 5) | (1ULL << 10)));
	CHECK(p->capabilities.mask[OCI_CAP_AMBIENT] == (1ULL << 5));
	CHECK_INT_EQ(p->n_rlimits, 3);
	CHECK_STR_EQ(p->rlimits[0].type, "RLIMIT_NOFILE");
	CHECK_INT_EQ(p->rlimits[0].resource, RLIMIT_NOFILE);
	CHECK_INT_EQ(p->rlimits[0].soft, 1024);
	CHECK_INT_EQ(p->rlimits[0].hard, 4096);
	CHECK_INT_EQ(p->rlimits[1].resource, RLIMIT_CORE);
	CHECK(p->rlimits[1].hard == UINT64_MAX);
	CHECK_INT_EQ(p->rlimits[2].resource, RLIMIT_NPROC);
	CHECK(p->rlimits[2].hard == 9223372036854775808ULL);
	CHECK(p->no_new_privileges);
	CHECK_STR_EQ(p->apparmor_profile, "agent-profile");
	CHECK(p->oom_score_adj.set);
	CHECK_INT_EQ(p->oom_score_adj.v, -500);
	CHECK_STR_EQ(p->selinux_label, "system_u:system_r:container_t:s0");
	CHECK(p->io_priority.set);
	CHECK_INT_EQ(p->io_priority.klass, 2);
	CHECK_STR_EQ(p->io_priority.class_name, "IOPRIO_CLASS_BE");
	CHECK_INT_EQ(p->io_priority.priority, 4);
	CHECK(p->scheduler.set);
	CHECK_STR_EQ(p->scheduler.policy_name, "SCHED_DEADLINE");
	CHECK_INT_EQ(p->scheduler.policy, 6);
	CHECK(p->scheduler.nice.set);
	CHECK_INT_EQ(p->scheduler.nice.v, -5);
	CHECK(p->scheduler.priority.set);
	CHECK_INT_EQ(p->scheduler.priority.v, 0);
	CHECK_INT_EQ(p->scheduler.flags.n, 2);
	CHECK_STR_EQ(p->scheduler.flags.v[1], "SCHED_FLAG_RECLAIM");
	CHECK(p->scheduler.runtime.set && p->scheduler.runtime.v == 1000000);
	CHECK(p->scheduler.deadline.set && p->scheduler.deadline.v == 2000000);
	CHECK(p->scheduler.period.set && p->scheduler.period.v == 3000000);
	CHECK_STR_EQ(p->exec_cpu_affinity_initial, "0-3, 7");
	CHECK_STR_EQ(p->exec_cpu_affinity_final, "1");

	/* mounts */
	CHECK_INT_EQ(cfg->n_mounts, 3);
	CHECK_STR_EQ(cfg->mounts[0].destination, "/proc");
	CHECK_STR_EQ(cfg->mounts[0].type, "proc");
	CHECK_STR_EQ(cfg->mounts[0].source, "proc");
	CHECK_INT_EQ(cfg->mounts[0].options.n, 0);
	CHECK_STR_EQ(cfg->mounts[1].source, "/srv/data");
	CHECK_INT_EQ(cfg->mounts[1].options.n, 2);
	CHECK_STR_EQ(cfg->mounts[1].options.v[0], "rbind");
	CHECK(cfg->mounts[1].options.v[2] == NULL);
	CHECK_INT_EQ(cfg->mounts[1].uid_mappings.n, 1);
	CHECK_INT_EQ(cfg->mounts[1].uid_mappings.items[0].host_id, 100000);
	CHECK_INT_EQ(cfg->mounts[1].uid_mappings.items[0].size, 65536);
	CHECK_INT_EQ(cfg->mounts[1].gid_mappings.items[0].host_id, 200000);
	CHECK(cfg->mounts[2].type == NULL && cfg->mounts[2].source == NULL);

	/* hooks */
	CHECK_INT_EQ(cfg->hooks[OCI_HOOK_PRESTART].n, 1);
	const struct oci_hook *h = &cfg->hooks[OCI_HOOK_PRESTART].items[0];
	CHECK_STR_EQ(h->path, "/usr/bin/prestart");
	CHECK_INT_EQ(h->args.n, 2);
	CHECK_STR_EQ(h->env.v[0], "A=1");
	CHECK(h->timeout.set && h->timeout.v == 5);
	CHECK_INT_EQ(cfg->hooks[OCI_HOOK_CREATE_RUNTIME].n, 2);
	CHECK_STR_EQ(cfg->hooks[OCI_HOOK_CREATE_RUNTIME].items[1].path,
		     "/bin/cr2");
	CHECK(!cfg->hooks[OCI_HOOK_CREATE_RUNTIME].items[1].timeout.set);
	CHECK_STR_EQ(cfg->hooks[OCI_HOOK_CREATE_CONTAINER].items[0].path,
		     "/bin/cc");
	CHECK_STR_EQ(cfg->hooks[OCI_HOOK_START_CONTAINER].items[0].path,
		     "/bin/sc");
	CHECK_INT_EQ(cfg->hooks[OCI_HOOK_POSTSTART].items[0].timeout.v, 1);
	CHECK_STR_EQ(cfg->hooks[OCI_HOOK_POSTSTOP].items[0].args.v[0], "pst");

	/* linux */
	const struct oci_linux *l = &cfg->linux_;
	CHECK(l->present);
	CHECK_INT_EQ(l->n_namespaces, 8);
	CHECK_INT_EQ(l->namespaces[0].type, OCI_NS_PID);
	CHECK_INT_EQ(l->namespaces[0].clone_flag, CLONE_NEWPID);
	CHECK(l->namespaces[0].path == NULL);
	CHECK_INT_EQ(l->namespaces[1].type, OCI_NS_NETWORK);
	CHECK_INT_EQ(l->namespaces[1].clone_flag, CLONE_NEWNET);
	CHECK_STR_EQ(l->namespaces[1].path, "/proc/1234/ns/net");
	CHECK_INT_EQ(l->namespaces[2].clone_flag, CLONE_NEWNS);
	CHECK_INT_EQ(l->namespaces[3].clone_flag, CLONE_NEWIPC);
	CHECK_INT_EQ(l->namespaces[4].clone_flag, CLONE_NEWUTS);
	CHECK_INT_EQ(l->namespaces[5].clone_flag, CLONE_NEWUSER);
	CHECK_INT_EQ(l->namespaces[6].clone_flag, CLONE_NEWCGROUP);
	CHECK_INT_EQ(l->namespaces[7].type, OCI_NS_TIME);
	CHECK_INT_EQ(l->namespaces[7].clone_flag, 0x80);
	CHECK(oci_config_find_ns(cfg, OCI_NS_NETWORK) == &l->namespaces[1]);
	CHECK(oci_config_find_ns(cfg, OCI_NS_TIME) == &l->namespaces[7]);
	CHECK_INT_EQ(l->uid_mappings.n, 2);
	CHECK_INT_EQ(l->uid_mappings.items[1].container_id, 1);
	CHECK_INT_EQ(l->uid_mappings.items[1].host_id, 100000);
	CHECK_INT_EQ(l->uid_mappings.items[1].size, 65536);
	CHECK_INT_EQ(l->gid_mappings.n, 1);
	CHECK_INT_EQ(l->gid_mappings.items[0].host_id, 1001);
	CHECK(l->time_offset_boottime.set);
	CHECK(l->time_offset_boottime.secs == INT64_MIN);
	CHECK_INT_EQ(l->time_offset_boottime.nanosecs, 999999999);
	CHECK(l->time_offset_monotonic.secs == INT64_MAX);
	CHECK_INT_EQ(l->n_devices, 4);
	CHECK_STR_EQ(l->devices[0].path, "/dev/fuse");
	CHECK_INT_EQ(l->devices[0].type, 'c');
	CHECK_INT_EQ(l->devices[0].major, 10);
	CHECK_INT_EQ(l->devices[0].minor, 229);
	CHECK(l->devices[0].file_mode.set && l->devices[0].file_mode.v == 0666);
	CHECK(l->devices[0].uid.set && l->devices[0].gid.set);
	CHECK_INT_EQ(l->devices[1].type, 'b');
	CHECK(!l->devices[1].file_mode.set);
	CHECK_INT_EQ(l->devices[2].type, 'u');
	CHECK_INT_EQ(l->devices[3].type, 'p');
	CHECK_STR_EQ(l->cgroups_path, "/agents/full");
	CHECK_STR_EQ(l->rootfs_propagation, "slave");
	CHECK_INT_EQ(l->sysctl.n, 2);
	CHECK_STR_EQ(l->sysctl.items[0].key, "net.ipv4.ip_forward");
	CHECK_STR_EQ(l->sysctl.items[0].value, "1");
	CHECK_INT_EQ(l->masked_paths.n, 2);
	CHECK_STR_EQ(l->masked_paths.v[1], "/sys/firmware");
	CHECK_INT_EQ(l->readonly_paths.n, 1);
	CHECK_STR_EQ(l->mount_label, "system_u:object_r:container_file_t:s0");
	CHECK(l->personality.set);
	CHECK_STR_EQ(l->personality.domain, "LINUX32");
	CHECK_INT_EQ(l->personality.flags.n, 0);
	CHECK(l->intel_rdt_present);

	/* resources */
	const struct oci_resources *r = &l->resources;
	CHECK(r->present);
	CHECK_INT_EQ(r->n_devices, 2);
	CHECK(!r->devices[0].allow);
	CHECK(r->devices[0].type == NULL);
	CHECK_STR_EQ(r->devices[0].access, "rwm");
	CHECK(r->devices[1].allow);
	CHECK_STR_EQ(r->devices[1].type, "c");
	CHECK(r->devices[1].major.set && r->devices[1].major.v == 10);
	CHECK(r->devices[1].minor.set && r->devices[1].minor.v == 229);
	CHECK(r->memory.present);
	CHECK(r->memory.limit.set && r->memory.limit.v == 536870912);
	CHECK(r->memory.reservation.v == 268435456);
	CHECK(r->memory.swap.set && r->memory.swap.v == -1);
	CHECK(r->memory.kernel.v == -1);
	CHECK(r->memory.kernel_tcp.v == 1024);
	CHECK(r->memory.swappiness.set && r->memory.swappiness.v == 60);
	CHECK(r->memory.disable_oom_killer.set &&
	      !r->memory.disable_oom_killer.v);
	CHECK(r->memory.use_hierarchy.set && r->memory.use_hierarchy.v);
	CHECK(r->memory.check_before_update.v);
	CHECK(r->cpu.present);
	CHECK(r->cpu.shares.v == 1024);
	CHECK(r->cpu.quota.set && r->cpu.quota.v == -1);
	CHECK(r->cpu.burst.v == 1000);
	CHECK(r->cpu.period.v == 100000);
	CHECK(r->cpu.realtime_runtime.v == 950000);
	CHECK(r->cpu.realtime_period.v == 1000000);
	CHECK_STR_EQ(r->cpu.cpus, "0-3");
	CHECK_STR_EQ(r->cpu.mems, "0");
	CHECK(r->cpu.idle.set && r->cpu.idle.v == 1);
	CHECK(r->pids.present && r->pids.limit == 128);
	CHECK(r->block_io.present);
	CHECK(r->block_io.weight.v == 500);
	CHECK(r->block_io.leaf_weight.v == 300);
	CHECK_INT_EQ(r->block_io.n_weight_devices, 1);
	CHECK(r->block_io.weight_devices[0].major == 8);
	CHECK(r->block_io.weight_devices[0].weight.v == 700);
	CHECK(r->block_io.weight_devices[0].leaf_weight.v == 65535);
	CHECK(r->block_io.throttle_read_bps.n == 1 &&
	      r->block_io.throttle_read_bps.items[0].rate == 1048576);
	CHECK(r->block_io.throttle_write_bps.items[0].minor == 1);
	CHECK(r->block_io.throttle_read_iops.items[0].rate == 3);
	CHECK(r->block_io.throttle_write_iops.items[0].rate == UINT64_MAX);
	CHECK_INT_EQ(r->n_hugepage_limits, 2);
	CHECK_STR_EQ(r->hugepage_limits[0].page_size, "2MB");
	CHECK(r->hugepage_limits[0].limit == 209715200);
	CHECK(r->network.present);
	CHECK(r->network.class_id.set && r->network.class_id.v == 1048577);
	CHECK_INT_EQ(r->network.n_priorities, 2);
	CHECK_STR_EQ(r->network.priorities[0].name, "eth0");
	CHECK_INT_EQ(r->network.priorities[0].priority, 500);
	CHECK_INT_EQ(r->n_rdma, 2);
	CHECK_STR_EQ(r->rdma[0].device, "mlx5_1");
	CHECK(r->rdma[0].hca_handles.set && r->rdma[0].hca_handles.v == 3);
	CHECK(r->rdma[0].hca_objects.v == 10000);
	CHECK(!r->rdma[1].hca_handles.set);
	CHECK_INT_EQ(r->unified.n, 2);
	CHECK_STR_EQ(r->unified.items[1].key, "io.weight");
	CHECK_STR_EQ(r->unified.items[1].value, "default 100");

	/* seccomp */
	const struct oci_seccomp *s = l->seccomp;
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_INT_EQ(s->default_action, OCI_SCMP_ACT_ERRNO);
	CHECK(s->default_errno_ret.set && s->default_errno_ret.v == 38);
	CHECK_INT_EQ(s->architectures.n, 2);
	CHECK_STR_EQ(s->architectures.v[1], "SCMP_ARCH_AARCH64");
	CHECK_STR_EQ(s->flags.v[0], "SECCOMP_FILTER_FLAG_LOG");
	CHECK_STR_EQ(s->listener_path, "/run/seccomp.sock");
	CHECK_STR_EQ(s->listener_metadata, "meta");
	CHECK_INT_EQ(s->n_syscalls, 5);
	CHECK_STR_EQ(s->syscalls[0].names.v[1], "write");
	CHECK_INT_EQ(s->syscalls[0].action, OCI_SCMP_ACT_ALLOW);
	CHECK_INT_EQ(s->syscalls[1].n_args, 2);
	CHECK_INT_EQ(s->syscalls[1].args[0].op, OCI_SCMP_CMP_EQ);
	CHECK_INT_EQ(s->syscalls[1].args[1].index, 5);
	CHECK(s->syscalls[1].args[1].value == UINT64_MAX);
	CHECK(s->syscalls[1].args[1].value_two == 4);
	CHECK_INT_EQ(s->syscalls[1].args[1].op, OCI_SCMP_CMP_MASKED_EQ);
	CHECK(s->syscalls[2].errno_ret.set && s->syscalls[2].errno_ret.v == 1);
	CHECK_INT_EQ(s->syscalls[3].action, OCI_SCMP_ACT_KILL_PROCESS);
	CHECK_INT_EQ(s->syscalls[4].action, OCI_SCMP_ACT_NOTIFY);
}

UNIT_TEST(minimal_config_defaults)
{
	_cleanup_config_ struct oci_config *cfg =
		parse_ok("{\"ociVersion\": \"1.0.0\"}");

	CHECK(cfg != NULL);
	if (!cfg)
		return;
	CHECK_STR_EQ(cfg->oci_version, "1.0.0");
	CHECK_STR_EQ(cfg->filename, "config.json");
	CHECK(!cfg->process.present);
	CHECK(!cfg->root.present);
	CHECK(!cfg->linux_.present);
	CHECK(cfg->linux_.seccomp == NULL);
	CHECK(cfg->hostname == NULL);
	CHECK_INT_EQ(cfg->n_mounts, 0);
	CHECK(oci_config_find_ns(cfg, OCI_NS_PID) == NULL);
	CHECK(oci_config_annotation(cfg, "x") == NULL);
}

UNIT_TEST(load_file_from_bundle_dir)
{
	char dir[] = "/tmp/test_parse.XXXXXX";
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *path = NULL;
	struct oci_config *cfg = NULL;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	path = ar_xasprintf("%s/config.json", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("{\"ociVersion\": \"1.2.0\", \"hostname\": \"h\"}", f);
	fclose(f);

	CHECK(oci_config_load_file(dir, &cfg, &err) == 0);
	if (cfg) {
		CHECK_STR_EQ(cfg->hostname, "h");
		CHECK_STR_EQ(cfg->filename, path);
		oci_config_free(cfg);
		cfg = NULL;
	}
	CHECK(oci_config_load_file(path, &cfg, &err) == 0);
	oci_config_free(cfg);
	cfg = NULL;

	/* errors name the file */
	f = fopen(path, "w");
	fputs("{\"ociVersion\": 7}", f);
	fclose(f);
	CHECK(oci_config_load_file(dir, &cfg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, path);
	CHECK_STR_CONTAINS(
		err.msg,
		"config.json: ociVersion: expected a string, got number");
	unlink(path);

	CHECK(oci_config_load_file(dir, &cfg, &err) < 0);
	CHECK_INT_EQ(err.code, ENOENT);
	CHECK_STR_CONTAINS(err.msg, "config.json");
	CHECK(mkfifo(path, 0600) == 0);
	CHECK(oci_config_load_file(dir, &cfg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "config.json: not a regular file");
	unlink(path);
	rmdir(dir);
	CHECK(oci_config_load_file(dir, &cfg, &err) < 0);
	CHECK_INT_EQ(err.code, ENOENT);
}

UNIT_TEST(unknown_properties_and_nulls_ignored)
{
	_cleanup_free_ char *t = json(
		"{'ociVersion': '1.2.0', 'x-unknown': [1, {'a': null}],"
		" 'hostname': null,"
		" 'process': {'cwd': '/', 'what': {'ever': true},"
		"   'user': {'uid': 1, 'gid': 2, 'newField': 'x'},"
		"   'apparmorProfile': null},"
		" 'linux': {'future': 1, 'seccomp': null,"
		"   'namespaces': [{'type': 'pid', 'extra': 3}],"
		"   'resources': {'memory': {'limit': 5, 'futureKnob': 'x'}}}}");
	_cleanup_config_ struct oci_config *cfg = parse_ok(t);

	CHECK(cfg != NULL);
	if (!cfg)
		return;
	CHECK(cfg->hostname == NULL);
	CHECK(cfg->process.apparmor_profile == NULL);
	CHECK_INT_EQ(cfg->process.user.uid, 1);
	CHECK(cfg->linux_.seccomp == NULL);
	CHECK_INT_EQ(cfg->linux_.n_namespaces, 1);
	CHECK(cfg->linux_.resources.memory.limit.v == 5);
}

UNIT_TEST(process_parse_standalone)
{
	_cleanup_free_ char *t =
		json("{'terminal': true, 'args': ['ls', '-l'], 'cwd': '/tmp',"
		     " 'env': ['A=b'], 'user': {'uid': 5, 'gid': 6},"
		     " 'capabilities': {'bounding': ['CAP_KILL']}}");
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *cfg = NULL;

	CHECK(oci_process_parse(t, strlen(t), "process.json", &cfg, &err) == 0);
	if (!cfg) {
		printf("# %s\n", err.msg);
		return;
	}
	CHECK(cfg->process.present);
	CHECK(cfg->process.terminal);
	CHECK_STR_EQ(cfg->process.args.v[1], "-l");
	CHECK_STR_EQ(cfg->process.cwd, "/tmp");
	CHECK_INT_EQ(cfg->process.user.gid, 6);
	CHECK(cfg->process.capabilities.mask[OCI_CAP_BOUNDING] == (1ULL << 5));
	CHECK(!cfg->process.capabilities.set_present[OCI_CAP_EFFECTIVE]);
	oci_config_free(cfg);
	cfg = NULL;

	free(t);
	t = json("{'args': ['ls'], 'user': {'uid': -1, 'gid': 0}, 'cwd': '/'}");
	CHECK(oci_process_parse(t, strlen(t), "process.json", &cfg, &err) < 0);
	CHECK_STR_CONTAINS(
		err.msg,
		"process.json: user.uid: expected an unsigned integer, got negative number -1");
	free(t);
	t = json("{'args': ['ls']}");
	CHECK(oci_process_parse(t, strlen(t), "p.json", &cfg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "p.json: cwd: missing required property");
	CHECK(oci_process_parse("[]", 2, "p.json", &cfg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "p.json: expected an object, got array");
	CHECK(cfg == NULL);
}

UNIT_TEST(enum_names)
{
	CHECK_STR_EQ(oci_ns_type_name(OCI_NS_PID), "pid");
	CHECK_STR_EQ(oci_ns_type_name(OCI_NS_NETWORK), "network");
	CHECK_STR_EQ(oci_ns_type_name(OCI_NS_MOUNT), "mount");
	CHECK_STR_EQ(oci_ns_type_name(OCI_NS_TIME), "time");
	CHECK_STR_EQ(oci_ns_type_name((enum oci_ns_type)99), "unknown");
	CHECK_STR_EQ(oci_hook_stage_name(OCI_HOOK_PRESTART), "prestart");
	CHECK_STR_EQ(oci_hook_stage_name(OCI_HOOK_CREATE_RUNTIME),
		     "createRuntime");
	CHECK_STR_EQ(oci_hook_stage_name(OCI_HOOK_POSTSTOP), "poststop");
	CHECK_STR_EQ(oci_seccomp_action_name(OCI_SCMP_ACT_KILL),
		     "SCMP_ACT_KILL");
	CHECK_STR_EQ(oci_seccomp_action_name(OCI_SCMP_ACT_NOTIFY),
		     "SCMP_ACT_NOTIFY");
	CHECK_STR_EQ(oci_seccomp_op_name(OCI_SCMP_CMP_MASKED_EQ),
		     "SCMP_CMP_MASKED_EQ");
	CHECK_STR_EQ(oci_seccomp_op_name(OCI_SCMP_CMP_NE), "SCMP_CMP_NE");
}

UNIT_TEST(config_new_and_arena)
{
	struct oci_config *cfg = oci_config_new();

	CHECK(cfg != NULL);
	cfg->hostname = oci_arena_strdup(&cfg->arena, "built");
	CHECK_STR_EQ(cfg->hostname, "built");
	oci_config_free(cfg);
	oci_config_free(NULL);
}

/* ------------------------------------------------------------- errors */

UNIT_TEST(error_wrong_types)
{
	FAILS("{'ociVersion': 1}",
	      "config.json: ociVersion: expected a string, got number");
	FAILS("[]", "config.json: expected an object, got array");
	FAILS("'x'", "config.json: expected an object, got string");
	FAILS(BASE("'process': 'x'"),
	      "config.json: process: expected an object, got string");
	FAILS(PROC("'terminal': 'yes'"),
	      "config.json: process.terminal: expected a boolean, got string");
	FAILS(PROC("'args': ['a', 1]"),
	      "config.json: process.args[1]: expected a string, got number");
	FAILS(PROC("'args': 'sh'"),
	      "config.json: process.args: expected an array, got string");
	FAILS(PROC("'env': [null]"),
	      "config.json: process.env[0]: expected a string, got null");
	FAILS(PROC("'rlimits': [{'type': 'RLIMIT_CORE', 'soft': 1, 'hard': 1},"
		   " {'type': 'RLIMIT_AS', 'soft': 1, 'hard': 1},"
		   " {'type': 'RLIMIT_NOFILE', 'soft': 1, 'hard': '1'}]"),
	      "config.json: process.rlimits[2].hard: expected an unsigned integer, got string");
	FAILS(PROC("'user': {'uid': true, 'gid': 0}"),
	      "config.json: process.user.uid: expected an unsigned integer, got boolean");
	FAILS(PROC("'user': {'uid': 0, 'gid': 0, 'additionalGids': [1, 'x']}"),
	      "config.json: process.user.additionalGids[1]: expected an unsigned integer, got string");
	FAILS(PROC("'capabilities': {'bounding': 'CAP_KILL'}"),
	      "config.json: process.capabilities.bounding: expected an array, got string");
	FAILS(PROC("'oomScoreAdj': 1.5"),
	      "config.json: process.oomScoreAdj: expected an integer, got 1.5");
	FAILS(BASE("'root': []"),
	      "config.json: root: expected an object, got array");
	FAILS(BASE("'root': {'path': 'r', 'readonly': 1}"),
	      "config.json: root.readonly: expected a boolean, got number");
	FAILS(BASE("'mounts': {}"),
	      "config.json: mounts: expected an array, got object");
	FAILS(BASE("'mounts': [{'destination': '/a'}, {'destination': '/b', 'options': [true]}]"),
	      "config.json: mounts[1].options[0]: expected a string, got boolean");
	FAILS(BASE("'hooks': {'prestart': {}}"),
	      "config.json: hooks.prestart: expected an array, got object");
	FAILS(BASE("'hooks': {'poststop': [{'path': '/x', 'timeout': '5'}]}"),
	      "config.json: hooks.poststop[0].timeout: expected an integer, got string");
	FAILS(BASE("'annotations': {'a': 'b', 'io.x/y': 1}"),
	      "config.json: annotations[\"io.x/y\"]: expected a string, got number");
	FAILS(BASE("'annotations': ['a']"),
	      "config.json: annotations: expected an object, got array");
	FAILS(BASE("'hostname': 5"),
	      "config.json: hostname: expected a string, got number");
	FAILS(LINUX("'namespaces': [{'type': 'pid'}, {'type': 4}]"),
	      "config.json: linux.namespaces[1].type: expected a string, got number");
	FAILS(LINUX("'resources': {'memory': {'limit': '1G'}}"),
	      "config.json: linux.resources.memory.limit: expected an integer, got string");
	FAILS(LINUX("'resources': {'cpu': {'cpus': 3}}"),
	      "config.json: linux.resources.cpu.cpus: expected a string, got number");
	FAILS(LINUX("'resources': {'devices': [{'allow': 'yes'}]}"),
	      "config.json: linux.resources.devices[0].allow: expected a boolean, got string");
	FAILS(LINUX("'resources': {'blockIO': {'throttleReadBpsDevice': [{'major': 8, 'minor': 0, 'rate': -1}]}}"),
	      "config.json: linux.resources.blockIO.throttleReadBpsDevice[0].rate: expected an unsigned integer, got negative number -1");
	FAILS(LINUX("'resources': {'unified': {'memory.max': 5}}"),
	      "config.json: linux.resources.unified[\"memory.max\"]: expected a string, got number");
	FAILS(LINUX("'resources': {'rdma': {'mlx': {'hcaHandles': -3}}}"),
	      "config.json: linux.resources.rdma.mlx.hcaHandles: expected an unsigned integer, got negative number -3");
	FAILS(LINUX("'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', 'syscalls': [{'names': ['a'], 'action': 'SCMP_ACT_ERRNO', 'args': [{'index': 0, 'value': 1, 'op': 'SCMP_CMP_XX'}]}]}"),
	      "config.json: linux.seccomp.syscalls[0].args[0].op: unknown operator \"SCMP_CMP_XX\"");
	FAILS(LINUX("'seccomp': {'defaultAction': 'SCMP_ACT_BOGUS'}"),
	      "config.json: linux.seccomp.defaultAction: unknown seccomp action \"SCMP_ACT_BOGUS\"");
	FAILS(LINUX("'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', 'architectures': [1]}"),
	      "config.json: linux.seccomp.architectures[0]: expected a string, got number");
	FAILS(LINUX("'sysctl': {'a': true}"),
	      "config.json: linux.sysctl.a: expected a string, got boolean");
	FAILS(LINUX("'maskedPaths': '/proc'"),
	      "config.json: linux.maskedPaths: expected an array, got string");
	FAILS(LINUX("'personality': {'domain': 'LINUX64'}"),
	      "config.json: linux.personality.domain: unknown personality domain \"LINUX64\"");
	FAILS(BASE("'linux': 5"),
	      "config.json: linux: expected an object, got number");
}

UNIT_TEST(error_missing_required)
{
	FAILS("{}", "config.json: ociVersion: missing required property");
	FAILS("{'ociVersion': null}",
	      "config.json: ociVersion: missing required property");
	FAILS(BASE("'root': {'readonly': true}"),
	      "config.json: root.path: missing required property");
	FAILS(BASE("'process': {'args': ['sh']}"),
	      "config.json: process.cwd: missing required property");
	FAILS(PROC("'user': {'uid': 0}"),
	      "config.json: process.user.gid: missing required property");
	FAILS(PROC("'user': {'gid': 0}"),
	      "config.json: process.user.uid: missing required property");
	FAILS(PROC("'rlimits': [{'type': 'RLIMIT_NOFILE', 'hard': 1}]"),
	      "config.json: process.rlimits[0].soft: missing required property");
	FAILS(PROC("'rlimits': [{'soft': 1, 'hard': 1}]"),
	      "config.json: process.rlimits[0].type: missing required property");
	FAILS(PROC("'consoleSize': {'height': 1}"),
	      "config.json: process.consoleSize.width: missing required property");
	FAILS(PROC("'ioPriority': {'priority': 1}"),
	      "config.json: process.ioPriority.class: missing required property");
	FAILS(PROC("'scheduler': {'nice': 1}"),
	      "config.json: process.scheduler.policy: missing required property");
	FAILS(BASE("'mounts': [{'destination': '/a'}, {'source': '/b'}]"),
	      "config.json: mounts[1].destination: missing required property");
	FAILS(BASE("'mounts': [{'destination': '/a', 'uidMappings': [{'containerID': 0, 'size': 1}]}]"),
	      "config.json: mounts[0].uidMappings[0].hostID: missing required property");
	FAILS(BASE("'hooks': {'createRuntime': [{'path': '/a'}, {'args': ['x']}]}"),
	      "config.json: hooks.createRuntime[1].path: missing required property");
	FAILS(LINUX("'namespaces': [{'path': '/proc/1/ns/net'}]"),
	      "config.json: linux.namespaces[0].type: missing required property");
	FAILS(LINUX("'uidMappings': [{'containerID': 0, 'hostID': 0}]"),
	      "config.json: linux.uidMappings[0].size: missing required property");
	FAILS(LINUX("'gidMappings': [{'hostID': 0, 'size': 1}]"),
	      "config.json: linux.gidMappings[0].containerID: missing required property");
	FAILS(LINUX("'devices': [{'path': '/dev/x', 'major': 1, 'minor': 1}]"),
	      "config.json: linux.devices[0].type: missing required property");
	FAILS(LINUX("'devices': [{'type': 'c', 'major': 1, 'minor': 1}]"),
	      "config.json: linux.devices[0].path: missing required property");
	FAILS(LINUX("'devices': [{'type': 'c', 'path': '/dev/x', 'minor': 1}]"),
	      "config.json: linux.devices[0].major: missing required property");
	FAILS(LINUX("'devices': [{'type': 'b', 'path': '/dev/x', 'major': 1}]"),
	      "config.json: linux.devices[0].minor: missing required property");
	FAILS(LINUX("'resources': {'pids': {}}"),
	      "config.json: linux.resources.pids.limit: missing required property");
	FAILS(LINUX("'resources': {'devices': [{'access': 'r'}]}"),
	      "config.json: linux.resources.devices[0].allow: missing required property");
	FAILS(LINUX("'resources': {'hugepageLimits': [{'pageSize': '2MB'}]}"),
	      "config.json: linux.resources.hugepageLimits[0].limit: missing required property");
	FAILS(LINUX("'resources': {'network': {'priorities': [{'name': 'eth0'}]}}"),
	      "config.json: linux.resources.network.priorities[0].priority: missing required property");
	FAILS(LINUX("'resources': {'blockIO': {'weightDevice': [{'minor': 0}]}}"),
	      "config.json: linux.resources.blockIO.weightDevice[0].major: missing required property");
	FAILS(LINUX("'seccomp': {'syscalls': []}"),
	      "config.json: linux.seccomp.defaultAction: missing required property");
	FAILS(LINUX("'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', 'syscalls': [{'action': 'SCMP_ACT_ALLOW'}]}"),
	      "config.json: linux.seccomp.syscalls[0].names: missing required property");
	FAILS(LINUX("'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', 'syscalls': [{'names': ['read']}]}"),
	      "config.json: linux.seccomp.syscalls[0].action: missing required property");
	FAILS(LINUX("'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', 'syscalls': [{'names': ['read'], 'action': 'SCMP_ACT_ALLOW', 'args': [{'index': 0, 'op': 'SCMP_CMP_EQ'}]}]}"),
	      "config.json: linux.seccomp.syscalls[0].args[0].value: missing required property");

	/* a device of type p needs no numbers */
	_cleanup_free_ char *t =
		json(LINUX("'devices': [{'type': 'p', 'path': '/dev/f'}]"));
	_cleanup_config_ struct oci_config *cfg = parse_ok(t);
	CHECK(cfg != NULL);
}

UNIT_TEST(error_bad_values)
{
	FAILS(PROC("'capabilities': {'bounding': ['CAP_KILL', 'CAP_FOO']}"),
	      "config.json: process.capabilities.bounding[1]: unknown capability \"CAP_FOO\"");
	FAILS(PROC("'capabilities': {'ambient': ['kill']}"),
	      "config.json: process.capabilities.ambient[0]: unknown capability \"kill\"");
	FAILS(PROC("'rlimits': [{'type': 'RLIMIT_BOGUS', 'soft': 1, 'hard': 1}]"),
	      "config.json: process.rlimits[0].type: unknown rlimit type \"RLIMIT_BOGUS\"");
	FAILS(PROC("'rlimits': [{'type': 'RLIMIT_AS', 'soft': 1, 'hard': 1}, {'type': 'RLIMIT_AS', 'soft': 1, 'hard': 1}]"),
	      "config.json: process.rlimits[1].type: rlimit RLIMIT_AS is set twice");
	FAILS(PROC("'rlimits': [{'type': 'RLIMIT_AS', 'soft': 2, 'hard': 1}]"),
	      "config.json: process.rlimits[0]: soft limit 2 is greater than hard limit 1");
	FAILS(BASE("'process': {'cwd': 'relative'}"),
	      "config.json: process.cwd: must be an absolute path");
	FAILS(PROC("'ioPriority': {'class': 'IOPRIO_CLASS_NONE'}"),
	      "config.json: process.ioPriority.class: unknown I/O priority class \"IOPRIO_CLASS_NONE\"");
	FAILS(PROC("'ioPriority': {'class': 'IOPRIO_CLASS_BE', 'priority': 8}"),
	      "config.json: process.ioPriority.priority: priority 8 is out of range");
	FAILS(PROC("'scheduler': {'policy': 'SCHED_FAST'}"),
	      "config.json: process.scheduler.policy: unknown scheduler policy \"SCHED_FAST\"");
	FAILS(PROC("'scheduler': {'policy': 'SCHED_OTHER', 'flags': ['SCHED_FLAG_X']}"),
	      "config.json: process.scheduler.flags[0]: unknown scheduler flag \"SCHED_FLAG_X\"");
	FAILS(PROC("'execCPUAffinity': {'final': '1;2'}"),
	      "config.json: process.execCPUAffinity.final: invalid CPU list \"1;2\"");
	FAILS(PROC("'oomScoreAdj': 1001"),
	      "config.json: process.oomScoreAdj: 1001 is out of range (-1000 to 1000)");
	FAILS(BASE("'hooks': {'prestart': [{'path': '/a', 'timeout': 0}]}"),
	      "config.json: hooks.prestart[0].timeout: timeout must be at least 1 second, got 0");
	FAILS(BASE("'hooks': {'startContainer': [{'path': '/a', 'timeout': -4}]}"),
	      "config.json: hooks.startContainer[0].timeout: timeout must be at least 1");
	FAILS(BASE("'hooks': {'poststart': [{'path': 'relative/hook'}]}"),
	      "config.json: hooks.poststart[0].path: must be an absolute path, got \"relative/hook\"");
	FAILS(LINUX("'namespaces': [{'type': 'pid'}, {'type': 'foo'}]"),
	      "config.json: linux.namespaces[1].type: unknown namespace type \"foo\"");
	FAILS(LINUX("'namespaces': [{'type': 'pid'}, {'type': 'uts'}, {'type': 'pid', 'path': '/x'}]"),
	      "config.json: linux.namespaces[2].type: duplicate namespace type \"pid\"");
	FAILS(LINUX("'devices': [{'type': 'x', 'path': '/dev/x'}]"),
	      "config.json: linux.devices[0].type: unknown device type \"x\"");
	FAILS(LINUX("'devices': [{'type': 'cc', 'path': '/dev/x'}]"),
	      "config.json: linux.devices[0].type: unknown device type \"cc\"");
	FAILS(LINUX("'rootfsPropagation': 'sideways'"),
	      "config.json: linux.rootfsPropagation: unknown propagation \"sideways\"");
	FAILS(LINUX("'resources': {'devices': [{'allow': true, 'type': 'z'}]}"),
	      "config.json: linux.resources.devices[0].type: unknown device type \"z\"");
	FAILS(LINUX("'resources': {'devices': [{'allow': true, 'access': 'rwx'}]}"),
	      "config.json: linux.resources.devices[0].access: invalid access \"rwx\"");
	FAILS(LINUX("'resources': {'hugepageLimits': [{'pageSize': '2mb', 'limit': 1}]}"),
	      "config.json: linux.resources.hugepageLimits[0].pageSize: invalid page size \"2mb\"");
	FAILS(LINUX("'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', 'syscalls': [{'names': [], 'action': 'SCMP_ACT_ALLOW'}]}"),
	      "config.json: linux.seccomp.syscalls[0].names: must not be empty");
	FAILS(LINUX("'seccomp': {'defaultAction': 'SCMP_ACT_ALLOW', 'syscalls': [{'names': ['x'], 'action': 'SCMP_ACT_ALLOW', 'args': [{'index': 6, 'value': 1, 'op': 'SCMP_CMP_EQ'}]}]}"),
	      "config.json: linux.seccomp.syscalls[0].args[0].index: argument index 6 is out of range");

	/* accepted spellings */
	static const char *const ok[] = {
		LINUX("'rootfsPropagation': 'rprivate'"),
		LINUX("'rootfsPropagation': ''"),
		LINUX("'rootfsPropagation': 'unbindable'"),
		PROC("'capabilities': {'bounding': []}"),
		PROC("'execCPUAffinity': {'initial': ''}"),
		LINUX("'personality': {'domain': 'LINUX'}"),
	};
	for (size_t i = 0; i < AR_ARRAY_SIZE(ok); i++) {
		_cleanup_free_ char *t = json("%s", ok[i]);
		struct oci_config *cfg = parse_ok(t);

		CHECK(cfg != NULL);
		if (cfg && i == 1)
			CHECK(cfg->linux_.rootfs_propagation == NULL);
		oci_config_free(cfg);
	}
}

UNIT_TEST(error_numbers_out_of_range)
{
	FAILS(PROC("'user': {'uid': -1, 'gid': 0}"),
	      "config.json: process.user.uid: expected an unsigned integer, got negative number -1");
	FAILS(PROC("'user': {'uid': 0, 'gid': 4294967296}"),
	      "config.json: process.user.gid: number 4294967296 is out of range (0 to 4294967295)");
	FAILS(PROC("'user': {'uid': 0, 'gid': 1e3}"),
	      "config.json: process.user.gid: expected an unsigned integer, got 1e3");
	FAILS(PROC("'user': {'uid': 0, 'gid': 1.0}"),
	      "config.json: process.user.gid: expected an unsigned integer, got 1.0");
	FAILS(PROC("'rlimits': [{'type': 'RLIMIT_AS', 'soft': 1, 'hard': 18446744073709551616}]"),
	      "config.json: process.rlimits[0].hard: number 18446744073709551616 is out of range (0 to 18446744073709551615)");
	FAILS(PROC("'rlimits': [{'type': 'RLIMIT_AS', 'soft': 1, 'hard': 99999999999999999999999999}]"),
	      "config.json: process.rlimits[0].hard: number 99999999999999999999999999 is out of range");
	FAILS(PROC("'rlimits': [{'type': 'RLIMIT_AS', 'soft': -0.5, 'hard': 1}]"),
	      "config.json: process.rlimits[0].soft: expected an unsigned integer, got -0.5");
	FAILS(LINUX("'resources': {'memory': {'limit': 9223372036854775808}}"),
	      "config.json: linux.resources.memory.limit: number 9223372036854775808 is out of range (-9223372036854775808 to 9223372036854775807)");
	FAILS(LINUX("'resources': {'memory': {'swap': -9223372036854775809}}"),
	      "config.json: linux.resources.memory.swap: number -9223372036854775809 is out of range");
	FAILS(LINUX("'resources': {'cpu': {'quota': 1e400}}"),
	      "config.json: linux.resources.cpu.quota: expected an integer, got 1e400");
	FAILS(PROC("'oomScoreAdj': 2147483648"),
	      "config.json: process.oomScoreAdj: number 2147483648 is out of range (-2147483648 to 2147483647)");
	FAILS(PROC("'scheduler': {'policy': 'SCHED_OTHER', 'nice': -2147483649}"),
	      "config.json: process.scheduler.nice: number -2147483649 is out of range");
	FAILS(BASE("'hooks': {'prestart': [{'path': '/a', 'timeout': 2147483648}]}"),
	      "config.json: hooks.prestart[0].timeout: number 2147483648 is out of range");
	FAILS(LINUX("'resources': {'blockIO': {'weight': 65536}}"),
	      "config.json: linux.resources.blockIO.weight: number 65536 is out of range (0 to 65535)");
	FAILS(LINUX("'resources': {'blockIO': {'weightDevice': [{'major': 1, 'minor': 2, 'leafWeight': 70000}]}}"),
	      "config.json: linux.resources.blockIO.weightDevice[0].leafWeight: number 70000 is out of range (0 to 65535)");
	FAILS(LINUX("'timeOffsets': {'monotonic': {'secs': 1, 'nanosecs': 1000000000}}"),
	      "config.json: linux.timeOffsets.monotonic.nanosecs: number 1000000000 is out of range (0 to 999999999)");
	FAILS(LINUX("'uidMappings': [{'containerID': 0, 'hostID': 0, 'size': 4294967296}]"),
	      "config.json: linux.uidMappings[0].size: number 4294967296 is out of range");
	FAILS(LINUX("'devices': [{'type': 'c', 'path': '/dev/x', 'major': 9223372036854775808, 'minor': 0}]"),
	      "config.json: linux.devices[0].major: number 9223372036854775808 is out of range");
	FAILS(LINUX("'seccomp': {'defaultAction': 'SCMP_ACT_ERRNO', 'defaultErrnoRet': -1}"),
	      "config.json: linux.seccomp.defaultErrnoRet: expected an unsigned integer, got negative number -1");

	/* the edges themselves are fine */
	_cleanup_free_ char *t = json(BASE(
		"'process': {'cwd': '/', 'user': {'uid': 4294967295, 'gid': -0},"
		" 'oomScoreAdj': -1000,"
		" 'rlimits': [{'type': 'RLIMIT_AS', 'soft': 0, 'hard': 18446744073709551615}]},"
		" 'linux': {'resources': {'memory': {'limit': 9223372036854775807,"
		"   'swap': -9223372036854775808}, 'pids': {'limit': -1}}}"));
	_cleanup_config_ struct oci_config *cfg = parse_ok(t);
	CHECK(cfg != NULL);
	if (!cfg)
		return;
	CHECK(cfg->process.user.uid == UINT32_MAX);
	CHECK(cfg->process.user.gid == 0);
	CHECK(cfg->process.rlimits[0].hard == UINT64_MAX);
	CHECK(cfg->linux_.resources.memory.limit.v == INT64_MAX);
	CHECK(cfg->linux_.resources.memory.swap.v == INT64_MIN);
	CHECK(cfg->linux_.resources.pids.limit == -1);
}

UNIT_TEST(error_embedded_nul)
{
	FAILS(PROC("'args': ['/bin/sh', 'a\\u0000b']"),
	      "config.json: process.args[1]: string contains a NUL byte");
	FAILS(BASE("'root': {'path': 'root\\u0000fs'}"),
	      "config.json: root.path: string contains a NUL byte");
	FAILS(BASE("'mounts': [{'destination': '/a\\u0000'}]"),
	      "config.json: mounts[0].destination: string contains a NUL byte");
	FAILS(PROC("'env': ['A=\\u0000']"),
	      "config.json: process.env[0]: string contains a NUL byte");
	FAILS(BASE("'annotations': {'a\\u0000b': 'x'}"),
	      "property name contains a NUL byte");
	/* a raw NUL byte in the text is a JSON error, not a truncation */
	const char raw[] = "{\"ociVersion\": \"1.2.0\"}\0garbage";
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *cfg = NULL;

	CHECK(oci_config_parse(raw, sizeof(raw) - 1, "config.json", &cfg,
			       &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "config.json: invalid JSON");
	CHECK(cfg == NULL);
	oci_config_free(cfg);
}

UNIT_TEST(error_malformed_json)
{
	FAILS("", "config.json: ");
	FAILS("{", "config.json: invalid JSON at line 1");
	FAILS("{'ociVersion': '1.2.0',}",
	      "config.json: invalid JSON at line 1");
	FAILS("{'ociVersion': '1.2.0'} {}", "config.json: invalid JSON");
	FAILS("{'ociVersion': '1.2.0'} x", "config.json: invalid JSON");
	FAILS("{'ociVersion' '1.2.0'}", "config.json: invalid JSON");
	FAILS("{\n'ociVersion': '1.2.0',\n'hostname': 'a\n}",
	      "config.json: invalid JSON at line 3");
	FAILS("{'ociVersion': 01}", "config.json: invalid JSON");
	FAILS("{'ociVersion': '\\x'}", "config.json: invalid JSON");
	FAILS("{'ociVersion': '1' /* c */}", "config.json: invalid JSON");
	FAILS("{'ociVersion': '\xff\xfe'}", "config.json: invalid JSON");
	FAILS("{'ociVersion': '1.2.0'", "premature EOF");
}

UNIT_TEST(truncated_config_never_crashes)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, last;
	int ok_count = 0, fail_count = 0;

	CHECK(ar_read_file_at(AT_FDCWD, UNIT_DATA_DIR "/full-config.json",
			      1 << 20, &buf, &len, &err) == 0);
	if (!buf)
		return;
	last = len;
	while (last > 0 && buf[last - 1] != '}')
		last--;
	CHECK(last > 100);
	/* every prefix that stops before the final '}' is invalid */
	for (size_t n = 0; n + 1 < last; n += 7) {
		_cleanup_free_ char *copy = ar_xmalloc(n + 1);
		struct oci_config *cfg = NULL;

		memcpy(copy, buf, n);
		copy[n] = '\0';
		if (oci_config_parse(copy, n, "config.json", &cfg, &err) == 0) {
			printf("# prefix of %zu bytes parsed\n", n);
			ok_count++;
			oci_config_free(cfg);
		} else {
			if (strncmp(err.msg, "config.json: ", 13) != 0) {
				printf("# bad message: %s\n", err.msg);
				ok_count++;
			}
			fail_count++;
		}
	}
	CHECK_INT_EQ(ok_count, 0);
	CHECK(fail_count > 100);
}

/* Random byte changes to a valid config: errors or success, never a crash
 * (run under ASan/UBSan by the sanitizer build). */
UNIT_TEST(mutated_config_never_crashes)
{
	static const char junk[] = "{}[]\",:0-1.eE\\u \n\xff\x00tfn9";
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *buf = NULL;
	unsigned int seed = 12345;
	size_t len = 0;
	int parsed = 0, failed = 0;

	CHECK(ar_read_file_at(AT_FDCWD, UNIT_DATA_DIR "/full-config.json",
			      1 << 20, &buf, &len, &err) == 0);
	if (!buf)
		return;
	for (int iter = 0; iter < 3000; iter++) {
		_cleanup_free_ char *copy = ar_xmalloc(len + 1);
		struct oci_config *cfg = NULL;
		int changes = 1 + rand_r(&seed) % 4;

		memcpy(copy, buf, len + 1);
		for (int k = 0; k < changes; k++)
			copy[rand_r(&seed) % len] =
				junk[rand_r(&seed) % (sizeof(junk) - 1)];
		if (oci_config_parse(copy, len, "config.json", &cfg, &err) ==
		    0) {
			parsed++;
			oci_config_free(cfg);
		} else {
			failed++;
			CHECK(strncmp(err.msg, "config.json: ", 13) == 0);
		}
	}
	printf("# %d parsed, %d refused\n", parsed, failed);
	CHECK(failed > 1000);
}

static char *nested(size_t depth)
{
	size_t prefix = strlen("{\"ociVersion\": \"1.2.0\", \"x\": ");
	char *s = ar_xmalloc(prefix + 2 * depth + 2);
	char *p = s;

	p += sprintf(p, "{\"ociVersion\": \"1.2.0\", \"x\": ");
	memset(p, '[', depth);
	p += depth;
	memset(p, ']', depth);
	p += depth;
	*p++ = '}';
	*p = '\0';
	return s;
}

UNIT_TEST(deep_nesting_refused)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *cfg = NULL;

	/* the top-level object is level 1: 63 arrays fit, 64 do not */
	_cleanup_free_ char *fits = nested(OCI_CONFIG_MAX_DEPTH - 1);
	CHECK(oci_config_parse(fits, strlen(fits), "config.json", &cfg, &err) ==
	      0);
	oci_config_free(cfg);
	cfg = NULL;

	_cleanup_free_ char *deep = nested(OCI_CONFIG_MAX_DEPTH);
	CHECK(oci_config_parse(deep, strlen(deep), "config.json", &cfg, &err) <
	      0);
	CHECK_STR_CONTAINS(err.msg, "config.json: x");
	CHECK_STR_CONTAINS(err.msg, "nesting deeper than 64 levels");

	_cleanup_free_ char *huge = nested(1000000);
	CHECK(oci_config_parse(huge, strlen(huge), "config.json", &cfg, &err) <
	      0);
	CHECK_STR_CONTAINS(err.msg, "nesting deeper than 64 levels");

	/* objects too, and unterminated */
	size_t n = 200000;
	_cleanup_free_ char *objs = ar_xmalloc(n * 5 + 1);
	for (size_t i = 0; i < n; i++)
		memcpy(objs + i * 5, "{\"a\":", 5);
	objs[n * 5] = '\0';
	CHECK(oci_config_parse(objs, n * 5, "config.json", &cfg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "config.json: a.a.a.a");
	CHECK_STR_CONTAINS(err.msg, "nesting deeper than 64 levels");
	CHECK(cfg == NULL);
}

UNIT_TEST(huge_inputs_refused)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *cfg = NULL;
	size_t n = OCI_CONFIG_MAX_STRING + 1;
	size_t prefix = strlen("{\"ociVersion\": \"1.2.0\", \"hostname\": \"");
	_cleanup_free_ char *s = ar_xmalloc(prefix + n + 3);

	memcpy(s, "{\"ociVersion\": \"1.2.0\", \"hostname\": \"", prefix);
	memset(s + prefix, 'a', n);
	memcpy(s + prefix + n, "\"}", 3);
	CHECK(oci_config_parse(s, strlen(s), "config.json", &cfg, &err) < 0);
	CHECK_STR_CONTAINS(
		err.msg,
		"config.json: hostname: string of 4194305 bytes is longer than the limit");

	/* exactly the limit is fine */
	memmove(s + prefix + n - 1, s + prefix + n, 3);
	CHECK(oci_config_parse(s, strlen(s), "config.json", &cfg, &err) == 0);
	if (cfg)
		CHECK_INT_EQ(strlen(cfg->hostname), OCI_CONFIG_MAX_STRING);
	oci_config_free(cfg);
	cfg = NULL;

	/* the length check comes before anything reads the buffer */
	CHECK(oci_config_parse("{}", (size_t)OCI_CONFIG_MAX_FILE_SIZE + 1,
			       "config.json", &cfg, &err) < 0);
	CHECK_INT_EQ(err.code, EFBIG);
	CHECK_STR_CONTAINS(err.msg, "config.json: ");

	/* too many values */
	size_t count = (1u << 20) + 10;
	_cleanup_free_ char *many = ar_xmalloc(count * 2 + 64);
	char *p = many + sprintf(many, "{\"ociVersion\": \"1\", \"x\": [");
	for (size_t i = 0; i < count; i++) {
		*p++ = '0';
		*p++ = ',';
	}
	memcpy(p - 1, "]}", 3);
	CHECK(oci_config_parse(many, strlen(many), "config.json", &cfg, &err) <
	      0);
	CHECK_STR_CONTAINS(err.msg, "config.json: x[");
	CHECK_STR_CONTAINS(err.msg, "JSON values");
}

UNIT_TEST(error_path_of_odd_keys_is_quoted)
{
	FAILS(BASE("'annotations': {'with space': 1}"),
	      "config.json: annotations[\"with space\"]: expected a string");
	FAILS(BASE("'annotations': {'quote\\\"d': 1}"),
	      "config.json: annotations[\"quote?d\"]: expected a string");
	FAILS(LINUX("'sysctl': {'net.core.somaxconn': 1}"),
	      "config.json: linux.sysctl[\"net.core.somaxconn\"]: expected a string, got number");
}

UNIT_MAIN()
