/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dashboard as a client of the control plane (control/control_proto.h):
 * the live sandboxes of a state root, one request line, one reply line.
 */
#ifndef AGENTRUN_UI_CTL_H
#define AGENTRUN_UI_CTL_H

#include <stddef.h>

#include "error.h"

/* The names of ROOT/.control/ *.sock, sorted, NULL-ended (free with
 * ar_strv_free); *n their number. */
char **ui_ctl_names(const char *root, size_t *n);
/* Connect to NAME's socket: the fd, or -1 with err. */
int ui_ctl_connect(const char *root, const char *name, struct ar_error *err);
/* Send `req` (a line with its newline), read the reply line into *out
 * (malloc'd, without its newline). */
int ui_ctl_call(int fd, const char *req, char **out, struct ar_error *err);

#endif
