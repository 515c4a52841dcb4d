/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox's environment: host variables pass only when on the
 * allowlist and not on the secret denylist; --env NAME (or a profile's
 * env entry) is explicit consent and passes a variable even when it looks
 * like a secret; --env NAME=VALUE sets one. The lists are documented in
 * docs/sandbox.md; keep the two in sync.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <string.h>

#include "sandbox_env.h"
#include "utils.h"

/* Harmless, and needed for a usable terminal session. */
static const char *const env_allow[] = {
	"PATH",	       "HOME",	       "USER",
	"LOGNAME",     "SHELL",	       "TERM",
	"COLORTERM",   "TERM_PROGRAM", "TERM_PROGRAM_VERSION",
	"LANG",	       "LANGUAGE",     "LC_*",
	"TZ",	       "EDITOR",       "VISUAL",
	"PAGER",       "LESS",	       "NO_COLOR",
	"FORCE_COLOR", "CLICOLOR",     "COLUMNS",
	"LINES",       NULL,
};

/* Secrets and handles to host services: dropped even when a pattern of
 * the allowlist (or a profile pattern) matches; only an exact --env NAME
 * passes them. */
static const char *const env_deny[] = {
	"*_TOKEN",
	"*_TOKEN_*",
	"*_KEY",
	"*_KEY_*",
	"*_SECRET*",
	"*SECRET_*",
	"*PASSWORD*",
	"*PASSWD*",
	"*CREDENTIAL*",
	"*_AUTH",
	"*_AUTH_*",
	"*COOKIE*",
	"AWS_*",
	"GITHUB_*",
	"GH_*",
	"GITLAB_*",
	"AZURE_*",
	"GOOGLE_*",
	"GCLOUD_*",
	"CLOUDSDK_*",
	"SSH_*",
	"GPG_*",
	"GNUPGHOME",
	"DBUS_*",
	"XDG_RUNTIME_DIR",
	"DISPLAY",
	"WAYLAND_DISPLAY",
	"XAUTHORITY",
	"KRB5*",
	"DOCKER_*",
	"KUBECONFIG",
	"VAULT_*",
	"PGPASS*",
	"MYSQL_PWD",
	"LD_PRELOAD",
	"LD_LIBRARY_PATH",
	NULL,
};

static bool match_any(const char *const *pats, const char *name)
{
	for (; *pats; pats++)
		if (fnmatch(*pats, name, 0) == 0)
			return true;
	return false;
}

bool ar_sandbox_env_is_secret(const char *name)
{
	return match_any(env_deny, name);
}

bool ar_sandbox_env_default_allowed(const char *name)
{
	return match_any(env_allow, name) && !ar_sandbox_env_is_secret(name);
}

/* Values the sandbox decides, whatever the host or --env say. */
static const char *forced_value(const struct ar_sandbox_host *h,
				const char *name)
{
	if (strcmp(name, "HOME") == 0)
		return h->home;
	if (strcmp(name, "USER") == 0 || strcmp(name, "LOGNAME") == 0)
		return h->user;
	if (strcmp(name, "SHELL") == 0)
		return h->shell;
	return NULL;
}

static size_t name_len(const char *kv)
{
	return strcspn(kv, "=");
}

/* Does request `r` (NAME, NAME=VALUE, PATTERN) pass host variable kv? */
static bool request_passes(const char *r, const char *kv, size_t klen)
{
	size_t rlen = name_len(r);
	char name[256];

	if (r[rlen] == '=')
		return false; /* a value, not a pass-through */
	if (!memchr(r, '*', rlen))
		return rlen == klen && strncmp(r, kv, klen) == 0;
	if (klen >= sizeof(name))
		return false;
	memcpy(name, kv, klen);
	name[klen] = '\0';
	/* A pattern is consent for what it names, but not for secrets:
	 * `--env 'ANTHROPIC_*'` does not leak ANTHROPIC_API_KEY. */
	return fnmatch(r, name, 0) == 0 && !ar_sandbox_env_is_secret(name);
}

struct envv {
	char **v;
	size_t n, cap;
};

static void envv_set(struct envv *e, struct ar_arena *a, const char *name,
		     size_t nlen, const char *kv)
{
	for (size_t i = 0; i < e->n; i++) {
		if (name_len(e->v[i]) == nlen &&
		    strncmp(e->v[i], name, nlen) == 0) {
			e->v[i] = oci_arena_strdup(a, kv);
			return;
		}
	}
	if (e->n + 2 > e->cap) {
		e->cap = e->cap ? e->cap * 2 : 32;
		e->v = ar_xrealloc(e->v, e->cap * sizeof(char *));
	}
	e->v[e->n++] = oci_arena_strdup(a, kv);
}

int ar_sandbox_env_build(struct ar_arena *a, char *const *host_env,
			 const char *const *requests, size_t n_requests,
			 const struct ar_sandbox_host *h, struct oci_strv *out,
			 struct ar_error *err)
{
	static const char *const forced[] = { "HOME", "USER", "LOGNAME",
					      "SHELL", NULL };
	_cleanup_free_ char **tmp = NULL;
	struct envv e = { 0 };
	bool have_path = false;

	for (size_t i = 0; i < n_requests; i++) {
		const char *r = requests[i];
		size_t n = name_len(r);

		if (n == 0)
			return ar_error_set_plain(
				err, EINVAL,
				"--env `%s`: expected NAME, NAME=VALUE or a pattern",
				r);
	}
	for (char *const *kv = host_env; kv && *kv; kv++) {
		size_t klen = name_len(*kv);
		char name[256];
		bool pass = false;

		if ((*kv)[klen] != '=' || klen == 0 || klen >= sizeof(name))
			continue;
		memcpy(name, *kv, klen);
		name[klen] = '\0';
		pass = ar_sandbox_env_default_allowed(name);
		for (size_t i = 0; i < n_requests && !pass; i++)
			pass = request_passes(requests[i], *kv, klen);
		if (pass)
			envv_set(&e, a, *kv, klen, *kv);
	}
	for (size_t i = 0; i < n_requests; i++) {
		const char *r = requests[i];
		size_t n = name_len(r);

		if (r[n] == '=')
			envv_set(&e, a, r, n, r);
	}
	for (const char *const *f = forced; *f; f++) {
		const char *v = forced_value(h, *f);

		if (v)
			envv_set(&e, a, *f, strlen(*f),
				 oci_arena_printf(a, "%s=%s", *f, v));
	}
	for (size_t i = 0; i < e.n; i++)
		have_path |= strncmp(e.v[i], "PATH=", 5) == 0;
	if (!have_path)
		envv_set(
			&e, a, "PATH", 4,
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	envv_set(&e, a, "AGENTRUN_SANDBOX", 16, "AGENTRUN_SANDBOX=1");

	tmp = e.v;
	out->v = oci_arena_calloc(a, e.n + 1, sizeof(char *));
	memcpy(out->v, e.v, e.n * sizeof(char *));
	out->n = e.n;
	return 0;
}
