#!/usr/bin/env python3
"""real_link.py [--shapes 100x4,10x40] [--seed S] [--runs R] [--build DIR]
              [--modes auto,off,per_source,per_kernel] [--jobs 2,1] [--debug]

Link benchmark on device code that looks like real programs, beside
sycl_link.py (whose kernels are one-line loops). For each shape TUSxKERNELS
it generates a program (seeded: --seed gives another program of the same
kind) and compiles it with clang++-22 -fsycl -O2 -c:
  - a header every unit includes: structs (Vec3, Particle, Params) passed by
    value, inline helpers with loops (a polynomial, a hash, a stencil, a
    particle step), math built-ins (sqrt, exp, sin, cos, fma), so the same
    helpers are in every unit and the device link keeps one copy;
  - per unit, a SYCL_EXTERNAL function with a loop that kernels of the next
    unit call (helpers shared across units), and static helpers of its own;
  - kernels of mixed sizes: most small (one loop, a helper or two), some
    medium (several loops, structs), a few big (nested loops, a stencil, a
    switch, particle steps).
Then it links the same objects with upstream clang-linker-wrapper 22 and
with fatlink in every split mode at 1 and 2 jobs, alternating, R times each,
with the argv clang++-22 passes, and prints median wall time, CPU time
(user + system of the whole process tree) and peak memory (max RSS of the
largest process), with ratios to upstream; then the peak of the whole
process tree (one more run each, sampled: what all the link's processes
held at once); then one --wrapper-time-trace run of each fatlink
configuration, summed per job kind (the phases). Every output is run once
with the test runtime to check that each links a working program.
--modes and --jobs choose the fatlink configurations (the large shapes
take a while: 400x10 is 4,000 kernels, 1x2000 one unit of 2,000); --debug
compiles with -g as well. --fail makes a program whose device link fails
(the first two units define the same device function) and reports the
time to the error instead."""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

LLVM_BIN = "/usr/lib/llvm-22/bin"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchutil import build_program, envs, medians, run_timed  # noqa: E402
SRC = os.path.dirname(os.path.dirname(HERE))

HEADER = r"""#pragma once
template <typename N, typename F>
[[clang::sycl_kernel_entry_point(N)]] void st(F f) { f(); }
struct Vec3 { float x, y, z; };
struct Particle { Vec3 pos, vel; float mass; int id; };
struct Params { float dt, damping, scale; int steps; Vec3 gravity; };
inline Vec3 add(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3 mul(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline float length(Vec3 a) { return __builtin_elementwise_sqrt(dot(a, a)); }
inline float clampf(float v, float lo, float hi) {
  return v < lo ? lo : v > hi ? hi : v;
}
inline unsigned mix(unsigned x) {
  for (int r = 0; r < 4; r++) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU;
  }
  return x ^ (x >> 16);
}
inline float poly(float x, const float *c, int n) {
  float r = 0.0f;
  for (int k = n - 1; k >= 0; k--) r = __builtin_elementwise_fma(r, x, c[k]);
  return r;
}
template <int R> inline float stencil(const float *p, int i, int n) {
  float acc = 0.0f, wsum = 0.0f;
  for (int k = -R; k <= R; k++) {
    int j = i + k;
    if (j < 0 || j >= n) continue;
    float w = __builtin_elementwise_exp(-0.25f * (float)(k * k));
    acc += w * p[j];
    wsum += w;
  }
  return wsum > 0.0f ? acc / wsum : 0.0f;
}
inline Particle advance(Particle q, Params pr) {
  for (int s = 0; s < pr.steps; s++) {
    q.vel = add(mul(q.vel, pr.damping), mul(pr.gravity, pr.dt));
    q.pos = add(q.pos, mul(q.vel, pr.dt));
    if (q.pos.y < 0.0f) { q.pos.y = -q.pos.y; q.vel.y = -q.vel.y * 0.5f; }
  }
  return q;
}
"""


def small_kernel(r, i, j, nxt):
    body = r.choice([
        "for (int x = 0; x < n; x++) p[x] = clampf(p[x] * %s + %s, -%s, %s);",
        "for (int x = 0; x < n; x++) p[x] = poly(p[x], coef, 6) * %s + %s + "
        "(float)(mix((unsigned)x) & 0xff) * (%s - %s);",
        "for (int x = 0; x < n; x++) p[x] = local_%d(p[x], pr) * %%s + %%s "
        "+ %%s * %%s;" % i,
        "for (int x = 0; x < n; x++) p[x] = ext_%d(p[x] * %%s + %%s, %%s > "
        "%%s ? 3 : 5);" % nxt,
    ])
    vals = tuple("%.3ff" % r.uniform(0.1, 4.0) for _ in range(4))
    return body % vals


def medium_kernel(r, i, j, nxt):
    return ("for (int x = 0; x < n; x++) {\n"
            "      Vec3 v = {p[x], q[x], %sf};\n"
            "      float l = length(v);\n"
            "      p[x] = stencil<%d>(q, x, n) + l * pr.scale;\n"
            "    }\n"
            "    for (int x = 0; x < n; x++)\n"
            "      q[x] = ext_%d(poly(p[x], coef, %d), pr.steps) + "
            "local_%d(q[x], pr);"
            % ("%.2f" % r.uniform(0.5, 2.0), r.choice([2, 3]), nxt,
               r.choice([4, 6, 8]), i))


def big_kernel(r, i, j, nxt):
    return ("for (int x = 0; x < n; x++) {\n"
            "      Particle a = {{p[x], q[x], 0.0f}, {q[x], p[x], 1.0f}, "
            "%sf, x};\n"
            "      a = advance(a, pr);\n"
            "      float acc = 0.0f;\n"
            "      for (int y = 0; y < 16; y++) {\n"
            "        int k = (x + y * %d) %% n;\n"
            "        switch ((mix((unsigned)(x ^ y)) >> 3) & 3) {\n"
            "        case 0: acc += stencil<4>(p, k, n); break;\n"
            "        case 1: acc += __builtin_elementwise_sin(q[k]) * "
            "__builtin_elementwise_cos(p[k]); break;\n"
            "        case 2: acc += ext_%d(q[k], 4); break;\n"
            "        default: acc += poly(p[k], coef, 8) * a.mass;\n"
            "        }\n"
            "      }\n"
            "      p[x] = acc * pr.scale + length(a.pos) + dot(a.vel, "
            "pr.gravity);\n"
            "      q[x] = local_%d(acc, pr) + ext_%d(acc, 2);\n"
            "    }"
            % ("%.2f" % r.uniform(0.5, 3.0), r.randint(3, 31), nxt, i, i))


def gen_tu(r, i, tus, kernels):
    nxt = (i + 1) % tus
    out = ['#include "common.h"',
           "[[clang::sycl_external]] float ext_%d(float v, int n);" % nxt,
           "[[clang::sycl_external]] float ext_%d(float v, int n) {" % i,
           "  float s = v;",
           "  for (int k = 0; k < n; k++)",
           "    s = __builtin_elementwise_fma(s, %.3ff, "
           "__builtin_elementwise_sin(s + (float)k));" % r.uniform(0.2, 0.9),
           "  return s;",
           "}",
           "static float local_%d(float v, Params pr) {" % i,
           "  float r = v;",
           "  for (int k = 0; k < %d; k++)" % r.choice([4, 8, 12]),
           "    r = r * pr.damping + __builtin_elementwise_cos(r * pr.dt) * "
           "%.3ff;" % r.uniform(0.1, 1.0),
           "  return r;",
           "}"]
    for j in range(kernels):
        out.append("struct K%d_%d;" % (i, j))
    out.append("void run_%d(float *p, float *q, int n, Params pr) {" % i)
    out.append("  const float coef[8] = {%s};" %
               ", ".join("%.3ff" % r.uniform(-1, 1) for _ in range(8)))
    for j in range(kernels):
        roll = r.random()
        make = (big_kernel if roll < 0.1 else medium_kernel if roll < 0.3
                else small_kernel)
        out.append("  st<K%d_%d>([=]() {\n    %s\n  });" %
                   (i, j, make(r, i, j, nxt)))
    out.append("}")
    return "\n".join(out) + "\n"


# With --fail: a device function the first two units both define, which
# a kernel of each calls: the device link fails (so does the host link).
DUP = "float bench_dup(float x) { return x * 2.0f; }\nstruct KDup%d;\n"
DUP_CALL = "  st<KDup%d>([=]() { p[0] = bench_dup(p[0]); });\n}\n"


def write_sources(work, tus, kernels, seed, fail=False):
    """Writes the program's header, units and main into `work`; returns the
    source paths."""
    r = random.Random(seed)
    with open(os.path.join(work, "common.h"), "w") as f:
        f.write(HEADER)
    srcs = []
    for i in range(tus):
        p = os.path.join(work, "tu%d.cpp" % i)
        text = gen_tu(r, i, tus, kernels)
        if fail and i < 2:
            at = text.index("void run_%d(" % i)
            text = (text[:at] + DUP % i + text[at:text.rindex("}")] +
                    DUP_CALL % i)
        with open(p, "w") as f:
            f.write(text)
        srcs.append(p)
    main_cpp = os.path.join(work, "main.cpp")
    with open(main_cpp, "w") as f:
        f.write("int main() { return 0; }\n")
    return srcs + [main_cpp]


def make_program(work, tus, kernels, seed, flags=("-O2",), fail=False):
    """Writes and compiles the program in `work`; returns the output path and
    the argv clang++-22 gives the wrapper to link it."""
    return build_program(work, write_sources(work, tus, kernels, seed, fail),
                         SRC, flags)


def phases(argv, env, out):
    """Runs argv once with --wrapper-time-trace; {job kind: (count, ms)}."""
    subprocess.check_call(argv[:1] + ["--wrapper-time-trace"] + argv[1:], env=env)
    with open(out + ".time-trace") as f:
        ev = json.load(f)["traceEvents"]
    os.unlink(out + ".time-trace")
    res = {}
    for e in ev:
        c, ms = res.get(e["name"], (0, 0.0))
        res[e["name"]] = (c + 1, ms + e["dur"] / 1000.0)
    return res


def print_ratios(configs, med):
    """Each configuration's medians and their ratios to upstream's."""
    uw, um, uc = med["upstream"]
    for name, _, _ in configs:
        w, m, c = med[name]
        print("  %-14s wall %6.3f s (%4.2fx)  cpu %6.3f s (%4.2fx)  "
              "peak %6.1f MiB (%4.2fx)" % (name, w, w / uw, c, c / uc, m,
                                           m / um))


def bench_fail(fatlink, tus, kernels, seed, runs, debug):
    """Time to the first error of a link that fails, against upstream."""
    work = tempfile.mkdtemp(prefix="fatlink-real-")
    try:
        out, wargs = make_program(work, tus, kernels, seed,
                                  ("-O2", "-g") if debug else ("-O2",), True)
        env, up_env = envs(work, LLVM_BIN)
        up = os.path.join(LLVM_BIN, "clang-linker-wrapper")
        configs = [("upstream", [up] + wargs, up_env),
                   ("fatlink -j2", [fatlink] + wargs, env)]
        res = {c[0]: [] for c in configs}
        for _ in range(runs):
            for name, argv, e in configs:
                res[name].append(run_timed(argv, e, fails=True))
        print("failing link: %d TUs x %d kernels (seed %d%s), %d runs, time to "
              "the error (temporaries left: fatlink %d, upstream %d)" %
              (tus, kernels, seed, ", -g" if debug else "", runs,
               len(os.listdir(env["TMPDIR"])), len(os.listdir(up_env["TMPDIR"]))))
        med = medians(res)
        print_ratios(configs, med)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_shape(fatlink, tus, kernels, seed, runs, modes, jobs_list, debug):
    work = tempfile.mkdtemp(prefix="fatlink-real-")
    try:
        out, wargs = make_program(work, tus, kernels, seed,
                                  ("-O2", "-g") if debug else ("-O2",))
        env, up_env = envs(work, LLVM_BIN)
        ours_tmp, up_tmp = env["TMPDIR"], up_env["TMPDIR"]
        up = os.path.join(LLVM_BIN, "clang-linker-wrapper")
        configs = [("upstream", [up] + wargs, up_env)]
        for mode in modes:
            for jobs in jobs_list:
                configs.append(("%s -j%d" % (mode, jobs),
                                [fatlink, "--sycl-module-split-mode=" + mode,
                                 "--wrapper-jobs=%d" % jobs] + wargs, env))
        res = {c[0]: [] for c in configs}
        for rnd in range(runs + 1):
            for name, argv, e in configs:
                t = run_timed(argv, e)
                if rnd > 0:  # the first round warms the page cache
                    res[name].append(t)
                if rnd == 0:
                    subprocess.check_call([out], stdout=subprocess.DEVNULL)
        left = {n: len(os.listdir(d)) for n, d in (("fatlink", ours_tmp),
                                                    ("upstream", up_tmp))}
        print("realistic link benchmark: %d TUs x %d kernels (seed %d%s), %d "
              "runs, %d cores (temporaries left: fatlink %d, upstream %d)" %
              (tus, kernels, seed, ", -g" if debug else "", runs,
               os.cpu_count(), left["fatlink"], left["upstream"]))
        med = medians(res)
        print_ratios(configs, med)
        # The peak above is the largest process's; fatlink forks workers,
        # upstream runs a chain of tools: one more run each, sampled, gives
        # what all the processes of the link held at once.
        tree = {name: run_timed(argv, e, tree=True)[1]
                for name, argv, e in configs}
        print("  tree peak (one sampled run each): " + ", ".join(
            "%s %.0f MiB (%.2fx)" % (name, tree[name],
                                     tree[name] / tree["upstream"])
            for name, _, _ in configs))
        for mode in modes:
            if 1 in jobs_list and 2 in jobs_list:
                print("  %-10s 1 -> 2 jobs: %.2fx" %
                      (mode, med["%s -j1" % mode][0] / med["%s -j2" % mode][0]))
        print("  phases (one --wrapper-time-trace run each; count x summed ms):")
        for name, argv, e in configs[1:]:
            ph = phases(argv, e, out)
            print("  %-14s %s" % (name, ", ".join(
                "%s %dx %.0f" % (k, c, ms) for k, (c, ms) in ph.items())))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="100x4,10x40")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--modes", default="auto,off,per_source,per_kernel")
    ap.add_argument("--jobs", default="2,1")
    ap.add_argument("--debug", action="store_true")
    ap.add_argument("--fail", action="store_true")
    a = ap.parse_args()
    fatlink = os.path.join(os.path.abspath(a.build), "bin", "fatlink")
    modes = a.modes.split(",")
    jobs = [int(j) for j in a.jobs.split(",")]
    for shape in a.shapes.split(","):
        tus, kernels = (int(x) for x in shape.split("x"))
        if a.fail:
            bench_fail(fatlink, tus, kernels, a.seed, a.runs, a.debug)
        else:
            bench_shape(fatlink, tus, kernels, a.seed, a.runs, modes, jobs,
                        a.debug)


if __name__ == "__main__":
    main()
