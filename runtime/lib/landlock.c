/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Landlock filesystem rules: as data, or from a config annotation
 * (see landlock.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "landlock.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/landlock.h>

#include "log.h"
#include "utils.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define LL_READ                                                                \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |           \
	 LANDLOCK_ACCESS_FS_READ_DIR)
/* ABI 1 */
#define LL_ALL_V1 ((1ULL << 13) - 1)

int ar_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
			   LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : (int)abi;
}

/* Everything this kernel's ABI can handle. */
static uint64_t handled_for(int abi)
{
	uint64_t all = LL_ALL_V1;

	if (abi >= 2)
		all |= 1ULL << 13; /* REFER */
	if (abi >= 3)
		all |= 1ULL << 14; /* TRUNCATE */
	if (abi >= 5)
		all |= 1ULL << 15; /* IOCTL_DEV */
	return all;
}

static int add_rule(int rfd, const char *path, uint64_t access,
		    uint64_t handled, struct ar_error *err)
{
	struct landlock_path_beneath_attr pb = { 0 };
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	struct stat st;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return ar_error_set(err, errno, "landlock: open `%s`", path);
	}
	/* Directory-only rights on a file are EINVAL. */
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		access &=
			~(uint64_t)(LANDLOCK_ACCESS_FS_READ_DIR |
				    LANDLOCK_ACCESS_FS_REMOVE_DIR |
				    LANDLOCK_ACCESS_FS_REMOVE_FILE |
				    LANDLOCK_ACCESS_FS_MAKE_CHAR |
				    LANDLOCK_ACCESS_FS_MAKE_DIR |
				    LANDLOCK_ACCESS_FS_MAKE_REG |
				    LANDLOCK_ACCESS_FS_MAKE_SOCK |
				    LANDLOCK_ACCESS_FS_MAKE_FIFO |
				    LANDLOCK_ACCESS_FS_MAKE_BLOCK |
				    LANDLOCK_ACCESS_FS_MAKE_SYM | (1ULL << 13));
	pb.allowed_access = access & handled;
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, rfd, LANDLOCK_RULE_PATH_BENEATH, &pb,
		    0) < 0)
		return ar_error_set(err, errno, "landlock: rule for `%s`",
				    path);
	return 0;
}

int ar_landlock_restrict(const struct ar_landlock_rules *rules,
			 struct ar_error *err)
{
	struct landlock_ruleset_attr attr = { 0 };
	_cleanup_close_ int rfd = -1;
	int abi = ar_landlock_abi();

	if (abi <= 0)
		return ar_error_set_plain(
			err, ENOTSUP,
			"landlock: not available in this kernel (see `agentrun doctor`)");
	attr.handled_access_fs = handled_for(abi);
	rfd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rfd < 0)
		return ar_error_set(err, errno, "landlock: create ruleset");
	for (size_t i = 0; i < rules->n; i++) {
		const struct ar_landlock_rule *r = &rules->v[i];

		if (r->path[0] != '/')
			return ar_error_set_plain(
				err, EINVAL,
				"landlock: rule `%s`: the path must be absolute",
				r->path);
		if (add_rule(rfd, r->path,
			     r->rw ? attr.handled_access_fs : LL_READ,
			     attr.handled_access_fs, err) < 0)
			return -1;
	}
	if (!prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) &&
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ar_error_set(err, errno, "landlock: no_new_privs");
	if (syscall(SYS_landlock_restrict_self, rfd, 0) < 0)
		return ar_error_set(err, errno, "landlock: restrict self");
	return 0;
}

char *ar_landlock_rules_text(const struct ar_landlock_rules *rules)
{
	size_t len = 1;
	char *buf, *p;

	for (size_t i = 0; i < rules->n; i++)
		len += strlen(rules->v[i].path) + 4;
	p = buf = ar_xmalloc(len);
	for (size_t i = 0; i < rules->n; i++) {
		const char *path = rules->v[i].path;
		size_t n = strlen(path);

		if (strchr(path, '\n'))
			continue;
		memcpy(p, rules->v[i].rw ? "rw:" : "ro:", 3);
		memcpy(p + 3, path, n);
		p[3 + n] = '\n';
		p += n + 4;
	}
	*p = '\0';
	return buf;
}

/* "ro:PATH" or "rw:PATH" lines; the rules point into `text`, which is
 * changed (newlines become NULs). */
static int rules_parse(char *text, struct ar_landlock_rule **out, size_t *n,
		       struct ar_error *err)
{
	size_t cap = 1;
	char *save = NULL;

	for (const char *c = text; *c; c++)
		cap += *c == '\n';
	*out = ar_xcalloc(cap, sizeof(**out));
	*n = 0;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct ar_landlock_rule *r = &(*out)[(*n)++];

		if (strncmp(line, "ro:", 3) != 0 &&
		    strncmp(line, "rw:", 3) != 0)
			return ar_error_set_plain(
				err, EINVAL,
				"landlock: rule `%s`: expected ro:PATH or rw:PATH",
				line);
		if (line[3] != '/')
			return ar_error_set_plain(
				err, EINVAL,
				"landlock: rule `%s`: the path must be absolute",
				line);
		r->rw = line[1] == 'w';
		r->path = line + 3;
	}
	return 0;
}

int ar_landlock_apply(const struct oci_config *cfg,
		      const struct ar_landlock_rules *rules,
		      struct ar_error *err)
{
	const char *text;
	_cleanup_free_ char *copy = NULL;
	_cleanup_free_ struct ar_landlock_rule *v = NULL;
	struct ar_landlock_rules parsed;

	if (rules) {
		ar_debug("landlock: %zu rules from the runtime's options",
			 rules->n);
		return ar_landlock_restrict(rules, err);
	}
	text = oci_config_annotation(cfg, AR_ANNOTATION_LANDLOCK);
	if (!text)
		return 0;
	copy = ar_xstrdup(text);
	if (rules_parse(copy, &v, &parsed.n, err) < 0)
		return ar_error_wrap(err, "annotations[\"%s\"]",
				     AR_ANNOTATION_LANDLOCK);
	parsed.v = v;
	ar_debug("landlock: %zu rules from annotations[\"%s\"]", parsed.n,
		 AR_ANNOTATION_LANDLOCK);
	if (ar_landlock_restrict(&parsed, err) < 0)
		return ar_error_wrap(err, "annotations[\"%s\"]",
				     AR_ANNOTATION_LANDLOCK);
	return 0;
}
