/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The never-share list (home_secrets.h). */
#define _GNU_SOURCE
#include <string.h>

#include "home_secrets.h"
#include "utils.h"

const char *const ar_sandbox_home_secrets[] = {
	/* keys, agents, credentials */
	".ssh",
	".gnupg",
	".password-store",
	".netrc",
	".git-credentials",
	".config/git/credentials",
	/* cloud and cluster credentials */
	".aws",
	".azure",
	".config/gcloud",
	".kube",
	".docker",
	".oci",
	".terraform.d",
	".vault-token",
	".config/gh",
	".config/hub",
	".config/op",
	/* package registry tokens */
	".npmrc",
	".pypirc",
	".cargo/credentials",
	".cargo/credentials.toml",
	".gem/credentials",
	".m2/settings-security.xml",
	/* keyrings and browser profiles */
	".local/share/keyrings",
	".pki",
	".mozilla",
	".thunderbird",
	".config/google-chrome",
	".config/chromium",
	".config/BraveSoftware",
	".config/microsoft-edge",
	".config/vivaldi",
	".var/app",
	".local/share/kwalletd",
	NULL,
};

bool ar_sandbox_path_is_secret(const char *home, const char *path)
{
	char buf[4096];
	size_t hl = strlen(home);

	/* Every secret is below home: most paths are answered here. */
	if (!ar_path_under(path, home))
		return false;
	if (hl + 2 > sizeof(buf))
		return true; /* cannot check: the safe answer */
	/* a prefix: each secret below is copied with its NUL */
	/* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
	memcpy(buf, home, hl);
	buf[hl] = '/';
	for (const char *const *s = ar_sandbox_home_secrets; *s; s++) {
		size_t sl = strlen(*s);

		if (hl + 1 + sl + 1 > sizeof(buf))
			return true;
		memcpy(buf + hl + 1, *s, sl + 1);
		if (ar_path_under(path, buf))
			return true;
	}
	return false;
}
