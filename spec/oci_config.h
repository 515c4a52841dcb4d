/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The OCI runtime configuration (config.json, runtime-spec 1.2, Linux
 * platform) as C structs.
 *
 * spec/ turns JSON into these validated structs and knows nothing about
 * namespaces or mounts; the runtime never touches yajl.
 *
 * Memory: every string and array hanging off a struct oci_config is
 * allocated from the config's arena (cfg->arena) and freed at once by
 * oci_config_free(). Code that builds or edits a config in C (e.g. the
 * sandbox) allocates with oci_arena_* so ownership stays in one place.
 *
 * Optional scalars use the oci_opt_* wrappers: .set tells whether the key
 * was present. Arrays are pointer + count (n_*); string vectors are also
 * NULL-terminated so they can be passed to execve directly.
 */
#ifndef AGENTRUN_OCI_CONFIG_H
#define AGENTRUN_OCI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

struct ar_error;

struct oci_opt_u64 {
	bool set;
	uint64_t v;
};
struct oci_opt_i64 {
	bool set;
	int64_t v;
};
struct oci_opt_u32 {
	bool set;
	uint32_t v;
};
struct oci_opt_i32 {
	bool set;
	int32_t v;
};
struct oci_opt_bool {
	bool set;
	bool v;
};

/* NULL-terminated vector of strings plus its length. */
struct oci_strv {
	char **v; /* v[n] == NULL; v may be NULL when n == 0 */
	size_t n;
};

struct oci_kv {
	char *key;
	char *value;
};

struct oci_kv_list {
	struct oci_kv *items;
	size_t n;
};

/* ---- process ---- */

enum oci_cap_set {
	OCI_CAP_BOUNDING = 0,
	OCI_CAP_EFFECTIVE,
	OCI_CAP_INHERITABLE,
	OCI_CAP_PERMITTED,
	OCI_CAP_AMBIENT,
	OCI_CAP_NSETS
};

struct oci_capabilities {
	bool present; /* "capabilities" key present */
	bool set_present[OCI_CAP_NSETS];
	struct oci_strv names[OCI_CAP_NSETS]; /* as written: "CAP_SYS_ADMIN" */
	uint64_t mask[OCI_CAP_NSETS]; /* bit N = capability number N */
};

struct oci_rlimit {
	char *type; /* "RLIMIT_NOFILE" */
	int resource; /* RLIMIT_NOFILE */
	uint64_t soft;
	uint64_t hard;
};

struct oci_user {
	uint32_t uid;
	uint32_t gid;
	struct oci_opt_u32 umask;
	uint32_t *additional_gids;
	size_t n_additional_gids;
	char *username; /* Windows only; kept, not used */
};

struct oci_console_size {
	bool set;
	uint32_t height;
	uint32_t width;
};

struct oci_io_priority {
	bool set;
	int klass; /* IOPRIO_CLASS_RT=1, BE=2, IDLE=3 */
	char *class_name;
	int32_t priority;
};

struct oci_scheduler {
	bool set;
	char *policy_name; /* "SCHED_OTHER" ... */
	int policy; /* SCHED_* value */
	struct oci_opt_i32 nice;
	struct oci_opt_i32 priority;
	struct oci_strv flags; /* "SCHED_FLAG_RESET_ON_FORK" ... */
	struct oci_opt_u64 runtime;
	struct oci_opt_u64 deadline;
	struct oci_opt_u64 period;
};

struct oci_process {
	bool present;
	bool terminal;
	struct oci_console_size console_size;
	struct oci_user user;
	struct oci_strv args;
	char *command_line; /* Windows only */
	struct oci_strv env;
	char *cwd;
	struct oci_capabilities capabilities;
	struct oci_rlimit *rlimits;
	size_t n_rlimits;
	bool no_new_privileges;
	char *apparmor_profile;
	struct oci_opt_i32 oom_score_adj;
	char *selinux_label;
	struct oci_io_priority io_priority;
	struct oci_scheduler scheduler;
	char *exec_cpu_affinity_initial;
	char *exec_cpu_affinity_final;
};

/* ---- root, mounts ---- */

struct oci_root {
	bool present;
	char *path;
	bool readonly;
};

struct oci_id_mapping {
	uint32_t container_id;
	uint32_t host_id;
	uint32_t size;
};

struct oci_id_mappings {
	struct oci_id_mapping *items;
	size_t n;
};

struct oci_mount {
	char *destination;
	char *type; /* may be NULL */
	char *source; /* may be NULL */
	struct oci_strv options;
	struct oci_id_mappings uid_mappings; /* idmapped mounts */
	struct oci_id_mappings gid_mappings;
};

/* ---- hooks ---- */

enum oci_hook_stage {
	OCI_HOOK_PRESTART = 0,
	OCI_HOOK_CREATE_RUNTIME,
	OCI_HOOK_CREATE_CONTAINER,
	OCI_HOOK_START_CONTAINER,
	OCI_HOOK_POSTSTART,
	OCI_HOOK_POSTSTOP,
	OCI_HOOK_NSTAGES
};

struct oci_hook {
	char *path;
	struct oci_strv args;
	struct oci_strv env;
	struct oci_opt_i32 timeout; /* seconds, > 0 when set */
};

struct oci_hook_list {
	struct oci_hook *items;
	size_t n;
};

/* ---- linux ---- */

enum oci_ns_type {
	OCI_NS_PID = 0,
	OCI_NS_NETWORK,
	OCI_NS_MOUNT,
	OCI_NS_IPC,
	OCI_NS_UTS,
	OCI_NS_USER,
	OCI_NS_CGROUP,
	OCI_NS_TIME,
	OCI_NS_NTYPES
};

struct oci_namespace {
	enum oci_ns_type type;
	int clone_flag; /* CLONE_NEWPID ... */
	char *path; /* NULL: create a new namespace; else join it */
};

struct oci_device {
	char *path;
	char type; /* 'c', 'b', 'u' or 'p' */
	int64_t major; /* unused for 'p' */
	int64_t minor;
	struct oci_opt_u32 file_mode;
	struct oci_opt_u32 uid;
	struct oci_opt_u32 gid;
};

struct oci_device_cgroup {
	bool allow;
	char *type; /* "a", "c", "b"; NULL = all */
	struct oci_opt_i64 major;
	struct oci_opt_i64 minor;
	char *access; /* "rwm" subset; NULL = all */
};

struct oci_weight_device {
	int64_t major;
	int64_t minor;
	struct oci_opt_u32 weight; /* uint16 range checked */
	struct oci_opt_u32 leaf_weight;
};

struct oci_throttle_device {
	int64_t major;
	int64_t minor;
	uint64_t rate;
};

struct oci_throttle_list {
	struct oci_throttle_device *items;
	size_t n;
};

struct oci_hugepage_limit {
	char *page_size; /* "2MB" */
	uint64_t limit;
};

struct oci_net_priority {
	char *name;
	uint32_t priority;
};

struct oci_rdma_limit {
	char *device;
	struct oci_opt_u32 hca_handles;
	struct oci_opt_u32 hca_objects;
};

struct oci_resources {
	bool present;
	struct oci_device_cgroup *devices;
	size_t n_devices;

	struct {
		bool present;
		struct oci_opt_i64 limit;
		struct oci_opt_i64 reservation;
		struct oci_opt_i64 swap;
		struct oci_opt_i64 kernel;
		struct oci_opt_i64 kernel_tcp;
		struct oci_opt_u64 swappiness;
		struct oci_opt_bool disable_oom_killer;
		struct oci_opt_bool use_hierarchy;
		struct oci_opt_bool check_before_update;
	} memory;

	struct {
		bool present;
		struct oci_opt_u64 shares;
		struct oci_opt_i64 quota;
		struct oci_opt_u64 burst;
		struct oci_opt_u64 period;
		struct oci_opt_i64 realtime_runtime;
		struct oci_opt_u64 realtime_period;
		char *cpus;
		char *mems;
		struct oci_opt_i64 idle;
	} cpu;

	struct {
		bool present;
		int64_t limit; /* required when pids present; <= 0 = max */
	} pids;

	struct {
		bool present;
		struct oci_opt_u32 weight; /* 10..1000 (v1 range) */
		struct oci_opt_u32 leaf_weight;
		struct oci_weight_device *weight_devices;
		size_t n_weight_devices;
		struct oci_throttle_list throttle_read_bps;
		struct oci_throttle_list throttle_write_bps;
		struct oci_throttle_list throttle_read_iops;
		struct oci_throttle_list throttle_write_iops;
	} block_io;

	struct oci_hugepage_limit *hugepage_limits;
	size_t n_hugepage_limits;

	struct {
		bool present;
		struct oci_opt_u32 class_id;
		struct oci_net_priority *priorities;
		size_t n_priorities;
	} network;

	struct oci_rdma_limit *rdma;
	size_t n_rdma;

	struct oci_kv_list unified;
};

enum oci_seccomp_action {
	OCI_SCMP_ACT_KILL = 0, /* SCMP_ACT_KILL == kill thread */
	OCI_SCMP_ACT_KILL_PROCESS,
	OCI_SCMP_ACT_KILL_THREAD,
	OCI_SCMP_ACT_TRAP,
	OCI_SCMP_ACT_ERRNO,
	OCI_SCMP_ACT_TRACE,
	OCI_SCMP_ACT_ALLOW,
	OCI_SCMP_ACT_LOG,
	OCI_SCMP_ACT_NOTIFY,
};

enum oci_seccomp_op {
	OCI_SCMP_CMP_NE = 0,
	OCI_SCMP_CMP_LT,
	OCI_SCMP_CMP_LE,
	OCI_SCMP_CMP_EQ,
	OCI_SCMP_CMP_GE,
	OCI_SCMP_CMP_GT,
	OCI_SCMP_CMP_MASKED_EQ,
};

struct oci_seccomp_arg {
	uint32_t index;
	uint64_t value;
	uint64_t value_two;
	enum oci_seccomp_op op;
};

struct oci_seccomp_syscall {
	struct oci_strv names;
	enum oci_seccomp_action action;
	struct oci_opt_u32 errno_ret;
	struct oci_seccomp_arg *args;
	size_t n_args;
};

struct oci_seccomp {
	enum oci_seccomp_action default_action;
	struct oci_opt_u32 default_errno_ret;
	struct oci_strv architectures; /* "SCMP_ARCH_X86_64" ... */
	struct oci_strv flags; /* "SECCOMP_FILTER_FLAG_LOG" ... */
	char *listener_path;
	char *listener_metadata;
	struct oci_seccomp_syscall *syscalls;
	size_t n_syscalls;
};

struct oci_personality {
	bool set;
	char *domain; /* "LINUX" or "LINUX32" */
	struct oci_strv flags;
};

struct oci_time_offset {
	bool set;
	int64_t secs;
	uint32_t nanosecs;
};

struct oci_linux {
	bool present;
	struct oci_namespace *namespaces;
	size_t n_namespaces;
	struct oci_id_mappings uid_mappings;
	struct oci_id_mappings gid_mappings;
	struct oci_device *devices;
	size_t n_devices;
	char *cgroups_path;
	struct oci_resources resources;
	char *rootfs_propagation; /* "private", "shared", "slave", "unbindable" */
	struct oci_seccomp *seccomp; /* NULL when absent */
	struct oci_kv_list sysctl;
	struct oci_strv masked_paths;
	struct oci_strv readonly_paths;
	char *mount_label;
	struct oci_personality personality;
	struct oci_time_offset time_offset_boottime;
	struct oci_time_offset time_offset_monotonic;
	bool intel_rdt_present; /* parsed and rejected by the runtime */
};

struct oci_config {
	struct ar_arena arena;
	char *filename; /* where it was read from, for messages */
	char *oci_version;
	char *hostname;
	char *domainname;
	struct oci_process process;
	struct oci_root root;
	struct oci_mount *mounts;
	size_t n_mounts;
	struct oci_hook_list hooks[OCI_HOOK_NSTAGES];
	struct oci_kv_list annotations;
	struct oci_linux linux_; /* `linux` is a predefined macro in GNU C */
};

/* Limits for hostile input. Real configs (podman's ~20 KB) are far below. */
#define OCI_CONFIG_MAX_FILE_SIZE (64u * 1024 * 1024)
#define OCI_CONFIG_MAX_DEPTH 64
#define OCI_CONFIG_MAX_STRING (4u * 1024 * 1024)

/* Parse a JSON document; `filename` is used only in error messages.
 * Errors name the file, the JSON path and the problem:
 *   "config.json: process.rlimits[2].hard: expected an unsigned integer, got string"
 */
int oci_config_parse(const char *json, size_t len, const char *filename,
		     struct oci_config **out, struct ar_error *err);

/* Read and parse BUNDLE/config.json (or the given file when `path` names a
 * regular file). */
int oci_config_load_file(const char *path, struct oci_config **out,
			 struct ar_error *err);

/* Parse a standalone process object (the `exec --process FILE` format).
 * The returned process lives in cfg's arena: *out_cfg is a config whose
 * only meaningful member is process. */
int oci_process_parse(const char *json, size_t len, const char *filename,
		      struct oci_config **out_cfg, struct ar_error *err);

/* Parse a JSON array of mount objects (the `mounts add|remove FILE`
 * format): *out_cfg's mounts and n_mounts hold them; errors name the
 * item ("mounts.json: [1].destination: ..."). */
int oci_mounts_parse(const char *json, size_t len, const char *filename,
		     struct oci_config **out_cfg, struct ar_error *err);

void oci_config_free(struct oci_config *cfg);
static inline void oci_config_freep(struct oci_config **cfg)
{
	if (*cfg)
		oci_config_free(*cfg);
}
#define _cleanup_config_ __attribute__((cleanup(oci_config_freep)))

/* A new empty config (for code that builds one in C). */
struct oci_config *oci_config_new(void);

/* Names of the enums, for messages and for generating JSON. */
const char *oci_ns_type_name(enum oci_ns_type t); /* "pid", "network", ... */
const char *oci_hook_stage_name(enum oci_hook_stage s); /* "createRuntime" */
const char *oci_seccomp_action_name(enum oci_seccomp_action a);
const char *oci_seccomp_op_name(enum oci_seccomp_op op);
/* "bounding", "effective", ... (process.capabilities keys) */
const char *oci_cap_set_name(enum oci_cap_set s);
/* The bit of a process.scheduler.flags name ("SCHED_FLAG_RECLAIM": 0x02),
 * 0 for an unknown name (the parser refuses those). */
uint64_t oci_sched_flag_value(const char *name);

/* Look up a namespace entry by type, NULL if absent. */
const struct oci_namespace *oci_config_find_ns(const struct oci_config *cfg,
					       enum oci_ns_type t);

/* Whether the list holds the string (a mount's options: "ro", "idmap"). */
bool oci_strv_has(const struct oci_strv *v, const char *s);

/* Annotation lookup, NULL if absent. */
const char *oci_config_annotation(const struct oci_config *cfg,
				  const char *key);
/* An on/off annotation as crun reads its run.oci.* ones: on when present
 * with any value but "0". */
bool oci_config_annotation_on(const struct oci_config *cfg, const char *key);

#endif
