/* SPDX-License-Identifier: GPL-2.0-or-later */
/* update, pause, resume, ps, events: a container's cgroup by its id. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_container.h"
#include "cgroup_file.h"
#include "cgroup_systemd.h"
#include "cgroup_systemd_props.h"
#include "state.h"
#include "utils.h"

/* The container, opened (ar_state_open_existing), that has a cgroup and
 * is not stopped. */
static int target_open(const char *root, const char *id, bool exclusive,
		       struct ar_existing *t, struct ar_error *err)
{
	if (ar_state_open_existing(root, id, exclusive, t, err) < 0)
		return -1;
	if (t->status == AR_STATUS_STOPPED)
		return ar_error_set_plain(
			err, EINVAL,
			"container `%s` is not running (status: stopped)", id);
	if (!t->st->cgroup_path)
		return ar_error_set_plain(
			err, EOPNOTSUPP,
			"container `%s` has no cgroup (it was created without one: cgroup manager disabled or no usable cgroup v2 tree)",
			id);
	return 0;
}

/* The systemd manager: systemd holds the new limits too
 * (SetUnitProperties, runtime), as runc and crun do, or a daemon-reload
 * would put the unit's old ones back into the cgroup. After the files
 * were written (they validate the values). */
static int update_unit(const struct ar_existing *t,
		       const struct oci_resources *r, struct ar_error *err)
{
	_cleanup_free_ char *unit = ar_systemd_unit_of_path(t->st->cgroup_path);
	struct ar_systemd_props props = { 0 };
	struct oci_resources rr = *r;
	int ret;

	if (!unit)
		return 0;
	if (rr.memory.swap.set &&
	    !(rr.memory.limit.set && rr.memory.limit.v != 0)) {
		/* swap alone: systemd's MemorySwapMax is counted from the
		 * memory limit the cgroup has now */
		struct ar_error e = AR_ERROR_INIT;
		_cleanup_close_ int fd = ar_cg_open(t->st->cgroup_path, &e);
		uint64_t v;

		if (fd >= 0 && ar_cg_read_u64(fd, "memory.max", &v, &e) == 0) {
			rr.memory.limit.set = true;
			rr.memory.limit.v = v == AR_CG_MAX || v > INT64_MAX ?
						    -1 :
						    (int64_t)v;
		}
	}
	ret = ar_systemd_resource_props(&rr, &props, err);
	if (ret == 0)
		ret = ar_systemd_set_props(unit, t->st->rootless, &props, err);
	ar_systemd_props_free(&props);
	return ret;
}

int ar_cgroup_container_update(const char *root, const char *id,
			       const struct oci_resources *r,
			       struct ar_error *err)
{
	_cleanup_existing_ struct ar_existing t;

	if (target_open(root, id, true, &t, err) < 0)
		return -1;
	if (ar_cgroup_update(t.st->cgroup_path, r, err) < 0 ||
	    (t.st->systemd_cgroup && update_unit(&t, r, err) < 0))
		return ar_error_wrap(err, "update `%s`", id);
	return 0;
}

int ar_cgroup_container_pause(const char *root, const char *id,
			      struct ar_error *err)
{
	_cleanup_existing_ struct ar_existing t;

	if (target_open(root, id, true, &t, err) < 0)
		return -1;
	if (t.status == AR_STATUS_PAUSED)
		return ar_error_set_plain(
			err, EINVAL, "container `%s` is already paused", id);
	if (ar_cgroup_freeze(t.st->cgroup_path, true, err) < 0)
		return ar_error_wrap(err, "pause `%s`", id);
	return 0;
}

int ar_cgroup_container_resume(const char *root, const char *id,
			       struct ar_error *err)
{
	_cleanup_existing_ struct ar_existing t;

	if (target_open(root, id, true, &t, err) < 0)
		return -1;
	if (t.status != AR_STATUS_PAUSED)
		return ar_error_set_plain(
			err, EINVAL,
			"container `%s` is not paused (status: %s)", id,
			ar_status_name(t.status));
	if (ar_cgroup_freeze(t.st->cgroup_path, false, err) < 0)
		return ar_error_wrap(err, "resume `%s`", id);
	return 0;
}

static void print_cmdline(FILE *out, pid_t pid)
{
	char path[64];
	_cleanup_free_ char *buf = NULL;
	struct ar_error e = AR_ERROR_INIT;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if (ar_read_file_at(AT_FDCWD, path, 1 << 16, &buf, &len, &e) < 0 ||
	    len == 0) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		free(buf);
		buf = NULL;
		if (ar_read_file_at(AT_FDCWD, path, 256, &buf, &len, &e) < 0)
			return;
		buf[strcspn(buf, "\n")] = '\0';
		fprintf(out, "[%s]", buf);
		return;
	}
	for (size_t i = 0; i + 1 < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	fputs(buf, out);
}

int ar_cgroup_container_ps(const char *root, const char *id, bool json,
			   FILE *out, struct ar_error *err)
{
	_cleanup_existing_ struct ar_existing t;
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;

	if (target_open(root, id, false, &t, err) < 0)
		return -1;
	if (ar_cgroup_pids(t.st->cgroup_path, &pids, &n, err) < 0)
		return -1;
	if (json) {
		fputc('[', out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s%d", i ? "," : "", (int)pids[i]);
		fputs("]\n", out);
		return 0;
	}
	fprintf(out, "%-8s %s\n", "PID", "CMD");
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%-8d ", (int)pids[i]);
		print_cmdline(out, pids[i]);
		fputc('\n', out);
	}
	return 0;
}

static bool still_alive(void *ctx)
{
	return ar_state_pid_alive(ctx);
}

int ar_cgroup_container_events(const char *root, const char *id, bool stats,
			       int interval_ms, FILE *out, struct ar_error *err)
{
	_cleanup_existing_ struct ar_existing t;
	_cleanup_state_ struct ar_state *st = NULL;

	if (target_open(root, id, false, &t, err) < 0)
		return -1;
	/* Do not hold the lock while streaming: delete must not block. */
	st = ar_steal_ptr(&t.st);
	ar_existing_release(&t);
	return ar_cgroup_events(st->cgroup_path, st->id, stats, interval_ms,
				still_alive, st, out, err);
}
