#!/usr/bin/env python3
"""relink.py [--tus N] [--kernels K] [--seed S] [--runs R] [--build DIR] [--aot]

The developer's loop, measured: a realistic SYCL program (real_link.py's
generator: N units of K kernels of mixed sizes, helpers, structs, loops)
linked by upstream clang-linker-wrapper 22 and by fatlink with a cache
(--cache-dir), alternating, R times each:
  upstream        every link does everything;
  fatlink cold    an empty cache each time: the cost of filling it;
  fatlink warm    nothing changed: the device side comes from the cache;
  host edit       one unit's host code changed (its object differs, its
                  device image does not): still a hit;
  device edit     one unit's device code changed, as the first relink
                  after the edit: a miss of the whole device side, and
                  the split modules that did not change come from the
                  cache (their SPIR-V) while the others are made.
Prints median wall time, CPU time and peak memory, with ratios to
upstream, and checks that every output is byte-identical to the cold one
where it should be and runs. With --aot, every link is split per kernel and
compiled for two Intel GPUs (ocloc, 2 x the kernels), and the ratios are to
fatlink's cold link (upstream compiles no AOT images for clang-22's generic
SPIR-V objects)."""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchutil import envs, medians, run_timed, wrapper_argv  # noqa: E402
from real_link import LLVM_BIN, SRC, make_program  # noqa: E402


def compile_tu(src, obj, extra=()):
    subprocess.check_call(["clang++-22", "-fsycl", "-O2", "-c", src, "-o", obj]
                          + list(extra))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tus", type=int, default=100)
    ap.add_argument("--kernels", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--aot", action="store_true")
    a = ap.parse_args()
    fatlink = os.path.join(os.path.abspath(a.build), "bin", "fatlink")
    work = tempfile.mkdtemp(prefix="fatlink-relink-")
    try:
        out, wargs = make_program(work, a.tus, a.kernels, a.seed)
        env, up_env = envs(work, LLVM_BIN)
        up = os.path.join(LLVM_BIN, "clang-linker-wrapper")
        cache = os.path.join(work, "cache")
        # The edited units, compiled at their own paths (the device code
        # names its source file): tu0 with a host-only change, tu1 with a
        # device change; then the sources are as they were.
        tu0, tu1 = os.path.join(work, "tu0.cpp"), os.path.join(work, "tu1.cpp")
        host_obj = os.path.join(work, "tu0-host.o")
        dev_obj = os.path.join(work, "tu1-dev.o")
        for src, obj, edit in (
                (tu0, host_obj, lambda s: s + "#ifndef __SYCL_DEVICE_ONLY__\n"
                 "int bench_host_edit() { return 42; }\n#endif\n"),
                (tu1, dev_obj,
                 lambda s: s.replace("return r;", "return r + 1.0f;", 1))):
            with open(src) as f:
                text = f.read()
            with open(src, "w") as f:
                f.write(edit(text))
            compile_tu(src, obj)
            with open(src, "w") as f:
                f.write(text)
        obj0 = os.path.join(work, "tu0.o")
        obj1 = os.path.join(work, "tu1.o")

        def swap(argv, old, new):
            return [new if x == old else x for x in argv]

        extra = (["--sycl-module-split-mode=per_kernel",
                  "--sycl-targets=intel_gpu_skl,intel_gpu_tgllp"]
                 if a.aot else [])
        cold = [fatlink, "--cache-dir=" + cache + "-cold"] + extra + wargs
        warm = [fatlink, "--cache-dir=" + cache] + extra + wargs
        host = swap(warm, obj0, host_obj)
        dev = swap(warm, obj1, dev_obj)
        configs = ([] if a.aot else [("upstream", [up] + wargs, up_env)]) + [
                   ("fatlink cold", cold, env),
                   ("fatlink warm", warm, env),
                   ("host edit", host, env),
                   ("device edit", dev, env)]
        res = {c[0]: [] for c in configs}
        outs = {}
        for rnd in range(a.runs + 1):
            for name, argv, e in configs:
                if name == "fatlink cold":
                    shutil.rmtree(cache + "-cold", ignore_errors=True)
                if name == "device edit":
                    # Each time as the first relink after the edit: the
                    # cache as the unchanged program left it (the copy is
                    # not timed).
                    shutil.rmtree(cache + "-dev", ignore_errors=True)
                    shutil.copytree(cache, cache + "-dev")
                    argv = swap(argv, "--cache-dir=" + cache,
                                "--cache-dir=" + cache + "-dev")
                t = run_timed(argv, e)
                if rnd > 0:
                    res[name].append(t)
                else:
                    subprocess.check_call([out], stdout=subprocess.DEVNULL)
                    keep = os.path.join(work, "out-" + name.replace(" ", "-"))
                    shutil.copy(out, keep)
                    outs[name] = keep
        same = filecmp.cmp(outs["fatlink cold"], outs["fatlink warm"],
                           shallow=False)
        print("relink benchmark%s: %d TUs x %d kernels (seed %d), %d runs, %d "
              "cores; warm output identical to cold: %s" %
              (" (per kernel, 2 Intel GPUs)" if a.aot else "", a.tus,
               a.kernels, a.seed, a.runs, os.cpu_count(),
               "yes" if same else "NO"))
        med = medians(res)
        uw, um, uc = med["fatlink cold" if a.aot else "upstream"]
        for name, _, _ in configs:
            w, m, c = med[name]
            print("  %-13s wall %6.3f s (%4.2fx)  cpu %6.3f s (%4.2fx)  "
                  "peak %6.1f MiB (%4.2fx)" % (name, w, w / uw, c, c / uc, m,
                                               m / um))
        if not same:
            sys.exit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
