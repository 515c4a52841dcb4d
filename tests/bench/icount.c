// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * icount — count the user-space instructions a command and every process it
 * starts execute, by single-stepping them with ptrace. A helper of
 * tests/bench/run-bench.sh (not part of the runtime).
 *
 *   icount [-s NAME]... [-v] -- CMD [ARG...]
 *	Runs CMD traced, follows fork, vfork and clone, and counts one
 *	instruction per single-step trap. A process that execs a program
 *	whose argv[0] or executable has the basename NAME (-s, repeatable:
 *	the container's payload, e.g. "true") is counted up to that exec and
 *	then let go untraced. Prints one line on stdout:
 *	    instructions processes status
 *	and with -v one line per process on stderr (pid, instructions, the
 *	executables it ran). status is CMD's exit status (128+N if killed).
 *	icount and CMD are pinned to the CPU icount starts on: each step
 *	wakes the other side, and on one CPU that is a context switch, not an
 *	inter-processor interrupt (6x faster in a VM: ~30 µs a step here
 *	instead of ~190).
 *
 * Why not callgrind: Debian's valgrind (3.19) does not know open_tree,
 * move_mount and mount_setattr, which agentrun and crun both call, turns
 * an open of /proc/self/exe into its own tool binary, and cannot follow an
 * exec of an fd of a detached mount (docs/performance.md). Single-stepping
 * runs the real code on the real kernel, so every syscall behaves as
 * without the counter; the figure is the instructions the CPU retired in
 * user space, as callgrind's Ir (a REP string instruction counts once per
 * iteration in both). It is slow (a trap per instruction: ~2-5 µs), and
 * exact: the same command gives the same count on a noisy machine (the
 * command runs without address randomisation, ADDR_NO_RANDOMIZE), up to
 * what the program itself varies (pids, time, the environment).
 *
 * Set-user-ID programs: exec'd under ptrace, a set-user-ID or set-group-ID
 * program (newuidmap, newgidmap) runs without its privilege and takes its
 * failure path, which is not what it does in a real run; such a process is
 * let go at its exec and not counted, and icount says so on stderr
 * ("icount: set-user-ID NAME not counted"). The runtime that called it
 * may then take a fallback path (crun rootless writes the maps itself).
 * Threads are counted like processes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SKIP 16

struct proc {
	pid_t pid;
	unsigned long long steps;
	/* the next trap reports the end of an execve, not an instruction of
	 * the new program */
	int exec_trap;
	char exes[256];
	struct proc *next;
};

static struct proc *procs;
static const char *skip[MAX_SKIP];
static int nskip;
static int verbose;
static unsigned long long total, nprocs;

static void die(const char *what)
{
	fprintf(stderr, "icount: %s: %s\n", what, strerror(errno));
	exit(125);
}

static struct proc *proc_find(pid_t pid, int add)
{
	struct proc *p;

	for (p = procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (!add)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		die("calloc");
	p->pid = pid;
	p->next = procs;
	procs = p;
	return p;
}

/* A process is done (it exited, or was let go at an exec): its count goes
 * into the total. The entry stays, marked: a later event of a reused pid
 * is a new process, never counted twice. */
static void proc_done(struct proc *p)
{
	total += p->steps;
	nprocs++;
	if (verbose)
		fprintf(stderr, "icount: %d %llu %s\n", p->pid, p->steps,
			p->exes);
	p->pid = -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: icount [-s NAME]... [-v] -- CMD [ARG...]\n");
	exit(125);
}

static const char *base(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static int skipped(const char *name)
{
	for (int i = 0; i < nskip; i++)
		if (fnmatch(skip[i], base(name), 0) == 0)
			return 1;
	return 0;
}

/* after an exec: note what runs now; 1 if it is a program not to count */
static int after_exec(struct proc *p)
{
	char exe_path[64], path[64], exe[PATH_MAX], argv0[PATH_MAX];
	struct stat st;
	ssize_t n;
	FILE *f;
	int skip_it = 0;

	snprintf(exe_path, sizeof(exe_path), "/proc/%d/exe", p->pid);
	n = readlink(exe_path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	argv0[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", p->pid);
	f = fopen(path, "re");
	if (f) {
		size_t r = fread(argv0, 1, sizeof(argv0) - 1, f);

		argv0[r] = '\0';
		fclose(f);
	}
	if ((exe[0] && skipped(exe)) || (argv0[0] && skipped(argv0)))
		skip_it = 1;
	if (stat(exe_path, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
		fprintf(stderr, "icount: set-user-ID %s not counted\n",
			exe[0] ? base(exe) : "?");
		skip_it = 1;
	}
	size_t len = strlen(p->exes);
	snprintf(p->exes + len, sizeof(p->exes) - len, "%s%s%s",
		 len ? " > " : "", exe[0] ? base(exe) : "?",
		 skip_it ? " (from here not counted)" : "");
	return skip_it;
}

int main(int argc, char **argv)
{
	int opt, status, exit_status = 0;
	pid_t root, pid;

	while ((opt = getopt(argc, argv, "+s:v")) != -1) {
		switch (opt) {
		case 's':
			if (nskip == MAX_SKIP) {
				fprintf(stderr, "icount: too many -s\n");
				return 125;
			}
			skip[nskip++] = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();

	{
		cpu_set_t one;
		int cpu = sched_getcpu();

		CPU_ZERO(&one);
		CPU_SET(cpu < 0 ? 0 : cpu, &one);
		/* best effort: a cpuset may refuse it; counts do not change */
		(void)sched_setaffinity(0, sizeof(one), &one);
	}
	root = fork();
	if (root < 0)
		die("fork");
	if (root == 0) {
		/* Without address randomisation: where the stack and the
		 * strings on it start decides how many rounds the vector
		 * loops of strlen() and memcpy() take, so a count would vary
		 * by a few dozen from run to run. Inherited by every process
		 * the command starts. */
		int pers = personality(0xffffffff);

		if (pers != -1)
			(void)personality((unsigned long)pers |
					  ADDR_NO_RANDOMIZE);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			die("PTRACE_TRACEME");
		kill(getpid(), SIGSTOP);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "icount: %s: %s\n", argv[optind],
			strerror(errno));
		_exit(127);
	}
	if (waitpid(root, &status, 0) < 0)
		die("waitpid");
	if (!WIFSTOPPED(status)) {
		fprintf(stderr, "icount: the command did not start\n");
		return 125;
	}
	if (ptrace(PTRACE_SETOPTIONS, root, NULL,
		   (void *)(long)(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
				  PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
				  PTRACE_O_EXITKILL)) < 0)
		die("PTRACE_SETOPTIONS");
	proc_find(root, 1);
	/* not counted: icount's own kill() returning and the execvp up to
	 * the exec; counting starts at the exec event */
	if (ptrace(PTRACE_CONT, root, NULL, NULL) < 0)
		die("PTRACE_CONT");

	for (;;) {
		struct proc *p;
		int sig = 0, event;

		pid = waitpid(-1, &status, __WALL);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				break;
			die("waitpid");
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (pid == root)
				exit_status = WIFEXITED(status) ?
						      WEXITSTATUS(status) :
						      128 + WTERMSIG(status);
			p = proc_find(pid, 0);
			if (p) /* else let go at its exec: counted then */
				proc_done(p);
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		p = proc_find(pid, 1);
		sig = WSTOPSIG(status);
		event = status >> 16;
		if (sig == SIGTRAP && event) {
			sig = 0;
			if (event == PTRACE_EVENT_EXEC && after_exec(p)) {
				proc_done(p);
				/* let the payload run untraced */
				if (ptrace(PTRACE_DETACH, pid, NULL, NULL) <
					    0 &&
				    errno != ESRCH)
					die("PTRACE_DETACH");
				continue;
			}
			if (event == PTRACE_EVENT_EXEC)
				p->exec_trap = 1;
			/* the new process of a fork/clone is attached and
			 * reports its own SIGSTOP */
		} else if (sig == SIGTRAP) {
			siginfo_t si;

			if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) == 0 &&
			    (si.si_code == TRAP_TRACE ||
			     si.si_code == TRAP_BRKPT)) {
				/* TRAP_BRKPT: the step over a syscall
				 * instruction, reported at syscall exit;
				 * after an exec, that of the execve */
				if (!p->exec_trap || si.si_code != TRAP_BRKPT)
					p->steps++;
				p->exec_trap = 0;
				sig = 0;
			}
		} else if (sig == SIGSTOP && p->steps == 0 && pid != root) {
			/* the first stop of an auto-attached new process */
			sig = 0;
		}
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, (void *)(long)sig) <
			    0 &&
		    errno != ESRCH)
			die("PTRACE_SINGLESTEP");
	}
	printf("%llu %llu %d\n", total, nprocs, exit_status);
	return 0;
}
