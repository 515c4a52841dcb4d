/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup v2: where a container's cgroup goes, creating it with its
 * controllers enabled, moving processes in, freezing, killing and removing
 * it.  Resources are written by cgroup_resources.c, stats read by
 * cgroup_stats.c.  See cgroup.h for the rules.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_systemd.h"
#include "cgroup_systemd_props.h"
#include "cgroup_file.h"
#include "log.h"
#include "proc_stat.h"
#include "utils.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CG_MAX_DEPTH 256

struct ar_cgroup {
	char *path; /* absolute, NULL when none */
	int dirfd; /* -1 until made */
	/* from ar_cgroup_plan(), for ar_cgroup_make() */
	int mountfd;
	char *rel; /* relative to the mount ("/a/b") */
	unsigned req, avail; /* controllers needed, and those available */
	/* the systemd manager: the scope asked for (cgroup_systemd.h) and
	 * the org.systemd.property.* annotations, parsed at plan time */
	char *unit, *slice;
	struct ar_systemd_props annotation_props;
};

static int enter_fd(int dirfd, pid_t pid, struct ar_error *err);

/* ---- where ---- */

const char *ar_cgroup_mount(void)
{
	static const char *const candidates[] = { "/sys/fs/cgroup",
						  "/sys/fs/cgroup/unified" };
	struct statfs sfs;

	for (size_t i = 0; i < AR_ARRAY_SIZE(candidates); i++)
		if (statfs(candidates[i], &sfs) == 0 &&
		    sfs.f_type == CGROUP2_SUPER_MAGIC)
			return candidates[i];
	return NULL;
}

int ar_cgroup_own(char **out, struct ar_error *err)
{
	_cleanup_free_ char *buf = NULL;
	char *line, *save = NULL;

	if (ar_read_file_at(AT_FDCWD, "/proc/self/cgroup", AR_CG_FILE_MAX, &buf,
			    NULL, err) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0::", 3) == 0) {
			*out = ar_xstrdup(line + 3);
			return 0;
		}
	}
	return ar_error_set_plain(err, ENOENT,
				  "/proc/self/cgroup has no cgroup v2 entry");
}

/* Append the components of `rel` to `sb` as "/c1/c2", refusing "." and
 * "..". */
static int append_components(char **acc, const char *rel, const char *what,
			     struct ar_error *err)
{
	const char *p = rel;

	while (*p) {
		size_t n;
		char *next;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0)
			break;
		if ((n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return ar_error_set_plain(
				err, EINVAL,
				"%s `%s`: \".\" and \"..\" are not allowed",
				what, rel);
		next = ar_xasprintf("%s/%.*s", *acc, (int)n, p);
		free(*acc);
		*acc = next;
		p += n;
	}
	return 0;
}

int ar_cgroup_resolve_path(const char *cp, const char *id, bool rootless,
			   const char *base, char **out, struct ar_error *err)
{
	_cleanup_free_ char *acc = ar_xstrdup("");
	_cleanup_free_ char *sd = NULL;
	int r;

	if (!base)
		base = "/";
	r = ar_cgroup_systemd_path(cp, rootless, &sd, err);
	if (r < 0)
		return -1;
	if (r > 0) {
		if (rootless &&
		    append_components(&acc, base, "cgroup base", err) < 0)
			return -1;
		if (append_components(&acc, sd, "linux.cgroupsPath", err) < 0)
			return -1;
	} else if (!cp || !*cp) {
		_cleanup_free_ char *leaf = NULL;

		if (rootless) {
			if (append_components(&acc, base, "cgroup base", err) <
			    0)
				return -1;
			leaf = ar_xasprintf("agentrun-%s", id);
		} else {
			leaf = ar_xasprintf(AR_CGROUP_DEFAULT_PARENT "/%s", id);
		}
		if (append_components(&acc, leaf, "cgroup path", err) < 0)
			return -1;
	} else {
		if (cp[0] != '/' && rootless &&
		    append_components(&acc, base, "cgroup base", err) < 0)
			return -1;
		if (append_components(&acc, cp, "linux.cgroupsPath", err) < 0)
			return -1;
	}
	if (!*acc)
		return ar_error_set_plain(
			err, EINVAL,
			"linux.cgroupsPath `%s`: the root of the hierarchy cannot be a container's cgroup",
			cp ? cp : "");
	*out = ar_steal_ptr(&acc);
	return 0;
}

/* ---- creating ---- */

static bool env_true(const char *v)
{
	return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0);
}

void ar_cgroup_opts_from_config(struct ar_cgroup_opts *o,
				const struct oci_config *cfg, const char *id)
{
	o->id = id;
	o->cgroups_path = cfg->linux_.cgroups_path;
	o->resources = cfg->linux_.resources.present ? &cfg->linux_.resources :
						       NULL;
	o->devices = cfg->linux_.devices;
	o->n_devices = cfg->linux_.n_devices;
	o->ignore_unavailable = env_true(getenv(AR_CGROUP_IGNORE_ENV)) ||
				env_true(oci_config_annotation(
					cfg, AR_CGROUP_IGNORE_ANNOTATION));
	o->systemd_subgroup = oci_config_annotation(
		cfg, AR_CGROUP_SYSTEMD_SUBGROUP_ANNOTATION);
	o->annotations = cfg->annotations.items;
	o->n_annotations = cfg->annotations.n;
}

static unsigned parse_ctrl_list(const char *buf)
{
	unsigned m = 0;
	const char *p = buf;

	while (*p) {
		size_t n;

		p += strspn(p, " \n");
		n = strcspn(p, " \n");
		if (!n)
			break;
		m |= ar_cgroup_ctrl_from_name(p, n);
		p += n;
	}
	return m;
}

static unsigned read_ctrls(int dirfd, const char *file)
{
	_cleanup_free_ char *buf = NULL;
	struct ar_error e = AR_ERROR_INIT;

	if (ar_cg_read(dirfd, file, &buf, &e) < 0)
		return 0;
	return parse_ctrl_list(buf);
}

static bool has_procs(int dirfd)
{
	_cleanup_free_ char *buf = NULL;
	struct ar_error e = AR_ERROR_INIT;

	if (ar_cg_read(dirfd, "cgroup.procs", &buf, &e) < 0)
		return false;
	return buf[strspn(buf, " \n")] != '\0';
}

static bool delegated(int mountfd, const char *rel)
{
	_cleanup_close_ int fd = -1;
	const char *r = rel[0] == '/' ? rel + 1 : rel;

	fd = openat(mountfd, *r ? r : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	return faccessat(fd, ".", W_OK, AT_EACCESS) == 0 &&
	       faccessat(fd, "cgroup.procs", W_OK, AT_EACCESS) == 0 &&
	       faccessat(fd, "cgroup.subtree_control", W_OK, AT_EACCESS) == 0;
}

static char *parent_of(const char *rel)
{
	const char *slash = strrchr(rel, '/');

	if (!slash || slash == rel)
		return ar_xstrdup("/");
	return ar_xasprintf("%.*s", (int)(slash - rel), rel);
}

/* Make every controller of `mask` available in the cgroup `rel` (which
 * exists): enable it in the subtree_control of each ancestor from the
 * deepest one that already has it down to the parent. */
static int enable_ctrls(int mountfd, const char *rel, unsigned mask,
			struct ar_error *err)
{
	_cleanup_free_ char *copy = ar_xstrdup(rel);
	int fds[CG_MAX_DEPTH];
	unsigned have[CG_MAX_DEPTH], todo[CG_MAX_DEPTH];
	size_t n = 0;
	char *save = NULL, *comp;
	int ret = -1;

	/* fds[0] = mount root, fds[n-1] = the cgroup itself */
	fds[n] = openat(mountfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fds[n] < 0)
		return ar_error_set(err, errno, "open cgroup mount");
	n++;
	for (comp = strtok_r(copy, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		if (n >= AR_ARRAY_SIZE(fds)) {
			ar_error_set_plain(err, ENAMETOOLONG,
					   "cgroup path `%s` is too deep", rel);
			goto out;
		}
		fds[n] =
			openat(fds[n - 1], comp,
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fds[n] < 0) {
			ar_error_set(err, errno, "open cgroup `%s`", rel);
			goto out;
		}
		n++;
	}
	for (size_t i = 0; i < n; i++)
		have[i] = read_ctrls(fds[i], "cgroup.controllers");
	for (size_t i = 0; i < n; i++)
		todo[i] = 0;
	for (unsigned bit = 1; bit && bit <= AR_CG_MISC; bit <<= 1) {
		size_t k;

		if (!(mask & bit) || n < 2 || (have[n - 1] & bit))
			continue;
		/* deepest ancestor that can hand it down */
		for (k = n - 1; k-- > 0;)
			if (have[k] & bit)
				break;
		if (k == (size_t)-1) {
			ar_error_set_plain(
				err, EOPNOTSUPP,
				"cgroup controller `%s` is not available",
				ar_cgroup_ctrl_name(bit));
			goto out;
		}
		for (size_t j = k; j < n - 1; j++)
			todo[j] |= bit;
	}
	/* top down, all controllers of one level in one open file (one
	 * write each) */
	for (size_t j = 0; j + 1 < n; j++) {
		char vals[8][16];
		char *lines[8];
		size_t nl = 0;

		todo[j] &= ~read_ctrls(fds[j], "cgroup.subtree_control");
		for (unsigned bit = 1; bit <= AR_CG_MISC; bit <<= 1) {
			if (!(todo[j] & bit))
				continue;
			snprintf(vals[nl], sizeof(vals[nl]), "+%s",
				 ar_cgroup_ctrl_name(bit));
			lines[nl] = vals[nl];
			nl++;
		}
		if (nl && ar_cg_write_lines(fds[j], "cgroup.subtree_control",
					    lines, nl, err) < 0) {
			if (err->code == EBUSY)
				ar_error_wrap(
					err,
					"enable controllers for `%s` in a parent cgroup that has processes (the \"no internal processes\" rule)",
					rel);
			else
				ar_error_wrap(
					err,
					"enable controllers for cgroup `%s`",
					rel);
			goto out;
		}
	}
	ret = 0;
out:
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return ret;
}

/* mkdir -p `rel` below the mount; returns an fd of the leaf, *created
 * tells whether the leaf was made by us. */
static int make_path(int mountfd, const char *rel, bool *created,
		     struct ar_error *err)
{
	_cleanup_free_ char *copy = ar_xstrdup(rel);
	_cleanup_close_ int cur = -1;
	char *save = NULL, *comp, *next;

	*created = false;
	cur = openat(mountfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return ar_error_set(err, errno, "open cgroup mount");
	for (comp = strtok_r(copy, "/", &save); comp; comp = next) {
		int fd;

		next = strtok_r(NULL, "/", &save);
		*created = false;
		if (mkdirat(cur, comp, 0755) == 0)
			*created = true;
		else if (errno != EEXIST)
			return ar_error_set(err, errno, "create cgroup `%s`",
					    rel);
		fd = openat(cur, comp,
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return ar_error_set(err, errno, "open cgroup `%s`",
					    rel);
		close(cur);
		cur = fd;
	}
	return ar_steal_fd(&cur);
}

static void mask_names(unsigned mask, char *buf, size_t sz)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned bit = 1; bit <= AR_CG_MISC; bit <<= 1)
		if ((mask & bit) && off < sz)
			off += (size_t)snprintf(buf + off, sz - off, "%s%s",
						off ? ", " : "",
						ar_cgroup_ctrl_name(bit));
}

/* The rootless "running without a cgroup" warning is printed once per
 * boot and user: the first run leaves a marker holding the boot id in
 * the user's runtime directory ($XDG_RUNTIME_DIR/agentrun-nocgroup;
 * without the variable /run/user/UID when it is the user's, else
 * /tmp/agentrun-nocgroup-UID: never followed through a link, used only
 * when the user owns it); `agentrun doctor` says it every time (check
 * `cgroup`). True when the warning is due (always when no marker can be
 * kept). */
/* The directory of the marker (an fd the user owns, -1: none) and its
 * name in it. */
static int nocgroup_marker_dir(char *name, size_t size)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	char dir[64];
	struct stat st;
	int dfd;

	snprintf(name, size, "agentrun-nocgroup");
	if (rt && rt[0] == '/') {
		dfd = open(rt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		snprintf(dir, sizeof(dir), "/run/user/%u", (unsigned)geteuid());
		dfd = open(dir,
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0) {
			/* sticky /tmp: the file's owner is checked instead */
			snprintf(name, size, "agentrun-nocgroup-%u",
				 (unsigned)geteuid());
			return open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	if (dfd >= 0 && (fstat(dfd, &st) < 0 || st.st_uid != geteuid())) {
		close(dfd);
		return -1;
	}
	return dfd;
}

static bool nocgroup_warning_due(void)
{
	_cleanup_close_ int bfd = -1, dfd = -1, fd = -1;
	char boot[64] = "", seen[64] = "", name[64];
	struct stat st;
	ssize_t n;

	bfd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (bfd < 0)
		return true;
	n = read(bfd, boot, sizeof(boot) - 1);
	if (n <= 0)
		return true;
	boot[n] = '\0';
	dfd = nocgroup_marker_dir(name, sizeof(name));
	if (dfd < 0)
		return true;
	fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
	    !S_ISREG(st.st_mode))
		return true;
	n = read(fd, seen, sizeof(seen) - 1);
	if (n > 0 && (size_t)n == strlen(boot) && memcmp(seen, boot, n) == 0)
		return false;
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, boot, strlen(boot), 0);
	return true;
}

static bool has_device_rules(const struct ar_cgroup_opts *o)
{
	return o->resources && o->resources->n_devices > 0;
}

/* linux.resources.devices: the eBPF program, except rootless (see
 * cgroup.h) and in a fake tree. */
static int apply_devices(const struct ar_cgroup_opts *o, int dirfd,
			 struct ar_error *err)
{
	if (!has_device_rules(o) || o->mount)
		return 0;
	if (o->rootless) {
		ar_debug(
			"linux.resources.devices: no device program rootless (a user namespace cannot load one; it cannot mknod devices either)");
		return 0;
	}
	return ar_cgroup_devices_apply(dirfd, o->resources, o->devices,
				       o->n_devices, err);
}

/* No usable cgroup: decide between an error and running without. */
static int no_cgroup(const struct ar_cgroup_opts *o, const char *why,
		     struct ar_error *err)
{
	static bool warned;

	if (has_device_rules(o) && !o->rootless) {
		/* a device rule that cannot be enforced is never silent */
		if (!o->ignore_unavailable)
			return ar_error_set_plain(
				err, EOPNOTSUPP,
				"cannot enforce linux.resources.devices: %s (set the annotation %s=true or %s=1 to run without the device rules)",
				why, AR_CGROUP_IGNORE_ANNOTATION,
				AR_CGROUP_IGNORE_ENV);
		ar_warn("%s: running without the device rules", why);
	}
	if (ar_cgroup_resources_any(o->resources)) {
		if (!o->ignore_unavailable)
			return ar_error_set_plain(
				err, EOPNOTSUPP,
				"cannot apply linux.resources: %s (set the annotation %s=true or %s=1 to run without the limits)",
				why, AR_CGROUP_IGNORE_ANNOTATION,
				AR_CGROUP_IGNORE_ENV);
		ar_warn("%s: running without the requested resource limits",
			why);
	} else if (o->rootless && ar_log_has_destination()) {
		/* An engine gave --log (podman through conmon): the notice
		 * goes there only, where crun and runc put their warnings; on
		 * stderr it would become the container's output. */
		ar_log(AR_LOG_INFO, "%s: running without a cgroup", why);
	} else if (o->rootless) {
		if (!warned && nocgroup_warning_due())
			ar_warn("%s: running without a cgroup (said once per boot; `agentrun doctor` checks it)",
				why);
		else
			ar_debug("%s: running without a cgroup", why);
		warned = true;
	} else {
		ar_debug("%s: running without a cgroup", why);
	}
	return 0;
}

const char *ar_cgroup_path(const struct ar_cgroup *cg)
{
	return cg ? cg->path : NULL;
}

int ar_cgroup_dirfd(const struct ar_cgroup *cg)
{
	return cg ? cg->dirfd : -1;
}

void ar_cgroup_free(struct ar_cgroup *cg)
{
	if (!cg)
		return;
	if (cg->dirfd >= 0)
		close(cg->dirfd);
	if (cg->mountfd >= 0)
		close(cg->mountfd);
	free(cg->path);
	free(cg->rel);
	free(cg->unit);
	free(cg->slice);
	ar_systemd_props_free(&cg->annotation_props);
	free(cg);
}

/* Pick the delegated base for a rootless container (relative path). */
static char *rootless_base(int mountfd, const char *own)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *parent = NULL;
	const char *r = own[0] == '/' ? own + 1 : own;

	fd = openat(mountfd, *r ? r : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (*r && has_procs(fd)) {
		/* we (and maybe others) live in our own cgroup: no
		 * controllers can be enabled there; become a sibling */
		parent = parent_of(own);
		if (strcmp(parent, "/") != 0 && delegated(mountfd, parent))
			return ar_steal_ptr(&parent);
	}
	if (delegated(mountfd, own))
		return ar_xstrdup(own);
	return NULL;
}

int ar_cgroup_plan(const struct ar_cgroup_opts *o, struct ar_cgroup **out,
		   struct ar_error *err)
{
	struct ar_cgroup *cg = ar_xcalloc(1, sizeof(*cg));
	_cleanup_cgroup_ struct ar_cgroup *guard = cg;
	_cleanup_free_ char *own = NULL, *base = NULL;
	_cleanup_free_ char *why = NULL;
	const char *mount = o->mount;
	unsigned missing;

	cg->dirfd = cg->mountfd = -1;
	if (o->manager == AR_CGROUP_MGR_DISABLED) {
		/* an explicit choice of the user, as in crun: no error */
		if (ar_cgroup_resources_any(o->resources))
			ar_warn("the cgroup manager is disabled: linux.resources limits are not applied");
		if (has_device_rules(o))
			ar_debug(
				"the cgroup manager is disabled: linux.resources.devices is not enforced");
		*out = ar_steal_ptr(&guard);
		return 0;
	}
	if (ar_cgroup_resources_ctrls(o->resources, &cg->req, err) < 0)
		return -1;
	if (o->manager == AR_CGROUP_MGR_SYSTEMD) {
		/* the path is systemd's choice: known once the scope is
		 * made (ar_cgroup_make) */
		if (ar_cgroup_systemd_unit(o->cgroups_path, o->id, o->rootless,
					   &cg->slice, &cg->unit, err) < 0 ||
		    ar_systemd_annotation_props(o->annotations,
						o->n_annotations,
						&cg->annotation_props, err) < 0)
			return -1;
		*out = ar_steal_ptr(&guard);
		return 0;
	}
	if (!mount)
		mount = ar_cgroup_mount();
	if (!mount) {
		if (no_cgroup(o, "no cgroup2 file system is mounted", err) < 0)
			return -1;
		*out = ar_steal_ptr(&guard);
		return 0;
	}
	cg->mountfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->mountfd < 0)
		return ar_error_set(err, errno, "open `%s`", mount);

	if (o->rootless) {
		if (o->own_cgroup)
			own = ar_xstrdup(o->own_cgroup);
		else if (ar_cgroup_own(&own, err) < 0)
			return -1;
		base = rootless_base(cg->mountfd, own);
		if (!base) {
			why = ar_xasprintf(
				"cgroup `%s` is not delegated to this user",
				own);
			if (no_cgroup(o, why, err) < 0)
				return -1;
			*out = ar_steal_ptr(&guard);
			return 0;
		}
	} else {
		base = ar_xstrdup("/");
	}
	if (ar_cgroup_resolve_path(o->cgroups_path, o->id, o->rootless, base,
				   &cg->rel, err) < 0)
		return -1;
	if (!ar_path_under(cg->rel, base)) {
		/* rootless with an absolute cgroupsPath outside the base */
		free(base);
		base = parent_of(cg->rel);
	}

	/* What the base can hand down. */
	{
		_cleanup_close_ int bfd = -1;
		const char *b = base[0] == '/' ? base + 1 : base;

		bfd = openat(cg->mountfd, *b ? b : ".",
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		cg->avail = bfd < 0 ? 0 : read_ctrls(bfd, "cgroup.controllers");
		/* a base with processes (rootless, not delegated above our
		 * own cgroup) cannot enable any */
		if (bfd >= 0 && strcmp(base, "/") != 0 && has_procs(bfd))
			cg->avail = 0;
	}
	/* No controllers is fine: a cgroup still gives cgroup.procs,
	 * cgroup.freeze, cgroup.kill and the device program. */
	missing = cg->req & ~cg->avail;
	if (missing) {
		char names[128];

		mask_names(missing, names, sizeof(names));
		if (!o->ignore_unavailable)
			return ar_error_set_plain(
				err, EOPNOTSUPP,
				"cannot apply linux.resources: cgroup controller(s) %s not available in %s%s (set the annotation %s=true or %s=1 to run without them)",
				names, mount, base, AR_CGROUP_IGNORE_ANNOTATION,
				AR_CGROUP_IGNORE_ENV);
		/* ar_cgroup_apply_resources() warns for each one */
	}
	cg->path = ar_xasprintf("%s%s", mount, cg->rel);
	*out = ar_steal_ptr(&guard);
	return 0;
}

/* The planned cgroup is not (or no longer) the container's. */
static void drop_plan(struct ar_cgroup *cg)
{
	free(cg->path);
	cg->path = NULL;
	if (cg->dirfd >= 0)
		close(cg->dirfd);
	cg->dirfd = -1;
}

/* The container process's cgroup v2 path ("/a/b") from
 * /proc/PID/cgroup. */
static int pid_cgroup(pid_t pid, char **out, struct ar_error *err)
{
	_cleanup_free_ char *buf = NULL;
	char path[64], *line, *save = NULL;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (ar_read_file_at(AT_FDCWD, path, AR_CG_FILE_MAX, &buf, NULL, err) <
	    0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "0::/", 4) == 0 && line[4]) {
			*out = ar_xstrdup(line + 3);
			return 0;
		}
	return ar_error_set_plain(
		err, ENOENT, "%s has no cgroup v2 entry below the root", path);
}

/* run.oci.systemd.subgroup: the process moves from the scope into its
 * child NAME, then the scope hands its controllers down (a cgroup with
 * processes cannot: the "no internal processes" rule). */
static int enter_subgroup(struct ar_cgroup *cg, const struct ar_cgroup_opts *o,
			  struct ar_error *err)
{
	const char *sub = o->systemd_subgroup;
	_cleanup_free_ char *rel = NULL;
	int fd;

	if (strchr(sub, '/') || strcmp(sub, ".") == 0 ||
	    strcmp(sub, "..") == 0 || strncmp(sub, "cgroup.", 7) == 0)
		return ar_error_set_plain(
			err, EINVAL,
			"annotation " AR_CGROUP_SYSTEMD_SUBGROUP_ANNOTATION
			" `%s`: not a cgroup name",
			sub);
	if (mkdirat(cg->dirfd, sub, 0755) < 0 && errno != EEXIST)
		return ar_error_set(err, errno, "create cgroup `%s/%s`",
				    cg->rel, sub);
	fd = openat(cg->dirfd, sub,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return ar_error_set(err, errno, "open cgroup `%s/%s`", cg->rel,
				    sub);
	close(cg->dirfd);
	cg->dirfd = fd;
	rel = ar_xasprintf("%s/%s", cg->rel, sub);
	free(cg->rel);
	cg->rel = ar_steal_ptr(&rel);
	if (enter_fd(cg->dirfd, o->pid, err) < 0 ||
	    enable_ctrls(cg->mountfd, cg->rel,
			 (AR_CG_DEFAULT | cg->req) & cg->avail, err) < 0)
		return ar_error_wrap(err, "systemd scope %s, subgroup %s",
				     cg->unit, sub);
	return 0;
}

/* The systemd manager: the scope with o->pid in it, then, in its
 * delegated cgroup, every limit and the device program as for cgroupfs
 * (systemd holds the limits it can express too, so that a reload of
 * systemd keeps them). */
static int make_systemd(struct ar_cgroup *cg, const struct ar_cgroup_opts *o,
			struct ar_error *err)
{
	_cleanup_free_ char *desc = NULL;
	const char *mount = ar_cgroup_mount();
	unsigned missing;
	struct ar_systemd_props props = { 0 };
	struct ar_systemd_scope s = {
		.unit = cg->unit,
		.slice = cg->slice,
		.pid = o->pid,
		.rootless = o->rootless,
		.props = &props,
		.annotations = &cg->annotation_props,
	};
	int r;

	if (o->pid <= 0)
		return ar_error_set_plain(
			err, EINVAL,
			"systemd cgroup manager: no process to put in %s",
			cg->unit);
	if (!mount)
		return ar_error_set_plain(
			err, ENOENT,
			"systemd cgroup manager: no cgroup2 file system is mounted");
	if (ar_systemd_resource_props(o->resources, &props, err) < 0) {
		ar_systemd_props_free(&props);
		return -1;
	}
	desc = ar_xasprintf("agentrun container %s", o->id);
	s.description = desc;
	r = ar_systemd_start_scope(&s, err);
	ar_systemd_props_free(&props);
	if (r < 0)
		return -1;
	if (pid_cgroup(o->pid, &cg->rel, err) < 0)
		return ar_error_wrap(err, "systemd scope %s", cg->unit);
	cg->mountfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->mountfd < 0)
		return ar_error_set(err, errno, "open `%s`", mount);
	cg->dirfd = openat(cg->mountfd, cg->rel + 1,
			   O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (cg->dirfd < 0)
		return ar_error_set(err, errno, "open the cgroup of %s (%s%s)",
				    cg->unit, mount, cg->rel);
	/* Delegate=yes: the scope has what its slice can hand down */
	cg->avail = read_ctrls(cg->dirfd, "cgroup.controllers");
	if (o->systemd_subgroup && *o->systemd_subgroup &&
	    enter_subgroup(cg, o, err) < 0)
		return -1;
	cg->path = ar_xasprintf("%s%s", mount, cg->rel);
	missing = cg->req & ~cg->avail;
	if (missing && !o->ignore_unavailable) {
		char names[128];

		mask_names(missing, names, sizeof(names));
		ar_error_set_plain(
			err, EOPNOTSUPP,
			"cannot apply linux.resources: cgroup controller(s) %s not delegated to %s (set the annotation %s=true or %s=1 to run without them)",
			names, cg->unit, AR_CGROUP_IGNORE_ANNOTATION,
			AR_CGROUP_IGNORE_ENV);
		drop_plan(cg);
		return -1;
	}
	if (ar_cgroup_apply_resources(cg->dirfd, o->resources, cg->avail, err) <
		    0 ||
	    apply_devices(o, cg->dirfd, err) < 0) {
		ar_error_wrap(err, "cgroup `%s`", cg->path);
		drop_plan(cg);
		return -1;
	}
	ar_debug("cgroup %s (systemd %s) ready", cg->path, cg->unit);
	return 0;
}

int ar_cgroup_make(struct ar_cgroup *cg, const struct ar_cgroup_opts *o,
		   struct ar_error *err)
{
	_cleanup_close_ int leaf = -1;
	_cleanup_free_ char *why = NULL;
	bool created = false;

	if (cg->unit && !cg->path)
		return make_systemd(cg, o, err);
	if (!cg->path || cg->dirfd >= 0)
		return 0;
	/* ENOENT: a parent was removed under us by the delete of its last
	 * container (remove_default_parent): make it again. Each round is
	 * a few microseconds, and losing one takes a removal inside that
	 * window: a bound of 20 was lost 21 times in a row to a loop of
	 * removals on the other core of a loaded machine (a CI dry run),
	 * 1000 cannot be in practice and still ends a real ENOENT. */
	for (int i = 0;; i++) {
		leaf = make_path(cg->mountfd, cg->rel, &created, err);
		if (leaf >= 0 || err->code != ENOENT || i >= 1000)
			break;
		ar_error_clear(err);
	}
	if (leaf < 0) {
		drop_plan(cg);
		/* the tree is not writable */
		if (err->code == EACCES || err->code == EPERM ||
		    err->code == EROFS) {
			why = ar_xasprintf("%s", err->msg);
			ar_error_clear(err);
			return no_cgroup(o, why, err);
		}
		return -1;
	}
	if (!created && has_procs(leaf)) {
		ar_error_set_plain(err, EBUSY,
				   "cgroup `%s` already exists and is in use",
				   cg->path);
		drop_plan(cg);
		return -1;
	}
	cg->dirfd = ar_steal_fd(&leaf);
	if (enable_ctrls(cg->mountfd, cg->rel,
			 (AR_CG_DEFAULT | cg->req) & cg->avail, err) < 0 ||
	    ar_cgroup_apply_resources(cg->dirfd, o->resources, cg->avail, err) <
		    0 ||
	    apply_devices(o, cg->dirfd, err) < 0 ||
	    (o->pid > 0 && ar_cgroup_enter(cg, o->pid, err) < 0)) {
		ar_error_wrap(err, "cgroup `%s`", cg->path);
		if (created &&
		    unlinkat(cg->mountfd, cg->rel + 1, AT_REMOVEDIR) < 0)
			ar_debug("remove cgroup %s: %m", cg->path);
		drop_plan(cg);
		return -1;
	}
	ar_debug("cgroup %s ready", cg->path);
	return 0;
}

int ar_cgroup_create(const struct ar_cgroup_opts *o, struct ar_cgroup **out,
		     struct ar_error *err)
{
	_cleanup_cgroup_ struct ar_cgroup *cg = NULL;

	if (ar_cgroup_plan(o, &cg, err) < 0 || ar_cgroup_make(cg, o, err) < 0)
		return -1;
	*out = ar_steal_ptr(&cg);
	return 0;
}

/* ---- using it ---- */

static int enter_fd(int dirfd, pid_t pid, struct ar_error *err)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return ar_cg_write(dirfd, "cgroup.procs", buf, err);
}

int ar_cgroup_enter(const struct ar_cgroup *cg, pid_t pid, struct ar_error *err)
{
	if (!cg || cg->dirfd < 0)
		return 0;
	if (enter_fd(cg->dirfd, pid, err) < 0)
		return ar_error_wrap(err, "move process %d into cgroup `%s`",
				     (int)pid, cg->path);
	return 0;
}

int ar_cgroup_enter_path(const char *path, pid_t pid, struct ar_error *err)
{
	_cleanup_close_ int fd = ar_cg_open(path, err);

	if (fd < 0)
		return -1;
	if (enter_fd(fd, pid, err) < 0)
		return ar_error_wrap(err, "move process %d into cgroup `%s`",
				     (int)pid, path);
	return 0;
}

/* Wait until cgroup.events has "key want" (want = '0' or '1'). Returns 0,
 * or -1 with ETIMEDOUT. */
static int wait_events(int dirfd, const char *key, char want, int timeout_ms,
		       struct ar_error *err)
{
	_cleanup_close_ int fd = -1;
	long long deadline = ar_now_ms() + timeout_ms;
	char needle[32];

	snprintf(needle, sizeof(needle), "%s %c", key, want);
	fd = openat(dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ar_error_set(err, errno, "open cgroup.events");
	for (;;) {
		char buf[256];
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		struct pollfd pfd = { .fd = fd, .events = POLLPRI };
		long long left;

		if (n < 0)
			return ar_error_set(err, errno, "read cgroup.events");
		buf[n] = '\0';
		if (strstr(buf, needle))
			return 0;
		left = deadline - ar_now_ms();
		if (left <= 0)
			return ar_error_set_plain(
				err, ETIMEDOUT,
				"timed out waiting for `%s` in cgroup.events",
				needle);
		/* cgroup.events signals changes with POLLPRI; the timeout
		 * bounds any missed wakeup. */
		poll(&pfd, 1, left < 50 ? (int)left : 50);
	}
}

int ar_cgroup_freeze(const char *path, bool freeze, struct ar_error *err)
{
	_cleanup_close_ int fd = ar_cg_open(path, err);

	if (fd < 0)
		return -1;
	if (ar_cg_write(fd, "cgroup.freeze", freeze ? "1" : "0", err) < 0 ||
	    wait_events(fd, "frozen", freeze ? '1' : '0', 10000, err) < 0)
		return ar_error_wrap(err, "%s cgroup `%s`",
				     freeze ? "freeze" : "thaw", path);
	return 0;
}

bool ar_cgroup_is_frozen(const char *path)
{
	_cleanup_free_ char *buf = NULL;
	struct ar_error e = AR_ERROR_INIT;
	_cleanup_close_ int fd = -1;
	uint64_t v;

	if (!path)
		return false;
	fd = ar_cg_open(path, &e);
	if (fd < 0 || ar_cg_read(fd, "cgroup.events", &buf, &e) < 0)
		return false;
	return ar_cg_keyed(buf, "frozen", &v) == 0 && v == 1;
}

/* Call fn for every child cgroup of dirfd: its name and an fd of it (-1
 * when it could not be opened: removed meanwhile). Stops at the first
 * error. */
static int for_each_child(int dirfd,
			  int (*fn)(int dirfd, const char *name, int sub,
				    void *arg, struct ar_error *err),
			  void *arg, struct ar_error *err)
{
	DIR *d;
	struct dirent *de;
	int dfd, r = 0;

	dfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (dfd < 0)
		return ar_error_set(err, errno, "dup");
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return ar_error_set(err, errno, "opendir");
	}
	rewinddir(d);
	while (r == 0 && (de = readdir(d))) {
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dirfd, de->d_name,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		r = fn(dirfd, de->d_name, sub, arg, err);
		if (sub >= 0)
			close(sub);
	}
	closedir(d);
	return r;
}

struct pid_list {
	pid_t *v;
	size_t n;
	int depth;
};

static void pid_list_free(struct pid_list *l)
{
	free(l->v);
}

static int collect_child_pids(int dirfd, const char *name, int sub, void *arg,
			      struct ar_error *err);

/* Collect the pids of dirfd's cgroup and all below. */
static int collect_pids(int dirfd, struct pid_list *l, struct ar_error *err)
{
	_cleanup_free_ char *buf = NULL;
	int r;

	if (l->depth > 64)
		return ar_error_set_plain(err, ELOOP, "cgroup tree too deep");
	if (ar_cg_read(dirfd, "cgroup.procs", &buf, err) < 0)
		return -1;
	for (char *p = buf; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		l->v = ar_xrealloc(l->v, (l->n + 1) * sizeof(pid_t));
		l->v[l->n++] = (pid_t)pid;
		p = end + strspn(end, "\n");
	}
	l->depth++;
	r = for_each_child(dirfd, collect_child_pids, l, err);
	l->depth--;
	return r;
}

static int collect_child_pids(int dirfd, const char *name, int sub, void *arg,
			      struct ar_error *err)
{
	(void)dirfd;
	(void)name;
	if (sub < 0)
		return 0; /* removed meanwhile */
	return collect_pids(sub, arg, err);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int ar_cgroup_pids(const char *path, pid_t **out, size_t *n,
		   struct ar_error *err)
{
	_cleanup_close_ int fd = ar_cg_open(path, err);
	_cleanup_(pid_list_free) struct pid_list l = { 0 };

	if (fd < 0)
		return -1;
	if (collect_pids(fd, &l, err) < 0)
		return ar_error_wrap(err, "list processes of cgroup `%s`",
				     path);
	if (l.n)
		qsort(l.v, l.n, sizeof(pid_t), cmp_pid);
	*n = l.n;
	*out = ar_steal_ptr(&l.v);
	return 0;
}

/* Refuse to kill/remove the cgroup we live in, or one of its ancestors. */
static int not_ours(const char *path, struct ar_error *err)
{
	_cleanup_free_ char *own = NULL, *abs = NULL;
	struct ar_error e = AR_ERROR_INIT;
	const char *mount = ar_cgroup_mount();

	if (!mount || ar_cgroup_own(&own, &e) < 0)
		return 0;
	abs = ar_xasprintf("%s%s", mount, strcmp(own, "/") ? own : "");
	if (ar_path_under(abs, path))
		return ar_error_set_plain(
			err, EINVAL,
			"refusing to act on cgroup `%s`: it contains the runtime itself",
			path);
	return 0;
}

/* The cgroup of dirfd was removed (its files are gone: openat says
 * ENOENT, reads on files opened before say ENODEV). Only an empty cgroup
 * can be removed, and a systemd manager prunes the cgroup of a scope the
 * moment its last process has exited: what the caller wanted already. */
static bool cgroup_removed(int dirfd)
{
	return ar_cg_file_gone(dirfd, "cgroup.events");
}

static int signal_all(int dirfd, int sig, struct ar_error *err)
{
	_cleanup_(pid_list_free) struct pid_list l = { 0 };

	if (collect_pids(dirfd, &l, err) < 0)
		return -1;
	for (size_t i = 0; i < l.n; i++)
		if (kill(l.v[i], sig) < 0 && errno != ESRCH)
			return ar_error_set(err, errno, "kill %d", (int)l.v[i]);
	return 0;
}

/* ESRCH for a cgroup that is gone: it had no process left to signal. */
static int kill_all_gone(const char *path, struct ar_error *err)
{
	ar_error_clear(err);
	return ar_error_set_plain(
		err, ESRCH, "cgroup `%s` is gone: no process left to signal",
		path);
}

int ar_cgroup_kill_all(const char *path, int sig, struct ar_error *err)
{
	_cleanup_close_ int fd = ar_cg_open(path, err);

	if (fd < 0)
		return err->code == ENOENT ? kill_all_gone(path, err) : -1;
	if (not_ours(path, err) < 0)
		return -1;
	if (sig == SIGKILL) {
		if (ar_cg_write(fd, "cgroup.kill", "1", err) == 0)
			return 0;
		if (cgroup_removed(fd))
			return kill_all_gone(path, err);
		if (err->code != ENOENT)
			return ar_error_wrap(err, "cgroup `%s`", path);
		ar_error_clear(err);
	}
	if (signal_all(fd, sig, err) < 0)
		return cgroup_removed(fd) ?
			       kill_all_gone(path, err) :
			       ar_error_wrap(err, "cgroup `%s`", path);
	return 0;
}

static int rmdir_retry(int parentfd, const char *name, struct ar_error *err)
{
	for (int i = 0;; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if (unlinkat(parentfd, name, AT_REMOVEDIR) == 0 ||
		    errno == ENOENT)
			return 0;
		if (errno != EBUSY || i >= 500)
			return ar_error_set(err, errno, "remove cgroup `%s`",
					    name);
		nanosleep(&ts, NULL);
	}
}

static int remove_child(int dirfd, const char *name, int sub, void *arg,
			struct ar_error *err);

/* Remove every child cgroup of dirfd, depth first. */
static int remove_children(int dirfd, int depth, struct ar_error *err)
{
	if (depth > 64)
		return ar_error_set_plain(err, ELOOP, "cgroup tree too deep");
	return for_each_child(dirfd, remove_child, &depth, err);
}

static int remove_child(int dirfd, const char *name, int sub, void *arg,
			struct ar_error *err)
{
	const int *depth = arg;

	if (sub >= 0 && remove_children(sub, *depth + 1, err) < 0)
		return -1;
	return rmdir_retry(dirfd, name, err);
}

/* The parent of the default layout (`<mount>/agentrun/<id>`, root) goes
 * with its last container. A container made meanwhile keeps it (EBUSY,
 * ignored) or, when its mkdir lost the race, makes it again (make_path
 * is retried on ENOENT by ar_cgroup_make). */
static void remove_default_parent(const char *dir)
{
	const char *mount = ar_cgroup_mount();
	size_t ml = mount ? strlen(mount) : 0;

	if (!mount || strncmp(dir, mount, ml) != 0 ||
	    strcmp(dir + ml, "/" AR_CGROUP_DEFAULT_PARENT) != 0)
		return;
	if (rmdir(dir) < 0 && errno != EBUSY && errno != ENOTEMPTY &&
	    errno != ENOENT)
		ar_debug("remove the empty cgroup %s: %m", dir);
}

/* The error of a cgroup that SIGKILL did not empty, with what is still
 * in it (pid, name, state: a D state names a process stuck in the
 * kernel). */
static int still_populated(int fd, const char *path, struct ar_error *err)
{
	_cleanup_(pid_list_free) struct pid_list l = { 0 };
	struct ar_error e = AR_ERROR_INIT;
	char left[256] = "";

	if (collect_pids(fd, &l, &e) < 0)
		l.n = 0;
	for (size_t i = 0, len = 0; i < l.n && i < 8 && len < sizeof(left);
	     i++) {
		struct ar_proc_stat ps = { .comm = "?", .state = '?' };

		(void)ar_proc_stat_read(l.v[i], &ps);
		len += (size_t)snprintf(left + len, sizeof(left) - len,
					"%s%d (%s, %c)", i ? ", " : ": ",
					(int)l.v[i], ps.comm, ps.state);
	}
	return ar_error_set_plain(
		err, EBUSY,
		"cgroup `%s` still has processes 30 s after SIGKILL%s", path,
		left);
}

int ar_cgroup_destroy(const char *path, struct ar_error *err)
{
	_cleanup_close_ int fd = -1, parent = -1;
	_cleanup_free_ char *dir = NULL;
	const char *name;

	if (!path)
		return 0;
	fd = ar_cg_open(path, err);
	if (fd < 0) {
		if (err->code == ENOENT) {
			ar_error_clear(err);
			return 0;
		}
		return -1;
	}
	if (not_ours(path, err) < 0)
		return -1;
	/* The parent, held from now: a systemd scope's manager trims the
	 * scope whole once it is empty (run.oci.systemd.subgroup puts the
	 * container in SCOPE/container), and a parent removed meanwhile
	 * leaves the rmdir below ENOENT (gone), never an open that fails. */
	dir = parent_of(path);
	name = strrchr(path, '/') + 1;
	parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0) {
		if (errno == ENOENT)
			return 0;
		return ar_error_set(err, errno, "open `%s`", dir);
	}
	for (int attempt = 0;; attempt++) {
		struct ar_error e = AR_ERROR_INIT;

		if (ar_cg_write(fd, "cgroup.kill", "1", &e) < 0)
			(void)signal_all(fd, SIGKILL, &e);
		ar_error_clear(&e);
		if (wait_events(fd, "populated", '0', 2000, &e) == 0)
			break;
		/* removed meanwhile (the systemd manager of a scope prunes
		 * it once empty): nothing left of it to wait for or remove */
		if (cgroup_removed(fd))
			return 0;
		/* 30 s in all: killed processes of a slow machine still have
		 * to exit; a live machine ends at the first wait */
		if (attempt >= 14)
			return still_populated(fd, path, err);
	}
	if (remove_children(fd, 0, err) < 0)
		return ar_error_wrap(err, "cgroup `%s`", path);
	if (rmdir_retry(parent, name, err) < 0)
		return ar_error_wrap(err, "cgroup `%s`", path);
	remove_default_parent(dir);
	return 0;
}

int ar_cgroup_update(const char *path, const struct oci_resources *r,
		     struct ar_error *err)
{
	_cleanup_close_ int fd = ar_cg_open(path, err);
	_cleanup_close_ int mountfd = -1;
	const char *mount = ar_cgroup_mount();
	unsigned req, avail;
	size_t ml;

	if (fd < 0)
		return -1;
	if (ar_cgroup_resources_ctrls(r, &req, err) < 0)
		return -1;
	ml = mount ? strlen(mount) : 0;
	if (mount && strncmp(path, mount, ml) == 0 && path[ml] == '/') {
		mountfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (mountfd < 0)
			return ar_error_set(err, errno, "open `%s`", mount);
		if (enable_ctrls(mountfd, path + ml, req, err) < 0)
			return ar_error_wrap(err, "cgroup `%s`", path);
	}
	avail = read_ctrls(fd, "cgroup.controllers");
	if (req & ~avail) {
		char names[128];

		mask_names(req & ~avail, names, sizeof(names));
		return ar_error_set_plain(
			err, EOPNOTSUPP,
			"cgroup `%s`: controller(s) %s not available", path,
			names);
	}
	if (ar_cgroup_apply_resources(fd, r, avail, err) < 0)
		return ar_error_wrap(err, "cgroup `%s`", path);
	return 0;
}
