"""benchutil.py - what the benchmarks share: timing a command as a whole
process tree (wall time; CPU time, user + system, and peak memory from
wait4's rusage, which covers the children it waited for: the largest
process's peak; or, sampled, the whole tree's at once), running
generation commands in parallel, the wrapper argv clang++-22 would pass,
and medians."""
import os
import shlex
import statistics
import subprocess
import sys
import threading
import time


def tree_pss(root):
    """The proportional set size, in KiB, of `root` and every process below
    it (memory that forked processes share counts once in all)."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
                parent[int(d)] = int(st[st.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                pass
    total = 0
    for pid in parent:
        p = pid
        while p in parent and p != root:
            p = parent[p]
        if p != root:
            continue
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


class TreeSampler:
    """Samples tree_pss(pid) every `period` seconds until stop(); .peak is
    the most seen, in MiB."""
    def __init__(self, pid, period=0.02):
        self.pid, self.period, self.peak = pid, period, 0.0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        while not self.done.is_set():
            self.peak = max(self.peak, tree_pss(self.pid) / 1024.0)
            self.done.wait(self.period)

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.peak


def run_timed(argv, env, fails=False, tree=False):
    """Runs argv with env; returns (wall seconds, peak MiB, CPU seconds).
    The peak is the largest process's, or with `tree` the most the whole
    tree held at once (sampled). Exits on failure (with `fails`, on
    success: the link must fail)."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.execve(argv[0], argv, env)
    sampler = TreeSampler(pid) if tree else None
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    peak = sampler.stop() if sampler else ru.ru_maxrss / 1024.0
    code = os.waitstatus_to_exitcode(status)
    if (code != 0) != fails:
        sys.exit("benchmark: %s %s" % (argv[0], "succeeded" if fails else
                                       "failed"))
    return wall, peak, ru.ru_utime + ru.ru_stime


def parallel(cmds):
    """Runs every command, two per core at most; exits if one fails."""
    ncpu = os.cpu_count() or 1
    running = []
    for c in cmds:
        running.append(subprocess.Popen(c))
        if len(running) >= ncpu * 2:
            if running.pop(0).wait() != 0:
                sys.exit("benchmark: generation failed")
    for p in running:
        if p.wait() != 0:
            sys.exit("benchmark: generation failed")


def build_program(work, srcs, src_root, flags=("-O2",)):
    """Compiles the SYCL sources (clang++-22 -fsycl -c with `flags`) and the
    test runtime (test/runtime/sycl_rt.c under src_root) in `work`; returns
    the output path of their link and the argv clang++-22 gives the wrapper
    to link them there."""
    objs = [s[:-4] + ".o" for s in srcs]
    parallel([["clang++-22", "-fsycl"] + list(flags) + ["-c", s, "-o", o]
              for s, o in zip(srcs, objs)])
    rt = os.path.join(work, "rt.o")
    subprocess.check_call(["clang-22", "-c", os.path.join(
        src_root, "test", "runtime", "sycl_rt.c"), "-o", rt])
    out = os.path.join(work, "prog")
    return out, wrapper_argv(["-fsycl"] + objs + [rt, "-o", out])[1:]


def envs(work, llvm_bin):
    """Environments for fatlink and for upstream (its tools first on PATH),
    each with a TMPDIR of its own under `work`, to count what is left."""
    ours = dict(os.environ, TMPDIR=os.path.join(work, "tmp-ours"))
    up = dict(os.environ, TMPDIR=os.path.join(work, "tmp-upstream"),
              PATH=llvm_bin + ":" + os.environ.get("PATH", ""))
    os.makedirs(ours["TMPDIR"])
    os.makedirs(up["TMPDIR"])
    return ours, up


def wrapper_argv(cxx_args):
    """The last command clang++-22 -### prints for cxx_args (the link)."""
    out = subprocess.run(["clang++-22", "-###"] + cxx_args, capture_output=True,
                         text=True).stderr
    lines = [l for l in out.splitlines() if l.startswith(" \"")]
    return shlex.split(lines[-1])


def medians(runs):
    """{name: [(wall, peak, cpu), ...]} -> {name: (median of each, ...)}."""
    return {n: tuple(statistics.median(col) for col in zip(*v))
            for n, v in runs.items()}


def upstream_vs_fatlink(argvs, runs, title):
    """Runs {"upstream": (argv, env), "fatlink": (argv, env)} alternately,
    `runs` times each, and prints `title`, the median wall time, CPU time
    and peak memory of each and fatlink's ratios to upstream."""
    timed = {n: [] for n in argvs}
    for _ in range(runs):
        for name, (argv, env) in argvs.items():
            timed[name].append(run_timed(argv, env))
    med = medians(timed)
    print(title)
    print("%-9s %8s %8s %9s" % ("", "wall s", "cpu s", "peak MiB"))
    for name in argvs:
        w, m, c = med[name]
        print("%-9s %8.3f %8.3f %9.1f" % (name, w, c, m))
    (uw, um, uc), (fw, fm, fc) = med["upstream"], med["fatlink"]
    print("fatlink/upstream: wall %.2f, cpu %.2f, peak %.2f"
          % (fw / uw, fc / uc, fm / um))
