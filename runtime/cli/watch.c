/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agentrun watch [NAME]: the terminal dashboard of the running sandboxes
 * (docs/sandbox.md, "The terminal dashboard"). The loop only: the model
 * is runtime/sandbox/watch/watch_model.c, the frame watch_view.c, the
 * terminal watch_term.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "state.h"
#include "utils.h"
#include "watch/watch_model.h"
#include "watch/watch_term.h"
#include "watch/watch_view.h"

#define WATCH_SCAN_MS 500 /* the sandboxes and requests, read again */

static const char watch_usage[] =
	"Usage: agentrun watch [NAME]\n"
	"\n"
	"A terminal dashboard of the running sandboxes (of NAME, or of all of\n"
	"this user's): their live events and the pending --net ask requests,\n"
	"answered with one key. Run it in a second terminal (or a tmux pane):\n"
	"the agent's terminal is never asked.\n"
	"\n"
	"Keys:\n"
	"  up/down, j/k   select a pending request\n"
	"  o s r          answer it: once, session, refuse\n"
	"  a              always (session, and written to the profile): asks y/n\n"
	"  n e f p        show or hide events: net, exec, file, protected\n"
	"  q, Ctrl-C      quit (the terminal is restored)\n"
	"\n"
	"Options:\n"
	"  -h, --help     this help\n";

/* SIGWINCH, SIGINT, SIGTERM, SIGHUP: a byte on the pipe */
static int sig_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	char c = (char)sig;
	int e = errno;

	(void)!write(sig_pipe[1], &c, 1);
	errno = e;
}

static void draw(struct watch_term *t, const struct watch_model *m)
{
	char **lines = ar_xcalloc((size_t)t->rows, sizeof(char *));

	watch_view(m, t->rows, t->cols, lines);
	watch_term_draw(t, lines);
}

static int watch_loop(struct watch_term *t, struct watch_model *m)
{
	long long next_scan = 0;

	for (;;) {
		struct pollfd p[2 + WATCH_MAX_SANDBOXES];
		size_t map[WATCH_MAX_SANDBOXES], np = 2;
		long long now = ar_now_ms();
		char buf[256];
		int keys[256];
		ssize_t n;
		int wait;

		if (now >= next_scan || m->dirty_reqs) {
			watch_model_scan(m);
			next_scan = now + WATCH_SCAN_MS;
		}
		draw(t, m);
		p[0] = (struct pollfd){ .fd = t->in, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
		for (size_t i = 0; i < m->n_sb; i++) {
			if (m->sb[i].fd < 0)
				continue;
			map[np - 2] = i;
			p[np++] = (struct pollfd){ .fd = m->sb[i].fd,
						   .events = POLLIN };
		}
		wait = (int)(next_scan - ar_now_ms());
		if (poll(p, np, wait > 0 ? wait : 0) < 0 && errno != EINTR)
			return -1;
		if (p[1].revents & POLLIN) {
			n = read(sig_pipe[0], buf, sizeof(buf));
			for (ssize_t i = 0; i < n; i++) {
				if (buf[i] == SIGWINCH)
					watch_term_resize(t);
				else
					return 0;
			}
		}
		if (p[0].revents & (POLLHUP | POLLERR))
			return 0;
		if (p[0].revents & POLLIN) {
			n = read(t->in, buf, sizeof(buf));
			if (n == 0)
				return 0;
			for (size_t i = 0,
				    k = n > 0 ? watch_term_keys(buf, (size_t)n,
								keys, 256) :
						0;
			     i < k; i++)
				if (watch_model_key(m, keys[i]))
					return 0;
		}
		for (size_t j = 2; j < np; j++)
			if (p[j].revents & (POLLIN | POLLHUP | POLLERR))
				if (!watch_model_read(m, map[j - 2]))
					next_scan = 0; /* it ended */
	}
}

int cmd_watch(struct ar_global_opts *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
	};
	struct ar_error err = AR_ERROR_INIT;
	struct watch_model m;
	struct watch_term t;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *name = NULL;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(watch_usage, stdout);
			return 0;
		}
		fputs(watch_usage, stderr);
		return 2;
	}
	if (argc - optind > 1) {
		fprintf(stderr, "agentrun watch: expected at most one NAME\n%s",
			watch_usage);
		return 2;
	}
	if (optind < argc) {
		name = argv[optind];
		if (ar_state_validate_id(name, &err) < 0) {
			return cli_fail(&err);
		}
	}
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		perror("agentrun watch: pipe");
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (watch_term_open(&t, STDIN_FILENO, STDOUT_FILENO, &err) < 0) {
		return cli_fail(&err);
	}
	watch_model_init(&m, cli_state_root(g), name);
	rc = watch_loop(&t, &m);
	watch_term_close(&t);
	watch_model_free(&m);
	return rc < 0 ? 1 : 0;
}
