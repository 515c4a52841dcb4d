/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `lo` up in a new network namespace (see net_loopback.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "net_loopback.h"

#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "utils.h"

int ar_net_loopback_up(struct ar_error *err)
{
	_cleanup_close_ int fd = -1;
	struct ifreq ifr;

	/* SIOCSIFFLAGS on any socket of the netns; no netlink needed for a
	 * single flag on a device that always exists. */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ar_error_set(err, errno, "loopback: socket");
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return ar_error_set(err, errno, "loopback: get flags of lo");
	if (ifr.ifr_flags & IFF_UP)
		return 0;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return ar_error_set(err, errno, "loopback: bring lo up");
	return 0;
}

int ar_net_loopback_apply(const struct oci_config *cfg, bool new_netns,
			  struct ar_error *err)
{
	const char *v = oci_config_annotation(cfg, AR_ANNOTATION_NET_LOOPBACK);

	if (v && strcmp(v, "up") != 0)
		return ar_error_set_plain(
			err, EINVAL,
			"annotations[\"%s\"]: expected \"up\", got \"%s\"",
			AR_ANNOTATION_NET_LOOPBACK, v);
	if (!new_netns)
		return 0; /* the host's (or a joined) netns: not ours to touch */
	if (ar_net_loopback_up(err) < 0)
		return ar_error_wrap(err, "network namespace");
	return 0;
}
