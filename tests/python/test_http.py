"""GraphQL over HTTP (draft): status codes, media types, GET and POST."""
import socket
import time

import requests

from gateway_server import Gateway, catalog, gateway, sqlite3  # noqa: F401 (fixtures)

GRAPHQL_RESPONSE = "application/graphql-response+json; charset=utf-8"
JSON = "application/json; charset=utf-8"


def test_healthz(gateway):
    r = requests.get(gateway.base + "/healthz")
    assert r.status_code == 200
    assert r.headers["content-type"] == JSON
    assert r.json() == {"status": "ok", "version": 1}


def test_healthz_is_200_as_soon_as_the_ready_line_is_printed(catalog):
    # The ready line waits for the watcher's first version read: no transient 503.
    for _ in range(5):
        g = Gateway(catalog)
        try:
            r = requests.get(g.base + "/healthz", timeout=5)
            assert (r.status_code, r.json()) == (200, {"status": "ok", "version": 1})
        finally:
            assert g.stop() == 0


def test_post_json(gateway):
    r = requests.post(gateway.http_url, json={"query": "{ catalogVersion { version } }"})
    assert r.status_code == 200
    assert r.headers["content-type"] == JSON
    assert r.json() == {"data": {"catalogVersion": {"version": 1}}}


def test_post_with_variables_and_operation_name(gateway):
    r = requests.post(gateway.http_url, json={
        "query": "query A { catalogVersion { version } } query B($x: Boolean!) { catalogVersion { catalogRow @include(if: $x) } }",
        "variables": {"x": True}, "operationName": "B"},
        headers={"Accept": "application/graphql-response+json"})
    assert r.status_code == 200
    assert r.headers["content-type"] == GRAPHQL_RESPONSE
    assert r.json() == {"data": {"catalogVersion": {"catalogRow": 10}}}


def test_get_is_url_decoded(gateway):
    r = requests.get(gateway.http_url, params={"query": "query Q($x: Boolean!) { catalogVersion { version @skip(if: $x) assetRow } }",
                                               "variables": '{"x": true}', "operationName": "Q"})
    assert r.status_code == 200
    assert r.json() == {"data": {"catalogVersion": {"assetRow": 20}}}


def test_validation_error_status_by_media_type(gateway):
    modern = requests.post(gateway.http_url, json={"query": "{ nope }"},
                           headers={"Accept": "application/graphql-response+json"})
    assert modern.status_code == 400
    assert modern.headers["content-type"] == GRAPHQL_RESPONSE
    assert "data" not in modern.json() and modern.json()["errors"]
    legacy = requests.post(gateway.http_url, json={"query": "{ nope }"}, headers={"Accept": "application/json"})
    assert legacy.status_code == 200
    assert legacy.headers["content-type"] == JSON
    assert legacy.json()["errors"]


def test_syntax_error_is_400_with_graphql_response(gateway):
    r = requests.post(gateway.http_url, json={"query": "{"}, headers={"Accept": "application/graphql-response+json"})
    assert r.status_code == 400
    assert r.json()["errors"][0]["locations"] == [{"line": 1, "column": 2}]


def test_subscription_over_http_is_refused(gateway):
    r = requests.post(gateway.http_url, json={"query": "subscription { catalogVersion { version } }"})
    assert r.status_code == 400
    assert r.json()["errors"][0]["extensions"]["code"] == "SUBSCRIPTION_OVER_HTTP"


def test_mutation_is_refused(gateway):
    r = requests.post(gateway.http_url, json={"query": "mutation { x }"},
                      headers={"Accept": "application/graphql-response+json"})
    assert r.status_code == 400
    assert r.json()["errors"]


def test_mutation_with_head_is_405_as_with_get(gateway):
    # HEAD is GET without the body: a mutation chosen by a HEAD is refused the same way.
    r = requests.head(gateway.http_url, params={"query": "mutation { x }"}, timeout=5)
    assert (r.status_code, r.headers["allow"]) == (405, "POST")
    r = requests.head(gateway.http_url, params={"query": "{ catalogVersion { version } }"}, timeout=5)
    assert r.status_code == 200 and r.content == b""


def test_mutation_with_get_is_405(gateway):
    # GraphQL-over-HTTP: "GET requests MUST NOT be used for executing mutation operations ... the
    # server MUST respond with error status code 405"; a query with GET is fine.
    r = requests.get(gateway.http_url, params={"query": "mutation { x }"},
                     headers={"Accept": "application/graphql-response+json"})
    assert (r.status_code, r.headers["allow"]) == (405, "POST")
    assert r.json()["errors"][0]["extensions"]["code"] == "OPERATION_NOT_SUPPORTED"
    # Also when the document has other errors and the client takes application/json: the
    # operation chosen is a mutation, so GET is the wrong method whatever else is wrong.
    r = requests.get(gateway.http_url, params={"query": "mutation M { x } query Q { nope }", "operationName": "M"})
    assert (r.status_code, r.headers["allow"]) == (405, "POST")
    assert [e["extensions"]["code"] for e in r.json()["errors"]] == ["GRAPHQL_VALIDATION_FAILED"]
    r = requests.get(gateway.http_url, params={"query": "{ catalogVersion { version } }"})
    assert (r.status_code, r.json()) == (200, {"data": {"catalogVersion": {"version": 1}}})


def test_unparsable_body_and_missing_query_are_400(gateway):
    r = requests.post(gateway.http_url, data=b"{query", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert r.json()["errors"][0]["message"].startswith("The request body is not valid JSON")
    r = requests.post(gateway.http_url, json={"variables": {}})
    assert r.status_code == 400
    assert r.json()["errors"][0]["message"] == "The request body has no 'query' member"
    r = requests.get(gateway.http_url)
    assert r.status_code == 400


def test_not_found_and_method_not_allowed(gateway):
    r = requests.get(gateway.base + "/nope")
    assert r.status_code == 404
    assert r.json()["errors"][0]["extensions"] == {"code": "NOT_FOUND"}
    r = requests.put(gateway.http_url, json={})
    assert r.status_code == 405
    assert r.json()["errors"][0]["extensions"] == {"code": "METHOD_NOT_ALLOWED"}
    assert r.headers["allow"] == "GET, HEAD, POST, OPTIONS"
    r = requests.delete(gateway.base + "/healthz")
    assert r.status_code == 405
    assert r.headers["allow"] == "GET, HEAD"


def test_head_is_get_without_the_body(gateway):
    # RFC 9110 9.3.2: the status and headers GET would send, no content. It used to be a 405
    # with a body, which on a keep-alive connection ended up in front of the next answer.
    s = socket.create_connection((gateway.host, gateway.port), timeout=5)
    query = "/graphql?query=%7B%20catalogVersion%20%7B%20version%20%7D%20%7D"
    for path in ["/healthz", query, "/nope"]:
        s.sendall(b"HEAD %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % path.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(4096)
        get = requests.get(gateway.base + path)
        status, headers = head.split(b"\r\n\r\n")[0].decode().split("\r\n", 1)
        assert int(status.split()[1]) == get.status_code
        assert f"content-length: {len(get.content)}" in headers.lower().split("\r\n")
        assert head.endswith(b"\r\n\r\n")  # nothing after the headers
    # The connection is still in step: a GET on it gets its own answer.
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    out = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        out += chunk
    assert out.startswith(b"HTTP/1.1 200 OK") and out.endswith(b'{"status":"ok","version":1}'), out


def test_wrong_content_type_is_415(gateway):
    r = requests.post(gateway.http_url, data="{ catalogVersion { version } }", headers={"Content-Type": "application/graphql"})
    assert r.status_code == 415
    r = requests.post(gateway.http_url, data={"query": "{ a }"})
    assert r.status_code == 415


def test_oversized_body_is_413(gateway):
    r = requests.post(gateway.http_url, json={"query": "{ catalogVersion { version } }", "pad": "x" * (2 << 20)})
    assert r.status_code == 413


def test_not_acceptable_is_406(gateway):
    r = requests.get(gateway.http_url, params={"query": "{ catalogVersion { version } }"}, headers={"Accept": "text/html"})
    assert r.status_code == 406


def test_keep_alive_session(gateway):
    with requests.Session() as s:
        for _ in range(5):
            r = s.post(gateway.http_url, json={"query": "{ catalogVersion { version } }"})
            assert r.json() == {"data": {"catalogVersion": {"version": 1}}}


def test_serve_without_db_uses_the_demo_catalog(tmp_path):
    import os
    import signal
    import subprocess
    from conftest import BINARY
    from gateway_server import READY
    p = subprocess.Popen([os.path.abspath(BINARY), "serve", "--port", "0", "--log-level", "warn"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = p.stdout.readline().decode().rstrip("\n")
        m = READY.match(line)
        assert m, line
        assert m.group("db") == "demo/catalog.sqlite"
        assert (tmp_path / "demo" / "catalog.sqlite").exists()
        r = requests.get(f"http://127.0.0.1:{m.group('port')}/healthz")
        assert r.status_code == 200 and r.json()["status"] == "ok"
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(15) == 0


def test_serve_with_a_missing_catalog_fails_clearly(tmp_path):
    import subprocess
    from conftest import BINARY
    p = subprocess.run([BINARY, "serve", "--port", "0", "--db", str(tmp_path / "missing.sqlite")], capture_output=True, timeout=30)
    assert p.returncode == 2
    # README: a one-line message naming the file first.
    assert p.stderr.decode() == f"catalog-gateway: {tmp_path / 'missing.sqlite'}: catalog not found\n"


def test_documents_and_variables_that_differ_only_by_normalization_are_not_one_cache_entry(gateway):
    """The document, plan, answer and subscription caches are keyed by the request's bytes: keyed
    by Swift's String equality (canonical equivalence), a query for "Cafe\u0301" was answered
    with the cached answer of "Caf\u00e9", in the document and in the variables."""
    nfc, nfd = "Caf\u00e9", "Cafe\u0301"
    sqlite3(gateway.db, f"INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES "
                        f"(21, 'n1', 'one', '{nfc}', 1), (22, 'n2', 'two', '{nfd}', 1);")
    query = 'query($m: String!) { products(filter: {manufacturer: $m}) { nodes { id } } }'
    for _ in range(2):  # the second round is answered from the caches
        for name, ids in ((nfc, ["21"]), (nfd, ["22"])):
            literal = '{ products(filter: {manufacturer: "%s"}) { nodes { id } } }' % name
            r = requests.post(gateway.http_url, json={"query": literal})
            assert r.json() == {"data": {"products": {"nodes": [{"id": i} for i in ids]}}}, name
            r = requests.post(gateway.http_url, json={"query": query, "variables": {"m": name}})
            assert r.json() == {"data": {"products": {"nodes": [{"id": i} for i in ids]}}}, name


def test_get_answers_carry_an_entity_tag_and_if_none_match_gets_304(gateway):
    # RFC 9110 13.1.2 / 15.4.5: a GET's 200 has a strong ETag of its body and Cache-Control:
    # no-cache; the same request with If-None-Match naming it is 304, headers only, on the same
    # keep-alive connection; after a commit that changes the answer it is a 200 with a new tag.
    query = "{ product(id: 1) { id name } }"
    with requests.Session() as s:
        first = s.get(gateway.http_url, params={"query": query})
        tag = first.headers["etag"]
        assert first.status_code == 200 and first.headers["cache-control"] == "no-cache"
        assert tag.startswith('"') and tag.endswith('"') and len(tag) == 18
        assert s.get(gateway.http_url, params={"query": query}).headers["etag"] == tag
        other = s.get(gateway.http_url, params={"query": "{ product(id: 2) { id name } }"})
        assert other.headers["etag"] != tag
        for header in (tag, "W/" + tag, '"nope", ' + tag, "*"):
            r = s.get(gateway.http_url, params={"query": query}, headers={"If-None-Match": header})
            assert (r.status_code, r.content) == (304, b""), header
            assert r.headers["etag"] == tag and r.headers["cache-control"] == "no-cache"
            assert r.headers["content-length"] == str(len(first.content))  # what the 200 carries
            assert "content-type" not in r.headers
        assert s.get(gateway.http_url, params={"query": query}, headers={"If-None-Match": '"nope"'}).status_code == 200
        # The other media type is another representation: its own tag, and Vary: Accept.
        assert first.headers["vary"] == "Accept"
        modern = s.get(gateway.http_url, params={"query": query},
                       headers={"Accept": "application/graphql-response+json", "If-None-Match": tag})
        assert modern.status_code == 200 and modern.headers["etag"] != tag and modern.content == first.content
        # POST is not conditional: no tag, and If-None-Match is ignored.
        post = s.post(gateway.http_url, json={"query": query}, headers={"If-None-Match": tag})
        assert post.status_code == 200 and "etag" not in post.headers and post.json() == first.json()
        # Errors are not tagged either.
        bad = s.get(gateway.http_url, params={"query": "{ nope }"}, headers={"If-None-Match": "*"})
        assert bad.status_code == 200 and "etag" not in bad.headers and bad.json()["errors"]
        sqlite3(gateway.db, "UPDATE Product_Catalog SET Product = 'Renamed' WHERE keyid = 1;")
        deadline = time.monotonic() + 10
        while True:
            r = s.get(gateway.http_url, params={"query": query}, headers={"If-None-Match": tag})
            if r.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert r.status_code == 200 and r.json()["data"]["product"]["name"] == "Renamed"
        assert r.headers["etag"] != tag


def raw_answer_head(g, request):
    with socket.create_connection((g.host, g.port), timeout=5) as s:
        s.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    lines = data.split(b"\r\n\r\n")[0].decode().split("\r\n")
    return lines[0], {k.lower(): v for k, v in (l.split(": ", 1) for l in lines[1:])}


def test_answers_written_before_lws_parses_a_request_carry_a_date(gateway):
    """A method lws does not know, bytes that are not HTTP, and a WebSocket handshake the gateway
    refuses are answered as raw HTTP/1.1 text; those answers had no Date header (RFC 9110 6.6.1:
    a server with a clock sends one)."""
    handshake = (b"GET /graphql HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    for request, status in [(b"PROPFIND /graphql HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 501 Not Implemented"),
                            (b"garbage\r\n\r\n", "HTTP/1.1 400 Bad Request"),
                            (handshake, "HTTP/1.1 400 Bad Request")]:
        line, headers = raw_answer_head(gateway, request)
        assert line == status
        date = time.mktime(time.strptime(headers["date"], "%a, %d %b %Y %H:%M:%S GMT")) - time.timezone
        assert abs(date - time.time()) < 5, headers["date"]
