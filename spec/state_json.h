/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON of the container state: the OCI state object, and state.json on
 * disk (the OCI object plus agentrun's private fields under "agentrun"). */
#ifndef AGENTRUN_STATE_JSON_H
#define AGENTRUN_STATE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "state.h"

/* status_name NULL: no "status" key (state.json on disk). with_private:
 * add the "agentrun" object. Compact, '/' not escaped. */
int ar_state_json_generate(const struct ar_state *st, const char *status_name,
			   bool with_pid, bool with_private, char **out,
			   size_t *len, struct ar_error *err);

/* Parse state.json; `filename` for messages. */
int ar_state_json_parse(const char *json, const char *filename,
			struct ar_state **out, struct ar_error *err);

/* The OCI "container process state" a seccomp agent receives on
 * listenerPath (config-linux.md): ociVersion, fds ["seccompFd"], pid
 * (from state_json), metadata (when not empty), and the container state
 * state_json embedded as is (it must be a JSON object). */
int ar_seccomp_process_state_json(const char *oci_version, const char *metadata,
				  const char *state_json, char **out,
				  size_t *out_len, struct ar_error *err);

#endif
