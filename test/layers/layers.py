#!/usr/bin/env python3
"""layers.py --src DIR --build DIR [--plant FROM:TO]...

The allowed arrows between fatlink's rooms, written down and checked. A
room is a folder of the source tree, save the ground floor (errors,
buffers, string vectors, aspects), which every stage may use. Which file
calls which comes from the build's objects (nm: a symbol one object needs
and another defines), so it is what the linker sees, not a guess; only
objects whose source still exists count. Fails (exit 1) on

  - a call between rooms the table ARROWS does not allow;
  - a loop between files (files that call each other, directly or round a
    loop), save the loops of KNOWN_LOOPS, which issue 27 takes apart: one
    that grows, or a new one, fails;
  - an #include of another folder's internal header (include/ is public).

--plant FROM:TO adds a call from source file FROM to TO, to show that the
check catches it (a test plants a bad arrow and expects failure)."""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

# The ground floor: the only thing every stage may use.
GROUND = {"wrapper/base.c", "wrapper/aspects.c"}

# Room -> the rooms it may call. Data flows one way: the driver (wrapper)
# runs the stages, a stage never calls a later stage or the driver.
ARROWS = {
    "base": set(),
    "extract": {"base"},
    "devlink": {"base"},
    "aot": {"base"},
    "wrap": {"base"},
    "wrapper": {"base", "extract", "devlink", "aot", "wrap"},
}

# Loops there are today, each as the set of its files; issue 27 removes
# them. A loop may shrink or go; it may not grow, nor may another appear.
KNOWN_LOOPS = [
    {"wrapper/plan.c", "wrapper/plan_aot.c", "wrapper/plan_cache.c",
     "wrapper/plan_emit.c", "wrapper/plan_sycl.c"},
]


def room(path):
    return "base" if path in GROUND else path.split("/")[0]


def objects(src, build):
    """source path (relative) -> its object, for the project's own code."""
    out = {}
    top = os.path.join(build, "CMakeFiles")
    for root, _, files in os.walk(top):
        for f in files:
            if not f.endswith(".c.o"):
                continue
            path = os.path.join(root, f)
            rel = re.sub(r"^[^/]*\.dir/", "", os.path.relpath(path, top))[:-2]
            if room(rel) in ARROWS and os.path.exists(os.path.join(src, rel)):
                out.setdefault(rel, path)
    return out


def calls(objs):
    """file -> the files whose functions or data it uses."""
    nm = shutil.which("nm") or "/usr/lib/llvm-22/bin/llvm-nm"
    defs, needs = {}, collections.defaultdict(set)
    for rel, path in sorted(objs.items()):
        text = subprocess.run([nm, path], stdout=subprocess.PIPE, check=True,
                              encoding="utf-8").stdout
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRGS":
                defs[parts[2]] = rel
            elif len(parts) == 2 and parts[0] == "U":
                needs[rel].add(parts[1])
    edges = collections.defaultdict(set)
    for rel, syms in needs.items():
        for s in syms:
            to = defs.get(s)
            if to and to != rel:
                edges[rel].add(to)
    return edges


def loops(nodes, edges):
    """The strongly connected components of more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(max(1000, 4 * len(nodes)))

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def foreign_includes(src):
    """(file, header) for each #include of another folder's own header."""
    bad = []
    for r in ARROWS:
        if r == "base":
            continue
        for root, _, files in os.walk(os.path.join(src, r)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(root, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                        if not m or "/" not in m.group(1):
                            continue
                        head = os.path.normpath(
                            os.path.join(os.path.dirname(path), m.group(1)))
                        top = os.path.relpath(head, src).split(os.sep)[0]
                        if top not in (r, "include"):
                            bad.append((os.path.relpath(path, src),
                                        m.group(1)))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--plant", action="append", default=[])
    a = ap.parse_args()
    objs = objects(a.src, a.build)
    if not objs:
        sys.exit("layers: no objects of fatlink's sources under %s" % a.build)
    edges = calls(objs)
    for p in a.plant:
        frm, _, to = p.partition(":")
        edges[frm].add(to)
    bad = 0
    arrows = collections.Counter()
    for frm, tos in sorted(edges.items()):
        for to in sorted(tos):
            rf, rt = room(frm), room(to)
            if rf == rt:
                continue
            arrows[(rf, rt)] += 1
            if rt not in ARROWS.get(rf, set()):
                print("layers: %s calls %s: %s may not call %s" %
                      (frm, to, rf, rt))
                bad = 1
    for comp in loops(set(objs) | set(edges), edges):
        if not any(comp <= known for known in KNOWN_LOOPS):
            print("layers: a loop between files: %s" % ", ".join(sorted(comp)))
            bad = 1
        else:
            print("layers: known loop (issue 27): %s" %
                  ", ".join(sorted(comp)))
    for f, h in foreign_includes(a.src):
        print("layers: %s includes another folder's header %s" % (f, h))
        bad = 1
    for (rf, rt), n in sorted(arrows.items()):
        print("arrow %s -> %s (%d file pairs)" % (rf, rt, n))
    return bad


if __name__ == "__main__":
    sys.exit(main())
