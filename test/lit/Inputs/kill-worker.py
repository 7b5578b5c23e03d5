"""kill-worker.py [parent:]SIGNAL TMPDIR OUTPUT -- CMD...: starts a link and
waits until one of fatlink's forked workers runs (a child process of it
named fatlink-core); then sends SIGNAL to that worker, or with "parent:" to
fatlink itself. Reports how the link ended: its status, its last line of
error output, what it left in TMPDIR, whether OUTPUT exists, and whether
any worker outlived it (running, or as a zombie fatlink did not reap). A
link that ends before a worker is seen is run again (a few times)."""
import os
import re
import signal
import subprocess
import sys
import time

what, tmp, out = sys.argv[1], sys.argv[2], sys.argv[3]
to_parent = what.startswith("parent:")
sig = getattr(signal, what.split(":")[-1])
cmd = sys.argv[sys.argv.index("--") + 1:]
os.makedirs(tmp, exist_ok=True)


def workers(ppid):
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        m = re.match(r"\d+ \((.*)\) (\S) (\d+)", st)
        if m and m.group(1) == "fatlink-core" and int(m.group(3)) == ppid \
                and m.group(2) != "Z":
            found.append(int(d))
    return found


def left(pid):
    """The process, running or a zombie, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return None
    return "zombie" if st.split(")")[1].split()[0] == "Z" else "alive"


for attempt in range(5):
    p = subprocess.Popen(cmd, env=dict(os.environ, TMPDIR=tmp),
                         stderr=subprocess.PIPE, text=True)
    seen = []
    while p.poll() is None and not seen:
        seen = workers(p.pid)
        time.sleep(0.001)
    if not seen:
        p.communicate()
        continue
    os.kill(p.pid if to_parent else seen[0], sig)
    err = p.communicate(timeout=60)[1]
    rc = p.returncode
    print("status: %s" % (("signal %s" % signal.Signals(-rc).name)
                          if rc < 0 else rc))
    lines = err.strip().splitlines()
    print("error: %s" % (lines[-1] if lines else ""))
    print("tmp: [%s]" % " ".join(sorted(os.listdir(tmp))))
    print("output: %s" % ("present" if os.path.exists(out) else "absent"))
    states = [s for s in map(left, seen) if s]
    print("workers: %s" % (", ".join(states) if states else "gone"))
    sys.exit(0)
print("kill-worker: no worker was ever seen")
sys.exit(1)
