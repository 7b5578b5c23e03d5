#!/usr/bin/env python3
"""cuda_link.py [--tus N] [--archs sm_80,sm_90] [--seed S] [--runs R]
               [--cuda /usr/local/cuda] [--build DIR]

Link benchmark for CUDA relocatable device code. It generates a program of
N translation units (seeded: --seed gives another program of the same kind)
and compiles each with clang++-22 -x cuda -fgpu-rdc --offload-new-driver for
every architecture:
  - a header of __device__ helpers with loops (a polynomial, a hash, a
    stencil) and a struct passed by value;
  - per unit, a __device__ function with a loop that the next unit's kernels
    call (device code crossing units), a __device__ variable, and kernels of
    mixed sizes (most small, some with nested loops and a switch);
  - half of the units go into a static archive.
Then it links the same objects with upstream clang-linker-wrapper 22 and
with fatlink, alternating, R times each, with the argv clang++-22 passes,
and prints the median wall time, CPU time (user + system of the whole
process tree) and peak memory (max RSS), with fatlink's ratios to
upstream. Both outputs' registration modules are compared once. Needs the
CUDA toolkit (not a Debian package)."""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchutil  # noqa: E402

HEADER = """
struct Cell { float v[4]; int tag; };
__device__ inline float poly(float x, int n) {
  float r = 0;
  for (int i = 0; i < n; i++) r = r * x + (float)(i % 7) * 0.25f;
  return r;
}
__device__ inline unsigned mix(unsigned h, int rounds) {
  for (int i = 0; i < rounds; i++) { h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15; }
  return h;
}
__device__ inline float stencil(const float *a, int i, int n) {
  float s = 0;
  for (int k = -2; k <= 2; k++) { int j = i + k; s += (j < 0 || j >= n) ? 0 : a[j]; }
  return s / 5;
}
"""


def unit(rng, i, n):
    nxt = (i + 1) % n
    out = ['#include "common.h"',
           "__device__ float shared_%d(float x, int k);" % nxt,
           "__device__ int counter_%d;" % i,
           "__device__ float shared_%d(float x, int k) {" % i,
           "  float acc = x;",
           "  for (int j = 0; j < k; j++) acc = acc * 0.5f + poly(acc, %d);"
           % rng.randint(3, 9),
           "  return acc;", "}"]
    for k in range(rng.randint(2, 6)):
        size = rng.choice(["small"] * 5 + ["medium"] * 2 + ["big"])
        name = "k%d_%d" % (i, k)
        out.append("__global__ void %s(float *a, const float *b, Cell c, int n) {"
                   % name)
        out.append("  int t = blockIdx.x * blockDim.x + threadIdx.x;")
        out.append("  if (t >= n) return;")
        if size == "small":
            out.append("  a[t] = shared_%d(b[t], %d) + c.v[t & 3];"
                       % (nxt, rng.randint(1, 4)))
        elif size == "medium":
            out.append("  float s = 0;")
            out.append("  for (int j = 0; j < %d; j++) s += stencil(b, t + j, n);"
                       % rng.randint(2, 8))
            out.append("  a[t] = s + (float)mix(t, %d) * 1e-9f;" % rng.randint(2, 6))
            out.append("  atomicAdd(&counter_%d, 1);" % i)
        else:
            out.append("  float s = 0;")
            out.append("  for (int x = 0; x < %d; x++)" % rng.randint(3, 6))
            out.append("    for (int y = 0; y < %d; y++) {" % rng.randint(3, 6))
            out.append("      switch ((x + y + c.tag) & 3) {")
            for case in range(4):
                out.append("      case %d: s += poly(b[t] + x, %d) * %d; break;"
                           % (case, rng.randint(2, 6), case + 1))
            out.append("      }")
            out.append("    }")
            out.append("  a[t] = s + shared_%d(s, 3);" % nxt)
        out.append("}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tus", type=int, default=24)
    ap.add_argument("--archs", default="sm_80,sm_90")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cuda", default="/usr/local/cuda")
    ap.add_argument("--build", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build"))
    args = ap.parse_args()
    bindir = os.path.abspath(os.path.join(args.build, "bin"))
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="fatlink-cuda-bench-")
    try:
        with open(os.path.join(work, "common.h"), "w") as f:
            f.write(HEADER)
        srcs = []
        for i in range(args.tus):
            p = os.path.join(work, "u%d.cu" % i)
            with open(p, "w") as f:
                f.write(unit(rng, i, args.tus))
            srcs.append(p)
        flags = ["-x", "cuda", "-fgpu-rdc", "--offload-new-driver", "-O2",
                 "--cuda-path=" + args.cuda, "-Wno-unknown-cuda-version"]
        flags += ["--offload-arch=" + a for a in args.archs.split(",")]
        objs = [s[:-3] + ".o" for s in srcs]
        benchutil.parallel([["clang++-22"] + flags + ["-c", s, "-o", o]
                            for s, o in zip(srcs, objs)])
        half = len(objs) // 2
        lib = os.path.join(work, "libhalf.a")
        subprocess.check_call(["llvm-ar-22", "rcs", lib] + objs[half:])
        main_c = os.path.join(work, "main.o")
        with open(os.path.join(work, "main.cpp"), "w") as f:
            f.write("int main() { return 0; }\n")
        subprocess.check_call(["clang++-22", "-c", os.path.join(work, "main.cpp"),
                               "-o", main_c])
        out = os.path.join(work, "prog")
        link = benchutil.wrapper_argv(
            ["-fgpu-rdc", "--offload-new-driver", "--cuda-path=" + args.cuda,
             main_c] + objs[:half] + [lib, "-L" + args.cuda + "/lib64",
                                      "-lcudart_static", "-ldl", "-lrt",
                                      "-lpthread", "-o", out])[1:]
        ours, up = benchutil.envs(work, "/usr/lib/llvm-22/bin")
        tools = {"upstream": (["/usr/lib/llvm-22/bin/clang-linker-wrapper"], up),
                 "fatlink": ([os.path.join(bindir, "fatlink")], ours)}
        # Registration modules once: they must be the same text.
        mods = {}
        for name, (tool, env) in tools.items():
            r = subprocess.run(tool + link + ["--print-wrapped-module"], env=env,
                               capture_output=True, text=True)
            if r.returncode:
                sys.exit("benchmark: %s failed: %s" % (name, r.stderr[-500:]))
            mods[name] = r.stderr
        same = mods["upstream"] == mods["fatlink"]
        benchutil.upstream_vs_fatlink(
            {n: (tool + link, env) for n, (tool, env) in tools.items()},
            args.runs,
            "CUDA link: %d units (%d in an archive), %s, seed %d, %d runs"
            % (args.tus, args.tus - half, args.archs, args.seed, args.runs))
        print("registration modules %s" % ("identical" if same else "DIFFER"))
        return 0 if same else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
