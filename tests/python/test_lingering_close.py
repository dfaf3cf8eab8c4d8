"""An HTTP answer after which the gateway closes the connection (a pipelined request, a 400, a
413, a body timeout) while the client's request bytes are still unread: closing a socket with
unread input makes the kernel reset the connection, and a reset throws away whatever of the
answer the client had not read yet (RFC 9112 9.6, "lingering close"). lws 4.1 shuts the write
side first but then closes at once (the wait it has for this is skipped: it marks the socket
unusable just before testing that mark)."""
import json
import os
import socket
import time

from gateway_server import catalog, gateway_factory  # noqa: F401 (fixtures)


def post(query):
    body = json.dumps({"query": query}).encode()
    return (b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


def sized_query(size):
    """A document of about `size` bytes whose answer is about as large: one alias that long."""
    return "{ %s: __typename }" % ("c" * max(1, size - 21))


def read_slowly(s, pause):
    """Reads in small pieces with a pause before the first; returns the bytes and the error."""
    time.sleep(pause)
    data = b""
    try:
        while True:
            d = s.recv(4096)
            if not d:
                return data, None
            data += d
    except OSError as e:
        return data, e


def answer_length(data):
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")))
    return head, length, len(body)


def client(port, rcvbuf=8192):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    s.settimeout(15)
    return s


def test_a_pipelined_answer_arrives_whole_before_the_close(gateway_factory):
    """A 200 KB answer to the first of four pipelined POSTs (the others 64–128 KB each, unread
    when the gateway closes after the first answer), read by a slow client: it got 98,544 of
    200,240 bytes, then ECONNRESET."""
    g = gateway_factory("--max-document-bytes", "400000")
    before = settled_descriptors(g)
    for _ in range(3):
        s = client(g.port)
        s.sendall(b"".join(post(sized_query(n)) for n in (200000, 65523, 131072, 65524)))
        data, error = read_slowly(s, 0.5)
        s.close()
        head, length, got = answer_length(data)
        assert head.startswith(b"HTTP/1.1 200 ") and b"connection: close" in head.lower(), head
        assert (got, error) == (length, None)
    # The lingering sockets end with the clients' close (the tick reads it within 0.1 s).
    deadline = time.time() + 3
    while open_descriptors(g) > before and time.time() < deadline:
        time.sleep(0.05)
    assert open_descriptors(g) == before


def test_a_client_that_never_closes_is_let_go_after_the_linger(gateway_factory):
    """A client that sends a pipelined request and then neither reads nor closes holds its
    lingering socket only until the linger's end (5 s), not for ever."""
    g = gateway_factory()
    before = settled_descriptors(g)
    s = client(g.port)
    s.sendall(post("{ catalogVersion { version } }") * 2)
    time.sleep(0.5)
    assert open_descriptors(g) == before + 1
    deadline = time.time() + 8
    while open_descriptors(g) > before and time.time() < deadline:
        time.sleep(0.1)
    assert open_descriptors(g) == before
    data, error = read_slowly(s, 0)
    s.close()
    assert data.startswith(b"HTTP/1.1 200 ") and error is None


def open_descriptors(g):
    return len(os.listdir(f"/proc/{g.proc.pid}/fd"))


def settled_descriptors(g):
    """The server's descriptors once both workers have opened their catalog connections: a
    query on each, on connections of its own that close as usual."""
    for _ in range(4):
        with socket.create_connection(("127.0.0.1", g.port)) as s:
            s.sendall(post("{ catalogVersion { version } }").replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1))
            while s.recv(65536):
                pass
    time.sleep(0.2)
    return open_descriptors(g)
