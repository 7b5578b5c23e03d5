"""slurm.py: a one-node Slurm cluster on localhost for the tests.

  slurm.py start DIR     writes DIR/slurm.conf, starts munged (its own
                         socket), slurmctld and slurmd (free ports, state
                         and logs in DIR), each under `timeout 900` so that
                         a failed test leaves nothing running for long, and
                         waits until the node takes jobs (srun answers);
                         exits 1 naming the daemon and its log otherwise.
  slurm.py stop DIR      ends them.

Jobs see SLURM_CONF=DIR/slurm.conf (the caller exports it). Debian 12's
slurm-wlm (22.05) and munge; run as root (SlurmUser and SlurmdUser root, as
a CI container is)."""
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from servers import free_port, stop_pidfiles  # noqa: E402


def conf(d):
    host = socket.gethostname().split(".")[0]
    return "\n".join([
        "ClusterName=fatlink",
        "SlurmctldHost=%s(127.0.0.1)" % host,
        "SlurmctldPort=%d" % free_port(),
        "SlurmdPort=%d" % free_port(),
        "AuthType=auth/munge",
        "AuthInfo=socket=%s/munge.socket" % d,
        "CredType=cred/munge",
        "SlurmUser=root",
        "SlurmdUser=root",
        "StateSaveLocation=%s/state" % d,
        "SlurmdSpoolDir=%s/spool" % d,
        "SlurmctldPidFile=%s/slurmctld.pid" % d,
        "SlurmdPidFile=%s/slurmd.pid" % d,
        "SlurmctldLogFile=%s/slurmctld.log" % d,
        "SlurmdLogFile=%s/slurmd.log" % d,
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "MpiDefault=none",
        "ReturnToService=2",
        "NodeName=%s NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN"
        % (host, os.cpu_count()),
        "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ""])


def daemon(d, name, cmd):
    log = open(os.path.join(d, name + ".out"), "w")
    subprocess.Popen(["timeout", "900"] + cmd, stdout=log, stderr=log,
                     stdin=subprocess.DEVNULL, start_new_session=True)


def start(d):
    for sub in ("state", "spool"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    path = os.path.join(d, "slurm.conf")
    with open(path, "w") as f:
        f.write(conf(d))
    env = dict(os.environ, SLURM_CONF=path)
    daemon(d, "munged", ["munged", "-F", "--force",
                         "-S", d + "/munge.socket",
                         "--pid-file=%s/munged.pid" % d,
                         "--log-file=%s/munged.log" % d,
                         "--seed-file=%s/munge.seed" % d])
    for _ in range(100):
        if os.path.exists(d + "/munge.socket"):
            break
        time.sleep(0.05)
    daemon(d, "slurmctld", ["slurmctld", "-D", "-f", path])
    time.sleep(0.5)
    daemon(d, "slurmd", ["slurmd", "-D", "-f", path])
    deadline = time.time() + 30
    while time.time() < deadline:
        p = subprocess.run(["srun", "-N1", "-n1", "--immediate=5", "true"],
                           env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if p.returncode == 0:
            return
        time.sleep(0.5)
    sys.exit("slurm.py: the cluster takes no jobs (see %s/slurmctld.log, "
             "slurmd.log, munged.log)" % d)


if sys.argv[1] == "start":
    start(sys.argv[2])
else:
    stop_pidfiles(sys.argv[2], ("slurmd", "slurmctld", "munged"))
