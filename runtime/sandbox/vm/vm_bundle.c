/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vm handler of plain OCI bundles (docs/vm.md, "Plain bundles"): a
 * config.json with the annotation run.agentrun.handler=vm runs its
 * process in a guest kernel under QEMU, and QEMU runs as the container's
 * process, in the container's namespaces, cgroup, seccomp profile,
 * capabilities and user (what crun's krun handler does with libkrun).
 *
 * Before any process exists the bundle's config is rewritten into the
 * VMM's (youki's builder: one struct resolved first):
 *   - the root is a fresh tmpfs (create_opts.h: tmpfs_root) holding the
 *     host's /usr read-only with its merged-/usr links, /proc, a /dev,
 *     /tmp, and under /run what the VM needs (vm.h: the helpers, the
 *     kernel, agentrun's binary as the guest agent), the bundle's root
 *     at /run/agentrun-vm-root (read-only when root.readonly) and the
 *     sources of its bind mounts at /run/agentrun-vm-binds/N, each with
 *     the bind's own options (QEMU exports both, 9p);
 *   - the bundle's other mounts (proc, sysfs, tmpfs, devpts, mqueue,
 *     cgroup) are made by the guest itself, in the config's order with
 *     the binds, as are its masked and read-only paths (vm-init.sh);
 *   - the process becomes agentrun-vm (the sandbox's helper) with the
 *     bundle's command, user, directory, hostname; its environment,
 *     terminal, rlimits, capabilities, seccomp, namespaces and cgroup
 *     stay the container's: they confine QEMU;
 *   - the annotation stays: `exec` reads it from the state and runs its
 *     command in the guest (vm-exec).
 * Without a usable QEMU or guest kernel the container is not created:
 * the reason and the fix, never a run without the VM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mounts.h"
#include "oci_config.h"
#include "rootfs_fill.h"
#include "rootfs_path.h"
#include "utils.h"
#include "vm/vm.h"
#include "vm/vm_bundle.h"
#include "vm/vm_proto.h"

#define VM_ROOT_DEST "/run/agentrun-vm-root"
#define VM_BINDS_DEST "/run/agentrun-vm-binds"

/* a growing list of strings (malloc'd), NULL-ended */
struct strs {
	char **v;
	size_t n, cap;
};

static void strs_add(struct strs *s, char *owned)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? 2 * s->cap : 32;
		s->v = ar_xrealloc(s->v, s->cap * sizeof(char *));
	}
	s->v[s->n++] = owned;
	s->v[s->n] = NULL;
}

static void strs_free(struct strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* the mounts of the VMM's config, built in the config's arena */
struct mlist {
	struct ar_arena *a;
	struct oci_mount *v;
	size_t n, cap;
};

static struct oci_mount *madd(struct mlist *m, const char *dest,
			      const char *type, const char *source,
			      const char *const *opts)
{
	struct oci_mount *x;
	size_t no = 0;

	if (m->n == m->cap) {
		struct oci_mount *nv;

		m->cap = m->cap ? 2 * m->cap : 32;
		nv = oci_arena_calloc(m->a, m->cap, sizeof(*nv));
		if (m->n)
			memcpy(nv, m->v, m->n * sizeof(*nv));
		m->v = nv;
	}
	x = &m->v[m->n++];
	memset(x, 0, sizeof(*x));
	x->destination = oci_arena_strdup(m->a, dest);
	x->type = type ? oci_arena_strdup(m->a, type) : NULL;
	x->source = source ? oci_arena_strdup(m->a, source) : NULL;
	while (opts[no])
		no++;
	x->options.v = oci_arena_calloc(m->a, no + 1, sizeof(char *));
	for (size_t i = 0; i < no; i++)
		x->options.v[i] = oci_arena_strdup(m->a, opts[i]);
	x->options.n = no;
	return x;
}

/* the kinds the guest mounts itself (vm-init.sh guest_mount), as the
 * guest names them; NULL: not one */
static const char *guest_kind(const char *type)
{
	static const char *const kinds[] = { "proc",   "sysfs",	 "tmpfs",
					     "devpts", "mqueue", "cgroup2",
					     NULL };

	if (!type)
		return NULL;
	if (strcmp(type, "cgroup") == 0)
		return "cgroup2"; /* the guest kernel's own hierarchy */
	for (const char *const *k = kinds; *k; k++)
		if (strcmp(type, *k) == 0)
			return *k;
	return NULL;
}

/* options of the runtime (propagation, binds, crun's extensions) that
 * are no mount(8) option of the guest's mount */
static bool runtime_only_opt(const char *o)
{
	static const char *const names[] = {
		"bind",	      "rbind",	     "private",	     "rprivate",
		"shared",     "rshared",     "slave",	     "rslave",
		"unbindable", "runbindable", "tmpcopyup",    "notmpcopyup",
		"idmap",      "ridmap",	     "copy-symlink", "z",
		"Z",	      "U",	     "rro",	     "rrw",
		NULL
	};

	for (const char *const *n = names; *n; n++)
		if (strcmp(o, *n) == 0)
			return true;
	return false;
}

/* one line's field: no white space, not empty */
static bool plain_field(const char *s)
{
	return *s && !strpbrk(s, " \t\n\r");
}

/* "KIND OPTIONS SOURCE DESTINATION" for agentrun-vm --guest-mount */
static int guest_line(const struct oci_mount *m, const char *kind,
		      const char *source, const char *dest, size_t index,
		      char **out, struct ar_error *err)
{
	_cleanup_free_ char *opts = NULL;
	size_t len = 0;

	if (strchr(dest, '\n') || dest[0] != '/')
		return ar_error_set_plain(
			err, EINVAL,
			"mounts[%zu].destination: `%s` cannot be mounted in the guest (an absolute path without a newline)",
			index, m->destination);
	for (size_t i = 0; i < m->options.n; i++) {
		const char *o = m->options.v[i];

		if (strcmp(o, "rro") == 0)
			o = "ro";
		if (runtime_only_opt(o))
			continue;
		if (strcmp(kind, "bind") == 0 && strcmp(o, "ro") != 0)
			continue; /* a bind: the guest needs ro alone */
		if (!plain_field(o) || strchr(o, ','))
			return ar_error_set_plain(
				err, EINVAL,
				"mounts[%zu].options[%zu]: `%s` cannot be passed to the guest",
				index, i, o);
		opts = ar_xrealloc(opts, len + strlen(o) + 2);
		if (len)
			opts[len++] = ',';
		strcpy(opts + len, o);
		len += strlen(o);
	}
	*out = ar_xasprintf("%s %s %s %s", kind, len ? opts : "-", source,
			    dest);
	return 0;
}

/* under one of the guest's own mounts made before (covered): the guest
 * makes the mount point there itself */
static bool covered(const struct strs *native, const char *dest)
{
	for (size_t i = 0; i < native->n; i++) {
		size_t l = strlen(native->v[i]);

		if (strcmp(native->v[i], "/") != 0 &&
		    strncmp(dest, native->v[i], l) == 0 &&
		    (dest[l] == '/' || dest[l] == '\0'))
			return true;
	}
	return false;
}

/* The mount point of m in the bundle's root, made as runc makes it (a
 * directory, or a file for a bind of one), resolved inside the root
 * (rootfs_path.h: a link of the image never leads out): *out is its
 * path in the root without links, which the guest mounts onto (its
 * shell cannot resolve inside a root). */
static int mount_target(int rootfd, const char *root_real, const char *bundle,
			const struct oci_mount *m, bool bind, char **out,
			struct ar_error *err)
{
	_cleanup_free_ char *src = NULL, *real = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	bool is_dir = true;
	size_t l = strlen(root_real);

	if (bind && m->source) {
		src = m->source[0] == '/' ?
			      ar_xstrdup(m->source) :
			      ar_xasprintf("%s/%s", bundle, m->source);
		if (stat(src, &st) == 0)
			is_dir = S_ISDIR(st.st_mode);
	}
	fd = ar_mount_target_in_root(rootfd, m->destination, is_dir, err);
	if (fd < 0)
		return -1;
	real = ar_fd_path(fd);
	if (!real)
		return ar_error_set(err, errno, "resolve \"%s\" in root",
				    m->destination);
	if (strcmp(real, root_real) == 0) {
		*out = ar_xstrdup("/");
		return 0;
	}
	if (strcmp(root_real, "/") == 0 || strncmp(real, root_real, l) != 0 ||
	    real[l] != '/')
		return ar_error_set_plain(err, EXDEV,
					  "\"%s\" resolves out of the root",
					  m->destination);
	*out = ar_xstrdup(real + l);
	return 0;
}

bool ar_vm_bundle_wanted(const struct oci_config *cfg)
{
	const char *h = oci_config_annotation(cfg, AR_VM_HANDLER_ANNOTATION);

	return h && strcmp(h, "vm") == 0;
}

/* A name under the guest's /proc/sys, dots or slashes between its
 * parts (as runc and crun take them): no empty part, so neither "." nor
 * ".." (a dot is a separator) leads elsewhere. */
static bool sysctl_key_ok(const char *k)
{
	size_t part = 0;

	if (strlen(k) > 255)
		return false;
	for (const char *c = k;; c++) {
		if (*c == '.' || *c == '/' || !*c) {
			if (part == 0)
				return false;
			if (!*c)
				return true;
			part = 0;
		} else if (*c == '_' || *c == '-' || (*c >= 'a' && *c <= 'z') ||
			   (*c >= 'A' && *c <= 'Z') ||
			   (*c >= '0' && *c <= '9')) {
			part++;
		} else {
			return false;
		}
	}
}

/* The guest takes a user's groups as one argument (vm_proto.h): more
 * than AR_VM_MAX_GROUPS is refused before anything starts. */
static int too_many_groups(const struct oci_user *u, const char *file,
			   const char *what, struct ar_error *err)
{
	if (u->n_additional_gids <= AR_VM_MAX_GROUPS)
		return 0;
	return ar_error_set_plain(
		err, E2BIG,
		"%s%s%s.user.additionalGids: %zu groups; the vm handler passes at most %d to the guest",
		file ? file : "", file ? ": " : "", what, u->n_additional_gids,
		AR_VM_MAX_GROUPS);
}

/* the host's top-level system entries: a link (merged /usr) is made as
 * the same link in the VMM's root, a directory is bound read-only */
static void system_dirs(struct mlist *ml, struct ar_rootfs_entry *e, size_t *ne,
			struct ar_arena *a)
{
	static const char *const tops[] = { "bin",   "sbin",   "lib", "lib32",
					    "lib64", "libx32", NULL };
	static const char *const ro[] = { "rbind", "ro", "nosuid", "nodev",
					  NULL };

	madd(ml, "/usr", "bind", "/usr", ro);
	for (const char *const *t = tops; *t; t++) {
		_cleanup_free_ char *host = ar_xasprintf("/%s", *t);
		char target[256];
		struct stat st;
		ssize_t r;

		if (lstat(host, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			r = readlink(host, target, sizeof(target) - 1);
			if (r <= 0)
				continue;
			target[r] = '\0';
			e[(*ne)++] = (struct ar_rootfs_entry){
				oci_arena_strdup(a, *t), AR_ROOTFS_SYMLINK, 0,
				oci_arena_strdup(a, target), false
			};
		} else if (S_ISDIR(st.st_mode)) {
			madd(ml, host, "bind", host, ro);
		}
	}
}

int ar_vm_bundle_config(struct oci_config *cfg, const char *bundle,
			const char *state_root,
			const struct ar_rootfs_content **tmpfs_root,
			struct ar_error *err)
{
	static const char *const ro_file[] = { "bind", "ro", "nosuid", "nodev",
					       NULL };
	static const char *const tmpfs_opts[] = { "nosuid", "nodev",
						  "mode=1777", NULL };
	/* the VMM's root directory: mount points, and sys, where the
	 * guest's own /sys goes (vm-init.sh moves it there) */
	static const struct {
		const char *name;
		mode_t mode;
	} root_dirs[] = { { "etc", 0755 }, { "proc", 0555 }, { "sys", 0555 },
			  { "dev", 0755 }, { "tmp", 01777 }, { "run", 0755 },
			  { "usr", 0755 } };
	const char *handler =
		oci_config_annotation(cfg, AR_VM_HANDLER_ANNOTATION);
	const char *file;
	struct ar_arena *a = &cfg->arena;
	struct mlist ml = { .a = a };
	struct strs extra = { 0 }, native = { 0 };
	_cleanup_close_ int rootfd = -1;
	_cleanup_free_ char *root_real = NULL;
	struct ar_rootfs_entry *e;
	struct ar_rootfs_content *content;
	_cleanup_free_ char *rootfs = NULL, *empty = NULL;
	char **argv = NULL;
	struct ar_vm vm;
	/* the command's user in the guest (its groups borrowed) */
	struct ar_vm_user user = {
		.uid = cfg->process.user.uid,
		.gid = cfg->process.user.gid,
		.n_groups = (uint32_t)cfg->process.user.n_additional_gids,
		.groups = cfg->process.user.additional_gids,
	};
	size_t ne = 0, nbind = 0;
	bool mntns = false;
	int r = -1;

	if (!handler)
		return 0;
	file = cfg->filename ? cfg->filename : "config.json";
	if (strcmp(handler, "vm") != 0)
		return ar_error_set_plain(
			err, EINVAL,
			"%s: annotations[\"%s\"]: unknown handler `%s` (agentrun has `vm`: docs/vm.md)",
			file, AR_VM_HANDLER_ANNOTATION, handler);
	for (size_t i = 0; i < cfg->linux_.n_namespaces; i++)
		if (cfg->linux_.namespaces[i].type == OCI_NS_MOUNT)
			mntns = true;
	if (!mntns)
		return ar_error_set_plain(
			err, EINVAL,
			"%s: annotations[\"%s\"] = \"vm\" needs a mount namespace in linux.namespaces (the VM's view of the host is made there)",
			file, AR_VM_HANDLER_ANNOTATION);
	if (!cfg->root.path || !cfg->process.present ||
	    cfg->process.args.n == 0)
		return 0; /* launch.c reports it */
	if (too_many_groups(&cfg->process.user, file, "process", err) < 0)
		return -1;
	if (ar_vm_probe(&vm, NULL, err) < 0) {
		r = ar_error_wrap(err, "%s: annotations[\"%s\"] = \"vm\"", file,
				  AR_VM_HANDLER_ANNOTATION);
		goto out;
	}
	vm.net = "host"; /* QEMU's user network in the container's netns */
	ar_vm_cache(&vm, state_root, getenv("HOME"));

	/* the VMM's root: a tmpfs over an empty directory of the state
	 * root, in the container's mount namespace only */
	empty = ar_xasprintf("%s/.vm-root", state_root ? state_root : "/run");
	/* the state root itself may not exist yet (a first run) */
	if (state_root && ar_mkdir_p(state_root, 0700) < 0 && errno != EEXIST) {
		r = ar_error_set(err, errno, "vm handler: mkdir `%s`",
				 state_root);
		goto out;
	}
	if (mkdir(empty, 0755) < 0 && errno != EEXIST) {
		r = ar_error_set(err, errno, "vm handler: mkdir `%s`", empty);
		goto out;
	}
	rootfs = cfg->root.path[0] == '/' ?
			 ar_xstrdup(cfg->root.path) :
			 ar_xasprintf("%s/%s", bundle, cfg->root.path);
	e = oci_arena_calloc(a, 16, sizeof(*e));
	for (size_t i = 0; i < sizeof(root_dirs) / sizeof(root_dirs[0]); i++)
		e[ne++] = (struct ar_rootfs_entry){ root_dirs[i].name,
						    AR_ROOTFS_DIR,
						    root_dirs[i].mode, NULL,
						    false };
	system_dirs(&ml, e, &ne, a);
	madd(&ml, "/proc", "proc", "proc",
	     (const char *const[]){ "nosuid", "noexec", "nodev", NULL });
	madd(&ml, "/dev", "tmpfs", "tmpfs",
	     (const char *const[]){ "nosuid", "strictatime", "mode=755",
				    "size=65536k", NULL });
	madd(&ml, "/dev/pts", "devpts", "devpts",
	     (const char *const[]){ "nosuid", "noexec", "newinstance",
				    "ptmxmode=0666", "mode=0620", NULL });
	madd(&ml, "/tmp", "tmpfs", "tmpfs", tmpfs_opts);
	madd(&ml, AR_VM_LIB_DEST, "bind", vm.lib,
	     (const char *const[]){ "rbind", "ro", "nosuid", "nodev", NULL });
	madd(&ml, AR_VM_KERNEL_DEST, "bind", vm.kernel, ro_file);
	if (vm.vmlinux)
		madd(&ml, AR_VM_VMLINUX_DEST, "bind", vm.vmlinux, ro_file);
	madd(&ml, AR_VM_AGENT_DEST, "bind", vm.agent,
	     (const char *const[]){ "bind", "ro", "nodev", NULL });
	if (vm.kvm)
		madd(&ml, "/dev/kvm", "bind", "/dev/kvm",
		     (const char *const[]){ "bind", "nosuid", "noexec", NULL });
	madd(&ml, VM_ROOT_DEST, "bind", rootfs,
	     cfg->root.readonly ? (const char *const[]){ "rbind", "ro", NULL } :
				  (const char *const[]){ "rbind", NULL });
	strs_add(&extra, ar_xstrdup("--root-share"));
	strs_add(&extra, ar_xstrdup(VM_ROOT_DEST));
	if (cfg->root.readonly)
		strs_add(&extra, ar_xstrdup("--root-ro"));

	/* the bundle's mounts: binds exported, the others the guest's */
	rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	root_real = rootfd >= 0 ? ar_fd_path(rootfd) : NULL;
	if (!root_real) {
		r = ar_error_set(err, errno, "root.path: rootfs `%s`", rootfs);
		goto out;
	}
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct oci_mount *m = &cfg->mounts[i];
		const char *kind = ar_mount_is_bind(m) ? "bind" :
							 guest_kind(m->type);
		_cleanup_free_ char *src = NULL, *dest = NULL;
		char *line = NULL;

		/* a bind of the host's /sys (a rootless config without a
		 * network namespace of its own): the guest's own sysfs */
		if (kind && strcmp(kind, "bind") == 0 && m->source &&
		    strcmp(m->source, "/sys") == 0)
			kind = "sysfs";

		if (!kind) {
			r = ar_error_set_plain(
				err, ENOTSUP,
				"%s: mounts[%zu]: type `%s` at `%s` cannot be mounted in the guest of the vm handler (binds, proc, sysfs, tmpfs, devpts, mqueue and cgroup can)",
				file, i, m->type ? m->type : "(none)",
				m->destination);
			goto out;
		}
		if (strcmp(kind, "bind") == 0) {
			struct oci_mount *x;

			src = ar_xasprintf("%zu", nbind++);
			x = madd(&ml, VM_BINDS_DEST, NULL, NULL,
				 (const char *const[]){ NULL });
			*x = *m;
			x->destination = oci_arena_printf(a, "%s/%s",
							  VM_BINDS_DEST, src);
		} else {
			src = ar_xstrdup("-");
		}
		if (covered(&native, m->destination))
			dest = ar_xstrdup(m->destination);
		else if (mount_target(rootfd, root_real, bundle, m,
				      strcmp(kind, "bind") == 0, &dest,
				      err) < 0) {
			r = ar_error_wrap(err, "%s: mounts[%zu]", file, i);
			goto out;
		}
		if (strcmp(kind, "bind") != 0)
			strs_add(&native, ar_xstrdup(m->destination));
		if (guest_line(m, kind, src, dest, i, &line, err) < 0) {
			r = ar_error_wrap(err, "%s", file);
			goto out;
		}
		strs_add(&extra, ar_xstrdup("--guest-mount"));
		strs_add(&extra, line);
	}
	if (nbind) {
		strs_add(&extra, ar_xstrdup("--binds"));
		strs_add(&extra, ar_xstrdup(VM_BINDS_DEST));
	}
	/* one line each in the guest's control files */
	for (size_t i = 0;
	     i < cfg->linux_.masked_paths.n + cfg->linux_.readonly_paths.n;
	     i++) {
		bool masked = i < cfg->linux_.masked_paths.n;
		const char *path =
			masked ? cfg->linux_.masked_paths.v[i] :
				 cfg->linux_.readonly_paths
					 .v[i - cfg->linux_.masked_paths.n];

		if (strchr(path, '\n')) {
			r = ar_error_set_plain(
				err, EINVAL,
				"%s: linux.%s[%zu]: a newline cannot reach the guest",
				file, masked ? "maskedPaths" : "readonlyPaths",
				masked ? i : i - cfg->linux_.masked_paths.n);
			goto out;
		}
	}
	/* linux.sysctl: the guest kernel's (QEMU's namespaces are the
	 * VMM's, not the workload's), one "KEY VALUE" line each */
	for (size_t i = 0; i < cfg->linux_.sysctl.n; i++) {
		const struct oci_kv *kv = &cfg->linux_.sysctl.items[i];

		if (!sysctl_key_ok(kv->key) || strchr(kv->value, '\n')) {
			r = ar_error_set_plain(
				err, EINVAL, "%s: linux.sysctl[\"%s\"]: %s",
				file, kv->key,
				strchr(kv->value, '\n') ?
					"a newline in the value cannot reach the guest" :
					"not a sysctl name (letters, digits, _ - . /, no empty or .. part)");
			goto out;
		}
		strs_add(&extra, ar_xstrdup("--sysctl"));
		strs_add(&extra, ar_xasprintf("%s %s", kv->key, kv->value));
	}
	cfg->linux_.sysctl.n = 0;
	for (size_t i = 0; i < cfg->linux_.masked_paths.n; i++) {
		strs_add(&extra, ar_xstrdup("--guest-mask"));
		strs_add(&extra, ar_xstrdup(cfg->linux_.masked_paths.v[i]));
	}
	for (size_t i = 0; i < cfg->linux_.readonly_paths.n; i++) {
		strs_add(&extra, ar_xstrdup("--guest-ro"));
		strs_add(&extra, ar_xstrdup(cfg->linux_.readonly_paths.v[i]));
	}
	if (cfg->hostname) {
		strs_add(&extra, ar_xstrdup("--hostname"));
		strs_add(&extra, ar_xstrdup(cfg->hostname));
	}
	strs_add(&extra, ar_xstrdup("--cwd"));
	strs_add(&extra, ar_xstrdup(cfg->process.cwd && *cfg->process.cwd ?
					    cfg->process.cwd :
					    "/"));

	/* the process: the helper, confined as the bundle's process */
	argv = ar_vm_argv(&vm, &user, NULL, extra.v, cfg->process.args.v);
	{
		size_t n = 0;

		while (argv[n])
			n++;
		cfg->process.args.v =
			oci_arena_calloc(a, n + 1, sizeof(char *));
		for (size_t i = 0; i < n; i++)
			cfg->process.args.v[i] = oci_arena_strdup(a, argv[i]);
		cfg->process.args.n = n;
	}
	cfg->process.cwd = oci_arena_strdup(a, "/");
	cfg->mounts = ml.v;
	cfg->n_mounts = ml.n;
	cfg->root.path = oci_arena_strdup(a, empty);
	cfg->root.readonly = false;
	content = oci_arena_calloc(a, 1, sizeof(*content));
	content->v = e;
	content->n = ne;
	*tmpfs_root = content;
	r = 0;
out:
	ar_vm_argv_free(argv);
	strs_free(&extra);
	strs_free(&native);
	ar_vm_release(&vm);
	return r;
}

int ar_vm_bundle_exec(struct oci_process *p, struct oci_config *cfg,
		      struct ar_error *err)
{
	struct ar_arena *a = &cfg->arena;
	_cleanup_free_ char *user = NULL;
	char **v;
	size_t k = 0;

	if (!ar_vm_bundle_wanted(cfg))
		return 0;
	if (too_many_groups(&p->user, NULL, "process", err) < 0)
		return -1;
	v = oci_arena_calloc(a, p->args.n + 8, sizeof(char *));
	v[k++] = oci_arena_strdup(a, AR_VM_AGENT_DEST);
	v[k++] = oci_arena_strdup(a, "vm-exec");
	v[k++] = oci_arena_strdup(a, "--cwd");
	v[k++] = oci_arena_strdup(a, p->cwd && *p->cwd ? p->cwd : "/");
	v[k++] = oci_arena_strdup(a, "--user");
	user = ar_vm_user_format(p->user.uid, p->user.gid,
				 p->user.additional_gids,
				 p->user.n_additional_gids);
	v[k++] = oci_arena_strdup(a, user);
	v[k++] = oci_arena_strdup(a, "--");
	for (size_t i = 0; i < p->args.n; i++)
		v[k++] = oci_arena_strdup(a, p->args.v[i]);
	p->args.v = v;
	p->args.n = k;
	p->cwd = oci_arena_strdup(a, "/");
	/* vm-exec itself runs as the container's user in QEMU's view (the
	 * guest runs the command as the exec's) */
	p->user.uid = cfg->process.user.uid;
	p->user.gid = cfg->process.user.gid;
	p->user.additional_gids = cfg->process.user.additional_gids;
	p->user.n_additional_gids = cfg->process.user.n_additional_gids;
	return 0;
}
