"""expect-error.py TMPDIR OUTPUT -- CMD...: runs CMD with TMPDIR set and
checks what a failed link must look like: exit status 1, no partial OUTPUT,
nothing left in TMPDIR. Prints CMD's stderr for FileCheck; any violation is
reported on stdout and makes this script fail."""
import os
import subprocess
import sys

tmp, out = sys.argv[1], sys.argv[2]
cmd = sys.argv[sys.argv.index("--") + 1:]
os.makedirs(tmp, exist_ok=True)
env = dict(os.environ, TMPDIR=tmp)
p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   encoding="utf-8", errors="replace")
sys.stdout.write(p.stdout)
sys.stdout.write(p.stderr)
bad = []
if p.returncode != 1:
    bad.append("exit status %d, want 1" % p.returncode)
if os.path.exists(out):
    bad.append("output %s exists" % out)
left = os.listdir(tmp)
if left:
    bad.append("left in TMPDIR: %s" % " ".join(sorted(left)))
for b in bad:
    print("expect-error: " + b)
sys.exit(1 if bad else 0)
