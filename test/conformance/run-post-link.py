#!/usr/bin/env python3
"""run-post-link.py TESTS [--tool PATH] [--only SUBSTR] [--verbose] [--link]

Runs intel/llvm's sycl-post-link lit tests (TESTS: a checkout's
llvm/test/tools/sycl-post-link, or a copy of it; never copied into this
repository) against fatlink's sycl-post-link personality, with llvm-22's
FileCheck, and prints a table by directory: tests passed, failed (with the
first line that failed and what it said) and not applicable (with why),
RUN lines run and RUN lines set apart. A whole test is not applicable when
it needs a DPC++ pass fatlink has not (DPCPP_ONLY), its REQUIRES,
UNSUPPORTED or XFAIL says so, its checks expect typed pointers (which no
tool of today prints), or the stored copy is older than intel/llvm's
sources (STALE: that exact copy, by its git blob id, so a newer version of
the file runs, with the line of today's sources that contradicts it).
Typed-pointer IR itself LLVM 22 reads as opaque; the pass rate is also
given apart for such older copies, and with the stale copies counted as
failures.

Each test's RUN lines run in order in a shell (pipefail, like lit's), with
%s (a copy of the test), %S, %t, %T and %p substituted and sycl-post-link
meaning --tool (default: the build's libexec/fatlink/sycl-post-link). A
line that needs another tool, -debug-only, a lit feature this build lacks
(%if) or an option of a DPC++ pass fatlink lacks by design (REFUSED) is
set apart and counted, and so is every later line naming what it writes;
the rest run. An option fatlink refuses that REFUSED does not list fails.

--link instead puts each test's IR (targets spir*)
through a whole wrapper link of its own (the IR embedded in a fat object
as clang does, fatlink's default options, host linker /bin/true), every
SPIR-V module kept and checked with spirv-val, and tables linked, failed
(fatlink's first line) and invalid SPIR-V; --link-args adds fatlink
options (--sycl-allow-undefined: DPC++'s way with undefined functions)."""
import argparse
import collections
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from litexpr import holds  # noqa: E402
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
    "kernel-attributes/kernel-pipelined.ll": "DPC++'s CompileTimeProperties "
        "pass (FPGA kernel decorations)",
    "kernel-attributes/register-map-interface.ll": "DPC++'s "
        "CompileTimeProperties pass (FPGA kernel decorations)",
    "kernel-attributes/streaming-interface.ll": "DPC++'s "
        "CompileTimeProperties pass (FPGA kernel decorations)",
    "sycl-esimd/invoke-esimd-double.ll": "DPC++'s invoke_simd lowering "
        "(ESIMD callees cloned per caller)",
    "help.test": "DPC++'s own --help text",
    "device-globals/test_global_variable.ll": "DPC++'s CompileTimeProperties "
        "pass (device global decorations, here from host_access, init_mode "
        "and implement_in_csr)",
    "sycl-kernel-arg-annotations.ll": "DPC++'s CompileTimeProperties pass "
        "(kernel argument decorations)",
    "spec-constants/SYCL-alloca-error.ll": "DPC++'s LLVM: the IR calls "
        "llvm.sycl.alloca.*.f64 undeclared, which only an LLVM that has the "
        "intrinsic parses",
}

# Stored copies (the search tool's, of varying age; never the repository's)
# whose expectations today's intel/llvm sources contradict: what the copy
# expects, and the source line of today that says otherwise (files of
# llvm/lib/SYCLPostLink and llvm/lib/SYCLLowerIR unless named).
def today(where, line):
    return "; today %s: `%s`" % (where, line)


INTERNALIZE = today(
    "ModuleSplitter.cpp mustPreserveGV (intel/llvm PR 14976: always "
    "internalized, then GlobalDCE)",
    'return F->hasFnAttribute("sycl-entry-point") || '
    'F->hasFnAttribute("indirectly-callable") || '
    'F->hasFnAttribute("referenced-indirectly");')
INTERNALIZE_DYN = today(
    "ModuleSplitter.cpp mustPreserveGV with device image dependencies",
    "return SpirOrGPU || canBeImportedFunction(*F, "
    "AllowDeviceImageDependencies);")
OLD_AUTO = ("expects split=auto to keep one module when a function is "
            "referenced indirectly or called through a pointer" + today(
                "ModuleSplitter.cpp selectDeviceCodeGroupScope",
                "case SPLIT_AUTO: { if (AutoSplitIsGlobalScope) return "
                "Scope_Global; ... return Scope_PerModule; }"))
ASCENDING = ("expects the modules in ascending category order" + today(
    "ModuleSplitter.h nextGroup",
    "EntryPointGroup Res = std::move(Groups.back()); Groups.pop_back();"))
OLD_SPEC_FORM = ("expects the SPIR-V built-in calls without spir_func" +
                 today("SpecConstants.cpp emitCall",
                       "if (IsSPIROrSPIRV) { cast<Function>(FC.getCallee())"
                       "->setCallingConv(CallingConv::SPIR_FUNC); "
                       "Call->setCallingConv(CallingConv::SPIR_FUNC); }"))
BROKEN_IR = ("its IR fails LLVM 22's verifier, as it would today's DPC++'s" +
             today("llvm/lib/IR/Verifier.cpp",
                   "CheckFailed(\"'allocsize' \" + Name + \" argument must "
                   "refer to an integer parameter\", V);"))
ESIMD_LINKED = ("expects ESIMD kernels split off without -split-esimd" +
                today("ESIMDPostSplitProcessing.h handleESIMD",
                      "3.2) Otherwise, two Modules are being linked into one "
                      "Module which is returned."))
STALE = {
    "assert-indirect-with-split.ll": OLD_AUTO,
    "assert-indirect-with-split-2.ll": OLD_AUTO,
    "assert-property-with-split.ll": OLD_AUTO,
    "auto-module-split-2.ll": OLD_AUTO,
    "auto-module-split-3.ll": OLD_AUTO,
    "assert/indirect-with-split-2.ll": ASCENDING,
    "device-globals/test_global_variable_many_modules_no_dev_global.ll":
        ASCENDING,
    "device-globals/test_global_variable_many_modules_no_dev_img_scope.ll":
        ASCENDING,
    "device-globals/test_global_variable_many_modules_two_vars_ok.ll":
        ASCENDING,
    "device-code-split/per-reqd-sub-group-size-split-1.ll": ASCENDING,
    "device-code-split/per-reqd-wg-size-split-1.ll": ASCENDING,
    "emit_exported_symbols.ll": ASCENDING,
    "sycl-external-funcs/split-per-source.ll": ASCENDING,
    "sycl-esimd/no-sycl-esimd-split.ll": ASCENDING,
    "device-code-split/vtable.ll": "typed-pointer IR that LLVM 22 no longer "
        "parses (a pointer to a function type in a constant expression); "
        "today llvm/lib/AsmParser/LLParser.cpp: `expected ')' in "
        "constantexpr` at `i32 (...)**`",
    "device-globals/test_global_variable_many_kernels_in_one_module.ll":
        BROKEN_IR,
    "device-globals/test_global_variable_many_modules_one_var_error.ll":
        BROKEN_IR,
    "spec-constants/SYCL2020-struct-with-undef-padding.ll": OLD_SPEC_FORM,
    "spec-constants/default-value/device-image.ll": OLD_SPEC_FORM,
    "spec-constants/nested-struct.ll": OLD_SPEC_FORM,
    "spec-constants/struct-with-undef-padding-2.ll": OLD_SPEC_FORM,
    "spec-constants/struct-with-padding-in-the-middle.ll": OLD_SPEC_FORM,
    "spec-constants/hierarchy.ll": "expects padding as zeroinitializer "
        "(intel/llvm PR 17341, closed unmerged; PR 17204's hierarchy.ll "
        "expects undef)" + today("SpecConstants.cpp "
                                 "emitSpecConstantRecursiveImpl",
                                 "HandleUndef(UndefValue::get(ElTy));"),
    "spec-constants/SYCL-2020-zeroinitializer-array-of-arrays.ll": "expects "
        "unused internal functions lowered in place; the cleanup drops them" +
        INTERNALIZE,
    "device-code-split/one-kernel-per-module.ll": "expects non-entry "
        "functions to stay external after a split" + INTERNALIZE,
    "device-code-split/auto-module-split-2.ll": "expects a function no "
        "entry point is to stay external after a split" + INTERNALIZE,
    "device-code-split/auto-module-split-3.ll": "expects a function no "
        "entry point is to stay external after a split" + INTERNALIZE,
    "device-code-split/auto-module-split-func-ptr.ll": "expects a function "
        "whose address is taken (no entry point, not referenced-indirectly) "
        "to stay external after a split" + INTERNALIZE,
    "device-code-split/complex-indirect-call-chain.ll": "typed-pointer IR "
        "expecting a function no entry point is to stay external" +
        INTERNALIZE,
    "exclude_external_functions.ll": "expects, with "
        "-support-dynamic-linking, a function without the SYCL_EXTERNAL "
        "mark and a reserved one to stay external (before intel/llvm PR "
        "14318)" + INTERNALIZE_DYN,
    "device-code-split/per-aspect-split-2.ll": "expects the aspects ahead "
        "of the translation unit in a category" + today(
            "ModuleSplitter.cpp computeFuncCategoryForSplittingPerSource, "
            "first", "computeFuncCategoryFromAttribute(F, "
            "sycl::utils::ATTR_SYCL_MODULE_ID, Result);"),
    "device-code-split/per-aspect-split-3.ll": "expects the aspects ahead "
        "of the translation unit in a category" + today(
            "ModuleSplitter.cpp computeFuncCategoryForSplittingPerSource, "
            "first", "computeFuncCategoryFromAttribute(F, "
            "sycl::utils::ATTR_SYCL_MODULE_ID, Result);"),
    "split-with-kernel-declarations.ll": "expects per-kernel modules by "
        "translation unit first" + today(
            "ModuleSplitter.cpp computeFuncCategoryForSplitting",
            "case Scope_PerKernel: ... Category = F.getName().str();"),
    "auto-module-split-func-ptr.ll": "expects no split when a function's "
        "address is taken (its successor, device-code-split/auto-module-"
        "split-func-ptr.ll, splits by translation unit)" + today(
            "ModuleSplitter.cpp selectDeviceCodeGroupScope",
            "case SPLIT_AUTO: { if (AutoSplitIsGlobalScope) return "
            "Scope_Global; ... return Scope_PerModule; }"),
    "sycl-esimd/basic-sycl-esimd-split.ll": ESIMD_LINKED,
    "sycl-esimd/sycl-esimd-split-symbols.ll": ESIMD_LINKED,
    "sycl-esimd/sycl-esimd-split-per-kernel.ll": "expects the ESIMD split "
        "before -split" + today(
            "SYCLPostLink.cpp performPostLinkProcessing, after each split "
            "module", "auto ModulesOrErr = sycl_post_link::handleESIMD("
            "std::move(M), Settings.ESIMDOptions, Modified, SplitOccurred);"),
    "no-split-unused-func.ll": "expects SYCL_EXTERNAL functions not to be "
        "entry points by default" + today(
            "ModuleSplitter.cpp isEntryPoint",
            "if (!EmitOnlyKernelsAsEntryPoints) { ... return "
            "llvm::sycl::utils::isSYCLExternalFunction(&F) && ..."),
    "emit_imported_symbols.ll": "expects imported symbols without "
        "-support-dynamic-linking" + today(
            "ModuleSplitter.cpp canBeImportedFunction",
            "if (!AllowDeviceImageDependencies) return false;"),
    "device-requirements/reqd-work-group-size.ll": "expects "
        "reqd_work_group_size" + today(
            "SYCLDeviceRequirements.cpp",
            'Requirements["reqd_work_group_size_uint64_t"] = '
            "*ReqdWorkGroupSize;"),
    "device-requirements/mask.ll": "expects SYCL/devicelib req mask" + today(
        "ComputeModuleRuntimeInfo.cpp computeModuleProperties, whose first "
        "set is the device requirements", "PropSetRegTy PropSet; { "
        "PropSet.add(PropSetRegTy::SYCL_DEVICE_REQUIREMENTS, ..."),
    "device-requirements/sycl-declared-aspects.ll": "expects "
        "sycl_declared_aspects to count" + today(
            "SYCLDeviceRequirements.cpp computeDeviceRequirements",
            'if (auto *MDN = F.getMetadata("sycl_used_aspects")) {'),
    "device-requirements/joint-matrix-and-joint-matrix-mad.ll": "expects a "
        "matrix type (sint8) its own IR does not have: the copy is not one "
        "version of the test",
    "device-requirements/device-requirements.ll": "its first RUN line "
        "writes a table over the test itself and reads no input (`-o %s -o "
        "%t.files.table`)" + today(
            "sycl-post-link.cpp, -o", "cl::list<TargetFilenamePair, bool, "
            "TargetFilenamePairParser> OutputFiles{\"o\", cl::desc("
            "\"Specifies an output file. Multiple output files can be \"..."),
    "device-sanitizer/asan.ll": "expects asanUsed=1" + today(
        "ComputeModuleRuntimeInfo.cpp",
        'if (isModuleUsingAsan(M)) PropSet.add(PropSetRegTy::SYCL_MISC_PROP, '
        '"sanUsed", "asan");'),
}

# SYCL 1.2.1's getters (the symbolic id alone), which DPC++'s
# SpecConstants.cpp no longer lowers: it knows only the SYCL 2020 ones.
GETTER_121 = re.compile(r"declare[^\n]*@_Z\d+__sycl_get(Scalar|Composite)?"
                        r"SpecConstantValue")
# The copy each STALE reason was checked on, by its git blob id (a prefix):
# any other version of the file (a checkout of today's tests) runs.
STALE_COPY = {
    "assert-indirect-with-split-2.ll": "b32a51707da7",
    "assert-indirect-with-split.ll": "c1a8481dcc9b",
    "assert-property-with-split.ll": "a889c528ce41",
    "assert/indirect-with-split-2.ll": "f7aad9964d9c",
    "auto-module-split-2.ll": "24cbfe46a3c6",
    "auto-module-split-3.ll": "2cc43c10b4a8",
    "auto-module-split-func-ptr.ll": "9b2ed0527f6a",
    "device-code-split/one-kernel-per-module.ll": "715929861b35",
    "device-code-split/auto-module-split-2.ll": "4ff2095f42bb",
    "device-code-split/auto-module-split-3.ll": "52a532b6f92d",
    "device-code-split/auto-module-split-func-ptr.ll": "730d9a5cd8ef",
    "device-code-split/complex-indirect-call-chain.ll": "6b207ae4679e",
    "exclude_external_functions.ll": "7beff7f36113",
    "device-requirements/device-requirements.ll": "cacea03e3055",
    "spec-constants/hierarchy.ll": "10cb705e928b",
    "spec-constants/struct-with-padding-in-the-middle.ll": "b57ebddae479",
    "device-code-split/per-aspect-split-2.ll": "ff9aa0f29376",
    "device-code-split/per-aspect-split-3.ll": "b4d414a9696f",
    "device-code-split/per-reqd-sub-group-size-split-1.ll": "06f0cb39c4b3",
    "device-code-split/per-reqd-wg-size-split-1.ll": "c9fe37276faa",
    "device-code-split/vtable.ll": "44aa049feabb",
    "device-globals/test_global_variable_many_kernels_in_one_module.ll":
        "704d3d7aa4b3",
    "device-globals/test_global_variable_many_modules_no_dev_global.ll":
        "17fbf87c7b6e",
    "device-globals/test_global_variable_many_modules_no_dev_img_scope.ll":
        "5162e0f0456d",
    "device-globals/test_global_variable_many_modules_one_var_error.ll":
        "33898821f825",
    "device-globals/test_global_variable_many_modules_two_vars_ok.ll":
        "d2ce2ee7f938",
    "device-requirements/joint-matrix-and-joint-matrix-mad.ll": "9e8c6d5b2c00",
    "device-requirements/mask.ll": "31b393249bf5",
    "device-requirements/reqd-work-group-size.ll": "defd6939691c",
    "device-requirements/sycl-declared-aspects.ll": "2bd354ff2dbf",
    "device-sanitizer/asan.ll": "c829f2dca912",
    "emit_exported_symbols.ll": "960a79d4d6a4",
    "emit_imported_symbols.ll": "ababba6ed0e5",
    "no-split-unused-func.ll": "e01b8d184944",
    "spec-constants/SYCL-2020-zeroinitializer-array-of-arrays.ll":
        "bbbf81094fbc",
    "spec-constants/SYCL2020-struct-with-undef-padding.ll": "5b725728b59d",
    "spec-constants/default-value/device-image.ll": "802169cf8fa4",
    "spec-constants/nested-struct.ll": "95ee688d47c6",
    "spec-constants/struct-with-undef-padding-2.ll": "dedd45553519",
    "split-with-kernel-declarations.ll": "6ef4c8054911",
    "sycl-esimd/basic-sycl-esimd-split.ll": "c0844d1048f0",
    "sycl-esimd/no-sycl-esimd-split.ll": "854f600b2bd8",
    "sycl-esimd/sycl-esimd-split-per-kernel.ll": "9e27cfc50898",
    "sycl-esimd/sycl-esimd-split-symbols.ll": "d1c790ecb482",
    "sycl-external-funcs/split-per-source.ll": "f6c34a974067",
}


def blob_id(path):
    data = open(path, "rb").read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


TYPED_PTR = re.compile(r"(\b(i(1|8|16|32|64)|float|double|%[\w.]+)|\})"
                       r"( addrspace\(\d+\))?\*")


def run_lines(text):
    """The test's RUN lines (continuations joined, %if resolved: each with
    what an absent feature's %if took out) and its REQUIRES, UNSUPPORTED
    and XFAIL lines."""
    lines, cur, conds = [], "", []
    for raw in text.splitlines():
        m = re.search(r"(RUN|REQUIRES|UNSUPPORTED|XFAIL):(.*)$", raw)
        if not m:
            continue
        kind, body = m.group(1), m.group(2).strip()
        if kind != "RUN":
            conds.append((kind, body))
            continue
        if body.endswith("\\"):
            cur += body[:-1] + " "
            continue
        line, dropped = resolve_if(cur + body)
        lines.append((line, dropped))
        cur = ""
    return lines, conds


# lit's features this setup has (LLVM 22 of Debian is a release build: no
# "asserts"; its targets are all registered).
FEATURES = {"x86-registered-target", "spirv-registered-target",
            "nvptx-registered-target", "amdgpu-registered-target",
            "system-linux", "shell"}
IF = re.compile(r"%if\s+([\w-]+)\s*%\{(.*?)%\}(?:\s*%else\s*%\{(.*?)%\})?")


def resolve_if(line):
    """A RUN line with lit's %if FEATURE %{ A %} [%else %{ B %}] resolved,
    and the features whose absence took something out."""
    dropped = []

    def pick(m):
        if m.group(1) in FEATURES:
            return m.group(2)
        if m.group(2).strip():
            dropped.append(m.group(1))
        return m.group(3) or ""
    return IF.sub(pick, line).strip(), dropped


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


# Options of DPC++ passes that fatlink does not have, by design (README's
# list): a RUN line giving sycl-post-link one is set apart with the reason.
# An option fatlink refuses that is not here is a failure.
REFUSED = {
    "lower-esimd": "ESIMD lowering (DPC++'s LowerESIMD passes)",
    "lower-esimd-force-stateless-mem": "ESIMD lowering (DPC++'s LowerESIMD "
        "passes)",
    "embed-aux-info-as-metadata": "DPC++'s auxiliary information as "
        "metadata (for its own offload wrapper)",
    "safe-strip-dead-debug-info=true": "the choice between DPC++'s own stricter "
        "stripping of dead debug information and LLVM's (intel/llvm pull "
        "request 5553)",
    "imports": "DPC++'s import of device library functions into a module",
    "exclude-external-functions": "DPC++'s images without SYCL_EXTERNAL "
        "functions",
    "split-by-optional-features": "DPC++'s option for the optional-feature "
        "split (fatlink always splits by optional features)",
    "sanitizer": "DPC++'s sanitizer option of the post-link tool",
}


def apart(line):
    """Why a RUN line cannot run here (None: it can)."""
    if "-debug-only" in line:
        return "-debug-only, which only a debug build of LLVM has"
    others = sorted(set(tools_of(line)) - TOOLS)
    if others:
        return "needs " + ", ".join(others)
    if re.search(r"(?<![\w/.-])sycl-post-link(?![\w-])", line):
        for opt, val in re.findall(r"\s--?([\w-]+)(=\S+)?", line):
            for key in (opt + val, opt):
                if key in REFUSED:
                    return "-%s: %s" % (key, REFUSED[key])
    return None


def outputs_of(line):
    """What a RUN line writes, as the test spells it: the stem of each -o
    target (the tool names its files <stem>_<i>.<ext> after a table's path
    without its extension) and redirection; a later line naming one reads
    what this one wrote, or what it wrote over."""
    outs = re.findall(r"(?:-o[ =]?|-out-dir=|>)\s*(\S+)", line)
    return [os.path.splitext(o)[0] or o for o in outs
            if o not in ("-", "/dev/null")]


def substitute(line, test, tmp, tool):
    """The line as lit runs it, but %s is a copy of the test in `tmp` (a
    test may name it as an output: device-requirements.ll)."""
    base = os.path.join(tmp, os.path.basename(test) + ".tmp")  # as lit's
    copy = os.path.join(tmp, os.path.basename(test))
    if not os.path.exists(copy):
        shutil.copyfile(test, copy)
    line = line.replace("%s", copy).replace("%S", os.path.dirname(test))
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
    """(verdict, why, lines run, lines set apart with why)."""
    if rel in DPCPP_ONLY:
        return "n/a", "needs " + DPCPP_ONLY[rel], 0, []
    if rel in STALE and blob_id(test).startswith(STALE_COPY[rel]):
        return "n/a", "stale copy: " + STALE[rel], 0, []
    text = open(test, encoding="utf-8", errors="replace").read()
    if GETTER_121.search(text):
        return "n/a", ("stale copy: lowers SYCL 1.2.1's spec-constant "
                       "getters, which SpecConstants.cpp no longer has (only "
                       "__sycl_get*2020SpecConstantValue)"), 0, []
    lines, conds = run_lines(text)
    if not lines:
        return "n/a", "no RUN line", 0, []
    for kind, expr in conds:
        holds_ = holds(expr, FEATURES, "spir64-unknown-unknown")
        if (kind == "REQUIRES" and not holds_) or \
           (kind in ("UNSUPPORTED", "XFAIL") and holds_):
            return "n/a", "%s: %s" % (kind, expr), 0, []
    # LLVM 22 reads typed-pointer IR as opaque; a stored copy that old is
    # run unless its checks expect typed pointers in what the tool prints,
    # which no tool of today can print.
    checks = "\n".join(l for l in text.splitlines()
                       if re.search(r";\s*CHECK", l))
    if test.endswith(".ll") and TYPED_PTR.search(checks):
        return "n/a", ("checks for typed pointers (this stored copy "
                       "predates opaque pointers)"), 0, []
    # Lines that cannot run here are set apart, and so is every later line
    # that reads what one of them writes; the rest run in order.
    plan, tainted = [], []
    for line, dropped in lines:
        for feat in dropped:
            plan.append(("%%if %s %%{...%%}" % feat,
                         "%%if %s: not a feature of this build" % feat))
        if not line:
            continue
        why = apart(line)
        if not why and any(t in line for t in tainted):
            why = "reads what a line set apart writes"
        if why:
            tainted += outputs_of(line)
            plan.append((line, why))
            continue
        plan.append((line, None))
    set_apart = [(l, w) for l, w in plan if w]
    runnable = [l for l, w in plan if not w]
    if not runnable:
        return "n/a", set_apart[0][1], 0, set_apart
    tmp = tempfile.mkdtemp(prefix="plt.")
    try:
        for n, line in enumerate(runnable):
            cmd = substitute(line, test, tmp, tool)
            p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               encoding="utf-8", errors="replace")
            if p.returncode:
                out = p.stdout
                first = next((l for l in out.splitlines()
                              if "error" in l.lower()), None)
                first = first or (out.strip().splitlines() or ["(no output)"])[0]
                if verbose:
                    sys.stderr.write("---- %s\n$ %s\n%s\n" % (test, cmd, out))
                return ("fail", "%s :: %s" % (line[:100], first[:200]), n,
                        set_apart)
        return "pass", "", len(runnable), set_apart
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
    """Is spirv-val's complaint one SPV_INTEL_function_pointers answers,
    which SPIRV-Tools of Debian 12 does not know: a function used before its
    OpFunction by OpConstantFunctionPointerINTEL is undefined (the extension
    allows that forward reference; LLVM's own tests of it expect spirv-val
    to fail so), or a pointer to a function type, of storage class
    CodeSectionINTEL as the extension has it, is an invalid use of a
    function type?"""
    d = subprocess.run(["spirv-dis", spv], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, encoding="utf-8",
                       errors="replace").stdout
    if "OpExtension \"SPV_INTEL_function_pointers\"" not in d:
        return False
    m = re.search(r"ID '\d+\[(%[\w.]+)\]' has not been defined", error)
    if m:
        return re.search(r"OpConstantFunctionPointerINTEL %\S+ " +
                         re.escape(m.group(1)) + r"\b", d) is not None
    m = re.search(r"Invalid use of function type result id '\d+\[(%[\w.]+)\]'",
                  error)
    return m is not None and re.search(
        r"= OpTypePointer CodeSectionINTEL " + re.escape(m.group(1)) + r"\b",
        d) is not None


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
    print("linked %d (%d of them valid but for what spirv-val does not know "
          "of SPV_INTEL_function_pointers), failed %d, invalid SPIR-V %d, "
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
            rel = os.path.relpath(os.path.join(root, f), a.tests)
            if f.endswith((".ll", ".test")) and (not a.only or a.only in rel):
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
        verdict, why, ran, set_apart = classify(t, a.tool, a.verbose, rel)
        c = by_dir.setdefault(d, collections.Counter())
        c[verdict] += 1
        c["lines"] += ran
        if verdict != "n/a" or not why.startswith("stale"):
            c["apart"] += len(set_apart)
        if verdict in ("pass", "fail"):
            era[typed_pointer_ir(t)][verdict] += 1
        if verdict == "fail":
            details.append("FAIL %s: %s" % (rel, why))
        elif verdict == "n/a":
            reasons["stale copy" if why.startswith("stale copy") else why] += 1
            details.append("N/A  %s: %s" % (rel, why))
        if verdict != "n/a" and set_apart:
            details.append("PART %s: %d line(s) set apart (%s)" % (
                rel, len(set_apart),
                "; ".join(sorted({w for _, w in set_apart}))))
    print("%-28s %6s %6s %6s %6s %6s" % ("directory", "pass", "fail", "n/a",
                                         "lines", "apart"))
    total = collections.Counter()
    for d, c in by_dir.items():
        print("%-28s %6d %6d %6d %6d %6d" % (d, c["pass"], c["fail"],
                                             c["n/a"], c["lines"],
                                             c["apart"]))
        total.update(c)
    print("%-28s %6d %6d %6d %6d %6d" % ("all", total["pass"], total["fail"],
                                         total["n/a"], total["lines"],
                                         total["apart"]))
    print("(lines: RUN lines run in the tests that ran; apart: RUN lines "
          "that could not run, in tests that ran or had none to run)")
    applicable = total["pass"] + total["fail"]
    if applicable:
        print("pass rate of applicable tests: %.1f%% (%d of %d)" %
              (100.0 * total["pass"] / applicable, total["pass"], applicable))
    for old, what in ((False, "copies in opaque-pointer IR (today's form)"),
                      (True, "older copies in typed-pointer IR")):
        c = era[old]
        if c["pass"] + c["fail"]:
            print("  %s: %d of %d" % (what, c["pass"], c["pass"] + c["fail"]))
    stale = reasons["stale copy"]
    if stale:
        print("  with the %d stale copies counted as failures: %d of %d" %
              (stale, total["pass"], applicable + stale))
    print("\nnot applicable, by reason:")
    for r, n in reasons.most_common():
        print("  %3d  %s" % (n, r))
    print()
    for line in details:
        print(line)


if __name__ == "__main__":
    main()
