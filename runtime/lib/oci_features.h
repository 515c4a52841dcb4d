/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun features`: what this build and the running kernel support, as
 * the runtime-spec features document (features.md, features-schema.json).
 */
#ifndef AGENTRUN_OCI_FEATURES_H
#define AGENTRUN_OCI_FEATURES_H

#include <stddef.h>

#include "error.h"

/* The mount options we advertise (all understood by the mount code),
 * NULL-terminated. */
extern const char *const ar_features_mount_options[];

/* The features JSON, beautified, '/' not escaped, ending in a newline.
 * *out is malloc'ed (caller frees); *len excludes the NUL. */
int ar_features_json(char **out, size_t *len, struct ar_error *err);

#endif
