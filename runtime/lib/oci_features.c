/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The runtime-spec features document: static facts about this build plus
 * what the running kernel supports (capabilities, seccomp flags,
 * idmapped mounts). */
#include "config.h"

#include "oci_features.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "capabilities.h"
#include "oci_config.h"
#include "selinux_label.h"
#include "seccomp.h"
#include "utils.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

#define OCI_VERSION_MIN "1.0.0"
#define OCI_VERSION_MAX "1.2.0"

/* Keep in sync with the option table of runtime/lib/mount_options.c
 * (tests/unit/test_features.c checks every name is understood). */
const char *const ar_features_mount_options[] = {
	"async",	 "atime",	 "bind",
	"defaults",	 "dev",		 "diratime",
	"dirsync",	 "exec",	 "idmap",
	"iversion",	 "lazytime",	 "loud",
	"mand",		 "noatime",	 "nodev",
	"nodiratime",	 "noexec",	 "noiversion",
	"nolazytime",	 "nomand",	 "norelatime",
	"nostrictatime", "nosuid",	 "nosymfollow",
	"private",	 "ratime",	 "rbind",
	"rdev",		 "rdiratime",	 "relatime",
	"remount",	 "rexec",	 "ridmap",
	"rnoatime",	 "rnodev",	 "rnodiratime",
	"rnoexec",	 "rnorelatime",	 "rnostrictatime",
	"rnosuid",	 "rnosymfollow", "ro",
	"rprivate",	 "rrelatime",	 "rro",
	"rrw",		 "rshared",	 "rslave",
	"rstrictatime",	 "rsuid",	 "rsymfollow",
	"runbindable",	 "rw",		 "shared",
	"silent",	 "slave",	 "strictatime",
	"suid",		 "symfollow",	 "sync",
	"tmpcopyup",	 "unbindable",	 NULL,
};

static const char *const hook_names[] = {
	"prestart",
	"createRuntime",
	"createContainer",
	"startContainer",
	"poststart",
	"poststop",
	NULL,
};

static const char *const namespace_names[] = {
	"cgroup", "ipc", "mount", "network", "pid", "user", "uts", "time", NULL,
};

static void yajl_gen_freep(yajl_gen *g)
{
	if (*g)
		yajl_gen_free(*g);
}

static void gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void gen_key_bool(yajl_gen g, const char *key, bool v)
{
	gen_str(g, key);
	yajl_gen_bool(g, v);
}

static void gen_strv(yajl_gen g, const char *key, const char *const *v)
{
	gen_str(g, key);
	yajl_gen_array_open(g);
	for (; *v; v++)
		gen_str(g, *v);
	yajl_gen_array_close(g);
}

static void gen_enabled(yajl_gen g, const char *key, bool v)
{
	gen_str(g, key);
	yajl_gen_map_open(g);
	gen_key_bool(g, "enabled", v);
	yajl_gen_map_close(g);
}

/* mount_setattr(2) exists (idmapped mounts need it): an invalid call
 * fails with EBADF/EINVAL, a kernel without it with ENOSYS. */
static bool kernel_has_mount_setattr(void)
{
	if (syscall(SYS_mount_setattr, -1, "", 0, NULL, 0) == 0)
		return true;
	return errno != ENOSYS;
}

static bool selinux_enabled(void)
{
	return ar_selinux_enabled(); /* false in a --without-selinux build */
}

static void gen_seccomp(yajl_gen g)
{
	gen_str(g, "seccomp");
	yajl_gen_map_open(g);
	gen_key_bool(g, "enabled", true);
	gen_strv(g, "actions", ar_seccomp_action_names);
	gen_strv(g, "operators", ar_seccomp_op_names);
	gen_str(g, "archs");
	yajl_gen_array_open(g);
	for (size_t i = 0; ar_seccomp_arch_names[i]; i++)
		if (ar_seccomp_arch_known(ar_seccomp_arch_names[i]))
			gen_str(g, ar_seccomp_arch_names[i]);
	yajl_gen_array_close(g);
	gen_strv(g, "knownFlags", ar_seccomp_flag_names);
	gen_str(g, "supportedFlags");
	yajl_gen_array_open(g);
	for (size_t i = 0; ar_seccomp_flag_names[i]; i++)
		if (ar_seccomp_flag_supported(ar_seccomp_flag_names[i]))
			gen_str(g, ar_seccomp_flag_names[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

static void gen_linux(yajl_gen g)
{
	int last = ar_cap_last_cap();

	gen_str(g, "linux");
	yajl_gen_map_open(g);
	gen_strv(g, "namespaces", namespace_names);

	gen_str(g, "capabilities");
	yajl_gen_array_open(g);
	for (int i = 0; i <= last; i++) {
		const char *n = ar_cap_name(i);

		if (n)
			gen_str(g, n);
	}
	yajl_gen_array_close(g);

	gen_str(g, "cgroup");
	yajl_gen_map_open(g);
	gen_key_bool(g, "v1", false);
	gen_key_bool(g, "v2", true);
	gen_key_bool(g, "systemd", false);
	gen_key_bool(g, "systemdUser", false);
	gen_key_bool(g, "rdma", true);
	yajl_gen_map_close(g);

	gen_seccomp(g);
	gen_enabled(g, "apparmor", false);
	gen_enabled(g, "selinux", selinux_enabled());
	gen_enabled(g, "intelRdt", false);

	gen_str(g, "mountExtensions");
	yajl_gen_map_open(g);
	gen_enabled(g, "idmap", kernel_has_mount_setattr());
	yajl_gen_map_close(g);

	yajl_gen_map_close(g);
}

int ar_features_json(char **out, size_t *len, struct ar_error *err)
{
	_cleanup_(yajl_gen_freep) yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t n;

	if (!g)
		return ar_error_set(err, ENOMEM, "features: yajl_gen_alloc");
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "    ");
	yajl_gen_config(g, yajl_gen_escape_solidus, 0);

	yajl_gen_map_open(g);
	gen_str(g, "ociVersionMin");
	gen_str(g, OCI_VERSION_MIN);
	gen_str(g, "ociVersionMax");
	gen_str(g, OCI_VERSION_MAX);
	gen_strv(g, "hooks", hook_names);
	gen_strv(g, "mountOptions", ar_features_mount_options);
	gen_linux(g);

	gen_str(g, "annotations");
	yajl_gen_map_open(g);
	gen_str(g, "io.github.seccomp.libseccomp.version");
	gen_str(g, ar_seccomp_lib_version());
	gen_str(g, "run.agentrun.version");
	gen_str(g, PACKAGE_VERSION);
	gen_str(g, "run.agentrun.commit");
	gen_str(g, GIT_COMMIT);
	yajl_gen_map_close(g);

	if (yajl_gen_map_close(g) != yajl_gen_status_ok ||
	    yajl_gen_get_buf(g, &buf, &n) != yajl_gen_status_ok)
		return ar_error_set_plain(err, EINVAL,
					  "features: cannot generate JSON");
	*out = ar_xmalloc(n + 2);
	memcpy(*out, buf, n);
	if (n == 0 || buf[n - 1] != '\n')
		(*out)[n++] = '\n';
	(*out)[n] = '\0';
	*len = n;
	return 0;
}
