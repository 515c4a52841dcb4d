/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "unit.h"
#include "utils.h"

static char tmpdir[] = "/tmp/agentrun-hooks-XXXXXX";

static struct oci_hook sh_hook(const char *script, char **argv_buf,
			       char **env_buf)
{
	struct oci_hook h = { 0 };

	argv_buf[0] = (char *)"hook-argv0";
	argv_buf[1] = (char *)"-c";
	argv_buf[2] = (char *)script;
	argv_buf[3] = NULL;
	env_buf[0] = (char *)"HOOK_VAR=from-config";
	env_buf[1] = NULL;
	h.path = (char *)"/bin/sh";
	h.args.v = argv_buf;
	h.args.n = 3;
	h.env.v = env_buf;
	h.env.n = 1;
	return h;
}

UNIT_TEST(stdin_args_env)
{
	struct ar_error err = AR_ERROR_INIT;
	char *argv[4], *env[2];
	_cleanup_free_ char *script = NULL, *out = NULL;
	const char *state =
		"{\"ociVersion\":\"1.2.0\",\"id\":\"x\",\"bundle\":\"/a/b\"}";
	struct oci_hook h;

	CHECK(mkdtemp(tmpdir) != NULL);
	script = ar_xasprintf("cat > %s/stdin; echo \"$0 $HOOK_VAR\" > %s/info",
			      tmpdir, tmpdir);
	h = sh_hook(script, argv, env);
	CHECK(ar_hook_run_one(&h, "hooks.prestart[0]", state, strlen(state),
			      &err) == 0);
	{
		_cleanup_free_ char *p = ar_xasprintf("%s/stdin", tmpdir);
		CHECK(ar_read_file_at(AT_FDCWD, p, 4096, &out, NULL, &err) ==
		      0);
		CHECK_STR_EQ(out, state);
	}
	{
		_cleanup_free_ char *p = ar_xasprintf("%s/info", tmpdir);
		_cleanup_free_ char *info = NULL;
		CHECK(ar_read_file_at(AT_FDCWD, p, 4096, &info, NULL, &err) ==
		      0);
		CHECK_STR_EQ(info, "hook-argv0 from-config\n");
	}
}

UNIT_TEST(big_state_hook_ignores_stdin)
{
	/* A state larger than a pipe buffer must not block a hook that
	 * never reads its stdin. */
	struct ar_error err = AR_ERROR_INIT;
	char *argv[4], *env[2];
	size_t n = 1 << 20;
	_cleanup_free_ char *big = ar_xmalloc(n + 1);
	struct oci_hook h = sh_hook("exit 0", argv, env);

	memset(big, 'x', n);
	big[n] = '\0';
	CHECK(ar_hook_run_one(&h, "hooks.poststart[0]", big, n, &err) == 0);
}

UNIT_TEST(failure_is_error)
{
	struct ar_error err = AR_ERROR_INIT;
	char *argv[4], *env[2];
	struct oci_hook h = sh_hook("exit 7", argv, env);

	CHECK(ar_hook_run_one(&h, "hooks.createRuntime[1]", "{}", 2, &err) < 0);
	CHECK_STR_CONTAINS(
		err.msg,
		"hooks.createRuntime[1] (`/bin/sh`) exited with status 7");
}

UNIT_TEST(missing_binary)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_hook h = { .path = (char *)"/nonexistent/hook" };

	CHECK(ar_hook_run_one(&h, "hooks.poststop[0]", "{}", 2, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "status 127");
	h.path = (char *)"relative/hook";
	CHECK(ar_hook_run_one(&h, "hooks.poststop[0]", "{}", 2, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "not absolute");
}

UNIT_TEST(timeout_kills)
{
	struct ar_error err = AR_ERROR_INIT;
	char *argv[4], *env[2];
	struct oci_hook h = sh_hook("exec sleep 30", argv, env);
	struct timespec a, b;
	double secs;

	h.timeout.set = true;
	h.timeout.v = 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK(ar_hook_run_one(&h, "hooks.startContainer[0]", "{}", 2, &err) <
	      0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) +
	       (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	CHECK_STR_CONTAINS(err.msg, "timed out after 1 seconds");
	CHECK(secs >= 0.9 && secs < 5);
	{
		_cleanup_free_ char *cmd = ar_xasprintf("rm -rf %s", tmpdir);
		CHECK(system(cmd) == 0);
	}
}

UNIT_MAIN()
