#!/usr/bin/env python3
"""faults.py [--cases N] [--seed S] [--build DIR]

Fault injection across a link's jobs: random cases of
  - a device tool (ocloc for an Intel GPU, through a launcher stand-in that
    records its pid) failing, crashing (SIGSEGV), hanging past
    --tool-timeout, or writing garbage instead of a binary;
  - a fatal signal (SIGINT, SIGTERM, SIGHUP) to fatlink at a random time;
  - a full disk: TMPDIR, or the output's directory, on a small tmpfs
    (16 KiB to 1 MiB) in a mount namespace of the case's own (where
    `unshare -rm` can make one), checked from inside it;
  - a tool fault with a signal or a full disk, and none;
with a random job count and split. After each: on failure, the previous
output is byte for byte what it was; TMPDIR is empty; no tool fatlink
started is still running; a failure is one line (after the host linker's
own, when it was ld that failed). Prints the counts of each outcome and of every
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

# Runs a link in a mount namespace with DIR on a tmpfs of SIZE, the previous
# output written first; leaves the status, what TMPDIR holds and whether the
# output is the previous one in files outside the tmpfs.
DISK = r"""#!/bin/sh
mount -t tmpfs -o size="$FAULT_SIZE" tmpfs "$FAULT_DIR" || exit 99
cp "$FAULT_PREV" "$FAULT_OUT"
"$@" 2> "$FAULT_ERR"
echo $? > "$FAULT_RC"
ls -A "$TMPDIR" > "$FAULT_LEFT"
cmp -s "$FAULT_PREV" "$FAULT_OUT" && echo same > "$FAULT_SAME"
exit 0
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
        for name, text in (("launch.sh", LAUNCHER), ("disk.sh", DISK)):
            with open(w(name), "w") as f:
                f.write(text)
            os.chmod(w(name), 0o755)
        os.makedirs(w("outdir"))
        can_mount = subprocess.run(
            ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs " + tmp],
            capture_output=True).returncode == 0
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
            disk = r.choice([None, None, "tmp", "out"]) if can_mount else None
            size = r.choice(["16k", "64k", "256k", "1m"])
            if disk:
                sig = None
            if disk == "out":
                out = w("outdir/out")
                if tool == "none":
                    size = "16k"  # too small for the program: a fault
            else:
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
            problems = []
            if disk:
                for f in ("err", "rc", "left", "same"):
                    if os.path.exists(w(f)):
                        os.remove(w(f))
                with open(w("prev"), "wb") as f:
                    f.write(previous)
                env.update(FAULT_SIZE=size, FAULT_DIR=tmp if disk == "tmp" else w("outdir"),
                           FAULT_PREV=w("prev"), FAULT_OUT=out, FAULT_ERR=w("err"),
                           FAULT_RC=w("rc"), FAULT_LEFT=w("left"), FAULT_SAME=w("same"))
                subprocess.run(["unshare", "-rm", w("disk.sh")] + argv, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                rc = int(open(w("rc")).read())
                err = open(w("err"), "rb").read()
                if open(w("left")).read().strip():
                    problems.append("TMPDIR not empty")
                if rc != 0 and not os.path.exists(w("same")):
                    problems.append("output changed")
            else:
                p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
                if sig is not None:
                    time.sleep(r.uniform(0.0, 0.6))
                    p.send_signal(sig)
                _, err = p.communicate()
                rc = p.returncode
                if rc != 0 and open(out, "rb").read() != previous:
                    problems.append("output changed")
            kind = "%s/%s: %s" % (tool, ("disk-%s-%s" % (disk, size)) if disk else
                                  signal.Signals(sig).name if sig else "-",
                                  "ok" if rc == 0 else "signal" if rc < 0 else "error")
            counts[kind] = counts.get(kind, 0) + 1
            if rc == 0 and tool != "none":
                problems.append("succeeded despite the fault")
            # The host linker's own diagnostics (ld writing the output to a
            # full disk) come before fatlink's line.
            lines = err.decode("latin1").strip().splitlines()
            if rc > 0 and len(lines) != 1 and not lines[-1].endswith(
                    "'/usr/bin/ld': failed with exit code 1"):
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
        print("faults: %d cases (seed %d)%s" % (a.cases, a.seed, "" if can_mount else
                                                "; no mount namespace here: no disk cases"))
        for k in sorted(counts):
            print("  %-32s %d" % (k, counts[k]))
        print("violations: %s" % (", ".join("%s %d" % kv for kv in sorted(bad.items()))
                                  if bad else "none"))
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
