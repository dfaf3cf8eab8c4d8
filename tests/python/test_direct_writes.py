"""Frames the gateway writes to sockets itself (`writeDirect`): a connection with nothing else on
the wire gets its queued messages with one send(2) from the service thread, and a wake-up with
hundreds of connections (a catalogVersion fan-out) is split across --send-threads threads.
Whatever a socket does not take is handed to libwebsockets as raw bytes and must still arrive
whole and in order. Every mode is checked against the same expectations, including the plain
lws WRITEABLE path (--no-direct-writes)."""
import json
import re
import socket
import time

import pytest

from gateway_server import Gateway, catalog, sqlite3  # noqa: F401 (fixture)
from rawws import RawWS

SUBSCRIBERS = 300  # above the 256-connection threshold for the parallel send
VERSION_SUB = "subscription { catalogVersion { version catalogRow } }"


def subscribe_all(gw, n):
    clients = []
    for i in range(n):
        c = RawWS(gw.host, gw.port, timeout=10)
        assert c.status == 101
        c.text(json.dumps({"type": "connection_init"}))
        clients.append(c)
    for i, c in enumerate(clients):
        assert json.loads(c.recv()) == {"type": "connection_ack"}
        c.text(json.dumps({"id": f"sub-{i}", "type": "subscribe", "payload": {"query": VERSION_SUB}}))
    return clients


def expect_version(c, i, version):
    m = json.loads(c.recv())
    assert m == {"id": f"sub-{i}", "type": "next",
                 "payload": {"data": {"catalogVersion": {"version": version, "catalogRow": version * 10}}}}, m


@pytest.mark.parametrize("mode", [[], ["--send-threads", "1"], ["--send-threads", "4"], ["--no-direct-writes"]],
                         ids=["default", "one-thread", "four-threads", "lws-writeable"])
def test_every_subscriber_gets_every_version_once_with_its_own_id(catalog, mode):
    gw = Gateway(catalog, *mode)
    clients = []
    try:
        clients = subscribe_all(gw, SUBSCRIBERS)
        for i, c in enumerate(clients):
            m = json.loads(c.recv())
            assert m["id"] == f"sub-{i}" and m["payload"]["data"]["catalogVersion"]["version"] == 1
        for version in (2, 3, 4):
            sqlite3(catalog, f"INSERT INTO version VALUES ({version}, {version * 10}, 0);")
            for i, c in enumerate(clients):
                expect_version(c, i, version)
        # Nothing else arrives: one `next` per version, no duplicates.
        for c in clients[:20]:
            c.sock.settimeout(0.3)
            with pytest.raises(socket.timeout):
                c.recv_frame()
    finally:
        for c in clients:
            c.close()
        assert gw.stop() == 0


PAGE = "query Page($n: Int!) { products(first: $n) { nodes { id sku name description images } } }"


def test_a_socket_that_stops_taking_bytes_gets_every_answer_whole_and_in_order(demo_db, tmp_path):
    """A client that sends 400 queries with ~25 KB answers, one every few ms, and reads nothing
    for a while: its receive buffer is pinned small, so the server's socket fills, a direct
    write comes up short and lws holds the rest. Once it reads, every answer must parse, belong to its query, and come
    before that query's `complete`."""
    gw = Gateway(demo_db, "--log-level", "info")
    try:
        c = RawWS.__new__(RawWS)
        c.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.sock.settimeout(30)
        c.sock.connect((gw.host, gw.port))
        c.sock.sendall((f"GET /graphql HTTP/1.1\r\nHost: {gw.host}:{gw.port}\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n").encode())
        c.buf = b""
        while b"\r\n\r\n" not in c.buf:
            c.buf += c.sock.recv(4096)
        c.buf = c.buf.split(b"\r\n\r\n", 1)[1]
        c.text(json.dumps({"type": "connection_init"}))
        assert json.loads(c.recv()) == {"type": "connection_ack"}
        n = 400
        for i in range(n):
            # One at a time, so each answer meets an empty queue and is written directly.
            c.text(json.dumps({"id": f"q{i}", "type": "subscribe", "payload": {"query": PAGE, "variables": {"n": 40}}}))
            time.sleep(0.004)
        time.sleep(1)  # the server's socket is full by now
        seen_next, seen_complete, sizes = set(), set(), []
        while len(seen_complete) < n:
            m = json.loads(c.recv())
            if m["type"] == "next":
                assert m["id"] not in seen_next and m["id"] not in seen_complete
                assert len(m["payload"]["data"]["products"]["nodes"]) == 40
                seen_next.add(m["id"])
                sizes.append(len(json.dumps(m)))
            else:
                assert m["type"] == "complete" and m["id"] in seen_next, m
                seen_complete.add(m["id"])
        assert seen_next == {f"q{i}" for i in range(n)}
        assert min(sizes) > 10_000
        c.close()
    finally:
        gw.stop()
    log = gw.proc.stderr.read().decode()
    closed = [l for l in log.splitlines() if "event=connection_closed" in l]
    assert closed, log[-2000:]
    # The path under test was taken: some direct writes came up short and lws sent the rest.
    deferred = re.search(r"writes_deferred=(\d+)", closed[-1])
    assert deferred and int(deferred.group(1)) > 0, closed[-1]
