/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bytes of agentrun-init (runtime/init/main.c, linked by the build
 * before this file is compiled: Makefile.am), embedded in the runtime:
 * the sandbox's pid 1 executes them from a sealed memfd (init.c), so
 * nothing needs installing, finding or mounting into the sandbox's root.
 */
#include "init.h"

#ifndef AR_INIT_IMAGE
#error "AR_INIT_IMAGE: the path of the linked agentrun-init (Makefile.am)"
#endif

__asm__(".pushsection .rodata\n"
	".balign 16\n"
	".globl ar_init_image\n"
	".hidden ar_init_image\n"
	"ar_init_image:\n"
	".incbin \"" AR_INIT_IMAGE "\"\n"
	".globl ar_init_image_end\n"
	".hidden ar_init_image_end\n"
	"ar_init_image_end:\n"
	".popsection\n");
