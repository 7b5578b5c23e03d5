"""compare.py -- CMD...: runs a link (in the test's directory) with ld tracing
(-t -t) and fatlink's --wrapper-verbose, and checks that the archive members
whose device code fatlink used are exactly the members of the test's
archives that GNU ld loaded and that carry device code (all but b2.o).
Prints the sorted member set and MATCH, or both sets and MISMATCH."""
import os
import re
import subprocess
import sys

cmd = sys.argv[sys.argv.index("--") + 1:]
p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
out = p.stdout
if p.returncode != 0:
    print(out)
    print("compare: link failed with status %d" % p.returncode)
    sys.exit(1)

def norm(archive, member):
    return "%s(%s)" % (os.path.basename(archive), os.path.basename(member))

def ours(archive):
    # Only the test's own archives: system ones (libc_nonshared.a) carry no
    # device code.
    return os.path.exists(os.path.basename(archive))

def thin(archive):
    with open(archive, "rb") as f:
        return f.read(8) == b"!<thin>\n"

ld = set()
archive = None
for line in out.splitlines():
    line = line.strip()
    m = re.match(r"^\((.+\.a)\)(.+)$", line)
    if m and ours(m.group(1)):
        ld.add(norm(m.group(1), m.group(2)))
    elif line.endswith(".a"):
        archive = line
        continue
    elif archive and ours(archive) and thin(archive) and line.endswith(".o"):
        # ld names a thin archive's member by its file, after the archive.
        ld.add(norm(archive, line))
    archive = None
fl = set()
for line in out.splitlines():
    m = re.match(r"^fatlink: device image \S+ for '[^']*' from '(.+\.a)\((.+)\)'$", line)
    if m:
        fl.add(norm(m.group(1), m.group(2)))
ld = {x for x in ld if "b2.o" not in x}  # b2.o has no device code
print(" ".join(sorted(ld)))
if ld == fl:
    print("MATCH")
else:
    print("ld:      " + " ".join(sorted(ld)))
    print("fatlink: " + " ".join(sorted(fl)))
    print("MISMATCH")
    sys.exit(1)
