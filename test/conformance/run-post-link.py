#!/usr/bin/env python3
"""run-post-link.py TESTS [--tool PATH] [--only SUBSTR] [--verbose] [--link]

Runs intel/llvm's sycl-post-link lit tests (TESTS: a checkout's
llvm/test/tools/sycl-post-link, or a copy of it; never copied into this
repository) against fatlink's sycl-post-link personality, with llvm-22's
FileCheck, and prints a table by directory: passed, failed (with the first
line that failed and what it said) and not applicable (with why: the test
needs a tool or a DPC++ pass fatlink has not, its checks expect typed
pointers, which no tool of today prints, or the stored copy is older than
intel/llvm's sources in a way named in STALE). Typed-pointer IR itself LLVM
22 reads as opaque; the pass rate is also given apart for such older
copies.

Each test's RUN lines run in order in a shell (pipefail, like lit's), with
%s, %S, %t, %T and %p substituted and sycl-post-link meaning --tool
(default: the build's libexec/fatlink/sycl-post-link).

--link instead puts each test's IR (targets spir*)
through a whole wrapper link of its own (the IR embedded in a fat object
as clang does, fatlink's default options, host linker /bin/true), every
SPIR-V module kept and checked with spirv-val, and tables linked, failed
(fatlink's first line) and invalid SPIR-V; --link-args adds fatlink
options (--sycl-allow-undefined: DPC++'s way with undefined functions)."""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
LLVM_BIN = "/usr/lib/llvm-22/bin"
# Tools a RUN line may use; anything else makes the test not applicable.
TOOLS = {"sycl-post-link", "FileCheck", "not", "count", "llvm-as",
         "llvm-dis", "cat", "echo", "rm", "mkdir", "cd", "diff", "grep",
         "sed", "ls", "env", "true", "false", "wc", "sort", "cp"}
LLVM_TOOLS = {"FileCheck", "not", "count", "llvm-as", "llvm-dis"}
# Tests that need what only DPC++ has: a pass of its own that fatlink does
# not run (named in README.md), or its own text.
DPCPP_ONLY = {
    "device-sanitizer/msan.ll": "DPC++'s sanitizer post-link fix-ups of "
        "__MsanKernelMetadata (SanitizerKernelMetadata)",
    "device-sanitizer/tsan.ll": "DPC++'s sanitizer post-link fix-ups of "
        "__TsanKernelMetadata (SanitizerKernelMetadata)",
    "device-sanitizer/dynamic-link-multi-image.ll": "DPC++'s sanitizer "
        "module kernels (__sanitizerModule_*)",
    "kernel-attributes/kernel-pipelined.ll": "DPC++'s CompileTimeProperties "
        "pass (FPGA kernel decorations)",
    "kernel-attributes/register-map-interface.ll": "DPC++'s "
        "CompileTimeProperties pass (FPGA kernel decorations)",
    "kernel-attributes/streaming-interface.ll": "DPC++'s "
        "CompileTimeProperties pass (FPGA kernel decorations)",
    "sycl-esimd/invoke-esimd-double.ll": "DPC++'s invoke_simd lowering "
        "(ESIMD callees cloned per caller)",
    "spec-constants/remove-dead-private-constants.ll": "-debug-only, which "
        "only a debug build of LLVM has",
    "help.test": "DPC++'s own --help text",
    "spec-constants/SYCL-alloca-error.ll": "DPC++'s LLVM: the IR calls "
        "llvm.sycl.alloca.*.f64 undeclared, which only an LLVM that has the "
        "intrinsic parses",
}

# Stored copies (the search tool's, of varying age; never the repository's)
# whose expectations today's intel/llvm sources no longer have: what the
# copy expects, and where the sources say otherwise.
STALE = {
    "device-code-split/one-kernel-per-module.ll": "expects non-entry "
        "functions to stay external after a split; the cleanup internalizes "
        "them (internalize/*.ll)",
    "device-code-split/per-aspect-split-2.ll": "expects the aspects ahead of "
        "the translation unit in a category; the categorizer starts with "
        "sycl-module-id (ModuleSplitter.cpp)",
    "device-code-split/per-aspect-split-3.ll": "expects the aspects ahead of "
        "the translation unit in a category; the categorizer starts with "
        "sycl-module-id (ModuleSplitter.cpp)",
    "split-with-kernel-declarations.ll": "expects per-kernel modules by "
        "translation unit first; a per-kernel category is the kernel's name "
        "(ModuleSplitter.cpp)",
    "auto-module-split-func-ptr.ll": "expects no split when a function's "
        "address is taken; its successor, device-code-split/auto-module-split-"
        "func-ptr.ll, expects a split by translation unit that follows the "
        "address (ModuleSplitter.cpp DependencyGraph)",
    "emit_exported_symbols.ll": "expects the modules in ascending category "
        "order; the splitter takes them from the back of its sorted list "
        "(ModuleSplitter.h nextGroup)",
    "sycl-external-funcs/split-per-source.ll": "expects the modules in "
        "ascending category order; the splitter takes them from the back "
        "(ModuleSplitter.h nextGroup)",
    "sycl-esimd/no-sycl-esimd-split.ll": "expects the modules in ascending "
        "category order; the splitter takes them from the back "
        "(ModuleSplitter.h nextGroup)",
    "sycl-esimd/basic-sycl-esimd-split.ll": "expects ESIMD kernels split "
        "off without -split-esimd; handleESIMD links the parts back unless "
        "it is given (ESIMDPostSplitProcessing.cpp)",
    "sycl-esimd/sycl-esimd-split-symbols.ll": "expects ESIMD kernels split "
        "off without -split-esimd; handleESIMD links the parts back unless "
        "it is given (ESIMDPostSplitProcessing.cpp)",
    "sycl-esimd/sycl-esimd-split-per-kernel.ll": "expects the ESIMD split "
        "before -split; each split module is divided after (sycl-post-link."
        "cpp processInputModule)",
    "no-split-unused-func.ll": "expects SYCL_EXTERNAL functions not to be "
        "entry points by default (-emit-only-kernels-as-entry-points is off "
        "by default: sycl-post-link.cpp)",
    "internalize_functions.ll": "expects internalization with "
        "-support-dynamic-linking; the cleanup internalizes only without "
        "image dependencies (exclude_external_functions.ll, internalize/*.ll)",
    "emit_imported_symbols.ll": "expects imported symbols without "
        "-support-dynamic-linking; canBeImportedFunction refuses them then "
        "(ModuleSplitter.cpp)",
    "device-requirements/reqd-work-group-size.ll": "expects "
        "reqd_work_group_size; it is reqd_work_group_size_uint64_t "
        "(SYCLDeviceRequirements.cpp, PropertySetIO.h)",
    "device-requirements/mask.ll": "expects SYCL/devicelib req mask, which "
        "computeModuleProperties no longer writes (ComputeModuleRuntimeInfo"
        ".cpp)",
    "device-requirements/sycl-declared-aspects.ll": "expects "
        "sycl_declared_aspects to count; device requirements come from "
        "sycl_used_aspects only (SYCLDeviceRequirements.cpp)",
    "device-requirements/joint-matrix-and-joint-matrix-mad.ll": "expects a "
        "matrix type (sint8) its own IR does not have: the copy is not one "
        "version of the test",
    "device-sanitizer/asan.ll": "expects asanUsed=1; it is sanUsed=asan "
        "(ComputeModuleRuntimeInfo.cpp)",
}

# SYCL 1.2.1's getters (the symbolic id alone), which DPC++'s
# SpecConstants.cpp no longer lowers: it knows only the SYCL 2020 ones.
GETTER_121 = re.compile(r"declare[^\n]*@_Z\d+__sycl_get(Scalar|Composite)?"
                        r"SpecConstantValue")
TYPED_PTR = re.compile(r"\b(i(1|8|16|32|64)|float|double|%[\w.]+)( addrspace\(\d+\))?\*")


def run_lines(text):
    """The test's RUN lines, continuations joined, and its REQUIRES."""
    lines, cur, requires = [], "", []
    for raw in text.splitlines():
        m = re.search(r"(RUN|REQUIRES|UNSUPPORTED|XFAIL):(.*)$", raw)
        if not m:
            continue
        kind, body = m.group(1), m.group(2).strip()
        if kind != "RUN":
            requires.append("%s: %s" % (kind, body))
            continue
        if body.endswith("\\"):
            cur += body[:-1] + " "
            continue
        line = resolve_if(cur + body)
        if line:
            lines.append(line)
        cur = ""
    return lines, requires


# lit's features this setup has: none that the suite asks for (LLVM 22 of
# Debian is a release build: no "asserts").
FEATURES = set()
IF = re.compile(r"%if\s+([\w-]+)\s*%\{(.*?)%\}(?:\s*%else\s*%\{(.*?)%\})?")


def resolve_if(line):
    """A RUN line with lit's %if FEATURE %{ A %} [%else %{ B %}] resolved."""
    return IF.sub(lambda m: m.group(2) if m.group(1) in FEATURES
                  else (m.group(3) or ""), line).strip()


def tools_of(line):
    """The commands a RUN line runs (first word of each pipeline stage)."""
    out = []
    for stage in re.split(r"\|\||&&|\||;", line):
        words = stage.strip().split()
        while words and ("=" in words[0] and not words[0].startswith("-")):
            words = words[1:]
        if words and words[0] in ("not", "env"):
            out.append(words[0])
            words = words[1:]
            while words and words[0].startswith("--"):
                words = words[1:]
        if words:
            out.append(os.path.basename(words[0]))
    return out


def substitute(line, test, tmp, tool):
    base = os.path.join(tmp, os.path.basename(test) + ".tmp")  # as lit's
    line = line.replace("%s", test).replace("%S", os.path.dirname(test))
    line = line.replace("%p", os.path.dirname(test))
    line = line.replace("%T", tmp).replace("%t", base)
    line = re.sub(r"(?<![\w/.-])sycl-post-link(?![\w-])", tool, line)
    for t in LLVM_TOOLS:
        line = re.sub(r"(?<![\w/.-])%s(?![\w-])" % re.escape(t),
                      os.path.join(LLVM_BIN, t), line)
    return line


def typed_pointer_ir(test):
    text = open(test, encoding="utf-8", errors="replace").read()
    return test.endswith(".ll") and TYPED_PTR.search(
        "\n".join(l for l in text.splitlines()
                  if not l.lstrip().startswith(";"))) is not None


def classify(test, tool, verbose, rel):
    if rel in DPCPP_ONLY:
        return "n/a", "needs " + DPCPP_ONLY[rel]
    if rel in STALE:
        return "n/a", "stale copy: " + STALE[rel]
    text = open(test, encoding="utf-8", errors="replace").read()
    if GETTER_121.search(text):
        return "n/a", ("stale copy: lowers SYCL 1.2.1's spec-constant "
                       "getters, which SpecConstants.cpp no longer has (only "
                       "__sycl_get*2020SpecConstantValue)")
    lines, requires = run_lines(text)
    if not lines:
        return "n/a", "no RUN line"
    for r in requires:
        if r.startswith("XFAIL") or r.startswith("UNSUPPORTED: true"):
            return "n/a", r
    others = sorted({t for l in lines for t in tools_of(l)} - TOOLS)
    if others:
        return "n/a", "needs " + ", ".join(others)
    # LLVM 22 reads typed-pointer IR as opaque; a stored copy that old is
    # run unless its checks expect typed pointers in what the tool prints,
    # which no tool of today can print.
    checks = "\n".join(l for l in text.splitlines()
                       if re.search(r";\s*CHECK", l))
    if test.endswith(".ll") and TYPED_PTR.search(checks):
        return "n/a", "checks for typed pointers (this stored copy predates opaque pointers)"
    tmp = tempfile.mkdtemp(prefix="plt.")
    try:
        for line in lines:
            cmd = substitute(line, test, tmp, tool)
            p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               encoding="utf-8", errors="replace")
            if p.returncode:
                out = p.stdout
                m = re.search(r"option '-([\w-]+)' is not supported", out)
                if m:
                    return "n/a", "needs DPC++ pass for -" + m.group(1)
                first = next((l for l in out.splitlines()
                              if "error" in l.lower()), None)
                first = first or (out.strip().splitlines() or ["(no output)"])[0]
                if verbose:
                    sys.stderr.write("---- %s\n$ %s\n%s\n" % (test, cmd, out))
                return "fail", "%s :: %s" % (line[:100], first[:200])
        return "pass", ""
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def link_one(test, fatlink, fatpack, a_extra):
    """'ok', or ('fail'|'invalid', why) for one IR file through a link."""
    tmp = tempfile.mkdtemp(prefix="pll.")
    env = dict(os.environ, PATH=LLVM_BIN + ":" + os.environ.get("PATH", ""),
               TMPDIR=tmp)
    try:
        bc, fat = os.path.join(tmp, "in.bc"), os.path.join(tmp, "in.bin")
        obj, dump = os.path.join(tmp, "in.o"), os.path.join(tmp, "dump")
        os.mkdir(dump)
        steps = [
            ["llvm-as", test, "-o", bc],
            [fatpack, "create", "--image=file=%s,triple=spirv64-unknown-"
             "unknown,arch=generic,kind=sycl" % bc, "-o", fat],
            ["clang-22", "-c", "-x", "c", "/dev/null", "-Xclang",
             "-fembed-offload-object=" + fat, "-o", obj]]
        for cmd in steps:
            p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, encoding="utf-8",
                               errors="replace")
            if p.returncode:
                return "n/a", "input not made: " + (p.stdout.strip()
                                                    .splitlines() or [""])[0][:150]
        p = subprocess.run([fatlink, "--linker-path=/bin/true", "-o",
                            os.path.join(tmp, "out"), obj] + a_extra +
                           [
                            "--sycl-dump-device-code=" + dump], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           encoding="utf-8", errors="replace")
        if p.returncode:
            return "fail", (p.stdout.strip().splitlines() or [""])[0][:220]
        known = None
        for f in sorted(os.listdir(dump)):
            if f.endswith(".spv"):
                v = subprocess.run(["spirv-val", os.path.join(dump, f)],
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, encoding="utf-8",
                                   errors="replace")
                if not v.returncode:
                    continue
                first = (v.stdout.strip().splitlines() or [""])[0]
                if forward_function_pointer(os.path.join(dump, f), first):
                    known = "%s: %s" % (f, first[:160])
                    continue
                return "invalid", "%s: %s" % (f, first[:200])
        return ("ok-fp", known) if known else ("ok", "")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def forward_function_pointer(spv, error):
    """Is spirv-val's complaint that a function used before its OpFunction
    by OpConstantFunctionPointerINTEL is undefined? SPV_INTEL_function_
    pointers allows that forward reference (constants come before
    functions); SPIRV-Tools does not know it yet, as LLVM's own tests of the
    extension record (they expect spirv-val to fail so)."""
    m = re.search(r"ID '\d+\[(%[\w.]+)\]' has not been defined", error)
    if not m:
        return False
    d = subprocess.run(["spirv-dis", spv], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, encoding="utf-8",
                       errors="replace").stdout
    return re.search(r"OpConstantFunctionPointerINTEL %\S+ " +
                     re.escape(m.group(1)) + r"\b", d) is not None


def main_link(a, tests):
    fatlink = os.path.join(SRC, "build", "bin", "fatlink")
    fatpack = os.path.join(SRC, "build", "bin", "fatpack")
    counts, lines = collections.Counter(), []
    for t in tests:
        if not t.endswith(".ll"):
            continue
        text = open(t, encoding="utf-8", errors="replace").read()
        body = "\n".join(l for l in text.splitlines()
                         if not l.lstrip().startswith(";"))
        rel = os.path.relpath(t, a.tests)
        m = re.search(r'target triple = "([^"]*)"', body)
        if m and not m.group(1).startswith("spir"):
            counts["n/a"] += 1
            lines.append("N/A  %s: target %s" % (rel, m.group(1)))
            continue
        verdict, why = link_one(t, fatlink, fatpack, a.link_args.split())
        counts[verdict] += 1
        if verdict == "ok-fp":
            lines.append("FPTR %s: %s" % (rel, why))
        elif verdict != "ok":
            lines.append("%-4s %s: %s" % (verdict.upper()[:4], rel, why))
    print("linked %d (%d of them valid but for spirv-val's forward reference "
          "to a function pointer's function), failed %d, invalid SPIR-V %d, "
          "not applicable %d" %
          (counts["ok"] + counts["ok-fp"], counts["ok-fp"], counts["fail"],
           counts["invalid"], counts["n/a"]))
    for line in lines:
        print(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tests")
    ap.add_argument("--tool", default=os.path.join(
        SRC, "build", "libexec", "fatlink", "sycl-post-link"))
    ap.add_argument("--only")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--link", action="store_true")
    ap.add_argument("--link-args", default="",
                    help="more fatlink options for --link, e.g. "
                         "--sycl-allow-undefined")
    a = ap.parse_args()
    if not os.path.isdir(a.tests):
        sys.exit("run-post-link.py: %s is not a directory" % a.tests)
    tests = []
    for root, _, files in os.walk(a.tests):
        if os.path.basename(root) == "Inputs":
            continue
        for f in sorted(files):
            if f.endswith((".ll", ".test")) and (not a.only or a.only in f):
                tests.append(os.path.join(root, f))
    if a.link:
        return main_link(a, sorted(tests))
    by_dir = collections.OrderedDict()
    era = {False: collections.Counter(), True: collections.Counter()}
    details = []
    reasons = collections.Counter()
    for t in sorted(tests):
        rel = os.path.relpath(t, a.tests)
        d = os.path.dirname(rel) or "."
        verdict, why = classify(t, a.tool, a.verbose, rel)
        by_dir.setdefault(d, collections.Counter())[verdict] += 1
        if verdict in ("pass", "fail"):
            era[typed_pointer_ir(t)][verdict] += 1
        if verdict == "fail":
            details.append("FAIL %s: %s" % (rel, why))
        elif verdict == "n/a":
            reasons["stale copy" if why.startswith("stale copy")
                    else re.sub(r"-[\w-]+$", "-...", why) if "pass for" in why
                    else why] += 1
            details.append("N/A  %s: %s" % (rel, why))
    print("%-28s %6s %6s %6s" % ("directory", "pass", "fail", "n/a"))
    total = collections.Counter()
    for d, c in by_dir.items():
        print("%-28s %6d %6d %6d" % (d, c["pass"], c["fail"], c["n/a"]))
        total.update(c)
    print("%-28s %6d %6d %6d" % ("all", total["pass"], total["fail"],
                                 total["n/a"]))
    applicable = total["pass"] + total["fail"]
    if applicable:
        print("pass rate of applicable tests: %.1f%% (%d of %d)" %
              (100.0 * total["pass"] / applicable, total["pass"], applicable))
    for old, what in ((False, "copies in opaque-pointer IR (today's form)"),
                      (True, "older copies in typed-pointer IR")):
        c = era[old]
        if c["pass"] + c["fail"]:
            print("  %s: %d of %d" % (what, c["pass"], c["pass"] + c["fail"]))
    print("\nnot applicable, by reason:")
    for r, n in reasons.most_common():
        print("  %3d  %s" % (n, r))
    print()
    for line in details:
        print(line)


if __name__ == "__main__":
    main()
