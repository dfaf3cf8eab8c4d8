"""Hostile and malformed input at the network level, against the real server: raw WebSocket
frames (binary, fragmented, oversized, invalid UTF-8, forbidden opcodes), protocol messages with
wrong field types, and HTTP requests with wrong content types, bodies and headers. Each case
asserts the exact answer, then that the same server still answers a normal query over HTTP and
over WebSocket. The engine-level cases are in Tests/ResolversTests/BadInputTests.swift."""
import json
import re
import socket
import struct
import time

import pytest
import requests
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from gateway_server import Gateway, make_catalog
from rawws import BINARY, CLOSE, CONTINUATION, PING, TEXT, RawWS

LIMIT = 4096
INIT = json.dumps({"type": "connection_init"})
LEGACY_INIT = json.dumps({"type": "connection_init", "payload": {}})
VERSION = "{ catalogVersion { version } }"
VERSION_DATA = {"data": {"catalogVersion": {"version": 1}}}
ACK = '{"type":"connection_ack"}'
TRANSPORT, LEGACY = "graphql-transport-ws", "graphql-ws"
BODY_TIMEOUT = 1  # --keepalive-timeout: also the time a request body has to arrive


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    g = Gateway(make_catalog(tmp_path_factory.mktemp("bad-input")),
                "--max-message-bytes", str(LIMIT), "--max-body-bytes", str(LIMIT),
                "--keepalive-timeout", str(BODY_TIMEOUT), "--compression")
    yield g
    assert g.stop() == 0


def still_serves(g):
    r = requests.post(g.http_url, json={"query": VERSION}, timeout=5)
    assert (r.status_code, r.json()) == (200, VERSION_DATA)
    with connect(g.ws_url, subprotocols=[TRANSPORT], open_timeout=5) as ws:
        ws.send(INIT)
        assert json.loads(ws.recv(5)) == {"type": "connection_ack"}
        ws.send(json.dumps({"id": "ok", "type": "subscribe", "payload": {"query": VERSION}}))
        assert json.loads(ws.recv(5)) == {"id": "ok", "type": "next", "payload": VERSION_DATA}
        assert json.loads(ws.recv(5)) == {"id": "ok", "type": "complete"}
    assert g.proc.poll() is None


def messages(w, n):
    """Up to n messages, stopping at a close frame; "closed" when the peer just hangs up."""
    out = []
    for _ in range(n):
        try:
            m = w.recv()
        except (ConnectionError, OSError):
            out.append("closed")
            break
        out.append(m)
        if isinstance(m, tuple) and m[0] == "close":
            break
    return out


def subscribe(payload, id="1"):
    return json.dumps({"id": id, "type": "subscribe", "payload": payload})


def close4400(reason):
    return ("close", 4400, reason)


# (name, subprotocol, frames to send: text or (opcode, payload, options), messages to read, expected)
WS_CASES = [
    # Binary, fragmented and oversized messages.
    ("binary frame holding a valid message is read as text", TRANSPORT, [(BINARY, INIT, {})], 1, [ACK]),
    ("binary garbage", TRANSPORT, [(BINARY, b"\x00\x01\xfe\xff", {})], 2,
     [close4400("Invalid message received: invalid token near end of file")]),
    ("invalid UTF-8 in a text frame", TRANSPORT, [(TEXT, b'{"type":"\xff"}', {})], 2, [("close", 1007, "bad utf8")]),
    ("message in three fragments", TRANSPORT,
     [(TEXT, INIT[:5], {"fin": False}), (CONTINUATION, INIT[5:10], {"fin": False}), (CONTINUATION, INIT[10:], {})],
     1, [ACK]),
    ("ping between fragments", TRANSPORT,
     [(TEXT, INIT[:5], {"fin": False}), (PING, b"hi", {}), (CONTINUATION, INIT[5:], {})], 2, [("pong", b"hi"), ACK]),
    ("message over the size limit", TRANSPORT,
     [INIT, json.dumps({"type": "ping", "payload": {"x": "a" * LIMIT}})], 3,
     [ACK, ("close", 1009, f"Message too big (limit {LIMIT} bytes)")]),
    ("fragments adding up past the size limit", TRANSPORT,
     [INIT] + [(TEXT if i == 0 else CONTINUATION, "a" * 1000, {"fin": False}) for i in range(5)], 3,
     [ACK, ("close", 1009, f"Message too big (limit {LIMIT} bytes)")]),
    ("legacy message over the size limit", LEGACY, ["x" * (LIMIT + 1)], 2,
     [("close", 1009, f"Message too big (limit {LIMIT} bytes)")]),
    ("nesting past the size limit", TRANSPORT, ["[" * 3000 + "]" * 3000], 2,
     [("close", 1009, f"Message too big (limit {LIMIT} bytes)")]),
    # Frames RFC 6455 forbids.
    ("reserved bits set", TRANSPORT, [(TEXT, INIT, {"rsv": 2})], 2, [("close", 1002, "rsv bits")]),
    ("unknown opcode", TRANSPORT, [(0x3, INIT, {})], 2, [("close", 1002, "bad opc")]),
    ("continuation without a start", TRANSPORT, [(CONTINUATION, INIT, {})], 2, [("close", 1002, "bad cont")]),
    ("fragmented control frame", TRANSPORT, [(PING, b"x", {"fin": False})], 2, [("close", 1002, "frag ctl")]),
    ("control frame over 125 bytes", TRANSPORT, [(PING, b"x" * 200, {})], 2, ["closed"]),
    ("close code 999", TRANSPORT, [(CLOSE, struct.pack("!H", 999), {})], 2, [("close", 1002, "")]),
    ("close frame of one byte", TRANSPORT, [(CLOSE, b"\x03", {})], 2, [("close", None, "")]),
    ("close reason of invalid UTF-8", TRANSPORT, [(CLOSE, struct.pack("!H", 1000) + b"\xff", {})], 2, ["closed"]),
    # JSON that is not a protocol message.
    ("empty message", TRANSPORT, [""], 2, [close4400("Invalid message received: empty input, a JSON value was expected")]),
    ("message an array", TRANSPORT, ["[]"], 2, [close4400("Message is expected to be an object, but got array")]),
    ("message a string", TRANSPORT, ['"x"'], 2, [close4400("Message is expected to be an object, but got string")]),
    ("message a number", TRANSPORT, ["1"], 2, [close4400("Message is expected to be an object, but got number")]),
    ("message null", TRANSPORT, ["null"], 2, [close4400("Message is expected to be an object, but got null")]),
    ("message true", TRANSPORT, ["true"], 2, [close4400("Message is expected to be an object, but got boolean")]),
    ("NUL byte after the JSON", TRANSPORT, [INIT.encode() + b"\x00"], 2,
     [close4400("Invalid message received: end of file expected near end of file")]),
    ("payload nested 600 deep", TRANSPORT,
     ['{"type":"connection_init","payload":' + '{"a":' * 600 + "1" + "}" * 600 + "}"], 2,
     [close4400("Invalid message received: JSON nesting too deep (more than 512 levels of arrays and objects)")]),
    ("duplicate keys: the last wins", TRANSPORT, ['{"type":"ping","type":"connection_init"}'], 1, [ACK]),
    # Wrong field types.
    ("type empty", TRANSPORT, ['{"type":""}'], 2, [close4400("Message is missing the 'type' property")]),
    ("type null", TRANSPORT, ['{"type":null}'], 2, [close4400("Message is missing the 'type' property")]),
    ("type too long for a close reason", TRANSPORT, [json.dumps({"type": "é" * 200})], 2,
     [close4400("Invalid message 'type' property \"" + "é" * 45)]),
    ("connection_init payload an array", TRANSPORT, ['{"type":"connection_init","payload":[]}'], 2,
     [close4400("\"connection_init\" message expects the 'payload' property to be an object or nullish or missing, but got array")]),
    ("ping payload a string", TRANSPORT, ['{"type":"ping","payload":"x"}'], 2,
     [close4400("\"ping\" message expects the 'payload' property to be an object or nullish or missing, but got string")]),
    ("subscribe id a number", TRANSPORT, [INIT, '{"id":1,"type":"subscribe","payload":{"query":"{ a }"}}'], 3,
     [ACK, close4400("\"subscribe\" message expects the 'id' property to be a string, but got number")]),
    ("subscribe query a number", TRANSPORT, [INIT, subscribe({"query": 5})], 3,
     [ACK, close4400("\"subscribe\" message payload expects the 'query' property to be a string, but got number")]),
    ("subscribe operationName a number", TRANSPORT, [INIT, subscribe({"query": "{ a }", "operationName": 5})], 3,
     [ACK, close4400("\"subscribe\" message payload expects the 'operationName' property to be a string or nullish or missing, but got number")]),
    ("subscribe extensions a string", TRANSPORT, [INIT, subscribe({"query": "{ a }", "extensions": "x"})], 3,
     [ACK, close4400("\"subscribe\" message payload expects the 'extensions' property to be a an object or nullish or missing, but got string")]),
    ("subscribe variables nested 1500 deep", TRANSPORT,
     [INIT, '{"id":"1","type":"subscribe","payload":{"query":"{ a }","variables":{"a":' + "[" * 1500 + "]" * 1500 + "}}}"], 3,
     [ACK, close4400("Invalid message received: JSON nesting too deep (more than 512 levels of arrays and objects)")]),
    ("complete id a number", TRANSPORT, [INIT, '{"id":7,"type":"complete"}'], 3,
     [ACK, close4400("\"complete\" message expects the 'id' property to be a string, but got number")]),
    ("NUL byte in the query", TRANSPORT, [INIT, subscribe({"query": VERSION + "\u0000"})], 2,
     [ACK, '{"id":"1","type":"error","payload":[{"message":"Syntax Error: Unexpected character: U+0000.",'
           '"locations":[{"line":1,"column":31}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}']),
    ("id of 3000 characters", TRANSPORT, [INIT, subscribe({"query": VERSION}, id="i" * 3000)], 3,
     [ACK, json.dumps({"id": "i" * 3000, "type": "next", "payload": VERSION_DATA}, separators=(",", ":")),
      json.dumps({"id": "i" * 3000, "type": "complete"}, separators=(",", ":"))]),
    # graphql-ws (legacy): errors are messages, the connection stays open.
    ("legacy message an array", LEGACY, ["[]"], 1,
     ['{"type":"error","payload":{"message":"Message must be a JSON object, but got array"}}']),
    ("legacy message not JSON", LEGACY, ["{x"], 1,
     ['{"type":"error","payload":{"message":"Message must be JSON: string or \'}\' expected near \'x\'"}}']),
    ("legacy type a number", LEGACY, ['{"type":1}'], 1, ['{"type":"error","payload":{"message":"Invalid message type!"}}']),
    ("legacy unknown type", LEGACY, ['{"type":"subscribe"}'], 1, ['{"type":"error","payload":{"message":"Invalid message type!"}}']),
    ("legacy start before init", LEGACY, ['{"id":"1","type":"start","payload":{"query":"{ a }"}}'], 1,
     ['{"id":"1","type":"error","payload":{"message":"Connection not initialised: send connection_init first"}}']),
    ("legacy payload a string", LEGACY, [LEGACY_INIT, '{"id":"1","type":"start","payload":"x"}'], 3,
     [ACK, '{"type":"ka"}',
      '{"id":"1","type":"error","payload":{"message":"\\"start\\" message expects the \'payload\' property to be an object, but got string"}}']),
    ("legacy query missing", LEGACY, [LEGACY_INIT, '{"id":"1","type":"start","payload":{}}'], 3,
     [ACK, '{"type":"ka"}',
      '{"id":"1","type":"error","payload":{"message":"\\"start\\" message payload expects the \'query\' property to be a string, but got undefined"}}']),
    ("legacy id an object", LEGACY, [LEGACY_INIT, '{"id":{},"type":"start","payload":{"query":"{ a }"}}'], 3,
     [ACK, '{"type":"ka"}', '{"type":"error","payload":{"message":"\\"start\\" message requires a non-empty string \'id\'"}}']),
    ("legacy binary frame", LEGACY, [(BINARY, LEGACY_INIT, {})], 2, [ACK, '{"type":"ka"}']),
]


@pytest.mark.parametrize("name,proto,frames,n,expected", WS_CASES, ids=[c[0] for c in WS_CASES])
def test_websocket(server, name, proto, frames, n, expected):
    with RawWS(server.host, server.port, subprotocol=proto) as w:
        assert w.status == 101
        for f in frames:
            if isinstance(f, tuple):
                w.frame(f[0], f[1], **f[2])
            else:
                w.text(f)
        assert messages(w, n) == expected
    still_serves(server)


def test_unmasked_client_frame_is_accepted(server):
    # RFC 6455 says a server must fail the connection with 1002. libwebsockets 4.1 reads the
    # mask bit (ws->this_frame_masked, private) and unmasks only when it is set; it neither
    # refuses an unmasked frame nor tells the application, so the gateway cannot see it.
    with RawWS(server.host, server.port) as w:
        w.frame(TEXT, INIT, mask=False)
        assert messages(w, 1) == [ACK]
    still_serves(server)


def test_frame_announcing_more_than_the_limit_is_closed(server):
    # libwebsockets hands a frame's payload to the gateway once 16 KiB of it (its rx buffer) or
    # the frame's end has arrived; the first such fragment of an oversized frame is refused
    # with 1009 (nothing more is buffered). A client that announced the frame and stalled is
    # refused the same way when its connection timer fires (here the init timeout).
    with RawWS(server.host, server.port) as w:
        w.frame(TEXT, b"{}", length=1 << 40)
        assert messages(w, 1) == [("close", 1009, "Message too big (limit 4096 bytes)")]
    still_serves(server)


def test_oversized_frame_header_alone_is_closed_at_the_timer(server):
    # Only the header of a frame announcing 1 TiB: lws delivers nothing yet, the connection's
    # timer (here the init timeout, 3 s) finds the announced size and closes with 1009.
    with RawWS(server.host, server.port) as w:
        w.sock.sendall(bytes([0x81, 0xFF]) + struct.pack("!Q", 1 << 40) + b"\x01\x02\x03\x04")
        assert messages(w, 1) == [("close", 1009, "Message too big (limit 4096 bytes)")]
    still_serves(server)


def test_oversized_frame_refused_on_its_first_fragment(server):
    # After connection_init (no init timer left): 16 KiB of a frame announcing 1 TiB is the
    # first fragment lws delivers, and it is refused at once.
    with RawWS(server.host, server.port) as w:
        w.text(INIT)
        assert messages(w, 1) == [ACK]
        w.frame(TEXT, b"a" * 16384, length=1 << 40)
        assert messages(w, 1) == [("close", 1009, "Message too big (limit 4096 bytes)")]
    still_serves(server)


def test_a_continuation_announcing_2_63_bytes_after_a_fragment_is_closed_not_a_crash(server):
    # A first fragment buffered, then a continuation frame announcing 2^63 - 1 bytes (lws takes
    # any length with the top bit clear): the buffered count plus the announced rest overflowed
    # Swift's Int and the whole server died, from any client, in two frames.
    with RawWS(server.host, server.port) as w:
        w.frame(TEXT, b'{"type":"c', fin=False)
        w.frame(CONTINUATION, b"onnection", length=(1 << 63) - 1)
        assert messages(w, 1) == [("close", 1009, "Message too big (limit 4096 bytes)")]
    still_serves(server)


def test_a_continuation_header_announcing_2_63_bytes_is_closed_at_the_timer(server):
    # The same continuation's header alone: the connection's timer (the init timeout) found the
    # announced size by the same overflowing sum.
    with RawWS(server.host, server.port) as w:
        w.frame(TEXT, b'{"type":"c', fin=False)
        w.sock.sendall(bytes([0x80, 0xFF]) + struct.pack("!Q", (1 << 63) - 1) + b"\x01\x02\x03\x04")
        assert messages(w, 1) == [("close", 1009, "Message too big (limit 4096 bytes)")]
    still_serves(server)


def test_oversized_frame_still_arriving_gets_its_close_frame(server):
    # The whole frame is on its way while the gateway refuses its first 16 KiB: the rest keeps
    # arriving before and after the close goes out, and the client still gets the 1009 frame.
    # (The gateway used to return -1 to lws mid-frame, and lws then dropped the socket without
    # the close frame whenever more of the frame was read first: a bare EOF, most of the time.)
    for _ in range(5):
        with RawWS(server.host, server.port) as w:
            w.text(INIT)
            assert messages(w, 1) == [ACK]
            w.frame(TEXT, b"a" * (60 * LIMIT))
            assert messages(w, 1) == [("close", 1009, "Message too big (limit 4096 bytes)")]
    still_serves(server)


def test_compressed_message_inflating_past_the_limit_is_closed(server):
    # permessage-deflate: 200 KB of spaces is a few hundred bytes on the wire; the limit applies
    # after inflation. The connection used to freeze (no close, no answer, pings unanswered).
    with connect(server.ws_url, subprotocols=[TRANSPORT], compression="deflate", open_timeout=5) as ws:
        ws.send(INIT)
        assert json.loads(ws.recv(5)) == {"type": "connection_ack"}
        ws.send(json.dumps({"id": "x", "type": "subscribe", "payload": {"query": VERSION + " " * 200_000}}))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(5)
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1009, "Message too big (limit 4096 bytes)")
    still_serves(server)


def test_integer_beyond_64_bits_in_variables_is_a_number_not_invalid_json(server):
    # RFC 8259 sets no limit on integers; jansson refuses those past 64 bits. They are read as
    # JavaScript reads JSON (a double): an ID finds nothing, an Int gets the coercion error — over
    # HTTP a 200 answer instead of 400 "not valid JSON", over WebSocket a next instead of 4400,
    # which closed the connection with every other operation on it.
    body = json.dumps({"query": "query ($id: ID!, $n: Int) { product(id: $id) { id } products(first: $n) { totalCount } }",
                       "variables": {"id": 10 ** 20, "n": 1}})
    r = requests.post(server.http_url, data=body, headers={"Content-Type": "application/json"}, timeout=5)
    assert (r.status_code, r.json()) == (200, {"data": {"product": None, "products": {"totalCount": 1}}})
    body = json.dumps({"query": "query ($n: Int) { products(first: $n) { totalCount } }", "variables": {"n": -(10 ** 20)}})
    r = requests.post(server.http_url, data=body, headers={"Content-Type": "application/json"}, timeout=5)
    assert r.status_code == 200 and r.json()["errors"][0]["message"] == (
        'Variable "$n" got invalid value -100000000000000000000; '
        "Int cannot represent non 32-bit signed integer value: -100000000000000000000")
    with connect(server.ws_url, subprotocols=[TRANSPORT], open_timeout=5) as ws:
        ws.send(INIT)
        assert json.loads(ws.recv(5)) == {"type": "connection_ack"}
        ws.send('{"id":"big","type":"subscribe","payload":{"query":"query ($id: ID!) { product(id: $id) { id } }",'
                '"variables":{"id":123456789012345678901234567890}}}')
        assert json.loads(ws.recv(5)) == {"id": "big", "type": "next", "payload": {"data": {"product": None}}}
        assert json.loads(ws.recv(5)) == {"id": "big", "type": "complete"}
    still_serves(server)


def post(g, body, content_type):
    headers = {} if content_type is None else {"Content-Type": content_type}
    r = requests.post(g.http_url, data=body, headers=headers, timeout=5)
    return r.status_code, r.headers["content-type"], r.text


JSON = "application/json; charset=utf-8"
NORMAL = json.dumps({"query": VERSION})


def unsupported(ct):
    return (415, JSON, '{"errors":[{"message":"Unsupported Content-Type %s: POST a JSON body with Content-Type: application/json","extensions":{"code":"UNSUPPORTED_MEDIA_TYPE"}}]}' % ct)


def bad_request(message):
    return (400, JSON, json.dumps({"errors": [{"message": message, "extensions": {"code": "BAD_REQUEST"}}]}, separators=(",", ":")))


HTTP_CASES = [
    ("text/plain", NORMAL, "text/plain", unsupported("text/plain")),
    ("application/graphql", VERSION, "application/graphql", unsupported("application/graphql")),
    ("form encoded", "query=%7B%20a%20%7D", "application/x-www-form-urlencoded", unsupported("application/x-www-form-urlencoded")),
    ("no content type", NORMAL, None, unsupported("none")),
    ("json with a suffix", NORMAL, "application/json-patch+json", unsupported("application/json-patch+json")),
    ("json in capitals with a charset", NORMAL, "Application/JSON; Charset=UTF-8", (200, JSON, json.dumps(VERSION_DATA, separators=(",", ":")))),
    ("invalid UTF-8", b'{"query":"\xff"}', "application/json",
     bad_request("The request body is not valid JSON: unable to decode byte 0xff near '\"' (line 1, column 10)")),
    ("body an array", "[]", "application/json", bad_request("Batched requests (a JSON array of operations) are not supported: send one operation per request")),
    ("empty body", "", "application/json",
     bad_request("The request body is not valid JSON: empty input, a JSON value was expected (line 1, column 0)")),
    ("query a number", '{"query": 1}', "application/json", bad_request("The 'query' member must be a string, but got number")),
    ("variables a string", '{"query": "{ a }", "variables": "{}"}', "application/json",
     bad_request("The 'variables' member must be an object or null, but got string")),
    ("operationName an array", '{"query": "{ a }", "operationName": []}', "application/json",
     bad_request("The 'operationName' member must be a string or null, but got array")),
    ("NUL in the query", '{"query": "{ catalogVersion { version } }\\u0000"}', "application/json",
     (200, JSON, '{"errors":[{"message":"Syntax Error: Unexpected character: U+0000.","locations":[{"line":1,"column":31}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}')),
    ("body over the limit", json.dumps({"query": "{ a }", "pad": "x" * LIMIT}), "application/json",
     (413, JSON, '{"errors":[{"message":"Request body too large: %d bytes (limit %d)","extensions":{"code":"BODY_TOO_LARGE"}}]}' % (LIMIT + 29, LIMIT))),
]


@pytest.mark.parametrize("name,body,content_type,expected", HTTP_CASES, ids=[c[0] for c in HTTP_CASES])
def test_http_post(server, name, body, content_type, expected):
    assert post(server, body, content_type) == expected
    still_serves(server)


GET_CASES = [
    ("variables not JSON", "?query=%7B%20a%20%7D&variables=%7Bx",
     (400, '{"errors":[{"message":"The \'variables\' parameter is not valid JSON: string or \'}\' expected near \'x\' (line 1, column 2)","extensions":{"code":"BAD_REQUEST"}}]}')),
    ("variables an array", "?query=%7B%20a%20%7D&variables=%5B%5D",
     (400, '{"errors":[{"message":"The \'variables\' parameter must be a JSON object, but got array","extensions":{"code":"BAD_REQUEST"}}]}')),
    ("extensions not JSON", "?query=%7B%20a%20%7D&extensions=%7Bx",
     (400, '{"errors":[{"message":"The \'extensions\' parameter is not valid JSON: string or \'}\' expected near \'x\' (line 1, column 2)","extensions":{"code":"BAD_REQUEST"}}]}')),
    ("extensions an array", "?query=%7B%20a%20%7D&extensions=%5B%5D",
     (400, '{"errors":[{"message":"The \'extensions\' parameter must be a JSON object, but got array","extensions":{"code":"BAD_REQUEST"}}]}')),
    ("invalid UTF-8 in the query", "?query=%7B%20catalogVersion%20%7B%20version%20%7D%20%7D%FF",
     (200, '{"errors":[{"message":"Syntax Error: Unexpected character: U+FFFD.","locations":[{"line":1,"column":31}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}')),
    ("broken percent escapes", "?query=%ZZ%7",
     (200, '{"errors":[{"message":"Syntax Error: Unexpected character: \\"%\\".","locations":[{"line":1,"column":1}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}')),
]


@pytest.mark.parametrize("name,query_string,expected", GET_CASES, ids=[c[0] for c in GET_CASES])
def test_http_get(server, name, query_string, expected):
    r = requests.get(server.http_url + query_string, timeout=5)
    assert (r.status_code, r.text) == expected
    still_serves(server)


def raw_http(g, data, timeout=5):
    """Everything the server sends back until it closes (or `timeout` passes: b"<timeout>" appended)."""
    s = socket.create_connection((g.host, g.port), timeout=timeout)
    s.sendall(data)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        out += b"<timeout>"
    except ConnectionResetError:
        out += b"<reset>"
    s.close()
    return out


def raw_error(status, reason, message, code, length):
    body = json.dumps({"errors": [{"message": message, "extensions": {"code": code}}]}, separators=(",", ":")).encode()
    assert len(body) == length
    return (b"HTTP/1.1 %d %s\r\nserver: catalog-gateway\r\ncontent-type: application/json; charset=utf-8\r\n"
            b"content-length: %d\r\naccess-control-allow-origin: *\r\nconnection: close\r\n\r\n" % (status, reason, length)) + body


NOT_A_REQUEST = raw_error(400, b"Bad Request", "Bad Request: not an HTTP/1.1 request line", "BAD_REQUEST", 104)


def invalid_length(value, length):
    return raw_error(400, b"Bad Request", f'Invalid Content-Length "{value}": it must be a decimal number of bytes, '
                     "0 to 9223372036854775807", "BAD_REQUEST", length)


FORBIDDEN = (b'HTTP/1.0 403 Forbidden\r\nserver: catalog-gateway\r\ncontent-type: text/html\r\ncontent-length: 173\r\n\r\n'
             b'<html><head><meta charset=utf-8 http-equiv="Content-Language" content="en"/><link rel="stylesheet" '
             b'type="text/css" href="/error.css"/></head><body><h1>403</h1></body></html>')
LENGTH_REQUIRED = (b'HTTP/1.1 411 Length Required\r\nserver: catalog-gateway\r\ncontent-type: application/json; charset=utf-8\r\n'
                   b'content-length: 131\r\naccess-control-allow-origin: *\r\nconnection: close\r\n\r\n'
                   b'{"errors":[{"message":"Length Required: send the JSON body with a Content-Length header","extensions":{"code":"LENGTH_REQUIRED"}}]}')
POST_HEAD = b"POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\n"

RAW_CASES = [
    # Bytes libwebsockets cannot parse as a request reach the gateway as a raw socket: 400, or
    # 501 for a well-formed request line with a method lws does not know.
    ("garbage request line", b"GARBAGE\r\n\r\n", 5, NOT_A_REQUEST),
    ("binary request", bytes(range(256)), 5, NOT_A_REQUEST),
    ("4 MiB of binary", bytes(range(256)) * 16384, 5, NOT_A_REQUEST),
    ("unknown method", b"PROPFIND /graphql HTTP/1.1\r\nHost: x\r\n\r\n", 5,
     raw_error(501, b"Not Implemented", "Method PROPFIND is not implemented; use GET or POST (OPTIONS for CORS)",
               "NOT_IMPLEMENTED", 137)),
    # lws refuses a broken %-escape in the request line inside its parser, writing its own 403
    # page before any callback runs (lws_parse -> forbid -> lws_return_http_status).
    ("broken percent escape in the request line", b"GET /graphql?query=%ZZ HTTP/1.1\r\nHost: x\r\n\r\n", 5, FORBIDDEN),
    # Likewise an Upgrade other than websocket/h2c is refused by lws itself before
    # LWS_CALLBACK_HTTP_CONFIRM_UPGRADE (lws_handshake_server: "Unknown upgrade").
    ("unknown upgrade", b"GET /graphql HTTP/1.1\r\nHost: x\r\nUpgrade: foo\r\nConnection: Upgrade\r\n\r\n", 5, FORBIDDEN),
    ("chunked body", POST_HEAD + b"Transfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n", 5, LENGTH_REQUIRED),
    # Both framings (RFC 9112 6.3: an error; behind a proxy reading the other one, smuggling):
    # it used to be answered by its Content-Length.
    ("chunked and a length", POST_HEAD + b"Content-Length: 42\r\nTransfer-Encoding: chunked\r\n\r\n"
     + b'{"query":"{ catalogVersion { version } }"}', 5,
     raw_error(400, b"Bad Request", "Bad Request: both Transfer-Encoding and Content-Length", "BAD_REQUEST", 117)),
    ("content length beyond 64 bits", POST_HEAD + b"Content-Length: 99999999999999999999999\r\n\r\n{}", 5,
     invalid_length("99999999999999999999999", 177)),
    ("negative content length", POST_HEAD + b"Content-Length: -5\r\n\r\n", 5, invalid_length("-5", 156)),
    ("signed content length", POST_HEAD + b"Content-Length: +5\r\n\r\n{\"a\":1}", 5, invalid_length("+5", 156)),
    ("body over the limit by its length", POST_HEAD + b"Content-Length: 5000\r\n\r\n", 5,
     b'HTTP/1.1 413 Request Entity Too Large\r\nserver: catalog-gateway\r\ncontent-type: application/json; charset=utf-8\r\n'
     b'content-length: 113\r\naccess-control-allow-origin: *\r\nconnection: close\r\n\r\n'
     b'{"errors":[{"message":"Request body too large: 5000 bytes (limit 4096)","extensions":{"code":"BODY_TOO_LARGE"}}]}'),
    # A body shorter than announced: 408 once --keepalive-timeout seconds pass without the rest.
    ("body shorter than its length", POST_HEAD + b"Content-Length: 100\r\n\r\n{}", 5,
     raw_error(408, b"Request Timeout", f"Request body timeout: 2 of 100 bytes arrived in {BODY_TIMEOUT} s",
               "REQUEST_TIMEOUT", 118)),
    # RFC 9112 3.2: an HTTP/1.1 request without Host, or any request with two, is 400 (two
    # hosts are how a request is smuggled past a proxy that reads the other one).
    ("HTTP/1.1 without Host", b"GET /healthz HTTP/1.1\r\n\r\n", 5,
     raw_error(400, b"Bad Request", "Bad Request: an HTTP/1.1 request needs a Host header naming this server (RFC 9112 3.2)",
               "BAD_REQUEST", 149)),
    ("HTTP/1.1 with an empty Host", b"GET /healthz HTTP/1.1\r\nHost:\r\n\r\n", 5,
     raw_error(400, b"Bad Request", "Bad Request: an HTTP/1.1 request needs a Host header naming this server (RFC 9112 3.2)",
               "BAD_REQUEST", 149)),
    ("two Host headers", POST_HEAD + b"Host: other\r\nContent-Length: 42\r\n\r\n" + b'{"query":"{ catalogVersion { version } }"}', 5,
     raw_error(400, b"Bad Request", "Bad Request: more than one Host header", "BAD_REQUEST", 101)),
    ("HTTP/1.0 with two Host headers", b"GET /healthz HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 5,
     raw_error(400, b"Bad Request", "Bad Request: more than one Host header", "BAD_REQUEST", 101).replace(b"HTTP/1.1", b"HTTP/1.0", 1)),
    # Headers beyond libwebsockets' 16 KiB header buffer: lws 4.1 fails the request inside its
    # parser, with no protocol bound yet, and shuts the socket's write side before the first
    # callback (CLOSED_HTTP) runs, so no 431 can be sent: the client sees a clean close.
    ("20 KB header", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 20000 + b"\r\nConnection: close\r\n\r\n", 5, b""),
]


@pytest.mark.parametrize("name,request_bytes,timeout,expected", RAW_CASES, ids=[c[0] for c in RAW_CASES])
def test_http_raw(server, name, request_bytes, timeout, expected):
    # Date (it changes every second) and the ETag exposure of the answers written through lws
    # are checked in test_environment.py.
    answer = re.sub(rb"\r\ndate: [^\r]*|\r\naccess-control-expose-headers: etag", b"", raw_http(server, request_bytes, timeout))
    assert answer == expected
    still_serves(server)


def test_http_1_0_needs_no_host(server):
    answer = raw_http(server, b"GET /healthz HTTP/1.0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.0 200 OK\r\n"), answer[:200]


def test_websocket_upgrade_without_host_is_400(server):
    upgrade = (b"GET /graphql HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
               b"Sec-WebSocket-Protocol: graphql-transport-ws\r\n")
    refused = raw_http(server, upgrade + b"\r\n")
    assert refused.startswith(b"HTTP/1.1 400 Bad Request\r\n"), refused[:200]
    assert b"needs a Host header" in refused
    accepted = raw_http(server, upgrade + b"Host: localhost\r\n\r\n", timeout=1)
    assert accepted.startswith(b"HTTP/1.1 101 Switching Protocols\r\n"), accepted[:200]
    still_serves(server)


def test_expect_100_continue(server):
    # RFC 9110 10.1.1: the client waits for 100 (Continue) before sending the body; an answer
    # decided from the headers (413 here) goes at once. Neither was sent before: the client
    # waited out its own timer (curl: 1 s), and the 413 came only after --keepalive-timeout.
    body = json.dumps({"query": VERSION}).encode()
    s = socket.create_connection((server.host, server.port), timeout=5)
    s.sendall(b"POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\n"
              b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
    assert s.recv(4096) == b"HTTP/1.1 100 Continue\r\n\r\n"
    s.sendall(body)
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    assert out.startswith(b"HTTP/1.1 200 OK\r\n") and out.endswith(json.dumps(VERSION_DATA, separators=(",", ":")).encode())
    start = time.monotonic()
    out = raw_http(server, POST_HEAD + b"Expect: 100-continue\r\nContent-Length: 5000000\r\n\r\n", timeout=5)
    assert out.startswith(b"HTTP/1.1 413 Request Entity Too Large\r\n") and b"connection: close" in out, out
    assert time.monotonic() - start < BODY_TIMEOUT
    still_serves(server)


def version_post(close):
    body = json.dumps({"query": VERSION}).encode()
    return (b"POST /graphql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n"
            % (len(body), b"Connection: close\r\n" if close else b"")) + body


VERSION_GET = b"GET /graphql?query=" + VERSION.replace(" ", "+").encode() + b" HTTP/1.1\r\nHost: localhost\r\n"
PIPELINED = [
    ("POST, POST", version_post(False) + version_post(True)),
    ("GET, POST", VERSION_GET + b"\r\n" + version_post(True)),
    ("POST, GET", version_post(False) + VERSION_GET + b"Connection: close\r\n\r\n"),
    ("GET, GET", VERSION_GET + b"\r\n" + VERSION_GET + b"Connection: close\r\n\r\n"),
    ("POST and a CRLF", version_post(True) + b"\r\n"),
    ("POST and garbage", version_post(True) + b"GARBAGE"),
]


@pytest.mark.parametrize("name,request_bytes", PIPELINED, ids=[c[0] for c in PIPELINED])
def test_http_pipelined_requests(server, name, request_bytes):
    # Requests sent before the first is answered, in one packet. lws 4.1 offers the later bytes
    # to the request being answered (calling BODY_COMPLETION or HTTP again) in a loop that used
    # to take the service thread for good, queueing jobs without end (the whole server hung and
    # grew by 100 MB/s), or to answer the first POST with the second's empty body (400). Now the
    # first request gets its own answer, then either the next its own or the connection closes
    # (the client retries what went unanswered, RFC 9112 9.3.2); nothing waits.
    out = raw_http(server, request_bytes, timeout=5)
    assert b"<timeout>" not in out and b"<reset>" not in out, out
    answers = out.split(b"HTTP/1.1 ")[1:]
    assert answers and answers[0].startswith(b"200 OK\r\n"), out
    assert answers[0].split(b"\r\n\r\n", 1)[1] == json.dumps(VERSION_DATA, separators=(",", ":")).encode(), out
    still_serves(server)
