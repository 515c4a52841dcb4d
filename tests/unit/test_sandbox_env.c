/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/sandbox_env.c: the environment filter. */
#define _GNU_SOURCE
#include <string.h>

#include "../../runtime/sandbox/sandbox_env.h"
#include "unit.h"
#include "utils.h"

static struct ar_sandbox_host host = {
	.uid = 1000,
	.gid = 1000,
	.user = "alice",
	.group = "alice",
	.home = "/home/alice",
	.shell = "/bin/bash",
	.cwd = "/home/alice/p",
};

static char *host_env[] = {
	"PATH=/usr/bin:/bin",
	"HOME=/root/wrong",
	"TERM=xterm-256color",
	"LANG=C.UTF-8",
	"LC_ALL=C",
	"FOO_TOKEN=t0k",
	"GITHUB_TOKEN=gh",
	"AWS_SECRET_ACCESS_KEY=aws",
	"AWS_REGION=eu",
	"SSH_AUTH_SOCK=/s",
	"ANTHROPIC_API_KEY=sk",
	"ANTHROPIC_BASE_URL=http://x",
	"DBUS_SESSION_BUS_ADDRESS=unix:x",
	"MY_PASSWORD=p",
	"RANDOM_THING=1",
	"EDITOR=vim",
	"LD_PRELOAD=/evil.so",
	NULL,
};

static const char *get(const struct oci_strv *e, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, n) == 0 && e->v[i][n] == '=')
			return e->v[i] + n + 1;
	return NULL;
}

static int build(struct ar_arena *a, const char *const *req, size_t n,
		 struct oci_strv *out)
{
	struct ar_error err = AR_ERROR_INIT;
	int r = ar_sandbox_env_build(a, host_env, req, n, &host, out, &err);

	if (r < 0)
		printf("# %s\n", err.msg);
	return r;
}

UNIT_TEST(default_allowlist_and_denylist)
{
	struct ar_arena a = { 0 };
	struct oci_strv e;

	CHECK(build(&a, NULL, 0, &e) == 0);
	CHECK_STR_EQ(get(&e, "PATH"), "/usr/bin:/bin");
	CHECK_STR_EQ(get(&e, "TERM"), "xterm-256color");
	CHECK_STR_EQ(get(&e, "LC_ALL"), "C");
	CHECK_STR_EQ(get(&e, "EDITOR"), "vim");
	CHECK(get(&e, "FOO_TOKEN") == NULL);
	CHECK(get(&e, "GITHUB_TOKEN") == NULL);
	CHECK(get(&e, "AWS_SECRET_ACCESS_KEY") == NULL);
	CHECK(get(&e, "AWS_REGION") == NULL);
	CHECK(get(&e, "SSH_AUTH_SOCK") == NULL);
	CHECK(get(&e, "ANTHROPIC_API_KEY") == NULL);
	CHECK(get(&e, "DBUS_SESSION_BUS_ADDRESS") == NULL);
	CHECK(get(&e, "MY_PASSWORD") == NULL);
	CHECK(get(&e, "RANDOM_THING") == NULL);
	CHECK(get(&e, "LD_PRELOAD") == NULL);
	CHECK(e.v[e.n] == NULL);
	oci_arena_free(&a);
}

UNIT_TEST(forced_identity)
{
	struct ar_arena a = { 0 };
	struct oci_strv e;
	const char *req[] = { "HOME=/tmp", "USER=root" };

	CHECK(build(&a, req, 2, &e) == 0);
	CHECK_STR_EQ(get(&e, "HOME"), "/home/alice");
	CHECK_STR_EQ(get(&e, "USER"), "alice");
	CHECK_STR_EQ(get(&e, "LOGNAME"), "alice");
	CHECK_STR_EQ(get(&e, "SHELL"), "/bin/bash");
	CHECK_STR_EQ(get(&e, "AGENTRUN_SANDBOX"), "1");
	oci_arena_free(&a);
}

UNIT_TEST(explicit_name_passes_a_secret)
{
	struct ar_arena a = { 0 };
	struct oci_strv e;
	const char *req[] = { "FOO_TOKEN", "ANTHROPIC_API_KEY", "NOT_SET" };

	CHECK(build(&a, req, 3, &e) == 0);
	CHECK_STR_EQ(get(&e, "FOO_TOKEN"), "t0k");
	CHECK_STR_EQ(get(&e, "ANTHROPIC_API_KEY"), "sk");
	CHECK(get(&e, "GITHUB_TOKEN") == NULL);
	CHECK(get(&e, "NOT_SET") == NULL);
	oci_arena_free(&a);
}

UNIT_TEST(pattern_does_not_pass_secrets)
{
	struct ar_arena a = { 0 };
	struct oci_strv e;
	const char *req[] = { "ANTHROPIC_*", "RANDOM_*" };

	CHECK(build(&a, req, 2, &e) == 0);
	CHECK_STR_EQ(get(&e, "ANTHROPIC_BASE_URL"), "http://x");
	CHECK(get(&e, "ANTHROPIC_API_KEY") == NULL);
	CHECK_STR_EQ(get(&e, "RANDOM_THING"), "1");
	oci_arena_free(&a);
}

UNIT_TEST(set_value_overrides_host)
{
	struct ar_arena a = { 0 };
	struct oci_strv e;
	const char *req[] = { "TERM=dumb", "NEW=a=b" };

	CHECK(build(&a, req, 2, &e) == 0);
	CHECK_STR_EQ(get(&e, "TERM"), "dumb");
	CHECK_STR_EQ(get(&e, "NEW"), "a=b");
	for (size_t i = 0, n = 0; i < e.n; i++) {
		n += strncmp(e.v[i], "TERM=", 5) == 0;
		CHECK(n <= 1);
	}
	oci_arena_free(&a);
}

UNIT_TEST(bad_request_is_an_error)
{
	struct ar_arena a = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct oci_strv e;
	const char *req[] = { "=x" };

	CHECK(ar_sandbox_env_build(&a, host_env, req, 1, &host, &e, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "--env");
	oci_arena_free(&a);
}

UNIT_TEST(secret_classification)
{
	CHECK(ar_sandbox_env_is_secret("NPM_TOKEN"));
	CHECK(ar_sandbox_env_is_secret("OPENAI_API_KEY"));
	CHECK(ar_sandbox_env_is_secret("DB_PASSWORD"));
	CHECK(ar_sandbox_env_is_secret("GOOGLE_APPLICATION_CREDENTIALS"));
	CHECK(!ar_sandbox_env_is_secret("LANG"));
	CHECK(ar_sandbox_env_default_allowed("LC_CTYPE"));
	CHECK(!ar_sandbox_env_default_allowed("KUBECONFIG"));
}

UNIT_MAIN()
