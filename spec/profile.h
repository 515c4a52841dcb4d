/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sandbox profile files (`agentrun sandbox --profile FILE`): JSON holding
 * the same settings as the sandbox's command-line options. Parsed here,
 * in spec/ style (path-named errors, strict keys); the runtime's sandbox
 * code only sees the struct.
 *
 *   {
 *     "description": "Claude Code",
 *     "ro":   ["~/.gitconfig", "/srv/docs"],   host paths, read-only
 *     "rw":   ["~/.claude", "~/.claude.json"], host paths, read-write
 *     "hide": ["~/.claude/statsig"],           hidden even inside a bind
 *     "env":  ["ANTHROPIC_API_KEY", "FOO=bar", "LC_*"],
 *     "etc":  ["gitconfig"],                   extra /etc entries
 *     "etc_files": {"codex/config.toml": "..."}  generated /etc files;
 *                                              ${WORKSPACE} in the text is
 *                                              the workspace's path
 *     "net":  "none",                          "none" or "host", or
 *     "net":  {"allow": ["api.example.com", "*.example.org:443"]}
 *                                              egress allowlist proxy
 *     "publish": ["127.0.0.1:1455:1455"],     host port -> sandbox port
 *     "secret": ["API_KEY=api.example.com:443"], injected by the proxy
 *     "upstream_proxy": "http://proxy.corp:8080",  the proxy's own proxy
 *     "workspace": "~/src/project",
 *     "landlock": true,
 *     "nested": false,
 *     "vm": true,                              the command in a guest
 *                                              kernel (sandbox --vm)
 *     "agent_channel": true,                   SANDBOX_AGENT_CHANNEL_FD
 *     "keep": {"~/.gemini/settings.json": ["security.auth.selectedType"]}
 *                                              a writable copy inside; the
 *                                              keys' values set there kept
 *                                              by agentrun for the next run
 *   }
 *
 * "~/" is kept as written (the sandbox expands it against the user's
 * home). Profile paths that do not exist on the host are skipped by the
 * sandbox; the same paths given on the command line are an error.
 */
#ifndef AGENTRUN_PROFILE_H
#define AGENTRUN_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "oci_config.h"

struct ar_error;

#define OCI_PROFILE_MAX_FILE_SIZE (1024u * 1024)

struct oci_profile {
	struct ar_arena arena;
	char *filename;
	char *description;
	struct oci_strv ro;
	struct oci_strv rw;
	struct oci_strv hide;
	struct oci_strv env;
	struct oci_strv etc;
	/* "etc_files": names (relative to /etc) and their texts, parallel */
	struct oci_strv etc_files_name;
	struct oci_strv etc_files_text;
	/* "keep": the files (~/... .json) and, parallel, each one's keys
	 * (dotted paths of scalars) */
	struct oci_strv keep_path;
	struct oci_strv *keep_keys;
	char *net; /* NULL, "none" or "host" */
	struct oci_strv net_allow; /* "net": {"allow": [...]}; checked by
				    * the sandbox (egress_policy.h) */
	char *workspace;
	struct oci_opt_bool landlock;
	struct oci_opt_bool nested; /* "nested": user namespaces inside */
	struct oci_opt_bool vm; /* "vm": sandbox --vm (docs/vm.md) */
	/* "agent_channel": srt's Sandbox-Agent channel on fd 3 */
	struct oci_opt_bool agent_channel;
	struct oci_strv publish; /* "publish": ["[ADDR:]HOSTPORT:PORT"];
				  * checked by the sandbox */
	struct oci_strv secret; /* "secret": ["NAME=HOST-PATTERN,..."]; a
				 * NAME not set is skipped */
	char *upstream_proxy; /* "upstream_proxy": "http://HOST:PORT", the
			       * egress proxy's own proxy; checked by the
			       * sandbox (egress_upstream.h) */
};

/* Errors: "claude.json: rw[1]: expected a string, got number",
 * "p.json: nett: unknown property (known: description, ro, ...)". */
int oci_profile_parse(const char *json, size_t len, const char *filename,
		      struct oci_profile **out, struct ar_error *err);
int oci_profile_load_file(const char *path, struct oci_profile **out,
			  struct ar_error *err);
void oci_profile_free(struct oci_profile *p);
/* An "etc_files" name: relative to /etc, plain names (no "", ".", "..",
 * no leading or trailing '/'), not passwd or group. */
bool oci_etc_file_name_ok(const char *s);

/* The embedded agent seccomp profile (contrib/seccomp/agent-default.json)
 * as a struct allocated from `a`, for configs built in C. */
int oci_seccomp_default(struct ar_arena *a, struct oci_seccomp **out,
			struct ar_error *err);

#endif
