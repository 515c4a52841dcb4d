/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libmicrohttpd, loaded by `agentrun ui` (dlopen), not linked: linked,
 * the dynamic loader would spend its relocations at every start of
 * every `agentrun run` and `sandbox`. Every function used goes through
 * the table (the macros below turn the calls into table calls). Include
 * this header only in files of the dashboard.
 */
#ifndef AGENTRUN_UI_MHD_H
#define AGENTRUN_UI_MHD_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

#include "error.h"

#define UI_MHD_FUNCS(X)                                                        \
	X(MHD_start_daemon)                                                    \
	X(MHD_stop_daemon)                                                     \
	X(MHD_lookup_connection_value)                                         \
	X(MHD_get_connection_values)                                           \
	X(MHD_create_response_from_buffer)                                     \
	X(MHD_create_response_from_callback)                                   \
	X(MHD_add_response_header)                                             \
	X(MHD_queue_response)                                                  \
	X(MHD_destroy_response)

struct ui_mhd {
#define X(f) __typeof__(&f) f;
	UI_MHD_FUNCS(X)
#undef X
};
extern struct ui_mhd ui_mhd;

/* Load libmicrohttpd.so.12 once; 0 or -1 with err. */
int ui_mhd_load(struct ar_error *err);

#ifndef UI_MHD_LOADER
#define MHD_start_daemon ui_mhd.MHD_start_daemon
#define MHD_stop_daemon ui_mhd.MHD_stop_daemon
#define MHD_lookup_connection_value ui_mhd.MHD_lookup_connection_value
#define MHD_get_connection_values ui_mhd.MHD_get_connection_values
#define MHD_create_response_from_buffer ui_mhd.MHD_create_response_from_buffer
#define MHD_create_response_from_callback                                      \
	ui_mhd.MHD_create_response_from_callback
#define MHD_add_response_header ui_mhd.MHD_add_response_header
#define MHD_queue_response ui_mhd.MHD_queue_response
#define MHD_destroy_response ui_mhd.MHD_destroy_response
#endif

#endif
