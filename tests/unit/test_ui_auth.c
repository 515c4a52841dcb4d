/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the web dashboard's checks (runtime/sandbox/ui/ui_auth.c)
 * and its --listen and port file (ui_port.c). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runtime/sandbox/ui/ui.h"
#include "../../runtime/sandbox/ui/ui_auth.h"
#include "unit.h"
#include "utils.h"

UNIT_TEST(host_and_origin)
{
	struct ui_auth a;

	CHECK(ui_auth_init(&a, 8765) == 0);
	CHECK(ui_auth_host_ok(&a, "127.0.0.1:8765"));
	CHECK(ui_auth_host_ok(&a, "localhost:8765"));
	CHECK(!ui_auth_host_ok(&a, NULL));
	CHECK(!ui_auth_host_ok(&a, "127.0.0.1"));
	CHECK(!ui_auth_host_ok(&a, "127.0.0.1:876"));
	CHECK(!ui_auth_host_ok(&a, "127.0.0.1:87650"));
	CHECK(!ui_auth_host_ok(&a, "evil.example:8765"));
	CHECK(!ui_auth_host_ok(&a, "localhost.evil.example:8765"));
	CHECK(!ui_auth_host_ok(&a, "127.0.0.1:8765 "));
	CHECK(!ui_auth_host_ok(&a, "[::1]:8765"));
	CHECK(ui_auth_origin_ok(&a, "http://127.0.0.1:8765"));
	CHECK(ui_auth_origin_ok(&a, "http://localhost:8765"));
	CHECK(!ui_auth_origin_ok(&a, "null"));
	CHECK(!ui_auth_origin_ok(&a, NULL));
	CHECK(!ui_auth_origin_ok(&a, "https://127.0.0.1:8765"));
	CHECK(!ui_auth_origin_ok(&a, "http://127.0.0.1:8766"));
	CHECK(!ui_auth_origin_ok(&a, "http://127.0.0.1:8765/"));
	CHECK(!ui_auth_origin_ok(&a, "http://127.0.0.1:8765.evil.example"));
}

UNIT_TEST(token_once_then_session)
{
	struct ui_auth a;
	struct ui_session s, t;
	char token[UI_SECRET_LEN + 1], wrong[UI_SECRET_LEN + 1];

	CHECK(ui_auth_init(&a, 1) == 0);
	CHECK(strlen(a.token) == UI_SECRET_LEN);
	CHECK(strspn(a.token, "0123456789abcdef") == UI_SECRET_LEN);
	memcpy(token, a.token, sizeof(token));
	memcpy(wrong, token, sizeof(wrong));
	wrong[0] = wrong[0] == '0' ? '1' : '0';
	CHECK(!ui_auth_exchange(&a, wrong, &s));
	CHECK(!ui_auth_exchange(&a, "", &s));
	CHECK(!ui_auth_exchange(&a, NULL, &s));
	/* a wrong try does not spend it */
	CHECK(ui_auth_exchange(&a, token, &s));
	CHECK(strlen(s.id) == UI_SECRET_LEN && strlen(s.csrf) == UI_SECRET_LEN);
	CHECK(strcmp(s.id, token) != 0 && strcmp(s.id, s.csrf) != 0);
	/* once */
	CHECK(!ui_auth_exchange(&a, token, &t));
	CHECK(!ui_auth_exchange(&a, "", &t));
	/* the session */
	CHECK(ui_auth_session(&a, s.id, &t));
	CHECK(strcmp(t.csrf, s.csrf) == 0);
	CHECK(!ui_auth_session(&a, s.csrf, &t));
	CHECK(!ui_auth_session(&a, "", &t));
	CHECK(!ui_auth_session(&a, NULL, &t));
	s.id[5] ^= 1;
	CHECK(!ui_auth_session(&a, s.id, &t));
	CHECK(ui_auth_equal("ab", "ab"));
	CHECK(!ui_auth_equal("ab", "abc"));
	CHECK(!ui_auth_equal("", ""));
}

UNIT_TEST(listen_loopback_only)
{
	struct ar_error err = AR_ERROR_INIT;
	uint16_t port = 1;

	CHECK(ar_ui_parse_listen("127.0.0.1:8080", &port, &err) == 0 &&
	      port == 8080);
	CHECK(ar_ui_parse_listen("localhost:0", &port, &err) == 0 && port == 0);
	CHECK(ar_ui_parse_listen("0.0.0.0:8080", &port, &err) < 0);
	CHECK(strstr(err.msg, "127.0.0.1 only") != NULL);
	ar_error_clear(&err);
	CHECK(ar_ui_parse_listen("127.0.0.2:8080", &port, &err) < 0);
	ar_error_clear(&err);
	CHECK(ar_ui_parse_listen("[::]:8080", &port, &err) < 0);
	ar_error_clear(&err);
	CHECK(ar_ui_parse_listen("8080", &port, &err) < 0);
	ar_error_clear(&err);
	CHECK(ar_ui_parse_listen("127.0.0.1:65536", &port, &err) < 0);
	ar_error_clear(&err);
	CHECK(ar_ui_parse_listen("127.0.0.1:", &port, &err) < 0);
	ar_error_clear(&err);
	CHECK(ar_ui_parse_listen("localhost:-1", &port, &err) < 0);
	ar_error_clear(&err);
}

UNIT_TEST(port_file_and_rules)
{
	char dir[] = "/tmp/test_ui_auth.XXXXXX";
	_cleanup_free_ char *ui = NULL, *path = NULL, *text = NULL;
	struct ar_error err = AR_ERROR_INIT;
	struct ar_egress_policy pol = { 0 };
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(ar_ui_port(dir) == 0);
	ui = ar_xasprintf("%s/.ui", dir);
	path = ar_xasprintf("%s/port", ui);
	CHECK(mkdir(ui, 0700) == 0);
	/* a dashboard that is gone (no such pid) */
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, "4321 2147483000\n", 16) == 16);
	close(fd);
	CHECK(ar_ui_port(dir) == 0);
	text = ar_xasprintf("4321 %d\n", (int)getpid());
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	CHECK(fd >= 0 &&
	      write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	CHECK(ar_ui_port(dir) == 4321);
	/* the rules */
	CHECK(ar_egress_policy_add(&pol, "example.com,127.0.0.1:4322", &err) ==
	      0);
	CHECK(ar_ui_check_policy(dir, &pol, &err) == 0);
	ar_egress_policy_release(&pol);
	CHECK(ar_egress_policy_add(&pol, "example.com,127.0.0.1:4321", &err) ==
	      0);
	CHECK(ar_ui_check_policy(dir, &pol, &err) < 0);
	CHECK(strstr(err.msg, "web dashboard") != NULL);
	ar_error_clear(&err);
	ar_egress_policy_release(&pol);
	CHECK(ar_egress_policy_add(&pol, "localhost:4321", &err) == 0);
	CHECK(ar_ui_check_policy(dir, &pol, &err) < 0);
	ar_error_clear(&err);
	ar_egress_policy_release(&pol);
	CHECK(ar_egress_policy_add(&pol, "[::1]:4321", &err) == 0);
	CHECK(ar_ui_check_policy(dir, &pol, &err) < 0);
	ar_error_clear(&err);
	ar_egress_policy_release(&pol);
	unlink(path);
	rmdir(ui);
	rmdir(dir);
}

UNIT_MAIN()
