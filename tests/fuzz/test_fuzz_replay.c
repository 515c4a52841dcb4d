/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fuzz_replay — `make check`'s side of the fuzzers: every fuzz
 * target's code, built with the configured compiler (no libFuzzer), run
 * once on each file of tests/fuzz/seeds/<target>/ and
 * tests/fuzz/regressions/<target>/ (the inputs that once crashed a
 * target). Each input runs in a child process so that a crash is one
 * failing test named after the file. TAP output.
 *
 * Usage: test_fuzz_replay                    all targets, all files
 *        test_fuzz_replay TARGET FILE...     these files (debugging)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FUZZ_DATA_DIR
#error "FUZZ_DATA_DIR must name the source tree's tests/fuzz"
#endif

/* Every target, under its own entry name. */
#define FUZZ_ENTRY fuzz_config_entry
#include "fuzz_config.c"
#undef FUZZ_ENTRY
#define FUZZ_ENTRY fuzz_process_entry
#include "fuzz_process.c"
#undef FUZZ_ENTRY
#define FUZZ_ENTRY fuzz_state_entry
#include "fuzz_state.c"
#undef FUZZ_ENTRY
#define FUZZ_ENTRY fuzz_mount_options_entry
#include "fuzz_mount_options.c"
#undef FUZZ_ENTRY
#define FUZZ_ENTRY fuzz_seccomp_entry
#include "fuzz_seccomp.c"
#undef FUZZ_ENTRY
#define FUZZ_ENTRY fuzz_signal_entry
#include "fuzz_signal.c"
#undef FUZZ_ENTRY
#define FUZZ_ENTRY fuzz_profile_entry
#include "fuzz_profile.c"
#undef FUZZ_ENTRY
#define FUZZ_ENTRY fuzz_vm_frames_entry
#include "fuzz_vm_frames.c"
#undef FUZZ_ENTRY
#define FUZZ_ENTRY fuzz_mounts_entry
#include "fuzz_mounts.c"
#undef FUZZ_ENTRY

typedef int (*replay_fn)(const uint8_t *data, size_t size);

static const struct {
	const char *name;
	replay_fn fn;
} replay_targets[] = {
	{ "fuzz_config", fuzz_config_entry },
	{ "fuzz_process", fuzz_process_entry },
	{ "fuzz_state", fuzz_state_entry },
	{ "fuzz_mount_options", fuzz_mount_options_entry },
	{ "fuzz_seccomp", fuzz_seccomp_entry },
	{ "fuzz_signal", fuzz_signal_entry },
	{ "fuzz_profile", fuzz_profile_entry },
	{ "fuzz_vm_frames", fuzz_vm_frames_entry },
	{ "fuzz_mounts", fuzz_mounts_entry },
};

static int n_tests;
static int n_failed;

static int read_all(const char *path, uint8_t **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t *buf = NULL;
	size_t size = 0, cap = 0;

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n;

		if (size == cap) {
			uint8_t *nb;

			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap);
			if (!nb)
				abort();
			buf = nb;
		}
		n = read(fd, buf + size, cap - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		size += (size_t)n;
	}
	close(fd);
	*out = buf;
	*len = size;
	return 0;
}

/* Run fn on the file in a child; one TAP line. */
static void replay_one(const char *target, replay_fn fn, const char *path,
		       const char *label)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int status;
	pid_t pid;

	n_tests++;
	if (read_all(path, &data, &len) < 0) {
		printf("not ok %d - %s: %s\n# cannot read: %s\n", n_tests,
		       target, label, strerror(errno));
		n_failed++;
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("not ok %d - %s: %s\n# fork: %s\n", n_tests, target,
		       label, strerror(errno));
		n_failed++;
		free(data);
		return;
	}
	if (pid == 0) {
		alarm(60);
		fn(data, len);
		fflush(NULL);
		_exit(0);
	}
	free(data);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("ok %d - %s: %s\n", n_tests, target, label);
		return;
	}
	n_failed++;
	if (WIFSIGNALED(status))
		printf("not ok %d - %s: %s\n# killed by signal %d (%s)\n",
		       n_tests, target, label, WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
	else
		printf("not ok %d - %s: %s\n# exit status %d\n", n_tests,
		       target, label, WEXITSTATUS(status));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_dir(const char *target, replay_fn fn, const char *kind)
{
	char dir[4096];
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s/%s", FUZZ_DATA_DIR, kind, target);
	d = opendir(dir);
	if (!d)
		return; /* no seeds or regressions for this target */
	while ((de = readdir(d))) {
		char **nn;

		if (de->d_name[0] == '.')
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn)
			abort();
		names = nn;
		names[n] = strdup(de->d_name);
		if (!names[n])
			abort();
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[8192], label[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(label, sizeof(label), "%s/%s", kind, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			replay_one(target, fn, path, label);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	size_t nt = sizeof(replay_targets) / sizeof(replay_targets[0]);

	if (argc >= 2) {
		for (size_t i = 0; i < nt; i++) {
			if (strcmp(argv[1], replay_targets[i].name) != 0)
				continue;
			for (int j = 2; j < argc; j++)
				replay_one(argv[1], replay_targets[i].fn,
					   argv[j], argv[j]);
			printf("1..%d\n", n_tests);
			return n_failed ? 1 : 0;
		}
		fprintf(stderr, "test_fuzz_replay: unknown target `%s`\n",
			argv[1]);
		return 2;
	}
	for (size_t i = 0; i < nt; i++) {
		replay_dir(replay_targets[i].name, replay_targets[i].fn,
			   "seeds");
		replay_dir(replay_targets[i].name, replay_targets[i].fn,
			   "regressions");
	}
	printf("1..%d\n", n_tests);
	return n_failed ? 1 : 0;
}
