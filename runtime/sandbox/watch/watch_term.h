/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The terminal of `agentrun watch`: plain termios and ANSI. Opened: raw
 * input (no echo, no canonical mode, no signals from keys: Ctrl-C is a
 * key), the alternate screen, the cursor hidden. Each frame is written
 * in one write(2) holding only the lines that changed since the last
 * (each: cursor to the line, the text, erase to its end), so nothing
 * flickers; after a resize (SIGWINCH: watch_term_resize) the whole
 * frame. Closed: the screen, cursor and termios as they were (also on
 * exit(3), and from a fatal signal's handler).
 */
#ifndef AGENTRUN_WATCH_TERM_H
#define AGENTRUN_WATCH_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

#include "error.h"

struct watch_term {
	int in, out;
	struct termios saved;
	bool open;
	int rows, cols;
	char **prev; /* the last frame, rows lines */
	int prev_rows;
};

int watch_term_open(struct watch_term *t, int in, int out,
		    struct ar_error *err);
void watch_term_close(struct watch_term *t);
/* Read the size again (after SIGWINCH): the next frame is whole. */
void watch_term_resize(struct watch_term *t);
/* Draw rows lines (watch_view's, taken: freed here). */
void watch_term_draw(struct watch_term *t, char **lines);

/* The keys in buf[0..n) into keys (at most max): bytes, and the arrow
 * keys' sequences as WATCH_KEY_UP/DOWN (watch_model.h). Returns how many. */
size_t watch_term_keys(const char *buf, size_t n, int *keys, size_t max);

/* The frame of lines as bytes into *out (malloc'd, *len): only the lines
 * that differ from prev (all when prev is NULL). Pure, for the tests. */
void watch_term_frame(char *const *prev, char *const *lines, int rows,
		      char **out, size_t *len);

#endif
