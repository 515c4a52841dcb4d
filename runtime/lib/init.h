/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small init as pid 1 of a container's pid namespace (create_opts.init:
 * `agentrun sandbox`), as bubblewrap, tini and catatonit do it: the
 * container process forks the user's program and executes agentrun-init
 * (runtime/init/main.c: a small static program embedded in the runtime,
 * run from a sealed memfd, so that pid 1 holds nothing of the runtime's
 * memory and is an ordinary, dumpable process of the sandbox), which
 *   - reaps every orphan of the namespace (no zombies of the tools an agent
 *     starts and forgets),
 *   - forwards the signals the runtime sends it to the program (pid 1
 *     ignores the ones it has no handler for; a program that is not pid 1
 *     gets SIGTERM's default action),
 *   - hands job-control stops to the runtime: the program runs in a
 *     process group of its own in the foreground of the container's
 *     terminal, so ^Z stops it; the init then tells the runtime over the
 *     channel (AR_INIT_STOPPED), which gives the user's terminal back and
 *     stops itself, and when the shell continues it (fg), answers
 *     AR_INIT_CONT: the init continues the program's process group.
 *   - exits with the program's status (128+N for a signal), which ends the
 *     namespace and every process left in it.
 */
#ifndef AGENTRUN_INIT_H
#define AGENTRUN_INIT_H

#include <stdbool.h>

#include "error.h"

#include "init_loop.h" /* AR_INIT_STOPPED, AR_INIT_CONT */

/* agentrun-init's bytes (init_image.c) */
extern const char ar_init_image[], ar_init_image_end[];

/* Remember the process's argument area (main's argv), so that the init
 * can show itself as `init` in /proc/1/cmdline instead of the runtime's
 * command line. */
void ar_init_save_argv(int argc, char **argv);

/*
 * Fork: the child (the program) gets a process group of its own, in the
 * foreground of the terminal on fd 0 when `tty`, the signal mask and
 * dispositions of a fresh execve, and execs exe; when that fails it
 * returns -1 with *err set (the caller reports it as it would its own
 * failed execve). The parent closes every fd but 2 and `chan` (-1: no
 * runtime to hand stops to; the runtime's sync socket and exec fifo
 * among them, whose EOF at the program's execve the runtime waits for)
 * and executes agentrun-init `init CHAN PID` with every signal still
 * blocked; where that fails, it runs the same loop itself (non-dumpable
 * as the container process is). It never returns.
 */
int ar_init_exec(const char *exe, char *const argv[], char *const envp[],
		 bool tty, int chan, struct ar_error *err);

#endif
