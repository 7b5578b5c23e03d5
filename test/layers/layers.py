#!/usr/bin/env python3
"""layers.py --src DIR --build DIR [--plant FROM:TO]...
                                  [--caught FROM:TO=MESSAGE]...
   layers.py --src DIR --map

The rooms of fatlink and the allowed arrows between them, written down and
checked. A room is a folder of the source tree, its subfolders apart (the
driver is wrapper/, the planners wrapper/plan/). Which file calls which
comes from the build's objects (nm: a symbol one object needs and another
defines), so it is what the linker sees, not a guess; which file includes
which comes from the #include lines, resolved as the compiler does. Fails
(exit 1) on

  - a call or an include between rooms that ROOMS does not allow;
  - a planner calling another planner (PLANNERS), or the planners' shared
    core calling any planner;
  - a file calling a file of a later tier of its room (TIERS: devlink's
    facts, features, pipelines), or a file of such a room with no tier;
  - a loop between files: files that call each other, directly or round a
    loop;
  - a room holding more than MAX_SHARE of the project's lines;
  - docs/design.md's folder map (between its "layers:" markers) differing
    from the one --map prints from ROOMS.

--plant FROM:TO adds a call from source file FROM to file TO (an include
when TO is a header). --caught FROM:TO=MESSAGE plants it in a copy of the
graphs read for the real tree and fails unless the check then says
MESSAGE: ctest plants bad arrows this way, all from one reading of the
objects. --map prints the folder map for docs/design.md."""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

# Room: what it holds, the rooms it may call and include (its own always),
# and the rooms whose public header it may include for their types alone.
# Data flows one way: the driver runs the planners, the planners add jobs
# to the runner and call the stages, a stage calls only the ground floor.
STAGES = {"extract", "devlink", "aot", "wrap"}
ROOMS = {
    "wrapper": (
        "the driver: main, options, the link line's inputs, the host "
        "link's command line, fatlink as the host linker, the launcher, "
        "the reproducer",
        {"wrapper/fatpack", "wrapper/plan", "wrapper/cache", "wrapper/run",
         "wrapper/base"} | STAGES),
    "wrapper/fatpack": (
        "the tools beside the link: fatpack, and fatlink as DPC++'s "
        "sycl-post-link",
        {"wrapper/plan", "wrapper/cache", "wrapper/run", "wrapper/base"}
        | STAGES),
    "wrapper/plan": (
        "the planners: a shared core (targets, wrap, host link, cache keys, "
        "FPGA lists and archives, device requirements, GPU device links and "
        "the device tools' arguments) and one planner per "
        "offload kind (SYCL, FPGA binaries, OpenMP, CUDA and HIP)",
        {"wrapper/cache", "wrapper/run", "wrapper/base"} | STAGES),
    "wrapper/cache": (
        "the cache of device results: the store and its BLAKE2b hash",
        {"wrapper/run", "wrapper/base"}),
    "wrapper/run": (
        "the runner: job graph and scheduler, jobserver, work in a forked "
        "child, temporary files, the process's memory bound and standard "
        "error; it knows jobs by their kinds only",
        {"wrapper/base"}),
    "extract": (
        "input formats (one file each), archives resolved as a linker "
        "does, the images a linked program registers",
        {"wrapper/base"}),
    "devlink": (
        "IR link, post-link (split, checks, property sets, specialization "
        "constants, virtual functions, DPC++'s fix-ups), SPIR-V, LLVM "
        "options",
        {"wrapper/base"}),
    "aot": (
        "device configuration, aspect filter, AOT back ends (ocloc, "
        "OpenCL CPU and FPGA emulator, aoc)",
        {"wrapper/base"}),
    "wrap": (
        "registration modules (SYCL, OpenMP, CUDA and HIP)",
        {"wrapper/base"}, {"devlink"}),
    "wrapper/base": (
        "the ground floor: errors, buffers, string vectors, files, SYCL "
        "aspects, command lines; the only room every other may use",
        set()),
}
# The public headers (include/) are their rooms' faces.
PUBLIC = {"include/lw_base.h": "wrapper/base", "include/ex.h": "extract",
          "include/dl.h": "devlink", "include/aot.h": "aot",
          "include/wrp.h": "wrap"}
# Include paths beside a file's own folder (CMakeLists.txt).
INCLUDE_DIRS = ["wrapper", "include"]

# wrapper/plan: each planner's files; the rest of the room is the core
# they share, which calls no planner.
PLANNERS = {
    "sycl": {"wrapper/plan/sycl.c", "wrapper/plan/sycl_emit.c",
             "wrapper/plan/sycl_aot.c", "wrapper/plan/sycl_spirv.c",
             "wrapper/plan/sycl_parts.c"},
    "sycl-native": {"wrapper/plan/sycl_native.c"},
    "fpga": {"wrapper/plan/fpga.c"},
    "openmp": {"wrapper/plan/openmp.c"},
    "cuda": {"wrapper/plan/cuda.c"},
}

# Tiers inside a room, earliest first: a file calls files of its own tier
# or an earlier one, never a later one. devlink/: the facts the post-link
# reads (a function's kind and metadata, global variables' attributes, the
# call graph, property sets as values), the features that each write their
# own results, and the pipelines that run them (the IR link, split.c's
# post-link, code generation). Every file of such a room needs a tier.
TIERS = {
    "devlink": [
        ("fact", {"metadata.c", "gattrs.c", "propset.c", "callgraph.c",
                  "linkage.c"}),
        ("feature", {"virtual.c", "imports.c", "printf.c", "specconst.c",
                     "nvptxmath.c",
                     "checks.c", "props.c", "ctprops.c", "decorations.c",
                     "initarray.c", "spirv.c", "spirvmerge.c", "itt.c",
                     "sanitizer.c"}),
        ("pipeline", {"link.c", "entries.c", "modules.c", "split.c", "units.c",
                      "codegen.c", "wrapped.c", "llvmopts.c", "parts.c"}),
    ],
}

MAX_SHARE = 0.35


def may_call(r):
    return ROOMS[r][1]


def may_include(r):
    return ROOMS[r][1] | (ROOMS[r][2] if len(ROOMS[r]) > 2 else set())


def room(path):
    return PUBLIC.get(path, os.path.dirname(path))


def planner(path):
    for name, files in PLANNERS.items():
        if path in files:
            return name
    return "core" if room(path) == "wrapper/plan" else None


def tier(path):
    """(index, name) of the file's tier in its room, or None."""
    for i, (name, files) in enumerate(TIERS.get(room(path), [])):
        if os.path.basename(path) in files:
            return i, name
    return None


def sources(src):
    """Every .c and .h of the rooms and include/, relative to src."""
    out = []
    for top in sorted({r.split("/")[0] for r in ROOMS} | {"include"}):
        for root, _, files in os.walk(os.path.join(src, top)):
            out += [os.path.relpath(os.path.join(root, f), src)
                    for f in files if f.endswith((".c", ".h"))]
    return sorted(out)


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
            if room(rel) in ROOMS and os.path.exists(os.path.join(src, rel)):
                out.setdefault(rel, path)
    return out


def calls(objs):
    """file -> the files whose functions or data it uses, from one nm over
    every object (POSIX format, each line led by its object's path)."""
    nm = shutil.which("nm") or "/usr/lib/llvm-22/bin/llvm-nm"
    rel_of = {path: rel for rel, path in objs.items()}
    text = subprocess.run([nm, "-A", "--format=posix"] + sorted(rel_of),
                          stdout=subprocess.PIPE, check=True,
                          encoding="utf-8").stdout
    defs, needs = {}, collections.defaultdict(set)
    for line in text.splitlines():
        path, sep, rest = line.partition(": ")
        parts = rest.split()
        if not sep or path not in rel_of or len(parts) < 2:
            continue
        rel = rel_of[path]
        if parts[1] in ("T", "D", "B", "R", "G", "S"):
            defs[parts[0]] = rel
        elif parts[1] == "U":
            needs[rel].add(parts[0])
    edges = collections.defaultdict(set)
    for rel, syms in needs.items():
        for s in syms:
            to = defs.get(s)
            if to and to != rel:
                edges[rel].add(to)
    return edges


def includes(src, files):
    """file -> the project's headers it includes (as the compiler finds
    them: its own folder first, then the include paths)."""
    out = collections.defaultdict(set)
    for rel in files:
        with open(os.path.join(src, rel), encoding="utf-8",
                  errors="replace") as fh:
            for line in fh:
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                for base in [os.path.dirname(rel)] + INCLUDE_DIRS:
                    head = os.path.normpath(os.path.join(base, m.group(1)))
                    if os.path.exists(os.path.join(src, head)):
                        if head != rel:
                            out[rel].add(head)
                        break
    return out


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


def folder_map():
    """docs/design.md's folder map, from ROOMS."""
    lines = ["| room | what it holds | may call |", "| --- | --- | --- |"]
    for r, entry in ROOMS.items():
        callees = ", ".join("`%s/`" % c for c in sorted(may_call(r)))
        types = sorted(may_include(r) - may_call(r))
        if types:
            callees += "; the types of " + ", ".join("`%s/`" % t
                                                     for t in types)
        lines.append("| `%s/` | %s | %s |" % (r, entry[0],
                                               callees or "nothing"))
    return "\n".join(lines) + "\n"


def check_readme(src):
    path = os.path.join(src, "docs", "design.md")
    text = open(path, encoding="utf-8").read()
    m = re.search(r"<!-- layers:begin -->\n(.*?)<!-- layers:end -->", text,
                  re.S)
    if not m:
        print("layers: docs/design.md has no folder map between <!-- "
              "layers:begin --> and <!-- layers:end -->")
        return 1
    if m.group(1) != folder_map():
        print("layers: docs/design.md's folder map differs from layers.py's "
              "table (print it with layers.py --map)")
        return 1
    return 0


def arrow_faults(files, objs, edges, incs):
    """The faults of the arrows (calls, includes, planners, tiers, loops),
    one line each, and the count of file pairs per pair of rooms."""
    out = []
    arrows = collections.Counter()
    for what, graph in (("calls", edges), ("includes", incs)):
        for frm, tos in sorted(graph.items()):
            for to in sorted(tos):
                rf, rt = room(frm), room(to)
                if rf == rt or rf not in ROOMS:
                    continue
                if what == "calls":
                    arrows[(rf, rt)] += 1
                allowed = may_call(rf) if what == "calls" else may_include(rf)
                if rt not in allowed:
                    out.append("layers: %s %s %s: %s/ may not use %s/" %
                               (frm, what, to, rf, rt))
    for frm, tos in sorted(edges.items()):
        for to in sorted(tos):
            pf, pt = planner(frm), planner(to)
            if pf and pt and pt not in (pf, "core"):
                out.append("layers: %s calls %s: the %s %s calls the %s "
                           "planner" % (frm, to, pf,
                                        "core" if pf == "core" else
                                        "planner", pt))
    for f in files:
        if f.endswith(".c") and room(f) in TIERS and not tier(f):
            out.append("layers: %s has no tier in layers.py's TIERS" % f)
    for frm, tos in sorted(edges.items()):
        for to in sorted(tos):
            tf, tt = tier(frm), tier(to)
            if tf and tt and room(frm) == room(to) and tt[0] > tf[0]:
                out.append("layers: %s calls %s: a %s calls a %s" %
                           (frm, to, tf[1], tt[1]))
    for comp in loops(set(objs) | set(edges), edges):
        out.append("layers: a loop between files: %s" %
                   ", ".join(sorted(comp)))
    return out, arrows


def planted(edges, incs, plant):
    """Copies of the graphs with the arrow FROM:TO added (an include when
    TO is a header)."""
    frm, _, to = plant.partition(":")
    edges = collections.defaultdict(set, {k: set(v) for k, v in
                                          edges.items()})
    incs = collections.defaultdict(set, {k: set(v) for k, v in
                                         incs.items()})
    (incs if to.endswith(".h") else edges)[frm].add(to)
    return edges, incs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--build")
    ap.add_argument("--plant", action="append", default=[])
    ap.add_argument("--caught", action="append", default=[],
                    metavar="FROM:TO=MESSAGE")
    ap.add_argument("--map", action="store_true")
    a = ap.parse_args()
    if a.map:
        sys.stdout.write(folder_map())
        return 0
    if not a.build:
        ap.error("--build is needed to check")
    objs = objects(a.src, a.build)
    if not objs:
        sys.exit("layers: no objects of fatlink's sources under %s" % a.build)
    # One reading of the objects and the sources serves the real tree and
    # every planted one.
    files = sources(a.src)
    edges = calls(objs)
    incs = includes(a.src, files)
    for p in a.plant:
        edges, incs = planted(edges, incs, p)
    faults, arrows = arrow_faults(files, objs, edges, incs)
    for line in faults:
        print(line)
    bad = 1 if faults else 0
    lines = collections.Counter()
    for f in files:
        with open(os.path.join(a.src, f), "rb") as fh:
            lines[os.path.dirname(f)] += fh.read().count(b"\n")
    total = sum(lines.values())
    for r, n in sorted(lines.items(), key=lambda x: -x[1]):
        share = n / total
        print("room %-16s %6d lines %5.1f%%" % (r + "/", n, 100 * share))
        if share > MAX_SHARE:
            print("layers: %s/ holds %.1f%% of the project's %d lines (at "
                  "most %d%%)" % (r, 100 * share, total, 100 * MAX_SHARE))
            bad = 1
    bad |= check_readme(a.src)
    for (rf, rt), n in sorted(arrows.items()):
        print("arrow %s/ -> %s/ (%d file pairs)" % (rf, rt, n))
    # A planted bad arrow must be caught, with the message given.
    for c in a.caught:
        plant, _, want = c.partition("=")
        got = [m for m in arrow_faults(files, objs,
                                       *planted(edges, incs, plant))[0]
               if m not in faults]
        if any(want in m for m in got):
            print("planted %s: caught: %s" %
                  (plant, next(m for m in got if want in m)))
        else:
            print("layers: planted %s not caught as '%s' (%s)" %
                  (plant, want, "; ".join(got) or "nothing caught"))
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
