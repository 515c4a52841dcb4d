/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox`, end to end: host -> config (sandbox_config.c) ->
 * preflight (the doctor checks the sandbox depends on) -> a private bundle
 * -> ar_container_run(), the path of every `agentrun run` -> cleanup.
 * With --print-bundle the bundle is written to the user's directory
 * instead, and runs unchanged with `agentrun run` (or another runtime).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config_write.h"
#include "container.h"
#include "doctor.h"
#include "log.h"
#include "overlay.h"
#include "sandbox_internal.h"
#include "utils.h"

/* ---- the bundle ---- */

static int write_at(int dfd, const char *name, const char *data,
		    struct ar_error *err)
{
	_cleanup_close_ int fd = openat(
		dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		0644);

	if (fd < 0 || ar_write_all(fd, data, strlen(data)) < 0)
		return ar_error_set(err, errno, "write rootfs/etc/%s", name);
	return 0;
}

/* A new directory (0700), or an existing one without a bundle in it. */
static int prepare_dir(const char *dir, struct ar_error *err)
{
	_cleanup_close_ int fd = -1;

	if (mkdir(dir, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return ar_error_set(err, errno, "create bundle directory `%s`",
				    dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ar_error_set(err, errno, "bundle directory `%s`", dir);
	if (faccessat(fd, "config.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
	    faccessat(fd, "rootfs", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return ar_error_set_plain(
			err, EEXIST,
			"bundle directory `%s` already holds a bundle (config.json or rootfs)",
			dir);
	return 0;
}

int ar_sandbox_bundle_write(const struct oci_config *cfg,
			    const struct ar_sandbox_host *h, const char *dir,
			    struct ar_error *err)
{
	static const char *const links[] = { "bin",   "sbin",  "lib",
					     "lib32", "lib64", "libx32" };
	_cleanup_free_ char *rootfs = NULL;
	_cleanup_free_ char *passwd = NULL, *group = NULL;
	_cleanup_close_ int rfd = -1, efd = -1;

	if (prepare_dir(dir, err) < 0)
		return -1;
	rootfs = ar_xasprintf("%s/rootfs", dir);
	if (mkdir(rootfs, 0755) < 0)
		return ar_error_set(err, errno, "create `%s`", rootfs);
	rfd = open(rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0 || mkdirat(rfd, "etc", 0755) < 0)
		return ar_error_set(err, errno, "create `%s/etc`", rootfs);
	efd = openat(rfd, "etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (efd < 0)
		return ar_error_set(err, errno, "open `%s/etc`", rootfs);
	passwd = ar_sandbox_passwd(h);
	group = ar_sandbox_group(h);
	if (write_at(efd, "passwd", passwd, err) < 0 ||
	    write_at(efd, "group", group, err) < 0)
		return -1;
	/* Merged /usr: /bin -> usr/bin and friends, as on the host. */
	for (size_t i = 0; i < AR_ARRAY_SIZE(links); i++) {
		char host[32], target[256];
		ssize_t n;

		snprintf(host, sizeof(host), "/%s", links[i]);
		n = readlink(host, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (symlinkat(target, rfd, links[i]) < 0)
			return ar_error_set(err, errno, "symlink `%s/%s`",
					    rootfs, links[i]);
	}
	return oci_config_write_file(cfg, dir, err);
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Remove a private bundle; FTW_MOUNT: never cross into a mount (there is
 * none left once the container's mount namespace is gone). */
static void remove_tree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* ---- preflight ---- */

static int preflight(const struct ar_sandbox_host *h, const char *ws,
		     bool overlay, struct ar_error *err)
{
	static const enum ar_doctor_check needed[] = { AR_DOCTOR_USERNS,
						       AR_DOCTOR_SECCOMP,
						       AR_DOCTOR_OVERLAY };
	size_t n = AR_ARRAY_SIZE(needed) - (overlay ? 0 : 1);
	struct ar_doctor_env e;

	ar_doctor_env_default(&e);
	e.user = h->user;
	e.workspace = ws;
	for (size_t i = 0; i < n; i++) {
		struct ar_doctor_result r;

		ar_doctor_check(&e, needed[i], &r);
		if (needed[i] == AR_DOCTOR_OVERLAY &&
		    r.status == AR_DOCTOR_WARN)
			r.status = AR_DOCTOR_FAIL; /* asked for: required */
		if (r.status == AR_DOCTOR_FAIL)
			return ar_error_set_plain(
				err, EPERM,
				"sandbox: refusing to start without %s (doctor check `%s`): %s; fix: %s",
				r.name, r.id, r.detail, r.fix);
	}
	return 0;
}

/* ---- run ---- */

static char *private_bundle_dir(const char *id)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (!base || base[0] != '/' || stat(base, &st) < 0 ||
	    st.st_uid != getuid())
		base = "/tmp";
	return ar_xasprintf("%s/agentrun-%s", base, id);
}

/* --overlay: the sandbox directory, and a copy of the options pointing
 * at its layers. */
static int overlay_prepare(const struct ar_sandbox_opts *o,
			   const struct ar_sandbox_host *h,
			   struct ar_sandbox_opts *oo, struct ar_overlay *ov,
			   struct ar_error *err)
{
	_cleanup_free_ char *ws = NULL;
	char name[64];
	time_t now = time(NULL);
	struct tm tm;

	if (ar_sandbox_workspace(o, h, &ws, err) < 0)
		return -1;
	if (o->name) {
		snprintf(name, sizeof(name), "%s", o->name);
	} else {
		localtime_r(&now, &tm);
		strftime(name, sizeof(name), "sandbox-%Y%m%d-%H%M%S", &tm);
	}
	if (ar_overlay_create(name, ws, ov, err) < 0)
		return -1;
	*oo = *o;
	oo->overlay_upper = ov->upper;
	oo->overlay_work = ov->work;
	return 0;
}

int ar_sandbox_run(const struct ar_sandbox_opts *o,
		   const struct ar_sandbox_run_opts *ro, int *exit_status,
		   struct ar_error *err)
{
	_cleanup_config_ struct oci_config *cfg = NULL;
	_cleanup_free_ char *bundle = NULL;
	struct ar_sandbox_host h;
	struct ar_sandbox_info info;
	struct ar_create_opts co;
	struct ar_sandbox_opts oo;
	struct ar_overlay ov;
	char id[64];
	int r;

	*exit_status = 1;
	memset(&info, 0, sizeof(info));
	memset(&ov, 0, sizeof(ov));
	if (ar_sandbox_host_detect(&h, err) < 0) {
		ar_sandbox_host_release(&h);
		return -1;
	}
	if (o->overlay) {
		r = overlay_prepare(o, &h, &oo, &ov, err);
		o = &oo;
		if (r < 0)
			goto out;
	}
	r = ar_sandbox_build_config(o, &h, &cfg, &info, err);
	if (r == 0 && !ro->print_bundle)
		r = preflight(&h, info.workspace, o->overlay, err);
	if (r < 0) {
		if (ov.dir) {
			struct ar_error ignored = AR_ERROR_INIT;

			ar_overlay_discard(&ov, &ignored);
		}
		goto out;
	}
	if (ro->print_bundle) {
		r = ar_sandbox_bundle_write(cfg, &h, ro->print_bundle, err);
		goto out;
	}
	if (info.net_host)
		ar_warn("sandbox: --net host: the sandbox shares the host's network; services on 127.0.0.1 and the local network (ssh, databases, dev servers, cloud metadata) are reachable");
	ar_log(AR_LOG_INFO,
	       "sandbox: workspace %s (read-write); protections: %s",
	       info.workspace, info.protections);

	snprintf(id, sizeof(id), "sandbox-%d-%lx", (int)getpid(),
		 (unsigned long)time(NULL));
	bundle = private_bundle_dir(id);
	r = ar_sandbox_bundle_write(cfg, &h, bundle, err);
	if (r < 0) {
		remove_tree(bundle);
		goto out;
	}
	memset(&co, 0, sizeof(co));
	co.root = ro->state_root;
	co.id = id;
	co.bundle = bundle;
	co.rootless = -1;
	co.cgroups_disabled = ro->cgroups_disabled;
	r = ar_container_run(&co, exit_status, err);
	remove_tree(bundle);
	if (ov.dir)
		ar_log(AR_LOG_INFO,
		       "sandbox `%s`: the workspace is untouched; changes are kept in %s: review them with `agentrun changes %s` or `agentrun diff %s`, apply with `agentrun commit %s [PATHS...]`, drop with `agentrun discard %s`",
		       ov.name, ov.upper, ov.name, ov.name, ov.name, ov.name);
out:
	free(info.workspace);
	ar_overlay_release(&ov);
	ar_sandbox_host_release(&h);
	return r;
}
