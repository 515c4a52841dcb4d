/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sandbox's checks of a live --ro/--rw grant (sandbox_grant.c),
 * given to the control plane (control/control_grant.h). */
#ifndef AGENTRUN_SANDBOX_GRANT_H
#define AGENTRUN_SANDBOX_GRANT_H

#include <pthread.h>
#include <stdbool.h>

#include "control/control_grant.h"
#include "error.h"
#include "protect/host_exec_check.h"
#include "protect/placeholder.h"
#include "protect/run_record.h"

/* A live --rw grant: walked at the end (revoked or not), its
 * placeholders held while it is granted. */
struct sb_grant_rw {
	struct sb_hostexec_dir d; /* the directory, the time of its grant */
	struct sb_placeholders ph;
	bool live;
};

struct sb_grant_ctx {
	const char *workspace; /* real path */
	const char *home; /* real path */
	/* the keeper (placeholder.h) told of each --rw grant; NULL: none */
	struct sb_placeholders *keeper;
	/* the run's record (run_record.h) each --rw grant is added to
	 * before its mount; NULL: none */
	struct sb_run_record *rec;
	pthread_mutex_t lock; /* rw: the control thread's and the run's */
	struct sb_grant_rw *rw;
	size_t n_rw;
	struct sb_grant_rw pending; /* the control thread's: checked, not
				     * yet mounted */
};

void sb_grant_init(struct sb_grant_ctx *x, const char *workspace,
		   const char *home, struct sb_placeholders *keeper);

/* A ctl_path_check_fn (data: struct sb_grant_ctx): `path` (real) must
 * not be under /proc or /sys nor hold a kernel interface
 * (sandbox_kernfs.h), must not be, hold or be inside the workspace,
 * must not be nor hold a path on the never-share list unless `force`;
 * a --rw one gets its protected paths (protect.h: git metadata, editor
 * and agent config, and the home directory's paths the host runs code
 * from) in *protect, kept read-only. */
int sb_grant_check(const char *path, bool rw, bool force, char ***protect,
		   void *data, struct ar_error *err);
/* A ctl_path_done_fn (data: struct sb_grant_ctx): a --rw grant mounted
 * is recorded (and told to the keeper), a failed one's placeholders
 * removed, a revoked one's removed (the last one out) and its record
 * kept for the end-of-run walk. */
void sb_grant_done(const char *path, bool rw, enum ctl_path_event ev,
		   void *data);
/* The run is over: the placeholders of the grants still live are
 * removed (the last one out) when the container has ended, else only
 * let go of (the next start removes them). */
void sb_grant_end(struct sb_grant_ctx *x, bool ended);
/* The --rw grants made (revoked ones too), for the end-of-run check:
 * a malloc'd copy, *n long, freed with sb_grant_dirs_free. */
struct sb_hostexec_dir *sb_grant_dirs(struct sb_grant_ctx *x, size_t *n);
void sb_grant_dirs_free(struct sb_hostexec_dir *v, size_t n);
void sb_grant_release(struct sb_grant_ctx *x);

#endif
