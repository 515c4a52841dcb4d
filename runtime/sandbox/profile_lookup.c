/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox --profile NAME`: find a profile by name.
 *
 * A value that names an existing file, contains a '/' or ends in ".json" is
 * a path and is used as it is. Any other value is a profile name, looked up
 * as NAME.json in, first to last:
 *   $XDG_CONFIG_HOME/agentrun/profiles  (default ~/.config/agentrun/profiles)
 *   the installed profiles, $(pkgdatadir)/profiles (claude, codex, gemini, opencode, aider)
 * so a user's own profile of the same name wins over the shipped one.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "sandbox.h"
#include "utils.h"

#ifndef AGENTRUN_PROFILES_DIR
#define AGENTRUN_PROFILES_DIR "/usr/local/share/agentrun/profiles"
#endif

static bool is_path(const char *v)
{
	size_t n = strlen(v);

	return strchr(v, '/') || (n >= 5 && strcmp(v + n - 5, ".json") == 0) ||
	       access(v, F_OK) == 0;
}

static bool valid_name(const char *v)
{
	if (!*v || v[0] == '.' || strlen(v) > 64)
		return false;
	for (; *v; v++)
		if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
		      (*v >= '0' && *v <= '9') || *v == '-' || *v == '_' ||
		      *v == '.'))
			return false;
	return true;
}

int ar_sandbox_profile_resolve(const char *value, char **path,
			       struct ar_error *err)
{
	_cleanup_free_ char *user_dir = NULL;
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	const char *dirs[2];
	size_t i;

	*path = NULL;
	if (is_path(value)) {
		*path = ar_xstrdup(value);
		return 0;
	}
	if (!valid_name(value))
		return ar_error_set_plain(
			err, EINVAL,
			"--profile %s: not a file, and not a profile name "
			"(letters, digits, '-', '_', '.')",
			value);
	if (xdg && xdg[0] == '/')
		user_dir = ar_xasprintf("%s/agentrun/profiles", xdg);
	else if (home && home[0] == '/')
		user_dir = ar_xasprintf("%s/.config/agentrun/profiles", home);
	dirs[0] = user_dir;
	dirs[1] = AGENTRUN_PROFILES_DIR;
	for (i = 0; i < 2; i++) {
		_cleanup_free_ char *p = NULL;

		if (!dirs[i])
			continue;
		p = ar_xasprintf("%s/%s.json", dirs[i], value);
		if (access(p, R_OK) == 0) {
			*path = ar_steal_ptr(&p);
			return 0;
		}
	}
	return ar_error_set_plain(
		err, ENOENT,
		"--profile %s: no such profile: looked for %s.json in %s%s%s "
		"(give a path to use a profile file elsewhere)",
		value, value, user_dir ? user_dir : "", user_dir ? " and " : "",
		AGENTRUN_PROFILES_DIR);
}
