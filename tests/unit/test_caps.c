/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Capabilities: names, and the five sets of a real (forked) process after
 * ar_caps_apply(), read back from /proc/self/status. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capabilities.h"
#include "oci_config.h"
#include "unit.h"
#include "utils.h"

#define BIT(c) (UINT64_C(1) << (c))

static int last_cap_from_proc(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Parse the Cap* and NoNewPrivs lines of a /proc/PID/status text. */
struct status_caps {
	uint64_t inh, prm, eff, bnd, amb;
	int nnp;
	int found;
};

static void parse_status(const char *text, struct status_caps *s)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "CapInh:", offsetof(struct status_caps, inh) },
		{ "CapPrm:", offsetof(struct status_caps, prm) },
		{ "CapEff:", offsetof(struct status_caps, eff) },
		{ "CapBnd:", offsetof(struct status_caps, bnd) },
		{ "CapAmb:", offsetof(struct status_caps, amb) },
	};
	const char *p;

	memset(s, 0, sizeof(*s));
	s->nnp = -1;
	for (size_t i = 0; i < AR_ARRAY_SIZE(keys); i++) {
		p = strstr(text, keys[i].key);
		if (!p)
			continue;
		*(uint64_t *)((char *)s + keys[i].off) =
			strtoull(p + strlen(keys[i].key), NULL, 16);
		s->found++;
	}
	p = strstr(text, "NoNewPrivs:");
	if (p)
		s->nnp = atoi(p + strlen("NoNewPrivs:"));
}

/* Fork; the child runs fn and writes its /proc/self/status (or, when fn
 * returns 1, has already exec'ed something that prints it) to a pipe.
 * Returns the exit status; *out gets what the child wrote. */
static int in_child(int (*fn)(void *, struct ar_error *), void *arg, char *out,
		    size_t len)
{
	int p[2];
	pid_t pid;
	ssize_t n, total = 0;
	int st = 0;

	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct ar_error err = AR_ERROR_INIT;
		char *status = NULL;
		int r;

		close(p[0]);
		dup2(p[1], STDOUT_FILENO);
		r = fn(arg, &err);
		if (r < 0) {
			printf("ERROR: %s\n", err.msg);
			fflush(stdout);
			_exit(3);
		}
		if (ar_read_file_at(AT_FDCWD, "/proc/self/status", 1 << 20,
				    &status, NULL, &err) < 0)
			_exit(4);
		if (ar_write_all(STDOUT_FILENO, status, strlen(status)) < 0)
			_exit(5);
		_exit(0);
	}
	close(p[1]);
	while ((size_t)total < len - 1 &&
	       (n = read(p[0], out + total, len - 1 - (size_t)total)) > 0)
		total += n;
	out[total] = '\0';
	close(p[0]);
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return st;
}

UNIT_TEST(cap_names)
{
	struct ar_error err = AR_ERROR_INIT;
	int c = -1;

	CHECK_STR_EQ(ar_cap_name(CAP_CHOWN), "CAP_CHOWN");
	CHECK_STR_EQ(ar_cap_name(CAP_SYS_ADMIN), "CAP_SYS_ADMIN");
	CHECK_STR_EQ(ar_cap_name(CAP_CHECKPOINT_RESTORE),
		     "CAP_CHECKPOINT_RESTORE");
	CHECK(ar_cap_name(-1) == NULL);
	CHECK(ar_cap_name(63) == NULL);
	CHECK_INT_EQ(ar_cap_from_name("CAP_NET_BIND_SERVICE"),
		     CAP_NET_BIND_SERVICE);
	CHECK_INT_EQ(ar_cap_from_name("cap_sys_admin"), CAP_SYS_ADMIN);
	CHECK_INT_EQ(ar_cap_from_name("SYS_ADMIN"), -1);
	CHECK_INT_EQ(ar_cap_from_name("CAP_FOO"), -1);
	for (int i = 0; i <= CAP_LAST_CAP; i++) {
		CHECK(ar_cap_name(i) != NULL);
		CHECK_INT_EQ(ar_cap_from_name(ar_cap_name(i)), i);
	}
	CHECK_INT_EQ(ar_cap_parse("CAP_KILL", &c, &err), 0);
	CHECK_INT_EQ(c, CAP_KILL);
	CHECK_INT_EQ(ar_cap_parse("CAP_FOO", &c, &err), -1);
	CHECK_STR_EQ(err.msg, "unknown capability `CAP_FOO`");
}

UNIT_TEST(cap_last_cap)
{
	int v = last_cap_from_proc();

	if (v < 0)
		UNIT_SKIP("no /proc/sys/kernel/cap_last_cap");
	CHECK_INT_EQ(ar_cap_last_cap(), v);
}

static void set_mask(struct oci_capabilities *c, enum oci_cap_set s, uint64_t m)
{
	c->present = true;
	c->set_present[s] = true;
	c->mask[s] = m;
}

static int apply_as_is(void *arg, struct ar_error *err)
{
	return ar_caps_apply(arg, err);
}

UNIT_TEST(apply_as_root)
{
	struct oci_capabilities c = { 0 };
	struct status_caps s;
	char out[8192];
	int st;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	set_mask(&c, OCI_CAP_BOUNDING,
		 BIT(CAP_CHOWN) | BIT(CAP_KILL) | BIT(CAP_NET_BIND_SERVICE) |
			 BIT(CAP_SETPCAP));
	set_mask(&c, OCI_CAP_EFFECTIVE, BIT(CAP_CHOWN) | BIT(CAP_KILL));
	set_mask(&c, OCI_CAP_PERMITTED,
		 BIT(CAP_CHOWN) | BIT(CAP_KILL) | BIT(CAP_NET_BIND_SERVICE));
	set_mask(&c, OCI_CAP_INHERITABLE,
		 BIT(CAP_KILL) | BIT(CAP_NET_BIND_SERVICE));
	set_mask(&c, OCI_CAP_AMBIENT, BIT(CAP_NET_BIND_SERVICE));

	st = in_child(apply_as_is, &c, out, sizeof(out));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		printf("# child output: %s\n", out);
	parse_status(out, &s);
	CHECK_INT_EQ(s.found, 5);
	CHECK_INT_EQ(s.bnd, c.mask[OCI_CAP_BOUNDING]);
	CHECK_INT_EQ(s.eff, c.mask[OCI_CAP_EFFECTIVE]);
	CHECK_INT_EQ(s.prm, c.mask[OCI_CAP_PERMITTED]);
	CHECK_INT_EQ(s.inh, c.mask[OCI_CAP_INHERITABLE]);
	CHECK_INT_EQ(s.amb, c.mask[OCI_CAP_AMBIENT]);
	CHECK_INT_EQ(s.nnp, 0);
}

UNIT_TEST(apply_absent_drops_everything)
{
	struct oci_capabilities c = { 0 };
	struct status_caps s;
	char out[8192];
	int st;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	st = in_child(apply_as_is, &c, out, sizeof(out));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	parse_status(out, &s);
	CHECK_INT_EQ(s.found, 5);
	CHECK_INT_EQ(s.bnd, 0);
	CHECK_INT_EQ(s.eff, 0);
	CHECK_INT_EQ(s.prm, 0);
	CHECK_INT_EQ(s.inh, 0);
	CHECK_INT_EQ(s.amb, 0);
}

UNIT_TEST(apply_ignores_caps_unknown_to_kernel)
{
	struct oci_capabilities c = { 0 };
	struct status_caps s;
	char out[8192];
	int st;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	if (ar_cap_last_cap() >= 62)
		UNIT_SKIP("kernel knows capability 62");
	set_mask(&c, OCI_CAP_BOUNDING, BIT(CAP_KILL) | BIT(62));
	set_mask(&c, OCI_CAP_EFFECTIVE, BIT(CAP_KILL) | BIT(62));
	set_mask(&c, OCI_CAP_PERMITTED, BIT(CAP_KILL) | BIT(62));
	st = in_child(apply_as_is, &c, out, sizeof(out));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	parse_status(out, &s);
	CHECK_INT_EQ(s.bnd, BIT(CAP_KILL));
	CHECK_INT_EQ(s.eff, BIT(CAP_KILL));
	CHECK_INT_EQ(s.prm, BIT(CAP_KILL));
}

/* crun's and runc's default specs: ambient caps that are not in the
 * inheritable set. Accepted; the kernel does not raise them. */
UNIT_TEST(ambient_without_inheritable_is_not_raised)
{
	struct oci_capabilities c = { 0 };
	struct status_caps s;
	char out[8192];
	int st;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	set_mask(&c, OCI_CAP_BOUNDING, BIT(CAP_KILL) | BIT(CAP_CHOWN));
	set_mask(&c, OCI_CAP_EFFECTIVE, BIT(CAP_KILL) | BIT(CAP_CHOWN));
	set_mask(&c, OCI_CAP_PERMITTED, BIT(CAP_KILL) | BIT(CAP_CHOWN));
	set_mask(&c, OCI_CAP_INHERITABLE, BIT(CAP_CHOWN));
	set_mask(&c, OCI_CAP_AMBIENT, BIT(CAP_KILL) | BIT(CAP_CHOWN));
	st = in_child(apply_as_is, &c, out, sizeof(out));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		printf("# child output: %s\n", out);
	parse_status(out, &s);
	CHECK_INT_EQ(s.amb, BIT(CAP_CHOWN));
	CHECK_INT_EQ(s.prm, BIT(CAP_KILL) | BIT(CAP_CHOWN));
}

UNIT_TEST(effective_needs_permitted)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_capabilities c = { 0 };
	uint64_t before = 0, after = 0;

	/* Fails before changing anything, so it is safe in the test
	 * process itself. */
	CHECK_INT_EQ(ar_caps_read_current(OCI_CAP_BOUNDING, &before, &err), 0);
	set_mask(&c, OCI_CAP_EFFECTIVE, BIT(CAP_SYS_ADMIN));
	CHECK_INT_EQ(ar_caps_apply(&c, &err), -1);
	CHECK_STR_CONTAINS(
		err.msg,
		"effective capability CAP_SYS_ADMIN must also be in the permitted set");
	CHECK_INT_EQ(ar_caps_read_current(OCI_CAP_BOUNDING, &after, &err), 0);
	CHECK_INT_EQ(before, after);
}

UNIT_TEST(inheritable_outside_bounding_fails)
{
	struct oci_capabilities c = { 0 };
	char out[8192];
	int st;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	set_mask(&c, OCI_CAP_BOUNDING, BIT(CAP_KILL));
	set_mask(&c, OCI_CAP_PERMITTED, BIT(CAP_KILL));
	set_mask(&c, OCI_CAP_INHERITABLE, BIT(CAP_CHOWN));
	st = in_child(apply_as_is, &c, out, sizeof(out));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
	CHECK_STR_CONTAINS(out, "inheritable must be within the bounding set");
}

/* The real sequence of the container process: keep caps, switch to an
 * unprivileged uid, apply, set NNP, exec.  The exec'ed program prints its
 * own status: ambient caps make it into the new program. */
struct user_arg {
	struct oci_capabilities *caps;
	bool exec;
};

static int apply_as_user(void *p, struct ar_error *err)
{
	struct user_arg *a = p;

	if (ar_caps_prepare_keep(err) < 0)
		return -1;
	if (setgroups(0, NULL) < 0 || setresgid(1000, 1000, 1000) < 0 ||
	    setresuid(1000, 1000, 1000) < 0)
		return ar_error_set(err, errno, "setuid");
	if (ar_caps_apply(a->caps, err) < 0)
		return -1;
	if (prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0) != 0)
		return ar_error_set_plain(err, 0, "keepcaps still set");
	if (ar_set_no_new_privs(err) < 0)
		return -1;
	if (a->exec) {
		execl("/bin/cat", "cat", "/proc/self/status", (char *)NULL);
		return ar_error_set(err, errno, "exec /bin/cat");
	}
	return 0;
}

UNIT_TEST(apply_after_setuid_and_exec)
{
	struct oci_capabilities c = { 0 };
	struct user_arg a = { .caps = &c };
	uint64_t want = BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_KILL);
	struct status_caps s;
	char out[8192];
	int st;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	set_mask(&c, OCI_CAP_BOUNDING, want | BIT(CAP_CHOWN));
	set_mask(&c, OCI_CAP_EFFECTIVE, want);
	set_mask(&c, OCI_CAP_PERMITTED, want);
	set_mask(&c, OCI_CAP_INHERITABLE, want);
	set_mask(&c, OCI_CAP_AMBIENT, want);

	/* Right after apply, in the same process. */
	st = in_child(apply_as_user, &a, out, sizeof(out));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		printf("# child output: %s\n", out);
	parse_status(out, &s);
	CHECK_INT_EQ(s.found, 5);
	CHECK_INT_EQ(s.bnd, want | BIT(CAP_CHOWN));
	CHECK_INT_EQ(s.eff, want);
	CHECK_INT_EQ(s.prm, want);
	CHECK_INT_EQ(s.inh, want);
	CHECK_INT_EQ(s.amb, want);
	CHECK_INT_EQ(s.nnp, 1);

	/* In the exec'ed program (non-root: ambient is what survives). */
	a.exec = true;
	st = in_child(apply_as_user, &a, out, sizeof(out));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	parse_status(out, &s);
	CHECK_STR_CONTAINS(out, "Uid:\t1000");
	CHECK_INT_EQ(s.found, 5);
	CHECK_INT_EQ(s.bnd, want | BIT(CAP_CHOWN));
	CHECK_INT_EQ(s.eff, want);
	CHECK_INT_EQ(s.prm, want);
	CHECK_INT_EQ(s.inh, want);
	CHECK_INT_EQ(s.amb, want);
	CHECK_INT_EQ(s.nnp, 1);
}

UNIT_TEST(apply_after_setuid_drops_all)
{
	struct oci_capabilities c = { 0 };
	struct user_arg a = { .caps = &c, .exec = true };
	struct status_caps s;
	char out[8192];
	int st;

	if (geteuid() != 0)
		UNIT_SKIP("needs root");
	set_mask(&c, OCI_CAP_BOUNDING, BIT(CAP_CHOWN));
	st = in_child(apply_as_user, &a, out, sizeof(out));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	parse_status(out, &s);
	CHECK_INT_EQ(s.bnd, BIT(CAP_CHOWN));
	CHECK_INT_EQ(s.eff, 0);
	CHECK_INT_EQ(s.prm, 0);
	CHECK_INT_EQ(s.amb, 0);
}

UNIT_MAIN()
