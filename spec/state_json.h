/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON of the container state: the OCI state object, and state.json on
 * disk (the OCI object plus agentrun's private fields under "agentrun"). */
#ifndef AGENTRUN_STATE_JSON_H
#define AGENTRUN_STATE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"

/* One container's record, as state.json holds it (runtime/lib/state.c
 * keeps it on disk). */
struct ar_state {
	char *id;
	pid_t pid; /* container process, in the runtime's pid namespace */
	unsigned long long pid_start; /* /proc/PID/stat starttime, to detect
				       * pid reuse */
	char *bundle; /* absolute */
	char *rootfs; /* absolute */
	char *created; /* RFC 3339, UTC */
	uid_t owner; /* euid of the creator */
	char *cgroup_path; /* absolute cgroupfs path, NULL when none */
	bool systemd_cgroup;
	bool rootless;
	bool detached; /* created with create/run --detach */
	bool creating; /* written while create/run is still setting the
			* container up (pid and cgroup known): a runtime
			* killed then leaves a "creating" container that
			* delete --force can clean */
	bool has_poststop_hooks; /* delete must re-read config.json */
	char *config_path; /* config.json the container was created from */
	struct oci_kv *annotations;
	size_t n_annotations;
};

void ar_state_free(struct ar_state *st);
static inline void ar_state_freep(struct ar_state **st)
{
	if (*st)
		ar_state_free(*st);
}
#define _cleanup_state_ __attribute__((cleanup(ar_state_freep)))

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
