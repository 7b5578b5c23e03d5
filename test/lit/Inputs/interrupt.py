"""interrupt.py SIGNAL TMPDIR OUTPUT -- CMD...: starts a link whose host
linker is slow-linker.sh, waits until that linker runs, sends SIGNAL to the
link, and reports how it ended: the signal it died of, what it left in
TMPDIR, whether OUTPUT exists, whether the linker child is still alive."""
import os
import signal
import subprocess
import sys
import time

sig = getattr(signal, sys.argv[1])
tmp, out = sys.argv[2], sys.argv[3]
cmd = sys.argv[sys.argv.index("--") + 1:]
os.makedirs(tmp, exist_ok=True)
mark = os.path.join(os.path.dirname(out), "linker.pid")
env = dict(os.environ, TMPDIR=tmp, FATLINK_TEST_MARK=mark)
p = subprocess.Popen(cmd, env=env)
deadline = time.time() + 60
while not os.path.exists(mark):
    if time.time() > deadline or p.poll() is not None:
        print("interrupt: the linker never started")
        sys.exit(1)
    time.sleep(0.02)
child = int(open(mark).read())
p.send_signal(sig)
rc = p.wait(timeout=60)
print("status: %s" % (("signal %s" % signal.Signals(-rc).name) if rc < 0 else rc))
print("tmp: [%s]" % " ".join(sorted(os.listdir(tmp))))
print("output: %s" % ("present" if os.path.exists(out) else "absent"))
alive = True
for _ in range(100):
    try:
        os.kill(child, 0)
        # A zombie still answers; look at its state.
        with open("/proc/%d/stat" % child) as f:
            if f.read().split(")")[1].split()[0] == "Z":
                alive = False
                break
    except (ProcessLookupError, FileNotFoundError):
        alive = False
        break
    time.sleep(0.05)
print("linker: %s" % ("alive" if alive else "gone"))
