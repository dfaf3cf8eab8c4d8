"""GET /metrics, read by Prometheus' own parser (prometheus_client), while the server is used:
every figure is checked against what the test did to the server, not against itself."""
import subprocess
import time

import requests
from prometheus_client.parser import text_string_to_metric_families
from websockets.sync.client import connect

from gateway_server import acked, catalog, gateway_factory, recv, send, sqlite3  # noqa: F401 (fixtures)
from test_http import raw_answer_head
from test_overload import hold_lock, release, doc, subscribe


def scrape(g):
    r = requests.get(g.base + "/metrics", timeout=5)
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    values = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            values[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return values


def value(m, name, **labels):
    return m.get(("catalog_gateway_" + name, tuple(sorted(labels.items()))))


def wait_value(g, name, expected, timeout=5, **labels):
    deadline = time.time() + timeout
    while True:
        m = scrape(g)
        if value(m, name, **labels) == expected or time.time() > deadline:
            assert value(m, name, **labels) == expected, (name, labels, value(m, name, **labels))
            return m
        time.sleep(0.05)


def test_metrics_follow_connections_subscriptions_commits_and_responses(gateway_factory, catalog):
    g = gateway_factory()
    m = scrape(g)
    info = [dict(labels) for (name, labels), v in m.items() if name == "catalog_gateway_build_info" and v == 1]
    assert len(info) == 1 and set(info[0]) == {"version", "sqlite", "libwebsockets", "jansson"}
    # The binary's --version names the same gateway and libraries.
    out = subprocess.run([g.proc.args[0], "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == (f"catalog-gateway {info[0]['version']} (SQLite {info[0]['sqlite']}, "
                           f"libwebsockets {info[0]['libwebsockets']}, jansson {info[0]['jansson']})")
    assert value(m, "catalog_version") == 1 and value(m, "catalog_readable") == 1
    assert abs(value(m, "start_time_seconds") - time.time()) < 60
    assert value(m, "websocket_connections", subprotocol="graphql-transport-ws") == 0
    assert value(m, "subscriptions") == 0 and value(m, "operations_waiting") == 0

    # Two connections on each subprotocol, one subscription on each of the new protocol's.
    new = [acked(g.ws_url) for _ in range(2)]
    old = [connect(g.ws_url, subprotocols=["graphql-ws"]) for _ in range(2)]
    for ws in old:
        send(ws, {"type": "connection_init"})
        assert recv(ws)["type"] == "connection_ack"
        # Read, so that websockets' sync client is not left blocked handing it over when closing.
        assert recv(ws)["type"] == "ka"
    for i, ws in enumerate(new):
        subscribe(ws, f"v{i}", "subscription { catalogVersion { version } }")
        assert recv(ws)["payload"]["data"]["catalogVersion"]["version"] == 1
    m = scrape(g)
    assert value(m, "websocket_connections", subprotocol="graphql-transport-ws") == 2
    assert value(m, "websocket_connections", subprotocol="graphql-ws") == 2
    assert value(m, "websocket_connections_opened_total") == 4
    assert value(m, "subscriptions") == 2

    # A commit by another process: the version gauge follows it.
    sqlite3(catalog, "INSERT INTO version VALUES (2, 10, 20);")
    for ws in new:
        assert recv(ws)["payload"]["data"]["catalogVersion"]["version"] == 2
    wait_value(g, "catalog_version", 2)

    # Closing them: the gauges go back, the counter stays.
    for ws in new + old:
        ws.close()
    m = wait_value(g, "websocket_connections", 0, subprotocol="graphql-transport-ws")
    assert value(m, "websocket_connections", subprotocol="graphql-ws") == 0
    assert value(m, "subscriptions") == 0
    assert value(m, "websocket_connections_opened_total") == 4

    # HTTP responses by status: the scrapes so far (each counted once answered), a query, a 404.
    before = scrape(g)
    assert requests.post(g.http_url, json={"query": "{ catalogVersion { version } }"}, timeout=5).status_code == 200
    assert requests.get(g.base + "/nope", timeout=5).status_code == 404
    assert requests.post(g.base + "/metrics", timeout=5).status_code == 405
    m = scrape(g)
    # Since `before`: its own 200, the query's 200, and the scrape now being answered is not yet counted.
    assert value(m, "http_responses_total", code="200") == value(before, "http_responses_total", code="200") + 2
    assert value(m, "http_responses_total", code="404") == (value(before, "http_responses_total", code="404") or 0) + 1
    assert value(m, "http_responses_total", code="405") == (value(before, "http_responses_total", code="405") or 0) + 1
    assert value(m, "http_requests_in_progress") == 1  # this scrape
    # The query ran on a worker: one more in the HTTP histogram, none in the WebSocket one
    # (subscriptions are not timed there).
    assert value(m, "operation_duration_seconds_count", transport="http") == \
        value(before, "operation_duration_seconds_count", transport="http") + 1
    assert value(m, "operation_duration_seconds_bucket", transport="http", le="+Inf") == \
        value(m, "operation_duration_seconds_count", transport="http")
    assert value(m, "operation_duration_seconds_count", transport="websocket") == 0


def test_metrics_show_work_waiting_and_refused(gateway_factory, catalog):
    """The workers are held without timing (test_overload.py): another process holds the write
    lock, so each query waits in SQLite's busy handler."""
    g = gateway_factory("--workers", "1", "--max-waiting-operations", "2", "--busy-timeout-ms", "20000")
    with acked(g.ws_url) as ws:
        lock = hold_lock(catalog)
        try:
            subscribe(ws, "first", doc(0))  # runs on the one worker, waiting for the lock
            time.sleep(0.3)
            for i in (1, 2):
                subscribe(ws, f"w{i}", doc(i))  # wait for the worker
            subscribe(ws, "over", doc(3))  # a third waiting: past --max-waiting-operations
            m = recv(ws, 5)
            assert m["id"] == "over" and m["payload"][0]["extensions"]["code"] == "SERVER_BUSY", m
            metrics = wait_value(g, "operations_waiting", 2)
            assert value(metrics, "operations_waiting_bytes") > 0
            assert value(metrics, "operations_refused_total") == 1
            time.sleep(0.3)  # w1 and w2 wait at least this long, with the one worker busy
        finally:
            release(lock)
        answered = set()
        while len(answered) < 3:
            m = recv(ws, 25)
            if m["type"] == "complete":
                answered.add(m["id"])
        assert answered == {"first", "w1", "w2"}
    m = scrape(g)
    assert value(m, "operations_waiting") == 0 and value(m, "operations_waiting_bytes") == 0
    assert value(m, "operations_refused_total") == 1
    # Three ran: "first" found the worker idle, w1 and w2 waited over 0.3 s.
    assert value(m, "operation_wait_seconds_count") == 3
    assert value(m, "operation_wait_seconds_bucket", le="0.001") == 1
    assert value(m, "operation_wait_seconds_bucket", le="0.25") == 1
    assert value(m, "operation_wait_seconds_bucket", le="+Inf") == 3
    assert value(m, "operation_wait_seconds_sum") > 0.6
    assert value(m, "operation_duration_seconds_count", transport="websocket") == 3


def test_no_metrics_answers_404(gateway_factory):
    g = gateway_factory("--no-metrics")
    r = requests.get(g.base + "/metrics", timeout=5)
    assert r.status_code == 404
    assert "--no-metrics" in r.json()["errors"][0]["message"]
    assert requests.get(g.base + "/healthz", timeout=5).status_code == 200


def test_answers_written_before_a_request_is_parsed_are_counted(gateway_factory):
    """A refused WebSocket handshake and bytes that are not HTTP are answered as raw HTTP text,
    outside the request path; they count among the responses too."""
    g = gateway_factory()
    before = scrape(g)

    def raw(request):
        return raw_answer_head(g, request)[0]

    no_subprotocol = (b"GET /graphql HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    assert raw(no_subprotocol) == "HTTP/1.1 400 Bad Request"
    assert raw(b"garbage\r\n\r\n") == "HTTP/1.1 400 Bad Request"
    assert raw(b"PROPFIND /graphql HTTP/1.1\r\nHost: localhost\r\n\r\n") == "HTTP/1.1 501 Not Implemented"
    m = scrape(g)
    assert value(m, "http_responses_total", code="400") == (value(before, "http_responses_total", code="400") or 0) + 2
    assert value(m, "http_responses_total", code="501") == (value(before, "http_responses_total", code="501") or 0) + 1
