#!/usr/bin/env python3
"""faults.py [--cases N] [--seed S] [--build DIR]

Fault injection across a link's jobs: random cases of
  - a device tool (ocloc for an Intel GPU, through a launcher stand-in that
    records its pid) failing, crashing (SIGSEGV), hanging past
    --tool-timeout, or writing garbage instead of a binary;
  - a fatal signal (SIGINT, SIGTERM, SIGHUP) to fatlink at a random time;
  - both, and none;
with a random job count and split. After each: on failure, the previous
output is byte for byte what it was; TMPDIR is empty; no tool fatlink
started is still running. Prints the counts of each outcome and of every
violation (there must be none)."""
import argparse
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLVM = "/usr/lib/llvm-22/bin"

LAUNCHER = r"""#!/bin/sh
echo $$ >> "$FAULT_PIDS"
case "$FAULT_MODE" in
fail) exit 3 ;;
crash) kill -SEGV $$ ;;
hang) exec sleep 600 ;;
garbage)
  out=; prev=
  for a in "$@"; do [ "$prev" = -output ] && out=$a; prev=$a; done
  printf 'not a binary' > "$out"; exit 0 ;;
esac
exec "$@"
"""


def alive(pid):
    try:
        os.kill(pid, 0)
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split()[2] != "Z"
    except (OSError, IOError):
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    a = ap.parse_args()
    fat = os.path.join(a.build, "bin", "fatlink")
    fatpack = os.path.join(a.build, "bin", "fatpack")
    work = tempfile.mkdtemp(prefix="fatlink-faults-")
    try:
        w = lambda n: os.path.join(work, n)  # noqa: E731
        tmp = w("tmp")
        os.makedirs(tmp)
        with open(w("launch.sh"), "w") as f:
            f.write(LAUNCHER)
        os.chmod(w("launch.sh"), 0o755)
        subprocess.check_call([LLVM + "/llvm-as",
                               os.path.join(SRC, "test/lit/Inputs/postlink/mixed_lib.ll"),
                               "-o", w("lib.bc")])
        subprocess.check_call([fatpack, "create", "--image=file=%s,triple=spirv64-unknown-"
                               "unknown,arch=generic,kind=sycl" % w("lib.bc"), "-o", w("lib.bin")])
        subprocess.check_call(["clang-22", "-c", "-x", "c", "/dev/null", "-Xclang",
                               "-fembed-offload-object=" + w("lib.bin"), "-o", w("lib.o")])
        subprocess.check_call(["clang-22", "-c", os.path.join(SRC, "test/runtime/sycl_rt.c"),
                               "-o", w("rt.o")])
        subprocess.run(["clang-22", "-c", "-x", "c", "-", "-o", w("main.o")], check=True,
                       input=b"int main(void) { return 0; }\n")
        r = random.Random(a.seed)
        counts, bad = {}, {}
        for i in range(a.cases):
            tool = r.choice(["none", "fail", "crash", "hang", "garbage"])
            sig = r.choice([None, None, signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
            out = w("out")
            previous = b"previous output %d" % i
            with open(out, "wb") as f:
                f.write(previous)
            pids = w("pids")
            open(pids, "w").close()
            argv = [fat, "--linker-path=/usr/bin/ld", "-o", out, w("main.o"), w("lib.o"),
                    w("rt.o"), "-lc", "--sycl-targets=spir64,intel_gpu_skl,intel_gpu_tgllp",
                    "--gpu-tool-launcher=" + w("launch.sh"), "--tool-timeout=2",
                    "--wrapper-jobs=%d" % r.choice([1, 2, 4]),
                    "--sycl-module-split-mode=" + r.choice(["auto", "per_kernel"])]
            env = dict(os.environ, TMPDIR=tmp, FAULT_MODE=tool, FAULT_PIDS=pids)
            p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            if sig is not None:
                time.sleep(r.uniform(0.0, 0.6))
                p.send_signal(sig)
            _, err = p.communicate()
            rc = p.returncode
            kind = "%s/%s: %s" % (tool, signal.Signals(sig).name if sig else "-",
                                  "ok" if rc == 0 else "signal" if rc < 0 else "error")
            counts[kind] = counts.get(kind, 0) + 1
            problems = []
            if rc != 0 and open(out, "rb").read() != previous:
                problems.append("output changed")
            if rc == 0 and tool != "none":
                problems.append("succeeded despite the fault")
            if rc > 0 and len(err.decode("latin1").strip().splitlines()) != 1:
                problems.append("not one line")
            if os.listdir(tmp):
                problems.append("TMPDIR not empty")
                shutil.rmtree(tmp)
                os.makedirs(tmp)
            time.sleep(0.05)
            for pid in [int(x) for x in open(pids).read().split()]:
                if alive(pid):
                    problems.append("tool left running")
                    os.kill(pid, signal.SIGKILL)
            for pr in problems:
                bad[pr] = bad.get(pr, 0) + 1
                if bad[pr] <= 3:
                    print("case %d (%s): %s: %s" % (i, kind, pr, err.decode("latin1")[-300:]))
        print("faults: %d cases (seed %d)" % (a.cases, a.seed))
        for k in sorted(counts):
            print("  %-32s %d" % (k, counts[k]))
        print("violations: %s" % (", ".join("%s %d" % kv for kv in sorted(bad.items()))
                                  if bad else "none"))
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
