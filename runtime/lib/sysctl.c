/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * linux.sysctl: each key written to the container's /proc/sys/<key with
 * '.' turned into '/'>, opened through the safe resolver and checked to
 * be on procfs.  Writes go through the container's procfs, so they apply
 * to the container's own namespaces.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "mounts_internal.h"
#include "rootfs_path.h"
#include "utils.h"

int ar_sysctl_key_to_path(const char *key, char **out, struct ar_error *err)
{
	/* Keys are dotted ("net.ipv4.ip_forward"); a key that already uses
	 * '/' ("net/ipv4/conf/eth0.100/forwarding") keeps its dots. */
	bool slashed = strchr(key, '/') != NULL;
	char sep = slashed ? '/' : '.';
	_cleanup_free_ char *rel = ar_xstrdup(key);
	const char *p = key;

	if (!*key)
		return ar_error_set_plain(err, EINVAL, "empty sysctl key");
	while (*p) {
		const char *end = strchr(p, sep);
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return ar_error_set_plain(
				err, EINVAL, "invalid sysctl key \"%s\"", key);
		p += len;
		if (*p) {
			p++;
			if (!*p)
				return ar_error_set_plain(
					err, EINVAL,
					"invalid sysctl key \"%s\"", key);
		}
	}
	if (!slashed)
		for (char *c = rel; *c; c++)
			if (*c == '.')
				*c = '/';
	*out = ar_xasprintf("/proc/sys/%s", rel);
	return 0;
}

int ar_sysctl_namespace(const char *key)
{
	static const char *const ipc[] = {
		"kernel.msgmax", "kernel.msgmnb",	   "kernel.msgmni",
		"kernel.sem",	 "kernel.shmall",	   "kernel.shmmax",
		"kernel.shmmni", "kernel.shm_rmid_forced",
	};
	_cleanup_free_ char *k = ar_xstrdup(key);

	/* "net/ipv4/conf/eth0.100/forwarding": the dots are part of a name */
	if (strchr(k, '/'))
		for (char *c = k; *c; c++)
			if (*c == '/')
				*c = '.';
	if (strncmp(k, "net.", 4) == 0)
		return OCI_NS_NETWORK;
	if (strncmp(k, "fs.mqueue.", 10) == 0)
		return OCI_NS_IPC;
	for (size_t i = 0; i < AR_ARRAY_SIZE(ipc); i++)
		if (strcmp(k, ipc[i]) == 0)
			return OCI_NS_IPC;
	if (strcmp(k, "kernel.domainname") == 0 ||
	    strcmp(k, "kernel.hostname") == 0)
		return OCI_NS_UTS;
	return -1;
}

int ar_sysctl_check(const struct oci_config *cfg,
		    const bool separate[OCI_NS_NTYPES], struct ar_error *err)
{
	const struct oci_kv_list *l = &cfg->linux_.sysctl;
	const char *file = cfg->filename ? cfg->filename : "config.json";

	for (size_t i = 0; i < l->n; i++) {
		const char *key = l->items[i].key;
		int t = ar_sysctl_namespace(key);
		const struct oci_namespace *ns;
		_cleanup_free_ char *path = NULL;

		/* "net/../kernel/core_pattern" must not pass as net.* */
		if (ar_sysctl_key_to_path(key, &path, err) < 0)
			return ar_error_wrap(err, "%s: linux.sysctl", file);
		if (t < 0)
			return ar_error_set_plain(
				err, EINVAL,
				"%s: linux.sysctl \"%s\": not namespaced: it would change the host's value (only net.*, the IPC keys, fs.mqueue.* and kernel.domainname are accepted)",
				file, key);
		if (strchr(key, '/') ? strcmp(key, "kernel/hostname") == 0 :
				       strcmp(key, "kernel.hostname") == 0)
			return ar_error_set_plain(
				err, EINVAL,
				"%s: linux.sysctl \"%s\": conflicts with the hostname field (set the hostname there)",
				file, key);
		/* as crun: two values for one setting, the later would win */
		if ((strchr(key, '/') ?
			     strcmp(key, "kernel/domainname") == 0 :
			     strcmp(key, "kernel.domainname") == 0) &&
		    cfg->domainname && *cfg->domainname &&
		    strcmp(l->items[i].value ? l->items[i].value : "",
			   cfg->domainname) != 0)
			return ar_error_set_plain(
				err, EINVAL,
				"%s: linux.sysctl \"%s\" = \"%s\": conflicts with the domainname field \"%s\" (set one of them)",
				file, key,
				l->items[i].value ? l->items[i].value : "",
				cfg->domainname);
		if (separate[t])
			continue;
		ns = oci_config_find_ns(cfg, (enum oci_ns_type)t);
		if (ns && ns->path)
			return ar_error_set_plain(
				err, EINVAL,
				"%s: linux.sysctl \"%s\": the %s namespace `%s` in linux.namespaces is the runtime's own (agentrun does not change a namespace it did not create)",
				file, key,
				oci_ns_type_name((enum oci_ns_type)t),
				ns->path);
		return ar_error_set_plain(
			err, EINVAL,
			"%s: linux.sysctl \"%s\": needs its own %s namespace (add {\"type\": \"%s\"} to linux.namespaces)",
			file, key, oci_ns_type_name((enum oci_ns_type)t),
			oci_ns_type_name((enum oci_ns_type)t));
	}
	return 0;
}

int ar_sysctl_apply(struct ar_rootfs_ctx *ctx, struct ar_error *err)
{
	const struct oci_kv_list *l = &ctx->cfg->linux_.sysctl;

	for (size_t i = 0; i < l->n; i++) {
		const char *key = l->items[i].key;
		const char *value = l->items[i].value ? l->items[i].value : "";
		_cleanup_free_ char *path = NULL;
		_cleanup_close_ int fd = -1;
		struct statfs sfs;

		if (ar_sysctl_key_to_path(key, &path, err) < 0)
			return ar_error_wrap(err, "linux.sysctl");
		fd = ar_open_in_root(ctx->rootfd, path, O_WRONLY | O_NOFOLLOW,
				     0, err);
		if (fd < 0)
			return ar_error_wrap(err, "linux.sysctl \"%s\"", key);
		if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
			return ar_error_set_plain(
				err, ENOENT,
				"linux.sysctl \"%s\": /proc is not "
				"mounted in the container",
				key);
		if (ar_write_all(fd, value, strlen(value)) < 0)
			return ar_error_set(err, errno,
					    "linux.sysctl \"%s\" = \"%s\"", key,
					    value);
	}
	return 0;
}
