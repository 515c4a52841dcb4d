/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The terminal of `agentrun watch` (watch_term.h). */
#define _GNU_SOURCE
#include "watch_term.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "audit/audit.h"
#include "utils.h"
#include "watch_model.h"

#define ENTER "\033[?1049h\033[?25l\033[H\033[2J"
#define LEAVE "\033[0m\033[?25h\033[?1049l"

/* For exit(3): the terminal as it was. */
static struct watch_term *open_term;

static void restore(void)
{
	if (open_term)
		watch_term_close(open_term);
}

int watch_term_open(struct watch_term *t, int in, int out, struct ar_error *err)
{
	struct termios raw;
	static bool registered;

	memset(t, 0, sizeof(*t));
	t->in = in;
	t->out = out;
	if (!isatty(in) || !isatty(out))
		return ar_error_set_plain(
			err, ENOTTY,
			"agentrun watch: needs a terminal (stdin and stdout); agentrun sandbox requests lists the pending requests without one");
	if (tcgetattr(in, &t->saved) < 0)
		return ar_error_set(err, errno, "agentrun watch: tcgetattr");
	raw = t->saved;
	raw.c_iflag &= ~(tcflag_t)(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
	raw.c_lflag &= ~(tcflag_t)(ECHO | ICANON | IEXTEN | ISIG);
	raw.c_cflag |= CS8;
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(in, TCSAFLUSH, &raw) < 0)
		return ar_error_set(err, errno, "agentrun watch: tcsetattr");
	t->open = true;
	open_term = t;
	if (!registered) {
		atexit(restore);
		registered = true;
	}
	(void)!ar_write_all(out, ENTER, sizeof(ENTER) - 1);
	watch_term_resize(t);
	return 0;
}

static void forget(struct watch_term *t)
{
	for (int i = 0; t->prev && i < t->prev_rows; i++)
		free(t->prev[i]);
	free(t->prev);
	t->prev = NULL;
	t->prev_rows = 0;
}

void watch_term_close(struct watch_term *t)
{
	if (!t->open)
		return;
	(void)!ar_write_all(t->out, LEAVE, sizeof(LEAVE) - 1);
	tcsetattr(t->in, TCSAFLUSH, &t->saved);
	t->open = false;
	if (open_term == t)
		open_term = NULL;
	forget(t);
}

void watch_term_resize(struct watch_term *t)
{
	struct winsize ws = { 0 };

	if (ioctl(t->out, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
	} else {
		t->rows = 24;
		t->cols = 80;
	}
	/* the whole frame next, on a cleared screen */
	forget(t);
}

void watch_term_frame(char *const *prev, char *const *lines, int rows,
		      char **out, size_t *len)
{
	struct ar_jbuf b = { 0 };

	if (!prev)
		ar_jbuf_lit(&b, "\033[H\033[2J");
	for (int r = 0; r < rows; r++) {
		const char *s = lines[r];
		bool rev = s[0] == '\x01';

		if (prev && strcmp(prev[r], lines[r]) == 0)
			continue;
		ar_jbuf_addf(&b, "\033[%d;1H", r + 1);
		if (rev)
			ar_jbuf_lit(&b, "\033[7m");
		ar_jbuf_add(&b, s + rev, strlen(s + rev));
		if (rev)
			ar_jbuf_lit(&b, "\033[K\033[0m");
		else
			ar_jbuf_lit(&b, "\033[K");
	}
	*len = b.len;
	*out = b.p ? b.p : ar_xstrdup("");
}

void watch_term_draw(struct watch_term *t, char **lines)
{
	char *frame;
	size_t len;

	watch_term_frame(t->prev_rows == t->rows ? t->prev : NULL, lines,
			 t->rows, &frame, &len);
	if (len)
		(void)!ar_write_all(t->out, frame, len);
	free(frame);
	forget(t);
	t->prev = lines;
	t->prev_rows = t->rows;
}

size_t watch_term_keys(const char *buf, size_t n, int *keys, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < max; i++) {
		/* ESC [ A, ESC O A (application mode): up; B: down */
		if (buf[i] == '\033' && i + 2 < n &&
		    (buf[i + 1] == '[' || buf[i + 1] == 'O') &&
		    (buf[i + 2] == 'A' || buf[i + 2] == 'B')) {
			keys[k++] = buf[i + 2] == 'A' ? WATCH_KEY_UP :
							WATCH_KEY_DOWN;
			i += 2;
			continue;
		}
		if (buf[i] == '\033') {
			/* another sequence: skipped to its final byte */
			size_t j = i + 1;

			if (j < n && (buf[j] == '[' || buf[j] == 'O')) {
				j++;
				while (j < n && (unsigned char)buf[j] < 0x40)
					j++;
				i = j;
			}
			continue;
		}
		keys[k++] = (unsigned char)buf[i];
	}
	return k;
}
