/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The systemd cgroup manager: transient scopes over D-Bus
 * (cgroup_systemd.h). */
#include "config.h"

#include "cgroup_systemd.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "utils.h"

/* How long systemd gets to start or stop a unit (a slow VM takes
 * seconds). */
#define SD_JOB_TIMEOUT_USEC (60ull * 1000 * 1000)

char *ar_systemd_unit_of_path(const char *cgroup_path)
{
	_cleanup_free_ char *copy = NULL;
	char *unit = NULL, *comp, *save = NULL;

	if (!cgroup_path)
		return NULL;
	copy = ar_xstrdup(cgroup_path);
	for (comp = strtok_r(copy, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		size_t n = strlen(comp);

		if (n > 6 && strcmp(comp + n - 6, ".scope") == 0)
			unit = comp;
	}
	return unit ? ar_xstrdup(unit) : NULL;
}

void ar_systemd_forget(const char *cgroup_path, bool rootless)
{
	struct ar_error e = AR_ERROR_INIT;
	_cleanup_free_ char *unit = NULL;

	if (!cgroup_path || !ar_systemd_built())
		return;
	unit = ar_systemd_unit_of_path(cgroup_path);
	if (unit && ar_systemd_stop_unit(unit, rootless, &e) < 0)
		ar_debug("systemd: %s", e.msg);
}

#ifndef HAVE_SYSTEMD

bool ar_systemd_built(void)
{
	return false;
}

int ar_systemd_start_scope(const struct ar_systemd_scope *s,
			   struct ar_error *err)
{
	(void)s;
	return ar_error_set_plain(
		err, EOPNOTSUPP,
		"this agentrun was built without the systemd cgroup manager (no libsystemd-dev at build time): use --cgroup-manager=cgroupfs");
}

int ar_systemd_stop_unit(const char *unit, bool rootless, struct ar_error *err)
{
	(void)unit;
	(void)rootless;
	(void)err;
	return 0;
}

int ar_systemd_set_props(const char *unit, bool rootless,
			 const struct ar_systemd_props *props,
			 struct ar_error *err)
{
	(void)unit;
	(void)rootless;
	(void)props;
	return ar_error_set_plain(
		err, EOPNOTSUPP,
		"this agentrun was built without the systemd cgroup manager (no libsystemd-dev at build time)");
}

#else

#include <dlfcn.h>
#include <systemd/sd-bus.h>

/* libsystemd.so.0's sd-bus, loaded on first use: linked, the dynamic
 * loader would relocate it at every start of every command. */
#define SD_FUNCS(X)                                                            \
	X(sd_bus_open_system)                                                  \
	X(sd_bus_open_user)                                                    \
	X(sd_bus_new)                                                          \
	X(sd_bus_set_address)                                                  \
	X(sd_bus_start)                                                        \
	X(sd_bus_flush_close_unref)                                            \
	X(sd_bus_message_new_method_call)                                      \
	X(sd_bus_message_append)                                               \
	X(sd_bus_message_append_strv)                                          \
	X(sd_bus_message_open_container)                                       \
	X(sd_bus_message_close_container)                                      \
	X(sd_bus_message_read)                                                 \
	X(sd_bus_message_unref)                                                \
	X(sd_bus_call)                                                         \
	X(sd_bus_call_method)                                                  \
	X(sd_bus_match_signal)                                                 \
	X(sd_bus_slot_unref)                                                   \
	X(sd_bus_process)                                                      \
	X(sd_bus_wait)                                                         \
	X(sd_bus_error_free)                                                   \
	X(sd_bus_error_has_name)

static struct {
#define X(f) __typeof__(&f) f;
	SD_FUNCS(X)
#undef X
} sd;

bool ar_systemd_built(void)
{
	return true;
}

static int sd_load(struct ar_error *err)
{
	static const char *const names[] = {
#define X(f) #f,
		SD_FUNCS(X)
#undef X
	};
	void **slot = (void **)&sd;
	void *h;

	if (sd.sd_bus_open_system)
		return 0;
	h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return ar_error_set_plain(
			err, ENOENT,
			"systemd cgroup manager: cannot load libsystemd.so.0 (Debian/Ubuntu: apt-get install libsystemd0), or use --cgroup-manager=cgroupfs: %s",
			dlerror());
	for (size_t i = 0; i < AR_ARRAY_SIZE(names); i++) {
		slot[i] = dlsym(h, names[i]);
		if (!slot[i]) {
			memset(&sd, 0, sizeof(sd));
			return ar_error_set_plain(
				err, ENOENT,
				"systemd cgroup manager: libsystemd.so.0 has no %s",
				names[i]);
		}
	}
	return 0;
}

static void bus_closep(sd_bus **b)
{
	if (*b)
		sd.sd_bus_flush_close_unref(*b);
}
static void msg_unrefp(sd_bus_message **m)
{
	if (*m)
		sd.sd_bus_message_unref(*m);
}
static void slot_unrefp(sd_bus_slot **s)
{
	if (*s)
		sd.sd_bus_slot_unref(*s);
}
static void bus_error_freep(sd_bus_error *e)
{
	sd.sd_bus_error_free(e);
}
#define _cleanup_bus_ __attribute__((cleanup(bus_closep)))
#define _cleanup_msg_ __attribute__((cleanup(msg_unrefp)))
#define _cleanup_slot_ __attribute__((cleanup(slot_unrefp)))
#define _cleanup_bus_error_ __attribute__((cleanup(bus_error_freep)))

/* systemd's private socket: no bus daemon needed (what runc uses as
 * root). */
static int open_private(const char *path, sd_bus **out)
{
	_cleanup_bus_ sd_bus *b = NULL;
	_cleanup_free_ char *addr = ar_xasprintf("unix:path=%s", path);
	int r;

	r = sd.sd_bus_new(&b);
	if (r < 0)
		return r;
	r = sd.sd_bus_set_address(b, addr);
	if (r < 0)
		return r;
	r = sd.sd_bus_start(b);
	if (r < 0)
		return r;
	*out = ar_steal_ptr(&b);
	return 0;
}

static int bus_open(bool rootless, sd_bus **out, struct ar_error *err)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	_cleanup_free_ char *priv = NULL;
	int r, r2;

	if (sd_load(err) < 0)
		return -1;
	if (!rootless) {
		r = sd.sd_bus_open_system(out);
		if (r >= 0)
			return 0;
		r2 = open_private("/run/systemd/private", out);
		if (r2 >= 0)
			return 0;
		return ar_error_set(
			err, -r,
			"systemd cgroup manager: cannot reach systemd (the system bus /run/dbus/system_bus_socket, or /run/systemd/private): is systemd PID 1 here? Use --cgroup-manager=cgroupfs otherwise");
	}
	r = sd.sd_bus_open_user(out);
	if (r >= 0)
		return 0;
	if (rt && rt[0] == '/') {
		priv = ar_xasprintf("%s/systemd/private", rt);
		if (open_private(priv, out) >= 0)
			return 0;
	}
	return ar_error_set(
		err, -r,
		"systemd cgroup manager (rootless): cannot reach the user's systemd (DBUS_SESSION_BUS_ADDRESS, or $XDG_RUNTIME_DIR/bus with XDG_RUNTIME_DIR=%s): run in a login session of the user (loginctl enable-linger; systemctl --user works there), or use --cgroup-manager=cgroupfs",
		rt ? rt : "(unset)");
}

struct job_wait {
	const char *job;
	char result[32];
	bool done;
};

static int on_job_removed(sd_bus_message *m, void *userdata,
			  sd_bus_error *ret_error)
{
	struct job_wait *w = userdata;
	const char *path = NULL, *unit = NULL, *result = NULL;
	uint32_t id;

	(void)ret_error;
	if (sd.sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
		return 0;
	if (w->job && path && strcmp(path, w->job) == 0) {
		snprintf(w->result, sizeof(w->result), "%s",
			 result ? result : "");
		w->done = true;
	}
	return 0;
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Dispatch until JobRemoved for w->job arrives. */
static int wait_job(sd_bus *bus, struct job_wait *w, const char *what,
		    struct ar_error *err)
{
	uint64_t deadline = now_usec() + SD_JOB_TIMEOUT_USEC;

	while (!w->done) {
		uint64_t now;
		int r = sd.sd_bus_process(bus, NULL);

		if (r < 0)
			return ar_error_set(
				err, -r, "%s: waiting for systemd's job", what);
		if (r > 0)
			continue;
		now = now_usec();
		if (now >= deadline)
			return ar_error_set_plain(
				err, ETIMEDOUT,
				"%s: systemd's job %s did not finish in %llu s",
				what, w->job, SD_JOB_TIMEOUT_USEC / 1000000ull);
		r = sd.sd_bus_wait(bus, deadline - now);
		if (r < 0)
			return ar_error_set(
				err, -r, "%s: waiting for systemd's job", what);
	}
	return 0;
}

/* The JobRemoved match and Subscribe (systemd sends job signals only to
 * subscribers; on a private connection the match is local). */
static int watch_jobs(sd_bus *bus, struct job_wait *w, sd_bus_slot **slot,
		      struct ar_error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	r = sd.sd_bus_match_signal(bus, slot, NULL, "/org/freedesktop/systemd1",
				   "org.freedesktop.systemd1.Manager",
				   "JobRemoved", on_job_removed, w);
	if (r < 0)
		return ar_error_set(err, -r,
				    "systemd cgroup manager: watch JobRemoved");
	r = sd.sd_bus_call_method(bus, "org.freedesktop.systemd1",
				  "/org/freedesktop/systemd1",
				  "org.freedesktop.systemd1.Manager",
				  "Subscribe", &e, NULL, "");
	if (r < 0)
		ar_debug("systemd: Subscribe: %s",
			 e.message ? e.message : strerror(-r));
	return 0;
}

/* One property as "(sv)". */
static int append_prop(sd_bus_message *m, const struct ar_systemd_prop *p)
{
	int r;

	switch (p->type) {
	case 't':
		return sd.sd_bus_message_append(m, "(sv)", p->name, "t", p->u);
	case 'u':
		return sd.sd_bus_message_append(m, "(sv)", p->name, "u",
						(uint32_t)p->u);
	case 'x':
		return sd.sd_bus_message_append(m, "(sv)", p->name, "x", p->i);
	case 'i':
		return sd.sd_bus_message_append(m, "(sv)", p->name, "i",
						(int32_t)p->i);
	case 'b':
		return sd.sd_bus_message_append(m, "(sv)", p->name, "b",
						(int)(p->i != 0));
	case 's':
		return sd.sd_bus_message_append(m, "(sv)", p->name, "s", p->s);
	case 'a':
		r = sd.sd_bus_message_open_container(m, 'r', "sv");
		if (r >= 0)
			r = sd.sd_bus_message_append(m, "s", p->name);
		if (r >= 0)
			r = sd.sd_bus_message_open_container(m, 'v', "as");
		if (r >= 0)
			r = sd.sd_bus_message_append_strv(m, p->strv);
		if (r >= 0)
			r = sd.sd_bus_message_close_container(m);
		if (r >= 0)
			r = sd.sd_bus_message_close_container(m);
		return r;
	}
	return -EINVAL;
}

static int append_props(sd_bus_message *m, const struct ar_systemd_props *ps,
			struct ar_error *err)
{
	for (size_t i = 0; ps && i < ps->n; i++) {
		/* sd-bus's negative errno, through append_prop */
		int r = append_prop(m, &ps->v[i]);

		if (r < 0) {
			errno = -r;
			return ar_error_set(
				err, errno,
				"systemd cgroup manager: add %s to the request",
				ps->v[i].name);
		}
	}
	return 0;
}

static int build_start(sd_bus *bus, const struct ar_systemd_scope *s,
		       sd_bus_message **out, struct ar_error *err)
{
	_cleanup_msg_ sd_bus_message *m = NULL;
	int r;

	r = sd.sd_bus_message_new_method_call(
		bus, &m, "org.freedesktop.systemd1",
		"/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
		"StartTransientUnit");
	if (r >= 0)
		r = sd.sd_bus_message_append(m, "ss", s->unit, "fail");
	if (r >= 0)
		r = sd.sd_bus_message_open_container(m, 'a', "(sv)");
	if (r >= 0)
		r = sd.sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)",
					     "Description", "s", s->description,
					     "Slice", "s", s->slice, "Delegate",
					     "b", 1, "DefaultDependencies", "b",
					     0, "CollectMode", "s",
					     "inactive-or-failed", "PIDs", "au",
					     1, (uint32_t)s->pid);
	if (r < 0)
		return ar_error_set(
			err, -r, "systemd cgroup manager: build the request");
	if (append_props(m, s->props, err) < 0 ||
	    append_props(m, s->annotations, err) < 0)
		return -1;
	r = sd.sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd.sd_bus_message_append(m, "a(sa(sv))", 0);
	if (r < 0)
		return ar_error_set(
			err, -r, "systemd cgroup manager: build the request");
	*out = ar_steal_ptr(&m);
	return 0;
}

int ar_systemd_start_scope(const struct ar_systemd_scope *s,
			   struct ar_error *err)
{
	_cleanup_bus_ sd_bus *bus = NULL;
	_cleanup_slot_ sd_bus_slot *slot = NULL;
	_cleanup_msg_ sd_bus_message *m = NULL, *reply = NULL;
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *job = NULL;
	struct job_wait w = { 0 };
	const char *jp = NULL;
	int r;

	if (bus_open(s->rootless, &bus, err) < 0)
		return -1;
	if (watch_jobs(bus, &w, &slot, err) < 0 ||
	    build_start(bus, s, &m, err) < 0)
		return -1;
	r = sd.sd_bus_call(bus, m, SD_JOB_TIMEOUT_USEC, &e, &reply);
	if (r < 0) {
		if (sd.sd_bus_error_has_name(
			    &e, "org.freedesktop.systemd1.UnitExists"))
			return ar_error_set_plain(
				err, EEXIST,
				"systemd cgroup manager: unit %s exists already (another container of that cgroupsPath?)",
				s->unit);
		return ar_error_set_plain(
			err, EIO,
			"systemd cgroup manager: StartTransientUnit %s in %s: %s",
			s->unit, s->slice,
			e.message ? e.message : strerror(-r));
	}
	r = sd.sd_bus_message_read(reply, "o", &jp);
	if (r < 0)
		return ar_error_set(err, -r,
				    "systemd cgroup manager: read the job");
	job = ar_xstrdup(jp);
	w.job = job;
	if (wait_job(bus, &w, "systemd cgroup manager", err) < 0)
		return -1;
	if (strcmp(w.result, "done") != 0)
		return ar_error_set_plain(
			err, EIO,
			"systemd cgroup manager: the job starting %s ended `%s` (journalctl -u %s)",
			s->unit, w.result, s->unit);
	ar_debug("systemd: %s started in %s", s->unit, s->slice);
	return 0;
}

int ar_systemd_set_props(const char *unit, bool rootless,
			 const struct ar_systemd_props *props,
			 struct ar_error *err)
{
	_cleanup_bus_ sd_bus *bus = NULL;
	_cleanup_msg_ sd_bus_message *m = NULL, *reply = NULL;
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	if (!props || props->n == 0)
		return 0;
	if (bus_open(rootless, &bus, err) < 0)
		return -1;
	r = sd.sd_bus_message_new_method_call(
		bus, &m, "org.freedesktop.systemd1",
		"/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
		"SetUnitProperties");
	if (r >= 0)
		r = sd.sd_bus_message_append(m, "sb", unit, 1);
	if (r >= 0)
		r = sd.sd_bus_message_open_container(m, 'a', "(sv)");
	if (r < 0)
		return ar_error_set(
			err, -r, "systemd cgroup manager: build the request");
	if (append_props(m, props, err) < 0)
		return -1;
	r = sd.sd_bus_message_close_container(m);
	if (r < 0)
		return ar_error_set(
			err, -r, "systemd cgroup manager: build the request");
	r = sd.sd_bus_call(bus, m, SD_JOB_TIMEOUT_USEC, &e, &reply);
	if (r < 0)
		return ar_error_set_plain(
			err, EIO,
			"systemd cgroup manager: SetUnitProperties %s: %s",
			unit, e.message ? e.message : strerror(-r));
	ar_debug("systemd: %zu properties of %s set", props->n, unit);
	return 0;
}

int ar_systemd_stop_unit(const char *unit, bool rootless, struct ar_error *err)
{
	_cleanup_bus_ sd_bus *bus = NULL;
	_cleanup_slot_ sd_bus_slot *slot = NULL;
	_cleanup_msg_ sd_bus_message *reply = NULL;
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *job = NULL;
	struct ar_error ignored = AR_ERROR_INIT;
	struct job_wait w = { 0 };
	const char *jp = NULL;
	int r;

	if (bus_open(rootless, &bus, &ignored) < 0) {
		/* the unit goes with its empty cgroup anyway */
		ar_debug("systemd: stop %s: %s", unit, ignored.msg);
		return 0;
	}
	if (watch_jobs(bus, &w, &slot, err) < 0)
		return -1;
	r = sd.sd_bus_call_method(bus, "org.freedesktop.systemd1",
				  "/org/freedesktop/systemd1",
				  "org.freedesktop.systemd1.Manager",
				  "StopUnit", &e, &reply, "ss", unit, "fail");
	if (r < 0) {
		if (sd.sd_bus_error_has_name(
			    &e, "org.freedesktop.systemd1.NoSuchUnit"))
			return 0;
		return ar_error_set_plain(
			err, EIO, "systemd cgroup manager: StopUnit %s: %s",
			unit, e.message ? e.message : strerror(-r));
	}
	r = sd.sd_bus_message_read(reply, "o", &jp);
	if (r < 0)
		return ar_error_set(err, -r,
				    "systemd cgroup manager: read the job");
	job = ar_xstrdup(jp);
	w.job = job;
	return wait_job(bus, &w, "systemd cgroup manager: stop", err);
}

#endif
