"""benchutil.py - what the benchmarks share: timing a command as a whole
process tree (wall time, and peak memory from wait4's ru_maxrss, which
covers the children it waited for)."""
import os
import sys
import time


def run_timed(argv, env):
    """Runs argv with env; returns (wall seconds, peak MiB). Exits on failure."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.execve(argv[0], argv, env)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("benchmark: %s failed" % argv[0])
    return wall, ru.ru_maxrss / 1024.0
