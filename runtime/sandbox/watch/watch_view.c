/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dashboard's frame (watch_view.h). */
#define _GNU_SOURCE
#include "watch_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utils.h"

/* a line of at most cols bytes; '\x01' first: reverse video */
static char *line(int cols, bool rev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static char *line(int cols, bool rev, const char *fmt, ...)
{
	char *s = ar_xmalloc((size_t)cols + 2), *p = s;
	va_list ap;

	if (rev)
		*p++ = '\x01';
	va_start(ap, fmt);
	vsnprintf(p, (size_t)cols + 1, fmt, ap);
	va_end(ap);
	return s;
}

void watch_view(const struct watch_model *m, int rows, int cols, char **lines)
{
	static const char *const names[WATCH_KINDS] = { "net", "exec", "file",
							"protected", "" };
	static const char keys[WATCH_KINDS] = { 'n', 'e', 'f', 'p', 0 };
	char filt[96] = "", sbs[WATCH_LINE] = "";
	int row = 0, req_rows, ev_rows, first_req = 0;
	size_t shown = 0, l = 0;

	if (rows <= 0 || cols <= 0)
		return;
	for (int k = 0; k < WATCH_KINDS - 1; k++)
		l += (size_t)snprintf(filt + l, sizeof(filt) - l, " [%c]%s%s",
				      keys[k], names[k],
				      m->show[k] ? "" : "(off)");
	l = 0;
	for (size_t i = 0; i < m->n_sb && l + 1 < sizeof(sbs); i++) {
		char q[80];

		ar_quote_to(q, sizeof(q), m->sb[i].name, strlen(m->sb[i].name));
		l += (size_t)snprintf(sbs + l, sizeof(sbs) - l, "%s%s(%zu)",
				      i ? " " : "", q, m->sb[i].n_pending);
		if (l >= sizeof(sbs))
			l = sizeof(sbs) - 1;
	}
	lines[row++] = line(cols, true,
			    "agentrun watch: %zu sandbox%s, %zu pending |%s",
			    m->n_sb, m->n_sb == 1 ? "" : "es", m->n_reqs, filt);
	if (row < rows)
		lines[row++] = line(cols, false, "sandboxes: %s",
				    m->n_sb ? sbs :
				    m->only ? "(not running)" :
					      "(none running)");
	/* the requests: up to a third of the screen, the selected one in
	 * view */
	req_rows = m->n_reqs ? (int)m->n_reqs : 1;
	if (req_rows > (rows - 4) / 3)
		req_rows = (rows - 4) / 3 > 0 ? (rows - 4) / 3 : 1;
	if ((int)m->sel >= req_rows)
		first_req = (int)m->sel - req_rows + 1;
	if (row < rows)
		lines[row++] = line(
			cols, false,
			"-- pending requests (o once, s session, a always, r refuse; up/down) %s",
			m->n_reqs > (size_t)req_rows ? "(more)" : "");
	for (int i = 0; i < req_rows && row < rows - 1; i++) {
		size_t k = (size_t)first_req + (size_t)i;

		if (k < m->n_reqs)
			lines[row++] = line(cols, k == m->sel, "%c %s",
					    k == m->sel ? '>' : ' ',
					    m->reqs[k].text);
		else
			lines[row++] = line(cols, false, "  (none)");
	}
	if (row < rows - 1)
		lines[row++] = line(cols, false, "-- events");
	/* the events of the kinds shown, the newest at the bottom */
	ev_rows = rows - 1 - row;
	{
		int start = row;
		size_t idx[WATCH_MAX_EVENTS];

		for (size_t i = m->ev_n; i-- > 0 && shown < (size_t)ev_rows;) {
			const struct watch_event *e =
				&m->ev[(m->ev_head + i) % WATCH_MAX_EVENTS];

			if (e->kind == WATCH_OTHER || m->show[e->kind])
				idx[shown++] =
					(m->ev_head + i) % WATCH_MAX_EVENTS;
		}
		for (int r = 0; r < ev_rows; r++) {
			size_t from_bottom = (size_t)(ev_rows - 1 - r);

			lines[start + r] =
				from_bottom < shown ?
					line(cols, false, "%s",
					     m->ev[idx[from_bottom]].text) :
					line(cols, false, "%s", "");
		}
		row = start + (ev_rows > 0 ? ev_rows : 0);
	}
	if (row < rows) {
		if (m->confirm_always)
			lines[row++] = line(
				cols, true,
				"always: grant %s of %s for good, and write it to the profile? y/n",
				m->sel < m->n_reqs ? m->reqs[m->sel].id : "?",
				m->sel < m->n_reqs ? m->reqs[m->sel].sandbox :
						     "?");
		else if (m->status[0])
			lines[row++] =
				line(cols, false, "%s  | q quit", m->status);
		else
			lines[row++] = line(
				cols, false,
				"keys: o s a r answer, up/down select, n e f p filter, q quit");
	}
	while (row < rows)
		lines[row++] = line(cols, false, "%s", "");
}
