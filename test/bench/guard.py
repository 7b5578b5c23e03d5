#!/usr/bin/env python3
"""guard.py --old REV | --old-build DIR [--build DIR] [--shapes S,...]
           [--runs R] [--seed N] [--slower PCT]

The regression guard: links the same programs with this build's fatlink and
with an earlier one (the commit or tag REV, built here in a temporary git
worktree, or a build directory of it), alternating, R times each after a
warm-up round, and prints per shape the median wall time, CPU time (user +
system of the whole tree) and peak memory of both and their ratios; a shape
where this build is more than PCT percent (default 3) slower in wall or CPU
time, or uses more memory, is named at the end, and the exit status is 1.
Every link must succeed.

Shapes (all by default), each a program this script writes and compiles
with clang++-22 -fsycl -c:
  light      100 units x 4 light kernels (a loop over a static polynomial
             helper each)
  real100x4  real_link.py's program of 100 units x 4 kernels (helpers with
             loops, math built-ins, structs, mixed sizes, shared helpers)
  real10x40  its 10 x 40
  real400x10 its 4,000 kernels
  real1x2000 one unit of 2,000 kernels
  debug      real100x4 compiled with -g
  aot        20 units of the light program split per kernel, AOT-compiled
             for three Intel GPUs (libocloc in process: 240 compiles)
A new --seed writes programs the figures have not seen."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchutil import build_program, medians, run_timed  # noqa: E402
import real_link  # noqa: E402
SRC = os.path.dirname(os.path.dirname(HERE))
SHAPES = ["light", "real100x4", "real10x40", "real400x10", "real1x2000",
          "debug", "aot"]
AOT_DEVICES = "intel_gpu_skl,intel_gpu_tgllp,intel_gpu_acm_g10"


def light_tu(i, kernels):
    out = ["template <typename N, typename F>",
           "[[clang::sycl_kernel_entry_point(N)]] void st(F f) { f(); }",
           "static float poly_%d(float x, int d) {" % i,
           "  float r = 0.0f;",
           "  for (int j = 0; j < d; j++)",
           "    r = r * x + (float)(j + %d);" % i,
           "  return r;",
           "}"]
    out += ["struct K%d_%d;" % (i, j) for j in range(kernels)]
    out.append("void run_%d(float *p, int n) {" % i)
    for j in range(kernels):
        out.append("  st<K%d_%d>([=]() { for (int x = 0; x < n; x++) "
                   "p[x] = poly_%d(p[x], %d + x %% 3); });" % (i, j, i, j + 3))
    out.append("}")
    return "\n".join(out) + "\n"


def make_shape(work, shape, seed):
    """Writes and compiles the shape's program in `work`; returns the
    argv clang++-22 gives the wrapper and fatlink's extra options."""
    if shape in ("light", "aot"):
        srcs = []
        for i in range(20 if shape == "aot" else 100):
            p = os.path.join(work, "tu%d.cpp" % i)
            with open(p, "w") as f:
                f.write(light_tu(i, 4))
            srcs.append(p)
        main_cpp = os.path.join(work, "main.cpp")
        with open(main_cpp, "w") as f:
            f.write("int main() { return 0; }\n")
        _, wargs = build_program(work, srcs + [main_cpp], SRC)
        extra = (["--sycl-module-split-mode=per_kernel",
                  "--sycl-targets=" + AOT_DEVICES] if shape == "aot" else [])
        return wargs, extra
    dims = {"real100x4": (100, 4), "real10x40": (10, 40),
            "real400x10": (400, 10), "real1x2000": (1, 2000),
            "debug": (100, 4)}[shape]
    flags = ("-O2", "-g") if shape == "debug" else ("-O2",)
    _, wargs = real_link.make_program(work, dims[0], dims[1], seed, flags)
    return wargs, []


def build_old(rev, where):
    """A worktree of `rev` under `where`, with fatlink built in it."""
    tree = os.path.join(where, "old")
    subprocess.check_call(["git", "-C", SRC, "worktree", "add", "--detach",
                           "-f", tree, rev], stdout=subprocess.DEVNULL)
    build = os.path.join(tree, "build")
    subprocess.check_call(["cmake", "-S", tree, "-B", build, "-G", "Ninja",
                           "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                           "-DBUILD_TESTING=OFF"], stdout=subprocess.DEVNULL)
    subprocess.check_call(["ninja", "-C", build, "bin/fatlink",
                           "bin/fatlink-core"], stdout=subprocess.DEVNULL)
    return tree, build


def main():
    ap = argparse.ArgumentParser()
    old = ap.add_mutually_exclusive_group(required=True)
    old.add_argument("--old", help="an earlier commit or tag, built here")
    old.add_argument("--old-build", help="a build directory of one")
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--slower", type=float, default=3.0)
    a = ap.parse_args()
    shapes = a.shapes.split(",")
    for s in shapes:
        if s not in SHAPES:
            ap.error("unknown shape %s (one of %s)" % (s, ", ".join(SHAPES)))
    work = tempfile.mkdtemp(prefix="fatlink-guard-")
    tree = None
    try:
        if a.old:
            tree, old_build = build_old(a.old, work)
        else:
            old_build = os.path.abspath(a.old_build)
        builds = {"new": os.path.abspath(a.build), "old": old_build}
        tmp = os.path.join(work, "tmp")
        os.makedirs(tmp)
        env = dict(os.environ, TMPDIR=tmp)
        slower = []
        print("guard: %s against %s, %d runs, %d cores" %
              (builds["new"], a.old or old_build, a.runs, os.cpu_count()))
        for shape in shapes:
            pw = os.path.join(work, shape)
            os.makedirs(pw)
            wargs, extra = make_shape(pw, shape, a.seed)
            res = {"new": [], "old": []}
            for r in range(a.runs + 1):
                for name in ("new", "old"):
                    argv = [os.path.join(builds[name], "bin", "fatlink")]
                    w, m, cpu = run_timed(argv + extra + wargs, env)
                    if r > 0:  # the first round warms the page cache
                        res[name].append((w, m, cpu))
            med = medians(res)
            (nw, nm, nc), (ow, om, oc) = med["new"], med["old"]
            bad = [what for what, n, o in (("wall", nw, ow), ("CPU", nc, oc))
                   if n > o * (1 + a.slower / 100)]
            if nm > om * (1 + a.slower / 100):
                bad.append("peak")
            print("  %-11s wall %6.3f / %6.3f s (%4.2fx)  CPU %6.3f / %6.3f s "
                  "(%4.2fx)  peak %6.1f / %6.1f MiB (%4.2fx)%s" %
                  (shape, nw, ow, nw / ow, nc, oc, nc / oc, nm, om, nm / om,
                   "  SLOWER: " + ", ".join(bad) if bad else ""))
            if bad:
                slower.append(shape)
            shutil.rmtree(pw, ignore_errors=True)
        left = len(os.listdir(tmp))
        print("guard: %s; temporaries left: %d" %
              ("slower on " + ", ".join(slower) if slower else
               "no shape slower", left))
        return 1 if slower or left else 0
    finally:
        if tree:
            subprocess.call(["git", "-C", SRC, "worktree", "remove", "-f",
                             tree])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
