"""Gateway benchmarks against a running server (`catalog-gateway serve`), with a lean raw-socket
WebSocket client (no asyncio) so the client is not what is measured.

  rtt      round trips per second for a small query on ONE graphql-transport-ws connection
           with N operations kept in flight (default 100)
  fanout   time from a version commit (sqlite3 shell, a separate process) to the `next` on
           each of N subscribed connections (default 1000)

Examples:
  .venv/bin/python tests/bench/gateway_bench.py rtt --port 4000 --seconds 10
  .venv/bin/python tests/bench/gateway_bench.py fanout --port 4000 --db demo/catalog.sqlite
"""
import argparse
import json
import os
import resource
import select
import socket
import statistics
import subprocess
import time

MASK = b"\x00\x00\x00\x00"  # a zero mask keeps the client cheap; the server unmasks as usual


def frame(text):
    data = text.encode()
    n = len(data)
    if n < 126:
        head = bytes([0x81, 0x80 | n])
    elif n < 65536:
        head = bytes([0x81, 0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([0x81, 0x80 | 127]) + n.to_bytes(8, "big")
    return head + MASK + data


class Conn:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall((f"GET /graphql HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                           "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head
        self.send('{"type":"connection_init"}')
        assert json.loads(self.recv_blocking())["type"] == "connection_ack"

    def send(self, text):
        self.sock.sendall(frame(text))

    def messages(self):
        """Parses complete frames from the buffer (server frames are unmasked, unfragmented)."""
        out = []
        b = self.buf
        i = 0
        while len(b) - i >= 2:
            n = b[i + 1] & 0x7F
            off = 2
            if n == 126:
                if len(b) - i < 4:
                    break
                n = int.from_bytes(b[i + 2:i + 4], "big"); off = 4
            elif n == 127:
                if len(b) - i < 10:
                    break
                n = int.from_bytes(b[i + 2:i + 10], "big"); off = 10
            if len(b) - i < off + n:
                break
            op = b[i] & 0x0F
            payload = b[i + off:i + off + n]
            if op == 0x9:
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + MASK + payload)
            elif op == 0x1:
                out.append(payload)
            i += off + n
        self.buf = b[i:]
        return out

    def recv_blocking(self):
        while True:
            m = self.messages()
            if m:
                assert len(m) == 1
                return m[0]
            d = self.sock.recv(65536)
            if not d:
                raise EOFError
            self.buf += d


def rtt(args):
    c = Conn(args.host, args.port)
    q = json.dumps(args.query)
    template = '{"id":"%d","type":"subscribe","payload":{"query":' + q + '}}'
    sent = {}
    latencies = []
    errors = 0
    next_id = 0
    batch = b""
    for _ in range(args.inflight):
        sent[next_id] = time.perf_counter()
        batch += frame(template % next_id)
        next_id += 1
    c.sock.sendall(batch)
    t0 = time.perf_counter()
    stop_at = t0 + args.seconds
    done = 0
    while sent:
        d = c.sock.recv(1 << 20)
        if not d:
            raise EOFError
        c.buf += d
        now = time.perf_counter()
        out = b""
        for raw in c.messages():
            if raw.startswith(b'{"id":') and raw.endswith(b'"type":"complete"}'):
                i = int(raw[7:raw.index(b'"', 7)])
                latencies.append(now - sent.pop(i))
                done += 1
                if now < stop_at:
                    sent[next_id] = now
                    out += frame(template % next_id)
                    next_id += 1
            elif b'"type":"next"' not in raw or b'"errors"' in raw:
                errors += 1
        if out:
            c.sock.sendall(out)
    elapsed = time.perf_counter() - t0
    latencies.sort()
    print(f"rtt: {done} operations in {elapsed:.2f}s on one connection, {args.inflight} in flight: "
          f"{done / elapsed:,.0f} round trips/s; latency p50 {latencies[len(latencies) // 2] * 1000:.2f} ms, "
          f"p99 {latencies[int(len(latencies) * 0.99)] * 1000:.2f} ms; errors {errors}")


def fanout(args):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    conns = [Conn(args.host, args.port) for _ in range(args.connections)]
    sub = '{"id":"v","type":"subscribe","payload":{"query":"subscription { catalogVersion { version } }"}}'
    for c in conns:
        c.send(sub)
    versions = {json.loads(c.recv_blocking())["payload"]["data"]["catalogVersion"]["version"] for c in conns}
    assert len(versions) == 1, versions
    current = versions.pop()
    print(f"fanout: {len(conns)} connections subscribed at version {current}")
    ep = select.epoll()
    by_fd = {c.sock.fileno(): c for c in conns}
    for fd in by_fd:
        ep.register(fd, select.EPOLLIN)
    lasts = []
    for r in range(args.rounds):
        new = current + 1 + r
        time.sleep(0.3)
        start = time.perf_counter()
        subprocess.run(["sqlite3", args.db, f"INSERT INTO version (versionid, updatecatalogrow, updateassetrow) "
                                            f"VALUES ({new}, 0, 0);"], check=True)
        committed = time.perf_counter()
        arrivals = {}
        deadline = committed + 30
        while len(arrivals) < len(conns) and time.perf_counter() < deadline:
            for fd, _ in ep.poll(1):
                now = time.perf_counter()
                c = by_fd[fd]
                c.buf += c.sock.recv(65536)
                for raw in c.messages():
                    m = json.loads(raw)
                    assert m["payload"]["data"]["catalogVersion"]["version"] == new, m
                    arrivals[fd] = now
        lat = sorted(t - committed for t in arrivals.values())
        assert len(lat) == len(conns), f"only {len(lat)} of {len(conns)} got the next"
        lasts.append(lat[-1])
        print(f"  commit {r + 1}: sqlite3 took {(committed - start) * 1000:.1f} ms; commit→next first "
              f"{lat[0] * 1000:.1f} ms, p50 {lat[len(lat) // 2] * 1000:.1f} ms, p99 {lat[int(len(lat) * 0.99)] * 1000:.1f} ms, "
              f"last {lat[-1] * 1000:.1f} ms")
    print(f"fanout: {len(conns)} connections, {args.rounds} commits: commit→last next median "
          f"{statistics.median(lasts) * 1000:.1f} ms, worst {max(lasts) * 1000:.1f} ms")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = p.add_subparsers(dest="cmd", required=True)
    r = sp.add_parser("rtt")
    r.add_argument("--host", default="127.0.0.1")
    r.add_argument("--port", type=int, default=4000)
    r.add_argument("--inflight", type=int, default=100)
    r.add_argument("--seconds", type=float, default=10)
    r.add_argument("--query", default="{ catalogVersion { version } }")
    f = sp.add_parser("fanout")
    f.add_argument("--host", default="127.0.0.1")
    f.add_argument("--port", type=int, default=4000)
    f.add_argument("--db", required=True)
    f.add_argument("--connections", type=int, default=1000)
    f.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    rtt(args) if args.cmd == "rtt" else fanout(args)


if __name__ == "__main__":
    main()
