#!/usr/bin/env python3
"""`make soak`: many WebSocket clients against the real server for minutes.

Every connection (graphql-transport-ws; every other one with permessage-deflate) subscribes to
catalogVersion, every other one also to catalogChanges(sinceVersion: the version it started
at), and sends a mix of queries (category pages, products by id, searches, small lists) with
random think times. A separate writer process commits a product edit plus a new version row
at random intervals, longer than the server's poll interval, so every subscriber must see
every version.

Reported, and the exit status is 1 unless all hold:
  errors = 0      unanswered or failed queries, `error` messages, unexpected closes
  missed = 0      a catalogVersion subscriber that did not get some committed version, in
                  order; a catalogChanges subscriber whose sets skip a version or lack the
                  product edited in it
  RSS flat        the server's resident memory at the end is within max(16 MiB, 10%) of
                  its value after the warm-up (the first 15 s of traffic)
"""
import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

from websockets.client import connect
from websockets.exceptions import ConnectionClosed

VERSION_SUB = "subscription { catalogVersion { version } }"
CHANGES_SUB = ("subscription($v: Int) { catalogChanges(sinceVersion: $v) { version products { id name } "
               "removedProductIds categories { id } removedCategoryIds } }")
CATEGORY_PAGE = ("query($c: ID!, $after: String) { products(filter: {categoryId: $c, includeDescendants: true}, "
                 "first: 20, after: $after) { edges { cursor node { id sku name thumbnail manufacturer { name } "
                 "category { id title } } } pageInfo { hasNextPage endCursor } } }")
PRODUCT = ("query($id: ID!) { product(id: $id) { id sku name description images videos { kind url } "
           "specs { key label value } kit { id name quantity } manufacturer { name } category { id } } }")
SEARCH = "query($t: String!) { search(text: $t, first: 20) { edges { node { id name } } pageInfo { hasNextPage } } }"
LISTS = ["{ categories { id title children { id title } } }", "{ alphabet { letter count } }",
         "{ manufacturers { name } }", "{ catalogVersion { version catalogRow assetRow } }"]
WORDS = ["camera", "lens", "arri", "light", "tripod", "monitor", "battery", "zoom", "led", "cine", "soak", "edit",
         "mini", "prime", "stand", "cable"]
WARMUP_SECONDS = 15
MIB = 1024


# MARK: - The writer (a separate process)


def writer_main(args):
    """Commits one product edit plus a version row every min-gap..max-gap seconds and prints
    each as a JSON line."""
    rng = random.Random(args.seed)
    db = sqlite3.connect(args.db, timeout=10, isolation_level=None)
    ids = [r[0] for r in db.execute("SELECT keyid FROM Product_Catalog")]
    end = time.time() + args.seconds
    n = 0
    while True:
        time.sleep(rng.uniform(args.min_gap, args.max_gap))
        if time.time() >= end:
            break
        n += 1
        product = rng.choice(ids)
        name = f"Soak edit {n}"
        db.execute("BEGIN IMMEDIATE")
        version = db.execute("SELECT COALESCE(MAX(versionid), 0) + 1 FROM version").fetchone()[0]
        db.execute("UPDATE Product_Catalog SET Product = ? WHERE keyid = ?", (name, product))
        db.execute("INSERT INTO version VALUES (?, '', '')", (version,))
        db.execute("COMMIT")
        print(json.dumps({"version": version, "product": str(product), "t": time.time()}), flush=True)
    db.close()


# MARK: - The driver


class Stats:
    def __init__(self):
        self.errors = []
        self.error_count = 0
        self.latencies = []
        self.queries = 0

    def error(self, text):
        self.error_count += 1
        if len(self.errors) < 20:
            self.errors.append(text)


class Client:
    def __init__(self, n, url, stats, rng, products, categories, compressed, changes):
        self.n, self.url, self.stats, self.rng = n, url, stats, rng
        self.products, self.categories = products, categories
        self.compressed, self.changes = compressed, changes
        self.versions = []  # catalogVersion values received, in order
        self.sets = []  # (version, [product ids]) of catalogChanges sets, in order
        self.since = None
        self.pending = {}
        self.next_id = 0
        self.ws = None
        self.reader = None
        self.closing = False

    async def open(self):
        self.ws = await connect(self.url, subprotocols=["graphql-transport-ws"],
                                compression="deflate" if self.compressed else None,
                                max_size=4 << 20, open_timeout=30, ping_interval=None)
        await self.ws.send(json.dumps({"type": "connection_init"}))
        ack = json.loads(await asyncio.wait_for(self.ws.recv(), 30))
        if ack != {"type": "connection_ack"}:
            raise RuntimeError(f"no ack: {ack}")
        self.reader = asyncio.create_task(self.read())
        first = asyncio.get_running_loop().create_future()
        self.pending["v"] = first
        await self.send({"id": "v", "type": "subscribe", "payload": {"query": VERSION_SUB}})
        self.since = await asyncio.wait_for(first, 30)
        if self.changes:
            await self.send({"id": "c", "type": "subscribe",
                             "payload": {"query": CHANGES_SUB, "variables": {"v": self.since}}})

    async def send(self, message):
        await self.ws.send(json.dumps(message))

    async def read(self):
        try:
            async for text in self.ws:
                m = json.loads(text)
                mid, kind = m.get("id"), m.get("type")
                if kind == "next" and mid == "v":
                    payload = m["payload"]
                    if "errors" in payload:
                        self.stats.error(f"conn {self.n}: catalogVersion errors {payload['errors']}")
                        continue
                    v = payload["data"]["catalogVersion"]["version"]
                    self.versions.append(v)
                    f = self.pending.pop("v", None)
                    if f and not f.done():
                        f.set_result(v)
                elif kind == "next" and mid == "c":
                    payload = m["payload"]
                    if "errors" in payload:
                        self.stats.error(f"conn {self.n}: catalogChanges errors {payload['errors']}")
                        continue
                    s = payload["data"]["catalogChanges"]
                    self.sets.append((s["version"], {p["id"] for p in s["products"]}))
                elif kind == "next":
                    f = self.pending.get(mid)
                    if f and not f.done():
                        f.set_result(m["payload"])
                elif kind == "complete":
                    if mid in ("v", "c"):
                        self.stats.error(f"conn {self.n}: subscription {mid} completed by the server")
                    f = self.pending.pop(mid, None)
                    if f and not f.done():
                        f.set_exception(RuntimeError("complete without next"))
                elif kind == "error":
                    self.stats.error(f"conn {self.n}: error message {m}")
                    f = self.pending.pop(mid, None)
                    if f and not f.done():
                        f.set_exception(RuntimeError("error"))
                elif kind == "ping":
                    await self.send({"type": "pong"})
        except ConnectionClosed as e:
            if not self.closing:
                self.stats.error(f"conn {self.n}: closed by the server: {e.rcvd.code if e.rcvd else None} "
                                 f"{e.rcvd.reason if e.rcvd else ''}")
        for f in self.pending.values():
            if not f.done():
                f.set_exception(RuntimeError("connection closed"))

    def pick_query(self):
        r = self.rng.random()
        if r < 0.35:
            return CATEGORY_PAGE, {"c": self.rng.choice(self.categories)}
        if r < 0.7:
            return PRODUCT, {"id": self.rng.choice(self.products)}
        if r < 0.9:
            words = self.rng.sample(WORDS, self.rng.choice([1, 1, 2]))
            return SEARCH, {"t": " ".join(words)}
        return self.rng.choice(LISTS), {}

    async def query(self, text, variables):
        self.next_id += 1
        qid = f"q{self.next_id}"
        f = asyncio.get_running_loop().create_future()
        self.pending[qid] = f
        t0 = time.perf_counter()
        await self.send({"id": qid, "type": "subscribe", "payload": {"query": text, "variables": variables}})
        try:
            payload = await asyncio.wait_for(f, 15)
        finally:
            self.pending.pop(qid, None)
        self.stats.latencies.append(time.perf_counter() - t0)
        self.stats.queries += 1
        return payload

    async def traffic(self, stop):
        while not stop.is_set():
            text, variables = self.pick_query()
            try:
                payload = await self.query(text, variables)
            except Exception as e:  # noqa: BLE001 (counted)
                if stop.is_set() and isinstance(e, RuntimeError):
                    return
                self.stats.error(f"conn {self.n}: query {text[:40]!r} {variables}: {type(e).__name__} {e}")
                if self.ws.closed:
                    return
                continue
            if "errors" in payload or payload.get("data") is None:
                self.stats.error(f"conn {self.n}: {text[:40]!r} {variables}: {payload.get('errors')}")
            elif text == PRODUCT and payload["data"]["product"] is None:
                self.stats.error(f"conn {self.n}: product {variables['id']} is null")
            elif text == CATEGORY_PAGE and self.rng.random() < 0.5:
                info = payload["data"]["products"]["pageInfo"]
                if info["hasNextPage"]:
                    try:
                        more = await self.query(text, {**variables, "after": info["endCursor"]})
                        if "errors" in more:
                            self.stats.error(f"conn {self.n}: next page: {more['errors']}")
                    except Exception as e:  # noqa: BLE001
                        if not stop.is_set():
                            self.stats.error(f"conn {self.n}: next page: {type(e).__name__} {e}")
            try:
                await asyncio.wait_for(stop.wait(), self.rng.uniform(0.1, 1.0))
            except asyncio.TimeoutError:
                pass

    async def close(self):
        self.closing = True
        await self.ws.close()
        if self.reader:
            await self.reader


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def start_server(binary, db, log):
    proc = subprocess.Popen([binary, "serve", "--db", db, "--port", "0", "--log-level", "warn", "--compression"],
                            stdout=subprocess.PIPE, stderr=log)
    line = proc.stdout.readline().decode()
    if not line.startswith("catalog-gateway listening on ws://"):
        raise SystemExit(f"soak: the server did not start: {line!r}")
    url = line.split()[3]
    return proc, url


def verify(clients, commits, stats):
    """Counts missed notifications against the writer's commits."""
    committed = [c["version"] for c in commits]
    edited = {c["version"]: c["product"] for c in commits}
    missed_versions = missed_sets = missing_products = disorder = 0
    for c in clients:
        expected = [v for v in committed if v > c.since]
        seen = c.versions[1:]
        if seen != sorted(set(seen)):
            disorder += 1
            stats.error(f"conn {c.n}: catalogVersion values not strictly increasing: {seen[:20]}")
        missed_versions += len(set(expected) - set(seen))
        if c.changes:
            versions = [v for v, _ in c.sets]
            if versions != sorted(set(versions)):
                disorder += 1
                stats.error(f"conn {c.n}: catalogChanges versions not strictly increasing: {versions[:20]}")
            # The first set is (since, current] at once; afterwards one set per version.
            got = set(versions[1:]) | ({versions[0]} if versions and versions[0] > c.since else set())
            missed_sets += len(set(expected) - got)
            previous = c.since
            for v, ids in c.sets:
                for w in expected:
                    if previous < w <= v and edited[w] not in ids:
                        missing_products += 1
                        if missing_products <= 5:
                            stats.error(f"conn {c.n}: set ({previous}, {v}] lacks product {edited[w]} edited in {w}")
                previous = max(previous, v)
    return missed_versions, missed_sets, missing_products, disorder


async def drive(args, url, pid, products, categories, db):
    stats = Stats()
    rng = random.Random(args.seed)
    clients = [Client(i, url, stats, random.Random(rng.random()), products, categories,
                      compressed=i % 2 == 0, changes=i % 2 == 1) for i in range(args.connections)]
    gate = asyncio.Semaphore(20)

    async def open_one(c):
        async with gate:
            try:
                await c.open()
            except Exception as e:  # noqa: BLE001 (counted)
                stats.error(f"conn {c.n}: could not open: {type(e).__name__} {e}")
                raise

    t_setup = time.time()
    await asyncio.gather(*(open_one(c) for c in clients))
    setup_seconds = time.time() - t_setup
    rss_setup = rss_kib(pid)

    writer = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--writer", "--db", db, "--seconds", str(args.seconds),
        "--min-gap", str(args.min_gap), "--max-gap", str(args.max_gap), "--seed", str(args.seed),
        stdout=asyncio.subprocess.PIPE)
    commits = []

    async def read_writer():
        async for line in writer.stdout:
            commits.append(json.loads(line))

    writer_reader = asyncio.create_task(read_writer())
    stop = asyncio.Event()
    traffic = [asyncio.create_task(c.traffic(stop)) for c in clients]
    samples = []
    t0 = time.time()
    rss_warm = None
    tick = 0
    while time.time() - t0 < args.seconds:
        await asyncio.sleep(1)
        tick += 1
        if tick % 10 == 0:
            samples.append((round(time.time() - t0), rss_kib(pid)))
        if rss_warm is None and time.time() - t0 >= min(WARMUP_SECONDS, args.seconds / 4):
            rss_warm = rss_kib(pid)
    await writer.wait()
    await writer_reader
    # Let the last version reach everyone (or time out and count it missed).
    final = commits[-1]["version"] if commits else None
    deadline = time.time() + 5
    while final is not None and time.time() < deadline:
        if all(c.versions and c.versions[-1] >= final for c in clients) and \
                all(not c.changes or (c.sets and c.sets[-1][0] >= final) for c in clients):
            break
        await asyncio.sleep(0.1)
    stop.set()
    await asyncio.gather(*traffic)
    rss_end = rss_kib(pid)
    await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    return stats, clients, commits, setup_seconds, (rss_setup, rss_warm or rss_setup, rss_end, samples)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=".build/release/catalog-gateway")
    p.add_argument("--seconds", type=int, default=int(os.environ.get("SOAK_SECONDS", 120)))
    p.add_argument("--connections", type=int, default=int(os.environ.get("SOAK_CONNECTIONS", 200)))
    p.add_argument("--min-gap", type=float, default=0.2, help="shortest pause between version bumps (s)")
    p.add_argument("--max-gap", type=float, default=1.5, help="longest pause between version bumps (s)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--writer", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--db", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.writer:
        return writer_main(args)

    work = tempfile.mkdtemp(prefix="cg-soak-")
    db = os.path.join(work, "catalog.sqlite")
    subprocess.run([args.binary, "demo-db", "--out", db], check=True, capture_output=True)
    with sqlite3.connect(db) as c:
        products = [str(r[0]) for r in c.execute("SELECT keyid FROM Product_Catalog")]
        categories = [str(r[0]) for r in c.execute("SELECT id FROM hierarchy")]
    log_path = os.path.join(work, "server.log")
    with open(log_path, "wb") as log:
        proc, url = start_server(args.binary, db, log)
        try:
            stats, clients, commits, setup_seconds, rss = asyncio.run(
                drive(args, url, proc.pid, products, categories, db))
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                status = proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                status = "killed after 20 s"
    if status != 0:
        stats.error(f"server exit status {status}")

    missed_versions, missed_sets, missing_products, disorder = verify(clients, commits, stats)
    rss_setup, rss_warm, rss_end, samples = rss
    allowed = max(16 * MIB, rss_warm // 10)
    flat = rss_end - rss_warm <= allowed
    lat = sorted(stats.latencies) or [0]
    pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000  # noqa: E731
    n_changes = sum(1 for c in clients if c.changes)
    notifications = sum(len(c.versions) for c in clients)
    sets = sum(len(c.sets) for c in clients)
    gaps = [b["t"] - a["t"] for a, b in zip(commits, commits[1:])]
    missed = missed_versions + missed_sets + missing_products + disorder

    print(f"soak: {args.seconds} s, {args.connections} connections ({(args.connections + 1) // 2} with "
          f"permessage-deflate), all set up in {setup_seconds:.1f} s; server log {log_path}")
    print(f"queries: {stats.queries} answered ({stats.queries / args.seconds:.0f}/s), latency p50 {pct(0.5):.1f} ms, "
          f"p99 {pct(0.99):.1f} ms, max {lat[-1] * 1000:.0f} ms")
    print(f"version bumps: {len(commits)} by a separate writer process, every {min(gaps or [0]):.2f}-"
          f"{max(gaps or [0]):.2f} s (mean {statistics.mean(gaps) if gaps else 0:.2f} s)")
    print(f"catalogVersion: {args.connections} subscribers, {notifications} notifications, missed {missed_versions}")
    print(f"catalogChanges: {n_changes} subscribers, {sets} sets, missed versions {missed_sets}, "
          f"sets lacking the edited product {missing_products}, out of order {disorder}")
    print(f"server RSS: {rss_setup / MIB:.1f} MiB after setup, {rss_warm / MIB:.1f} MiB after warm-up, "
          f"{rss_end / MIB:.1f} MiB at the end ({'flat' if flat else 'GREW'}: allowed +{allowed / MIB:.0f} MiB); "
          "samples " + ", ".join(f"{t}s {k / MIB:.1f}" for t, k in samples))
    print(f"server exit status: {status}")
    print(f"errors: {stats.error_count}")
    for e in stats.errors:
        print(f"  {e}")
    ok = stats.error_count == 0 and missed == 0 and flat and commits
    print("result:", "OK" if ok else "FAILED")
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
