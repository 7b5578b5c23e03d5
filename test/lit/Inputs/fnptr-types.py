"""fnptr-types.py: reads `spirv-dis --raw-id` output and checks that every
pointer-to-function type is of storage class CodeSectionINTEL and that a
function type has one such pointer type (SPV_INTEL_function_pointers).
Prints one line per pointer-to-function type; exit 1 on a breach."""
import re
import sys

fn, seen, bad = set(), {}, 0
for line in sys.stdin:
    m = re.match(r"\s*%(\d+) = OpTypeFunction\b", line)
    if m:
        fn.add(m.group(1))
    m = re.match(r"\s*%(\d+) = OpTypePointer (\w+) %(\d+)$", line.rstrip())
    if m and m.group(3) in fn:
        sc, pointee = m.group(2), m.group(3)
        print("pointer to function %%%s: %s" % (pointee, sc))
        if sc != "CodeSectionINTEL" or pointee in seen:
            bad = 1
        seen[pointee] = m.group(1)
sys.exit(bad)
