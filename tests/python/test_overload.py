"""Offered more work than the workers can do (docs/FAULTS.md, "Found in stop 33's audit:
overload"): what waits for a worker is bounded, for one connection and for all together, and
the excess is refused at once with SERVER_BUSY (HTTP 503 and Retry-After) while a connection
asking for one thing at a time is still served.

The workers are kept busy without timing: another process holds the catalog's write lock, so
every query waits in SQLite's busy handler until the lock is released."""
import concurrent.futures
import http.client
import json
import sqlite3 as sqlite
import time

import requests

from gateway_server import acked, catalog, gateway_factory, recv, send  # noqa: F401 (fixtures)

SERVER_BUSY = "SERVER_BUSY"


def hold_lock(db):
    conn = sqlite.connect(db, isolation_level=None, timeout=5, check_same_thread=False)
    conn.execute("BEGIN EXCLUSIVE")
    return conn


def release(conn):
    conn.execute("COMMIT")
    conn.close()


def doc(n, pad=0):
    # Distinct documents: no answer cache holds them (it could answer without the lock).
    return ("#" + "x" * pad + "\n" if pad else "") + "{ v%d: catalogVersion { version } }" % n


def subscribe(ws, oid, query):
    send(ws, {"id": oid, "type": "subscribe", "payload": {"query": query}})


def outcomes(ws, ids, timeout=15):
    """Each id's fate: "answered" (next, complete) or the `error`'s code."""
    fate = {}
    deadline = time.time() + timeout
    while len(fate) < len(ids):
        m = recv(ws, max(0.1, deadline - time.time()))
        if m["type"] == "next":
            assert list(m["payload"]["data"].values()) == [{"version": 1}], m
        elif m["type"] == "complete":
            fate[m["id"]] = "answered"
        elif m["type"] == "error":
            fate[m["id"]] = m["payload"][0]["extensions"]["code"]
    assert sorted(fate) == sorted(ids)
    return fate


def test_operations_completed_before_they_start_still_count_against_max_operations(gateway_factory, catalog):
    """`complete` frees an operation's id at once, but its job stayed queued for a worker: a
    client sending subscribe/complete pairs while its lane was busy queued without bound (the
    0.32.0 build took 300 pairs past --max-operations 20, and the operation after them too).
    Now a connection's waiting jobs count against --max-operations until a worker takes them."""
    g = gateway_factory("--workers", "2", "--max-operations", "20", "--busy-timeout-ms", "20000")
    with acked(g.ws_url) as ws:
        lock = hold_lock(catalog)
        try:
            subscribe(ws, "first", doc(0))  # runs, and waits for the lock, on this lane's one worker
            time.sleep(0.2)
            for i in range(1, 301):
                subscribe(ws, f"c-{i}", doc(i))
                send(ws, {"id": f"c-{i}", "type": "complete"})
            subscribe(ws, "last", doc(301))
            m = recv(ws, 5)
            while m["id"] != "last":  # the pairs refused before their `complete` was read
                assert m["type"] == "error" and m["id"].startswith("c-"), m
                m = recv(ws, 5)
            assert m["type"] == "error", m
            assert m["payload"][0]["extensions"]["code"] == "TOO_MANY_OPERATIONS"
        finally:
            release(lock)
        assert outcomes(ws, ["first"]) == {"first": "answered"}
        # The lane drains (completed jobs return at once) and the connection is served again.
        deadline = time.time() + 10
        while True:
            subscribe(ws, "again", doc(302))
            fate = outcomes(ws, ["again"])["again"]
            if fate == "answered" or time.time() > deadline:
                break
        assert fate == "answered"


def test_waiting_operations_are_bounded_across_connections_and_polite_ones_still_run(gateway_factory, catalog):
    """--max-waiting-operations 10: a greedy connection's 40 operations behind a held lock are
    one running, 10 waiting (9 if the running one had not started) and the rest refused at once with SERVER_BUSY; another connection's
    single operation is still accepted (nothing of its own waits), and every accepted one is
    answered once the lock goes. The 0.32.0 build queued all of them (no refusal)."""
    g = gateway_factory("--workers", "2", "--max-waiting-operations", "10", "--busy-timeout-ms", "20000")
    with acked(g.ws_url) as greedy, acked(g.ws_url) as polite:
        lock = hold_lock(catalog)
        try:
            ids = [f"g-{i}" for i in range(40)]
            for i, oid in enumerate(ids):
                subscribe(greedy, oid, doc(i))
            busy = {}
            while len(busy) < 40 - 11:
                m = recv(greedy, 5)
                assert m["type"] == "error", m
                busy[m["id"]] = m["payload"][0]["extensions"]["code"]
            assert set(busy.values()) == {SERVER_BUSY}
            subscribe(polite, "p-100", doc(100))
            time.sleep(0.3)
        finally:
            release(lock)
        fate = outcomes(greedy, [i for i in ids if i not in busy])
        fate.update(busy)
        refused = [i for i in ids if fate[i] == SERVER_BUSY]
        assert 40 - 11 <= len(refused) <= 40 - 10, fate
        assert all(fate[i] == "answered" for i in ids if i not in refused)
        assert outcomes(polite, ["p-100"]) == {"p-100": "answered"}
        # Nothing waits any more: the greedy connection is served in full again.
        for i in range(5):
            subscribe(greedy, f"again-{200 + i}", doc(200 + i))
        assert set(outcomes(greedy, [f"again-{200 + i}" for i in range(5)]).values()) == {"answered"}


def test_waiting_bytes_are_bounded(gateway_factory, catalog):
    """--max-waiting-bytes 200000: 30 KB documents queue up to it, then are refused with
    SERVER_BUSY (the count limit is far away)."""
    g = gateway_factory("--workers", "2", "--max-waiting-bytes", "200000", "--busy-timeout-ms", "20000")
    with acked(g.ws_url) as ws:
        lock = hold_lock(catalog)
        try:
            ids = [f"b-{i}" for i in range(20)]
            for i, oid in enumerate(ids):
                subscribe(ws, oid, doc(i, pad=30_000))
            time.sleep(0.5)
        finally:
            release(lock)
        fate = outcomes(ws, ids)
        refused = [i for i in ids if fate[i] == SERVER_BUSY]
        # One running and 6 waiting (5 if the running one had not started): 6 × 30 KB with
        # their messages' framing fit, 7 do not.
        assert 20 - 7 <= len(refused) <= 20 - 6, fate
        assert all(f == "answered" for i, f in fate.items() if i not in refused)


def test_http_requests_past_the_waiting_bound_get_503_server_busy(gateway_factory, catalog):
    """Each HTTP request is a lane of its own, so only the shared bound can hold them: with
    --max-waiting-operations 4 and both workers waiting for the lock, 16 concurrent POSTs are 2
    running, 4 waiting and the rest 503 SERVER_BUSY with Retry-After at once. The 0.32.0 build
    queued all 16 (up to --max-connections)."""
    g = gateway_factory("--workers", "2", "--max-waiting-operations", "4", "--busy-timeout-ms", "20000")
    lock = hold_lock(catalog)
    try:
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(requests.post, g.http_url, json={"query": doc(i)}, timeout=20) for i in range(16)]
            time.sleep(1.0)
            early = [f.result() for f in futures if f.done()]
            release(lock)
            lock = None
            answers = [f.result() for f in futures]
    finally:
        if lock is not None:
            release(lock)
    busy = [r for r in answers if r.status_code == 503]
    assert 16 - 6 <= len(busy) <= 16 - 4, [r.status_code for r in answers]
    assert all(r in early for r in busy), "a refusal waited for the lock"
    for r in busy:
        assert r.headers["Retry-After"] == "1"
        assert r.json()["errors"][0]["extensions"]["code"] == SERVER_BUSY
    for r in answers:
        if r.status_code != 503:
            assert r.status_code == 200 and list(r.json()["data"].values()) == [{"version": 1}], r.text
    # Nothing waits afterwards: a request is answered at once.
    r = requests.post(g.http_url, json={"query": doc(99)}, timeout=5)
    assert r.status_code == 200 and json.loads(r.text) == {"data": {"v99": {"version": 1}}}


def test_operations_that_waited_past_max_wait_ms_are_refused_not_run(gateway_factory, catalog):
    """--max-wait-ms 300: behind workers held 1.5 s by the lock, what waited is answered
    SERVER_BUSY when its turn comes instead of running, over a WebSocket and over HTTP (503 with
    Retry-After); what was running is answered. Without it, under sustained overload HTTP
    requests waited behind every request before them: the 0.32.0 build answered a probe after
    16 s at twice the searches the 1M catalog sustains, and the wait grew for as long as the
    load lasted."""
    g = gateway_factory("--workers", "2", "--max-wait-ms", "300", "--busy-timeout-ms", "20000")
    with acked(g.ws_url) as ws:
        lock = hold_lock(catalog)
        try:
            ids = [f"w-{i}" for i in range(6)]
            subscribe(ws, ids[0], doc(0))  # this lane's worker, waiting for the lock
            time.sleep(0.2)
            with concurrent.futures.ThreadPoolExecutor(3) as pool:
                # The other worker takes one request; two wait.
                futures = [pool.submit(requests.post, g.http_url, json={"query": doc(10 + i)}, timeout=20) for i in range(3)]
                for i, oid in enumerate(ids[1:], 1):
                    subscribe(ws, oid, doc(i))
                time.sleep(1.3)
                release(lock)
                lock = None
                answers = [f.result() for f in futures]
        finally:
            if lock is not None:
                release(lock)
        fate = outcomes(ws, ids)
    assert fate == {"w-0": "answered", **{i: SERVER_BUSY for i in ids[1:]}}, fate
    assert sorted(r.status_code for r in answers) == [200, 503, 503], [r.text for r in answers]
    for r in answers:
        if r.status_code == 503:
            assert r.headers["Retry-After"] == "1"
            assert r.json()["errors"][0]["extensions"]["code"] == SERVER_BUSY
            assert "waited" in r.json()["errors"][0]["message"]


def post_from(g, source, query, forwarded_for=None, header="X-Forwarded-For"):
    """POST /graphql from a loopback address of our choosing (127.0.0.x): another client; with
    X-Forwarded-For lines (a str: one; a list: several), or lines of another `header`."""
    c = http.client.HTTPConnection(g.host, g.port, timeout=20, source_address=(source, 0))
    c.putrequest("POST", "/graphql")
    body = json.dumps({"query": query}).encode()
    c.putheader("Content-Type", "application/json")
    c.putheader("Content-Length", str(len(body)))
    lines = [] if forwarded_for is None else [forwarded_for] if isinstance(forwarded_for, str) else forwarded_for
    for v in lines:
        c.putheader(header, v)
    c.endheaders(body)
    r = c.getresponse()
    out = (r.status, json.loads(r.read()))
    c.close()
    return out


HEAVY = "{ %s }" % " ".join("v%d: catalogVersion { version }" % i for i in range(1500))


def turn_of_the_other_client(g, catalog, flood_from, other_from):
    """12 heavy requests, then one small one, with one worker behind a held lock; each side's
    (source address, X-Forwarded-For; for the 12, a function of the request's number gives
    each its own). Returns the order in which they were answered."""
    order = []
    lock = hold_lock(catalog)
    try:
        with concurrent.futures.ThreadPoolExecutor(13) as pool:
            def flood(i):
                xff = flood_from[1](i) if callable(flood_from[1]) else flood_from[1]
                status, _ = post_from(g, flood_from[0], HEAVY + " " * i, xff)
                order.append(("flood", status))

            def other():
                status, body = post_from(g, other_from[0], doc(1), other_from[1])
                order.append(("other", status, body))

            futures = [pool.submit(flood, i) for i in range(12)]
            time.sleep(0.5)
            futures.append(pool.submit(other))
            time.sleep(0.5)
            release(lock)
            lock = None
            for f in futures:
                f.result()
    finally:
        if lock is not None:
            release(lock)
    assert all(o[1] == 200 for o in order), order
    assert ("other", 200, {"data": {"v1": {"version": 1}}}) in order
    return [o[0] for o in order]


def test_http_requests_take_turns_by_client_address(gateway_factory, catalog):
    """HTTP requests have no connection to be fair to: each was a lane of its own, so a client
    with many requests waiting held back every other client — WebSockets too — by all of them
    (the 0.32.0 build answered another address's one request after the 12 that came before it).
    Requests from one address now share a lane and take turns with other addresses: with one
    worker behind a held lock, 12 heavy requests from 127.0.0.1 then one from 127.0.0.2, the
    latter is answered second or third."""
    g = gateway_factory("--workers", "1", "--busy-timeout-ms", "20000")
    order = turn_of_the_other_client(g, catalog, ("127.0.0.1", None), ("127.0.0.2", None))
    assert order.index("other") <= 2, order
