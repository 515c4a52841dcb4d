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
		return ar_error_set(err, EINVAL, "empty sysctl key");
	while (*p) {
		const char *end = strchr(p, sep);
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return ar_error_set(err, EINVAL,
					    "invalid sysctl key \"%s\"", key);
		p += len;
		if (*p) {
			p++;
			if (!*p)
				return ar_error_set(err, EINVAL,
						    "invalid sysctl key \"%s\"",
						    key);
		}
	}
	if (!slashed)
		for (char *c = rel; *c; c++)
			if (*c == '.')
				*c = '/';
	*out = ar_xasprintf("/proc/sys/%s", rel);
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
			return ar_error_set(err, ENOENT,
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
