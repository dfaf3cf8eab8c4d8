"""The open-files limit reached: new connections are closed at once, the server does not spin
and keeps answering."""
import os
import resource
import socket
import time

import pytest
import requests
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from gateway_server import Gateway, acked, catalog, recv, send  # noqa: F401 (fixtures)


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


def soft_open_files(pid):
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3]), int(line.split()[4])
    raise AssertionError("no open-files line in /proc/PID/limits")


def needed_open_files(max_connections, workers):
    # --max-connections, 32 more to answer 503 with, 64 + 4 per SQLite connection (the workers
    # and the watcher), and 32 for HTTP connections lingering after their close: `serve --help`.
    return max_connections + 32 + 64 + 4 * (workers + 1) + 32


def test_open_files_limit_is_lowered_to_what_max_connections_needs(catalog):
    # A soft limit far above the need (as under a container's 1,048,576) is lowered: lws sizes
    # its descriptor table from it and scans that table on every accept and close.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    g = Gateway(catalog, "--max-connections", "200", "--workers", "2",
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard)))
    try:
        assert soft_open_files(g.proc.pid) == (min(hard, needed_open_files(200, 2)), hard)
        # Every connection --max-connections allows still opens, and the next gets HTTP 503.
        conns = [acked(g.ws_url) for _ in range(200)]
        with pytest.raises(InvalidStatus) as refused:
            connect(g.ws_url, subprotocols=["graphql-transport-ws"])
        assert refused.value.response.status_code == 503
        for ws in conns:
            ws.close()
        time.sleep(0.3)
        with acked(g.ws_url) as ws:
            send(ws, {"id": "v", "type": "subscribe", "payload": {"query": "{ catalogVersion { version } }"}})
            assert recv(ws)["payload"] == {"data": {"catalogVersion": {"version": 1}}}
            # Read to the end: websockets' sync client answers the server's close frame only
            # once every message before it has been received.
            assert recv(ws) == {"id": "v", "type": "complete"}
    finally:
        assert g.stop() == 0


def test_open_files_limit_is_raised_to_what_max_connections_needs(catalog):
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    g = Gateway(catalog, "--max-connections", "3000", "--workers", "2",
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 256), hard)))
    try:
        assert soft_open_files(g.proc.pid) == (min(hard, needed_open_files(3000, 2)), hard)
    finally:
        assert g.stop() == 0


def test_clients_that_never_finish_their_headers_stall_no_one(catalog):
    # Slowloris: 600 connections that each send half a request and wait. libwebsockets lends a
    # header buffer to each; with a pool of 256 (before stop 21) the 257th connection on, and so
    # every ordinary request, waited for lws's header timeout (~10 s).
    g = Gateway(catalog)
    socks = []
    try:
        for _ in range(600):
            s = socket.create_connection(("127.0.0.1", g.port))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        time.sleep(0.5)
        for _ in range(3):
            r = requests.post(g.http_url, json={"query": "{ catalogVersion { version } }"}, timeout=3)
            assert r.json() == {"data": {"catalogVersion": {"version": 1}}}
    finally:
        for s in socks:
            s.close()
        assert g.stop() == 0
