/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dashboard's token, sessions and header checks (ui_auth.h). */
#define _GNU_SOURCE
#include "ui_auth.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

static int random_hex(char out[UI_SECRET_LEN + 1])
{
	unsigned char b[UI_SECRET_LEN / 2];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

int ui_auth_init(struct ui_auth *a, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	pthread_mutex_init(&a->lock, NULL);
	a->port = port;
	return random_hex(a->token);
}

bool ui_auth_equal(const char *a, const char *b)
{
	size_t la, lb;
	unsigned char d = 0;

	if (!a || !b)
		return false;
	la = strlen(a);
	lb = strlen(b);
	if (!la || la != lb)
		return false;
	for (size_t i = 0; i < la; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

static bool host_is(const char *s, const char *name, uint16_t port)
{
	char want[64];

	snprintf(want, sizeof(want), "%s:%u", name, (unsigned)port);
	return strcmp(s, want) == 0;
}

bool ui_auth_host_ok(const struct ui_auth *a, const char *host)
{
	return host && (host_is(host, "127.0.0.1", a->port) ||
			host_is(host, "localhost", a->port));
}

bool ui_auth_origin_ok(const struct ui_auth *a, const char *origin)
{
	return origin && (host_is(origin, "http://127.0.0.1", a->port) ||
			  host_is(origin, "http://localhost", a->port));
}

bool ui_auth_exchange(struct ui_auth *a, const char *token,
		      struct ui_session *s)
{
	struct ui_session *n;
	bool ok = false;

	pthread_mutex_lock(&a->lock);
	if (a->token[0] && ui_auth_equal(token, a->token)) {
		memset(a->token, 0, sizeof(a->token)); /* spent */
		n = &a->sessions[a->next++ % UI_SESSIONS_MAX];
		if (random_hex(n->id) == 0 && random_hex(n->csrf) == 0) {
			*s = *n;
			ok = true;
		} else {
			memset(n, 0, sizeof(*n));
		}
	}
	pthread_mutex_unlock(&a->lock);
	return ok;
}

bool ui_auth_session(struct ui_auth *a, const char *id, struct ui_session *s)
{
	bool ok = false;

	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < UI_SESSIONS_MAX && !ok; i++)
		if (a->sessions[i].id[0] &&
		    ui_auth_equal(id, a->sessions[i].id)) {
			*s = a->sessions[i];
			ok = true;
		}
	pthread_mutex_unlock(&a->lock);
	return ok;
}
