#!/usr/bin/env python3
"""stress_link.py [--program TUSxKERNELS | --synthetic KxFxC] [--links N]
                  [--modes auto,per_source,per_kernel,off] [--jobs 1,2]
                  [--parallel P] [--work DIR] [--fatlink CMD] [--upstream]

Links one program many times and counts the links that fail: a link that
fails by chance is a bug, not noise. The program is real_link.py's
(--program, default 400x10: 4,000 kernels; --seed for another) or
test/lit/Inputs/gen-stress.py's synthetic shape (--synthetic KERNELSxFUNCS
xCALLS, the shape on which LLVM 22's SPIR-V back end breaks modules most
often), compiled with clang++-22 -fsycl -O2 -c into --work (kept there,
with argv.json naming its files relative to it, so a later run, or one on
another machine, reuses it with --work alone). Each split mode x job count gets --links links, --parallel
at a time (each link has its own output, removed after); prints failures, the first
line of each distinct failure, and the median wall time of a link.
--fatlink takes a command (words split by spaces), e.g. a loader and
fatlink-core; --upstream also links with clang-linker-wrapper (its own
split: none) as many times. --host-link=PATH replaces the host linker."""
import argparse
import collections
import concurrent.futures
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
LLVM_BIN = "/usr/lib/llvm-22/bin"
sys.path.insert(0, HERE)


def make(work, a):
    """Writes and compiles the program into `work`; returns the wrapper
    argv clang++-22 would pass (saved as argv.json)."""
    from benchutil import build_program
    os.makedirs(work, exist_ok=True)
    if a.synthetic:
        k, f, c = a.synthetic.split("x")
        subprocess.check_call([sys.executable, os.path.join(
            SRC, "test", "lit", "Inputs", "gen-stress.py"), work, k, f, c,
            str(a.seed)])
        srcs = [os.path.join(work, "stress.cpp"), os.path.join(work,
                                                                "main.cpp")]
    else:
        from real_link import write_sources
        tus, kernels = (int(x) for x in a.program.split("x"))
        srcs = write_sources(work, tus, kernels, a.seed)
    _, argv = build_program(work, srcs, SRC)
    what = ("synthetic " + a.synthetic if a.synthetic else
            "program %s (seed %d)" % (a.program, a.seed))
    with open(os.path.join(work, "argv.json"), "w") as fp:
        json.dump({"argv": [x.replace(work, "{work}") for x in argv],
                   "what": what}, fp)
    return argv, what


def retarget(argv, out, host_link):
    """argv with its -o (and, if asked, --linker-path) replaced."""
    res, skip = [], False
    for x in argv:
        if skip:
            skip = False
            continue
        if x == "-o":
            res += ["-o", out]
            skip = True
        elif host_link and x.startswith("--linker-path="):
            res.append("--linker-path=" + host_link)
        else:
            res.append(x)
    return res


def one(cmd, env, out):
    start = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, encoding="utf-8",
                       errors="replace")
    wall = time.perf_counter() - start
    if os.path.exists(out):
        os.unlink(out)
    lines = [l for l in p.stderr.splitlines() if "error" in l]
    return p.returncode, wall, lines[0] if lines else p.stderr.strip()[-200:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program", default="400x10")
    ap.add_argument("--synthetic")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--links", type=int, default=100)
    ap.add_argument("--modes", default="auto,per_source,per_kernel,off")
    ap.add_argument("--jobs", default="2,1")
    ap.add_argument("--parallel", type=int, default=1,
                    help="links at a time; 0: the cores over --wrapper-jobs")
    ap.add_argument("--work")
    ap.add_argument("--fatlink",
                    default=os.path.join(SRC, "build", "bin", "fatlink"))
    ap.add_argument("--upstream", action="store_true")
    ap.add_argument("--host-link")
    a = ap.parse_args()
    work = os.path.abspath(a.work or "stress-work")
    meta = os.path.join(work, "argv.json")
    if os.path.exists(meta):
        with open(meta) as fp:
            saved = json.load(fp)
        argv = [x.replace("{work}", work) for x in saved["argv"]]
        what = saved.get("what", work)
    else:
        argv, what = make(work, a)
    outdir = os.path.join(work, "out")
    os.makedirs(outdir, exist_ok=True)
    env = dict(os.environ, TMPDIR=os.path.join(work, "tmp"))
    os.makedirs(env["TMPDIR"], exist_ok=True)
    configs = []
    for mode in a.modes.split(","):
        for jobs in a.jobs.split(","):
            configs.append(("%s -j%s" % (mode, jobs), shlex.split(a.fatlink) +
                            ["--sycl-module-split-mode=" + mode,
                             "--wrapper-jobs=" + jobs], env))
    if a.upstream:
        up_env = dict(env, PATH=LLVM_BIN + ":" + env.get("PATH", ""))
        configs.append(("upstream", [os.path.join(LLVM_BIN,
                                                  "clang-linker-wrapper")],
                        up_env))
    total_fail = 0
    print("stress: %s, %d links per configuration, %s at a time, %d cores" %
          (what, a.links, a.parallel or "cores/jobs", os.cpu_count()),
          flush=True)
    for name, cmd, e in configs:
        jobs = []
        width = a.parallel or max(1, (os.cpu_count() or 1) // int(
            name.split("-j")[-1] if "-j" in name else 1))
        with concurrent.futures.ThreadPoolExecutor(width) as pool:
            for i in range(a.links):
                out = os.path.join(outdir, "p%d" % i)
                jobs.append(pool.submit(
                    one, cmd + retarget(argv, out, a.host_link), e, out))
        res = [j.result() for j in jobs]
        fails = [r for r in res if r[0] != 0]
        total_fail += len(fails)
        kinds = collections.Counter(r[2] for r in fails)
        print("  %-16s %3d of %d failed, median %.2f s a link" %
              (name, len(fails), len(res),
               statistics.median(r[1] for r in res)), flush=True)
        for line, n in kinds.most_common(5):
            print("      %dx %s" % (n, line[:300]))
    left = len(os.listdir(env["TMPDIR"]))
    print("stress: %d failed link(s) in all; %d temporaries left" %
          (total_fail, left))
    sys.exit(1 if total_fail or left else 0)


if __name__ == "__main__":
    main()
