/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libseccomp's <seccomp.h>.
 *
 * runtime/lib/seccomp.h (ours) shadows the system header because
 * runtime/lib is on the include path.  Include this file with angle
 * brackets, `#include <libseccomp.h>`, so that it is found through the
 * include path and #include_next continues the search after runtime/lib.
 */
#ifndef AGENTRUN_LIBSECCOMP_H
#define AGENTRUN_LIBSECCOMP_H

#include_next <seccomp.h>

#endif
