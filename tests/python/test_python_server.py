"""bench/python-server against the gateway: the side-by-side benchmark (bench/run.py --compare) is
fair only when the Python server answers the benchmark's own operations with the same data. Both
serve one copy of the demo catalog; every operation the benchmark sends (bench/run.py's constants:
the small query over the ids it cycles through, the category page with its variables, the search,
the catalogVersion subscription) is asked of both, over WebSocket (graphql-transport-ws) and over
HTTP POST, and the `data` members must be equal. Beyond those, the differential test's comparison
with reference.py runs against the Python server too."""
import importlib.util
import json
import pathlib
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time

import pytest
import requests

import test_differential as differential
from gateway_server import Gateway, acked, recv, send

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERVER = ROOT / "bench" / "python-server" / "server.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = load_bench()


class PythonServer:
    def __init__(self, db, *extra):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen([sys.executable, str(SERVER), "--db", db, "--port", str(self.port), *extra],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.http_url = f"http://127.0.0.1:{self.port}/graphql"
        self.ws_url = f"ws://127.0.0.1:{self.port}/graphql"
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, f"python server exited: {self.proc.stderr.read().decode()}"
            try:
                requests.post(self.http_url, json={"query": "{ catalogVersion { version } }"}, timeout=5)
                return
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "python server did not answer within 30 s"
                time.sleep(0.05)

    def stop(self):
        self.proc.terminate()
        return self.proc.wait(15)


@pytest.fixture(scope="module")
def catalog_copy(binary, demo_db, tmp_path_factory):
    """The demo catalog prepared as the benchmark prepares its catalogs, in a copy of its own
    (the subscription test commits to it)."""
    path = str(tmp_path_factory.mktemp("pyserver") / "catalog.sqlite")
    shutil.copyfile(demo_db, path)
    subprocess.run([binary, "prepare", "--db", path], check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def servers(catalog_copy):
    gateway = Gateway(catalog_copy)
    python = PythonServer(catalog_copy)
    yield gateway, python
    assert python.stop() == 0
    assert gateway.stop() == 0


def http(server, query, variables):
    r = requests.post(server.http_url, json={"query": query, "variables": variables}, timeout=30)
    assert r.status_code == 200
    return r.json()



def ws_query(ws, sid, query, variables):
    """One operation as cg-load sends it: its `next` payload, then its `complete`."""
    send(ws, {"id": sid, "type": "subscribe", "payload": {"query": query, "variables": variables}})
    message = recv(ws)
    assert message["type"] == "next" and message["id"] == sid, message
    assert recv(ws) == {"id": sid, "type": "complete"}
    return message["payload"]


def both_answers(servers, query, variables):
    """Each server's answer over HTTP POST and over WebSocket; the two transports must agree."""
    answers = []
    for server in servers:
        over_http = http(server, query, variables)
        with acked(server.ws_url) as ws:
            over_ws = ws_query(ws, "1", query, variables)
        assert over_ws == over_http
        assert "errors" not in over_http, over_http["errors"]
        answers.append(over_http["data"])
    return answers


def test_the_benchmarks_category_page_is_the_engines_own():
    # bench/run.py sends BenchQueryCommand.categoryPage (Sources/catalog-gateway/BenchQueryCommand.swift).
    swift = (ROOT / "Sources" / "catalog-gateway" / "BenchQueryCommand.swift").read_text()
    page = re.search(r'static let categoryPage = """\n(.*?)\n\s*"""', swift, re.S).group(1)
    assert page.split() == bench.CATEGORY_PAGE.split()


def test_small_query_over_every_id_the_benchmark_cycles_through(servers, catalog_copy, tmp_path):
    ids_file = tmp_path / "ids.jsonl"
    bench.product_ids(catalog_copy, str(ids_file))
    ids = [json.loads(line) for line in ids_file.read_text().splitlines()]
    assert len(ids) == 560
    gateway, python = servers
    with acked(gateway.ws_url) as gw_ws, acked(python.ws_url) as py_ws:
        for n, variables in enumerate(ids):
            expected = ws_query(gw_ws, str(n), bench.SMALL_QUERY, variables)
            assert ws_query(py_ws, str(n), bench.SMALL_QUERY, variables) == expected
            assert http(python, bench.SMALL_QUERY, variables) == expected
            assert expected["data"]["product"]["id"] == variables["id"]


@pytest.fixture(scope="module")
def row_floor(binary, catalog_copy):
    """bench-rows' answer: the category bench/run.py pages through (the one with the most products)."""
    return json.loads(subprocess.run([binary, "bench-rows", "--db", catalog_copy, "--json", "--iterations", "1"],
                                     check=True, capture_output=True, text=True).stdout)


def test_category_page_with_the_benchmarks_variables(servers, row_floor):
    rows = row_floor
    gw, py = both_answers(servers, bench.CATEGORY_PAGE, {"id": rows["category"]})
    assert py == gw
    page = gw["category"]["products"]
    assert len(page["nodes"]) == rows["products"] == 25
    assert sum(len(p["specs"]) for p in page["nodes"]) > 0
    assert sum(len(p["kit"]) for p in page["nodes"]) > 0
    assert any(p["manufacturer"] and p["manufacturer"]["logo"] for p in page["nodes"])


@pytest.mark.parametrize("order", ["CATALOG", "NAME", "NEWEST"])
def test_second_page_follows_the_cursor(servers, row_floor, order):
    # Both servers write the same cursors (the row's sort key), so each takes the other's.
    query = bench.CATEGORY_PAGE.replace("products(first: 50)", f"products(first: 10, orderBy: {order}, after: $after)") \
        .replace("($id: ID!)", "($id: ID!, $after: String)").replace("totalCount", "totalCount edges { cursor }")
    first = both_answers(servers, query, {"id": row_floor["category"], "after": None})
    assert first[1] == first[0]
    cursor = first[0]["category"]["products"]["pageInfo"]["endCursor"]
    gw, py = both_answers(servers, query, {"id": row_floor["category"], "after": cursor})
    assert py == gw
    assert gw["category"]["products"]["nodes"]


@pytest.mark.parametrize("text", [bench.SEARCH_TEXT, "arri", "zeiss 50", "a b", "%"])
def test_search(servers, text):
    gw, py = both_answers(servers, bench.SEARCH_QUERY, {"text": text})
    assert py == gw
    if text == bench.SEARCH_TEXT:
        assert gw["search"]["totalCount"] > 0


def test_catalog_version_subscription_sees_a_commit_by_another_connection(servers, catalog_copy):
    gateway, python = servers
    with acked(gateway.ws_url) as gw_ws, acked(python.ws_url) as py_ws:
        for ws in (gw_ws, py_ws):
            send(ws, {"id": "v", "type": "subscribe", "payload": {"query": bench.SUBSCRIPTION}})
        first = [recv(ws) for ws in (gw_ws, py_ws)]
        assert first[1] == first[0]
        assert first[0]["type"] == "next"
        version = first[0]["payload"]["data"]["catalogVersion"]["version"]
        # The benchmark's bump: a separate SQLite connection commits the next version row.
        with sqlite3.connect(catalog_copy) as writer:
            writer.execute("INSERT INTO version (versionid, updatecatalogrow, updateassetrow) "
                           "SELECT max(versionid) + 1, '', '' FROM version")
        bumped = [recv(ws) for ws in (gw_ws, py_ws)]
        assert bumped[1] == bumped[0] == {"id": "v", "type": "next",
                                          "payload": {"data": {"catalogVersion": {"version": version + 1}}}}
        # The query sees the same row.
        full = "{ catalogVersion { version catalogRow assetRow } }"
        assert http(python, full, {}) == http(gateway, full, {}) == \
            {"data": {"catalogVersion": {"version": version + 1, "catalogRow": None, "assetRow": None}}}
        for ws in (gw_ws, py_ws):
            send(ws, {"id": "v", "type": "complete"})
            # The connection stays usable after the subscription is completed.
            assert ws_query(ws, "q", bench.SMALL_QUERY, {"id": "1"})["data"]["product"]["id"] == "1"


def test_catalog_changes_is_an_error_not_a_crash(servers):
    _, python = servers
    answer = http(python, "{ catalogChanges(sinceVersion: 1) { version } }", {})
    assert answer["data"] is None
    assert answer["errors"][0]["extensions"]["code"] == "NOT_IMPLEMENTED"
    with acked(python.ws_url) as ws:
        send(ws, {"id": "c", "type": "subscribe",
                  "payload": {"query": "subscription { catalogChanges { version } }"}})
        message = recv(ws)
        assert message["type"] == "next" and message["payload"]["errors"][0]["extensions"]["code"] == "NOT_IMPLEMENTED"
        assert recv(ws) == {"id": "c", "type": "complete"}
    # And the server still answers.
    assert http(python, bench.SMALL_QUERY, {"id": "1"})["data"]["product"]["id"] == "1"


class ServerEngine:
    """test_differential's Engine (one document, its JSON answer) over the Python server's HTTP."""

    def __init__(self, server):
        self.server, self.calls = server, 0

    def run(self, body, fragments=(), expect_errors=False, variables=None, head=""):
        doc = head + "{\n" + "\n".join(body) + "\n}\n" + "\n".join(fragments)
        self.calls += 1
        response = http(self.server, doc, variables)
        if not expect_errors:
            assert "errors" not in response, f"unexpected errors {response['errors'][:3]}\n{doc[:2000]}"
        return response


@pytest.mark.parametrize("catalog", ["quirks", "quirks prepared", "demo prepared"])
def test_matches_the_reference_implementation(binary, tmp_path, monkeypatch, catalog):
    if catalog.startswith("quirks"):
        db, options = differential.make_quirk_catalog(tmp_path), {"small_page": 3, "page": 4, "sparse": False}
    else:
        db, options = str(tmp_path / "demo.sqlite"), {}
        subprocess.run([binary, "demo-db", "--out", db, "--seed", "2"], check=True, capture_output=True)
    if catalog.endswith("prepared"):
        db = differential.prepared_copy(binary, db)
    server = PythonServer(db)
    try:
        monkeypatch.setattr(differential, "Engine", lambda _binary, _db: ServerEngine(server))
        diffs, calls = differential.compare_catalog(binary, db, **options)
    finally:
        assert server.stop() == 0
    assert calls > 10
    assert not diffs.items, diffs.report()


def test_the_legacy_protocol_mode_speaks_graphql_ws_alone(catalog_copy):
    """`--ws-protocol graphql-ws` (the server cg-load's graphql-ws support is measured against):
    connection_ack then `ka`, `start` answered with `data` and `complete` carrying what the
    graphql-transport-ws mode sends, `stop` ends a subscription; graphql-transport-ws is refused."""
    from websockets.sync.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidHandshake
    python = PythonServer(catalog_copy, "--ws-protocol", "graphql-ws", "--processes", "1")
    try:
        with connect(python.ws_url, subprotocols=["graphql-ws"]) as ws:
            assert ws.subprotocol == "graphql-ws"
            ws.send(json.dumps({"type": "connection_init"}))
            assert json.loads(ws.recv(5)) == {"type": "connection_ack"}
            assert json.loads(ws.recv(5)) == {"type": "ka"}
            ws.send(json.dumps({"type": "start", "id": "q", "payload": {"query": bench.SMALL_QUERY, "variables": {"id": "1"}}}))
            data = json.loads(ws.recv(5))
            assert data["type"] == "data" and data["id"] == "q" and data["payload"]["data"]["product"]["id"] == "1"
            assert json.loads(ws.recv(5)) == {"type": "complete", "id": "q"}
            ws.send(json.dumps({"type": "start", "id": "s", "payload": {"query": "subscription { catalogVersion { version } }"}}))
            first = json.loads(ws.recv(5))
            assert first["type"] == "data" and first["id"] == "s" and "version" in first["payload"]["data"]["catalogVersion"]
            ws.send(json.dumps({"type": "stop", "id": "s"}))
            ws.send(json.dumps({"type": "start", "id": "bad", "payload": {"query": "{ nope }"}}))
            error = json.loads(ws.recv(5))
            assert error["type"] == "error" and error["id"] == "bad" and "nope" in error["payload"]["message"]
            # A graphql-transport-ws message on this protocol ends the connection with 4400.
            ws.send(json.dumps({"type": "subscribe", "id": "x", "payload": {"query": bench.SMALL_QUERY}}))
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    ws.recv(5)
            assert closed.value.rcvd.code == 4400
        # The other protocol alone is not served: the upgrade names none, and the server closes 4406.
        try:
            with connect(python.ws_url, subprotocols=["graphql-transport-ws"]) as ws:
                with pytest.raises(ConnectionClosed) as closed:
                    ws.recv(5)
                assert closed.value.rcvd.code == 4406
        except InvalidHandshake:
            pass
    finally:
        assert python.stop() == 0

