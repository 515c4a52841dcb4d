// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * benchtime — run a command, report its wall time, CPU time and peak RSS.
 * A helper of tests/bench/run-bench.sh (not part of the runtime).
 *
 *   benchtime [-H] [-T] [-o OUT] [-e ERR] -- CMD [ARG...]
 *	One run. Prints one line:
 *	    wall_us cpu_us tree_maxrss_kb self_hwm_kb status
 *	wall_us:        fork -> exit of CMD, CLOCK_MONOTONIC (what a caller
 *	                of CMD waits for)
 *	cpu_us:         user + system time of CMD and of the descendants
 *	                reaped; with -T of every descendant, also those CMD
 *	                did not wait for: benchtime is their subreaper
 *	                (PR_SET_CHILD_SUBREAPER) and waits for them after
 *	                CMD's exit (bwrap returns once its sandbox's pid 1
 *	                reports the exit code, without waiting for it: the
 *	                sandbox's own CPU time would go uncounted). Not for
 *	                commands that leave a process running on purpose
 *	                (`create`: the container)
 *	tree_maxrss_kb: the largest RSS of CMD or of any descendant
 *	self_hwm_kb:    with -H: VmHWM of CMD's own process, read from
 *	                /proc/PID/status when it exits (CMD is stopped at its
 *	                exit with ptrace PTRACE_O_TRACEEXIT); "-" without -H
 *	status:         exit status, or 128+N when killed by signal N
 *
 *   benchtime -n N [-j P] [-o OUT] [-e ERR] -- CMD [ARG...]
 *	N runs of CMD in P parallel streams (default 1), each stream running
 *	its share one after the other. "@ID@" inside an argument is replaced
 *	by "<stream>-<run>" so every run can use its own container id.
 *	Prints one line:  total_wall_us runs failed
 *
 * CMD's stdin is /dev/null; stdout goes to OUT and stderr to ERR
 * (appended; both default to /dev/null).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *out_path = "/dev/null";
static const char *err_path = "/dev/null";

static void die(const char *what)
{
	fprintf(stderr, "benchtime: %s: %s\n", what, strerror(errno));
	exit(125);
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long long tv_us(const struct timeval *tv)
{
	return (long long)tv->tv_sec * 1000000 + tv->tv_usec;
}

/* In the child: stdio redirections, then exec. Never returns. */
static void exec_child(char **argv, int gate)
{
	int in, out, err;
	char c;

	if (gate >= 0) {
		/* Wait until the parent has attached (EOF on the pipe). */
		while (read(gate, &c, 1) < 0 && errno == EINTR)
			;
		close(gate);
	}
	in = open("/dev/null", O_RDONLY);
	out = open(out_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	err = open(err_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (in < 0 || out < 0 || err < 0)
		_exit(126);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	if (in > 2)
		close(in);
	if (out > 2)
		close(out);
	if (err > 2)
		close(err);
	execvp(argv[0], argv);
	dprintf(2, "benchtime: exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

static long read_hwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int exit_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 255;
}

/*
 * After CMD's exit: wait for the descendants it left behind (re-parented to
 * benchtime, their subreaper) so that their CPU time is in RUSAGE_CHILDREN.
 * Gives up after 10 s (a daemon CMD started): its CPU time is then missing.
 */
static void reap_orphans(void)
{
	struct timespec pause = { 0, 200000 };
	int st, i;

	for (i = 0; i < 50000; i++) {
		pid_t p = waitpid(-1, &st, __WALL | WNOHANG);

		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			return; /* ECHILD: none left */
		if (p == 0)
			nanosleep(&pause, NULL);
	}
	fprintf(stderr, "benchtime: descendants still running after 10 s: "
			"their CPU time is not counted\n");
}

static int one_run(char **argv, int hwm, int tree)
{
	int gate[2] = { -1, -1 }, st = 0;
	long hwm_kb = -1;
	long long t0, t1;
	struct rusage ru;
	pid_t pid;

	if (hwm && pipe2(gate, O_CLOEXEC) < 0)
		die("pipe2");
	if (tree && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		die("prctl(PR_SET_CHILD_SUBREAPER)");
	t0 = now_us();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (hwm)
			close(gate[1]);
		exec_child(argv, gate[0]);
	}
	if (hwm) {
		close(gate[0]);
		if (ptrace(PTRACE_SEIZE, pid, NULL,
			   (void *)(long)(PTRACE_O_TRACEEXIT |
					  PTRACE_O_EXITKILL)) < 0)
			die("ptrace(PTRACE_SEIZE)");
		close(gate[1]);
	}
	for (;;) {
		if (wait4(pid, &st, __WALL, &ru) < 0) {
			if (errno == EINTR)
				continue;
			die("wait4");
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == PTRACE_EVENT_EXIT) {
			hwm_kb = read_hwm_kb(pid);
			ptrace(PTRACE_CONT, pid, NULL, NULL);
		} else if ((st >> 16) == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_LISTEN, pid, NULL, NULL);
		} else {
			/* Signal-delivery stop: pass the signal on. */
			ptrace(PTRACE_CONT, pid, NULL,
			       (void *)(long)WSTOPSIG(st));
		}
	}
	t1 = now_us();
	if (tree)
		reap_orphans();
	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		die("getrusage");
	printf("%lld %lld %ld ", t1 - t0,
	       tv_us(&ru.ru_utime) + tv_us(&ru.ru_stime), ru.ru_maxrss);
	if (hwm_kb >= 0)
		printf("%ld", hwm_kb);
	else
		printf("-");
	printf(" %d\n", exit_code(st));
	return 0;
}

/* argv with every "@ID@" replaced by "<stream>-<run>". */
static char **with_id(char **argv, int argc, int stream, int run)
{
	char **v = calloc(argc + 1, sizeof(*v));
	char id[32];
	int i;

	if (!v)
		die("calloc");
	snprintf(id, sizeof(id), "%d-%d", stream, run);
	for (i = 0; i < argc; i++) {
		const char *p = strstr(argv[i], "@ID@");

		if (!p) {
			v[i] = argv[i];
			continue;
		}
		if (asprintf(&v[i], "%.*s%s%s", (int)(p - argv[i]), argv[i], id,
			     p + 4) < 0)
			die("asprintf");
	}
	return v;
}

/* One stream: runs [0, n) one after the other; returns failures. */
static int stream_runs(char **argv, int argc, int stream, int n)
{
	int failed = 0, run, st;
	pid_t pid;

	for (run = 0; run < n; run++) {
		char **v = with_id(argv, argc, stream, run);

		pid = fork();
		if (pid < 0)
			die("fork");
		if (pid == 0)
			exec_child(v, -1);
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR)
				die("waitpid");
		if (exit_code(st) != 0)
			failed++;
	}
	return failed;
}

static int many_runs(char **argv, int argc, int n, int par)
{
	long long t0, t1;
	int s, st, failed = 0;
	pid_t *pids = calloc(par, sizeof(*pids));

	if (!pids)
		die("calloc");
	t0 = now_us();
	for (s = 0; s < par; s++) {
		int share = n / par + (s < n % par);

		pids[s] = fork();
		if (pids[s] < 0)
			die("fork");
		if (pids[s] == 0) {
			int f = stream_runs(argv, argc, s, share);

			_exit(f > 250 ? 250 : f);
		}
	}
	for (s = 0; s < par; s++) {
		while (waitpid(pids[s], &st, 0) < 0)
			if (errno != EINTR)
				die("waitpid");
		failed += exit_code(st);
	}
	t1 = now_us();
	printf("%lld %d %d\n", t1 - t0, n, failed);
	free(pids);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: benchtime [-H] [-T] [-o OUT] [-e ERR] -- CMD [ARG...]\n"
		"       benchtime -n N [-j P] [-o OUT] [-e ERR] -- CMD [ARG...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int opt, hwm = 0, tree = 0, n = 0, par = 1;

	while ((opt = getopt(argc, argv, "+HTn:j:o:e:")) != -1) {
		switch (opt) {
		case 'H':
			hwm = 1;
			break;
		case 'T':
			tree = 1;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'j':
			par = atoi(optarg);
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'e':
			err_path = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || n < 0 || par < 1)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (n > 0)
		return many_runs(argv + optind, argc - optind, n, par);
	return one_run(argv + optind, hwm, tree);
}
