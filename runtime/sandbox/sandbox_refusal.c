/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Namespace creation refused without --nested (sandbox_refusal.h). */
#define _GNU_SOURCE
#include "sandbox_refusal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "seccomp_refusal.h"
#include "utils.h"

/* Lines per run in the --log file / on stderr (a loop that retries
 * must not flood them); the count goes on. */
#define SB_REFUSALS_LOGGED 20

#define SB_REFUSAL_ADVICE                                                      \
	"rerun with --nested to let commands create namespaces (bubblewrap, "  \
	"podman, unshare, Codex's sandbox; " AR_SANDBOX_DOC " \"Nested "       \
	"sandboxes and containers\")"

void sb_refusal_event(const char *comm, const char *syscall, uint64_t arg0,
		      uint64_t arg1, void *data)
{
	struct sb_refusals *r = data;
	char flags[160], what[sizeof(r->first) + 200];

	ar_seccomp_ns_flags_str(strcmp(syscall, "setns") == 0 ? arg1 : arg0,
				flags, sizeof(flags));
	snprintf(what, sizeof(what), "%s: %s(%s)", comm, syscall, flags);
	if (r->n++ == 0) {
		size_t l = strnlen(what, sizeof(r->first) - 1);

		memcpy(r->first, what, l);
		r->first[l] = '\0';
	}
	if (r->n > SB_REFUSALS_LOGGED)
		return;
	if (ar_log_has_destination())
		ar_log(AR_LOG_INFO, "namespace creation refused: %s; %s", what,
		       SB_REFUSAL_ADVICE);
	if (r->verbose)
		dprintf(STDERR_FILENO,
			"agentrun: namespace creation refused: %s; %s\n", what,
			SB_REFUSAL_ADVICE);
}

void sb_refusal_summary(const struct sb_refusals *r)
{
	char line[600];

	if (!r || r->n == 0)
		return;
	snprintf(
		line, sizeof(line),
		"namespace creation refused %lu time%s (%s%s): " SB_REFUSAL_ADVICE,
		r->n, r->n == 1 ? "" : "s", r->first, r->n > 1 ? ", ..." : "");
	if (ar_log_has_destination())
		ar_log(AR_LOG_INFO, "%s", line);
	dprintf(STDERR_FILENO, "agentrun: %s\n", line);
}
