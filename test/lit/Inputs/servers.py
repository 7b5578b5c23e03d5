"""servers.py: real servers for the tests, on 127.0.0.1 and free ports.

  servers.py start redis DIR [redis-server options...]
  servers.py start nginx DIR [client_max_body_size]
  servers.py stop DIR

start runs the server (Debian's redis-server or nginx with its WebDAV
module taking PUT under /cache/) in the foreground of a new session under
`timeout 900`, so that a test that fails before stopping it leaves nothing
running for long; waits until it answers; writes DIR/<name>.port and
DIR/<name>.pid (the server's own process). stop wakes and ends every server
started in DIR."""
import os
import signal
import socket
import subprocess
import sys
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def answers(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def start(kind, d, extra):
    os.makedirs(d, exist_ok=True)
    port = free_port()
    pidfile = os.path.join(d, kind + ".pid")
    if kind == "redis":
        cmd = ["redis-server", "--bind", "127.0.0.1", "--port", str(port),
               "--save", "", "--appendonly", "no", "--dir", d,
               "--pidfile", pidfile] + extra
    else:
        www = os.path.join(d, "www")
        os.makedirs(os.path.join(www, "cache"), exist_ok=True)
        os.makedirs(os.path.join(d, "tmp"), exist_ok=True)
        body = extra[0] if extra else "1g"
        temps = "".join("%s_temp_path %s/tmp; " % (t, d) for t in
                        ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            # Workers as this user (root's would be nobody's, who may not
            # reach a private temporary directory).
            if os.geteuid() == 0:
                f.write("user root root;\n")
            f.write("worker_processes 1; pid %s; error_log %s/error.log;\n"
                    "events {}\nhttp { access_log off; %s\n"
                    "  server { listen 127.0.0.1:%d; root %s;\n"
                    "    location /cache/ { dav_methods PUT DELETE; "
                    "create_full_put_path on; client_max_body_size %s; } } }\n"
                    % (pidfile, d, temps, port, www, body))
        cmd = ["nginx", "-g", "daemon off;", "-c", conf, "-p", d]
    log = open(os.path.join(d, kind + ".log"), "w")
    subprocess.Popen(["timeout", "900"] + cmd, stdout=log, stderr=log,
                     stdin=subprocess.DEVNULL, start_new_session=True)
    for _ in range(100):
        if answers(port) and os.path.exists(pidfile):
            break
        time.sleep(0.05)
    else:
        sys.exit("servers.py: %s did not start (see %s.log)" % (kind, kind))
    with open(os.path.join(d, kind + ".port"), "w") as f:
        f.write("%d\n" % port)


def stop_pidfiles(d, names):
    """Wakes and ends the process of each DIR/<name>.pid, and waits."""
    for name in names:
        path = os.path.join(d, name + ".pid")
        try:
            with open(path) as f:
                pid = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        for sig in (signal.SIGCONT, signal.SIGTERM):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except OSError:
                break
            time.sleep(0.05)
        try:
            os.unlink(path)
        except OSError:
            pass  # the server removed it


if __name__ == "__main__":
    if sys.argv[1] == "start":
        start(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        stop_pidfiles(sys.argv[2], ("redis", "nginx"))
