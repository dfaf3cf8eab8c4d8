#!/usr/bin/env python3
"""Open-loop load on a running gateway (docs/FAULTS.md, "Found in stop 33's audit: overload").

New operations start at a fixed rate whatever the server answers (unlike cg-load, which keeps a
number in flight), over WebSockets (spread over --conns connections) or HTTP POST (a connection
per request, as many open at once as the load needs). Meanwhile a probe client sends one small
query at a time on a connection of its own and its latency is recorded, and the server's RSS
(/proc/PID/status) is sampled. Prints one line per second and a JSON summary at the end; after
the load it keeps probing for --after seconds, to see the server recover.

    overload.py --port 4000 --pid PID --mode ws --rate 500 --seconds 20 --kind cold
"""
import argparse
import asyncio
import base64
import json
import os
import struct
import sys
import time

SEARCH = ("search(text: \"cooke 32mm\", first: 50) "
          "{ totalCount nodes { id sku name thumbnail manufacturer { name logo } } }")
CATEGORY = ("category(id: \"145\") { id title path { id title } children { id title } products(first: 50) "
            "{ totalCount pageInfo { hasNextPage endCursor } nodes { id sku name displayOrder thumbnail images "
            "description manufacturer { name logo } specs { key label value } kit { id name quantity } } } }")
PROBE = "{ product(id: \"1\") { id name } }"


def document(kind, body, n):
    # cold: each operation's document differs (an alias), so neither the document cache nor the
    # answer cache has it; same: one document, answered from each worker's answer cache.
    return "{ a%d: %s }" % (n, body) if kind == "cold" else "{ a: %s }" % body


def rss_kib(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM", "Threads")):
                k, v = line.split(":", 1)
                out[k] = int(v.split()[0])
    return out


class WS:
    """A minimal graphql-transport-ws client on asyncio streams (mask key 0: no per-byte work)."""

    async def open(self, host, port, source="127.0.0.1"):
        self.r, self.w = await asyncio.open_connection(host, port, limit=1 << 26, local_addr=(source, 0))
        key = base64.b64encode(os.urandom(16)).decode()
        self.w.write((f"GET /graphql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                      f"Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n").encode())
        head = await self.r.readuntil(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode())
        self.send({"type": "connection_init"})
        m = await self.recv()
        assert m.get("type") == "connection_ack", m
        return self

    def send(self, obj):
        p = json.dumps(obj).encode()
        n = len(p)
        if n < 126:
            h = bytes([0x81, 0x80 | n])
        elif n < 65536:
            h = bytes([0x81, 0x80 | 126]) + struct.pack("!H", n)
        else:
            h = bytes([0x81, 0x80 | 127]) + struct.pack("!Q", n)
        self.w.write(h + b"\0\0\0\0" + p)

    async def recv(self):
        """The next text message as JSON, or ("close", code)."""
        while True:
            b0, b1 = await self.r.readexactly(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", await self.r.readexactly(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", await self.r.readexactly(8))[0]
            p = await self.r.readexactly(n)
            op = b0 & 0x0F
            if op == 0x8:
                return {"type": "close", "code": struct.unpack("!H", p[:2])[0] if len(p) >= 2 else None}
            if op == 0x9:
                self.w.write(bytes([0x8A, 0x80 | len(p)]) + b"\0\0\0\0" + p)
                continue
            if op == 0x1:
                return json.loads(p)


class Stats:
    def __init__(self):
        self.sent = self.answered = self.outstanding = 0
        self.errors = {}
        self.closes = {}
        self.latencies = []  # (t, seconds) of answered operations

    def error(self, code):
        self.errors[code] = self.errors.get(code, 0) + 1


def codes_of(payload):
    errs = payload.get("errors") or [] if isinstance(payload, dict) else payload or []
    return [((e.get("extensions") or {}).get("code") or e.get("message", "")[:40]) for e in errs]


async def ws_load(args, stats, stop):
    conns = [await WS().open(args.host, args.port) for _ in range(args.conns)]
    started = {}

    async def reader(i, ws):
        while True:
            try:
                m = await ws.recv()
            except (asyncio.IncompleteReadError, ConnectionError):
                stats.closes["eof"] = stats.closes.get("eof", 0) + 1
                return
            t = m.get("type")
            if t == "close":
                stats.closes[m["code"]] = stats.closes.get(m["code"], 0) + 1
                return
            if t == "next":
                for c in codes_of(m["payload"]):
                    stats.error(c)
            elif t == "error":
                for c in codes_of(m["payload"]):
                    stats.error(c)
                stats.outstanding -= 1
                started.pop((i, m["id"]), None)
            elif t == "complete":
                stats.answered += 1
                stats.outstanding -= 1
                t0 = started.pop((i, m["id"]), None)
                if t0:
                    stats.latencies.append((time.monotonic(), time.monotonic() - t0))

    readers = [asyncio.create_task(reader(i, ws)) for i, ws in enumerate(conns)]
    body = SEARCH if args.query == "search" else CATEGORY
    n = 0
    t0 = time.monotonic()
    filler = "#" + "x" * max(0, args.pad) + "\n" if args.pad else ""
    while not stop.is_set():
        due = int((time.monotonic() - t0) * args.rate)
        while n < due:
            i = n % len(conns)
            ws = conns[i]
            oid = str(n)
            started[(i, oid)] = time.monotonic()
            ws.send({"id": oid, "type": "subscribe", "payload": {"query": filler + document(args.kind, body, n)}})
            n += 1
            stats.sent += 1
            stats.outstanding += 1
        await asyncio.sleep(0.002)
    return conns, readers


async def http_one(args, stats, n, body, filler):
    t0 = time.monotonic()
    stats.sent += 1
    stats.outstanding += 1
    try:
        r, w = await asyncio.open_connection(args.host, args.port)
        payload = json.dumps({"query": filler + document(args.kind, body, n)}).encode()
        w.write(b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(payload) + payload)
        data = await r.read()
        w.close()
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
        if status == 200:
            stats.answered += 1
            stats.latencies.append((time.monotonic(), time.monotonic() - t0))
            b = json.loads(data.split(b"\r\n\r\n", 1)[1])
            for c in codes_of(b):
                stats.error(c)
        else:
            try:
                b = json.loads(data.split(b"\r\n\r\n", 1)[1])
                code = codes_of(b)[0] if codes_of(b) else ""
            except Exception:
                code = ""
            stats.error(f"HTTP {status} {code}")
    except (ConnectionError, OSError) as e:
        stats.error(type(e).__name__)
    finally:
        stats.outstanding -= 1


async def http_load(args, stats, stop):
    body = SEARCH if args.query == "search" else CATEGORY
    filler = "#" + "x" * max(0, args.pad) + "\n" if args.pad else ""
    tasks = set()
    n = 0
    t0 = time.monotonic()
    while not stop.is_set():
        due = int((time.monotonic() - t0) * args.rate)
        while n < due:
            t = asyncio.create_task(http_one(args, stats, n, body, filler))
            tasks.add(t)
            t.add_done_callback(tasks.discard)
            n += 1
        await asyncio.sleep(0.002)
    return tasks


async def probe(args, lat, stop_all):
    if args.probe == "http":
        async def once():
            r, w = await asyncio.open_connection(args.host, args.port, local_addr=(args.probe_source, 0))
            payload = json.dumps({"query": PROBE}).encode()
            w.write(b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(payload) + payload)
            data = await r.read()
            w.close()
            return data.split(b" ", 2)[1].decode()
    else:
        ws = await WS().open(args.host, args.port, args.probe_source)
        k = [0]

        async def once():
            k[0] += 1
            ws.send({"id": f"p{k[0]}", "type": "subscribe", "payload": {"query": PROBE}})
            out = "ok"
            while True:
                m = await ws.recv()
                if m["type"] == "error":
                    out = "error " + ",".join(codes_of(m["payload"]))
                if m["type"] in ("complete", "error", "close"):
                    return out if m["type"] != "close" else f"close {m['code']}"
    while not stop_all.is_set():
        t0 = time.monotonic()
        try:
            out = await asyncio.wait_for(once(), 120)
        except Exception as e:  # noqa: BLE001
            out = type(e).__name__
        lat.append((time.monotonic(), time.monotonic() - t0, out))
        await asyncio.sleep(args.probe_interval)


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--mode", choices=["ws", "http"], default="ws")
    ap.add_argument("--query", choices=["search", "category"], default="search")
    ap.add_argument("--kind", choices=["cold", "same"], default="cold")
    ap.add_argument("--rate", type=float, required=True, help="new operations per second")
    ap.add_argument("--conns", type=int, default=10, help="WebSocket connections the load is spread over")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--after", type=float, default=10, help="seconds of probing after the load stops")
    ap.add_argument("--pad", type=int, default=0, help="bytes of comment added to each document")
    ap.add_argument("--probe", choices=["ws", "http"], default="ws")
    ap.add_argument("--probe-interval", type=float, default=0.1)
    ap.add_argument("--probe-source", default="127.0.0.2", help="the probe's address (the load's is 127.0.0.1)")
    args = ap.parse_args()

    stats = Stats()
    lat = []
    stop, stop_all = asyncio.Event(), asyncio.Event()
    base_rss = rss_kib(args.pid)
    # Baseline probe latency, before any load.
    pt = asyncio.create_task(probe(args, lat, stop_all))
    await asyncio.sleep(2)
    baseline = [x[1] for x in lat]
    lt = asyncio.create_task(ws_load(args, stats, stop) if args.mode == "ws" else http_load(args, stats, stop))
    t0 = time.monotonic()
    peak = 0
    series = []
    while time.monotonic() - t0 < args.seconds + args.after:
        await asyncio.sleep(1)
        el = time.monotonic() - t0
        if el >= args.seconds and not stop.is_set():
            stop.set()
        try:
            r = rss_kib(args.pid)
        except FileNotFoundError:
            print("server gone", file=sys.stderr)
            break
        peak = max(peak, r["VmRSS"])
        recent = [x[1] for x in lat if x[0] > time.monotonic() - 1]
        row = {"t": round(el), "sent": stats.sent, "answered": stats.answered, "outstanding": stats.outstanding,
               "rss_mib": round(r["VmRSS"] / 1024, 1),
               "probe_ms_max": round(1000 * max(recent), 1) if recent else None,
               "probe_last": lat[-1][2] if lat else None, "errors": dict(stats.errors), "closes": dict(stats.closes)}
        series.append(row)
        print(json.dumps(row), flush=True)
        if r["VmRSS"] > args_limit_kib:
            print("RSS over the safety limit: stopping", file=sys.stderr)
            break
    stop.set()
    stop_all.set()
    during = [x[1] for x in lat if t0 + 2 < x[0] < t0 + args.seconds]
    after = [x[1] for x in lat if x[0] > t0 + args.seconds + args.after - 3]
    served = [x[1] for x in stats.latencies]
    summary = {
        "args": vars(args), "rss_mib_before": round(base_rss["VmRSS"] / 1024, 1), "rss_mib_peak": round(peak / 1024, 1),
        "rss_mib_end": series[-1]["rss_mib"] if series else None,
        "sent": stats.sent, "answered": stats.answered, "outstanding_end": stats.outstanding,
        "errors": stats.errors, "closes": stats.closes,
        "load_latency_ms": {"p50": pct(served, .5) and round(1000 * pct(served, .5), 1),
                            "p99": pct(served, .99) and round(1000 * pct(served, .99), 1)},
        "probe_ms": {"baseline_p50": round(1000 * pct(baseline, .5), 2) if baseline else None,
                     "during_p50": round(1000 * pct(during, .5), 1) if during else None,
                     "during_max": round(1000 * max(during), 1) if during else None,
                     "after_p50": round(1000 * pct(after, .5), 2) if after else None,
                     "probes_failed": sum(1 for x in lat if x[2] not in ("ok", "200"))},
    }
    print(json.dumps(summary), flush=True)
    os._exit(0)


args_limit_kib = int(os.environ.get("OVERLOAD_RSS_LIMIT_MIB", "6000")) * 1024

if __name__ == "__main__":
    asyncio.run(main())
