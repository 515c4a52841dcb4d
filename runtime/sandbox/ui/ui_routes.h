/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the dashboard's API answers (docs/sandbox.md, "The web
 * dashboard"), once ui_server.c has checked who asks:
 *   GET  /api/sandboxes           the running sandboxes and their
 *                                 pending requests
 *   POST /api/answer              {"sandbox","id","answer"}
 *   GET  /api/policy?name=N       what the sandbox was made of, and
 *                                 its network policy in force
 *   GET  /api/overlays            the --overlay sandboxes (text)
 *   GET  /api/changes?name=N      their changes (text)
 *   GET  /api/diff?name=N[&path=P] a diff (text)
 *   POST /api/commit, /api/discard {"name"}
 */
#ifndef AGENTRUN_UI_ROUTES_H
#define AGENTRUN_UI_ROUTES_H

#include <stddef.h>
#include <stdint.h>

struct ui_reply {
	unsigned status;
	const char *type;
	char *body; /* malloc'd */
	size_t len;
};

void ui_reply_error(struct ui_reply *r, unsigned status, const char *msg);

void ui_api_sandboxes(const char *root, struct ui_reply *r);
void ui_api_answer(const char *root, uint16_t ui_port, const char *body,
		   size_t len, struct ui_reply *r);
/* GET /api/policy?name=N: what a sandbox started with --name was made
 * of (workspace, network mode, protections, Landlock rules, mounts and
 * their modes), from its session's config, never its environment; and
 * "live": the network policy in force from its control socket
 * ({"op":"policy"}: allowlist, ask, --secret names and hosts, live
 * grants, session/always answers; null when it does not run). */
void ui_api_policy(const char *root, const char *name, struct ui_reply *r);
void ui_api_overlays(struct ui_reply *r);
void ui_api_changes(const char *name, struct ui_reply *r);
void ui_api_diff(const char *name, const char *path, struct ui_reply *r);
void ui_api_commit(const char *body, size_t len, struct ui_reply *r);
void ui_api_discard(const char *body, size_t len, struct ui_reply *r);

#endif
