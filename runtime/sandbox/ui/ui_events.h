/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dashboard's live stream (GET /api/events, server-sent events): the
 * `events` stream of every running sandbox of the state root, merged,
 * each line as `data: {"sandbox":NAME,"event":EVENT}`; `event: sandboxes`
 * when one starts or ends; `event: following` (data {"sandbox":NAME})
 * once NAME's events reach the stream; a comment line every few seconds so that a
 * closed page is noticed.
 */
#ifndef AGENTRUN_UI_EVENTS_H
#define AGENTRUN_UI_EVENTS_H

#include <stddef.h>
#include <sys/types.h>

struct ui_stream;

struct ui_stream *ui_stream_new(const char *root);
/* Block until there is something to send; at most max bytes into buf.
 * The number of bytes, or -1 when the stream ends. */
ssize_t ui_stream_read(struct ui_stream *s, char *buf, size_t max);
void ui_stream_free(struct ui_stream *s);

#endif
