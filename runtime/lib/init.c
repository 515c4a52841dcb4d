/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pid 1 of a container's pid namespace: see init.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "init.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "signals.h"

static char *argv_area;
static size_t argv_area_len;

void ar_init_save_argv(int argc, char **argv)
{
	char *end;

	if (argc < 1 || !argv[0])
		return;
	/* The kernel lays the strings out one after the other. */
	end = argv[0];
	for (int i = 0; i < argc; i++) {
		if (argv[i] != end)
			return;
		end += strlen(argv[i]) + 1;
	}
	argv_area = argv[0];
	argv_area_len = (size_t)(end - argv[0]);
}

/* /proc/1/cmdline and comm say `init`, not the runtime's command line. */
static void set_title(void)
{
	static const char title[] = "init";

	prctl(PR_SET_NAME, title);
	if (argv_area_len < sizeof(title))
		return;
	memset(argv_area, 0, argv_area_len);
	memcpy(argv_area, title, sizeof(title));
}

/* Every fd but 2 (messages) and chan: the init holds no terminal, pipe or
 * file of the program's, so their ends close when the program's do. */
static void close_all_but(int chan)
{
	unsigned int lo = 3;

	close(0);
	close(1);
	if (chan >= 3) {
		if ((unsigned int)chan > lo)
			syscall(SYS_close_range, lo, (unsigned int)chan - 1, 0);
		lo = (unsigned int)chan + 1;
	}
	if (syscall(SYS_close_range, lo, ~0U, 0) < 0) {
		/* a profile that refuses close_range: the slow way */
		for (int fd = (int)lo; fd < 1024; fd++)
			if (fd != chan)
				close(fd);
	}
}

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

/* Execute agentrun-init (the embedded image: init_image.c) as pid 1 with
 * argv `init CHAN PID`: a clean image in place of the runtime's fork.
 * Called with every fd but 2 and chan closed and every signal blocked
 * (kept by execve, and so are pending signals). Returns on failure. */
static void exec_image(pid_t prog, int *chan)
{
	static const unsigned int seals = F_SEAL_SEAL | F_SEAL_SHRINK |
					  F_SEAL_GROW | F_SEAL_WRITE;
	const char *p = ar_init_image;
	/* the two labels around one .incbin blob (init_image.c): a single
	 * object to the assembler, two unrelated arrays to cppcheck */
	// cppcheck-suppress comparePointers
	size_t left = (size_t)(ar_init_image_end - ar_init_image);
	char chan_s[16], prog_s[16];
	char *argv[] = { (char *)"init", chan_s, prog_s, NULL };
	char *envp[] = { NULL };
	int mfd;

	mfd = memfd_create("agentrun-init",
			   MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (mfd < 0 && errno == EINVAL) /* before Linux 6.3 */
		mfd = memfd_create("agentrun-init",
				   MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return;
	while (left > 0) {
		ssize_t w = write(mfd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(mfd);
			return;
		}
		p += w;
		left -= (size_t)w;
	}
	/* nobody changes pid 1's image, not the sandbox's processes either
	 * (they may open /proc/1/exe) */
	if (fchmod(mfd, 0555) < 0 || fcntl(mfd, F_ADD_SEALS, seals) < 0) {
		close(mfd);
		return;
	}
	/* the channel, open across this execve only: a dup has no
	 * FD_CLOEXEC (fd 3 is free: close_all_but) */
	if (*chan >= 0 && *chan != 3) {
		if (dup2(*chan, 3) < 0) {
			close(mfd);
			return;
		}
		close(*chan);
		*chan = 3;
	} else if (*chan == 3 && fcntl(3, F_SETFD, 0) < 0) {
		close(mfd);
		return;
	}
	snprintf(chan_s, sizeof(chan_s), "%d", *chan);
	snprintf(prog_s, sizeof(prog_s), "%d", (int)prog);
	syscall(SYS_execveat, mfd, "", argv, envp, AT_EMPTY_PATH);
	close(mfd);
}

int ar_init_exec(const char *exe, char *const argv[], char *const envp[],
		 bool tty, int chan, struct ar_error *err)
{
	sigset_t all, old;
	pid_t pid;

	/* Blocked before the fork: nothing sent to pid 1 in between is
	 * lost (the signalfd reads what is pending). */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		sigprocmask(SIG_SETMASK, &old, NULL);
		return ar_error_set(err, e, "fork the program under the init");
	}
	if (pid == 0) {
		if (chan >= 0)
			close(chan);
		setpgid(0, 0);
		/* SIGTTOU is blocked: a background group may take the
		 * terminal's foreground */
		if (tty)
			tcsetpgrp(STDIN_FILENO, getpid());
		ar_signals_reset_for_exec();
		execve(exe, argv, envp);
		return ar_error_set(err, errno, "exec `%s`", exe);
	}
	/* both sides, so neither order of the two races */
	setpgid(pid, pid);
	close_all_but(chan);
	exec_image(pid, &chan);
	/* No memfd to execute (vm.memfd_noexec = 2, a seccomp profile that
	 * refuses memfd_create or execveat): the runtime's fork stays pid 1.
	 * It is non-dumpable (container_init.c), so nothing in the sandbox
	 * reads the runtime's memory it holds; but neither can a rootless
	 * `agentrun sandbox exec` open its /proc/1/root. */
	set_title();
	ar_init_loop(pid, chan);
}
