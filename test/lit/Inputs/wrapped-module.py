"""wrapped-module.py FATLINK UPSTREAM DIR KIND[@FLAG]... -- HOST...: links
DIR/KIND.o for each host triple with --dry-run --print-wrapped-module by
both (FLAG given to fatlink only, e.g. --sycl-abi=llvm22), keeps each one's module (the lines that are not commands: a dry run's
command lines differ) in DIR/KIND.HOST.ours / .upstream, and prints "same"
or the first differing line."""
import os
import subprocess
import sys

fatlink, upstream, d = sys.argv[1:4]
sep = sys.argv.index("--")
kinds, hosts = sys.argv[4:sep], sys.argv[sep + 1:]
env = dict(os.environ, TMPDIR=os.path.join(d, "tmp"))
env["PATH"] = os.path.dirname(upstream) + ":" + env["PATH"]


def module(tool, kind, host, flags=()):
    p = subprocess.run([tool] + list(flags) + ["--print-wrapped-module", "--dry-run",
                        "--host-triple=" + host, "--linker-path=/usr/bin/ld",
                        "--", os.path.join(d, kind + ".o"), "-o",
                        os.path.join(d, "a.out")],
                       env=env, capture_output=True, text=True)
    if p.returncode:
        sys.exit("%s failed (%d): %s" % (tool, p.returncode, p.stderr))
    lines = (p.stdout + p.stderr).splitlines()
    # the commands: upstream's are quoted, ours are a tool's path, a step
    return [l for l in lines
            if not l.startswith((' "', "/", "in-process:", "fatbinary "))]


for spec in kinds:
    kind, _, flag = spec.partition("@")
    for host in hosts:
        ours = module(fatlink, kind, host, [flag] if flag else [])
        up = module(upstream, kind, host)
        for name, lines in (("ours", ours), ("upstream", up)):
            with open(os.path.join(d, "%s.%s.%s" % (kind, host, name)), "w") as f:
                f.write("\n".join(lines) + "\n")
        diff = next((i for i, (a, b) in enumerate(zip(ours, up)) if a != b),
                    None if len(ours) == len(up) else min(len(ours), len(up)))
        print("%s %s: %s" % (kind, host, "same" if diff is None else
                             "differs at line %d: %r vs %r" % (
                                 diff + 1, ours[diff] if diff < len(ours) else "",
                                 up[diff] if diff < len(up) else "")))
