/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/lib/net_loopback.c and runtime/lib/landlock.c. */
#define _GNU_SOURCE
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landlock.h"
#include "net_loopback.h"
#include "unit.h"
#include "utils.h"

static int lo_flags(void)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -1;
	return ifr.ifr_flags;
}

/* In a child with its own user and network namespace: 0 when lo starts
 * DOWN and ends UP, 10+ on failures, 77 when namespaces are unavailable. */
static int child_loopback(void)
{
	struct ar_error err = AR_ERROR_INIT;
	int f;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return 77;
	f = lo_flags();
	if (f < 0 || (f & IFF_UP))
		return 10;
	if (ar_net_loopback_up(&err) < 0)
		return 11;
	f = lo_flags();
	if (f < 0 || !(f & IFF_UP))
		return 12;
	if (ar_net_loopback_up(&err) < 0) /* idempotent */
		return 13;
	return 0;
}

UNIT_TEST(loopback_up_in_new_netns)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0)
		_exit(child_loopback());
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		UNIT_SKIP("no user/network namespaces");
	CHECK_INT_EQ(WEXITSTATUS(st), 0);
}

UNIT_TEST(loopback_annotation)
{
	struct oci_config *c = oci_config_new();
	struct ar_error err = AR_ERROR_INIT;
	struct oci_kv kv = { "run.agentrun.net.loopback", "down" };

	CHECK(ar_net_loopback_apply(c, true, &err) == 0); /* absent */
	c->annotations.items = &kv;
	c->annotations.n = 1;
	CHECK(ar_net_loopback_apply(c, true, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "expected \"up\"");
	kv.value = "up";
	/* the host's netns is never touched */
	CHECK(ar_net_loopback_apply(c, false, &err) == 0);
	c->annotations.items = NULL;
	c->annotations.n = 0;
	oci_config_free(c);
}

/* Apply the annotation `text` (fails before restricting anything when
 * the text is bad). */
static int apply_text(const char *text, struct ar_error *err)
{
	struct oci_config *c = oci_config_new();
	struct oci_kv kv = { AR_ANNOTATION_LANDLOCK, (char *)text };
	int r;

	c->annotations.items = &kv;
	c->annotations.n = 1;
	r = ar_landlock_apply(c, NULL, err);
	c->annotations.items = NULL;
	c->annotations.n = 0;
	oci_config_free(c);
	return r;
}

UNIT_TEST(landlock_rules_text)
{
	static const struct ar_landlock_rule v[] = {
		{ "/", false },
		{ "/work/space", true },
		{ "/a\nrw:/", true }, /* cannot be a line: left out */
		{ "/tmp", true },
	};
	struct ar_landlock_rules rules = { v, 4 }, none = { NULL, 0 };
	char *t = ar_landlock_rules_text(&rules);

	CHECK_STR_EQ(t, "ro:/\nrw:/work/space\nrw:/tmp\n");
	free(t);
	t = ar_landlock_rules_text(&none);
	CHECK_STR_EQ(t, "");
	free(t);
}

UNIT_TEST(landlock_rules_syntax)
{
	static const struct ar_landlock_rule ro[] = {
		{ "/", false },
		{ "/nonexistent-skipped", true },
	};
	struct ar_landlock_rules rules = { ro, 2 };
	struct ar_error err = AR_ERROR_INIT;
	pid_t pid;
	int st = 0;

	if (ar_landlock_abi() <= 0)
		UNIT_SKIP("no Landlock");
	/* bad rules fail before restricting anything */
	CHECK(apply_text("xx:/", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "expected ro:PATH or rw:PATH");
	CHECK_STR_CONTAINS(err.msg, AR_ANNOTATION_LANDLOCK);
	ar_error_clear(&err);
	CHECK(apply_text("ro:relative", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "absolute");
	ar_error_clear(&err);
	/* a child restricted to reading, by the annotation and by the
	 * rules as data: writing /tmp is denied */
	for (int by_data = 0; by_data < 2; by_data++) {
		pid = fork();
		if (pid == 0) {
			struct ar_error e = AR_ERROR_INIT;
			char path[] = "/tmp/ar-landlock-XXXXXX";
			int fd, r;

			r = by_data ? ar_landlock_apply(NULL, &rules, &e) :
				      apply_text(
					      "ro:/\nrw:/nonexistent-skipped\n",
					      &e);
			if (r < 0)
				_exit(10);
			fd = mkstemp(path);
			if (fd >= 0) {
				unlink(path);
				_exit(11);
			}
			_exit(errno == EACCES ? 0 : 12);
		}
		CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
		CHECK(WIFEXITED(st));
		CHECK_INT_EQ(WEXITSTATUS(st), 0);
	}
}

UNIT_MAIN()
