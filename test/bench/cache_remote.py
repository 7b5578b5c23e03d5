#!/usr/bin/env python3
"""cache_remote.py [--tus N] [--kernels K] [--seed S] [--runs R] [--build DIR]
                   [--timeout MS]

The cache shared by a fleet, measured on a realistic SYCL program
(real_link.py's generator) with real servers on 127.0.0.1 (Redis and nginx
with WebDAV, started here as the tests start them). Alternating, R times
each:
  upstream        clang-linker-wrapper 22, every link does everything;
  fatlink cold    no cache;
  local cold      an empty local cache directory, no remote layer: the cost
                  of filling it, the baseline of the two below;
  remote redis    a new machine: an empty local directory, the device side
                  from Redis;
  remote http     the same from nginx;
  server down     --cache-remote at a port nothing listens on, empty local
                  directory: a local cold link plus the refused connection;
  server stalled  Redis stopped (SIGSTOP): a local cold link plus one
                  --cache-remote-timeout.
Prints median wall time, CPU time and peak memory with ratios to upstream,
the stalled and down links' time over the local cold link's, and checks
that every output is byte-identical to the cold link's."""
import argparse
import filecmp
import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchutil import envs, medians, run_timed  # noqa: E402
from real_link import LLVM_BIN, SRC, make_program  # noqa: E402

SERVERS = os.path.join(SRC, "test", "lit", "Inputs", "servers.py")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tus", type=int, default=100)
    ap.add_argument("--kernels", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--timeout", type=int, default=1000)
    a = ap.parse_args()
    fatlink = os.path.join(os.path.abspath(a.build), "bin", "fatlink")
    work = tempfile.mkdtemp(prefix="fatlink-remote-")
    srv = os.path.join(work, "srv")
    try:
        out, wargs = make_program(work, a.tus, a.kernels, a.seed)
        env, up_env = envs(work, LLVM_BIN)
        for kind in ("redis", "nginx"):
            subprocess.check_call([sys.executable, SERVERS, "start", kind, srv])

        def port(kind):
            with open(os.path.join(srv, kind + ".port")) as f:
                return f.read().strip()

        redis = "redis://127.0.0.1:%s" % port("redis")
        http = "http://127.0.0.1:%s/cache" % port("nginx")
        with open(os.path.join(srv, "redis.pid")) as f:
            redis_pid = int(f.read().split()[0])
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        down = "redis://127.0.0.1:%d" % s.getsockname()[1]
        s.close()
        local = os.path.join(work, "local")

        def remote(url):
            return [fatlink, "--cache-dir=" + local, "--cache-remote=" + url,
                    "--cache-remote-timeout=%d" % a.timeout] + wargs

        # Fill both servers once (not timed).
        for url in (redis, http):
            shutil.rmtree(local, ignore_errors=True)
            run_timed(remote(url), env)
        up = os.path.join(LLVM_BIN, "clang-linker-wrapper")
        configs = [("upstream", [up] + wargs, up_env),
                   ("fatlink cold", [fatlink] + wargs, env),
                   ("local cold", [fatlink, "--cache-dir=" + local] + wargs,
                    env),
                   ("remote redis", remote(redis), env),
                   ("remote http", remote(http), env),
                   ("server down", remote(down), env),
                   ("server stalled", remote(redis), env)]
        res = {c[0]: [] for c in configs}
        outs, failed = {}, 0
        for rnd in range(a.runs + 1):
            for name, argv, e in configs:
                shutil.rmtree(local, ignore_errors=True)
                if name == "server stalled":
                    os.kill(redis_pid, signal.SIGSTOP)
                try:
                    t = run_timed(argv, e)
                except SystemExit:
                    failed += 1
                    continue
                finally:
                    if name == "server stalled":
                        os.kill(redis_pid, signal.SIGCONT)
                if rnd > 0:
                    res[name].append(t)
                else:
                    subprocess.check_call([out], stdout=subprocess.DEVNULL)
                    keep = os.path.join(work, "out-" + name.replace(" ", "-"))
                    shutil.copy(out, keep)
                    outs[name] = keep
        same = all(filecmp.cmp(outs["fatlink cold"], outs[n], shallow=False)
                   for n in outs if n != "upstream")
        print("remote cache benchmark: %d TUs x %d kernels (seed %d), %d runs, "
              "%d cores, timeout %d ms; outputs identical to the cold link: "
              "%s; failed links: %d" %
              (a.tus, a.kernels, a.seed, a.runs, os.cpu_count(), a.timeout,
               "yes" if same else "NO", failed))
        med = medians(res)
        uw, um, uc = med["upstream"]
        for name, _, _ in configs:
            w, m, c = med[name]
            print("  %-14s wall %6.3f s (%4.2fx)  cpu %6.3f s (%4.2fx)  "
                  "peak %6.1f MiB (%4.2fx)" % (name, w, w / uw, c, c / uc, m,
                                               m / um))
        cold = med["local cold"][0]
        for name in ("server down", "server stalled"):
            print("  %s: %.3f s over the local cold link (the timeout: "
                  "%.3f s)" %
                  (name, med[name][0] - cold, a.timeout / 1000.0))
        if not same or failed:
            sys.exit(1)
    finally:
        subprocess.call([sys.executable, SERVERS, "stop", srv])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
