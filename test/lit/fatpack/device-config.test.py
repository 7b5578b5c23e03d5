"""Runs fatpack device-config on each bad device configuration file and
checks: exit status 1, nothing on stdout, exactly one line on stderr, the
expected message. Hostile files (deep nesting, many anchors, a huge file,
thousands of targets) must also fail fast."""
import os
import subprocess
import sys
import time

fatpack, tmp = sys.argv[1], sys.argv[2]
here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    "Inputs", "devcfg")

cases = [
    ("unknown-key.yaml", "unknown-key.yaml:2:3: unknown key 'aspect' (known: "
     "aspects, may_support_other_aspects, sub-group-sizes, aot-toolchain, "
     "aot-toolchain-options)"),
    ("unknown-aspect.yaml", "unknown-aspect.yaml:2:19: unknown aspect 'fp17'"),
    ("unknown-number.yaml", "unknown-number.yaml:2:13: unknown aspect number 999"),
    ("sg-scalar.yaml", "sg-scalar.yaml:2:20: expected a list of sub-group sizes"),
    ("sg-word.yaml", "sg-word.yaml:2:24: 'eight' is not a sub-group size "
     "(an integer from 1 to 4096)"),
    ("bool.yaml", "bool.yaml:2:30: 'may_support_other_aspects' expects true or false"),
    ("bool-quoted.yaml", "bool-quoted.yaml:2:30: 'may_support_other_aspects' "
     "expects true or false"),
    ("entry-scalar.yaml", "entry-scalar.yaml:1:4: target 't' expects a mapping "
     "of its properties (aspects, ...)"),
    ("top-list.yaml", "top-list.yaml:1:1: expected a mapping from target names "
     "to their properties"),
    ("anchor.yaml", "anchor.yaml:1:7: anchors and aliases are not supported in "
     "a device configuration file"),
    ("key-twice.yaml", "key-twice.yaml:3:3: key 'aspects' is given twice"),
    ("syntax.yaml", "syntax.yaml:3:1: invalid YAML: did not find expected ',' or ']'"),
    ("two-docs.yaml", "two-docs.yaml:3:1: more than one YAML document in a "
     "device configuration file"),
    ("tool-list.yaml", "tool-list.yaml:2:18: 'aot-toolchain' expects a string"),
]

# Generated hostile files.
def gen(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path

laughs = "a: &a [fp16, fp16]\n" + "".join(
    "%s: &%s [*%s, *%s]\n" % (chr(98 + i), chr(98 + i), chr(97 + i), chr(97 + i))
    for i in range(20))
cases += [
    (gen("deep.yaml", "t:\n  aspects: " + "[" * 100000 + "\n"),
     "deep.yaml:2:13: expected an aspect name or number"),
    (gen("laughs.yaml", laughs), "laughs.yaml:1:4: anchors and aliases are not "
     "supported in a device configuration file"),
    (gen("huge.yaml", "# padding\n" * 120000),
     "huge.yaml': device configuration file of 1200000 bytes: the limit is 1048576"),
    (gen("many.yaml", "".join("t%d: {}\n" % i for i in range(3000))),
     "many.yaml:2049:1: more than 2048 targets"),
    ("missing.yaml", "missing.yaml': cannot read the device configuration "
     "file: No such file or directory"),
]

failed = 0
for name, want in cases:
    start = time.monotonic()
    r = subprocess.run([fatpack, "device-config", "--device-config-file=" + name],
                       cwd=here, capture_output=True, text=True)
    took = time.monotonic() - start
    lines = r.stderr.splitlines()
    ok = (r.returncode == 1 and r.stdout == "" and len(lines) == 1 and
          lines[0].startswith("fatpack: error: ") and lines[0].endswith(want))
    if not ok or took > 5:
        failed += 1
        print("FAIL %s (%.1fs): exit %d, stdout %r, stderr %r, wanted ...%s" %
              (name, took, r.returncode, r.stdout[:80], r.stderr, want))
print("%d of %d bad files refused as expected" % (len(cases) - failed, len(cases)))
sys.exit(1 if failed else 0)
