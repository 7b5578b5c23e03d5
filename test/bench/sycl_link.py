#!/usr/bin/env python3
"""sycl_link.py [--tus N] [--kernels K] [--runs R] [--build DIR]

Link benchmark: generates N SYCL translation units with K kernels each,
compiles them with clang++-22 -fsycl -O2 -c, then links the same objects with
upstream clang-linker-wrapper (LLVM 22, one module: it cannot split) and with
fatlink in split modes off (also with LoopStrengthReduce back on, the back-end
passes upstream runs), auto (the default) and per_kernel at 1 and 2 jobs,
alternating, R times each, with the argv clang++-22 passes. Prints the median wall
time and peak memory (max RSS of the wrapper and everything it waited for,
from wait4) of each, and the ratios. Both outputs are run once to check they
work (with the test runtime of test/runtime)."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

LLVM_BIN = "/usr/lib/llvm-22/bin"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchutil import build_program, envs, medians, run_timed  # noqa: E402
SRC = os.path.dirname(os.path.dirname(HERE))


def gen_tu(i, k):
    lines = ["template <typename N, typename F>",
             "[[clang::sycl_kernel_entry_point(N)]] void st(F f) { f(); }"]
    for j in range(k):
        lines.append("struct K%d_%d;" % (i, j))
    lines.append("void run_%d(float *p, int n) {" % i)
    for j in range(k):
        lines.append("  st<K%d_%d>([=]() { for (int x = 0; x < n; x++) "
                     "p[x] = p[x] * %d.5f + (float)x / %d; });" % (i, j, j + 1, j + 2))
    lines.append("}")
    return "\n".join(lines) + "\n"


def make_program(work, tus, kernels):
    """Writes and compiles (clang++-22 -fsycl -O2 -c) the program of `tus`
    translation units with `kernels` kernels each, a main and the test
    runtime in `work`; returns the output path and the argv clang++-22 gives
    the wrapper to link it there."""
    srcs = []
    for i in range(tus):
        p = os.path.join(work, "tu%d.cpp" % i)
        with open(p, "w") as f:
            f.write(gen_tu(i, kernels))
        srcs.append(p)
    main_cpp = os.path.join(work, "main.cpp")
    with open(main_cpp, "w") as f:
        f.write("int main() { return 0; }\n")
    srcs.append(main_cpp)
    return build_program(work, srcs, SRC)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tus", type=int, default=100)
    ap.add_argument("--kernels", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    a = ap.parse_args()
    fatlink = os.path.join(os.path.abspath(a.build), "bin", "fatlink")
    work = tempfile.mkdtemp(prefix="fatlink-bench-")
    try:
        out, wargs = make_program(work, a.tus, a.kernels)
        env, up_env = envs(work, LLVM_BIN)
        ours_tmp, up_tmp = env["TMPDIR"], up_env["TMPDIR"]
        up = os.path.join(LLVM_BIN, "clang-linker-wrapper")
        # fatlink in several split modes and job counts, upstream (which
        # cannot split) once; all alternate within each round.
        configs = [
            ("upstream", [up] + wargs, up_env),
            ("off", [fatlink, "--sycl-module-split-mode=off"] + wargs, env),
            # LSR back on: the same back-end passes as upstream runs.
            ("off +lsr", [fatlink, "--sycl-module-split-mode=off", "-mllvm",
                          "-disable-lsr=false"] + wargs, env),
            ("auto", [fatlink] + wargs, env),
            ("per_kernel -j1", [fatlink, "--sycl-module-split-mode=per_kernel",
                                "--wrapper-jobs=1"] + wargs, env),
            ("per_kernel -j2", [fatlink, "--sycl-module-split-mode=per_kernel",
                                "--wrapper-jobs=2"] + wargs, env),
        ]
        res = {c[0]: [] for c in configs}
        for r in range(a.runs + 1):
            for name, argv, e in configs:
                w, m, _ = run_timed(argv, e)
                if r > 0:  # the first round warms the page cache
                    res[name].append((w, m))
                subprocess.check_call([out], stdout=subprocess.DEVNULL)
        left = {n: len(os.listdir(d)) for n, d in (("fatlink", ours_tmp), ("upstream", up_tmp))}
        print("sycl link benchmark: %d TUs x %d kernels, %d runs, %d cores "
              "(temporaries left: fatlink %d, upstream %d)" %
              (a.tus, a.kernels, a.runs, os.cpu_count(), left["fatlink"],
               left["upstream"]))
        med = medians(res)
        for name, _, _ in configs:
            wt, mm = med[name]
            print("  %-15s wall %7.3f s (%5.2fx upstream)   peak %7.1f MiB (%5.2fx)" %
                  (name, wt, wt / med["upstream"][0], mm, mm / med["upstream"][1]))
        print("  per_kernel speed-up from 1 to 2 jobs: %.2fx" %
              (med["per_kernel -j1"][0] / med["per_kernel -j2"][0]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
