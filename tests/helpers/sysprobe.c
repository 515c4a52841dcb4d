// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sysprobe — a tiny static program the confinement tests copy into a
 * busybox container to attempt what busybox cannot: a raw syscall, the
 * TIOCSTI ioctl, ptrace. Prints "errno=N" (0 on success) and exits 0;
 * exit 2 on bad usage. Built by the tests with `cc -static`.
 *
 *   sysprobe syscall NR [ARG...]   raw syscall(NR, ARG...) (decimal args)
 *   sysprobe tiocsti               ioctl(0, TIOCSTI, "x")
 *   sysprobe ptrace PID            ptrace(PTRACE_ATTACH, PID) (detaches)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long r = -1;

	if (argc >= 3 && strcmp(argv[1], "syscall") == 0) {
		long a[6] = { 0 };

		for (int i = 3; i < argc && i < 9; i++)
			a[i - 3] = strtol(argv[i], NULL, 10);
		r = syscall(strtol(argv[2], NULL, 10), a[0], a[1], a[2], a[3],
			    a[4], a[5]);
	} else if (argc == 2 && strcmp(argv[1], "tiocsti") == 0) {
		char c = 'x';

		r = ioctl(0, TIOCSTI, &c);
	} else if (argc == 3 && strcmp(argv[1], "ptrace") == 0) {
		pid_t pid = (pid_t)strtol(argv[2], NULL, 10);

		r = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
		if (r == 0) {
			waitpid(pid, NULL, __WALL);
			ptrace(PTRACE_DETACH, pid, NULL, NULL);
		}
	} else {
		fprintf(stderr,
			"usage: sysprobe syscall NR [ARG...] | tiocsti | ptrace PID\n");
		return 2;
	}
	printf("errno=%d\n", r < 0 ? errno : 0);
	return 0;
}
