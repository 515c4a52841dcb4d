/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The default config.json written by `agentrun spec`, modelled on
 * `crun spec` / `runc spec` (and their --rootless variants), plus the
 * agent seccomp profile embedded at build time.
 *
 * One deliberate difference from crun: process.terminal is false, so that
 * a plain `agentrun run` of a fresh bundle works without a console socket.
 */
#define _GNU_SOURCE
#include "generate.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "json_gen.h"
#include "json_tree.h"
#include "utils.h"

#include "spec/seccomp_default.h" /* generated: OCI_DEFAULT_SECCOMP_JSON */

const char oci_default_seccomp_json[] = OCI_DEFAULT_SECCOMP_JSON;
const size_t oci_default_seccomp_json_len =
	sizeof(OCI_DEFAULT_SECCOMP_JSON) - 1;

#define STRV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void gen_process(struct jgen *w)
{
	const char *const *caps =
		STRV("CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE");

	jg_str(w, "process");
	jg_map_open(w);
	jg_key_bool(w, "terminal", false);
	jg_str(w, "user");
	jg_map_open(w);
	jg_key_u64(w, "uid", 0);
	jg_key_u64(w, "gid", 0);
	jg_map_close(w);
	jg_key_strv(w, "args", STRV("sh"));
	jg_key_strv(
		w, "env",
		STRV("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		     "TERM=xterm"));
	jg_key_str(w, "cwd", "/");
	jg_str(w, "capabilities");
	jg_map_open(w);
	jg_key_strv(w, "bounding", caps);
	jg_key_strv(w, "effective", caps);
	jg_key_strv(w, "permitted", caps);
	jg_map_close(w);
	jg_str(w, "rlimits");
	jg_array_open(w);
	jg_map_open(w);
	jg_key_str(w, "type", "RLIMIT_NOFILE");
	jg_key_u64(w, "hard", 1024);
	jg_key_u64(w, "soft", 1024);
	jg_map_close(w);
	jg_array_close(w);
	jg_key_bool(w, "noNewPrivileges", true);
	jg_map_close(w);
}

static void gen_mount(struct jgen *w, const char *dest, const char *type,
		      const char *source, const char *const *options)
{
	jg_map_open(w);
	jg_key_str(w, "destination", dest);
	jg_key_str(w, "type", type);
	jg_key_str(w, "source", source);
	if (options && *options)
		jg_key_strv(w, "options", options);
	jg_map_close(w);
}

static void gen_mounts(struct jgen *w, bool rootless)
{
	jg_str(w, "mounts");
	jg_array_open(w);
	gen_mount(w, "/proc", "proc", "proc",
		  STRV("nosuid", "noexec", "nodev"));
	gen_mount(w, "/dev", "tmpfs", "tmpfs",
		  STRV("nosuid", "strictatime", "mode=755", "size=65536k"));
	/* gid=5 (tty) only exists when the container has a gid 5 mapped */
	if (rootless)
		gen_mount(w, "/dev/pts", "devpts", "devpts",
			  STRV("nosuid", "noexec", "newinstance",
			       "ptmxmode=0666", "mode=0620"));
	else
		gen_mount(w, "/dev/pts", "devpts", "devpts",
			  STRV("nosuid", "noexec", "newinstance",
			       "ptmxmode=0666", "mode=0620", "gid=5"));
	gen_mount(w, "/dev/shm", "tmpfs", "shm",
		  STRV("nosuid", "noexec", "nodev", "mode=1777",
		       "size=65536k"));
	gen_mount(w, "/dev/mqueue", "mqueue", "mqueue",
		  STRV("nosuid", "noexec", "nodev"));
	if (rootless) {
		/* sysfs can't be mounted in a user namespace that doesn't own
		 * the network namespace of the caller: bind the host's. The
		 * bind brings /sys/fs/cgroup along, so no cgroup mount. */
		gen_mount(w, "/sys", "none", "/sys",
			  STRV("rbind", "nosuid", "noexec", "nodev", "ro"));
	} else {
		gen_mount(w, "/sys", "sysfs", "sysfs",
			  STRV("nosuid", "noexec", "nodev", "ro"));
		gen_mount(w, "/sys/fs/cgroup", "cgroup", "cgroup",
			  STRV("nosuid", "noexec", "nodev", "relatime", "ro"));
	}
	jg_array_close(w);
}

static void gen_id_mapping(struct jgen *w, const char *key, uint32_t host_id)
{
	jg_str(w, key);
	jg_array_open(w);
	jg_map_open(w);
	jg_key_u64(w, "containerID", 0);
	jg_key_u64(w, "hostID", host_id);
	jg_key_u64(w, "size", 1);
	jg_map_close(w);
	jg_array_close(w);
}

static int gen_linux(struct jgen *w, const struct oci_spec_options *o,
		     struct ar_error *err)
{
	static const char *const ns[] = { "pid", "network", "ipc",
					  "uts", "mount",   "cgroup" };
	struct ar_arena a = { 0 };
	struct jt_node *profile;
	int r;

	jg_str(w, "linux");
	jg_map_open(w);
	if (o->rootless) {
		gen_id_mapping(w, "uidMappings", o->host_uid);
		gen_id_mapping(w, "gidMappings", o->host_gid);
	} else {
		/* deny every device node except the ones the runtime creates */
		jg_str(w, "resources");
		jg_map_open(w);
		jg_str(w, "devices");
		jg_array_open(w);
		jg_map_open(w);
		jg_key_bool(w, "allow", false);
		jg_key_str(w, "access", "rwm");
		jg_map_close(w);
		jg_array_close(w);
		jg_map_close(w);
	}
	jg_str(w, "namespaces");
	jg_array_open(w);
	for (size_t i = 0; i < AR_ARRAY_SIZE(ns); i++) {
		jg_map_open(w);
		jg_key_str(w, "type", ns[i]);
		jg_map_close(w);
	}
	if (o->rootless) {
		jg_map_open(w);
		jg_key_str(w, "type", "user");
		jg_map_close(w);
	}
	jg_array_close(w);

	/* The same lists podman and crun use. */
	jg_key_strv(w, "maskedPaths",
		    STRV("/proc/acpi", "/proc/asound", "/proc/kcore",
			 "/proc/keys", "/proc/latency_stats",
			 "/proc/timer_list", "/proc/timer_stats",
			 "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
			 "/sys/fs/selinux", "/sys/dev/block",
			 "/sys/devices/virtual/powercap"));
	jg_key_strv(w, "readonlyPaths",
		    STRV("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
			 "/proc/sysrq-trigger"));

	if (jt_parse(&a, oci_default_seccomp_json, oci_default_seccomp_json_len,
		     "embedded seccomp profile", &profile, err) < 0) {
		oci_arena_free(&a);
		return -1;
	}
	jg_str(w, "seccomp");
	r = jt_gen(w->g, profile);
	oci_arena_free(&a);
	if (r < 0)
		w->failed = true;
	jg_map_close(w);
	return 0;
}

int oci_spec_generate(const struct oci_spec_options *opts, char **out,
		      size_t *len, struct ar_error *err)
{
	_cleanup_jgen_ struct jgen w = { 0 };
	struct oci_spec_options o = *opts;

	if (jg_init(&w, err) < 0)
		return -1;
	if (!o.ids_set) {
		o.host_uid = geteuid();
		o.host_gid = getegid();
	}
	jg_map_open(&w);
	jg_key_str(&w, "ociVersion", "1.2.0");
	gen_process(&w);
	jg_str(&w, "root");
	jg_map_open(&w);
	jg_key_str(&w, "path", "rootfs");
	jg_key_bool(&w, "readonly", true);
	jg_map_close(&w);
	jg_key_str(&w, "hostname", "agentrun");
	gen_mounts(&w, o.rootless);
	if (gen_linux(&w, &o, err) < 0)
		return -1;
	jg_map_close(&w);
	return jg_finish(&w, "generating config.json", out, len, err);
}

int oci_spec_write(const char *bundle_dir, const char *file,
		   const struct oci_spec_options *o, struct ar_error *err)
{
	_cleanup_free_ char *json = NULL;
	_cleanup_close_ int dfd = -1;
	_cleanup_close_ int fd = -1;
	const char *name = file ? file : "config.json";
	size_t len = 0;

	if (!bundle_dir)
		bundle_dir = ".";
	if (file && !*file)
		return ar_error_set_plain(err, EINVAL,
					  "--file: an empty file name");
	if (oci_spec_generate(o, &json, &len, err) < 0)
		return -1;
	dfd = open(bundle_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ar_error_set(err, errno, "open bundle directory `%s`",
				    bundle_dir);
	/* config.json is never overwritten (nor a link there followed); a
	 * file the caller names is theirs to replace, as crun */
	fd = openat(dfd, name,
		    file ? O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC :
			   O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		    0644);
	if (fd < 0 && errno == EEXIST && !file)
		return ar_error_set_plain(err, EEXIST,
					  "config.json already exists");
	if (fd < 0)
		return ar_error_set(err, errno, "create `%s%s%s`",
				    name[0] == '/' ? "" : bundle_dir,
				    name[0] == '/' ? "" : "/", name);
	if (ar_write_all(fd, json, len) < 0 || fsync(fd) < 0) {
		int saved = errno;

		if (!file)
			unlinkat(dfd, name, 0);
		return ar_error_set(err, saved, "write `%s%s%s`",
				    name[0] == '/' ? "" : bundle_dir,
				    name[0] == '/' ? "" : "/", name);
	}
	return 0;
}
