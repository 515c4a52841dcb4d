/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/lib/net_loopback.c and runtime/lib/landlock.c. */
#define _GNU_SOURCE
#include <net/if.h>
#include <sched.h>
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

UNIT_TEST(landlock_rules_syntax)
{
	struct ar_error err = AR_ERROR_INIT;
	pid_t pid;
	int st = 0;

	if (ar_landlock_abi() <= 0)
		UNIT_SKIP("no Landlock");
	/* bad rules fail before restricting anything */
	CHECK(ar_landlock_restrict("xx:/", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "expected ro:PATH or rw:PATH");
	ar_error_clear(&err);
	CHECK(ar_landlock_restrict("ro:relative", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "absolute");
	/* a child restricted to reading: writing /tmp is denied */
	pid = fork();
	if (pid == 0) {
		struct ar_error e = AR_ERROR_INIT;
		char path[] = "/tmp/ar-landlock-XXXXXX";
		int fd;

		if (ar_landlock_restrict("ro:/\nrw:/nonexistent-skipped\n",
					 &e) < 0)
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

UNIT_MAIN()
