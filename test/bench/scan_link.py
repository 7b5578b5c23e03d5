#!/usr/bin/env python3
"""scan_link.py [--objects N] [--members M] [--sycl S] [--runs R] [--build DIR]
               [--as-linker]

Scan benchmark: a link dominated by inputs without device code. Generates
N host-only objects, a host archive of M members (the program pulls in every
fourth), and S SYCL fat objects from clang++-22 -fsycl, then links the same
inputs three ways in one run, alternating, R times each:
  ld        the plain host link (clang++-22 without -fsycl: ld alone),
  ld-thp    the same with GLIBC_TUNABLES=glibc.malloc.hugetlb=1, as fatlink
            runs its tools (launch.c): fatlink's own cost is its time over
            this one,
  fatlink   through fatlink with the argv clang++-22 -fsycl passes,
  upstream  the same argv through upstream clang-linker-wrapper 22.
With --as-linker there is no device code at all (S is 0) and fatlink is
the host linker itself (ld's own argv, as clang -fuse-ld=<fatlink> runs
it), so its cost is the scan in front of the linker (fatlink-ld).
Prints median wall time and peak memory (max RSS of the process tree, from
wait4) of each and the ratios to ld. Host objects are made from one compiled
template with llvm-objcopy --prefix-symbols, so generation stays fast."""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

LLVM_BIN = "/usr/lib/llvm-22/bin"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchutil import medians, parallel, run_timed, wrapper_argv  # noqa: E402
SRC = os.path.dirname(os.path.dirname(HERE))


def sycl_tu(i):
    return ("template <typename N, typename F>\n"
            "[[clang::sycl_kernel_entry_point(N)]] void st(F f) { f(); }\n"
            "struct K%d_a; struct K%d_b;\n"
            "void sycl_%d(float *p, int n) {\n"
            "  st<K%d_a>([=]() { for (int x = 0; x < n; x++) p[x] *= 2.0f; });\n"
            "  st<K%d_b>([=]() { for (int x = 0; x < n; x++) p[x] += 1.0f; });\n"
            "}\n" % (i, i, i, i, i))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=1500)
    ap.add_argument("--members", type=int, default=800)
    ap.add_argument("--sycl", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--as-linker", action="store_true")
    a = ap.parse_args()
    if a.as_linker:
        a.sycl = 0
    fatlink = os.path.join(os.path.abspath(a.build), "bin", "fatlink")
    work = tempfile.mkdtemp(prefix="fatlink-scan-")
    try:
        os.chdir(work)
        with open("tmpl.c", "w") as f:
            f.write("static int t[64];\n"
                    + "".join("int fn%d(int x) { t[x & 63] += x * %d; return t[%d]; }\n"
                              % (k, k + 3, k) for k in range(40))
                    + "const char *name = \"template object\";\n")
        subprocess.check_call(["clang-22", "-O2", "-c", "tmpl.c", "-o", "tmpl.o"])
        objcopy = os.path.join(LLVM_BIN, "llvm-objcopy")
        parallel([[objcopy, "--prefix-symbols=h%d_" % i, "tmpl.o", "h%d.o" % i]
                  for i in range(a.objects)])
        parallel([[objcopy, "--prefix-symbols=m%d_" % i, "tmpl.o", "m%d.o" % i]
                  for i in range(a.members)])
        subprocess.check_call(["ar", "rcs", "libhost.a"] +
                              ["m%d.o" % i for i in range(a.members)])
        for i in range(a.sycl):
            with open("s%d.cpp" % i, "w") as f:
                f.write(sycl_tu(i))
        parallel([["clang++-22", "-fsycl", "-O2", "-c", "s%d.cpp" % i, "-o", "s%d.o" % i]
                  for i in range(a.sycl)])
        pulled = range(0, a.members, 4)
        with open("main.cpp", "w") as f:
            f.write("".join("extern \"C\" int m%d_fn0(int);\n" % i for i in pulled))
            f.write("".join("void sycl_%d(float *, int);\n" % i for i in range(a.sycl)))
            f.write("int main() { int r = 0;\n"
                    + "".join("  r += m%d_fn0(1);\n" % i for i in pulled)
                    + "  return r == 0; }\n")
        subprocess.check_call(["clang++-22", "-c", "main.cpp", "-o", "main.o"])
        subprocess.check_call(["clang-22", "-c", os.path.join(SRC, "test", "runtime",
                                                             "sycl_rt.c"), "-o", "rt.o"])
        inputs = (["main.o", "rt.o"] + ["h%d.o" % i for i in range(a.objects)]
                  + ["s%d.o" % i for i in range(a.sycl)] + ["libhost.a"])
        ld_argv = wrapper_argv(inputs + ["-o", "prog.ld"])
        w_argv = wrapper_argv(["-fsycl"] + inputs + ["-o", "prog"])[1:]
        env = dict(os.environ)
        os.makedirs("tmp-ours")
        os.makedirs("tmp-up")
        ours_env = dict(env, TMPDIR=os.path.join(work, "tmp-ours"))
        up_env = dict(env, TMPDIR=os.path.join(work, "tmp-up"),
                      PATH=LLVM_BIN + ":" + env.get("PATH", ""))
        thp_env = dict(env, GLIBC_TUNABLES="glibc.malloc.hugetlb=1")
        if a.as_linker:
            cases = (("ld", ld_argv, env), ("ld-thp", ld_argv, thp_env),
                     ("fatlink-ld", [fatlink] + ld_argv[1:], ours_env))
        else:
            cases = (("ld", ld_argv, env), ("ld-thp", ld_argv, thp_env),
                     ("fatlink", [fatlink] + w_argv, ours_env),
                     ("upstream", [os.path.join(LLVM_BIN, "clang-linker-wrapper")] + w_argv,
                      up_env))
        runs = {name: [] for name, _, _ in cases}
        for r in range(a.runs + 1):
            for name, argv, e in cases:
                w, m, c = run_timed(argv, e)
                if r:  # the first round warms the page cache
                    runs[name].append((w, m, c))
        out = "" if a.as_linker else subprocess.run(["./prog"], capture_output=True,
                                                    text=True).stdout
        kernels = out.count("  entry ")
        print("scan benchmark: %d host objects, %d-member archive (%d pulled), "
              "%d SYCL objects; %d runs, %d cores; %d kernels registered" %
              (a.objects, a.members, len(pulled), a.sycl, a.runs, os.cpu_count(),
               kernels))
        med = medians(runs)
        for n in runs:
            print("  %-10s wall %7.3f s (%5.2fx ld)   cpu %7.3f s (%5.2fx ld)   "
                  "peak %7.1f MiB (%5.2fx ld)" %
                  (n, med[n][0], med[n][0] / med["ld"][0], med[n][2],
                   med[n][2] / med["ld"][2], med[n][1], med[n][1] / med["ld"][1]))
        ours = "fatlink-ld" if a.as_linker else "fatlink"
        print("  %s/ld-thp wall %.2fx cpu %.2fx" %
              (ours, med[ours][0] / med["ld-thp"][0], med[ours][2] / med["ld-thp"][2]))
        if not a.as_linker:
            print("  fatlink/upstream wall %.2fx" %
                  (med["fatlink"][0] / med["upstream"][0]))
        if os.environ.get("SCAN_BENCH_KEEP"):
            with open("argv.rsp", "w") as f:
                f.write(" ".join(shlex.quote(x) for x in w_argv))
            print("  kept in " + work)
            return
    finally:
        os.chdir("/")
        if not os.environ.get("SCAN_BENCH_KEEP"):
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
