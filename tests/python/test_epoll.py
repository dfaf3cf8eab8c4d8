"""The service thread's wait through epoll (the default) and through plain poll() (--no-epoll):
subscribers kept open while short connections come and go — each close frees a descriptor
number that the next accept takes at once, which an epoll set must not mistake for the socket
it watched — and commits pushed to every subscriber meanwhile. Nothing may be missed or late
in either mode; /metrics tells which wait ran."""
import json
import selectors
import socket
import threading
import time

import pytest

from gateway_server import acked, catalog, gateway_factory, recv, send, sqlite3  # noqa: F401 (fixtures)
from test_metrics import scrape, value

QUERY = {"query": '{ product(id: "1") { id name } }'}
ANSWER = {"data": {"product": {"id": "1", "name": "ALEXA Mini"}}}


def short_post(g, server_closes):
    """One POST /graphql on its own connection: the parsed answer. The server closes it
    (`Connection: close`), or the client does once it has the answer, which the server then
    reads as the end of a keep-alive connection it only waited to read from — the close whose
    descriptor number, reused with the same events, an epoll set could take for the old one."""
    body = json.dumps(QUERY).encode()
    with socket.create_connection((g.host, g.port), timeout=10) as s:
        s.sendall(b"POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n%s\r\n%s" % (g.authority.encode(), len(body),
                                                        b"Connection: close\r\n" if server_closes else b"", body))
        data = b""
        while True:
            head, _, payload = data.partition(b"\r\n\r\n")
            if payload and len(payload) >= int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0]):
                break
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    assert head.startswith(b"HTTP/1.1 200"), head
    return json.loads(payload)


@pytest.mark.parametrize("mode", [[], ["--no-epoll"]], ids=["epoll", "poll"])
def test_subscribers_and_short_connections_while_descriptors_are_reused(gateway_factory, catalog, mode):
    g = gateway_factory(*mode)
    subscribers = []
    for i in range(120):
        ws = acked(g.ws_url)
        send(ws, {"id": "v", "type": "subscribe", "payload": {"query": "subscription { catalogVersion { version } }"}})
        assert recv(ws)["payload"]["data"]["catalogVersion"]["version"] == 1
        subscribers.append(ws)

    failures = []

    def churn_http():
        try:
            for k in range(60):
                assert short_post(g, server_closes=k % 2 == 0) == ANSWER
        except Exception as e:  # noqa: BLE001 (reported below)
            failures.append(repr(e))

    def churn_ws():
        try:
            for k in range(15):
                ws = acked(g.ws_url)
                send(ws, {"id": str(k), "type": "subscribe", "payload": QUERY})
                assert recv(ws)["payload"] == ANSWER
                # Read to the end, so that websockets' sync client is not left blocked handing
                # a message over when closing.
                assert recv(ws) == {"id": str(k), "type": "complete"}
                ws.close()
        except Exception as e:  # noqa: BLE001
            failures.append(repr(e))

    threads = [threading.Thread(target=churn_http) for _ in range(4)] + [threading.Thread(target=churn_ws) for _ in range(2)]
    for t in threads:
        t.start()
    # Commits while the connections come and go: every subscriber gets every version, in order.
    for version in range(2, 7):
        sqlite3(catalog, f"INSERT INTO version VALUES ({version}, 10, 20);")
        for ws in subscribers:
            assert recv(ws)["payload"]["data"]["catalogVersion"]["version"] == version
    for t in threads:
        t.join(60)
        assert not t.is_alive()
    assert failures == []

    m = scrape(g)
    epoll, plain = value(m, "service_waits_total", wait="epoll"), value(m, "service_waits_total", wait="poll")
    if mode:
        assert epoll == 0 and plain > 0
    else:
        # Plain waits once a second only (the run takes a few seconds), all the others through epoll.
        assert epoll > 100 * plain, (epoll, plain)
    assert value(m, "service_wait_registrations_restored_total") == 0
    for ws in subscribers:
        ws.close()


@pytest.mark.parametrize("mode", [[], ["--no-epoll"]], ids=["epoll", "poll"])
def test_unparsable_requests_arriving_together_are_each_shut_after_the_answer(gateway_factory, mode):
    """Found in stop 36's review. An unparsable request gets its 501 and then the socket's write
    side is shut if lws_send_pipe_choked says the socket takes more — a poll() of that one
    socket on the service thread. Through the epoll set, that poll reported whichever socket of
    the set was ready first: with the requests of other sockets still unread, the answered
    socket read as choked, was not shut, and its client waited for the server's 5 s timer.
    Sent in the reverse of their accept order, so that one wait reports them in the order lws
    does not serve them in."""
    g = gateway_factory(*mode)
    socks = [socket.create_connection((g.host, g.port), timeout=10) for _ in range(20)]
    try:
        assert short_post(g, server_closes=True) == ANSWER  # every socket accepted meanwhile
        for s in reversed(socks):
            s.sendall(b"BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n")
        sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        got, ended = {s: b"" for s in socks}, set()
        # The shut write side ends each answer at once; the 5 s timer would end it otherwise.
        deadline = time.monotonic() + 3
        while len(ended) < len(socks) and time.monotonic() < deadline:
            for key, _ in sel.select(0.2):
                chunk = key.fileobj.recv(65536)
                if chunk:
                    got[key.fileobj] += chunk
                else:
                    ended.add(key.fileobj)
                    sel.unregister(key.fileobj)
        assert all(got[s].startswith(b"HTTP/1.1 501 ") for s in socks)
        assert len(ended) == len(socks), f"{len(socks) - len(ended)} of {len(socks)} answered sockets left open"
    finally:
        for s in socks:
            s.close()
    assert value(scrape(g), "service_wait_registrations_restored_total") == 0
