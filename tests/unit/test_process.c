/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process.h"
#include "unit.h"
#include "utils.h"

UNIT_TEST(env_get)
{
	char *env[] = { "PATH=/bin", "PATHX=no", "A=", "B=c=d", NULL };

	CHECK_STR_EQ(ar_env_get(env, "PATH"), "/bin");
	CHECK_STR_EQ(ar_env_get(env, "A"), "");
	CHECK_STR_EQ(ar_env_get(env, "B"), "c=d");
	CHECK(ar_env_get(env, "PAT") == NULL);
	CHECK(ar_env_get(NULL, "PATH") == NULL);
}

UNIT_TEST(build_env_listen_fds)
{
	char *in[] = { "A=1", "LISTEN_FDS=9", "LISTEN_PID=4", NULL };
	struct oci_process p = { .env = { in, 3 } };
	char **env;

	env = ar_process_build_env(&p, 0, 1, NULL);
	CHECK_STR_EQ(env[0], "A=1");
	CHECK_STR_EQ(env[1], "LISTEN_FDS=9");
	CHECK(env[3] == NULL);
	free(env);

	env = ar_process_build_env(&p, 2, 1, NULL);
	CHECK_STR_EQ(env[0], "A=1");
	CHECK_STR_EQ(env[1], "LISTEN_FDS=2");
	CHECK_STR_EQ(env[2], "LISTEN_PID=1");
	CHECK(env[3] == NULL);
	free(env[1]);
	free(env[2]);
	free(env);
}

UNIT_TEST(build_env_home)
{
	char *in[] = { "A=1", NULL };
	struct oci_process p = { .env = { in, 1 } };
	char **env = ar_process_build_env(&p, 0, 1, "/home/x");

	CHECK_STR_EQ(env[0], "A=1");
	CHECK_STR_EQ(env[1], "HOME=/home/x");
	CHECK(env[2] == NULL);
	free(env[1]);
	free(env);
}

UNIT_TEST(passwd_home)
{
	static const char pw[] = "root:x:0:0:root:/root:/bin/sh\n"
				 "bad line\n"
				 "empty:x:7:7::: \n"
				 "u:x:1000:1000:U:/home/u:/bin/sh\n"
				 "last:x:12:12::/l:/bin/sh";
	char *h;

	h = ar_process_passwd_home(pw, 0);
	CHECK_STR_EQ(h, "/root");
	free(h);
	h = ar_process_passwd_home(pw, 1000);
	CHECK_STR_EQ(h, "/home/u");
	free(h);
	h = ar_process_passwd_home(pw, 12);
	CHECK_STR_EQ(h, "/l");
	free(h);
	h = ar_process_passwd_home(pw, 7); /* empty home field */
	CHECK_STR_EQ(h, "/");
	free(h);
	h = ar_process_passwd_home(pw, 4242); /* no line: "/" as runc */
	CHECK_STR_EQ(h, "/");
	free(h);
	h = ar_process_passwd_home("", 0);
	CHECK_STR_EQ(h, "/");
	free(h);
}

static char tmpdir[] = "/tmp/ar-unit-proc.XXXXXX";

static void make_file(const char *name, mode_t mode)
{
	_cleanup_free_ char *p = ar_xasprintf("%s/%s", tmpdir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd >= 0)
		close(fd);
	chmod(p, mode);
}

UNIT_TEST(find_executable)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *path = NULL, *found = NULL, *abs = NULL;
	char *env[2] = { NULL, NULL };
	char *r;

	if (!mkdtemp(tmpdir))
		UNIT_SKIP("mkdtemp");
	make_file("tool", 0755);
	make_file("plain", 0644);
	path = ar_xasprintf("PATH=/nonexistent:%s", tmpdir);
	env[0] = path;

	found = ar_process_find_executable("tool", env, &err);
	CHECK(found != NULL);
	abs = ar_xasprintf("%s/tool", tmpdir);
	if (found)
		CHECK_STR_EQ(found, abs);

	r = ar_process_find_executable("nosuch", env, &err);
	CHECK(r == NULL);
	CHECK_STR_CONTAINS(err.msg, "`nosuch` not found in $PATH");
	ar_error_clear(&err);

	/* not executable: EACCES, as execvp */
	r = ar_process_find_executable("plain", env, &err);
	CHECK(r == NULL);
	CHECK_STR_CONTAINS(err.msg, "plain");
	ar_error_clear(&err);

	/* a path with a slash is not looked up */
	r = ar_process_find_executable(abs, env, &err);
	CHECK(r != NULL);
	free(r);
	r = ar_process_find_executable("/no/such", env, &err);
	CHECK(r == NULL);
	CHECK_STR_CONTAINS(err.msg, "/no/such");

	{
		_cleanup_free_ char *a = ar_xasprintf("%s/tool", tmpdir);
		_cleanup_free_ char *b = ar_xasprintf("%s/plain", tmpdir);

		unlink(a);
		unlink(b);
		rmdir(tmpdir);
	}
}

UNIT_MAIN()
