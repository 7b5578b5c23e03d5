"""jobserver.py: GNU make's jobserver, for tests.
  jobserver.py serve TOKENS [--interrupt-after S] -- CMD...
      runs CMD as make 4.4 would under a jobserver of TOKENS tokens (a fifo,
      MAKEFLAGS=" -j --jobserver-auth=fifo:PATH"), SIGINT after S seconds
      if asked; then prints CMD's exit status and how many tokens are back
      in the fifo (all must be: a client gives back every token it took).
  jobserver.py overlap TRACE...
      the most jobs that ran at once across fatlink time traces (each
      lined up by its otherData.fatlinkT0us)."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def serve(argv):
    tokens = int(argv[0])
    after = None
    if argv[1] == "--interrupt-after":
        after = float(argv[2])
    cmd = argv[argv.index("--") + 1:]
    d = tempfile.mkdtemp(prefix="jobserver-")
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    wfd = os.open(fifo, os.O_WRONLY)
    os.write(wfd, b"+" * tokens)
    env = dict(os.environ, MAKEFLAGS=" -j --jobserver-auth=fifo:" + fifo)
    p = subprocess.Popen(cmd, env=env)
    if after is not None:
        time.sleep(after)
        p.send_signal(signal.SIGINT)
    status = p.wait()
    back = 0
    while True:
        try:
            back += len(os.read(rfd, 4096))
        except BlockingIOError:
            break
    os.close(rfd)
    os.close(wfd)
    os.unlink(fifo)
    os.rmdir(d)
    print("exit %d, tokens back: %d of %d" % (status, back, tokens))


def overlap(paths):
    events = []
    for path in paths:
        with open(path) as f:
            t = json.load(f)
        t0 = t["otherData"]["fatlinkT0us"]
        for e in t["traceEvents"]:
            events.append((t0 + e["ts"], 1))
            events.append((t0 + e["ts"] + e["dur"], -1))
    events.sort()  # an end before a start at the same time
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    print("max concurrent jobs: %d" % most)


if sys.argv[1] == "serve":
    serve(sys.argv[2:])
else:
    overlap(sys.argv[2:])
