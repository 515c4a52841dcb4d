/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * agentrun-init: the program pid 1 of an `agentrun sandbox` executes once
 * it has forked the user's command (runtime/lib/init.h), so that pid 1 is
 * a clean image: nothing of the runtime's memory (the caller's whole
 * environment, secrets) stays in it, and it is an ordinary process of the
 * sandbox (dumpable, the command's own confinement), whose /proc/1/root
 * and namespaces `agentrun sandbox exec` can open rootless.
 *
 *   init CHAN PID
 *
 * CHAN: the fd of the channel to the runtime (-1: none), PID: the
 * command's pid. Every signal is blocked on entry (the mask and the
 * pending signals are kept across execve: nothing sent to pid 1 since the
 * fork is lost). Linked statically: it runs inside the sandbox's root,
 * whatever libraries that has.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "init_loop.h"

int main(int argc, char **argv)
{
	sigset_t all;
	char *end;
	long chan, prog;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	/* execveat of a memfd names it after the fd */
	prctl(PR_SET_NAME, "init");
	if (argc != 3)
		return 127;
	chan = strtol(argv[1], &end, 10);
	if (*end || chan < -1 || chan > 1 << 20)
		return 127;
	prog = strtol(argv[2], &end, 10);
	if (*end || prog < 2)
		return 127;
	ar_init_loop((pid_t)prog, (int)chan, &all);
}
