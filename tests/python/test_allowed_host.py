"""--allowed-host: the Host header values the gateway answers. A web page whose name a DNS
rebinding points at the gateway's address is read by the browser as its own, but its requests
name that page's host: refused with 421, over HTTP and before a WebSocket upgrade."""
import base64
import json
import os
import socket
import subprocess

from gateway_server import BINARY, acked, catalog, gateway, gateway_factory, recv, send  # noqa: F401 (fixtures)

QUERY = "{ catalogVersion { version } }"
BODY = json.dumps({"query": QUERY}).encode()


def exchange(g, request):
    """Everything the server sends back to `request` until it closes: (status, headers, body)."""
    with socket.create_connection(("127.0.0.1", g.port), timeout=5) as s:
        s.sendall(request)
        out = b""
        while b"\r\n\r\n" not in out or not out.split(b"\r\n\r\n", 1)[0].startswith(b"HTTP/1.1 101"):
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v for k, v in (l.split(": ", 1) for l in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def post(g, host):
    h = b"" if host is None else b"Host: %s\r\n" % host.encode()
    version = b"HTTP/1.0" if host is None else b"HTTP/1.1"
    return exchange(g, b"POST /graphql %s\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n"
                       b"Connection: close\r\n\r\n%s" % (version, h, len(BODY), BODY))


def get(g, path, host, method="GET"):
    return exchange(g, b"%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (method.encode(), path.encode(), host.encode()))


def preflight(g, host):
    return exchange(g, b"OPTIONS /graphql HTTP/1.1\r\nHost: %s\r\nOrigin: http://%s\r\nAccess-Control-Request-Method: POST\r\n"
                       b"Connection: close\r\n\r\n" % (host.encode(), host.encode()))


def handshake(g, host):
    key = base64.b64encode(os.urandom(16))
    return exchange(g, b"GET /graphql HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       b"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n"
                       % (host.encode(), key))


def assert_misdirected(answer, host):
    status, headers, body = answer
    assert status == 421, answer
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert json.loads(body) == {"errors": [{"message": f'Host "{host}" is not served here (--allowed-host)',
                                            "extensions": {"code": "MISDIRECTED_REQUEST"}}]}


def assert_served(answer):
    status, _, body = answer
    assert status == 200, answer
    assert json.loads(body) == {"data": {"catalogVersion": {"version": 1}}}


def test_a_gateway_on_loopback_refuses_a_rebound_name(gateway_factory):
    g = gateway_factory("--log-level", "info")
    host = f"evil.example:{g.port}"
    assert_misdirected(post(g, host), host)
    assert_misdirected(get(g, "/healthz", host), host)
    assert_misdirected(get(g, "/graphql?query=%7B__typename%7D", "EVIL.example"), "EVIL.example")
    assert_misdirected(preflight(g, host), host)
    assert_misdirected(handshake(g, host), host)
    # Names that only start like loopback ones are anybody's.
    for name in ["localhost.evil.example", "127.0.0.1.evil.example", f"127.0.0.1.nip.io:{g.port}"]:
        assert_misdirected(post(g, name), name)
    # The server stays up for everyone else.
    assert_served(post(g, f"127.0.0.1:{g.port}"))
    with acked(g.ws_url) as ws:
        send(ws, {"id": "1", "type": "subscribe", "payload": {"query": QUERY}})
        assert recv(ws)["payload"] == {"data": {"catalogVersion": {"version": 1}}}
    assert g.stop() == 0
    log = g.proc.stderr.read().decode()
    for event in ["http_rejected", "upgrade_rejected"]:
        lines = [l for l in log.splitlines() if f"event={event} " in l and f'reason="allowed-host {host}"' in l]
        assert lines and all("status=421" in l for l in lines), (event, log)


def test_a_gateway_on_loopback_serves_loopback_names_and_requests_without_host(gateway):
    g = gateway
    for host in ["localhost", f"localhost:{g.port}", "LocalHost.", f"app.localhost:{g.port}",
                 "127.0.0.1", f"127.0.0.1:{g.port}", "127.1.2.3:80", "[::1]", f"[::1]:{g.port}"]:
        assert_served(post(g, host))
        status, _, body = get(g, "/healthz", host)
        assert (status, json.loads(body)) == (200, {"status": "ok", "version": 1}), host
    assert_served(post(g, None))  # HTTP/1.0 without Host: not a browser
    status, headers, _ = handshake(g, f"localhost:{g.port}")
    assert status == 101 and headers["sec-websocket-protocol"] == "graphql-transport-ws"


def test_a_list_names_exactly_the_hosts_served(gateway_factory):
    g = gateway_factory("--allowed-host", "app.example", "--allowed-host", ".corp.example")
    for host in ["app.example:8080", "APP.EXAMPLE", "app.example.", "corp.example", "api.corp.example:443"]:
        assert_served(post(g, host))
    # Nothing implicit: not even loopback names on a loopback address.
    for host in ["localhost", f"127.0.0.1:{g.port}", "[::1]", "sub.app.example", "badcorp.example", "app.example.evil"]:
        assert_misdirected(post(g, host), host)
    assert handshake(g, "app.example:8080")[0] == 101
    assert_misdirected(handshake(g, "localhost"), "localhost")
    assert_served(post(g, None))


def test_star_and_a_non_loopback_address_serve_any_host(gateway_factory):
    for args in (["--allowed-host", "*"], ["--host", "0.0.0.0"]):
        g = gateway_factory(*args)
        for host in ["evil.example", f"evil.example:{g.port}", "localhost"]:
            assert_served(post(g, host))
        assert handshake(g, "evil.example")[0] == 101
        assert g.stop() == 0


def test_a_bad_allowed_host_is_refused_at_start(catalog):
    for bad, says in [("", "the name is empty"),
                      ("http://app.example", 'a name has no scheme or path ("/")'),
                      ("app.example/", 'a name has no scheme or path ("/")'),
                      ("app example", "a name has no spaces"),
                      ("app.example:8080", "give it without a port"),
                      ("[::1]:4000", "give it without a port"),
                      ("::1", "an IPv6 address goes in brackets"),
                      ("*.example.com", "for a domain and its subdomains give .example.com")]:
        p = subprocess.run([BINARY, "serve", "--db", catalog, "--port", "0", "--allowed-host", bad],
                           capture_output=True, timeout=30)
        err = p.stderr.decode()
        assert p.returncode == 2, (bad, p.returncode, err)
        assert "--allowed-host takes a name as the Host header carries it, without the port" in err, (bad, err)
        assert says in err and f'(got "{bad}")' in err, (bad, err)
        assert p.stdout == b"", (bad, p.stdout)
