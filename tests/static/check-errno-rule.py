#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-errno-rule.py -- the errno text of an error message, by one rule.

Usage: tests/static/check-errno-rule.py [--srcdir DIR] [FILE...]
       tests/static/check-errno-rule.py --self-test

The rule (runtime/lib/error.h): an error message ends in the errno text
(": No such file or directory") exactly when the code it carries is the
errno of the call that failed.  So every call

  ar_error_set(err, CODE, ...)        CODE must be an errno form
  ar_error_set_plain(err, CODE, ...)  CODE must be a plain code

and any other CODE is a finding.  The errno forms:

  errno                     the failed call's errno, read at once
  f(...)                    f an API that returns a positive errno
                            (pthread_*, posix_spawn*, posix_fallocate,
                            posix_fadvise)
  NAME                      NAME assigned an errno form earlier in the
                            function (e = errno, saved before a call that
                            may change errno; r = pthread_create(...);
                            r = mkdir(...) < 0 ? errno : 0)
  -NAME                     NAME = f(...) earlier in the function, f an API
                            that returns a negative errno (seccomp_*, of
                            libseccomp; sd.sd_bus_*, sd-bus through
                            cgroup_systemd.c's table)
  -NAME->error              the negative errno of a netlink error message
  NAME                      a parameter: every call of its function in the
                            file passes an errno form or an E* constant
                            there, at least one an errno form
  C ? A : B                 A or B an errno form, the other one too or an
                            E* constant (the call failed without an errno,
                            e.g. a short read)

The plain codes: an E* constant, 0, or X.code / X->code (the code of
another struct ar_error, whose message is already in the text).

Files: every .c under runtime/, spec/ and hooks/ (or the FILEs given).
The exit status is 1 when a call breaks the rule (each printed as
path:line: message), 0 otherwise.  --self-test runs the checker over
tests/static/errno-rule-sample.c: the line after each comment line
"/* expect: flag */" must be flagged and no other, so the checker cannot
pass by finding nothing.
"""

import argparse
import os
import re
import sys

DIRS = ("runtime", "spec", "hooks")
CALL_RE = re.compile(r"\bar_error_set(_plain)?\s*\(")
POSITIVE_ERRNO_API = r"(?:pthread_\w+|posix_spawn\w*|posix_fallocate|posix_fadvise)"
NEGATIVE_ERRNO_API = r"(?:seccomp_\w+|sd\.sd_bus_\w+)"
IDENT = r"[A-Za-z_]\w*"


def strip_comments(text):
    """The text with comments blanked (newlines kept, so line numbers stay)
    and the contents of string and character literals blanked (quotes
    kept), so that neither can look like code."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def call_args(text, start):
    """The top-level arguments of the call whose '(' is at text[start]."""
    depth, args, cur = 0, [], start + 1
    for i in range(start, len(text)):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[cur:i])
                return args
        elif c == "," and depth == 1:
            args.append(text[cur:i])
            cur = i + 1
    return args


def split_conditional(code):
    """(cond, a, b) for a top-level 'cond ? a : b', else None."""
    depth, q = 0, -1
    for i, c in enumerate(code):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "?" and depth == 0 and q < 0:
            q = i
        elif c == ":" and depth == 0 and q >= 0:
            return code[:q].strip(), code[q + 1 : i].strip(), code[i + 1 :].strip()
    return None


def is_constant(code):
    return bool(re.fullmatch(r"E[A-Z0-9]+|0", code))


def is_carried_code(code):
    return bool(re.fullmatch(rf"{IDENT}(?:(?:\.|->){IDENT})*(?:\.|->)code", code))


def assignments(name, before):
    """The expressions assigned to name in before ('name = EXPR;', also in
    its declaration), without compound assignments or comparisons."""
    return [m.group(1).strip() for m in
            re.finditer(rf"(?<![\w.>]){name}\s*=(?!=)\s*([^;]+);", before)]


def param_index(name, text, fstart):
    """(function name, index) when name is a parameter of the function
    whose body opens at text[fstart] ('\n{'), else None."""
    m = re.search(rf"\b({IDENT})\s*\(([^;{{}}]*)\)\s*$", text[:fstart])
    if not m:
        return None
    for i, p in enumerate(m.group(2).split(",")):
        if re.search(rf"\b{name}\s*$", p.strip()):
            return m.group(1), i
    return None


def callers_pass_errno(func, index, text, depth):
    """Every call of func in text passes an errno form or an E* constant
    as argument index, at least one an errno form."""
    n = 0
    for m in re.finditer(rf"\b{func}\s*\(", text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not text[line_start].isspace():
            continue  # its definition or declaration (column 0)
        args = call_args(text, m.end() - 1)
        if len(args) <= index:
            return False
        arg = " ".join(args[index].split())
        if is_errno_form(arg, text, m.start(), depth + 1):
            n += 1
        elif not is_constant(arg) or arg == "0":
            return False
    return n > 0


def is_errno_form(code, text, pos, depth=0):
    """code, an argument at text[pos], is the errno of a failed call."""
    if depth > 4:
        return False
    fstart = text.rfind("\n{", 0, pos)
    before = text[fstart if fstart >= 0 else 0 : pos]
    if code == "errno":
        return True
    if re.fullmatch(rf"{POSITIVE_ERRNO_API}\s*\(.*\)", code, re.S):
        return True
    if re.fullmatch(IDENT, code):
        if any(is_errno_form(e, text, pos, depth + 1) for e in assignments(code, before)):
            return True
        if fstart >= 0:
            pi = param_index(code, text, fstart)
            if pi and callers_pass_errno(pi[0], pi[1], text, depth):
                return True
        return False
    m = re.fullmatch(rf"-\s*({IDENT})", code)
    if m:
        return any(re.fullmatch(rf"{NEGATIVE_ERRNO_API}\s*\(.*\)", e, re.S)
                   for e in assignments(m.group(1), before))
    if re.fullmatch(rf"-\s*{IDENT}->error", code):
        return True
    cond = split_conditional(code)
    if cond:
        _c, a, b = cond
        a_ok = is_errno_form(a, text, pos, depth + 1)
        b_ok = is_errno_form(b, text, pos, depth + 1)
        return (a_ok or b_ok) and (a_ok or is_constant(a)) and (b_ok or is_constant(b))
    return False


def check_text(text):
    """[(line, message)] for the calls of text that break the rule."""
    clean = strip_comments(text)
    findings = []
    for m in CALL_RE.finditer(clean):
        open_paren = m.end() - 1
        args = call_args(clean, open_paren)
        line = clean.count("\n", 0, m.start()) + 1
        name = "ar_error_set_plain" if m.group(1) else "ar_error_set"
        if len(args) < 3:
            findings.append((line, f"{name}: cannot read its arguments"))
            continue
        code = " ".join(args[1].split())
        errno_form = is_errno_form(code, clean, m.start())
        plain_form = is_constant(code) or is_carried_code(code)
        if name == "ar_error_set" and not errno_form:
            if plain_form:
                findings.append(
                    (line, f"ar_error_set with the plain code {code}: "
                     "use ar_error_set_plain (the errno text is for the "
                     "errno of a failed call)"))
            else:
                findings.append(
                    (line, f"ar_error_set with code '{code}': not an errno "
                     "form (errno, a variable saved from errno, -r of a "
                     "negative-errno API; see tests/static/check-errno-rule.py)"))
        elif name == "ar_error_set_plain" and not plain_form:
            if errno_form:
                findings.append(
                    (line, f"ar_error_set_plain with the errno form {code}: "
                     "use ar_error_set (the errno of a failed call gets its text)"))
            else:
                findings.append(
                    (line, f"ar_error_set_plain with code '{code}': not a "
                     "plain code (an E* constant, 0 or another error's .code)"))
    return findings


def tree_files(root):
    for d in DIRS:
        for dirpath, _dirs, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if f.endswith(".c"):
                    yield os.path.join(dirpath, f)


def self_test(script_dir):
    sample = os.path.join(script_dir, "errno-rule-sample.c")
    with open(sample, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    want = {i + 2 for i, l in enumerate(lines) if l.strip() == "/* expect: flag */"}
    got = {line for line, _msg in check_text(text)}
    ok = True
    if not want:
        print(f"{sample}: no call is marked to be flagged")
        ok = False
    for line in sorted(want - got):
        print(f"{sample}:{line}: not flagged, but marked to be")
        ok = False
    for line in sorted(got - want):
        print(f"{sample}:{line}: flagged, but not marked to be")
        ok = False
    print(f"errno rule self-test: {len(want)} bad call(s) in the sample, "
          f"{len(want & got)} flagged, {len(got - want)} good one(s) flagged"
          f"{'' if ok else ': FAILED'}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--srcdir", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    if a.self_test:
        return 0 if self_test(os.path.dirname(os.path.abspath(__file__))) else 1
    root = os.path.abspath(a.srcdir)
    files = a.files or list(tree_files(root))
    bad = calls = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        calls += len(CALL_RE.findall(strip_comments(text)))
        for line, msg in check_text(text):
            print(f"{os.path.relpath(path, root)}:{line}: {msg}")
            bad += 1
    print(f"errno rule: {calls} calls in {len(files)} files, {bad} finding(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
