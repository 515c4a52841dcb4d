#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-layering.py -- find circles between the source files of agentrun.

Usage: tests/static/check-layering.py [--srcdir DIR] [--builddir DIR]
                                      [--baseline FILE] [--verbose]

Two graphs, both between files of runtime/, spec/ and hooks/ (a file is
named by its path without the extension, so foo.c and foo.h are one node):

  include graph  foo.c or foo.h has '#include "bar.h"'  ->  foo -> bar
  call graph     foo.o references a symbol that bar.o defines (nm)
                                                        ->  foo -> bar

A circle is a strongly connected component of more than one node.  Every
circle is printed with one path through it.  The exit status is 1 when a
circle is found that the baseline file does not list (one circle a line:
the sorted node names separated by spaces, '#' starts a comment), 0
otherwise; circles the baseline lists but that are gone are reported so
the baseline can shrink.  Without --builddir only the include graph is
checked.

Besides circles, the folders of runtime/sandbox/ have an order (FOLDER_RANK):
a file may include or call only files of its own folder or of a folder of
lower rank (arrows point down only: the top level -> control/ -> audit/ ->
egress/, overlay/ -> protect/ -> runtime/lib, spec/). runtime/lib, spec/
and hooks/ never reach into runtime/sandbox/ or runtime/cli/. A new folder
of runtime/sandbox/ must be given its rank here.
"""

import argparse
import os
import re
import subprocess
import sys

DIRS = ("runtime", "spec", "hooks")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


# Rank of each area; an edge must go from a higher rank to a lower one, or
# stay within one area. runtime/cli sits above everything.
FOLDER_RANK = {
    "runtime/cli": 100,
    "runtime/sandbox": 50,          # the top level: the plan and its assembly
    "runtime/sandbox/ui": 45,       # the web dashboard: below the top (its port check), above control/
    "runtime/sandbox/watch": 60,    # the terminal dashboard
    "runtime/sandbox/control": 40,
    "runtime/sandbox/audit": 30,
    "runtime/sandbox/egress": 20,
    "runtime/sandbox/overlay": 20,
    "runtime/sandbox/vm": 20,       # --vm: what the guest needs on the host; only runtime/lib below
    "runtime/sandbox/protect": 10,
    # Below the sandbox: one level as far as this order goes (their own
    # order is the circle check's business).
    "runtime/lib": 5,
    "runtime/init": 5,
    "hooks": 5,
    "spec": 5,
}


def area_of(node):
    d = os.path.dirname(node)
    return d


def rank_violations(graph):
    """Edges that point up or sideways between areas of FOLDER_RANK."""
    bad = []
    for n, outs in sorted(graph.items()):
        a = area_of(n)
        for m in sorted(outs):
            b = area_of(m)
            if a == b:
                continue
            ra, rb = FOLDER_RANK.get(a), FOLDER_RANK.get(b)
            if ra is None or rb is None:
                if a.startswith("runtime/sandbox") or b.startswith("runtime/sandbox"):
                    bad.append(f"{n} -> {m}: folder {a if ra is None else b} has no rank in FOLDER_RANK")
                continue
            if ra == rb == 5:
                continue
            if ra <= rb:
                bad.append(f"{n} -> {m}: {a} (rank {ra}) may not depend on {b} (rank {rb})")
    return bad


def node_of(path, root):
    """foo.c, foo.h and foo_internal.h (the header a file shares only with
    its own helpers) are one node: foo."""
    rel = os.path.splitext(os.path.relpath(path, root))[0]
    if rel.endswith("_internal"):
        rel = rel[: -len("_internal")]
    return rel


def sources(root):
    for d in DIRS:
        for dirpath, _dirs, files in os.walk(os.path.join(root, d)):
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.join(dirpath, f)


def include_graph(root):
    # Map a header's basename and its path relative to each source dir.
    headers = {}
    for p in sources(root):
        if p.endswith(".h"):
            headers.setdefault(os.path.basename(p), []).append(p)
    graph = {}
    for p in sources(root):
        n = node_of(p, root)
        graph.setdefault(n, set())
        with open(p, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE_RE.findall(text):
            # Resolve as the compiler would: next to the file first, then
            # by basename anywhere in the tree (-I of each source dir).
            cand = os.path.normpath(os.path.join(os.path.dirname(p), inc))
            if not os.path.exists(cand):
                hits = headers.get(os.path.basename(inc), [])
                if len(hits) != 1:
                    continue
                cand = hits[0]
            m = node_of(cand, root)
            if m != n:
                graph[n].add(m)
    return graph


def call_graph(root, builddir):
    objs = []
    for d in DIRS:
        for dirpath, _dirs, files in os.walk(os.path.join(builddir, d)):
            for f in files:
                # Objects of the binary and libraries only: automake names
                # per-target objects target-file.o; skip fuzz/test objects.
                if f.endswith(".o"):
                    objs.append(os.path.join(dirpath, f))
    defined = {}
    undefined = {}
    for o in objs:
        node = node_of(o, builddir)
        base = os.path.basename(node)
        if "-" in base:  # per-target object (e.g. libfoo_a-bar.o)
            base = base.split("-", 1)[1]
            node = os.path.join(os.path.dirname(node), base)
        out = subprocess.run(["nm", "--defined-only", "-g", o],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            # runtime/init is its own program (libc-free: it defines memcpy
            # and the like); nothing of agentrun calls into it.
            if len(parts) == 3 and not node.startswith("runtime/init/"):
                defined.setdefault(parts[2], set()).add(node)
        out = subprocess.run(["nm", "-u", o], capture_output=True, text=True,
                             check=True).stdout
        undefined.setdefault(node, set()).update(
            line.split()[-1] for line in out.splitlines() if line.strip())
    graph = {}
    for node, syms in undefined.items():
        graph.setdefault(node, set())
        for s in syms:
            for d in defined.get(s, ()):
                if d != node:
                    graph[node].add(d)
    return graph


def sccs(graph):
    """Tarjan's algorithm, iterative."""
    index = {}
    low = {}
    on = set()
    stack = []
    out = []
    counter = [0]
    nodes = set(graph) | {m for v in graph.values() for m in v}
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def a_cycle(graph, comp):
    """One closed path through the component, for the message."""
    members = set(comp)
    start = comp[0]
    # BFS back to start.
    prev = {}
    frontier = [start]
    seen = {start}
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in seen:
                    seen.add(w)
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def load_baseline(path):
    known = set()
    if not path or not os.path.exists(path):
        return known
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line:
                known.add(" ".join(sorted(line.split())))
    return known


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--srcdir", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--builddir")
    ap.add_argument("--baseline")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    known = load_baseline(args.baseline)
    graphs = [("include", include_graph(args.srcdir))]
    if args.builddir:
        graphs.append(("call", call_graph(args.srcdir, args.builddir)))

    found = set()
    new = 0
    for name, g in graphs:
        for comp in sccs(g):
            key = " ".join(comp)
            found.add(key)
            mark = "known" if key in known else "NEW"
            if key not in known:
                new += 1
            print(f"layering: {name} circle ({mark}, {len(comp)} files): "
                  + " -> ".join(a_cycle(g, comp)))
            if args.verbose:
                print("    members: " + key)
    for name, g in graphs:
        for v in rank_violations(g):
            new += 1
            print(f"layering: {name} edge against the folder order: {v}")
    for key in sorted(known - found):
        print(f"layering: baseline circle gone, drop it from the baseline: {key}")
    print(f"layering: {len(found)} circle(s), {new} not in the baseline")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
