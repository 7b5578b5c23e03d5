#!/usr/bin/env python3
"""memory_link.py [--shape 10x4] [--seed S] [--jobs 8] [--runs R] [--build DIR]
                [--devices intel_gpu_skl,intel_gpu_tgllp,intel_gpu_acm_g10]
                [--modes aot]

Memory budget benchmark (--wrapper-memory). It generates a real_link.py
program of the shape (TUSxKERNELS, seeded) and links it
  - aot: per_source split, ocloc spawned for every device (the compiles
    are the jobs that hold memory, as on a build machine AOT-compiling for
    several GPUs);
  - jit (only when asked): the default split, SPIR-V only, where the
    peak is the device link's own (all the program's device code in one
    LLVM context, before any job runs beside it): a budget under that
    cannot be kept, and the link runs its jobs one at a time;
at --wrapper-jobs=J (8 by default: a wide machine's job count, on however
many cores there are), first without a budget, then with --wrapper-memory
at half the peak the unbudgeted link took. The peak is the whole process
tree's at once (proportional set size, sampled every 20 ms: memory that
forked processes and one tool's several copies share counts once). For
each mode it prints the medians of R alternating runs of each (wall time,
CPU time, tree peak) and whether the budgeted link stayed under its
budget; the outputs of both must be the same, byte for byte, and run.
Exits 1 when a link fails, an output differs or a budgeted link's peak is
over its budget."""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchutil import medians, run_timed  # noqa: E402
from real_link import make_program  # noqa: E402
SRC = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="10x4")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--devices",
                    default="intel_gpu_skl,intel_gpu_tgllp,intel_gpu_acm_g10")
    ap.add_argument("--modes", default="aot")
    a = ap.parse_args()
    fatlink = os.path.join(os.path.abspath(a.build), "bin", "fatlink")
    tus, kernels = (int(x) for x in a.shape.split("x"))
    work = tempfile.mkdtemp(prefix="fatlink-memory-")
    bad = 0
    try:
        out, wargs = make_program(work, tus, kernels, a.seed)
        env = dict(os.environ, TMPDIR=os.path.join(work, "tmp"))
        os.makedirs(env["TMPDIR"])
        check_env = dict(os.environ, SYCL_RT_EXPECT=a.devices)
        modes = {
            "aot": ["--sycl-module-split-mode=per_source",
                    "--sycl-targets=" + a.devices, "--aot-in-process=off"],
            "jit": []}
        print("memory budget benchmark: %d TUs x %d kernels (seed %d), -j%d, "
              "%d run(s), %d cores" % (tus, kernels, a.seed, a.jobs, a.runs,
                                       os.cpu_count()))
        for mode in a.modes.split(","):
            base = [fatlink, "--wrapper-jobs=%d" % a.jobs] + modes[mode]
            first = run_timed(base + wargs, env, tree=True)
            budget = int(first[1] / 2 * 1024 * 1024)
            shutil.copy(out, out + ".free")
            configs = [("no budget", base + wargs),
                       ("half its peak", base + ["--wrapper-memory=%d" % budget]
                        + wargs)]
            res = {c[0]: [] for c in configs}
            for _ in range(a.runs):
                for name, argv in configs:
                    res[name].append(run_timed(argv, env, tree=True))
                    subprocess.check_call(
                        [out], stdout=subprocess.DEVNULL,
                        env=check_env if mode == "aot" else os.environ)
                    if not filecmp.cmp(out, out + ".free", shallow=False):
                        print("  %s: %s: output differs" % (mode, name))
                        bad = 1
            med = medians(res)
            over = [p for _, p, _ in res["half its peak"]
                    if p > budget / 1024.0 / 1024.0]
            bad |= bool(over)
            print("  %s (budget %.0f MiB, half of a first run's %.0f MiB):"
                  % (mode, budget / 1024.0 / 1024.0, first[1]))
            for name, _ in configs:
                w, p, c = med[name]
                print("    %-14s wall %7.2f s  cpu %7.2f s  tree peak %6.0f MiB"
                      % (name, w, c, p))
            print("    budgeted peak %s the budget in every run%s" %
                  ("over" if over else "under",
                   " (%d over)" % len(over) if over else ""))
        print("temporaries left: %d" % len(os.listdir(env["TMPDIR"])))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return bad


if __name__ == "__main__":
    sys.exit(main())
