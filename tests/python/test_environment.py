"""What the machine and the deployment do to a running gateway (stop 29's audits): a log reader
that stops reading, a writer killed mid-transaction, damaged pages, a symlinked catalog path, an
open-files limit too low to serve; and what a reverse proxy and browsers need (idle keep-alive
longer than a proxy's pool, bodies read before an early answer, Upgrade: h2c, CORS)."""
import json
import os
import resource
import select
import shutil
import signal
import socket
import sqlite3 as sqlite
import subprocess
import time

import pytest
import requests

from conftest import BINARY
from gateway_server import READY, Gateway, acked, catalog, gateway, gateway_factory, make_catalog, recv, send, sqlite3  # noqa: F401 (fixtures)

VERSION_QUERY = "{ catalogVersion { version } }"


def post(g, query, **kw):
    return requests.post(g.http_url, json={"query": query}, timeout=10, **kw)


def raw_request(port, data, timeout=10):
    """Sends bytes on a fresh socket; returns (the socket, what came back until the answer's
    Content-Length was read)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    return s, read_response(s)


def read_response(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return buf
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    length = next((int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


# MARK: Logging


def test_a_log_reader_that_stops_reading_does_not_stop_the_server(catalog):
    """Each log line was a blocking write(2) from the thread that logged it, the service thread
    included: once a pipe nobody read was full the whole server stopped, SIGTERM included. Lines
    now wait for a log thread (up to 1 MiB), are dropped past that, and the count is logged once
    standard error is read again."""
    r, w = os.pipe()
    proc = subprocess.Popen([BINARY, "serve", "--db", catalog, "--port", "0", "--log-level", "debug"],
                            stdout=subprocess.PIPE, stderr=w)
    os.close(w)
    try:
        line = proc.stdout.readline().decode().strip()
        port = int(READY.match(line).group("port"))
        url = f"http://127.0.0.1:{port}/graphql"
        # Far more than the pipe's 64 KiB of debug lines (two or three lines per request).
        with requests.Session() as s:
            for i in range(1500):
                q = f'{{ product(id: "1") {{ name }} catalogVersion {{ version }} }} # {i}'
                assert s.post(url, json={"query": q}, timeout=5).status_code == 200, i
        pending = fcntl_bytes(r)
        assert pending >= 60000, pending  # the pipe is full: nobody has read it
        # The log lines past the sink's bound were dropped and counted; once standard error is
        # read again, the count is written.
        with requests.Session() as s:
            for i in range(6000):
                assert s.post(url, json={"query": VERSION_QUERY}, timeout=5).status_code == 200
        text = drain(r, until=b"event=log_lines_dropped", timeout=10)
        assert b"event=log_lines_dropped count=" in text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(r)


def fcntl_bytes(fd):
    import fcntl
    import termios
    import array
    buf = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return buf[0]


def drain(fd, until, timeout):
    text = b""
    deadline = time.time() + timeout
    while time.time() < deadline and until not in text:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            text += chunk
    return text


# MARK: The catalog file


def kill_writer_mid_transaction(db):
    """A writer that dies inside a transaction whose pages already went to the file (a small
    page cache spills them), leaving a hot journal: as an OOM-killed editor would."""
    code = f"""
import os, signal, sqlite3
c = sqlite3.connect({db!r}, isolation_level=None)
c.execute("PRAGMA cache_size = 1")
c.execute("BEGIN")
c.execute("UPDATE Product_Catalog SET Product = 'half written ' || Product")
c.execute("INSERT INTO hierarchy SELECT id + 1000, menu_title, menu_icon, level, parent FROM hierarchy")
for i in range(400):
    c.execute("INSERT INTO Product_Catalog (Product, Manufacturer, cat, description) VALUES (?, 'ARRI', 1, ?)", ('spill %d' % i, 'x' * 2000))
os.kill(os.getpid(), signal.SIGKILL)
"""
    subprocess.run(["python3", "-c", code])
    assert os.path.getsize(f"{db}-journal") > 0, "no hot journal was left"


def test_a_hot_journal_left_by_a_killed_writer_is_rolled_back(gateway_factory, catalog):
    """The gateway reads through read-only connections, and SQLite leaves a hot journal to a
    connection that can write: every query failed with "attempt to write a readonly database"
    until some other program opened the file. Now the query rolls it back by opening the file
    read-write once, and runs again; with --read-only the error says what happened."""
    g = gateway_factory()
    assert post(g, '{ product(id: "1") { name } }').json() == {"data": {"product": {"name": "ALEXA Mini"}}}
    kill_writer_mid_transaction(catalog)
    r = post(g, '{ product(id: "1") { name } catalogVersion { version } }')
    assert r.json() == {"data": {"product": {"name": "ALEXA Mini"}, "catalogVersion": {"version": 1}}}, r.text
    assert not os.path.exists(f"{catalog}-journal") or os.path.getsize(f"{catalog}-journal") == 0
    with sqlite.connect(catalog) as c:
        assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert c.execute("SELECT count(*) FROM Product_Catalog").fetchone() == (1,)


def test_a_hot_journal_found_at_start_is_rolled_back_and_said(catalog):
    """At start the prepare's connection rolls a hot journal back, as SQLite does for any
    connection that can write, but nothing said so: a writer's lost transaction went unlogged
    when the gateway (re)started after it. It is logged as the query path logs it."""
    kill_writer_mid_transaction(catalog)
    g = Gateway(catalog)
    try:
        assert post(g, '{ product(id: "1") { name } }').json() == {"data": {"product": {"name": "ALEXA Mini"}}}
        assert not os.path.exists(f"{catalog}-journal") or os.path.getsize(f"{catalog}-journal") == 0
    finally:
        g.stop()
    log = g.proc.stderr.read().decode()
    assert "event=catalog_hot_journal_rolled_back" in log, log


def test_a_hot_journal_under_read_only_is_explained(gateway_factory, catalog):
    g = gateway_factory("--read-only")
    kill_writer_mid_transaction(catalog)
    r = post(g, '{ product(id: "1") { name } }')
    message = r.json()["errors"][0]["message"]
    assert "hot journal" in message and "read-write" in message, message
    assert os.path.getsize(f"{catalog}-journal") > 0  # --read-only never writes


def version_table_page(db):
    with sqlite.connect(db) as c:
        root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'version'").fetchone()[0]
        size = c.execute("PRAGMA page_size").fetchone()[0]
    return (root - 1) * size, size


def test_the_watcher_recovers_only_once_it_reads_the_version_again(catalog):
    """A commit whose version the watcher could not read (a damaged page) was taken as seen: on
    its next look the data version had not moved, so it read nothing, logged
    catalog_watch_recovered and /healthz said 200 with the old version. It now reads again
    until it succeeds. Errors of the catalog itself are logged at warn."""
    g = Gateway(catalog, "--log-level", "info")
    try:
        health = requests.get(g.base + "/healthz", timeout=5)
        assert health.json() == {"status": "ok", "version": 1}
        offset, size = version_table_page(catalog)
        with open(catalog, "r+b") as f:
            f.seek(offset)
            good = f.read(size)
        with open(catalog, "r+b") as f:
            f.seek(offset)
            f.write(b"\xff" * 64)  # not a b-tree page any more
        sqlite3(catalog, "UPDATE Product_Catalog SET Product = 'Renamed' WHERE keyid = 1;")
        deadline = time.time() + 5
        while requests.get(g.base + "/healthz", timeout=5).status_code != 503 and time.time() < deadline:
            time.sleep(0.05)
        for _ in range(5):
            r = requests.get(g.base + "/healthz", timeout=5)
            assert r.status_code == 503, r.text  # it used to turn 200 again 2 ms later
            time.sleep(0.1)
        r = post(g, VERSION_QUERY)
        assert r.json()["errors"][0]["extensions"]["code"] == "DATABASE_ERROR", r.text
        with open(catalog, "r+b") as f:
            f.seek(offset)
            f.write(good)
        # (A commit, as a repair would make: readers drop their cached pages.)
        sqlite3(catalog, "UPDATE Product_Catalog SET Product = 'Repaired' WHERE keyid = 1;")
        deadline = time.time() + 5
        while requests.get(g.base + "/healthz", timeout=5).status_code != 200 and time.time() < deadline:
            time.sleep(0.05)
        assert requests.get(g.base + "/healthz", timeout=5).json() == {"status": "ok", "version": 1}
    finally:
        g.stop()
    log = g.proc.stderr.read().decode()
    assert "event=catalog_watch_failed" in log and "event=catalog_watch_recovered" in log, log
    assert any("level=warn" in l and "event=operation_error" in l and "malformed" in l for l in log.splitlines()), log


def test_a_symlinked_wal_catalog_renamed_over_is_refused_like_the_path_itself(catalog, tmp_path):
    """SQLite names the WAL after the file a symlink leads to: the check for the old file's
    pages in it looked beside the link, found nothing, and the gateway served the old file's
    -wal with the new file (version 9 of the old beside a product of the new)."""
    sqlite3(catalog, "PRAGMA journal_mode = WAL;")
    link = str(tmp_path / "link.sqlite")
    os.symlink(catalog, link)
    g = Gateway(link, "--log-level", "info")
    try:
        with acked(g.ws_url):
            sqlite3(catalog, "UPDATE Product_Catalog SET Product = 'Old name' WHERE keyid = 1; INSERT INTO version VALUES (5, 12, 22);")
            deadline = time.time() + 5
            while post(g, VERSION_QUERY).json()["data"]["catalogVersion"]["version"] != 5 and time.time() < deadline:
                time.sleep(0.05)
            assert os.path.getsize(f"{catalog}-wal") > 0
            d = tmp_path / "new"
            d.mkdir()
            new = make_catalog(d)
            sqlite3(new, "PRAGMA journal_mode = WAL; UPDATE Product_Catalog SET Product = 'NEW FILE' WHERE keyid = 1; INSERT INTO version VALUES (100, 12, 22);")
            os.rename(new, catalog)
            time.sleep(1.5)
            r = post(g, '{ product(id: "1") { name } catalogVersion { version } }')
            assert r.json() == {"data": {"product": {"name": "Old name"}, "catalogVersion": {"version": 5}}}, r.text
    finally:
        g.stop()
    log = g.proc.stderr.read().decode()
    assert "event=catalog_reopen_failed" in log and f"{catalog}-wal holds" in log, log


def test_an_open_files_limit_too_low_to_serve_is_refused_at_start(catalog):
    """With no descriptor left for a client, lws failed every accept in a loop at 100% CPU while
    every client hung; lower still it opened no listening socket and printed port 0 as ready."""
    def low():
        resource.setrlimit(resource.RLIMIT_NOFILE, (20, 20))
    p = subprocess.run([BINARY, "serve", "--db", catalog, "--port", "0"], preexec_fn=low,
                       capture_output=True, timeout=30)
    assert p.returncode == 2, p
    assert b"open-files limit is 20" in p.stderr and b"ulimit -n" in p.stderr, p.stderr
    assert b"listening" not in p.stdout


def test_a_prepared_catalog_this_user_cannot_write_is_served_without_a_warning(catalog):
    """A prepared file the server may only read was reported `catalog_not_prepared` ("slower
    without cg_ indexes; catalogChanges uses the version-row rule"), which was untrue."""
    if os.getuid() != 0:
        pytest.skip("needs root to serve as another user")
    import shutil
    import tempfile
    d = tempfile.mkdtemp(prefix="cg-nobody-")
    try:
        os.chmod(d, 0o755)
        db = os.path.join(d, "catalog.sqlite")
        shutil.copy(catalog, db)
        subprocess.run([BINARY, "prepare", "--db", db], check=True, capture_output=True)
        os.chmod(db, 0o644)

        def nobody():
            os.setgid(65534)
            os.setuid(65534)
        g = Gateway(db, "--log-level", "info", preexec_fn=nobody)
        try:
            r = post(g, '{ search(text: "alexa") { nodes { name } } }')
            assert r.json() == {"data": {"search": {"nodes": [{"name": "ALEXA Mini"}]}}}, r.text
        finally:
            g.stop()
        log = g.proc.stderr.read().decode()
        assert "catalog_not_prepared" not in log, log
    finally:
        shutil.rmtree(d)


# MARK: Behind a proxy, for browsers


def test_idle_keep_alive_lasts_the_http_idle_timeout_and_says_so(gateway_factory):
    """libwebsockets closed an idle HTTP/1.1 connection after 5 s without saying so, while
    nginx keeps upstream connections 60 s: a POST it sent as the gateway closed one got 502."""
    g = gateway_factory("--http-idle-timeout", "2")
    body = json.dumps({"query": VERSION_QUERY}).encode()
    req = (f"POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    s, first = raw_request(g.port, req)
    assert first.startswith(b"HTTP/1.1 200") and b"keep-alive: timeout=2\r\n" in first.lower(), first
    assert b"\r\ndate: " in first.lower()
    time.sleep(1.2)
    s.sendall(req)
    assert read_response(s).startswith(b"HTTP/1.1 200")  # still open after 1.2 s idle
    started = time.time()
    s.settimeout(10)
    assert s.recv(1) == b""  # then closed, about 2 s after the last answer
    assert 1.5 < time.time() - started < 5
    s.close()
    r = post(gateway_factory(), VERSION_QUERY)
    assert r.headers["keep-alive"] == "timeout=75"


def test_a_body_far_over_the_limit_is_read_before_its_413(gateway_factory):
    """A body over 8 MiB got its 413 while it was still arriving, and the connection closed
    without reading it: a proxy still sending (nginx) got a reset and answered 502. The body is
    now read and dropped first, and the connection stays usable."""
    g = gateway_factory()
    body = b" " * (20 << 20)
    s = socket.create_connection(("127.0.0.1", g.port), timeout=20)
    s.sendall(b"POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              + f"Content-Length: {len(body)}\r\n\r\n".encode())
    s.sendall(body)  # a reset would fail this (or the read below)
    answer = read_response(s)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    q = json.dumps({"query": VERSION_QUERY}).encode()
    s.sendall(b"POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              + f"Content-Length: {len(q)}\r\n\r\n".encode() + q)
    assert read_response(s).startswith(b"HTTP/1.1 200")
    s.close()


def test_an_h2c_upgrade_is_ignored_and_the_request_served(gateway):
    """`Upgrade: h2c` (curl --http2, Java's HttpClient, nginx passing $http_upgrade) got 400
    "Only WebSocket upgrades are supported"; RFC 9110 7.8 lets a server ignore it."""
    h2 = {"Connection": "Upgrade, HTTP2-Settings", "Upgrade": "h2c", "HTTP2-Settings": "AAMAAABkAARAAAAAAAIAAAAA"}
    r = requests.get(gateway.http_url, params={"query": VERSION_QUERY}, headers=h2, timeout=5)
    assert r.status_code == 200 and r.json() == {"data": {"catalogVersion": {"version": 1}}}
    r = requests.post(gateway.http_url, json={"query": VERSION_QUERY}, headers=h2, timeout=5)
    assert r.status_code == 200 and r.json() == {"data": {"catalogVersion": {"version": 1}}}


def test_a_websocket_handshake_stripped_by_a_proxy_is_told_so(gateway):
    r = requests.get(gateway.http_url, headers={"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"}, timeout=5)
    assert r.status_code == 426 and r.headers["upgrade"] == "websocket"
    assert "proxy" in r.json()["errors"][0]["message"]


def test_a_charset_other_than_utf8_is_415(gateway):
    r = requests.post(gateway.http_url, data=json.dumps({"query": VERSION_QUERY}).encode("latin-1"),
                      headers={"Content-Type": "application/json; charset=iso-8859-1"}, timeout=5)
    assert r.status_code == 415 and "charset iso-8859-1" in r.json()["errors"][0]["message"]
    r = requests.post(gateway.http_url, data=json.dumps({"query": VERSION_QUERY}),
                      headers={"Content-Type": "application/json; charset=UTF-8"}, timeout=5)
    assert r.status_code == 200


def test_preflights_allow_the_headers_asked_for(gateway):
    """A fixed list refused every client adding its own headers (Apollo's
    apollographql-client-name, traceparent, sentry-trace)."""
    ask = {"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}
    r = requests.options(gateway.http_url, headers={**ask, "Access-Control-Request-Headers": "content-type,apollographql-client-name,traceparent,x.trace"}, timeout=5)
    assert r.status_code == 200
    assert r.headers["access-control-allow-headers"] == "content-type, apollographql-client-name, traceparent, x.trace"
    assert "access-control-request-headers" in r.headers["vary"].lower()
    r = requests.options(gateway.http_url, headers={**ask, "Access-Control-Request-Headers": "content-type, x-a:1"}, timeout=5)
    assert "x-a" not in r.headers["access-control-allow-headers"]  # not a list of names: the default list
    assert r.headers["access-control-allow-origin"] == "*"
    r = requests.options(gateway.http_url, headers=ask, timeout=5)
    assert "authorization" in r.headers["access-control-allow-headers"]
    r = requests.get(gateway.http_url, params={"query": VERSION_QUERY}, headers={"Origin": "https://app.example"}, timeout=5)
    assert r.headers["access-control-allow-origin"] == "*" and r.headers["access-control-expose-headers"] == "etag"


def test_cors_origins_name_the_allowed_origin_and_refuse_others(gateway_factory):
    g = gateway_factory("--cors-origin", "https://app.example:443", "--cors-origin", "http://localhost:3000")
    r = requests.get(g.http_url, params={"query": VERSION_QUERY}, headers={"Origin": "https://app.example"}, timeout=5)
    assert r.headers["access-control-allow-origin"] == "https://app.example"
    assert r.headers["access-control-allow-credentials"] == "true"
    assert "origin" in r.headers["vary"].lower()
    r = requests.post(g.http_url, json={"query": VERSION_QUERY}, headers={"Origin": "https://evil.example"}, timeout=5)
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    from websockets.sync.client import connect
    from websockets.exceptions import InvalidStatus
    with pytest.raises(InvalidStatus) as refused:
        connect(g.ws_url, subprotocols=["graphql-transport-ws"], origin="https://evil.example")
    assert refused.value.response.status_code == 403
    with acked(g.ws_url, origin="http://localhost:3000") as ws:
        send(ws, {"id": "1", "type": "subscribe", "payload": {"query": VERSION_QUERY}})
        assert recv(ws)["payload"] == {"data": {"catalogVersion": {"version": 1}}}
    with acked(g.ws_url) as ws:  # no Origin: not a browser
        send(ws, {"id": "1", "type": "subscribe", "payload": {"query": VERSION_QUERY}})
        assert recv(ws)["payload"] == {"data": {"catalogVersion": {"version": 1}}}


def test_a_long_allowed_origin_is_echoed_in_full(gateway_factory):
    """The header buffer was sized from the answer's own headers plus 2 KiB; the Date, CORS
    and keep-alive headers added after were not counted, so an allowed origin of a few KiB made
    every answer to it fail to fit, and the connection closed without one."""
    origin = "https://" + "a" * 3000 + ".example"
    g = gateway_factory("--cors-origin", origin)
    r = requests.get(g.http_url, params={"query": VERSION_QUERY}, headers={"Origin": origin}, timeout=5)
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == origin
    assert r.json() == {"data": {"catalogVersion": {"version": 1}}}


def test_a_cors_origin_that_is_not_an_origin_is_refused(catalog):
    for bad in ["*", "app.example", "https://app.example/path", "ftp://x"]:
        p = subprocess.run([BINARY, "serve", "--db", catalog, "--port", "0", "--cors-origin", bad], capture_output=True, timeout=30)
        assert p.returncode != 0 and b"--cors-origin takes an origin" in p.stderr, (bad, p.stderr)


def test_a_first_serve_without_db_still_stops_gracefully(tmp_path):
    """The log thread started with the first log line; on the path that creates the demo
    catalog that came before serve blocked its signals, so SIGTERM went to the log thread and
    killed the process (-15) instead of the graceful stop."""
    proc = subprocess.Popen([os.path.abspath(BINARY), "serve", "--port", "0"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert READY.match(proc.stdout.readline().decode().strip())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        assert b"event=stopped" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_body_declared_past_the_drain_bound_is_answered_at_once(gateway_factory):
    """Bodies are read before an early answer only up to 256 MiB: a Content-Length of 2^62 from
    a fast sender was read for the whole body timeout (12 GB in 10 s)."""
    g = gateway_factory()
    s = socket.create_connection(("127.0.0.1", g.port), timeout=10)
    started = time.time()
    s.sendall(b"POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4611686018427387904\r\n\r\n" + b" " * 65536)
    answer = read_response(s)
    assert answer.startswith(b"HTTP/1.1 413") and b"connection: close" in answer.lower(), answer[:300]
    assert time.time() - started < 3
    s.close()


def test_a_client_downloading_a_large_answer_is_not_reaped_by_the_keep_alive(gateway_factory, catalog):
    """The keep-alive's ping waits behind the bytes of an answer still downloading, so a client
    on a slow link could not answer it in time: a graphql-ws client on 1 MB/s was reaped 22 s
    into a 22 MB change set, again after each resubscription. A socket still taking bytes
    counts as alive."""
    sqlite3(catalog, "WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < 100) "
                     "INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder, description) "
                     "SELECT i, i, 'P' || i, 'ARRI', 1, i, hex(randomblob(30000)) FROM n;")
    g = gateway_factory("--keepalive", "1", "--keepalive-timeout", "1", "--max-execution-ms", "0")
    from rawws import RawWS
    ws = RawWS("127.0.0.1", g.port)
    ws.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    ws.text(json.dumps({"type": "connection_init"}))
    query = "{ products(first: 100) { nodes { id description } } }"
    ws.text(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": query}}))
    # About 6 MB at about 1 MB/s: six times the keep-alive's interval plus its timeout.
    received = b""
    started = time.time()
    ws.sock.settimeout(10)
    while b'"type":"complete"' not in received:
        chunk = ws.sock.recv(16384)
        assert chunk, f"closed after {len(received)} bytes and {time.time() - started:.1f} s"
        received += chunk
        time.sleep(len(chunk) / 1_000_000)
    assert len(received) > 5_000_000 and time.time() - started > 4
    ws.sock.close()


def test_a_rolled_back_hot_journal_is_logged(gateway_factory, catalog):
    g = gateway_factory()
    kill_writer_mid_transaction(catalog)
    assert post(g, VERSION_QUERY).json() == {"data": {"catalogVersion": {"version": 1}}}
    g.stop()
    log = g.proc.stderr.read().decode()
    assert "level=warn event=catalog_hot_journal_rolled_back" in log, log


def test_an_http_1_0_keep_alive_is_acknowledged(gateway):
    s, answer = raw_request(gateway.port, b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    assert answer.startswith(b"HTTP/1.0 200") and b"\r\nconnection: keep-alive\r\n" in answer.lower(), answer
    s.sendall(b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    assert read_response(s).startswith(b"HTTP/1.0 200")
    s.close()


def test_persisted_queries_and_batches_get_the_errors_clients_know(gateway):
    """Apollo's persisted-queries link and urql's persistedExchange send only a hash first and
    send the text after "PersistedQueryNotSupported"; any other error failed every query."""
    apq = {"persistedQuery": {"version": 1, "sha256Hash": "ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38"}}
    r = requests.post(gateway.http_url, json={"operationName": "Q", "variables": {}, "extensions": apq}, timeout=5)
    assert r.status_code == 400
    assert r.json()["errors"][0] == {"message": "PersistedQueryNotSupported", "extensions": {"code": "PERSISTED_QUERY_NOT_SUPPORTED"}}
    r = requests.get(gateway.http_url, params={"extensions": json.dumps(apq)}, timeout=5)
    assert r.json()["errors"][0]["message"] == "PersistedQueryNotSupported"
    r = requests.post(gateway.http_url, json={"documentId": "sha256:abc"}, timeout=5)
    assert r.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_SUPPORTED"
    r = requests.post(gateway.http_url, json=[{"query": VERSION_QUERY}, {"query": VERSION_QUERY}], timeout=5)
    assert r.status_code == 400 and "Batched requests" in r.json()["errors"][0]["message"]


def test_a_stop_while_a_writer_holds_the_lock_keeps_to_the_shutdown_timeout(catalog):
    """A query waiting for another process's lock slept in SQLite's busy timeout, which no stop
    check reached: with --shutdown-timeout 1 the server took 6.8 s to exit, 39.7 s with
    --busy-timeout-ms 20000. The lock wait now asks the same check as running SQL."""
    import threading
    g = Gateway(catalog, "--shutdown-timeout", "1", "--busy-timeout-ms", "20000", "--max-execution-ms", "0",
                "--log-level", "info")
    holder = sqlite.connect(catalog, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    answers = []
    t = threading.Thread(target=lambda: answers.append(_try_post(g)))
    t.start()
    time.sleep(0.5)
    started = time.time()
    g.proc.send_signal(signal.SIGTERM)
    try:
        assert g.proc.wait(10) == 0
        assert time.time() - started < 4, time.time() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        t.join(15)
        g.stop()
    log = g.proc.stderr.read().decode()
    assert "event=stopped timed_out=true" in log, log


def test_clients_still_waiting_at_the_shutdown_deadline_are_told(catalog):
    """Operations cut at --shutdown-timeout had their sockets dropped: a WebSocket client saw
    1006 (no close frame) and an HTTP request in flight got no answer at all. They now get a
    1001 close (graphql-ws clients retry it) and a 503 SERVICE_UNAVAILABLE."""
    import threading
    from websockets.exceptions import ConnectionClosed
    g = Gateway(catalog, "--shutdown-timeout", "1", "--busy-timeout-ms", "20000", "--max-execution-ms", "0",
                "--log-level", "info")
    ws = acked(g.ws_url)
    holder = sqlite.connect(catalog, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    answers = []
    t = threading.Thread(target=lambda: answers.append(_try_answer(g)))
    try:
        t.start()
        send(ws, {"id": "1", "type": "subscribe", "payload": {"query": '{ product(id: "1") { name } }'}})
        time.sleep(0.5)
        g.proc.send_signal(signal.SIGTERM)
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                recv(ws, timeout=10)
        assert closed.value.rcvd is not None, "dropped without a close frame"
        assert closed.value.rcvd.code == 1001
        assert g.proc.wait(10) == 0
        t.join(15)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        g.stop()
    assert len(answers) == 1
    status, body = answers[0]
    assert status == 503, answers
    assert body["errors"][0]["extensions"]["code"] == "SERVICE_UNAVAILABLE", body
    log = g.proc.stderr.read().decode()
    assert "event=shutdown_deadline websockets=1 http_unanswered=1" in log, log
    # The query cut there was logged as cancelled by its client (still connected), with the
    # status it never got, and the watcher's read stopped with it as a lock timeout.
    assert "event=operation_cancelled http=" in log and "The server is stopping." in log, log
    assert "went away" not in log and "status=200" not in log, log
    assert "catalog_watch_failed" not in log, log


def _try_answer(g):
    try:
        r = post(g, '{ product(id: "1") { name } }')
        return r.status_code, r.json()
    except requests.RequestException as e:
        return repr(e), None


def _try_post(g):
    try:
        return post(g, '{ product(id: "1") { name } }').status_code
    except requests.RequestException as e:
        return repr(e)


@pytest.fixture(scope="module")
def unprepared_100k(tmp_path_factory):
    """A demo catalog of 100,000 products, never served: its prepare takes seconds (5.7 s here)."""
    path = tmp_path_factory.mktemp("big") / "unprepared.sqlite"
    subprocess.run([os.path.abspath(BINARY), "demo-db", "--out", str(path), "--products", "100000"],
                   check=True, capture_output=True)
    return path


def file_digest(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_a_stop_during_the_start_up_prepare_ends_it_and_leaves_the_file_as_it_was(tmp_path, unprepared_100k):
    """Stop signals were taken only once the server listened: SIGTERM during the prepare of an
    unprepared catalog (about a minute at 1M products) was acted on after it, and the ready line
    was printed just before the stop. The prepare now stops and rolls back."""
    db = tmp_path / "catalog.sqlite"
    shutil.copyfile(unprepared_100k, db)
    before = file_digest(db)
    proc = subprocess.Popen([os.path.abspath(BINARY), "serve", "--db", str(db), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(1.0)
        assert proc.poll() is None
        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        took = time.monotonic() - signalled
        out, err = proc.stdout.read(), proc.stderr.read()
        assert took < 2.5, (took, err[-600:])
        assert out == b"", out  # no ready line for a server that never listened
        assert b"event=catalog_prepare_stopped" in err and b"catalog_not_prepared" not in err, err[-600:]
        assert file_digest(db) == before
        assert not os.path.exists(str(db) + "-journal")
        names = sqlite.connect(db).execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'cg_%'").fetchone()[0]
        assert names == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # The next start prepares the file in full and serves it.
    g = Gateway(str(db))
    try:
        answer = post(g, "{ products(first: 1) { totalCount } }").json()
        assert answer["data"]["products"]["totalCount"] >= 100000, answer
    finally:
        g.stop()


def test_a_stop_during_a_replacement_s_prepare_keeps_to_the_shutdown_timeout(tmp_path, catalog, unprepared_100k):
    """The watcher prepares a catalog renamed over the served one before it opens it; a stop
    waited for that prepare (4.6 s at 100,000 products past a 1 s --shutdown-timeout)."""
    g = Gateway(catalog, "--shutdown-timeout", "1", "--log-level", "info")
    incoming = tmp_path / "incoming.sqlite"
    shutil.copyfile(unprepared_100k, incoming)
    os.rename(incoming, catalog)
    time.sleep(1.0)  # the watcher sees the new file within its poll interval and starts preparing
    signalled = time.monotonic()
    assert g.stop(timeout=30) == 0
    took = time.monotonic() - signalled
    err = g.proc.stderr.read()
    assert took < 2.5, (took, err[-600:])
    assert b"event=catalog_prepare_stopped" in err, err[-800:]
    # The stopped prepare's file was not taken up: no replacement is logged.
    assert b"event=catalog_file_replaced" not in err, err[-800:]


def test_a_stop_while_start_up_waits_for_a_writers_lock_is_prompt(catalog):
    """After the prepare gave up on a writer's lock (the busy timeout), the look at whether the
    file is a catalog at all waited another 5 s for the same lock without asking for a stop:
    SIGTERM 5.5 s in took 4.5 s more. It waits as the prepare does now (--busy-timeout-ms,
    stopped by the signal)."""
    holder = sqlite.connect(catalog, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    proc = subprocess.Popen([os.path.abspath(BINARY), "serve", "--db", str(catalog), "--port", "0", "--busy-timeout-ms", "3000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(4.0)  # past the prepare's 3 s wait, inside the look that follows it
        assert proc.poll() is None
        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        took = time.monotonic() - signalled
        err = proc.stderr.read()
        assert took < 1.0, (took, err[-600:])
        assert b"event=catalog_prepare_stopped" in err and proc.stdout.read() == b"", err[-600:]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_stop_during_a_compaction_rolls_it_back_before_exit(tmp_path, unprepared_100k):
    """The compaction thread was neither stopped nor waited for: a graceful stop during a pass
    exited inside its transaction and left a hot journal (4 MB here), which read-only readers
    of the file, `query` among them, cannot roll back."""
    db = tmp_path / "catalog.sqlite"
    shutil.copyfile(unprepared_100k, db)
    subprocess.run([os.path.abspath(BINARY), "prepare", "--db", str(db)], check=True, capture_output=True)
    c = sqlite.connect(db, isolation_level=None)
    first = c.execute("SELECT max(versionid) FROM version").fetchone()[0]
    for v in range(first + 1, first + 4):  # 300,000 captured changes, in versions the compaction drops
        c.executescript(f"BEGIN; UPDATE Product_Catalog SET Product = Product || 'x'; INSERT INTO version VALUES ({v}, '', ''); COMMIT;")
    c.close()
    proc = subprocess.Popen([os.path.abspath(BINARY), "serve", "--db", str(db), "--port", "0", "--retain-versions", "1",
                             "--compaction-interval", "0.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert READY.match(proc.stdout.readline().decode().strip())
        # The pass's transaction has written when the rollback journal appears (the gateway
        # writes nothing else): stop then.
        deadline = time.monotonic() + 20
        while not os.path.exists(str(db) + "-journal") and time.monotonic() < deadline:
            time.sleep(0.001)
        assert os.path.exists(str(db) + "-journal"), "no compaction pass began"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        err = proc.stderr.read()
        assert b"event=compaction_stopped" in err, err[-800:]  # the signal came during the pass
        assert not os.path.exists(str(db) + "-journal")
        answer = subprocess.run([os.path.abspath(BINARY), "query", "--db", str(db), "{ catalogVersion { version } }"],
                                capture_output=True, timeout=30)
        assert answer.returncode == 0 and json.loads(answer.stdout) == {"data": {"catalogVersion": {"version": first + 3}}}, answer
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()



def test_a_stop_does_not_wait_out_a_long_poll_interval(catalog):
    """The watcher sleeps up to --poll-interval-ms between looks; a stop waited for the sleep to
    end (59 s with --poll-interval-ms 60000, the port still bound) whatever --shutdown-timeout
    said. The stop wakes it now."""
    g = Gateway(catalog, "--poll-interval-ms", "60000", "--shutdown-timeout", "1")
    time.sleep(0.5)  # the watcher is in its wait
    signalled = time.monotonic()
    assert g.stop(timeout=30) == 0
    took = time.monotonic() - signalled
    assert took < 2.0, (took, g.proc.stderr.read()[-600:])
    # The port is free again.
    probe = socket.socket()
    probe.bind((g.host, g.port))
    probe.close()


def test_a_compaction_that_moves_the_oldest_version_says_so_even_when_no_change_row_goes(tmp_path):
    """Version rows alone (bump-version with nothing edited) leave no change rows to delete, yet a
    compaction moves the oldest version still answered: resuming from before it is
    CHANGES_EXPIRED from then on. That was logged only when change rows were deleted."""
    db = str(tmp_path / "c.sqlite")
    assert subprocess.run([BINARY, "demo-db", "--out", db], capture_output=True).returncode == 0
    assert subprocess.run([BINARY, "prepare", "--db", db], capture_output=True).returncode == 0
    g = Gateway(db, "--retain-versions", "1", "--compaction-interval", "0.1", "--log-level", "info")
    try:
        for _ in range(2):
            assert subprocess.run([BINARY, "bump-version", "--db", db], capture_output=True).returncode == 0
        deadline = time.monotonic() + 10
        answer = None
        while time.monotonic() < deadline:
            answer = requests.post(g.http_url, json={"query": "{ catalogChanges(sinceVersion: 7) { version } }"}, timeout=5).json()
            if "errors" in answer:
                break
            time.sleep(0.1)
        assert answer["errors"][0]["extensions"]["code"] == "CHANGES_EXPIRED", answer
    finally:
        assert g.stop() == 0
    err = g.proc.stderr.read().decode()
    assert "event=changes_compacted deleted=0 oldest_version=8" in err, err[-800:]
