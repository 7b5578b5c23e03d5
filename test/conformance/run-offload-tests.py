#!/usr/bin/env python3
"""run-offload-tests.py build|check --tests DIR --work DIR [options]

Runs LLVM's own OpenMP offloading tests (llvm-project `offload/test`, the
.c/.cpp files of it that compile, run and check a program, copied into DIR
from an llvm-project checkout; never part of this repository) for NVIDIA
GPUs, each program linked twice from the same objects: by upstream's
clang-linker-wrapper 22 (clang-22's own) and by fatlink (clang-22 -B the
directory of fatlink's clang-linker-wrapper). Needs LLVM 22's OpenMP device
runtime (--devicertl, default ../shared/reference/omp-devicertl beside the
repository).

The programs run where the GPU is, which need not be here, so this has two
halves around a run there:
  build  compiles and links every test's programs into WORK/bin (each
         linker's; where fatlink's program is byte-identical to upstream's
         only one is kept and run), and writes WORK/run.sh, which runs
         every program there as the test's RUN lines say (environment,
         expected crashes) and records what each FileCheck would have read
         into WORK/out/;
  check  (after `sh WORK/run.sh` on the GPU machine, with WORK/out brought
         back) runs FileCheck here on what was recorded and prints, per
         test, whether upstream's link and fatlink's passed.
A test is taken when its RUN lines use only the substitutions below
(lit.cfg's, for nvptx64-nvidia-cuda) and its REQUIRES/UNSUPPORTED/XFAIL
lines hold for an NVIDIA GPU with unified shared memory; the rest are
listed with the reason."""
import argparse
import filecmp
import os
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from litexpr import holds  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRIPLE = "nvptx64-nvidia-cuda"
HOST = "x86_64-pc-linux-gnu"
FEATURES = {"gpu", "nvidiagpu", TRIPLE, "unified_shared_memory", "linux",
            "system-linux"}

# The compile substitutions: (name, C++?, extra flags before %s).
COMPILES = [("compileoptxx", True, ["-O3"]), ("compileopt", False, ["-O3"]),
            ("compilexx", True, []), ("compile", False, [])]


def directives(text, key):
    out = []
    for line in text.splitlines():
        m = re.search(r"\b%s:\s*(.*)$" % key, line)
        if m:
            out.append(m.group(1).strip())
    return out


def run_lines(text):
    lines, cur = [], ""
    for line in text.splitlines():
        m = re.search(r"\bRUN:(.*)$", line)
        if not m:
            continue
        part = m.group(1).rstrip()
        if part.endswith("\\"):
            cur += part[:-1] + " "
            continue
        lines.append((cur + part).strip())
        cur = ""
    return lines


def expand(line):
    """One RUN line with the generic substitutions spelled out into the
    markers @COMPILE[cxx|c]:<opt>@ (a compile and link of %s into %t),
    @RUN@ (the program) and @FILECHECK@; None where the line uses one this
    script does not know. A substitution spelled for this target is the
    generic one; for another target, as lit.cfg makes it, a no-op."""
    line = line.replace("-" + TRIPLE, "-generic")
    line = re.sub(r"%(libomptarget-[a-z-]+?|fcheck)-(aarch64|x86_64|s390x|"
                  r"powerpc64le|powerpc64|amdgcn)-[A-Za-z0-9_-]+",
                  "echo ignored-command", line)
    for name, cxx, flags in COMPILES:
        mark = "@COMPILE%s:%s@" % ("cxx" if cxx else "c", " ".join(flags))
        line = line.replace("%%libomptarget-%s-run-and-check-generic" % name,
                            mark + " && @RUN@ | @FILECHECK@ %s")
        line = line.replace("%%libomptarget-%s-and-run-generic" % name,
                            mark + " && @RUN@")
        line = line.replace("%%libomptarget-%s-generic" % name, mark)
    line = line.replace("%libomptarget-run-fail-generic", "@NOT@ --crash @RUN@")
    line = line.replace("%libomptarget-run-generic", "@RUN@")
    line = line.replace("%fcheck-plain-generic", "@FILECHECK@")
    line = line.replace("%fcheck-generic", "@FILECHECK@ %s")
    line = line.replace("%not", "@NOT@")
    if re.search(r"%(?!s\b|t\b)[a-z]", line):
        return None
    return line


def compile_cmd(marker, extra, src, out, rtl, fatlink_dir):
    cxx = marker.startswith("@COMPILEcxx")
    opt = marker[marker.index(":") + 1:-1].split()
    cmd = ["clang++-22" if cxx else "clang-22", "-fopenmp",
           "--offload-arch=sm_90",
           "--libomptarget-nvptx-bc-path=%s/libomptarget-nvptx.bc" % rtl,
           "-Xoffload-linker", "-L%s/%s" % (rtl, TRIPLE)]
    if fatlink_dir:
        cmd += ["-B", fatlink_dir]
    return cmd + opt + [src, "-o", out] + extra


def split_compiles(line):
    """[(marker, extra args)] of each compile (of %s into %t, as the
    substitution is) in the expanded line, and the line with each compile
    replaced by @BIN<k>@ (k in order)."""
    parts = re.split(r"(@COMPILE(?:cxx|c):[^@]*@)", line)
    found, out = [], []
    i = 0
    while i < len(parts):
        p = parts[i]
        if p.startswith("@COMPILE"):
            rest = parts[i + 1] if i + 1 < len(parts) else ""
            m = re.match(r"([^&|;]*)(.*)$", rest, re.S)
            args = shlex.split(m.group(1))
            if "-o" in args or "-c" in args or "%t" in m.group(1):
                return None, None  # objects of their own, linked later
            found.append((p, args))
            out.append("@BIN%d@ " % (len(found) - 1) + m.group(2))
            i += 2
            continue
        out.append(p)
        i += 1
    return found, "".join(out)


def select(tests_dir):
    taken, skipped = [], []
    for dirpath, _, files in sorted(os.walk(tests_dir)):
        for f in sorted(files):
            if not f.endswith((".c", ".cpp")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, tests_dir)
            text = open(path, errors="replace").read()
            runs = run_lines(text)
            if not runs:
                skipped.append((rel, "no RUN lines"))
                continue
            req = directives(text, "REQUIRES")
            uns = directives(text, "UNSUPPORTED")
            xf = directives(text, "XFAIL")
            feats = FEATURES
            if req and not all(holds(e, feats, HOST) for r in req
                               for e in r.split(",")):
                skipped.append((rel, "REQUIRES: " + "; ".join(req)))
                continue
            if any(holds(e, feats, HOST) for u in uns
                   for e in u.split(",")):
                skipped.append((rel, "UNSUPPORTED: " + "; ".join(uns)))
                continue
            expanded = [expand(r) for r in runs]
            if None in expanded:
                bad = runs[expanded.index(None)]
                skipped.append((rel, "substitution: " + bad[:70]))
                continue
            steps = []
            for e in expanded:
                found, line = split_compiles(e)
                if found is None:
                    skipped.append((rel, "compile line: " + e[:70]))
                    break
                steps.append((found, line))
            else:
                if not any(f for f, _ in steps):
                    skipped.append((rel, "compiles nothing"))
                    continue
                xfail = any(holds(e, feats, HOST) for x in xf
                            for e in x.split(","))
                taken.append((rel, path, steps, xfail))
    return taken, skipped


SHELL_HEAD = r"""#!/bin/bash
# Runs the offload tests' programs (run-offload-tests.py build wrote it):
# sh run.sh [DIR]; DIR (default: this script's) holds bin/ and gets out/.
D=${1:-$(cd "$(dirname "$0")" && pwd)}
mkdir -p "$D/out"
export LD_LIBRARY_PATH="$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fc() {  # what FileCheck would read, and its arguments, for later
  n=1; while [ -e "$O.fc$n.args" ]; do n=$((n + 1)); done
  printf '%s\n' "$@" > "$O.fc$n.args"; cat > "$O.fc$n.in"
}
notx() {
  if [ "$1" = --crash ]; then shift; "$@"; r=$?; [ $r -gt 128 ]; return; fi
  "$@" && return 1 || return 0
}
export -f fc notx
export D n=0
one() {  # one test, one linker: O=out/<id>.<linker>, then the lines
  export O="$D/out/$1"; shift
  timeout 120 bash -o pipefail -c "$*" > "$O.log" 2>&1; echo $? > "$O.rc"
}
"""


def build(a):
    taken, skipped = select(a.tests)
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "bin"))
    fatlink_dir = os.path.abspath(a.fatlink)
    script = [SHELL_HEAD]
    built, failed = [], []
    env = dict(os.environ, TMPDIR=os.path.join(work, "tmp"))
    os.makedirs(env["TMPDIR"])
    for rel, path, steps, xfail in taken:
        tid = re.sub(r"[^A-Za-z0-9_.-]", "_", rel)
        bins = {}
        ok = True
        k = 0
        for found, _ in steps:
            for marker, extra in found:
                for linker in ("upstream", "fatlink"):
                    out = os.path.join(work, "bin", "%s.%d.%s" % (tid, k, linker))
                    cmd = compile_cmd(marker, extra, path, out, a.devicertl,
                                      fatlink_dir if linker == "fatlink" else None)
                    p = subprocess.run(cmd, capture_output=True, text=True,
                                       env=env, cwd=work)
                    if p.returncode:
                        failed.append((rel, linker, (p.stderr or "").strip()
                                       .splitlines()[-1:] or ["?"]))
                        ok = False
                        break
                    bins[(k, linker)] = out
                if not ok:
                    break
                up, fl = bins[(k, "upstream")], bins[(k, "fatlink")]
                if filecmp.cmp(up, fl, shallow=False):
                    os.unlink(fl)
                    bins[(k, "fatlink")] = up
                k += 1
            if not ok:
                break
        if not ok:
            continue
        same = all(bins[(i, "fatlink")] == bins[(i, "upstream")]
                   for i in range(k))
        built.append((rel, tid, xfail, k, same))
        # the same programs run once: their results are both links'
        for linker in ("upstream",) if same else ("upstream", "fatlink"):
            lines = []
            k = 0
            for found, line in steps:
                for i in range(len(found)):
                    b = os.path.relpath(bins[(k + i, linker)], work)
                    line = line.replace("@BIN%d@" % i,
                                        'T="$D/%s"; true' % b, 1)
                k += len(found)
                line = (line.replace("@RUN@", '"$T"')
                        .replace("@FILECHECK@", "fc")
                        .replace("@NOT@", "notx")
                        .replace("%t", '"$T"')
                        .replace("%s", shlex.quote(rel)))
                lines.append(line)
            script.append("one %s %s\n" % (
                shlex.quote("%s.%s" % (tid, linker)),
                shlex.quote(" && ".join("{ %s; }" % l for l in lines))))
    with open(os.path.join(work, "run.sh"), "w") as f:
        f.write("".join(script))
    with open(os.path.join(work, "tests.txt"), "w") as f:
        for rel, tid, xfail, k, same in built:
            f.write("%s\t%s\t%d\t%d\t%d\n" % (rel, tid, xfail, k, same))
    print("offload tests in %s: %d taken, %d skipped, %d failed to build"
          % (a.tests, len(taken), len(skipped), len(failed)))
    for rel, why in skipped:
        print("  skipped %-55s %s" % (rel, why))
    for rel, linker, why in failed:
        print("  BUILD FAILED (%s) %s: %s" % (linker, rel, why[0]))
    same = sum(1 for b in built if b[4])
    print("built %d tests; fatlink's programs byte-identical to upstream's "
          "in %d" % (len(built), same))
    return 1 if any(l == "fatlink" for _, l, _ in failed) else 0


def check(a):
    work = os.path.abspath(a.work)
    rows = [l.rstrip("\n").split("\t")
            for l in open(os.path.join(work, "tests.txt"))]
    res = {"upstream": 0, "fatlink": 0}
    differ = []
    for rel, tid, xfail, k, same in rows:
        verdict = {}
        for linker in ("upstream", "fatlink"):
            o = os.path.join(work, "out", "%s.%s" % (
                tid, "upstream" if same == "1" else linker))
            if not os.path.exists(o + ".rc"):
                verdict[linker] = "not run"
                continue
            ok = open(o + ".rc").read().strip() == "0"
            why = "" if ok else "exit " + open(o + ".rc").read().strip()
            n = 1
            while ok and os.path.exists("%s.fc%d.args" % (o, n)):
                args = open("%s.fc%d.args" % (o, n)).read().splitlines()
                args = [os.path.join(a.tests, x) if x == rel else x
                        for x in args]
                with open("%s.fc%d.in" % (o, n)) as stdin:
                    p = subprocess.run(["/usr/lib/llvm-22/bin/FileCheck"] + args,
                                       stdin=stdin, capture_output=True,
                                       text=True)
                if p.returncode:
                    ok = False
                    why = (p.stderr.splitlines() or ["FileCheck failed"])[0]
                n += 1
            if xfail == "1":
                ok, why = not ok, ("XPASS" if ok else "")
            verdict[linker] = "PASS" if ok else "FAIL " + why
            res[linker] += ok
        if verdict["upstream"] != verdict["fatlink"] or a.verbose:
            differ.append((rel, verdict, same == "1"))
        print("%-55s upstream %-6s fatlink %-6s%s" % (
            rel, verdict["upstream"][:6], verdict["fatlink"][:6],
            "  (same program)" if same == "1" else ""))
    print("\n%d tests: upstream's link passes %d, fatlink's %d" %
          (len(rows), res["upstream"], res["fatlink"]))
    for rel, v, same in differ:
        print("  %s: upstream %s; fatlink %s" % (rel, v["upstream"],
                                                 v["fatlink"]))
    return 0 if all(v["fatlink"].startswith("PASS") or
                    not v["upstream"].startswith("PASS")
                    for _, v, _ in differ) else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("phase", choices=["build", "check"])
    ap.add_argument("--tests", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--fatlink", default=os.path.join(ROOT, "build", "bin"),
                    help="directory of fatlink's clang-linker-wrapper")
    ap.add_argument("--devicertl", default=os.path.join(
        os.path.dirname(ROOT), "shared", "reference", "omp-devicertl"))
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    a.tests = os.path.abspath(a.tests)
    return build(a) if a.phase == "build" else check(a)


if __name__ == "__main__":
    sys.exit(main())
