/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * OCI mount options (runtime-spec features.md "mountOptions") to mount(2)
 * flags, propagation, mount_setattr(2) attributes and fs-specific data.
 */
#define _GNU_SOURCE
#include "mounts.h"

#include <stdlib.h>
#include <string.h>

#include "mount_syscalls.h"
#include "utils.h"

enum opt_kind {
	OPT_NOOP,
	OPT_FLAG, /* set an MS_* flag */
	OPT_CLEAR, /* clear an MS_* flag */
	OPT_ATIME, /* one of the exclusive MS_*ATIME modes */
	OPT_PROP, /* propagation */
	OPT_ATTR, /* MOUNT_ATTR_* to set on the mount itself */
	OPT_ATTR_CLR, /* MOUNT_ATTR_* to clear on the mount itself */
	OPT_REC_SET, /* MOUNT_ATTR_* to set recursively */
	OPT_REC_CLR, /* MOUNT_ATTR_* to clear recursively */
	OPT_BIND,
	OPT_RBIND,
	OPT_IDMAP,
	OPT_RIDMAP,
	OPT_COPYUP,
};

struct opt {
	const char *name;
	enum opt_kind kind;
	unsigned long value;
	unsigned long flag; /* companion MS_* flag for OPT_ATTR/OPT_ATTR_CLR */
};

/* Sorted by name in strcmp() order: find_opt() bisects it. */
static const struct opt opts_table[] = {
	{ "async", OPT_CLEAR, MS_SYNCHRONOUS, 0 },
	{ "atime", OPT_CLEAR, MS_NOATIME, 0 },
	{ "bind", OPT_BIND, 0, 0 },
	{ "defaults", OPT_NOOP, 0, 0 },
	{ "dev", OPT_CLEAR, MS_NODEV, 0 },
	{ "diratime", OPT_CLEAR, MS_NODIRATIME, 0 },
	{ "dirsync", OPT_FLAG, MS_DIRSYNC, 0 },
	{ "exec", OPT_CLEAR, MS_NOEXEC, 0 },
	{ "idmap", OPT_IDMAP, 0, 0 },
	{ "iversion", OPT_FLAG, MS_I_VERSION, 0 },
	{ "lazytime", OPT_FLAG, MS_LAZYTIME, 0 },
	{ "loud", OPT_CLEAR, MS_SILENT, 0 },
	{ "mand", OPT_FLAG, MS_MANDLOCK, 0 },
	{ "noatime", OPT_ATIME, MS_NOATIME, 0 },
	{ "nodev", OPT_FLAG, MS_NODEV, 0 },
	{ "nodiratime", OPT_FLAG, MS_NODIRATIME, 0 },
	{ "noexec", OPT_FLAG, MS_NOEXEC, 0 },
	{ "noiversion", OPT_CLEAR, MS_I_VERSION, 0 },
	{ "nolazytime", OPT_CLEAR, MS_LAZYTIME, 0 },
	{ "nomand", OPT_CLEAR, MS_MANDLOCK, 0 },
	{ "norelatime", OPT_CLEAR, MS_RELATIME, 0 },
	{ "nostrictatime", OPT_CLEAR, MS_STRICTATIME, 0 },
	{ "nosuid", OPT_FLAG, MS_NOSUID, 0 },
	{ "nosymfollow", OPT_ATTR, MOUNT_ATTR_NOSYMFOLLOW, MS_NOSYMFOLLOW },
	{ "private", OPT_PROP, MS_PRIVATE, 0 },
	{ "ratime", OPT_REC_CLR, MOUNT_ATTR_NOATIME, 0 },
	{ "rbind", OPT_RBIND, 0, 0 },
	{ "rdev", OPT_REC_CLR, MOUNT_ATTR_NODEV, 0 },
	{ "rdiratime", OPT_REC_CLR, MOUNT_ATTR_NODIRATIME, 0 },
	{ "relatime", OPT_ATIME, MS_RELATIME, 0 },
	{ "remount", OPT_FLAG, MS_REMOUNT, 0 },
	{ "rexec", OPT_REC_CLR, MOUNT_ATTR_NOEXEC, 0 },
	{ "ridmap", OPT_RIDMAP, 0, 0 },
	{ "rnoatime", OPT_REC_SET, MOUNT_ATTR_NOATIME, 0 },
	{ "rnodev", OPT_REC_SET, MOUNT_ATTR_NODEV, 0 },
	{ "rnodiratime", OPT_REC_SET, MOUNT_ATTR_NODIRATIME, 0 },
	{ "rnoexec", OPT_REC_SET, MOUNT_ATTR_NOEXEC, 0 },
	{ "rnorelatime", OPT_REC_CLR, MOUNT_ATTR_RELATIME, 0 },
	{ "rnostrictatime", OPT_REC_CLR, MOUNT_ATTR_STRICTATIME, 0 },
	{ "rnosuid", OPT_REC_SET, MOUNT_ATTR_NOSUID, 0 },
	{ "rnosymfollow", OPT_REC_SET, MOUNT_ATTR_NOSYMFOLLOW, 0 },
	{ "ro", OPT_FLAG, MS_RDONLY, 0 },
	{ "rprivate", OPT_PROP, MS_PRIVATE | MS_REC, 0 },
	{ "rrelatime", OPT_REC_SET, MOUNT_ATTR_RELATIME, 0 },
	{ "rro", OPT_REC_SET, MOUNT_ATTR_RDONLY, 0 },
	{ "rrw", OPT_REC_CLR, MOUNT_ATTR_RDONLY, 0 },
	{ "rshared", OPT_PROP, MS_SHARED | MS_REC, 0 },
	{ "rslave", OPT_PROP, MS_SLAVE | MS_REC, 0 },
	{ "rstrictatime", OPT_REC_SET, MOUNT_ATTR_STRICTATIME, 0 },
	{ "rsuid", OPT_REC_CLR, MOUNT_ATTR_NOSUID, 0 },
	{ "rsymfollow", OPT_REC_CLR, MOUNT_ATTR_NOSYMFOLLOW, 0 },
	{ "runbindable", OPT_PROP, MS_UNBINDABLE | MS_REC, 0 },
	{ "rw", OPT_CLEAR, MS_RDONLY, 0 },
	{ "shared", OPT_PROP, MS_SHARED, 0 },
	{ "silent", OPT_FLAG, MS_SILENT, 0 },
	{ "slave", OPT_PROP, MS_SLAVE, 0 },
	{ "strictatime", OPT_ATIME, MS_STRICTATIME, 0 },
	{ "suid", OPT_CLEAR, MS_NOSUID, 0 },
	{ "symfollow", OPT_ATTR_CLR, MOUNT_ATTR_NOSYMFOLLOW, MS_NOSYMFOLLOW },
	{ "sync", OPT_FLAG, MS_SYNCHRONOUS, 0 },
	{ "tmpcopyup", OPT_COPYUP, 0, 0 },
	{ "unbindable", OPT_PROP, MS_UNBINDABLE, 0 },
};

static const struct opt *find_opt(const char *name)
{
	size_t lo = 0, hi = AR_ARRAY_SIZE(opts_table);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, opts_table[mid].name);

		if (c == 0)
			return &opts_table[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static bool is_atime_attr(unsigned long a)
{
	return a == MOUNT_ATTR_NOATIME || a == MOUNT_ATTR_RELATIME ||
	       a == MOUNT_ATTR_STRICTATIME;
}

static void append_data(char **data, size_t *len, const char *opt)
{
	size_t n = strlen(opt);

	*data = ar_xrealloc(*data, *len + n + 2);
	if (*len)
		(*data)[(*len)++] = ',';
	memcpy(*data + *len, opt, n + 1);
	*len += n;
}

static void apply_opt(const struct opt *o, struct ar_mount_flags *f)
{
	const unsigned long atime = MS_NOATIME | MS_RELATIME | MS_STRICTATIME;

	switch (o->kind) {
	case OPT_NOOP:
		break;
	case OPT_FLAG:
		f->flags |= o->value;
		f->clear &= ~o->value;
		break;
	case OPT_CLEAR:
		f->clear |= o->value;
		f->flags &= ~o->value;
		break;
	case OPT_ATIME:
		f->flags &= ~atime;
		f->flags |= o->value;
		f->clear &= ~o->value;
		break;
	case OPT_PROP:
		f->propagation = o->value;
		break;
	case OPT_ATTR:
		f->attr_set |= o->value;
		f->attr_clr &= ~o->value;
		f->flags |= o->flag;
		f->clear &= ~o->flag;
		break;
	case OPT_ATTR_CLR:
		f->attr_clr |= o->value;
		f->attr_set &= ~o->value;
		f->clear |= o->flag;
		f->flags &= ~o->flag;
		break;
	case OPT_REC_SET:
		if (is_atime_attr(o->value)) {
			f->rec_attr_set &= ~(unsigned long)MOUNT_ATTR__ATIME;
			f->rec_attr_clr |= MOUNT_ATTR__ATIME;
		} else {
			f->rec_attr_clr &= ~o->value;
		}
		f->rec_attr_set |= o->value;
		break;
	case OPT_REC_CLR:
		if (is_atime_attr(o->value)) {
			f->rec_attr_set &= ~(unsigned long)MOUNT_ATTR__ATIME;
			f->rec_attr_clr |= MOUNT_ATTR__ATIME;
		}
		f->rec_attr_clr |= o->value;
		f->rec_attr_set &= ~o->value;
		break;
	case OPT_BIND:
		f->bind = true;
		f->flags |= MS_BIND;
		break;
	case OPT_RBIND:
		f->bind = true;
		f->flags |= MS_BIND | MS_REC;
		break;
	case OPT_IDMAP:
		f->idmap = true;
		break;
	case OPT_RIDMAP:
		f->idmap = true;
		f->idmap_recursive = true;
		break;
	case OPT_COPYUP:
		f->copy_up = true;
		break;
	}
}

int ar_mount_parse_options(const struct oci_strv *options,
			   struct ar_mount_flags *out, struct ar_error *err)
{
	struct ar_mount_flags f = { 0 };
	size_t data_len = 0;

	for (size_t i = 0; options && i < options->n; i++) {
		const char *name = options->v[i];
		const struct opt *o;

		if (!name || !*name) {
			free(f.data);
			return ar_error_set_plain(
				err, EINVAL, "options[%zu]: empty mount option",
				i);
		}
		o = find_opt(name);
		if (o)
			apply_opt(o, &f);
		else
			append_data(&f.data, &data_len, name);
	}
	f.recursive = (f.flags & MS_REC) || (f.propagation & MS_REC);
	*out = f;
	return 0;
}

void ar_mount_flags_free(struct ar_mount_flags *f)
{
	free(f->data);
	f->data = NULL;
}

bool ar_mount_is_bind(const struct oci_mount *m)
{
	if (m->type &&
	    (strcmp(m->type, "bind") == 0 || strcmp(m->type, "rbind") == 0))
		return true;
	return oci_strv_has(&m->options, "bind") ||
	       oci_strv_has(&m->options, "rbind");
}
