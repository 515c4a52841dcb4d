/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dashboard's frame (agentrun watch): the model (watch_model.h) drawn
 * into ROWS lines of at most COLS bytes (ASCII only: whatever came from
 * the agent is already quoted), top to bottom:
 *
 *   the title: sandboxes, pending count, the kind filters and their keys
 *   the pending requests (the selected one marked '>')
 *   the events, newest at the bottom, of the kinds shown
 *   the keys, a confirmation, or the last answer's result
 *
 * Pure: watch_term.c writes the lines that changed.
 */
#ifndef AGENTRUN_WATCH_VIEW_H
#define AGENTRUN_WATCH_VIEW_H

#include "watch_model.h"

/* lines[0..rows-1] (each malloc'd, of at most cols bytes); the caller
 * frees them. The attribute of a line (reverse video for the title and
 * the selected request) is a leading '\x01' the terminal turns into
 * SGR 7. */
void watch_view(const struct watch_model *m, int rows, int cols, char **lines);

#endif
