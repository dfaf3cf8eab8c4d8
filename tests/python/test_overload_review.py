"""Stop 33's review of its own overload change (docs/FAULTS.md, "Found in stop 33's review of
its own change"): what the new bounds count must be what still waits for a worker."""
import concurrent.futures
import json
import socket
import time

from gateway_server import catalog, gateway_factory  # noqa: F401 (fixtures)
from test_overload import SERVER_BUSY, doc, hold_lock, post_from, release


def raw_post(g, query, source):
    s = socket.create_connection((g.host, g.port), timeout=5, source_address=(source, 0))
    body = json.dumps({"query": query}).encode()
    s.sendall(b"POST /graphql HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % (g.host.encode(), g.port, len(body)) + body)
    return s


def test_http_requests_whose_client_left_stop_counting_as_waiting(gateway_factory, catalog):
    """An HTTP request whose client closed the connection while it waited for a worker stayed
    queued (its address's lane is shared, so the lane was no longer dropped on close) and kept
    counting against --max-waiting-operations and --max-waiting-bytes: gone clients' requests
    got everyone else's HTTP requests 503 SERVER_BUSY until a worker reached them. The 0.33.0
    build refused the next client's request with nothing of a live client waiting. Now a
    request that goes away leaves the queue."""
    g = gateway_factory("--workers", "2", "--max-waiting-operations", "4", "--busy-timeout-ms", "20000")
    lock = hold_lock(catalog)
    try:
        # A client that stays has both workers (waiting for the lock); 4 requests of another
        # wait behind them, then their client leaves.
        staying = [raw_post(g, doc(i), "127.0.0.3") for i in range(2)]
        time.sleep(0.3)
        leaving = [raw_post(g, doc(10 + i), "127.0.0.1") for i in range(4)]
        time.sleep(0.3)
        for s in leaving:
            s.close()
        time.sleep(0.3)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            f = pool.submit(post_from, g, "127.0.0.2", doc(50))
            time.sleep(0.5)
            release(lock)
            lock = None
            status, body = f.result()
    finally:
        if lock is not None:
            release(lock)
        for s in staying:
            s.close()
    assert (status, body) == (200, {"data": {"v50": {"version": 1}}}), (status, body)


def test_waiting_behind_the_connections_own_operations_is_not_waiting_for_a_worker(gateway_factory, catalog):
    """--max-workers-per-connection 1 with 2 workers and --max-wait-ms 300: a connection's
    operations queued behind its own running one (the lane's limit, not the server's load) were
    answered SERVER_BUSY ("the server is busy ... waited for a worker") once the running one
    took longer than 300 ms, while the other worker sat idle the whole time: the 0.33.0 build
    refused both. The wait that counts is the time an operation could have run and no worker
    took it."""
    g = gateway_factory("--workers", "2", "--max-workers-per-connection", "1", "--max-wait-ms", "300",
                        "--busy-timeout-ms", "20000")
    from gateway_server import acked
    from test_overload import outcomes, subscribe
    with acked(g.ws_url) as ws:
        lock = hold_lock(catalog)
        try:
            subscribe(ws, "first", doc(0))  # runs, waiting for the lock, on one worker
            time.sleep(0.2)
            subscribe(ws, "second", doc(1))
            subscribe(ws, "third", doc(2))
            time.sleep(0.6)
        finally:
            release(lock)
        fate = outcomes(ws, ["first", "second", "third"])
    assert fate == {"first": "answered", "second": "answered", "third": "answered"}, fate
