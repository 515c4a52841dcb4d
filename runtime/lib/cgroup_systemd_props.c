/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the systemd cgroup manager tells systemd: unit names, limits as
 * unit properties, org.systemd.property.* annotations
 * (cgroup_systemd_props.h). */
#include "config.h"

#include "cgroup_systemd_props.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_convert.h"
#include "utils.h"

/* "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice"; "-.slice" -> "". */
static int expand_slice(const char *slice, char **out, struct ar_error *err)
{
	size_t len = strlen(slice);
	_cleanup_free_ char *acc = ar_xstrdup("");
	const char *stem_end;

	if (strcmp(slice, "-.slice") == 0) {
		*out = ar_steal_ptr(&acc);
		return 0;
	}
	if (len < 7 || strcmp(slice + len - 6, ".slice") != 0 ||
	    strchr(slice, '/') || slice[0] == '-' || strstr(slice, "--") ||
	    slice[len - 7] == '-')
		return ar_error_set_plain(err, EINVAL,
					  "invalid systemd slice `%s`", slice);
	stem_end = slice + len - 6;
	for (const char *p = slice; p <= stem_end; p++) {
		if (p == stem_end || *p == '-') {
			char *next = ar_xasprintf("%s/%.*s.slice", acc,
						  (int)(p - slice), slice);

			free(acc);
			acc = next;
		}
	}
	*out = ar_steal_ptr(&acc);
	return 0;
}

int ar_cgroup_systemd_path(const char *cp, bool rootless, char **out,
			   struct ar_error *err)
{
	const char *c1, *c2;
	_cleanup_free_ char *slice = NULL, *prefix = NULL, *sp = NULL;
	const char *name;

	*out = NULL;
	if (!cp || strchr(cp, '/'))
		return 0;
	c1 = strchr(cp, ':');
	if (!c1)
		return 0;
	c2 = strchr(c1 + 1, ':');
	if (!c2 || strchr(c2 + 1, ':'))
		return ar_error_set_plain(
			err, EINVAL,
			"linux.cgroupsPath `%s`: expected \"slice:prefix:name\"",
			cp);
	slice = ar_xasprintf("%.*s", (int)(c1 - cp), cp);
	prefix = ar_xasprintf("%.*s", (int)(c2 - c1 - 1), c1 + 1);
	name = c2 + 1;
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strcmp(prefix, ".") == 0 || strcmp(prefix, "..") == 0)
		return ar_error_set_plain(
			err, EINVAL,
			"linux.cgroupsPath `%s`: invalid unit name", cp);
	if (!*slice) {
		free(slice);
		slice = ar_xstrdup(rootless ? "user.slice" : "system.slice");
	}
	if (expand_slice(slice, &sp, err) < 0)
		return ar_error_wrap(err, "linux.cgroupsPath `%s`", cp);
	if (strlen(name) > 6 && strcmp(name + strlen(name) - 6, ".slice") == 0)
		*out = ar_xasprintf("%s/%s", sp, name);
	else if (*prefix)
		*out = ar_xasprintf("%s/%s-%s.scope", sp, prefix, name);
	else
		*out = ar_xasprintf("%s/%s.scope", sp, name);
	return 1;
}

/* ---- the unit ---- */

static int check_part(const char *cp, const char *part, const char *what,
		      struct ar_error *err)
{
	if (strcmp(part, ".") == 0 || strcmp(part, "..") == 0 ||
	    strchr(part, '/'))
		return ar_error_set_plain(
			err, EINVAL,
			"linux.cgroupsPath `%s`: invalid %s `%s` for a systemd unit",
			cp, what, part);
	return 0;
}

int ar_cgroup_systemd_unit(const char *cgroups_path, const char *id,
			   bool rootless, char **slice, char **unit,
			   struct ar_error *err)
{
	_cleanup_free_ char *dflt = NULL, *s = NULL, *prefix = NULL;
	_cleanup_free_ char *probe = NULL, *layout = NULL;
	const char *cp = cgroups_path, *c1, *c2, *name;

	*slice = *unit = NULL;
	if (!cp || !*cp)
		cp = dflt = ar_xasprintf(":agentrun:%s", id);
	c1 = strchr(cp, ':');
	c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (strchr(cp, '/') || !c2 || strchr(c2 + 1, ':'))
		return ar_error_set_plain(
			err, EINVAL,
			"linux.cgroupsPath `%s`: the systemd cgroup manager expects \"slice:prefix:name\" (e.g. \"system.slice:agentrun:ID\"); use --cgroup-manager=cgroupfs for a cgroup path",
			cp);
	s = ar_xasprintf("%.*s", (int)(c1 - cp), cp);
	prefix = ar_xasprintf("%.*s", (int)(c2 - c1 - 1), c1 + 1);
	name = c2 + 1;
	if (!*name)
		return ar_error_set_plain(
			err, EINVAL,
			"linux.cgroupsPath `%s`: no unit name after the second ':'",
			cp);
	if (check_part(cp, s, "slice", err) < 0 ||
	    check_part(cp, prefix, "prefix", err) < 0 ||
	    check_part(cp, name, "name", err) < 0)
		return -1;
	if (strlen(name) > 6 && strcmp(name + strlen(name) - 6, ".slice") == 0)
		return ar_error_set_plain(
			err, EOPNOTSUPP,
			"linux.cgroupsPath `%s`: a slice as the container's unit is not supported by the systemd cgroup manager (name a scope: \"slice:prefix:name\")",
			cp);
	if (!*s) {
		free(s);
		s = ar_xstrdup(rootless ? "user.slice" : "system.slice");
	}
	/* the same slice syntax checks as the cgroupfs layout */
	probe = ar_xasprintf("%s:%s:%s", s, prefix, name);
	if (ar_cgroup_systemd_path(probe, rootless, &layout, err) < 0)
		return -1;
	*unit = *prefix ? ar_xasprintf("%s-%s.scope", prefix, name) :
			  ar_xasprintf("%s.scope", name);
	*slice = ar_steal_ptr(&s);
	return 0;
}

/* ---- the list ---- */

static void prop_clear(struct ar_systemd_prop *p)
{
	free(p->s);
	if (p->strv)
		for (char **it = p->strv; *it; it++)
			free(*it);
	free(p->strv);
	memset(p, 0, sizeof(*p));
}

void ar_systemd_props_free(struct ar_systemd_props *p)
{
	for (size_t i = 0; i < p->n; i++)
		prop_clear(&p->v[i]);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static struct ar_systemd_prop *props_push(struct ar_systemd_props *p)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 8;
		p->v = ar_xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	memset(&p->v[p->n], 0, sizeof(p->v[0]));
	return &p->v[p->n++];
}

void ar_systemd_props_add_u64(struct ar_systemd_props *p, const char *name,
			      uint64_t v)
{
	struct ar_systemd_prop *q = props_push(p);

	snprintf(q->name, sizeof(q->name), "%s", name);
	q->type = 't';
	q->u = v;
}

/* ---- the limits ---- */

#define SD_INFINITY UINT64_MAX

int ar_systemd_resource_props(const struct oci_resources *r,
			      struct ar_systemd_props *out,
			      struct ar_error *err)
{
	if (!r)
		return 0;
	if (r->memory.limit.set && r->memory.limit.v != 0)
		ar_systemd_props_add_u64(out, "MemoryMax",
					 r->memory.limit.v > 0 ?
						 (uint64_t)r->memory.limit.v :
						 SD_INFINITY);
	if (r->memory.reservation.set && r->memory.reservation.v > 0)
		ar_systemd_props_add_u64(out, "MemoryLow",
					 (uint64_t)r->memory.reservation.v);
	if (r->memory.swap.set) {
		int64_t swap;
		bool set;

		if (ar_cgroup_swap_to_v2(
			    r->memory.swap.v,
			    r->memory.limit.set ? r->memory.limit.v : -1, &swap,
			    &set, err) < 0)
			return -1;
		if (set)
			ar_systemd_props_add_u64(out, "MemorySwapMax",
						 swap >= 0 ? (uint64_t)swap :
							     SD_INFINITY);
	}
	if (r->cpu.shares.set && r->cpu.shares.v > 0)
		ar_systemd_props_add_u64(
			out, "CPUWeight",
			ar_cgroup_shares_to_weight(r->cpu.shares.v));
	if (r->cpu.quota.set && r->cpu.quota.v != 0) {
		uint64_t period = r->cpu.period.set && r->cpu.period.v ?
					  r->cpu.period.v :
					  100000;

		/* systemd's quota is per second of wall time */
		ar_systemd_props_add_u64(out, "CPUQuotaPerSecUSec",
					 r->cpu.quota.v > 0 ?
						 (uint64_t)r->cpu.quota.v *
							 1000000 / period :
						 SD_INFINITY);
		ar_systemd_props_add_u64(out, "CPUQuotaPeriodUSec", period);
	}
	/* 0 leaves systemd's TasksMax as it is (runc) */
	if (r->pids.present && r->pids.limit != 0)
		ar_systemd_props_add_u64(out, "TasksMax",
					 r->pids.limit > 0 ?
						 (uint64_t)r->pids.limit :
						 SD_INFINITY);
	if (r->block_io.weight.set && r->block_io.weight.v > 0)
		ar_systemd_props_add_u64(
			out, "IOWeight",
			ar_cgroup_blkio_to_io_weight(r->block_io.weight.v));
	return 0;
}

/* ---- org.systemd.property.* ---- */

/* A quoted string of GVariant text at *pp ('...' or "...", a backslash
 * escapes the next character), malloc'ed in *out; *pp after it. */
static int parse_quoted(const char **pp, char **out)
{
	const char *p = *pp;
	char q = *p++, *buf = ar_xmalloc(strlen(p) + 1), *d = buf;

	for (; *p && *p != q; p++) {
		if (*p == '\\' && p[1])
			p++;
		*d++ = *p;
	}
	if (*p != q) {
		free(buf);
		return -1;
	}
	*d = '\0';
	*out = buf;
	*pp = p + 1;
	return 0;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* ['a', "b"]: an array of strings */
static int parse_strv(const char *v, char ***out)
{
	const char *p = skip_ws(v + 1);
	char **strv = ar_xcalloc(1, sizeof(*strv));
	size_t n = 0;

	if (*p == ']')
		goto end;
	for (;;) {
		char *s;

		if ((*p != '\'' && *p != '"') || parse_quoted(&p, &s) < 0)
			goto bad;
		strv = ar_xrealloc(strv, (n + 2) * sizeof(*strv));
		strv[n++] = s;
		strv[n] = NULL;
		p = skip_ws(p);
		if (*p == ']')
			break;
		if (*p != ',')
			goto bad;
		p = skip_ws(p + 1);
	}
end:
	if (*skip_ws(p + 1))
		goto bad;
	*out = strv;
	return 0;
bad:
	for (size_t i = 0; i < n; i++)
		free(strv[i]);
	free(strv);
	return -1;
}

static bool all_digits(const char *s, bool sign)
{
	if (sign && *s == '-')
		s++;
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* A number with its GVariant type: "uint64 N", "@t N", a bare N (int32),
 * a bare decimal (double, *is_double). */
static int parse_number(const char *v, struct ar_systemd_prop *o, double *dbl,
			bool *is_double, const char **why)
{
	static const struct {
		const char *word, *at;
		char type;
		bool sign;
		uint64_t umax;
		int64_t imin;
	} types[] = {
		{ "uint64", "@t", 't', false, UINT64_MAX, 0 },
		{ "int64", "@x", 'x', true, INT64_MAX, INT64_MIN },
		{ "uint32", "@u", 'u', false, UINT32_MAX, 0 },
		{ "int32", "@i", 'i', true, INT32_MAX, INT32_MIN },
	};
	const char *num = v;
	char type = 'i';
	bool sign = true;
	uint64_t umax = INT32_MAX;
	int64_t imin = INT32_MIN;
	char *end;

	*is_double = false;
	for (size_t i = 0; i < AR_ARRAY_SIZE(types); i++) {
		size_t lw = strlen(types[i].word);

		if ((strncmp(v, types[i].word, lw) == 0 && v[lw] == ' ') ||
		    (strncmp(v, types[i].at, 2) == 0 && v[2] == ' ')) {
			num = skip_ws(strchr(v, ' '));
			type = types[i].type;
			sign = types[i].sign;
			umax = types[i].umax;
			imin = types[i].imin;
			break;
		}
	}
	if (num == v && strchr(v, '.') && !strchr(v, ' ')) {
		errno = 0;
		*dbl = strtod(v, &end);
		if (errno || *end || end == v || *dbl < 0) {
			*why = "not a number of a type runc and crun know";
			return -1;
		}
		*is_double = true;
		return 0;
	}
	if (!all_digits(num, sign)) {
		*why = num == v ?
			       "not a value runc and crun know (true, false, 'string', ['a', 'b'], uint64 N, int64 N, uint32 N, int32 N or an integer)" :
			       "not an integer";
		return -1;
	}
	errno = 0;
	o->type = type;
	if (sign) {
		long long x = strtoll(num, &end, 10);

		if (errno || x < imin || x > (long long)umax) {
			*why = "out of range for its type";
			return -1;
		}
		o->i = x;
	} else {
		unsigned long long x = strtoull(num, &end, 10);

		if (errno || x > umax) {
			*why = "out of range for its type";
			return -1;
		}
		o->u = x;
	}
	return 0;
}

/* NAMESec -> NAMEUSec with the value in microseconds (as runc): true
 * when name has that form. */
static bool sec_name(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && strcmp(name + n - 3, "Sec") == 0 &&
	       islower((unsigned char)name[n - 4]);
}

int ar_systemd_parse_property(const char *key, const char *value,
			      struct ar_systemd_prop *out, struct ar_error *err)
{
	const char *name = key + strlen(AR_SD_PROPERTY_PREFIX);
	_cleanup_free_ char *v = NULL;
	const char *why = NULL;
	size_t len;
	double dbl = 0;
	bool is_double = false;

	memset(out, 0, sizeof(*out));
	if (strncmp(key, AR_SD_PROPERTY_PREFIX,
		    strlen(AR_SD_PROPERTY_PREFIX)) != 0)
		return ar_error_set_plain(err, EINVAL,
					  "annotation %s: not an %s* name", key,
					  AR_SD_PROPERTY_PREFIX);
	len = strlen(name);
	for (size_t i = 0; i < len; i++)
		if (!isalpha((unsigned char)name[i]) ||
		    !isascii((unsigned char)name[i]))
			return ar_error_set_plain(
				err, EINVAL,
				"annotation %s: the property name may hold ASCII letters only",
				key);
	if (len < 3 || len + 2 > sizeof(out->name))
		return ar_error_set_plain(
			err, EINVAL,
			"annotation %s: the property name must have 3 to %zu letters",
			key, sizeof(out->name) - 2);
	snprintf(out->name, sizeof(out->name), "%s", name);
	/* GVariant text: leading and trailing blanks do not count */
	v = ar_xstrdup(skip_ws(value));
	for (size_t n = strlen(v); n && (v[n - 1] == ' ' || v[n - 1] == '\t');
	     n--)
		v[n - 1] = '\0';
	if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
		out->type = 'b';
		out->i = v[0] == 't';
	} else if (v[0] == '\'' || v[0] == '"') {
		const char *p = v;

		if (parse_quoted(&p, &out->s) < 0 || *skip_ws(p)) {
			free(out->s);
			out->s = NULL;
			why = "an unterminated string, or text after it";
		}
		out->type = 's';
	} else if (v[0] == '[') {
		if (parse_strv(v, &out->strv) < 0)
			why = "not an array of quoted strings ['a', 'b']";
		out->type = 'a';
	} else if (parse_number(v, out, &dbl, &is_double, &why) == 0 &&
		   !sec_name(name) && is_double) {
		why = "a decimal number is only taken for a ...Sec property (seconds)";
	}
	if (!why && sec_name(name)) {
		uint64_t sec;

		if (is_double) {
			if (dbl * 1e6 >= 18446744073709551615.0)
				why = "too many seconds";
			else
				out->u = (uint64_t)(dbl * 1e6);
		} else if (out->type == 't' || out->type == 'u' ||
			   ((out->type == 'x' || out->type == 'i') &&
			    out->i >= 0)) {
			sec = out->type == 't' || out->type == 'u' ?
				      out->u :
				      (uint64_t)out->i;
			if (sec > UINT64_MAX / 1000000)
				why = "too many seconds";
			else
				out->u = sec * 1000000;
		} else {
			why = "a ...Sec property takes a number of seconds";
		}
		out->type = 't';
		out->i = 0;
		/* "TimeoutStopSec" -> "TimeoutStopUSec" */
		snprintf(out->name, sizeof(out->name), "%.*sUSec",
			 (int)(len - 3), name);
	}
	if (why) {
		prop_clear(out);
		return ar_error_set_plain(err, EINVAL, "annotation %s=%s: %s",
					  key, value, why);
	}
	return 0;
}

int ar_systemd_annotation_props(const struct oci_kv *kv, size_t n,
				struct ar_systemd_props *out,
				struct ar_error *err)
{
	for (size_t i = 0; i < n; i++) {
		struct ar_systemd_prop p;

		if (strncmp(kv[i].key, AR_SD_PROPERTY_PREFIX,
			    strlen(AR_SD_PROPERTY_PREFIX)) != 0)
			continue;
		if (ar_systemd_parse_property(kv[i].key, kv[i].value, &p, err) <
		    0)
			return -1;
		*props_push(out) = p;
	}
	return 0;
}
