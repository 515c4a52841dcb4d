/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A container process started in the foreground dies with its runtime. */
#ifndef AGENTRUN_PARENT_DEATH_H
#define AGENTRUN_PARENT_DEATH_H

#include "error.h"

/* Called last before execve by a process whose parent is the runtime and
 * which shares `sync_fd` (a socket the runtime holds open until our
 * execve) with it: arm PR_SET_PDEATHSIG = SIGKILL again (a change of
 * credentials clears it, and setup changes them), then check that the
 * runtime is still there (it may have died before the prctl); if it is
 * not, exit at once. */
int ar_die_with_runtime(int sync_fd, struct ar_error *err);

#endif
