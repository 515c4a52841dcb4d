/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libmicrohttpd's table (ui_mhd.h). */
#define _GNU_SOURCE
#define UI_MHD_LOADER
#include "ui_mhd.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "utils.h"

struct ui_mhd ui_mhd;

int ui_mhd_load(struct ar_error *err)
{
	static const char *const names[] = {
#define X(f) #f,
		UI_MHD_FUNCS(X)
#undef X
	};
	void **slot = (void **)&ui_mhd;
	void *h;

	if (ui_mhd.MHD_start_daemon)
		return 0;
	h = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return ar_error_set_plain(
			err, ENOENT,
			"ui: cannot load libmicrohttpd.so.12 (Debian/Ubuntu: apt-get install libmicrohttpd12): %s",
			dlerror());
	for (size_t i = 0; i < AR_ARRAY_SIZE(names); i++) {
		slot[i] = dlsym(h, names[i]);
		if (!slot[i]) {
			memset(&ui_mhd, 0, sizeof(ui_mhd));
			return ar_error_set_plain(
				err, ENOENT,
				"ui: libmicrohttpd.so.12 has no %s", names[i]);
		}
	}
	return 0;
}
