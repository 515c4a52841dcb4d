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

#include <yajl/yajl_gen.h>

#include "error.h"
#include "json_tree.h"
#include "utils.h"

#include "spec/seccomp_default.h" /* generated: OCI_DEFAULT_SECCOMP_JSON */

const char oci_default_seccomp_json[] = OCI_DEFAULT_SECCOMP_JSON;
const size_t oci_default_seccomp_json_len =
	sizeof(OCI_DEFAULT_SECCOMP_JSON) - 1;

/* A yajl_gen with a sticky status so the builders below stay linear. */
struct gen {
	yajl_gen g;
	bool failed;
};

static void check(struct gen *w, yajl_gen_status st)
{
	if (st != yajl_gen_status_ok)
		w->failed = true;
}

static void str(struct gen *w, const char *s)
{
	check(w, yajl_gen_string(w->g, (const unsigned char *)s, strlen(s)));
}

static void key_str(struct gen *w, const char *k, const char *v)
{
	str(w, k);
	str(w, v);
}

static void key_uint(struct gen *w, const char *k, unsigned long long v)
{
	str(w, k);
	check(w, yajl_gen_integer(w->g, (long long)v));
}

static void key_bool(struct gen *w, const char *k, bool v)
{
	str(w, k);
	check(w, yajl_gen_bool(w->g, v));
}

static void map_open(struct gen *w)
{
	check(w, yajl_gen_map_open(w->g));
}

static void map_close(struct gen *w)
{
	check(w, yajl_gen_map_close(w->g));
}

static void array_open(struct gen *w)
{
	check(w, yajl_gen_array_open(w->g));
}

static void array_close(struct gen *w)
{
	check(w, yajl_gen_array_close(w->g));
}

/* "key": ["a", "b", ...] from a NULL-terminated list */
static void key_strv(struct gen *w, const char *k, const char *const *v)
{
	str(w, k);
	array_open(w);
	for (; *v; v++)
		str(w, *v);
	array_close(w);
}

#define STRV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void gen_process(struct gen *w)
{
	const char *const *caps =
		STRV("CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE");

	str(w, "process");
	map_open(w);
	key_bool(w, "terminal", false);
	str(w, "user");
	map_open(w);
	key_uint(w, "uid", 0);
	key_uint(w, "gid", 0);
	map_close(w);
	key_strv(w, "args", STRV("sh"));
	key_strv(
		w, "env",
		STRV("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		     "TERM=xterm"));
	key_str(w, "cwd", "/");
	str(w, "capabilities");
	map_open(w);
	key_strv(w, "bounding", caps);
	key_strv(w, "effective", caps);
	key_strv(w, "permitted", caps);
	map_close(w);
	str(w, "rlimits");
	array_open(w);
	map_open(w);
	key_str(w, "type", "RLIMIT_NOFILE");
	key_uint(w, "hard", 1024);
	key_uint(w, "soft", 1024);
	map_close(w);
	array_close(w);
	key_bool(w, "noNewPrivileges", true);
	map_close(w);
}

static void gen_mount(struct gen *w, const char *dest, const char *type,
		      const char *source, const char *const *options)
{
	map_open(w);
	key_str(w, "destination", dest);
	key_str(w, "type", type);
	key_str(w, "source", source);
	if (options && *options)
		key_strv(w, "options", options);
	map_close(w);
}

static void gen_mounts(struct gen *w, bool rootless)
{
	str(w, "mounts");
	array_open(w);
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
	array_close(w);
}

static void gen_id_mapping(struct gen *w, const char *key, uint32_t host_id)
{
	str(w, key);
	array_open(w);
	map_open(w);
	key_uint(w, "containerID", 0);
	key_uint(w, "hostID", host_id);
	key_uint(w, "size", 1);
	map_close(w);
	array_close(w);
}

static int gen_linux(struct gen *w, const struct oci_spec_options *o,
		     struct ar_error *err)
{
	static const char *const ns[] = { "pid", "network", "ipc",
					  "uts", "mount",   "cgroup" };
	struct ar_arena a = { 0 };
	struct jt_node *profile;
	int r;

	str(w, "linux");
	map_open(w);
	if (o->rootless) {
		gen_id_mapping(w, "uidMappings", o->host_uid);
		gen_id_mapping(w, "gidMappings", o->host_gid);
	} else {
		/* deny every device node except the ones the runtime creates */
		str(w, "resources");
		map_open(w);
		str(w, "devices");
		array_open(w);
		map_open(w);
		key_bool(w, "allow", false);
		key_str(w, "access", "rwm");
		map_close(w);
		array_close(w);
		map_close(w);
	}
	str(w, "namespaces");
	array_open(w);
	for (size_t i = 0; i < AR_ARRAY_SIZE(ns); i++) {
		map_open(w);
		key_str(w, "type", ns[i]);
		map_close(w);
	}
	if (o->rootless) {
		map_open(w);
		key_str(w, "type", "user");
		map_close(w);
	}
	array_close(w);

	/* The same lists podman and crun use. */
	key_strv(w, "maskedPaths",
		 STRV("/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
		      "/proc/latency_stats", "/proc/timer_list",
		      "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
		      "/sys/firmware", "/sys/fs/selinux", "/sys/dev/block",
		      "/sys/devices/virtual/powercap"));
	key_strv(w, "readonlyPaths",
		 STRV("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
		      "/proc/sysrq-trigger"));

	if (jt_parse(&a, oci_default_seccomp_json, oci_default_seccomp_json_len,
		     "embedded seccomp profile", &profile, err) < 0) {
		oci_arena_free(&a);
		return -1;
	}
	str(w, "seccomp");
	r = jt_gen(w->g, profile);
	oci_arena_free(&a);
	if (r < 0)
		w->failed = true;
	map_close(w);
	return 0;
}

static void yajl_gen_freep(yajl_gen *g)
{
	if (*g)
		yajl_gen_free(*g);
}

int oci_spec_generate(const struct oci_spec_options *opts, char **out,
		      size_t *len, struct ar_error *err)
{
	_cleanup_(yajl_gen_freep) yajl_gen g = yajl_gen_alloc(NULL);
	struct oci_spec_options o = *opts;
	struct gen w = { .g = g };
	const unsigned char *buf;
	size_t blen;
	char *r;

	if (!g)
		return ar_error_set(err, ENOMEM, "yajl_gen_alloc");
	if (!o.ids_set) {
		o.host_uid = geteuid();
		o.host_gid = getegid();
	}
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "\t");
	yajl_gen_config(g, yajl_gen_escape_solidus, 0);
	yajl_gen_config(g, yajl_gen_validate_utf8, 1);

	map_open(&w);
	key_str(&w, "ociVersion", "1.2.0");
	gen_process(&w);
	str(&w, "root");
	map_open(&w);
	key_str(&w, "path", "rootfs");
	key_bool(&w, "readonly", true);
	map_close(&w);
	key_str(&w, "hostname", "agentrun");
	gen_mounts(&w, o.rootless);
	if (gen_linux(&w, &o, err) < 0)
		return -1;
	map_close(&w);
	if (w.failed || yajl_gen_get_buf(g, &buf, &blen) != yajl_gen_status_ok)
		return ar_error_set_plain(err, EINVAL,
					  "generating config.json failed");
	r = ar_xmalloc(blen + 2);
	memcpy(r, buf, blen);
	if (blen == 0 || r[blen - 1] != '\n')
		r[blen++] = '\n';
	r[blen] = '\0';
	*out = r;
	*len = blen;
	return 0;
}

int oci_spec_write(const char *bundle_dir, const struct oci_spec_options *o,
		   struct ar_error *err)
{
	_cleanup_free_ char *json = NULL;
	_cleanup_close_ int dfd = -1;
	_cleanup_close_ int fd = -1;
	size_t len = 0;

	if (!bundle_dir)
		bundle_dir = ".";
	if (oci_spec_generate(o, &json, &len, err) < 0)
		return -1;
	dfd = open(bundle_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ar_error_set(err, errno, "open bundle directory `%s`",
				    bundle_dir);
	fd = openat(dfd, "config.json",
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 && errno == EEXIST)
		return ar_error_set_plain(err, EEXIST,
					  "config.json already exists");
	if (fd < 0)
		return ar_error_set(err, errno, "create `%s/config.json`",
				    bundle_dir);
	if (ar_write_all(fd, json, len) < 0 || fsync(fd) < 0) {
		int saved = errno;

		unlinkat(dfd, "config.json", 0);
		return ar_error_set(err, saved, "write `%s/config.json`",
				    bundle_dir);
	}
	return 0;
}
