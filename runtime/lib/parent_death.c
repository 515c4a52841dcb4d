/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The container process of a foreground `run` or `exec` must not outlive
 * the runtime that supervises it: `agentrun run` killed with SIGKILL (an
 * agent's harness timing out) would otherwise leave the container
 * running, unsupervised and never deleted. PR_SET_PDEATHSIG does it, with
 * two traps: the kernel clears it on every change of uid/gid (setup
 * switches to the container's user), and it only fires for a death that
 * happens after the prctl.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "parent_death.h"

int ar_die_with_runtime(int sync_fd, struct ar_error *err)
{
	struct pollfd pfd = { .fd = sync_fd, .events = POLLRDHUP };

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return ar_error_set(err, errno, "prctl(PR_SET_PDEATHSIG)");
	/* The runtime holds its end until our execve: a hang-up means it
	 * died before the prctl above could take effect. */
	if (poll(&pfd, 1, 0) > 0 &&
	    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)))
		_exit(1);
	return 0;
}
