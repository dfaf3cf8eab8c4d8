"""Frames the gateway writes to sockets itself (`writeDirect`): a connection with nothing else on
the wire gets its queued messages with one send(2) from the service thread, and a wake-up with
hundreds of connections (a catalogVersion fan-out) is split across --send-threads threads.
Whatever a socket does not take is handed to libwebsockets as raw bytes and must still arrive
whole and in order. Every mode is checked against the same expectations, including the plain
lws WRITEABLE path (--no-direct-writes)."""
import json
import shutil
import re
import socket
import subprocess
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


BIG = "{ products(first: 100) { nodes { id sku name description images } } }"


def test_compressed_connections_take_small_messages_directly_and_large_ones_through_lws(demo_db, tmp_path):
    """permessage-deflate (the `websockets` client negotiates it, as browsers do): catalogVersion
    `next`s (~100 bytes) go out directly and uncompressed — RSV1 clear, which RFC 7692 allows per
    message — while large answers stay with lws's compressor. One client interleaves 60 large
    queries with the version bumps: every message must decode (the client checks each frame's
    RSV1 against its inflater), arrive whole, and each subscription see every version once, in
    order."""
    from websockets.sync.client import connect as ws_connect
    db = tmp_path / "demo.sqlite"
    shutil.copy(demo_db, db)
    db = str(db)
    gw = Gateway(db, "--log-level", "info", "--compression")
    conns = []
    try:
        for i in range(30):
            ws = ws_connect(gw.ws_url, subprotocols=["graphql-transport-ws"], max_size=2 ** 24)
            assert "permessage-deflate" in (ws.response.headers.get("Sec-WebSocket-Extensions") or "")
            ws.send(json.dumps({"type": "connection_init"}))
            assert json.loads(ws.recv(5)) == {"type": "connection_ack"}
            ws.send(json.dumps({"id": f"v{i}", "type": "subscribe", "payload": {"query": "subscription { catalogVersion { version } }"}}))
            conns.append(ws)
        first = [json.loads(ws.recv(5))["payload"]["data"]["catalogVersion"]["version"] for ws in conns]
        assert len(set(first)) == 1
        start = first[0]
        heavy = conns[0]
        big_seen = 0
        versions0 = []
        for k in range(1, 4):
            for j in range(20):
                heavy.send(json.dumps({"id": f"b{k}-{j}", "type": "subscribe", "payload": {"query": BIG}}))
            # With a busy timeout: the large queries' read transactions may hold the lock.
            subprocess.run(["sqlite3", "-cmd", ".timeout 5000", db], check=True, capture_output=True,
                           input=b"INSERT INTO version (versionid, updatecatalogrow, updateassetrow) "
                                 b"SELECT max(versionid) + 1, '', '' FROM version;")
            for i, ws in enumerate(conns[1:], start=1):
                m = json.loads(ws.recv(5))
                assert m == {"id": f"v{i}", "type": "next", "payload": {"data": {"catalogVersion": {"version": start + k}}}}, m
            # The heavy client: 20 large answers, their completes and one version, in any interleaving.
            got_version = False
            completes = 0
            while completes < 20 or not got_version:
                m = json.loads(heavy.recv(5))
                if m["id"] == "v0":
                    versions0.append(m["payload"]["data"]["catalogVersion"]["version"])
                    got_version = True
                elif m["type"] == "next":
                    assert len(m["payload"]["data"]["products"]["nodes"]) == 100
                    big_seen += 1
                else:
                    assert m["type"] == "complete", m
                    completes += 1
        assert versions0 == [start + 1, start + 2, start + 3]
        assert big_seen == 60
    finally:
        for ws in conns:
            ws.close()
        gw.stop()
    log = gw.proc.stderr.read().decode()
    opened = [l for l in log.splitlines() if "event=connection_opened" in l]
    assert len(opened) == 30 and all("compressed=true" in l for l in opened)
    closed = [l for l in log.splitlines() if "event=connection_closed" in l]
    direct = [int(re.search(r"messages_direct=(\d+)", l).group(1)) for l in closed]
    out = [int(re.search(r"messages_out=(\d+)", l).group(1)) for l in closed]
    # Small messages went out directly on compressed connections; the large answers did not.
    assert sum(1 for d in direct if d > 0) >= 25, closed
    assert max(o - d for o, d in zip(out, direct)) >= 60, closed
