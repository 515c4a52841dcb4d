/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ar_mount_parse_options: every option of runtime-spec features.md
 * "mountOptions", and fs data passed through. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>

#include "error.h"
#include "mount_syscalls.h"
#include "mounts.h"
#include "mounts_internal.h"
#include "unit.h"

/* Parse a NULL-terminated list of options. */
static int parse(struct ar_mount_flags *f, struct ar_error *err, ...)
{
	char *v[64];
	size_t n = 0;
	struct oci_strv sv;
	va_list ap;
	const char *s;

	va_start(ap, err);
	while ((s = va_arg(ap, const char *)) && n < 63)
		v[n++] = (char *)s;
	va_end(ap);
	v[n] = NULL;
	sv.v = v;
	sv.n = n;
	return ar_mount_parse_options(&sv, f, err);
}

#define PARSE1(f, opt) parse(f, &err, opt, (const char *)NULL)

struct flag_case {
	const char *opt;
	unsigned long flags, clear;
};

UNIT_TEST(plain_flags)
{
	static const struct flag_case cases[] = {
		{ "ro", MS_RDONLY, 0 },
		{ "rw", 0, MS_RDONLY },
		{ "nosuid", MS_NOSUID, 0 },
		{ "suid", 0, MS_NOSUID },
		{ "nodev", MS_NODEV, 0 },
		{ "dev", 0, MS_NODEV },
		{ "noexec", MS_NOEXEC, 0 },
		{ "exec", 0, MS_NOEXEC },
		{ "sync", MS_SYNCHRONOUS, 0 },
		{ "async", 0, MS_SYNCHRONOUS },
		{ "dirsync", MS_DIRSYNC, 0 },
		{ "mand", MS_MANDLOCK, 0 },
		{ "nomand", 0, MS_MANDLOCK },
		{ "noatime", MS_NOATIME, 0 },
		{ "atime", 0, MS_NOATIME },
		{ "nodiratime", MS_NODIRATIME, 0 },
		{ "diratime", 0, MS_NODIRATIME },
		{ "relatime", MS_RELATIME, 0 },
		{ "norelatime", 0, MS_RELATIME },
		{ "strictatime", MS_STRICTATIME, 0 },
		{ "nostrictatime", 0, MS_STRICTATIME },
		{ "lazytime", MS_LAZYTIME, 0 },
		{ "nolazytime", 0, MS_LAZYTIME },
		{ "iversion", MS_I_VERSION, 0 },
		{ "noiversion", 0, MS_I_VERSION },
		{ "silent", MS_SILENT, 0 },
		{ "loud", 0, MS_SILENT },
		{ "remount", MS_REMOUNT, 0 },
		{ "bind", MS_BIND, 0 },
		{ "rbind", MS_BIND | MS_REC, 0 },
		{ "nosymfollow", MS_NOSYMFOLLOW, 0 },
		{ "symfollow", 0, MS_NOSYMFOLLOW },
		{ "defaults", 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ar_error err = AR_ERROR_INIT;
		struct ar_mount_flags f;

		CHECK_INT_EQ(PARSE1(&f, cases[i].opt), 0);
		if (f.flags != cases[i].flags || f.clear != cases[i].clear)
			printf("# option %s\n", cases[i].opt);
		CHECK_INT_EQ(f.flags, cases[i].flags);
		CHECK_INT_EQ(f.clear, cases[i].clear);
		CHECK(f.data == NULL);
		CHECK_INT_EQ(f.propagation, 0);
		CHECK_INT_EQ(f.rec_attr_set, 0);
		CHECK_INT_EQ(f.rec_attr_clr, 0);
		ar_mount_flags_free(&f);
	}
}

UNIT_TEST(bind_and_recursive)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_mount_flags f;

	CHECK_INT_EQ(PARSE1(&f, "bind"), 0);
	CHECK(f.bind);
	CHECK(!f.recursive);
	CHECK_INT_EQ(PARSE1(&f, "rbind"), 0);
	CHECK(f.bind);
	CHECK(f.recursive);
	CHECK(f.flags & MS_REC);
	CHECK_INT_EQ(PARSE1(&f, "rprivate"), 0);
	CHECK(!f.bind);
	CHECK(f.recursive);
	CHECK(!(f.flags & MS_REC));
}

UNIT_TEST(propagation)
{
	static const struct {
		const char *opt;
		unsigned long prop;
	} cases[] = {
		{ "private", MS_PRIVATE },
		{ "rprivate", MS_PRIVATE | MS_REC },
		{ "shared", MS_SHARED },
		{ "rshared", MS_SHARED | MS_REC },
		{ "slave", MS_SLAVE },
		{ "rslave", MS_SLAVE | MS_REC },
		{ "unbindable", MS_UNBINDABLE },
		{ "runbindable", MS_UNBINDABLE | MS_REC },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ar_error err = AR_ERROR_INIT;
		struct ar_mount_flags f;

		CHECK_INT_EQ(PARSE1(&f, cases[i].opt), 0);
		CHECK_INT_EQ(f.propagation, cases[i].prop);
		CHECK_INT_EQ(f.flags, 0);
		CHECK(f.data == NULL);
	}
}

UNIT_TEST(recursive_attributes)
{
	static const struct {
		const char *opt;
		unsigned long set, clr;
	} cases[] = {
		{ "rro", MOUNT_ATTR_RDONLY, 0 },
		{ "rrw", 0, MOUNT_ATTR_RDONLY },
		{ "rnosuid", MOUNT_ATTR_NOSUID, 0 },
		{ "rsuid", 0, MOUNT_ATTR_NOSUID },
		{ "rnodev", MOUNT_ATTR_NODEV, 0 },
		{ "rdev", 0, MOUNT_ATTR_NODEV },
		{ "rnoexec", MOUNT_ATTR_NOEXEC, 0 },
		{ "rexec", 0, MOUNT_ATTR_NOEXEC },
		{ "rnodiratime", MOUNT_ATTR_NODIRATIME, 0 },
		{ "rdiratime", 0, MOUNT_ATTR_NODIRATIME },
		{ "rnosymfollow", MOUNT_ATTR_NOSYMFOLLOW, 0 },
		{ "rsymfollow", 0, MOUNT_ATTR_NOSYMFOLLOW },
		{ "rnoatime", MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME },
		{ "ratime", 0, MOUNT_ATTR_NOATIME | MOUNT_ATTR__ATIME },
		{ "rstrictatime", MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME },
		{ "rnostrictatime", 0,
		  MOUNT_ATTR_STRICTATIME | MOUNT_ATTR__ATIME },
		{ "rrelatime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
		{ "rnorelatime", 0, MOUNT_ATTR__ATIME },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ar_error err = AR_ERROR_INIT;
		struct ar_mount_flags f;

		CHECK_INT_EQ(PARSE1(&f, cases[i].opt), 0);
		if (f.rec_attr_set != cases[i].set ||
		    f.rec_attr_clr != cases[i].clr)
			printf("# option %s\n", cases[i].opt);
		CHECK_INT_EQ(f.rec_attr_set, cases[i].set);
		CHECK_INT_EQ(f.rec_attr_clr, cases[i].clr);
		CHECK_INT_EQ(f.flags, 0);
		CHECK_INT_EQ(f.clear, 0);
		CHECK(f.data == NULL);
	}
}

UNIT_TEST(nosymfollow_is_an_attribute)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_mount_flags f;

	CHECK_INT_EQ(PARSE1(&f, "nosymfollow"), 0);
	CHECK_INT_EQ(f.attr_set, MOUNT_ATTR_NOSYMFOLLOW);
	CHECK_INT_EQ(parse(&f, &err, "nosymfollow", "symfollow",
			   (const char *)NULL),
		     0);
	CHECK_INT_EQ(f.attr_set, 0);
	CHECK_INT_EQ(f.attr_clr, MOUNT_ATTR_NOSYMFOLLOW);
}

UNIT_TEST(idmap_and_copyup)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_mount_flags f;

	CHECK_INT_EQ(PARSE1(&f, "idmap"), 0);
	CHECK(f.idmap);
	CHECK(!f.idmap_recursive);
	CHECK_INT_EQ(PARSE1(&f, "ridmap"), 0);
	CHECK(f.idmap);
	CHECK(f.idmap_recursive);
	CHECK_INT_EQ(PARSE1(&f, "tmpcopyup"), 0);
	CHECK(f.copy_up);
	CHECK(f.data == NULL);
}

UNIT_TEST(last_option_wins)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_mount_flags f;

	CHECK_INT_EQ(parse(&f, &err, "ro", "rw", (const char *)NULL), 0);
	CHECK_INT_EQ(f.flags, 0);
	CHECK_INT_EQ(f.clear, MS_RDONLY);
	CHECK_INT_EQ(parse(&f, &err, "rw", "ro", (const char *)NULL), 0);
	CHECK_INT_EQ(f.flags, MS_RDONLY);
	CHECK_INT_EQ(f.clear, 0);
	/* atime modes exclude each other */
	CHECK_INT_EQ(parse(&f, &err, "noatime", "relatime", "strictatime",
			   (const char *)NULL),
		     0);
	CHECK_INT_EQ(f.flags, MS_STRICTATIME);
	CHECK_INT_EQ(parse(&f, &err, "private", "rshared", (const char *)NULL),
		     0);
	CHECK_INT_EQ(f.propagation, MS_SHARED | MS_REC);
	CHECK_INT_EQ(parse(&f, &err, "rro", "rrw", (const char *)NULL), 0);
	CHECK_INT_EQ(f.rec_attr_set, 0);
	CHECK_INT_EQ(f.rec_attr_clr, MOUNT_ATTR_RDONLY);
	CHECK_INT_EQ(parse(&f, &err, "rnoatime", "rstrictatime",
			   (const char *)NULL),
		     0);
	CHECK_INT_EQ(f.rec_attr_set, MOUNT_ATTR_STRICTATIME);
	CHECK_INT_EQ(f.rec_attr_clr, MOUNT_ATTR__ATIME);
}

UNIT_TEST(fs_data_passed_on)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_mount_flags f;

	CHECK_INT_EQ(parse(&f, &err, "nosuid", "strictatime", "mode=755",
			   "size=65536k", (const char *)NULL),
		     0);
	CHECK_INT_EQ(f.flags, MS_NOSUID | MS_STRICTATIME);
	CHECK_STR_EQ(f.data, "mode=755,size=65536k");
	ar_mount_flags_free(&f);
	CHECK(f.data == NULL);

	CHECK_INT_EQ(parse(&f, &err, "nosuid", "noexec", "newinstance",
			   "ptmxmode=0666", "mode=0620", "gid=5",
			   (const char *)NULL),
		     0);
	CHECK_INT_EQ(f.flags, MS_NOSUID | MS_NOEXEC);
	CHECK_STR_EQ(f.data, "newinstance,ptmxmode=0666,mode=0620,gid=5");
	ar_mount_flags_free(&f);

	/* something the kernel may know and we do not */
	CHECK_INT_EQ(parse(&f, &err, "ro", "nr_inodes=1k", "huge=within_size",
			   (const char *)NULL),
		     0);
	CHECK_STR_EQ(f.data, "nr_inodes=1k,huge=within_size");
	ar_mount_flags_free(&f);

	/* names before the first, after the last and between two known
	 * ones, and prefixes/extensions of known ones, are data */
	CHECK_INT_EQ(parse(&f, &err, "a", "zzz", "rp", "r", "rox", "ro=1",
			   "sync2", (const char *)NULL),
		     0);
	CHECK_INT_EQ(f.flags, 0);
	CHECK_STR_EQ(f.data, "a,zzz,rp,r,rox,ro=1,sync2");
	ar_mount_flags_free(&f);
}

UNIT_TEST(podman_defaults)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_mount_flags f;

	CHECK_INT_EQ(parse(&f, &err, "rprivate", "nosuid", "noexec", "nodev",
			   "relatime", "ro", (const char *)NULL),
		     0);
	CHECK_INT_EQ(f.flags, MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RELATIME |
				      MS_RDONLY);
	CHECK_INT_EQ(f.propagation, MS_PRIVATE | MS_REC);
	CHECK(f.data == NULL);
	CHECK_INT_EQ(parse(&f, &err, "rbind", "rro", "nosuid",
			   (const char *)NULL),
		     0);
	CHECK(f.bind && f.recursive);
	CHECK_INT_EQ(f.flags, MS_BIND | MS_REC | MS_NOSUID);
	CHECK_INT_EQ(f.rec_attr_set, MOUNT_ATTR_RDONLY);
}

UNIT_TEST(empty_and_errors)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_mount_flags f;
	struct oci_strv none = { NULL, 0 };

	CHECK_INT_EQ(ar_mount_parse_options(&none, &f, &err), 0);
	CHECK_INT_EQ(f.flags, 0);
	CHECK(f.data == NULL);
	CHECK_INT_EQ(ar_mount_parse_options(NULL, &f, &err), 0);
	CHECK_INT_EQ(parse(&f, &err, "ro", "", (const char *)NULL), -1);
	CHECK_STR_CONTAINS(err.msg, "options[1]");
}

UNIT_TEST(all_features_options_known)
{
	/* features.md mountOptions: none of these may end up as fs data
	 * (also: the option table is in the order its bisection needs) */
	static const char *const all[] = {
		"async",
		"atime",
		"bind",
		"defaults",
		"dev",
		"diratime",
		"dirsync",
		"exec",
		"iversion",
		"lazytime",
		"loud",
		"mand",
		"noatime",
		"nodev",
		"nodiratime",
		"noexec",
		"noiversion",
		"nolazytime",
		"nomand",
		"norelatime",
		"nostrictatime",
		"nosuid",
		"nosymfollow",
		"private",
		"ratime",
		"rbind",
		"rdev",
		"rdiratime",
		"relatime",
		"remount",
		"rexec",
		"rnoatime",
		"rnodev",
		"rnodiratime",
		"rnoexec",
		"rnorelatime",
		"rnostrictatime",
		"rnosuid",
		"rnosymfollow",
		"ro",
		"rprivate",
		"rrelatime",
		"rro",
		"rrw",
		"rshared",
		"rslave",
		"rstrictatime",
		"rsuid",
		"rsymfollow",
		"runbindable",
		"rw",
		"shared",
		"silent",
		"slave",
		"strictatime",
		"suid",
		"symfollow",
		"sync",
		"tmpcopyup",
		"unbindable",
		"idmap",
		"ridmap",
	};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct ar_error err = AR_ERROR_INIT;
		struct ar_mount_flags f;

		CHECK_INT_EQ(PARSE1(&f, all[i]), 0);
		if (f.data)
			printf("# %s passed on as data\n", all[i]);
		CHECK(f.data == NULL);
		ar_mount_flags_free(&f);
	}
}

UNIT_TEST(host_path)
{
	char *p = ar_rootfs_host_path("/b", "rootfs");

	CHECK_STR_EQ(p, "/b/rootfs");
	free(p);
	p = ar_rootfs_host_path("/b", "/abs/root");
	CHECK_STR_EQ(p, "/abs/root");
	free(p);
}

UNIT_TEST(sysctl_keys)
{
	struct ar_error err = AR_ERROR_INIT;
	char *p = NULL;

	CHECK_INT_EQ(ar_sysctl_key_to_path("net.ipv4.ip_forward", &p, &err), 0);
	CHECK_STR_EQ(p, "/proc/sys/net/ipv4/ip_forward");
	free(p);
	/* slashes: dots are part of names (VLAN interfaces) */
	CHECK_INT_EQ(ar_sysctl_key_to_path("net/ipv4/conf/eth0.100/forwarding",
					   &p, &err),
		     0);
	CHECK_STR_EQ(p, "/proc/sys/net/ipv4/conf/eth0.100/forwarding");
	free(p);
	static const char *const bad[] = {
		"",	  ".",	  "..",		 "net..ipv4",
		".net",	  "net.", "net/../../x", "/etc/x",
		"net//x", "x/",	  "a/./b",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = NULL;
		if (ar_sysctl_key_to_path(bad[i], &p, &err) == 0)
			printf("# accepted \"%s\" as %s\n", bad[i], p);
		CHECK(p == NULL);
		free(p);
	}
	CHECK_INT_EQ(err.code, EINVAL);
}

UNIT_TEST(clean_path)
{
	static const char *const cases[][2] = {
		{ "/dev", "/dev" },
		{ "dev", "/dev" },
		{ "//dev//", "/dev" },
		{ "/./dev/./pts/", "/dev/pts" },
		{ "/", "/" },
		{ "", "/" },
		{ "/a/../b", "/a/../b" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *c = ar_clean_path(cases[i][0]);

		CHECK_STR_EQ(c, cases[i][1]);
		free(c);
	}
}

UNIT_TEST(ms_flags_to_mount_attrs)
{
	uint64_t set, clr;

	ar_ms_to_attrs(MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, 0, &set,
		       &clr);
	CHECK_INT_EQ(set, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
				  MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	CHECK_INT_EQ(clr, 0);
	ar_ms_to_attrs(0, MS_RDONLY | MS_NOSUID, &set, &clr);
	CHECK_INT_EQ(set, 0);
	CHECK_INT_EQ(clr, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID);
	ar_ms_to_attrs(MS_NOATIME, 0, &set, &clr);
	CHECK_INT_EQ(set, MOUNT_ATTR_NOATIME);
	CHECK_INT_EQ(clr, MOUNT_ATTR__ATIME);
	ar_ms_to_attrs(MS_STRICTATIME | MS_NODIRATIME, 0, &set, &clr);
	CHECK_INT_EQ(set, MOUNT_ATTR_STRICTATIME | MOUNT_ATTR_NODIRATIME);
	CHECK_INT_EQ(clr, MOUNT_ATTR__ATIME);
	ar_ms_to_attrs(MS_RELATIME, 0, &set, &clr);
	CHECK_INT_EQ(set, 0);
	CHECK_INT_EQ(clr, MOUNT_ATTR__ATIME);
	ar_ms_to_attrs(MS_NOSYMFOLLOW, 0, &set, &clr);
	CHECK_INT_EQ(set, MOUNT_ATTR_NOSYMFOLLOW);
	/* superblock-only flags have no mount attribute */
	ar_ms_to_attrs(MS_SYNCHRONOUS | MS_DIRSYNC | MS_LAZYTIME, 0, &set,
		       &clr);
	CHECK_INT_EQ(set, 0);
	CHECK_INT_EQ(clr, 0);
}

UNIT_MAIN()
