/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who may use the dashboard (docs/sandbox.md, "The web dashboard"):
 * the one-time token of the printed URL, exchanged once for a session
 * (an HttpOnly SameSite=Strict cookie, and a CSRF token the page reads
 * from /api/session); the Host header (DNS rebinding) and the Origin
 * (other pages) checked. Pure logic, no HTTP: ui_server.c asks.
 */
#ifndef AGENTRUN_UI_AUTH_H
#define AGENTRUN_UI_AUTH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define UI_SECRET_LEN 64 /* hex characters: 32 random bytes */
#define UI_SESSIONS_MAX 8
#define UI_COOKIE "agentrun_ui"

struct ui_session {
	char id[UI_SECRET_LEN + 1];
	char csrf[UI_SECRET_LEN + 1];
};

struct ui_auth {
	pthread_mutex_t lock;
	uint16_t port;
	char token[UI_SECRET_LEN + 1]; /* "" once spent */
	struct ui_session sessions[UI_SESSIONS_MAX];
	unsigned next; /* the slot the next session takes */
};

/* A fresh token; 0 or -1 (getrandom failed). */
int ui_auth_init(struct ui_auth *a, uint16_t port);
/* Host: exactly 127.0.0.1:PORT or localhost:PORT. */
bool ui_auth_host_ok(const struct ui_auth *a, const char *host);
/* Origin: exactly http://127.0.0.1:PORT or http://localhost:PORT. */
bool ui_auth_origin_ok(const struct ui_auth *a, const char *origin);
/* Spend the token: true (and the new session copied to *s) when `token`
 * is the unspent one. */
bool ui_auth_exchange(struct ui_auth *a, const char *token,
		      struct ui_session *s);
/* The session of cookie value `id` (copied to *s), or false. */
bool ui_auth_session(struct ui_auth *a, const char *id, struct ui_session *s);
/* Constant-time comparison of two secrets (false when either is NULL or
 * empty or their lengths differ). */
bool ui_auth_equal(const char *a, const char *b);

#endif
