/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The answer `always` (control_queue.h): HOST:PORT added to the
 * "net": {"allow": [...]} list of the profile file the sandbox was
 * started with, so that the next sandbox of that profile does not ask.
 * Only a profile file of the sandbox's user (a regular file it owns,
 * not a link) is written; the profiles installed with agentrun are not.
 * The edit is textual (the user's formatting and every other key stay
 * as written), then checked: the new text parses as a profile whose
 * every list is the old one's, net.allow with one more item, else
 * nothing is written. Written atomically, mode kept. What is added is
 * the exact HOST:PORT asked for, never a pattern (wildcards are not
 * granted this way).
 */
#ifndef AGENTRUN_CONTROL_ALWAYS_H
#define AGENTRUN_CONTROL_ALWAYS_H

#include <stdint.h>

#include "audit/audit.h"
#include "error.h"

/* Add "HOST:PORT" ([v6]:PORT) to `profile`'s net.allow; the change as a
 * unified diff into *diff. Already there: 0, empty diff. */
int ctl_always_write(const char *profile, const char *host, uint16_t port,
		     struct ar_jbuf *diff, struct ar_error *err);

#endif
