"""The open-files limit reached: new connections are closed at once, the server does not spin
and keeps answering."""
import os
import resource
import socket
import time

import requests

from gateway_server import Gateway, catalog  # noqa: F401 (fixtures)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_open_files_limit_refuses_cleanly_without_spinning(catalog):
    # As if the administrator had set a hard limit of 120 open files.
    g = Gateway(catalog, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (120, 120)))
    try:
        socks = [socket.create_connection(("127.0.0.1", g.port)) for _ in range(150)]
        time.sleep(0.5)
        before = cpu_seconds(g.proc.pid)
        time.sleep(1.0)
        assert cpu_seconds(g.proc.pid) - before < 0.3, "the server spins while the open-files limit is reached"
        refused = 0
        for s in socks:
            s.settimeout(0.05)
            try:
                if s.recv(1) == b"":
                    refused += 1
            except (socket.timeout, ConnectionResetError):
                pass
        assert refused > 0
        for s in socks:
            s.close()
        time.sleep(0.3)
        r = requests.get(g.base + "/healthz", timeout=5)
        assert r.status_code == 200
    finally:
        assert g.stop() == 0
