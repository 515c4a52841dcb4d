/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * agentrun-init: the program pid 1 of an `agentrun sandbox` executes once
 * it has forked the user's command (runtime/lib/init.h), so that pid 1 is
 * a clean image: nothing of the runtime's memory (the caller's whole
 * environment, secrets) stays in it, and it is an ordinary process of the
 * sandbox (dumpable, the command's own confinement), whose /proc/1/root
 * and namespaces `agentrun sandbox exec` can open rootless.
 *
 *   init CHAN PID
 *
 * CHAN: the fd of the channel to the runtime (-1: none), PID: the
 * command's pid. Every signal is blocked on entry (the mask and the
 * pending signals are kept across execve: nothing sent to pid 1 since the
 * fork is lost). It runs inside the sandbox's root, whatever libraries
 * that has: linked statically, and on x86_64 without libc
 * (init_sys.h: a few KB, copied into a memfd at every start).
 */
#include <linux/prctl.h>

#include "init_loop.h"
#include "init_sys.h"

/* "-1" or a decimal number below 2^22; -2: not one */
static int number(const char *s)
{
	int v = 0;

	if (s[0] == '-' && s[1] == '1' && !s[2])
		return -1;
	if (!*s)
		return -2;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (1 << 22))
			return -2;
		v = v * 10 + (*s - '0');
	}
	return v;
}

static __attribute__((noreturn)) void init_main(int argc, char **argv)
{
	int chan, prog;

	/* execveat of a memfd names it after the fd */
	ar_sys2(__NR_prctl, PR_SET_NAME, "init");
	chan = argc == 3 ? number(argv[1]) : -2;
	prog = argc == 3 ? number(argv[2]) : -2;
	if (chan < -1 || prog < 2)
		for (;;)
			ar_sys1(__NR_exit_group, 127);
	ar_init_loop(prog, chan);
}

#ifdef AR_INIT_FREESTANDING
/* Built with whatever CFLAGS the builder gives (a distribution's
 * -fstack-protector-strong among them): the canary is read from %fs:0x28
 * (set up in _start). */
__attribute__((noreturn)) void __stack_chk_fail(void);
void __stack_chk_fail(void)
{
	for (;;)
		ar_sys1(__NR_exit_group, 127);
}

/* what the compiler may emit calls to */
void *memset(void *d, int c, unsigned long n);
void *memset(void *d, int c, unsigned long n)
{
	volatile unsigned char *p = d;

	while (n--)
		*p++ = (unsigned char)c;
	return d;
}

void *memcpy(void *d, const void *s, unsigned long n);
void *memcpy(void *d, const void *s, unsigned long n)
{
	volatile unsigned char *p = d;
	const unsigned char *q = s;

	while (n--)
		*p++ = *q++;
	return d;
}

__attribute__((noreturn, used)) void ar_init_start(long *sp);
__attribute__((noreturn, used)) void ar_init_start(long *sp)
{
	init_main((int)sp[0], (char **)(sp + 1));
}

#define AR_STR_(x) #x
#define AR_STR(x) AR_STR_(x)
#include <asm/prctl.h>
/* a thread control block of sorts: %fs:0x28 is its sixth word */
__attribute__((used)) unsigned long ar_init_tls[8];
/* clang-format off */
__asm__(".text\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %r12\n"
	"	and $-16, %rsp\n"
	/* %fs:0x28, the stack protector's canary */
	"	mov $" AR_STR(__NR_arch_prctl) ", %eax\n"
	"	mov $" AR_STR(ARCH_SET_FS) ", %edi\n"
	"	lea ar_init_tls(%rip), %rsi\n"
	"	syscall\n"
	"	mov %r12, %rdi\n"
	"	call ar_init_start\n"
	"	hlt\n");
/* clang-format on */
#else
int main(int argc, char **argv)
{
	init_main(argc, argv);
}
#endif
