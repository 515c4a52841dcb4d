/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The loop of the sandbox's pid 1 (runtime/lib/init.h): reap, forward,
 * hand job-control stops to the runtime. No libc, no runtime code
 * (init_sys.h): it is compiled into the small static program
 * `agentrun-init` (runtime/init/main.c), which is what pid 1 executes,
 * and into the runtime for the fallback where that execve fails.
 */
#ifndef AGENTRUN_INIT_LOOP_H
#define AGENTRUN_INIT_LOOP_H

#define AR_INIT_STOPPED 'Z' /* init -> runtime: the program stopped */
#define AR_INIT_CONT 'C' /* runtime -> init: continue it */

/* Block every signal; forward each one but SIGCHLD to prog, reap every
 * child, report prog's stops on chan (-1: none) and continue its process
 * group on AR_INIT_CONT; exit with prog's status (128+N for signal N).
 * Never returns. */
__attribute__((noreturn)) void ar_init_loop(int prog, int chan);

#endif
