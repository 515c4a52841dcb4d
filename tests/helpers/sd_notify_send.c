/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test helper, built statically and copied into a test rootfs: send each
 * argument as one datagram to $NOTIFY_SOCKET (what sd_notify(3) does,
 * without libsystemd). Exit 0 when all were sent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr,
			"sd_notify_send: NOTIFY_SOCKET unset or too long\n");
		return 2;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("sd_notify_send: connect");
		return 1;
	}
	for (int i = 1; i < argc; i++)
		if (send(fd, argv[i], strlen(argv[i]), 0) < 0) {
			perror("sd_notify_send: send");
			return 1;
		}
	return 0;
}
