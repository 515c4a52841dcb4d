#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The tests' wait_until retries a command, but bash expands its arguments
once, before the first try: `wait_until 5 test "$(readlink ...)" != X`
compares the same two strings fifty times (CI's run of test_namespaces
waited 5 s for a namespace it had read before the holder's unshare).
A value that must be read anew each try goes inside sh -c '...' or a
function; a value fixed for the wait is computed before it, in a local.

Usage: lint_wait_until.py FILE...   (prints each offending line, exit 1)
"""
import re
import sys


def offending(line):
    if line.lstrip().startswith("#"):
        return False
    m = re.search(r"\bwait_until\s+\S+\s+(.*)", line)
    if not m:
        return False
    rest = re.sub(r"'[^']*'", "''", m.group(1))
    # what follows ||, && or ; is not wait_until's argument
    rest = re.split(r"\|\||&&|;", rest)[0]
    return re.search(r"(?<!\\)(\$\(|`)", rest) is not None


def main(paths):
    bad = 0
    for path in paths:
        with open(path, errors="replace") as f:
            for n, line in enumerate(f, 1):
                if offending(line):
                    print(f"{path}:{n}: wait_until's argument expanded once: {line.strip()}")
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
