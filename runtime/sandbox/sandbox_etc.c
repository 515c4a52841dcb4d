/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A minimal /etc: passwd and group generated for the user (written into
 * the bundle's rootfs by ar_sandbox_bundle_write), plus an allowlist of
 * host entries bound read-only. Anything else of the host's /etc (shadow,
 * ssh host keys, sudoers, NetworkManager secrets, ...) is absent. Users
 * extend the list with --etc NAME or a profile's "etc". docs/sandbox.md
 * lists the default.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sandbox_etc.h"
#include "utils.h"

const char *const ar_sandbox_etc_default[] = {
	/* names and the network (useful with --net host) */
	"resolv.conf",
	"hosts",
	"host.conf",
	"nsswitch.conf",
	"gai.conf",
	"services",
	"protocols",
	/* TLS trust */
	"ssl",
	"ca-certificates",
	"ca-certificates.conf",
	"pki",
	/* the dynamic linker */
	"ld.so.cache",
	"ld.so.conf",
	"ld.so.conf.d",
	/* time */
	"localtime",
	"timezone",
	/* Debian: /usr/bin/awk -> /etc/alternatives/awk and the like */
	"alternatives",
	/* what shells and tools expect */
	"os-release",
	"lsb-release",
	"profile",
	"profile.d",
	"bash.bashrc",
	"inputrc",
	"terminfo",
	"gitconfig",
	"mime.types",
	"papersize",
	NULL,
};

static void etc_one(struct sb_mounts *m, const struct ar_sandbox_host *h,
		    const char *name)
{
	char *src = sb_path_join(m->a, h->etc, name);
	char *dest = sb_path_join(m->a, "/etc", name);
	struct stat st;

	if (stat(src, &st) < 0 || sb_has_dest(m, dest))
		return;
	if (!S_ISDIR(st.st_mode)) /* as sb_bind(): crun fails "rro" here */
		sb_mount_add(m, dest, "bind", src,
			     SB_OPTS("bind", "ro", "nosuid", "nodev"));
	else
		sb_mount_add(m, dest, "bind", src,
			     SB_OPTS("rbind", "rro", "nosuid", "nodev"));
}

void sb_etc_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		   const struct ar_sandbox_list *extra,
		   const struct oci_strv *profile_extra)
{
	for (const char *const *e = ar_sandbox_etc_default; *e; e++)
		etc_one(m, h, *e);
	for (size_t i = 0; profile_extra && i < profile_extra->n; i++)
		etc_one(m, h, profile_extra->v[i]);
	for (size_t i = 0; extra && i < extra->n; i++)
		etc_one(m, h, extra->v[i]);
}

char *ar_sandbox_passwd(const struct ar_sandbox_host *h)
{
	if (h->uid == 0)
		return ar_xasprintf(
			"root:x:0:0:root:%s:%s\n"
			"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			h->home, h->shell);
	return ar_xasprintf(
		"root:x:0:0:root:/root:/usr/sbin/nologin\n"
		"%s:x:%u:%u:%s:%s:%s\n"
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		h->user, (unsigned)h->uid, (unsigned)h->gid, h->user, h->home,
		h->shell);
}

char *ar_sandbox_group(const struct ar_sandbox_host *h)
{
	if (h->gid == 0)
		return ar_xasprintf("root:x:0:\nnogroup:x:65534:\n");
	return ar_xasprintf("root:x:0:\n%s:x:%u:%s\nnogroup:x:65534:\n",
			    h->group, (unsigned)h->gid, h->user);
}

char *sb_etc_file_text(const char *tmpl, const char *workspace)
{
	static const char var[] = "${WORKSPACE}";
	_cleanup_free_ char *esc = NULL;
	size_t n = 0, cap = strlen(workspace) * 6 + 1;
	const char *p, *hit;
	char *out = NULL, *o;
	size_t count = 0, len;

	esc = ar_xmalloc(cap);
	for (const unsigned char *c = (const unsigned char *)workspace; *c;
	     c++) {
		if (*c == '"' || *c == '\\') {
			esc[n++] = '\\';
			esc[n++] = (char)*c;
		} else if (*c < 0x20 || *c == 0x7f) {
			n += (size_t)snprintf(esc + n, cap - n, "\\u%04x", *c);
		} else {
			esc[n++] = (char)*c;
		}
	}
	esc[n] = '\0';
	for (p = tmpl; (hit = strstr(p, var)); p = hit + sizeof(var) - 1)
		count++;
	len = strlen(tmpl) + count * n + 1;
	out = o = ar_xmalloc(len);
	for (p = tmpl; (hit = strstr(p, var)); p = hit + sizeof(var) - 1) {
		memcpy(o, p, (size_t)(hit - p));
		o += hit - p;
		memcpy(o, esc, n);
		o += n;
	}
	strcpy(o, p);
	return out;
}
