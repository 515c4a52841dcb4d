/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Capabilities of the container process: bounding, effective, permitted,
 * inheritable and ambient sets; keep-caps over setuid; no_new_privs. */
#include "config.h"

#include "capabilities.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

#define CAPNAME(c) [c] = #c

static const char *const cap_names[] = {
	CAPNAME(CAP_CHOWN),
	CAPNAME(CAP_DAC_OVERRIDE),
	CAPNAME(CAP_DAC_READ_SEARCH),
	CAPNAME(CAP_FOWNER),
	CAPNAME(CAP_FSETID),
	CAPNAME(CAP_KILL),
	CAPNAME(CAP_SETGID),
	CAPNAME(CAP_SETUID),
	CAPNAME(CAP_SETPCAP),
	CAPNAME(CAP_LINUX_IMMUTABLE),
	CAPNAME(CAP_NET_BIND_SERVICE),
	CAPNAME(CAP_NET_BROADCAST),
	CAPNAME(CAP_NET_ADMIN),
	CAPNAME(CAP_NET_RAW),
	CAPNAME(CAP_IPC_LOCK),
	CAPNAME(CAP_IPC_OWNER),
	CAPNAME(CAP_SYS_MODULE),
	CAPNAME(CAP_SYS_RAWIO),
	CAPNAME(CAP_SYS_CHROOT),
	CAPNAME(CAP_SYS_PTRACE),
	CAPNAME(CAP_SYS_PACCT),
	CAPNAME(CAP_SYS_ADMIN),
	CAPNAME(CAP_SYS_BOOT),
	CAPNAME(CAP_SYS_NICE),
	CAPNAME(CAP_SYS_RESOURCE),
	CAPNAME(CAP_SYS_TIME),
	CAPNAME(CAP_SYS_TTY_CONFIG),
	CAPNAME(CAP_MKNOD),
	CAPNAME(CAP_LEASE),
	CAPNAME(CAP_AUDIT_WRITE),
	CAPNAME(CAP_AUDIT_CONTROL),
	CAPNAME(CAP_SETFCAP),
	CAPNAME(CAP_MAC_OVERRIDE),
	CAPNAME(CAP_MAC_ADMIN),
	CAPNAME(CAP_SYSLOG),
	CAPNAME(CAP_WAKE_ALARM),
	CAPNAME(CAP_BLOCK_SUSPEND),
	CAPNAME(CAP_AUDIT_READ),
	CAPNAME(CAP_PERFMON),
	CAPNAME(CAP_BPF),
	CAPNAME(CAP_CHECKPOINT_RESTORE),
};

const char *ar_cap_name(int cap)
{
	if (cap < 0 || (size_t)cap >= AR_ARRAY_SIZE(cap_names))
		return NULL;
	return cap_names[cap];
}

int ar_cap_from_name(const char *name)
{
	if (!name || strncasecmp(name, "CAP_", 4) != 0)
		return -1;
	for (size_t i = 0; i < AR_ARRAY_SIZE(cap_names); i++)
		if (cap_names[i] && strcasecmp(cap_names[i], name) == 0)
			return (int)i;
	return -1;
}

int ar_cap_parse(const char *name, int *out, struct ar_error *err)
{
	int c = ar_cap_from_name(name);

	if (c < 0)
		return ar_error_set_plain(err, EINVAL,
					  "unknown capability `%s`",
					  name ? name : "(null)");
	*out = c;
	return 0;
}

static int read_cap_last_cap_file(void)
{
	char buf[32];
	unsigned long long v;
	ssize_t n;
	int fd;

	fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = ar_read_all(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	if (ar_parse_u64(buf, &v) < 0 || v > 63)
		return -1;
	return (int)v;
}

int ar_cap_last_cap(void)
{
	static int cached = -1;
	int last;

	if (cached >= 0)
		return cached;
	last = read_cap_last_cap_file();
	if (last < 0) {
		/* No /proc: PR_CAPBSET_READ fails with EINVAL past the
		 * last capability the kernel knows. */
		last = 0;
		while (last < 63 &&
		       prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0)
			last++;
	}
	cached = last;
	return cached;
}

int ar_caps_prepare_keep(struct ar_error *err)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return ar_error_set(err, errno, "prctl(PR_SET_KEEPCAPS)");
	return 0;
}

int ar_set_no_new_privs(struct ar_error *err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ar_error_set(err, errno, "prctl(PR_SET_NO_NEW_PRIVS)");
	return 0;
}

static void cap_freep(cap_t *c)
{
	if (*c)
		cap_free(*c);
}
#define _cleanup_cap_ _cleanup_(cap_freep)

static const char *cap_label(int cap, char *buf, size_t len)
{
	const char *n = ar_cap_name(cap);

	if (n)
		return n;
	snprintf(buf, len, "capability %d", cap);
	return buf;
}

/* Set the flags of cap_t `c` for `flag` from `mask`, caps 0..last. */
static int fill_flag(cap_t c, cap_flag_t flag, uint64_t mask, int last)
{
	for (int i = 0; i <= last; i++) {
		cap_value_t v = i;

		if (!(mask & (UINT64_C(1) << i)))
			continue;
		if (cap_set_flag(c, flag, 1, &v, CAP_SET) < 0)
			return -1;
	}
	return 0;
}

static int read_flag(cap_t c, cap_flag_t flag, int last, uint64_t *out)
{
	uint64_t m = 0;

	for (int i = 0; i <= last; i++) {
		cap_flag_value_t fv = CAP_CLEAR;

		if (cap_get_flag(c, i, flag, &fv) < 0)
			return -1;
		if (fv == CAP_SET)
			m |= UINT64_C(1) << i;
	}
	*out = m;
	return 0;
}

int ar_caps_read_current(enum oci_cap_set which, uint64_t *out,
			 struct ar_error *err)
{
	int last = ar_cap_last_cap();
	_cleanup_cap_ cap_t c = NULL;
	cap_flag_t flag;
	uint64_t m = 0;

	switch (which) {
	case OCI_CAP_BOUNDING:
		for (int i = 0; i <= last; i++) {
			int r = prctl(PR_CAPBSET_READ, i, 0, 0, 0);

			if (r < 0)
				return ar_error_set(
					err, errno,
					"prctl(PR_CAPBSET_READ, %d)", i);
			if (r)
				m |= UINT64_C(1) << i;
		}
		*out = m;
		return 0;
	case OCI_CAP_AMBIENT:
		for (int i = 0; i <= last; i++) {
			int r = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, i,
				      0, 0);

			if (r < 0 && errno == EINVAL && i == 0)
				break; /* kernel without ambient caps */
			if (r < 0)
				return ar_error_set(
					err, errno,
					"prctl(PR_CAP_AMBIENT_IS_SET, %d)", i);
			if (r)
				m |= UINT64_C(1) << i;
		}
		*out = m;
		return 0;
	case OCI_CAP_EFFECTIVE:
		flag = CAP_EFFECTIVE;
		break;
	case OCI_CAP_PERMITTED:
		flag = CAP_PERMITTED;
		break;
	case OCI_CAP_INHERITABLE:
		flag = CAP_INHERITABLE;
		break;
	default:
		return ar_error_set_plain(
			err, EINVAL, "unknown capability set %d", (int)which);
	}
	c = cap_get_proc();
	if (!c)
		return ar_error_set(err, errno, "cap_get_proc");
	if (read_flag(c, flag, last, out) < 0)
		return ar_error_set(err, errno, "cap_get_flag");
	return 0;
}

/* Raise the effective set to the whole permitted set, so that CAP_SETPCAP
 * (needed to shrink the bounding set and to widen inheritable) is usable
 * after setuid cleared the effective set. */
static int raise_effective(struct ar_error *err)
{
	_cleanup_cap_ cap_t c = cap_get_proc();
	int last = ar_cap_last_cap();
	uint64_t prm;

	if (!c)
		return ar_error_set(err, errno, "cap_get_proc");
	if (read_flag(c, CAP_PERMITTED, last, &prm) < 0)
		return ar_error_set(err, errno, "cap_get_flag");
	if (cap_clear_flag(c, CAP_EFFECTIVE) < 0 ||
	    fill_flag(c, CAP_EFFECTIVE, prm, last) < 0)
		return ar_error_set(err, errno, "cap_set_flag");
	if (cap_set_proc(c) < 0)
		return ar_error_set(err, errno,
				    "raise the effective capabilities");
	return 0;
}

static int drop_bounding(uint64_t keep, int last, struct ar_error *err)
{
	char buf[32];

	for (int i = 0; i <= last; i++) {
		int r;

		if (keep & (UINT64_C(1) << i))
			continue;
		r = prctl(PR_CAPBSET_READ, i, 0, 0, 0);
		if (r < 0 && errno == EINVAL)
			continue; /* the kernel does not know it */
		if (r == 0)
			continue;
		if (prctl(PR_CAPBSET_DROP, i, 0, 0, 0) < 0)
			return ar_error_set(err, errno,
					    "drop %s from the bounding set",
					    cap_label(i, buf, sizeof(buf)));
	}
	return 0;
}

static int set_ambient(uint64_t mask, int last, struct ar_error *err)
{
	char buf[32];

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) {
		if (errno == EINVAL && mask == 0)
			return 0; /* kernel without ambient capabilities */
		return ar_error_set(err, errno,
				    "prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
	}
	for (int i = 0; i <= last; i++) {
		if (!(mask & (UINT64_C(1) << i)))
			continue;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, i, 0, 0) == 0)
			continue;
		/* Not in permitted and inheritable (crun's and runc's default
		 * specs list ambient caps without inheritable): the kernel
		 * refuses, and the process goes on without it, as crun and
		 * runc do. */
		int e = errno;

		if (e != EPERM && e != EINVAL)
			return ar_error_set(err, e,
					    "raise ambient capability %s",
					    cap_label(i, buf, sizeof(buf)));
		ar_debug("ambient capability %s not raised: %s",
			 cap_label(i, buf, sizeof(buf)), strerror(e));
	}
	return 0;
}

/* The masks to apply: zero when capabilities are absent; bits the kernel
 * does not know are dropped with a warning. */
static void effective_masks(const struct oci_capabilities *caps, int last,
			    uint64_t m[OCI_CAP_NSETS])
{
	uint64_t known = last >= 63 ? UINT64_MAX :
				      (UINT64_C(1) << (last + 1)) - 1;

	for (int s = 0; s < OCI_CAP_NSETS; s++) {
		m[s] = (caps && caps->present) ? caps->mask[s] : 0;
		if (m[s] & ~known) {
			uint64_t unknown = m[s] & ~known;

			for (int i = last + 1; i < 64; i++) {
				char buf[32];

				if (!(unknown & (UINT64_C(1) << i)))
					continue;
				ar_warn("%s in the %s set is not known to the running kernel (cap_last_cap %d): ignored",
					cap_label(i, buf, sizeof(buf)),
					oci_cap_set_name((enum oci_cap_set)s),
					last);
			}
			m[s] &= known;
		}
	}
}

static int check_masks(const uint64_t m[OCI_CAP_NSETS], int last,
		       struct ar_error *err)
{
	char buf[32];

	for (int i = 0; i <= last; i++) {
		uint64_t bit = UINT64_C(1) << i;

		if ((m[OCI_CAP_EFFECTIVE] & bit) &&
		    !(m[OCI_CAP_PERMITTED] & bit))
			return ar_error_set_plain(
				err, EINVAL,
				"effective capability %s must also be in the permitted set",
				cap_label(i, buf, sizeof(buf)));
	}
	return 0;
}

int ar_caps_apply(const struct oci_capabilities *caps, struct ar_error *err)
{
	int last = ar_cap_last_cap();
	_cleanup_cap_ cap_t c = NULL;
	uint64_t m[OCI_CAP_NSETS];
	uint64_t cur_bnd = 0;

	effective_masks(caps, last, m);
	if (check_masks(m, last, err) < 0)
		return -1;

	if (ar_caps_read_current(OCI_CAP_BOUNDING, &cur_bnd, err) < 0)
		return ar_error_wrap(err, "capabilities");

	/* Use what we still hold: after setuid() with keep-caps the
	 * effective set is empty but permitted is intact. */
	if (raise_effective(err) < 0)
		return ar_error_wrap(err, "capabilities");

	if ((cur_bnd & ~m[OCI_CAP_BOUNDING]) &&
	    drop_bounding(m[OCI_CAP_BOUNDING], last, err) < 0)
		return ar_error_wrap(err, "capabilities");

	c = cap_init();
	if (!c)
		return ar_error_set(err, errno, "cap_init");
	if (fill_flag(c, CAP_EFFECTIVE, m[OCI_CAP_EFFECTIVE], last) < 0 ||
	    fill_flag(c, CAP_PERMITTED, m[OCI_CAP_PERMITTED], last) < 0 ||
	    fill_flag(c, CAP_INHERITABLE, m[OCI_CAP_INHERITABLE], last) < 0)
		return ar_error_set(err, errno, "cap_set_flag");
	if (cap_set_proc(c) < 0) {
		int e = errno;

		return ar_error_set(
			err, e,
			"capabilities: set effective/permitted/inheritable (capset)%s",
			e == EPERM ?
				" (permitted can only shrink; inheritable must be within the bounding set)" :
				"");
	}

	if (set_ambient(m[OCI_CAP_AMBIENT], last, err) < 0)
		return ar_error_wrap(err, "capabilities");

	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return ar_error_set(err, errno,
				    "capabilities: prctl(PR_SET_KEEPCAPS, 0)");
	return 0;
}
