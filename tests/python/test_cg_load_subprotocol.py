"""cg-load speaks both GraphQL-over-WebSocket protocols: graphql-transport-ws and the legacy
graphql-ws of subscriptions-transport-ws (`start` / `data`, `ka` keep-alives). By default it
offers both and each connection speaks the one the server picks, so `make bench
BENCH_COMPARE=...` can measure a server that only has the legacy one. Checked against the
gateway (which has both) and against a small legacy-only server written here."""
import json
import os
import shutil
import subprocess
import threading

import pytest
from websockets.sync.server import serve

from conftest import BINARY
from gateway_server import Gateway

CG_LOAD = os.path.join(os.path.dirname(BINARY), "cg-load")
SMALL = '{ product(id: "1") { id name } }'


@pytest.fixture(autouse=True)
def built():
    if not os.path.exists(CG_LOAD):
        pytest.skip(f"{CG_LOAD} not built")


def ops(url, tmp_path, *extra, query=SMALL):
    out = tmp_path / "ops.json"
    r = subprocess.run([CG_LOAD, "ops", "--url", url, "--connections", "2", "--inflight", "3", "--duration", "0.5",
                        "--warmup", "0.1", "--connect-timeout", "10", "--query", query, "--json", str(out), *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    return r, (json.loads(out.read_text()) if out.exists() else None)


def measured(result):
    group = result["phases"][-1]["groups"][0]
    return group["ops"], group["errors"] + group["responses_with_errors"]


@pytest.mark.parametrize("offer, spoken", [("auto", "graphql-transport-ws"), ("graphql-transport-ws", "graphql-transport-ws"),
                                           ("graphql-ws", "graphql-ws")])
def test_ops_against_the_gateway_in_either_protocol(demo_db, tmp_path, offer, spoken):
    g = Gateway(demo_db)
    try:
        r, result = ops(g.ws_url, tmp_path, "--subprotocol", offer)
        assert r.returncode == 0, r.stdout + r.stderr
        count, errors = measured(result)
        assert count > 0 and errors == 0
        # Both connections, and only in the protocol the gateway picked (the client's first).
        assert result["subprotocols"] == {"graphql-transport-ws": 2 if spoken == "graphql-transport-ws" else 0,
                                          "graphql-ws": 2 if spoken == "graphql-ws" else 0}
        assert result["protocol_errors"] == 0
    finally:
        g.stop()


def test_an_answer_with_errors_is_caught_over_graphql_ws(demo_db, tmp_path):
    """`data` is checked for `errors` as `next` is: a query the gateway answers with a field
    error is reported, not counted as a good answer."""
    g = Gateway(demo_db)
    try:
        r, result = ops(g.ws_url, tmp_path, "--subprotocol", "graphql-ws", query='{ product(id: "1") { noSuchField } }')
        _, errors = measured(result)
        assert errors > 0
        assert "noSuchField" in r.stderr
    finally:
        g.stop()


def test_fanout_over_graphql_ws_delivers_every_version(demo_db, tmp_path):
    db = tmp_path / "demo.sqlite"
    shutil.copy(demo_db, db)
    g = Gateway(str(db))
    out = tmp_path / "fanout.json"
    try:
        r = subprocess.run([CG_LOAD, "fanout", "--url", g.ws_url, "--db", str(db), "--subscribers", "20", "--bumps", "3",
                            "--gap-ms", "20", "--subprotocol", "graphql-ws", "--json", str(out)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        result = json.loads(out.read_text())
        assert result["subscribers"] == 20 and result["bumps"] == 3 and result["missed_deliveries"] == 0
        assert result["subprotocols"] == {"graphql-transport-ws": 0, "graphql-ws": 20}
    finally:
        g.stop()


class LegacyOnlyServer:
    """graphql-ws only (as subscriptions-transport-ws servers are): connection_ack then a `ka`,
    and for each `start` a `ka`, a `data` with a fixed answer and a `complete`."""

    def __init__(self):
        self.starts = 0
        self.lock = threading.Lock()
        self.server = serve(self.handle, "127.0.0.1", 0, subprotocols=["graphql-ws"])
        self.port = self.server.socket.getsockname()[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def handle(self, ws):
        assert ws.subprotocol == "graphql-ws"
        for text in ws:
            m = json.loads(text)
            if m["type"] == "connection_init":
                ws.send(json.dumps({"type": "connection_ack"}))
                ws.send(json.dumps({"type": "ka"}))
            elif m["type"] == "start":
                with self.lock:
                    self.starts += 1
                ws.send(json.dumps({"type": "ka"}))
                ws.send(json.dumps({"type": "data", "id": m["id"], "payload": {"data": {"product": {"id": "1", "name": "x"}}}}))
                ws.send(json.dumps({"type": "complete", "id": m["id"]}))
            elif m["type"] == "subscribe":
                ws.close(4400, "graphql-transport-ws message on graphql-ws")

    def stop(self):
        self.server.shutdown()
        self.thread.join(5)


@pytest.mark.parametrize("framing", ["raw", "lws"])
def test_auto_follows_a_server_that_only_speaks_graphql_ws(tmp_path, framing):
    """Raw framing reads the pick from the 101 response itself, lws framing from lws's header
    table before ESTABLISHED (lws 4.1 has freed it by then: read there, every pick looked like
    graphql-transport-ws and the server closed the connection at the first `subscribe`)."""
    s = LegacyOnlyServer()
    try:
        r, result = ops(f"ws://127.0.0.1:{s.port}/graphql", tmp_path, "--framing", framing)
        assert r.returncode == 0, r.stdout + r.stderr
        count, errors = measured(result)
        assert count > 0 and errors == 0
        assert result["subprotocols"] == {"graphql-transport-ws": 0, "graphql-ws": 2}
        assert result["protocol_errors"] == 0
        assert s.starts >= count
    finally:
        s.stop()


def test_offering_only_graphql_transport_ws_to_it_fails_with_the_reason(tmp_path):
    s = LegacyOnlyServer()
    try:
        r, _ = ops(f"ws://127.0.0.1:{s.port}/graphql", tmp_path, "--subprotocol", "graphql-transport-ws")
        assert r.returncode != 0
        assert "upgrade refused" in r.stderr or "subprotocol" in r.stderr, r.stderr
        assert s.starts == 0
    finally:
        s.stop()


def test_a_bad_subprotocol_value_is_a_usage_error():
    r = subprocess.run([CG_LOAD, "ops", "--subprotocol", "graphql", "--query", SMALL],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    assert r.returncode == 64
    assert "--subprotocol must be auto, graphql-transport-ws or graphql-ws" in r.stderr
