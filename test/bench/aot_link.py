#!/usr/bin/env python3
"""aot_link.py [--tus N] [--kernels K] [--runs R] [--build DIR]
             [--devices intel_gpu_skl,intel_gpu_tgllp,intel_gpu_acm_g10]

AOT benchmark: the sycl_link.py program (N TUs x K kernels, clang++-22
-fsycl -O2 -c), linked by fatlink with a per_kernel split (one module per
kernel) for the --devices (three Intel GPU devices by default: ocloc
compiles every module once for each), with libocloc in process and with
the ocloc tool spawned (--aot-in-process=off), each at --wrapper-jobs=1
and 2, alternating, R times. Prints the median wall time and peak memory
of each, the speed-up from 1 to 2 jobs and the parallel efficiency
(speed-up / 2), and in-process against spawned. (Upstream
clang-linker-wrapper 22 AOT-compiles only images whose fat object names an
arch; clang-22's generic SPIR-V objects name none, so there is no upstream
run to compare with.) Every output is run once with the test runtime,
which checks that every kernel has an image for every device."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchutil import medians, run_timed  # noqa: E402
from sycl_link import make_program  # noqa: E402
SRC = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tus", type=int, default=100)
    ap.add_argument("--kernels", type=int, default=4)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--devices",
                    default="intel_gpu_skl,intel_gpu_tgllp,intel_gpu_acm_g10")
    a = ap.parse_args()
    ndev = len(a.devices.split(","))
    fatlink = os.path.join(os.path.abspath(a.build), "bin", "fatlink")
    work = tempfile.mkdtemp(prefix="fatlink-aot-bench-")
    try:
        out, wargs = make_program(work, a.tus, a.kernels)
        tmp = os.path.join(work, "tmp")
        os.makedirs(tmp)
        env = dict(os.environ, TMPDIR=tmp)
        base = [fatlink, "--sycl-module-split-mode=per_kernel",
                "--sycl-targets=" + a.devices]
        configs = []
        for mode in ("in process", "spawned"):
            for jobs in (1, 2):
                extra = ["--wrapper-jobs=%d" % jobs]
                if mode == "spawned":
                    extra.append("--aot-in-process=off")
                configs.append(("%s -j%d" % (mode, jobs), base + extra + wargs))
        res = {c[0]: [] for c in configs}
        check_env = dict(os.environ, SYCL_RT_EXPECT=a.devices)
        for _ in range(a.runs):
            for name, argv in configs:
                res[name].append(run_timed(argv, env))
                subprocess.check_call([out], stdout=subprocess.DEVNULL, env=check_env)
        print("AOT benchmark: %d TUs x %d kernels, per_kernel split, %d ocloc "
              "devices (%d compiles), %d run(s), %d cores (temporaries left: %d)" %
              (a.tus, a.kernels, ndev, ndev * a.tus * a.kernels, a.runs,
               os.cpu_count(), len(os.listdir(tmp))))
        med = medians(res)
        for name, _ in configs:
            print("  %-16s wall %8.3f s   peak %7.1f MiB" % (name, med[name][0],
                                                            med[name][1]))
        for mode in ("in process", "spawned"):
            up = med["%s -j1" % mode][0] / med["%s -j2" % mode][0]
            print("  %-10s 1 -> 2 jobs: %.2fx, parallel efficiency %.0f%%" %
                  (mode, up, 100 * up / 2))
        for jobs in (1, 2):
            print("  -j%d: spawned / in process: %.2fx" %
                  (jobs, med["spawned -j%d" % jobs][0] / med["in process -j%d" % jobs][0]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
