/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The container process, from the clone to execve (container_init.c). */
#ifndef AGENTRUN_CONTAINER_INIT_H
#define AGENTRUN_CONTAINER_INIT_H

#include "launch.h"

/* Runs in the clone made by the runtime, with l as it was at the clone;
 * never returns (execve, or _exit after reporting the error over
 * l->sync_fd). */
__attribute__((noreturn)) void ar_container_init(struct ar_launch *l);

#endif
