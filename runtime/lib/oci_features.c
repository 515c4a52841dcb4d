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

#include "apparmor.h"
#include "capabilities.h"
#include "cgroup_systemd.h"
#include "json_gen.h"
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

static void gen_enabled(struct jgen *g, const char *key, bool v)
{
	jg_str(g, key);
	jg_map_open(g);
	jg_key_bool(g, "enabled", v);
	jg_map_close(g);
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

static void gen_seccomp(struct jgen *g)
{
	jg_str(g, "seccomp");
	jg_map_open(g);
	jg_key_bool(g, "enabled", true);
	jg_key_strv(g, "actions", ar_seccomp_action_names);
	jg_key_strv(g, "operators", ar_seccomp_op_names);
	jg_str(g, "archs");
	jg_array_open(g);
	for (size_t i = 0; ar_seccomp_arch_names[i]; i++)
		if (ar_seccomp_arch_known(ar_seccomp_arch_names[i]))
			jg_str(g, ar_seccomp_arch_names[i]);
	jg_array_close(g);
	jg_key_strv(g, "knownFlags", ar_seccomp_flag_names);
	jg_str(g, "supportedFlags");
	jg_array_open(g);
	for (size_t i = 0; ar_seccomp_flag_names[i]; i++)
		if (ar_seccomp_flag_supported(ar_seccomp_flag_names[i]))
			jg_str(g, ar_seccomp_flag_names[i]);
	jg_array_close(g);
	jg_map_close(g);
}

static void gen_linux(struct jgen *g)
{
	int last = ar_cap_last_cap();

	jg_str(g, "linux");
	jg_map_open(g);
	jg_key_strv(g, "namespaces", namespace_names);

	jg_str(g, "capabilities");
	jg_array_open(g);
	for (int i = 0; i <= last; i++) {
		const char *n = ar_cap_name(i);

		if (n)
			jg_str(g, n);
	}
	jg_array_close(g);

	jg_str(g, "cgroup");
	jg_map_open(g);
	jg_key_bool(g, "v1", false);
	jg_key_bool(g, "v2", true);
	jg_key_bool(g, "systemd", ar_systemd_built());
	jg_key_bool(g, "systemdUser", ar_systemd_built());
	jg_key_bool(g, "rdma", true);
	jg_map_close(g);

	gen_seccomp(g);
	gen_enabled(g, "apparmor", ar_apparmor_enabled());
	gen_enabled(g, "selinux", selinux_enabled());
	gen_enabled(g, "intelRdt", false);

	jg_str(g, "mountExtensions");
	jg_map_open(g);
	gen_enabled(g, "idmap", kernel_has_mount_setattr());
	jg_map_close(g);

	jg_map_close(g);
}

int ar_features_json(char **out, size_t *len, struct ar_error *err)
{
	_cleanup_jgen_ struct jgen w = { 0 };
	struct jgen *g = &w;

	/* 4 spaces, as crun prints it */
	if (jg_init_indent(g, "    ", err) < 0)
		return -1;
	jg_map_open(g);
	jg_key_str(g, "ociVersionMin", OCI_VERSION_MIN);
	jg_key_str(g, "ociVersionMax", OCI_VERSION_MAX);
	jg_key_strv(g, "hooks", hook_names);
	jg_key_strv(g, "mountOptions", ar_features_mount_options);
	gen_linux(g);

	jg_str(g, "annotations");
	jg_map_open(g);
	jg_key_str(g, "io.github.seccomp.libseccomp.version",
		   ar_seccomp_lib_version());
	jg_key_str(g, "run.agentrun.version", PACKAGE_VERSION);
	jg_key_str(g, "run.agentrun.commit", GIT_COMMIT);
	jg_map_close(g);
	jg_map_close(g);
	return jg_finish(g, "features", out, len, err);
}
