/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The web dashboard (docs/sandbox.md, "The web dashboard"): `agentrun
 * ui` serves a page on 127.0.0.1 only, for the sandboxes of one state
 * root: their pending --net ask requests (answered by button), the live
 * event stream (SSE), and the --overlay sandboxes' changes (diff,
 * commit, discard). It is a client of the control plane
 * (control/control_proto.h) and of the overlay library, nothing more.
 *
 * ui_server.c: the listening socket, the port file, the HTTP server
 * (libmicrohttpd, loaded with dlopen: ui_mhd.h); ui_auth.c: the
 * one-time token, the session cookie, the Host/Origin/CSRF checks;
 * ui_routes.c: what each URL answers (a client of the control sockets:
 * control/control.h); ui_port.c: the port file that a sandbox start checks its
 * host-loopback rules against.
 */
#ifndef AGENTRUN_UI_H
#define AGENTRUN_UI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "egress/egress_policy.h"
#include "error.h"

struct ar_ui_opts {
	const char *root; /* the state root whose sandboxes are shown */
	const char *listen; /* NULL: 127.0.0.1 on a random port */
	const char *assets; /* NULL: $AGENTRUN_UI_DIR or $(pkgdatadir)/ui */
	FILE *out; /* where the URL is printed */
};

/* Serve until SIGINT/SIGTERM. */
int ar_ui_serve(const struct ar_ui_opts *o, struct ar_error *err);

/* --listen ADDR:PORT: only 127.0.0.1 or localhost (port 0: random). */
int ar_ui_parse_listen(const char *s, uint16_t *port, struct ar_error *err);

/* ROOT/.ui/port as written ("PORT PID\n"): 0, or -1 when it is missing
 * or not that. */
int ar_ui_port_file(const char *root, uint16_t *port, pid_t *pid);
/* The port of the dashboard of ROOT that is running (its port file:
 * ROOT/.ui/port, its pid alive), 0 when none. */
uint16_t ar_ui_port(const char *root);
/* Refuse a host-loopback rule of `p` that points at the port of a
 * running dashboard of ROOT (or of root's /run/agentrun). */
int ar_ui_check_policy(const char *root, const struct ar_egress_policy *p,
		       struct ar_error *err);

#endif
