/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The few system calls of the sandbox's init (init_loop.c), as raw
 * syscalls on the kernel's own types (linux/ headers), so that the same
 * code builds two ways:
 *  - AR_INIT_FREESTANDING (x86_64; another architecture needs its syscall
 *    instruction here and its _start in main.c): agentrun-init without libc,
 *    a few KB, entered at _start (main.c); the syscall instruction is
 *    inlined here;
 *  - otherwise through libc's syscall(): the runtime's own fallback, and
 *    agentrun-init on other architectures.
 * Returns the kernel's value: -errno on failure.
 */
#ifndef AGENTRUN_INIT_SYS_H
#define AGENTRUN_INIT_SYS_H

#include <asm/unistd.h>

#ifdef AR_INIT_FREESTANDING
#if defined(__x86_64__)
static inline long ar_sys(long n, long a, long b, long c, long d, long e,
			  long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
#error "AR_INIT_FREESTANDING: x86_64 only (configure.ac)"
#endif
#else
#include <errno.h>
#include <unistd.h>

static inline long ar_sys(long n, long a, long b, long c, long d, long e,
			  long f)
{
	long r = syscall(n, a, b, c, d, e, f);

	return r < 0 ? -errno : r;
}
#endif

#define ar_sys1(n, a) ar_sys(n, (long)(a), 0, 0, 0, 0, 0)
#define ar_sys2(n, a, b) ar_sys(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define ar_sys4(n, a, b, c, d)                                                 \
	ar_sys(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define ar_sys6(n, a, b, c, d, e, f)                                           \
	ar_sys(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e),       \
	       (long)(f))

#endif
