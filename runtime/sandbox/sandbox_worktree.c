/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `git worktree add ../x` inside the sandbox: the worktree's files go
 * where ../x is inside (the sandbox's tmpfs: gone at exit), its entry
 * into the workspace's .git/worktrees (kept: the host's git lists it
 * "prunable"). Said at the end of the run (sandbox_worktree.h); a
 * worktree inside the workspace is kept whole.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "sandbox_worktree.h"
#include "utils.h"

void sb_worktrees_lost(const char *ws, const struct timespec *start)
{
	_cleanup_free_ char *dir = ar_xasprintf("%s/.git/worktrees", ws);
	_cleanup_close_ int dfd =
		open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;

	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d)
		return;
	dfd = -1; /* the DIR's */
	while ((e = readdir(d))) {
		_cleanup_free_ char *gd = NULL, *text = NULL;
		struct ar_error err = AR_ERROR_INIT;
		struct stat st;
		size_t len = 0;
		char *wt;

		if (e->d_name[0] == '.')
			continue;
		gd = ar_xasprintf("%s/%s/gitdir", dir, e->d_name);
		if (lstat(gd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_mtim.tv_sec < start->tv_sec ||
		    ar_read_file_at(AT_FDCWD, gd, 4096, &text, &len, &err) < 0)
			continue;
		text[strcspn(text, "\n")] = '\0';
		/* ".../x/.git": the worktree is its directory */
		wt = strrchr(text, '/');
		if (text[0] != '/' || !wt || strcmp(wt, "/.git") != 0)
			continue;
		*wt = '\0';
		if (access(text, F_OK) == 0 || ar_path_under(text, ws))
			continue;
		ar_warn("sandbox: git worktree `%s` was made at %s, outside the workspace: it stayed in the sandbox and is gone (the host's `git worktree list` shows it prunable, `git worktree prune` removes the entry); a worktree inside the workspace (`git worktree add .worktrees/NAME`) is kept",
			e->d_name, text);
	}
	closedir(d);
}
