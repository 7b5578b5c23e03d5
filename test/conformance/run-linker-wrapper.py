#!/usr/bin/env python3
"""run-linker-wrapper.py --tests DIR --fatlink PATH [--upstream PATH]
                         [--work DIR] [--json OUT] [--only SUBSTR]
                         [--timeout S]

Runs LLVM's clang-linker-wrapper lit tests (DIR holds copies of
clang/test/Driver/linker-wrapper*.c and clang/test/Tooling/
clang-linker-wrapper*.cpp, read out of tree; never copied into this
repository) twice: once with upstream's wrapper (--upstream, default
llvm-22's clang-linker-wrapper) and once with fatlink (--fatlink, e.g. the
build's bin/fatlink), and compares the two.

Each test's RUN lines (continuations joined as lit joins them, %if FEATURE
%{ A %} %else %{ B %} resolved) run in file order in bash with pipefail, one
bash per line, in a work directory of the test's own per wrapper
(WORK/upstream/TEST and WORK/fatlink/TEST; a `cd` carries over to the next
line, as in lit). Substituted: %s, %S, %p, %t (WORK/SIDE/TEST/t), %T,
%clang, %clangxx, %clang_cc1 (llvm-22's clang), and the word
clang-linker-wrapper (the wrapper under test). llvm-22's bin directory comes
first on PATH, so FileCheck, not, count, llvm-ar, opt, llvm-offload-binary
and the rest are llvm-22's; clang-offload-packager means llvm-offload-binary
where llvm-22 has no tool of that name. Each line has a time limit
(--timeout, 60 s).

A check is a RUN line that runs clang-linker-wrapper. It passes when its own
line and the lines after it up to the next check (those that look at what it
made: FileCheck on a remarks file, `test -f`, clang-offload-bundler -list ...)
all exit 0. Each check is reported as PASS-both, FAIL-both,
PASS-upstream-only (fatlink differs: these are the ones that matter) or
PASS-fatlink-only; a check that cannot run here is counted apart, with why:
a REQUIRES feature this machine has not (the *-registered-target features
come from llc --version; system-linux, lld, spirv-tools from what is
installed), UNSUPPORTED or XFAIL that holds, a tool that is not installed, or
a lit substitution this runner does not know.

Printed: a table by file, the totals ("checks upstream passes: N; fatlink
passes M of them") and, for each check that passes only with upstream, its
line, the RUN line shortened and the first lines of fatlink's output (the
pipeline's stdout and stderr together, FileCheck's message included). Many
upstream checks use --dry-run and match the commands the wrapper would run;
fatlink links in process, so its dry-run text differs by design: they are
reported like any other check (marked "dry-run" in the details).

--json OUT writes every check with both runs' results. --work keeps the work
directories (default: a temporary directory, removed at the end)."""
import argparse
import collections
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from litexpr import holds  # noqa: E402
import tempfile

LLVM_BIN = "/usr/lib/llvm-22/bin"
WRAPPER = "clang-linker-wrapper"
# Shell words that need no program on PATH.
BUILTINS = {"cd", "test", "[", "echo", "true", "false", "export", "set", ":",
            "printf", "pwd", "exit", "read", "type", "ulimit", "umask",
            "unset", "source", "."}
# LLVM target names as llc lists them -> lit's <name>-registered-target.
TARGET_FEATURE = [
    (r"x86", "x86"), (r"nvptx", "nvptx"), (r"amdgcn|r600", "amdgpu"),
    (r"spirv", "spirv"), (r"aarch64|arm64", "aarch64"), (r"arm|thumb", "arm"),
    (r"riscv", "riscv"), (r"ppc", "powerpc"), (r"mips", "mips"),
    (r"sparc", "sparc"), (r"bpf", "bpf"), (r"hexagon", "hexagon"),
    (r"lanai", "lanai"), (r"loongarch", "loongarch"), (r"m68k", "m68k"),
    (r"msp430", "msp430"), (r"avr", "avr"), (r"systemz", "systemz"),
    (r"wasm", "webassembly"), (r"xcore", "xcore"), (r"ve$", "ve"),
    (r"csky", "csky"), (r"xtensa", "xtensa")]
KEYWORD = re.compile(r"\b(RUN|REQUIRES|UNSUPPORTED|XFAIL):(.*)$")
IF = re.compile(r"%if\s+([^%\s]+)\s*%\{(.*?)%\}(?:\s*%else\s*%\{(.*?)%\})?")
DETAIL_LINES = 15


def tool_path(name):
    p = os.path.join(LLVM_BIN, name)
    return p if os.path.exists(p) else shutil.which(name)


def features():
    """lit's features that hold here, and the target triple for
    target={{regex}} expressions."""
    f = set()
    out = subprocess.run([os.path.join(LLVM_BIN, "llc"), "--version"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         encoding="utf-8", errors="replace").stdout
    registered = out.split("Registered Targets:", 1)[-1]
    for line in registered.splitlines():
        name = line.strip().split(" ", 1)[0].lower()
        for rx, feat in TARGET_FEATURE:
            if name and re.match(rx, name):
                f.add(feat + "-registered-target")
                break
    system = platform.system().lower()
    f.add("system-" + system)
    if system == "linux":
        f.add("linux")
    f.update(("shell", "native"))
    if tool_path("ld.lld"):
        f.add("lld")
    if all(shutil.which(t) for t in ("spirv-as", "spirv-val", "spirv-link")):
        f.add("spirv-tools")
    # The example pass plugin (Bye) is what llvm-plugins/llvm-examples
    # tests load; Debian's LLVM does not ship it.
    bye = os.path.join(os.path.dirname(LLVM_BIN), "lib", "Bye.so")
    if os.path.exists(bye):
        f.update(("llvm-plugins", "llvm-examples"))
    triple = subprocess.run([os.path.join(LLVM_BIN, "llvm-config"),
                             "--host-target"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, encoding="utf-8",
                            errors="replace").stdout.strip()
    return f, triple or "x86_64-unknown-linux-gnu"


def parse(text, feats):
    """RUN commands as (line number, text) and the REQUIRES, UNSUPPORTED and
    XFAIL clauses."""
    runs, clauses, cont = [], collections.defaultdict(list), None
    for no, raw in enumerate(text.splitlines(), 1):
        m = KEYWORD.search(raw)
        if not m:
            continue
        kind, body = m.group(1), m.group(2).rstrip()
        if kind != "RUN":
            clauses[kind] += [c.strip() for c in body.split(",") if c.strip()]
            continue
        if cont is not None:
            runs[-1][1] = runs[-1][1][:-1] + body
        else:
            runs.append([no, body])
        cont = True if body.endswith("\\") else None
    out = []
    for no, body in runs:
        line = IF.sub(lambda m: m.group(2) if m.group(1) in feats
                      else (m.group(3) or ""), body).strip()
        if line:
            out.append((no, line))
    return out, clauses


def stages(line):
    """The programs a RUN line runs: the first word of each pipeline stage,
    past `not`, `env` and variable assignments."""
    out = []
    for stage in re.split(r"\|\||&&|\||;", line):
        words = stage.strip().split()
        while words:
            w = words[0]
            if re.match(r"^[A-Za-z_]\w*=", w):
                words = words[1:]
            elif w in ("not", "env"):
                words = words[1:]
                while words and words[0].startswith("-"):
                    words = words[1:]
            else:
                break
        if words:
            out.append(words[0])
    return out


def is_check(line):
    return any(os.path.basename(w) == WRAPPER for w in stages(line))


def missing_tools(line):
    """Programs a line names that are nowhere to be found (paths are made by
    the test itself and not looked at)."""
    miss = []
    for w in stages(line):
        if "/" in w or "%" in w or w in BUILTINS or w in ("not", "env"):
            continue
        if w == "clang-offload-packager" or w == WRAPPER:
            continue
        if not tool_path(w):
            miss.append(w)
    return miss


def word(name):
    return re.compile(r"(?<![\w/.%-])" + re.escape(name) + r"(?![\w.-])")


def substitute(line, test, tdir, wrapper):
    tmp = os.path.join(tdir, "t")
    line = word(WRAPPER).sub(lambda m: wrapper, line)
    if not os.path.exists(os.path.join(LLVM_BIN, "clang-offload-packager")):
        line = word("clang-offload-packager").sub(
            lambda m: os.path.join(LLVM_BIN, "llvm-offload-binary"), line)
    clang = os.path.join(LLVM_BIN, "clang")
    subs = [("%clang_cc1", clang + " -cc1"), ("%clangxx", clang + "++"),
            ("%clang_cpp", clang + "-cpp"), ("%clang", clang),
            ("%/s", test), ("%/S", os.path.dirname(test)),
            ("%/p", os.path.dirname(test)), ("%/t", tmp), ("%/T", tdir),
            ("%s", test), ("%S", os.path.dirname(test)),
            ("%p", os.path.dirname(test)), ("%t", tmp), ("%T", tdir),
            ("%{pathsep}", ":"), ("%%", "%")]
    out, i = [], 0
    while i < len(line):
        for key, val in subs:
            if line.startswith(key, i):
                out.append(val)
                i += len(key)
                break
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def unknown_substitution(line):
    """A %name left after substitution: one this runner does not know."""
    probe = substitute(line.replace("%%", ""), "/S/s", "/T", "W")
    m = re.search(r"%[A-Za-z_{][\w{}.-]*", probe)
    return m.group(0) if m else None


def run_line(cmd, cwd, env, timeout, cwd_file):
    script = "trap 'pwd > \"$LW_CWD_FILE\"' EXIT\nset -o pipefail\n" + cmd
    env = dict(env, LW_CWD_FILE=cwd_file)
    p = subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        rc = "timeout"
        out += b"\n[killed after %d s]\n" % timeout
    try:
        new_cwd = open(cwd_file).read().strip() or cwd
    except OSError:
        new_cwd = cwd
    return rc, out.decode("utf-8", "replace"), new_cwd


def run_test(test, lines, wrapper, tdir, timeout):
    """Every RUN line in order; per line: (rc, output)."""
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(os.path.join(tdir, "tmp"))
    env = dict(os.environ, TMPDIR=os.path.join(tdir, "tmp"),
               PATH=LLVM_BIN + os.pathsep + os.environ.get("PATH", ""))
    env.pop("FILECHECK_OPTS", None)
    cwd, res = tdir, []
    cwd_file = os.path.join(tdir, ".cwd")
    for _, line in lines:
        cmd = substitute(line, test, tdir, wrapper)
        rc, out, cwd = run_line(cmd, cwd, env, timeout, cwd_file)
        if not os.path.isdir(cwd):
            cwd = tdir
        res.append((rc, out))
    return res


def shorten(text, n=150):
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 3] + "..."


def head(out, n=DETAIL_LINES):
    lines = [l for l in out.splitlines() if l.strip()]
    more = len(lines) - n
    return lines[:n] + (["... (%d more lines)" % more] if more > 0 else [])


def main():
    ap = argparse.ArgumentParser(
        description="Run LLVM's clang-linker-wrapper lit tests with upstream's "
        "wrapper and with fatlink, and compare.")
    ap.add_argument("--tests", required=True,
                    help="directory of linker-wrapper*.c / "
                         "clang-linker-wrapper*.cpp test files")
    ap.add_argument("--fatlink", required=True, help="fatlink to evaluate")
    ap.add_argument("--upstream",
                    default=os.path.join(LLVM_BIN, WRAPPER),
                    help="upstream's clang-linker-wrapper (default: %(default)s)")
    ap.add_argument("--work", help="work directory (kept); default: a "
                                   "temporary one, removed at the end")
    ap.add_argument("--json", help="write every check's result here")
    ap.add_argument("--only", help="only tests whose name contains this")
    ap.add_argument("--timeout", type=int, default=60,
                    help="seconds per RUN line (default: %(default)s)")
    a = ap.parse_args()
    if not os.path.isdir(a.tests):
        sys.exit("run-linker-wrapper.py: %s is not a directory" % a.tests)
    wrappers = collections.OrderedDict(
        [("upstream", os.path.abspath(a.upstream)),
         ("fatlink", os.path.abspath(a.fatlink))])
    for side, path in wrappers.items():
        if not os.access(path, os.X_OK):
            sys.exit("run-linker-wrapper.py: %s wrapper %s is not executable"
                     % (side, path))
    work = os.path.abspath(a.work) if a.work else tempfile.mkdtemp(prefix="lw.")
    feats, triple = features()
    print("features: %s; target=%s" % (" ".join(sorted(feats)), triple))
    print("upstream: %s\nfatlink:  %s\n" % (wrappers["upstream"],
                                           wrappers["fatlink"]))
    tests = sorted(f for f in os.listdir(a.tests)
                   if f.endswith((".c", ".cpp")) and
                   (not a.only or a.only in f))
    checks, table = [], collections.OrderedDict()
    for name in tests:
        test = os.path.abspath(os.path.join(a.tests, name))
        text = open(test, encoding="utf-8", errors="replace").read()
        lines, clauses = parse(text, feats)
        idx = [i for i, (_, l) in enumerate(lines) if is_check(l)]
        skip = None
        for c in clauses.get("REQUIRES", []):
            if not holds(c, feats, triple):
                skip = "REQUIRES: %s (not available here)" % c
                break
        for c in clauses.get("UNSUPPORTED", []):
            if not skip and holds(c, feats, triple):
                skip = "UNSUPPORTED: %s" % c
        for c in clauses.get("XFAIL", []):
            if not skip and holds(c, feats, triple):
                skip = "XFAIL: %s (expected to fail upstream too)" % c
        # Which lines belong to which check: its own and those after it up
        # to the next check.
        owner = {}
        for n, i in enumerate(idx):
            end = idx[n + 1] if n + 1 < len(idx) else len(lines)
            for j in range(i, end):
                owner[j] = i
        why_not = {}
        for j, (_, line) in enumerate(lines):
            miss = missing_tools(line)
            unk = unknown_substitution(line)
            if not miss and not unk:
                continue
            why = ("needs %s (not installed)" % ", ".join(miss) if miss
                   else "unknown lit substitution %s" % unk)
            if j in owner:
                why_not.setdefault(owner[j], why)
            nxt = [i for i in idx if i > j]
            if j not in idx and nxt:
                why_not.setdefault(nxt[0], "setup line %d %s"
                                   % (lines[j][0], why))
        results = {}
        if not skip and idx:
            for side, path in wrappers.items():
                tdir = os.path.join(work, side, os.path.splitext(name)[0])
                results[side] = run_test(test, lines, path, tdir, a.timeout)
        row = collections.Counter()
        for n, i in enumerate(idx):
            no, line = lines[i]
            rec = {"file": name, "line": no, "run": line,
                   "dry_run": "--dry-run" in line}
            reason = skip or why_not.get(i)
            if reason:
                rec.update(verdict="CANNOT-RUN", reason=reason)
            else:
                end = idx[n + 1] if n + 1 < len(idx) else len(lines)
                ok = {}
                for side in wrappers:
                    res = results[side]
                    bad = next((j for j in range(i, end) if res[j][0] != 0),
                               None)
                    ok[side] = bad is None
                    rec[side] = {
                        "pass": bad is None,
                        "failed_line": None if bad is None else lines[bad][0],
                        "rc": None if bad is None else res[bad][0],
                        "output": head(res[bad if bad is not None else i][1],
                                       60)}
                rec["verdict"] = {
                    (True, True): "PASS-both", (False, False): "FAIL-both",
                    (True, False): "PASS-upstream-only",
                    (False, True): "PASS-fatlink-only"}[
                        (ok["upstream"], ok["fatlink"])]
            row[rec["verdict"]] += 1
            checks.append(rec)
        table[name] = (len(idx), row, skip)

    cols = ["PASS-both", "PASS-upstream-only", "PASS-fatlink-only",
            "FAIL-both", "CANNOT-RUN"]
    short = ["both", "up-only", "fat-only", "fail-both", "cannot"]
    print("%-38s %6s " % ("file", "checks") +
          " ".join("%9s" % s for s in short))
    total = collections.Counter()
    for name, (n, row, skip) in table.items():
        print("%-38s %6d " % (name, n) +
              " ".join("%9d" % row[c] for c in cols) +
              ("   (%s)" % skip if skip else ""))
        total.update(row)
    print("%-38s %6d " % ("all", sum(v[0] for v in table.values())) +
          " ".join("%9d" % total[c] for c in cols))
    up = total["PASS-both"] + total["PASS-upstream-only"]
    print("\nchecks upstream passes: %d; fatlink passes %d of them" %
          (up, total["PASS-both"]))
    print("(fatlink also passes %d that upstream fails; %d fail with both; "
          "%d cannot run here)" % (total["PASS-fatlink-only"],
                                   total["FAIL-both"], total["CANNOT-RUN"]))

    only_up = [c for c in checks if c["verdict"] == "PASS-upstream-only"]
    if only_up:
        print("\n== passes with upstream only (%d) ==" % len(only_up))
    for c in only_up:
        f = c["fatlink"]
        print("\n%s:%d%s\n  $ %s" % (c["file"], c["line"],
                                     "  [dry-run]" if c["dry_run"] else "",
                                     shorten(c["run"])))
        where = ("" if f["failed_line"] == c["line"]
                 else ", at line %d after it" % f["failed_line"])
        print("  fatlink: exit %s%s" % (f["rc"], where))
        for l in f["output"][:DETAIL_LINES]:
            print("  | " + l[:200])
    cannot = [c for c in checks if c["verdict"] == "CANNOT-RUN"]
    if cannot:
        print("\n== cannot run here (%d), by reason ==" % len(cannot))
        by = collections.OrderedDict()
        for c in cannot:
            by.setdefault(c["reason"], []).append("%s:%d" % (c["file"],
                                                             c["line"]))
        for r, where in by.items():
            print("  %3d  %s: %s" % (len(where), r, " ".join(where)))
    for verdict in ("PASS-fatlink-only", "FAIL-both"):
        sel = [c for c in checks if c["verdict"] == verdict]
        if sel:
            print("\n== %s (%d) ==" % (verdict, len(sel)))
        for c in sel:
            u = c["upstream"]
            first = (u["output"] or ["(no output)"])[0] if not u["pass"] \
                else ""
            print("  %s:%d  %s%s" % (c["file"], c["line"], shorten(c["run"], 90),
                                     ("\n      upstream: " + first[:160])
                                     if first else ""))
    if a.json:
        with open(a.json, "w") as fp:
            json.dump({"upstream": wrappers["upstream"],
                       "fatlink": wrappers["fatlink"],
                       "features": sorted(feats), "checks": checks,
                       "totals": dict(total, upstream_passes=up,
                                      fatlink_passes_of_those=
                                      total["PASS-both"])}, fp, indent=1)
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
