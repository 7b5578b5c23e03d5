#!/usr/bin/env python3
"""openmp_link.py [--tus N] [--archs sm_90,sm_80] [--seed S] [--runs R]
                 [--devicertl DIR] [--build DIR] [--work DIR]

Link benchmark for OpenMP offload to GPUs. It generates a program of N
translation units (seeded: --seed gives another program of the same kind)
and compiles each with clang-22 -fopenmp --offload-arch=<each arch> -O2
against LLVM 22's OpenMP device runtime (--devicertl, default
../shared/reference/omp-devicertl beside the repository; Debian ships none):
  - per unit, a declare-target helper with a loop (a polynomial of its own
    degree) and a declare-target variable;
  - target regions of mixed sizes: a teams-distribute-parallel-for with a
    reduction over the helper, some with a nested loop and a switch, one
    calling the next unit's helper (device code crossing units);
  - half of the units go into a static archive.
Then it links the same objects with upstream clang-linker-wrapper 22 and
with fatlink, alternating, R times each, with the argv clang-22 passes, and
prints the median wall time, CPU time (user + system of the whole process
tree) and peak memory (max RSS), with fatlink's ratios to upstream. The
two programs must be the same, byte for byte (fatlink links GPU code as
upstream does and registers it as upstream does); exit 1 if they differ.
Needs the CUDA toolkit (nvlink, ptxas)."""
import argparse
import filecmp
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchutil  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))


def unit(rng, i, n):
    nxt = (i + 1) % n
    out = ["#pragma omp declare target",
           "float helper_%d(float x);" % nxt,
           "int hits_%d = 0;" % i,
           "float helper_%d(float x) {" % i,
           "  float r = 0;",
           "  for (int k = 0; k < %d; k++) r = r * x + (float)(k %% 5) * 0.5f;"
           % rng.randint(3, 12),
           "  return r;", "}",
           "#pragma omp end declare target"]
    for k in range(rng.randint(2, 5)):
        size = rng.choice(["small"] * 4 + ["big"] + ["cross"])
        out.append("double region_%d_%d(const float *v, int n) {" % (i, k))
        out.append("  double s = 0;")
        out.append("#pragma omp target teams distribute parallel for "
                   "reduction(+ : s) map(to : v[0 : n])")
        out.append("  for (int t = 0; t < n; t++) {")
        if size == "small":
            out.append("    s += helper_%d(v[t]);" % i)
        elif size == "cross":
            out.append("    s += helper_%d(v[t]) * 0.5;" % nxt)
        else:
            out.append("    for (int x = 0; x < %d; x++)" % rng.randint(3, 6))
            out.append("      switch ((t + x) & 3) {")
            for case in range(4):
                out.append("      case %d: s += helper_%d(v[t] + x) * %d; break;"
                           % (case, i, case + 1))
            out.append("      }")
        out.append("  }")
        out.append("  return s;")
        out.append("}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tus", type=int, default=20)
    ap.add_argument("--archs", default="sm_90,sm_80")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--devicertl", default=os.path.join(
        ROOT, "..", "shared", "reference", "omp-devicertl"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", help="keep the program here (default: a "
                    "temporary folder, removed)")
    args = ap.parse_args()
    rtl = os.path.abspath(args.devicertl)
    if not os.path.exists(os.path.join(rtl, "libomptarget-nvptx.bc")):
        sys.exit("benchmark: no OpenMP device runtime in %s (--devicertl)" % rtl)
    bindir = os.path.abspath(os.path.join(args.build, "bin"))
    rng = random.Random(args.seed)
    work = args.work or tempfile.mkdtemp(prefix="fatlink-openmp-bench-")
    os.makedirs(work, exist_ok=True)
    try:
        flags = ["-fopenmp", "--offload-arch=" + args.archs, "-O2",
                 "--libomptarget-nvptx-bc-path=%s/libomptarget-nvptx.bc" % rtl]
        srcs = []
        for i in range(args.tus):
            p = os.path.join(work, "u%d.c" % i)
            with open(p, "w") as f:
                f.write(unit(rng, i, args.tus))
            srcs.append(p)
        with open(os.path.join(work, "main.c"), "w") as f:
            f.write("int main(void) { return 0; }\n")
        srcs.append(os.path.join(work, "main.c"))
        objs = [s[:-2] + ".o" for s in srcs]
        benchutil.parallel([["clang-22"] + flags + ["-c", s, "-o", o]
                            for s, o in zip(srcs, objs)])
        half = args.tus // 2
        lib = os.path.join(work, "libhalf.a")
        subprocess.check_call(["llvm-ar-22", "rcs", lib] + objs[half:args.tus])
        outs = {n: os.path.join(work, "prog." + n) for n in ("upstream", "fatlink")}
        out = os.path.join(work, "prog")
        link = benchutil.wrapper_argv(
            ["-fopenmp", "--offload-arch=" + args.archs, objs[-1]] +
            objs[:half] + [lib, "-Xoffload-linker",
                           "-L%s/nvptx64-nvidia-cuda" % rtl, "-o", out])[1:]
        ours, up = benchutil.envs(work, "/usr/lib/llvm-22/bin")
        tools = {"upstream": ("/usr/lib/llvm-22/bin/clang-linker-wrapper", up),
                 "fatlink": (os.path.join(bindir, "fatlink"), ours)}
        benchutil.upstream_vs_fatlink(
            {n: ([tool] + [outs[n] if a == out else a for a in link], env)
             for n, (tool, env) in tools.items()}, args.runs,
            "OpenMP GPU link: %d units (%d in an archive), %s, seed %d, %d runs"
            % (args.tus, args.tus - half, args.archs, args.seed, args.runs))
        same = filecmp.cmp(outs["upstream"], outs["fatlink"], shallow=False)
        print("programs %s" % ("identical" if same else "DIFFER"))
        return 0 if same else 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
