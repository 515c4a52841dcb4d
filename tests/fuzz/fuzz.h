/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Common bits of the libFuzzer targets in tests/fuzz/.
 *
 * Each fuzz_<name>.c defines its entry point as
 *
 *   int FUZZ_ENTRY(const uint8_t *data, size_t size)
 *
 * which is LLVMFuzzerTestOneInput when built for libFuzzer
 * (build-and-run.sh) and a per-target name when the file is #included by
 * the plain replay driver test_fuzz_replay.c (built by `make check` with the
 * configured compiler). Helpers in a target file must be static and
 * carry the target's prefix so that all targets fit into one replay
 * binary.
 *
 * FUZZ_CHECK(cond): a property the code under test must keep; a violation
 * aborts, which libFuzzer reports as a crash.
 */
#ifndef AGENTRUN_FUZZ_H
#define AGENTRUN_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#endif

#define FUZZ_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: property violated: %s\n",      \
				__FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

/*
 * Leaks inside libseccomp itself are not ours: libseccomp 2.5.4 loses two
 * 96-byte tree nodes when a rule with an argument condition is added for
 * accept, socket and socketcall together on x86 (the socketcall
 * multiplexer); reproduced with the bare libseccomp API, see
 * regressions/fuzz_seccomp/leak-libseccomp-socketcall.json. Used by
 * LeakSanitizer when the binary is built with ASan, ignored otherwise.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libseccomp.so\n";
}

/* The input as a NUL-terminated string (malloc'd; embedded NULs stay and
 * simply end the string early). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
