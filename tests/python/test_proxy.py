"""Clients behind a reverse proxy, and connections per address (docs/FAULTS.md, "Stop 34:
clients behind a reverse proxy, and connections per address").

--trusted-proxy ADDR[/PREFIX]: when the TCP peer is a trusted proxy, the client is the address
its X-Forwarded-For names, read as nginx's real_ip_recursive reads it (from the right, past
trusted addresses; garbage met on the way keeps the peer). That client keys the HTTP requests'
turn at the workers, --max-connections-per-address and the log's `client=`.

--max-connections-per-address N: an upgrade past N open WebSockets of one client gets 503 with
Retry-After before the upgrade; every way a connection ends gives its place back.

Stop 35: --ipv6-client-prefix N (default 64) counts an IPv6 client, and gives its HTTP requests
their turn, by the first N bits of its address; --trusted-proxy-header forwarded reads the
client from RFC 7239's Forwarded instead of X-Forwarded-For.

The workers are kept busy without timing, as in test_overload.py: another process holds the
catalog's write lock, so every query waits in SQLite's busy handler until it is released."""
import base64
import json
import os
import re
import select
import socket
import struct
import subprocess
import time

from conftest import BINARY
from gateway_server import catalog, gateway_factory  # noqa: F401 (fixtures)
from rawws import CLOSE, TEXT
from test_overload import doc, post_from, turn_of_the_other_client

def test_requests_through_a_trusted_proxy_take_turns_by_the_forwarded_client(gateway_factory, catalog):
    """Behind a reverse proxy every HTTP request came from its address, so all clients shared
    one lane: one client's 12 waiting requests were ahead of everyone else's. With the proxy
    trusted, the client X-Forwarded-For names has a lane of its own: another client's one
    request is answered second or third (0.33.0 has no --trusted-proxy; run without it, it
    answered the other client's request 13th, after all of the first's)."""
    g = gateway_factory("--workers", "1", "--busy-timeout-ms", "20000", "--trusted-proxy", "127.0.0.1")
    order = turn_of_the_other_client(g, catalog, ("127.0.0.1", "198.51.100.1"), ("127.0.0.1", "198.51.100.2"))
    assert order.index("other") <= 2, order


def test_without_the_flag_x_forwarded_for_is_logged_and_ignored(gateway_factory, catalog):
    """The default trusts no proxy: X-Forwarded-For is only logged (forwarded_for=), the client
    (client=, new) is the peer, and the requests of one address share its lane whatever the
    header says — the other request waits behind the 12 (0.33.0 answered it last too, but
    logs no client=)."""
    g = gateway_factory("--workers", "1", "--busy-timeout-ms", "20000", "--log-level", "debug")
    turn_of_the_other_client(g, catalog, ("127.0.0.1", "198.51.100.1"), ("127.0.0.1", "198.51.100.2"))
    g.stop()
    log = g.proc.stderr.read().decode()
    lines = [l for l in log.splitlines() if "event=http_request" in l]
    assert len(lines) == 13, log[-2000:]
    assert all(" peer=127.0.0.1 client=127.0.0.1 forwarded_for=198.51.100." in l for l in lines), lines[:2]
    # Behind the flood, in the order the server finished the answers (each is one write, logged
    # as it completes). Not the order the client's threads got them: 13 Python threads reading
    # answers of 33 KB and 20 bytes under one GIL reorder them (a CI run saw the small one 5th).
    # Answers ready together may still be written in either order, hence 8 and not 12 (in
    # its own lane, as with --trusted-proxy, it is answered second or third).
    other = [i for i, l in enumerate(lines) if "forwarded_for=198.51.100.2 " in l]
    assert len(other) == 1 and other[0] >= 8, lines


def clients_in_log(g):
    """(forwarded_for, client) of each http_request line, in order."""
    g.stop()
    log = g.proc.stderr.read().decode()
    out = []
    for line in log.splitlines():
        if "event=http_request" in line:
            m = re.search(r' peer=(\S+) client=(\S+) forwarded_for=("(?:[^"\\]|\\.)*"|\S+)', line)
            assert m, line
            out.append((m.group(1), m.group(3).strip('"'), m.group(2)))
    return out


def test_the_client_is_the_first_untrusted_address_from_the_right(gateway_factory, catalog):
    """What a client writes into X-Forwarded-For itself sits left of what the proxy adds and is
    never read; trusted hops are passed; an entry that is no address keeps the peer; a peer
    that is not trusted is the client whatever its header says."""
    g = gateway_factory("--trusted-proxy", "127.0.0.1", "--trusted-proxy", "10.0.0.0/8", "--log-level", "debug")
    cases = [
        # (source, X-Forwarded-For lines, client)
        ("127.0.0.1", "1.2.3.4, 127.0.0.1", "1.2.3.4"),
        ("127.0.0.1", "6.6.6.6, 1.2.3.4", "1.2.3.4"),
        ("127.0.0.1", "1.2.3.4, 10.1.2.3, 10.9.9.9", "1.2.3.4"),
        ("127.0.0.1", "garbage", "127.0.0.1"),
        ("127.0.0.1", "1.2.3.4, unknown", "127.0.0.1"),
        ("127.0.0.1", "1.2.3.4,", "127.0.0.1"),
        ("127.0.0.1", "1.2.3.4:5678", "1.2.3.4"),
        ("127.0.0.1", "[2001:DB8::7]:443", "2001:db8::7"),
        ("127.0.0.1", ["6.6.6.6", "1.2.3.4"], "1.2.3.4"),
        ("127.0.0.1", None, "127.0.0.1"),
        ("127.0.0.2", "1.2.3.4", "127.0.0.2"),
    ]
    for source, lines, _ in cases:
        assert post_from(g, source, doc(1), lines) == (200, {"data": {"v1": {"version": 1}}})
    seen = clients_in_log(g)
    assert [(s, c) for s, _, c in seen] == [(s, c) for s, _, c in cases], seen


def upgrade(g, forwarded_for=None, source=None, key=True, header="X-Forwarded-For"):
    """A raw WebSocket handshake from `source` (the server's own loopback address unless
    given), with a line of `header` (X-Forwarded-For unless given): (socket, status, headers,
    body)."""
    source = source or g.host
    s = socket.create_connection((g.host, g.port), timeout=5, source_address=(source, 0))
    k = base64.b64encode(os.urandom(16)).decode()
    request = (f"GET /graphql HTTP/1.1\r\nHost: {g.authority}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               + (f"Sec-WebSocket-Key: {k}\r\n" if key else "")
               + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n"
               + (f"{header}: {forwarded_for}\r\n" if forwarded_for else "") + "\r\n")
    s.sendall(request.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            return s, None, {}, buf
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    headers = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:]}
    status = int(lines[0].split(" ", 2)[1])
    if status != 101:
        n = int(headers.get("content-length", "0"))
        while len(rest) < n:
            chunk = s.recv(4096)
            if not chunk:
                break
            rest += chunk
    return s, status, headers, rest


def masked(opcode, payload):
    key = os.urandom(4)
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def test_the_forwarded_client_is_what_connections_per_address_count(gateway_factory, catalog):
    """Through a trusted proxy, WebSocket upgrades count against the client X-Forwarded-For
    names: a forged entry left of it changes nothing, and garbage counts as the proxy."""
    g = gateway_factory("--trusted-proxy", "127.0.0.1", "--max-connections-per-address", "1")
    opened = []
    try:
        for xff, status in [("1.2.3.4", 101), ("9.9.9.9, 1.2.3.4", 503), ("1.2.3.4:80, 127.0.0.1", 503),
                            ("5.6.7.8", 101), ("garbage", 101), ("5.6.7.8, garbage", 503), (None, 503)]:
            s, got, headers, body = upgrade(g, xff)
            opened.append(s)
            assert got == status, (xff, got, body)
        # Not a trusted peer: its own address, whatever it forwards.
        s, got, _, body = upgrade(g, "1.2.3.4", source="127.0.0.2")
        opened.append(s)
        assert got == 101, body
    finally:
        for s in opened:
            s.close()


class Log:
    """The server's standard error, read as it comes (the fixture reads it only at the end)."""

    def __init__(self, g):
        self.g = g
        self.text = ""

    def wait_for(self, event, count, timeout=10):
        deadline = time.time() + timeout
        fd = self.g.proc.stderr.fileno()
        while self.text.count(f"event={event} ") < count:
            left = deadline - time.time()
            assert left > 0, f"{count} {event} lines not logged in {timeout} s:\n{self.text[-3000:]}"
            r, _, _ = select.select([fd], [], [], min(left, 0.2))
            if r:
                self.text += os.read(fd, 65536).decode()


def open_n(g, n):
    """`n` raw WebSockets from 127.0.0.1, and what the upgrade after them got."""
    conns = []
    for _ in range(n):
        s, status, _, body = upgrade(g)
        assert status == 101, body
        conns.append(s)
    s, status, headers, body = upgrade(g)
    s.close()
    return conns, status, headers, body


def read_close(s):
    """Reads frames until the server's close frame; its code."""
    buf = b""
    while True:
        while len(buf) < 2:
            chunk = s.recv(4096)
            assert chunk, "closed without a close frame"
            buf += chunk
        n = buf[1] & 0x7F
        head = 2 + (2 if n == 126 else 8 if n == 127 else 0)
        while len(buf) < head:
            buf += s.recv(4096)
        if n >= 126:
            n = int.from_bytes(buf[2:head], "big")
        while len(buf) < head + n:
            buf += s.recv(4096)
        opcode, payload, buf = buf[0] & 0x0F, buf[head:head + n], buf[head + n:]
        if opcode == CLOSE:
            return struct.unpack("!H", payload[:2])[0]


def test_connections_per_address_are_refused_before_the_upgrade_and_counted_down_on_every_close(gateway_factory, catalog):
    """--max-connections-per-address 5: the sixth upgrade from 127.0.0.1 gets 503 with
    Retry-After and a GraphQL error, logged once as upgrade_rejected, while another address
    still connects. The five then end five ways — the client's close, a TCP reset, a half
    close, the gateway's close (4400, a message that is not JSON) and lws's own (1007, text
    that is not UTF-8) — and handshakes that fail after the check (no Sec-WebSocket-Key) count
    nothing: five connect again and the sixth is refused again. (0.33.0 has no such flag, and
    takes any number of connections from one address.)"""
    g = gateway_factory("--max-connections-per-address", "5", "--init-timeout", "60", "--log-level", "info")
    log = Log(g)
    conns, status, headers, body = open_n(g, 5)
    assert status == 503, body
    assert headers["retry-after"] == "1"
    error = json.loads(body)["errors"][0]
    assert error["extensions"]["code"] == "TOO_MANY_CONNECTIONS"
    assert "127.0.0.1" in error["message"] and "limit 5 per address" in error["message"], error
    log.wait_for("upgrade_rejected", 1)
    assert 'client=127.0.0.1 path=/graphql status=503 reason="max connections per address"' in log.text, log.text[-2000:]
    s, status, _, body = upgrade(g, source="127.0.0.2")
    assert status == 101, body
    s.close()

    clean, reset, half, bad_json, bad_utf8 = conns
    clean.sendall(masked(CLOSE, struct.pack("!H", 1000)))
    assert read_close(clean) == 1000
    reset.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    reset.close()
    half.shutdown(socket.SHUT_WR)
    bad_json.sendall(masked(TEXT, b"not json"))
    assert read_close(bad_json) == 4400
    bad_utf8.sendall(masked(TEXT, b"\xff\xfe"))
    assert read_close(bad_utf8) == 1007
    for s in (bad_json, bad_utf8):  # the close handshake's reply
        s.sendall(masked(CLOSE, b""))
    for _ in range(2):
        s, status, _, body = upgrade(g, key=False)
        assert status != 101, body
        s.close()
    log.wait_for("connection_closed", 6)  # the five, and 127.0.0.2's
    for s in (clean, half, bad_json, bad_utf8):
        s.close()

    again, status, headers, body = open_n(g, 5)
    assert status == 503, body
    assert json.loads(body)["errors"][0]["extensions"]["code"] == "TOO_MANY_CONNECTIONS"
    log.wait_for("upgrade_rejected", 2)
    assert log.text.count("event=upgrade_rejected ") == 2, log.text[-3000:]
    for s in again:
        s.close()


def test_bad_values_are_refused_at_start(catalog):
    """A range that is no address, a prefix out of range, bits past the prefix (a typo for one
    address likelier than a range), a negative count: exit 2 naming the flag, before serving."""
    for args, says in [(["--trusted-proxy", "proxy.example"], "proxy.example is not an IPv4 or IPv6 address"),
                       (["--trusted-proxy", "10.0.0.0/33"], "0 to 32 for an IPv4 address"),
                       (["--trusted-proxy", "10.0.0.1/8"], "the range starts at 10.0.0.0/8"),
                       (["--trusted-proxy", "[::1]"], "without brackets"),
                       (["--max-connections-per-address", "-1"], "--max-connections-per-address must be between 0 and 10000000 (got -1)"),
                       (["--ipv6-client-prefix", "0"], "--ipv6-client-prefix must be between 1 and 128 (got 0)"),
                       (["--ipv6-client-prefix", "129"], "--ipv6-client-prefix must be between 1 and 128 (got 129)"),
                       (["--trusted-proxy-header", "x-real-ip"], "--trusted-proxy-header takes x-forwarded-for or forwarded (got \"x-real-ip\")"),
                       (["--trusted-proxy-header", "forwarded"], "--trusted-proxy-header forwarded reads the header only from a --trusted-proxy, and none is given")]:
        p = subprocess.run([BINARY, "serve", "--db", catalog, "--port", "0", *args], capture_output=True, timeout=30)
        err = p.stderr.decode()
        assert p.returncode == 2 and says in err and p.stdout == b"", (args, err)


# Stop 35: IPv6 clients by prefix, and the Forwarded header (docs/FAULTS.md).

def upgrades(g, cases, header="X-Forwarded-For"):
    """Each (header value, status expected) as a raw upgrade, kept open; the sockets, and the
    body of the first 503."""
    opened, refusal = [], None
    for value, status in cases:
        s, got, _, body = upgrade(g, value, header=header)
        opened.append(s)
        assert got == status, (value, got, body)
        if got == 503 and refusal is None:
            refusal = json.loads(body)["errors"][0]["message"]
    return opened, refusal


def test_ipv6_clients_are_counted_by_their_64_bit_prefix(gateway_factory, catalog):
    """One IPv6 customer holds a whole /64 and may use any address in it: each address was a
    client of its own, so --max-connections-per-address was no limit over IPv6. Behind a
    trusted proxy on ::1, X-Forwarded-For naming addresses of one /64 now counts them as one
    client (the default --ipv6-client-prefix 64); another /64 is another client, and IPv4 is
    still one address per client. The log's client= names each address. (0.34.0 let the third
    address of the /64 in.) With --ipv6-client-prefix 128 each address is alone again; with
    48, two /64s of one /48 are one client."""
    g = gateway_factory("--host", "::1", "--trusted-proxy", "::1", "--max-connections-per-address", "2",
                        "--log-level", "info")
    log = Log(g)
    opened, refusal = upgrades(g, [("2001:db8:1:2::1", 101), ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 101),
                                   ("2001:db8:1:2::3", 503), ("[2001:DB8:1:2::4]:443", 503),
                                   ("2001:db8:1:3::1", 101), ("2001:db8:1:3::2", 101), ("2001:db8:1:3::3", 503),
                                   ("192.0.2.1", 101), ("192.0.2.1", 101), ("192.0.2.1", 503), ("192.0.2.2", 101),
                                   ("::ffff:192.0.2.2", 101), ("192.0.2.2", 503)])
    try:
        assert refusal == "Too many connections from 2001:db8:1:2::/64 (limit 2 per /64 network); retry later"
        log.wait_for("upgrade_rejected", 5)
        opened_clients = re.findall(r"event=connection_opened .*? client=(\S+)", log.text)
        assert opened_clients[:2] == ["2001:db8:1:2::1", "2001:db8:1:2:aaaa:bbbb:cccc:dddd"], log.text[-3000:]
        assert 'client=2001:db8:1:2::3 path=/graphql status=503 reason="max connections per address"' in log.text
        assert "ipv6_client_prefix=64" in log.text
    finally:
        for s in opened:
            s.close()
    for flags, cases in [(["--ipv6-client-prefix", "128"], [("2001:db8:1:2::1", 101), ("2001:db8:1:2::2", 101),
                                                           ("2001:db8:1:2::3", 101), ("2001:db8:1:2::3", 101),
                                                           ("2001:db8:1:2::3", 503)]),
                         (["--ipv6-client-prefix", "48"], [("2001:db8:1:2::1", 101), ("2001:db8:1:3::1", 101),
                                                          ("2001:db8:1:ffff::1", 503), ("2001:db8:2::1", 101)])]:
        g = gateway_factory("--host", "::1", "--trusted-proxy", "::1", "--max-connections-per-address", "2", *flags)
        opened, _ = upgrades(g, cases)
        for s in opened:
            s.close()
        g.stop()


def test_http_requests_of_one_ipv6_prefix_share_a_turn(gateway_factory, catalog):
    """12 heavy requests from 12 addresses of one /64 were 12 lanes, 12 turns at the workers
    before another client's one request (0.34.0 answered it 13th of 13): they are now one lane,
    and the other /64's request is answered second or third."""
    g = gateway_factory("--host", "::1", "--workers", "1", "--busy-timeout-ms", "20000", "--trusted-proxy", "::1")
    order = turn_of_the_other_client(g, catalog, ("::1", lambda i: f"2001:db8:1:2::{i + 1:x}"), ("::1", "2001:db8:9:9::1"))
    assert order.index("other") <= 2, order


def test_forwarded_names_the_client_with_its_flag(gateway_factory, catalog):
    """--trusted-proxy-header forwarded: the client is read from RFC 7239's Forwarded (for=),
    from the right past trusted hops, quoted IPv6 with a port taken; an obfuscated or unknown
    node, or a header that does not parse, makes the peer the client; X-Forwarded-For is then
    not read (a proxy writing Forwarded passes it on as the client wrote it). It keys
    --max-connections-per-address and client= in the log. Of several Forwarded lines lws 4.1
    hands out the first only. (0.34.0 has no such flag.)"""
    g = gateway_factory("--trusted-proxy", "127.0.0.1", "--trusted-proxy-header", "forwarded",
                        "--max-connections-per-address", "1", "--log-level", "debug")
    log = Log(g)
    opened, refusal = upgrades(g, [
        ("for=192.0.2.1", 101),
        ('for=198.51.100.9, For="192.0.2.1:4711";proto=https', 503),
        ('for="[2001:db8:cafe::17]:4711"', 101),
        ('for="[2001:db8:cafe::18]"', 503),  # the same /64
        ("for=_hidden", 101),                 # the peer, 127.0.0.1
        ("for=unknown", 503),
        ('for="192.0.2.2', 503),              # an unbalanced quote: the peer
        ("for=192.0.2.3;for=192.0.2.4", 503),  # two for in one element: the peer
        ("for=192.0.2.5, proto=https", 503),   # the last hop names nobody: the peer
        ("for=192.0.2.6", 101),
    ], header="Forwarded")
    try:
        assert refusal == "Too many connections from 192.0.2.1 (limit 1 per address); retry later"
        s, got, _, body = upgrade(g, "192.0.2.7")  # X-Forwarded-For is not read: the peer
        opened.append(s)
        assert got == 503, body
        log.wait_for("upgrade_rejected", 7)
        assert re.findall(r"event=connection_opened .*? client=(\S+)", log.text) == [
            "192.0.2.1", "2001:db8:cafe::17", "127.0.0.1", "192.0.2.6"], log.text[-3000:]
        assert "trusted_proxy_header=forwarded" in log.text
    finally:
        for s in opened:
            s.close()
    for lines in ["for=203.0.113.1", ["for=203.0.113.2", "for=203.0.113.3"], 'for="_x", for=10.0.0.1']:
        assert post_from(g, "127.0.0.1", doc(1), lines, header="Forwarded") == (200, {"data": {"v1": {"version": 1}}})
    assert post_from(g, "127.0.0.1", doc(1), "203.0.113.4") == (200, {"data": {"v1": {"version": 1}}})
    assert [c for _, _, c in clients_in_log(g)] == ["203.0.113.1", "203.0.113.2", "10.0.0.1", "127.0.0.1"]
