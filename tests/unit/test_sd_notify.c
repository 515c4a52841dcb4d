/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sd_notify.c: the config changes of the NOTIFY_SOCKET proxy, the
 * caller's path accepted or not, the runtime's socket forwarding READY=1
 * only (to a socket of this test). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "oci_config.h"
#include "sd_notify.h"
#include "unit.h"
#include "utils.h"

static const char cfg_json[] =
	"{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
	"\"process\":{\"args\":[\"true\"],\"cwd\":\"/\","
	"\"env\":[\"A=1\",\"NOTIFY_SOCKET=/old\"]},"
	"\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\"}]}";

UNIT_TEST(plan_adds_bind_and_replaces_env)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_config_ struct oci_config *cfg = NULL;
	int idx = -1;

	CHECK(oci_config_parse(cfg_json, strlen(cfg_json), "t", &cfg, &err) ==
	      0);
	CHECK(ar_notify_plan(cfg, "/run/x/the-socket", &idx, &err) == 0);
	CHECK(idx == 1);
	CHECK(cfg->n_mounts == 2);
	CHECK_STR_EQ(cfg->mounts[0].destination, "/proc");
	CHECK_STR_EQ(cfg->mounts[1].destination, "/run/x/the-socket");
	CHECK_STR_EQ(cfg->mounts[1].type, "bind");
	CHECK(cfg->mounts[1].source == NULL);
	CHECK_STR_EQ(cfg->mounts[1].options.v[0], "rbind");
	CHECK(cfg->process.env.n == 2);
	CHECK_STR_EQ(cfg->process.env.v[0], "A=1");
	CHECK_STR_EQ(cfg->process.env.v[1],
		     "NOTIFY_SOCKET=/run/x/the-socket/notify");
}

UNIT_TEST(plan_refuses_too_long)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_config_ struct oci_config *cfg = NULL;
	char path[120];
	int idx = -1;

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	CHECK(oci_config_parse(cfg_json, strlen(cfg_json), "t", &cfg, &err) ==
	      0);
	CHECK(ar_notify_plan(cfg, path, &idx, &err) < 0);
	CHECK(strstr(err.msg, "too long") != NULL);
}

UNIT_TEST(caller_must_be_absolute)
{
	setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1);
	CHECK_STR_EQ(ar_notify_caller(), "/run/systemd/notify");
	setenv("NOTIFY_SOCKET", "@abstract", 1);
	CHECK(ar_notify_caller() == NULL);
	setenv("NOTIFY_SOCKET", "", 1);
	CHECK(ar_notify_caller() == NULL);
	unsetenv("NOTIFY_SOCKET");
	CHECK(ar_notify_caller() == NULL);
}

/* the runtime's socket in a state directory; a datagram without READY=1
 * is not forwarded, one with it is (then the barrier) */
UNIT_TEST(pump_forwards_ready_only)
{
	struct ar_error err = AR_ERROR_INIT;
	char tmpl[] = "/tmp/ar-unit-notify.XXXXXX";
	char *dir = mkdtemp(tmpl), *host_dir = NULL, to[128], sock[160];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sfd, lfd, cfd, state;
	char buf[64];

	CHECK(dir != NULL);
	state = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(state >= 0);
	CHECK(ar_notify_dir_make(state, &host_dir, &err) == 0);
	CHECK(ar_notify_dir_exists(state));
	sfd = ar_notify_listen(state, &err);
	CHECK(sfd >= 0);
	/* the caller's socket */
	snprintf(to, sizeof(to), "%s/caller", dir);
	lfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	strcpy(sa.sun_path, to);
	CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	/* the container's side */
	snprintf(sock, sizeof(sock), "%s/notify", host_dir);
	strcpy(sa.sun_path, sock);
	cfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(connect(cfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(send(cfd, "STATUS=x", 8, 0) == 8);
	CHECK(ar_notify_pump(sfd, to, &err) == 0);
	CHECK(recv(lfd, buf, sizeof(buf), MSG_DONTWAIT) < 0);
	CHECK(send(cfd, "STATUS=y\nREADY=1", 16, 0) == 16);
	/* the barrier waits for the receiver: read it from a child */
	if (fork() == 0) {
		usleep(100000);
		while (recv(lfd, buf, sizeof(buf), 0) > 0 &&
		       memcmp(buf, "BARRIER=1", 9) != 0)
			;
		_exit(0);
	}
	CHECK(ar_notify_pump(sfd, to, &err) == 1);
	while (wait(NULL) > 0)
		;
	close(cfd);
	close(sfd);
	close(lfd);
	unlink(to);
	unlink(sock);
	rmdir(host_dir);
	rmdir(dir);
	close(state);
	free(host_dir);
}

UNIT_MAIN()
