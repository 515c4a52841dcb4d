/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The answer `always`: the grant written into the profile file
 * (control_always.h). */
#define _GNU_SOURCE
#include "control_always.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"
#include "utils.h"

static bool same_strv(const struct oci_strv *a, const struct oci_strv *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

static bool has(const struct oci_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
			return true;
	return false;
}

/* The offset just after the '[' of net.allow, or -1: the first
 * "allow" key (outside strings) followed by ':' and '['. The result
 * is checked by parsing anyway. */
static ssize_t allow_bracket(const char *t, size_t len)
{
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		if (in_str) {
			if (t[i] == '\\')
				i++;
			else if (t[i] == '"')
				in_str = false;
			continue;
		}
		if (t[i] != '"')
			continue;
		if (strncmp(t + i, "\"allow\"", 7) != 0) {
			in_str = true;
			continue;
		}
		i += 7;
		while (i < len && strchr(" \t\r\n", t[i]))
			i++;
		if (i >= len || t[i] != ':')
			return -1;
		i++;
		while (i < len && strchr(" \t\r\n", t[i]))
			i++;
		return i < len && t[i] == '[' ? (ssize_t)i + 1 : -1;
	}
	return -1;
}

/* The lines of old and new that differ (one insertion in one line). */
static void line_diff(const char *path, const char *old, const char *new,
		      size_t at, size_t added, struct ar_jbuf *d)
{
	size_t s = at, e = at;
	size_t olen = strlen(old);

	while (s > 0 && old[s - 1] != '\n')
		s--;
	while (e < olen && old[e] != '\n')
		e++;
	ar_jbuf_addf(d, "--- %s\n+++ %s\n-%.*s\n+%.*s\n", path, path,
		     (int)(e - s), old + s, (int)(e - s + added), new + s);
}

int ctl_always_write(const char *profile, const char *host, uint16_t port,
		     struct ar_jbuf *diff, struct ar_error *err)
{
	_cleanup_free_ char *text = NULL, *out = NULL, *item = NULL;
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1, dfd = -1;
	struct oci_profile *before = NULL, *after = NULL;
	const char *slash, *base;
	struct stat st;
	size_t len, ilen;
	ssize_t at;
	bool empty;
	int r = -1;

	if (!profile)
		return ar_error_set_plain(
			err, ENOENT,
			"`always`: this sandbox was started without a profile file to write the grant into (--profile FILE); answer `session`, or add it to a profile");
	fd = open(profile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0)
		return ar_error_set(err, errno, "`always`: profile `%s`",
				    profile);
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return ar_error_set_plain(
			err, EPERM,
			"`always`: `%s` is not a profile file of uid %u (an installed profile is not changed: copy it to ~/.config/agentrun/profiles/NAME.json and use --profile NAME)",
			profile, (unsigned)geteuid());
	if (ar_read_fd(fd, profile, OCI_PROFILE_MAX_FILE_SIZE, 0, &text, &len,
		       err) < 0 ||
	    oci_profile_parse(text, len, profile, &before, err) < 0)
		return ar_error_wrap(err, "`always`");
	item = strchr(host, ':') ?
		       ar_xasprintf("[%s]:%u", host, (unsigned)port) :
		       ar_xasprintf("%s:%u", host, (unsigned)port);
	if (has(&before->net_allow, item)) {
		r = 0; /* already there */
		goto out;
	}
	at = allow_bracket(text, len);
	if (at < 0) {
		ar_error_set_plain(
			err, EINVAL,
			"`always`: `%s` has no \"net\": {\"allow\": [...]} list to add %s to; answer `session`, or add the list",
			profile, item);
		goto out;
	}
	{
		size_t k = (size_t)at;

		while (k < len && strchr(" \t\r\n", text[k]))
			k++;
		empty = k < len && text[k] == ']';
		/* before the first item, on its line: the list's layout */
		if (!empty)
			at = (ssize_t)k;
	}
	out = ar_xasprintf("%.*s\"%s\"%s%s", (int)at, text, item,
			   empty ? "" : ", ", text + at);
	ilen = strlen(out) - len;
	/* the check: everything as before, net.allow with one more */
	if (oci_profile_parse(out, strlen(out), profile, &after, err) < 0) {
		ar_error_wrap(err, "`always`: the edited profile");
		goto out;
	}
	if (after->net_allow.n != before->net_allow.n + 1 ||
	    !has(&after->net_allow, item) ||
	    !same_strv(&after->ro, &before->ro) ||
	    !same_strv(&after->rw, &before->rw) ||
	    !same_strv(&after->hide, &before->hide) ||
	    !same_strv(&after->env, &before->env) ||
	    !same_strv(&after->publish, &before->publish) ||
	    !same_strv(&after->secret, &before->secret)) {
		ar_error_set_plain(
			err, EINVAL,
			"`always`: could not add %s to net.allow of `%s` without changing anything else; nothing written (answer `session`, or edit the profile)",
			item, profile);
		goto out;
	}
	slash = strrchr(profile, '/');
	dir = slash ? ar_xasprintf("%.*s", (int)(slash - profile) + 1,
				   profile) :
		      ar_xstrdup(".");
	base = slash ? slash + 1 : profile;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ar_error_set(err, errno, "`always`: open `%s`", dir);
		goto out;
	}
	if (ar_write_file_atomic_at(dfd, base, out, strlen(out),
				    st.st_mode & 07777, err) < 0) {
		ar_error_wrap(err, "`always`");
		goto out;
	}
	line_diff(profile, text, out, (size_t)at, ilen, diff);
	r = 0;
out:
	oci_profile_free(before);
	oci_profile_free(after);
	return r;
}
