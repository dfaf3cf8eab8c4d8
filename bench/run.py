#!/usr/bin/env python3
"""catalog-gateway benchmarks: every figure beside its floor, measured in the same run.

Run through `make bench` (release build, catalogs under bench/data/) or directly:

  python3 bench/run.py [--smoke] [--fanout N] [--bin .build/release] [--out bench/results]

Floors
  transport floor  the same gateway started with `serve --fixed-response FILE`: every operation is
                   answered with FILE (the real answer's bytes) without parsing or executing, so it
                   measures WebSocket/HTTP transport, framing and the worker hop only.
  row floor        `catalog-gateway bench-rows`: the rows a category page needs, stepped
                   in-process through sqlite3 with one prepared statement per row, text copied.

The cold category page is measured in BENCH_ROUNDS (default 3) alternating rounds of row floor,
engine in process and page served at 1 × 1; each ratio is taken within its round and the median
round is reported, with every round's ratio beside it.

Load comes from cg-load (one libwebsockets client thread, HdrHistogram latencies) and, for
HTTP, wrk. Servers run with --port 0 (the port is read from the ready line) and --log-level warn.
Python standard library only.

Side by side with another server
  --compare CMD (or env BENCH_COMPARE) runs the same scenarios, in the same run, against another
  server implementing the contract over the same catalog file: CMD is its command line, with
  {db} and {port} replaced by the catalog path and a free port, e.g.
    --compare 'python3 other_server.py --db {db} --port {port}' --compare-name python
  It must speak graphql-transport-ws or the legacy graphql-ws (cg-load offers both and follows
  its pick), and for the HTTP scenario GraphQL over HTTP POST, at --compare-path (default
  /graphql), and is ready once an HTTP POST there gets any answer. Each
  figure is printed beside the gateway's in a third table; a scenario the other server fails is
  reported as failed with its reason, and the run goes on.
"""
import argparse
import json
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SMALL_QUERY = "query Small($id: ID!) { product(id: $id) { id sku name displayOrder thumbnail } }"
CATEGORY_PAGE = """query CategoryPage($id: ID!) {
  category(id: $id) {
    id title icon level
    path { id title }
    children { id title icon }
    products(first: 50) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes {
        id sku name displayOrder thumbnail images description
        manufacturer { name logo }
        specs { key label value }
        kit { id name quantity }
      }
    }
  }
}"""
SEARCH_QUERY = ("query Search($text: String!) { search(text: $text, first: 50) "
                "{ totalCount nodes { id sku name thumbnail manufacturer { name logo } } } }")
SEARCH_TEXT = "cooke 32mm"
SUBSCRIPTION = "subscription { catalogVersion { version } }"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Bench:
    def __init__(self, args):
        self.args = args
        self.smoke = args.smoke
        self.bin = os.path.join(args.bin, "catalog-gateway")
        self.load = os.path.join(args.bin, "cg-load")
        self.data = args.data
        self.work = os.path.join(self.data, "run")
        os.makedirs(self.work, exist_ok=True)
        self.stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.results = {}  # scenario name -> raw results
        self.ratios = []   # rows of the first table
        self.details = []  # rows of the second table
        s = self.smoke
        self.duration = 2.0 if s else args.duration
        self.warmup = 0.5 if s else 2.0
        self.latency_duration = 0.5 if s else 5.0
        self.rounds = 1 if s else max(1, int(os.environ.get("BENCH_ROUNDS", "3")))
        self.other_cmd = args.compare or None
        self.other_name = args.compare_name or (os.path.basename(shlex.split(args.compare)[0]) if args.compare else "")
        self.side = []     # rows of the side-by-side table (--compare)
        self.other_protocols = set()  # the WebSocket subprotocols the other server picked

    # ---------- processes ----------

    def serve(self, name, db, *extra):
        logpath = os.path.join(self.work, f"{name}.log")
        cmd = [self.bin, "serve", "--db", db, "--port", "0", "--log-level", "warn", *extra]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=open(logpath, "w"), text=True)
        line = p.stdout.readline()
        m = re.search(r"ws://[^ ]*:(\d+)/graphql", line)
        if not m:
            p.kill()
            raise SystemExit(f"{name}: the server did not start ({line!r}); see {logpath}")
        return Server(p, int(m.group(1)), name)

    def other_command(self, db, port):
        return [a.replace("{db}", db).replace("{port}", str(port)) for a in shlex.split(self.other_cmd)]

    def serve_other(self, name, db):
        """Starts the --compare server on `db` and waits until an HTTP POST to its path gets any answer."""
        port = free_port()
        logpath = os.path.join(self.work, f"{name}.log")
        cmd = self.other_command(db, port)
        log(f"--- {name}: {' '.join(cmd)[:160]}")
        p = subprocess.Popen(cmd, stdout=open(logpath, "w"), stderr=subprocess.STDOUT)
        t0 = time.monotonic()
        while http_answer(port, self.args.compare_path, SMALL_QUERY, {"id": "1"}, timeout=5) is None:
            if p.poll() is not None:
                raise SystemExit(f"{name}: exited with {p.returncode} before answering; see {logpath}")
            if time.monotonic() - t0 > self.args.compare_ready_s:
                p.kill()
                raise SystemExit(f"{name}: no answer on port {port} within {self.args.compare_ready_s:.0f} s; see {logpath}")
            time.sleep(0.05)
        return Server(p, port, name, self.args.compare_path, other=True)

    def against_other(self, name, db, runs):
        """--compare: starts the other server on `db` once and takes each measurement of `runs` —
        (scenario, unit, better, gateway's figure, function(server) -> figure) — against it. A
        failure is recorded beside that scenario and the run goes on."""
        if not self.other_cmd:
            return
        try:
            srv = self.serve_other(f"{name}-{self.other_name}", db)
        except SystemExit as e:
            for scenario, unit, better, gw, _ in runs:
                self.side_row(scenario, unit, better, gw, None, f"failed: {e}")
            return
        try:
            for scenario, unit, better, gw, measure in runs:
                if srv.p.poll() is not None:
                    self.side_row(scenario, unit, better, gw, None, f"failed: the server exited ({srv.p.returncode})")
                    continue
                self.side_measure(scenario, unit, better, gw, lambda: measure(srv))
        finally:
            srv.stop()

    def side_measure(self, scenario, unit, better, gw, measure):
        """Records measure()'s figure beside the gateway's, or why it failed."""
        try:
            self.side_row(scenario, unit, better, gw, measure(), "")
        except (SystemExit, Exception) as e:  # noqa: B902 — any failure of theirs is reported, not fatal
            self.side_row(scenario, unit, better, gw, None, f"failed: {str(e)[:200]}")

    def side_row(self, scenario, unit, better, gw, other, note):
        adv = None
        if gw and other:
            adv = gw / other if better == "higher" else other / gw
        self.side.append({"scenario": scenario, "unit": unit, "better": better, "gateway": gw,
                          "other": other, "gateway_advantage": adv, "note": note})

    def cg_load(self, name, mode, server, *args):
        """Runs a cg-load mode against `server` (None: a mode that needs none, fanout-floor)."""
        out = os.path.join(self.work, f"{name}.json")
        target = [] if server is None else ["--url", f"ws://127.0.0.1:{server.port}{server.path}", "--server-pid", str(server.pid)]
        cmd = [self.load, mode, *target, "--label", name, "--json", out, *map(str, args)]
        log(f"--- {name}: cg-load {mode} " + " ".join(map(str, args))[:160])
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
        sys.stderr.write(r.stdout)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            raise SystemExit(f"{name}: cg-load failed ({r.returncode})")
        if r.stderr.strip():
            sys.stderr.write(r.stderr)
        with open(out) as f:
            result = json.load(f)
        self.results[name] = result
        if server is not None and server.other:
            self.other_protocols.update(k for k, v in result.get("subprotocols", {}).items() if v)
        return result

    def ops(self, name, server, query, variables=None, variables_file=None, connections=1, inflight=100,
            duration=None, warmup=None):
        args = ["--connections", connections, "--inflight", inflight,
                "--duration", duration or self.duration, "--warmup", self.warmup if warmup is None else warmup,
                "--query", query]
        if variables is not None:
            args += ["--variables", json.dumps(variables)]
        if variables_file is not None:
            args += ["--variables-file", variables_file]
        r = self.cg_load(name, "ops", server, *args)
        phase = r["phases"][0]
        g = phase["groups"][0]
        errors = g["errors"] + g["responses_with_errors"]
        if errors or g["ops"] == 0:
            raise SystemExit(f"{name}: {errors} errors, {g['ops']} operations; see {self.work}/{name}.json")
        row = {"name": name, "conns": f"{connections}×{inflight}", "ops": g["ops"], "ops_s": g["ops_per_s"],
               "p50": g["latency"]["p50_ms"], "p99": g["latency"]["p99_ms"], "bytes": g["response_bytes_mean"],
               "client_cpu": phase["client_cpu_percent"], "server_cpu": phase.get("server_cpu_percent"),
               "server_us_op": phase.get("server_cpu_us_per_op")}
        self.details.append(row)
        return row

    def query_once(self, db, query, variables):
        r = subprocess.run([self.bin, "query", "--db", db, "--variables", json.dumps(variables), query],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise SystemExit(f"query failed on {db}: {r.stdout[:300]} {r.stderr[:300]}")
        return r.stdout.strip()

    def fixed_file(self, name, text):
        path = os.path.join(self.work, f"fixed-{name}.json")
        with open(path, "w") as f:
            f.write(text)
        return path

    def ratio(self, scenario, measured, unit, floor, floor_name, ratio, target, met, note=""):
        self.ratios.append({"scenario": scenario, "measured": measured, "unit": unit, "floor": floor,
                            "floor_name": floor_name, "ratio": ratio, "target": target, "met": met, "note": note})

    # ---------- scenarios ----------

    def in_process(self, command, db, *args):
        """An in-process timing command (`bench-rows`, `bench-query`) and its --json result."""
        r = subprocess.run([self.bin, command, "--db", db, "--json", "--iterations", "200" if self.smoke else "3000", *args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
        return json.loads(r.stdout)

    def row_floor(self, db):
        return self.in_process("bench-rows", db)

    def engine_in_process(self, db, category):
        """The category page executed in-process (`bench-query`, answer cache off): the engine alone,
        no transport, timed right after the row floor on the same page."""
        return self.in_process("bench-query", db, "--variables", json.dumps({"id": category}))

    def small(self, db, ids_file, first_id):
        fixed = self.fixed_file("small", self.query_once(db, SMALL_QUERY, {"id": first_id}))
        floor = self.serve("floor-small", db, "--fixed-response", fixed)
        try:
            f1 = self.ops("small floor 1 conn", floor, SMALL_QUERY, variables_file=ids_file, connections=1, inflight=100)
            f50 = self.ops("small floor 50 conns", floor, SMALL_QUERY, variables_file=ids_file, connections=50, inflight=100)
        finally:
            floor.stop()
        srv = self.serve("small", db)
        try:
            s1 = self.ops("small 1 conn", srv, SMALL_QUERY, variables_file=ids_file, connections=1, inflight=100)
            s50 = self.ops("small 50 conns", srv, SMALL_QUERY, variables_file=ids_file, connections=50, inflight=100)
        finally:
            srv.stop()
        cold = self.serve("small-cold", db, "--answer-cache-mb", "0")
        try:
            c1 = self.ops("small cold 1 conn", cold, SMALL_QUERY, variables_file=ids_file, connections=1, inflight=100)
        finally:
            cold.stop()
        for label, m, f in (("1 connection", s1, f1), ("50 connections", s50, f50)):
            q = m["ops_s"] / f["ops_s"]
            self.ratio(f"small query, {label} × 100 in flight", m["ops_s"], "ops/s", f["ops_s"], "transport floor",
                       q, "≥ 0.50", q >= 0.5, f"p50 {m['p50']:.2f} / p99 {m['p99']:.2f} ms (floor {f['p50']:.2f} / {f['p99']:.2f})")
        q = c1["ops_s"] / f1["ops_s"]
        self.ratio("small query, answer cache off, 1 connection", c1["ops_s"], "ops/s", f1["ops_s"], "transport floor",
                   q, "", None, f"p50 {c1['p50']:.2f} / p99 {c1['p99']:.2f} ms")
        n = self.other_name
        theirs_1 = {}

        def other_1(o):
            # One measurement of theirs, set beside the gateway's with and without its answer cache.
            if "ops_s" not in theirs_1:
                theirs_1["ops_s"] = self.ops(f"small 1 conn ({n})", o, SMALL_QUERY, variables_file=ids_file,
                                             connections=1, inflight=100)["ops_s"]
            return theirs_1["ops_s"]
        self.against_other("small", db, [
            ("small query, 1 connection × 100 in flight, gateway answer cache on", "ops/s", "higher", s1["ops_s"], other_1),
            ("small query, 1 connection × 100 in flight, gateway answer cache off", "ops/s", "higher", c1["ops_s"], other_1),
            ("small query, 50 connections × 100 in flight, gateway answer cache on", "ops/s", "higher", s50["ops_s"],
             lambda o: self.ops(f"small 50 conns ({n})", o, SMALL_QUERY, variables_file=ids_file, connections=50, inflight=100)["ops_s"]),
        ])

    def category(self, label, db):
        rows = self.row_floor(db)
        cat = rows["category"]
        variables = {"id": cat}
        answer = self.query_once(db, CATEGORY_PAGE, variables)
        fixed = self.fixed_file(f"category-{label}", answer)
        # The cold page against its floors in alternating rounds (row floor, engine in process,
        # served at 1 × 1; BENCH_ROUNDS, 3 by default): this machine's speed drifts by up to 2×
        # within minutes, so each ratio is taken within one round and the median round reported.
        cold = self.serve(f"category-cold-{label}", db, "--answer-cache-mb", "0")
        rounds = []
        try:
            # Both workers' first pages (the hierarchy's load, statement caches) before any round,
            # so that each round's mean worker time below is of pages like the ones it times.
            self.ops(f"category cold {label} 2×1 (warm-up)", cold, CATEGORY_PAGE, variables, connections=2, inflight=1,
                     duration=0.3 if self.smoke else 1.0, warmup=0)
            for i in range(self.rounds):
                floor_i = rows if i == 0 else self.row_floor(db)
                engine_i = self.engine_in_process(db, cat)
                name = f"category cold {label} 1×1" + (f" (round {i + 1})" if self.rounds > 1 else "")
                before = operation_time(cold.port)
                lat_i = self.ops(name, cold, CATEGORY_PAGE, variables, connections=1, inflight=1,
                                 duration=self.latency_duration)
                after = operation_time(cold.port)
                # What the workers spent per page in this round (its warm-up included): the engine's
                # execution as served, with the request's prepare and the answer's framing.
                worker_ops = after[1] - before[1]
                if worker_ops < 1:
                    raise SystemExit(f"{name}: /metrics counted no operation while cg-load had {lat_i['ops_s']:.0f} ops/s")
                rounds.append({"row_floor": floor_i, "engine": engine_i, "served": lat_i,
                               "worker_ms": (after[0] - before[0]) * 1000 / worker_ops, "worker_ops": worker_ops,
                               "served_ratio": lat_i["p50"] / floor_i["median_ms"],
                               "engine_ratio": engine_i["median_ms"] / floor_i["median_ms"]})
            thr = self.ops(f"category cold {label} 4×4", cold, CATEGORY_PAGE, variables, connections=4, inflight=4)
        finally:
            cold.stop()
        self.results[f"category cold rounds {label}"] = rounds
        # The round whose served ratio is the median; its engine ratio is the engine rounds' median.
        mid = sorted(rounds, key=lambda r: r["served_ratio"])[len(rounds) // 2]
        rows, lat = mid["row_floor"], mid["served"]
        engine_mid = sorted(rounds, key=lambda r: r["engine_ratio"])[len(rounds) // 2]
        engine = engine_mid["engine"]
        self.results[f"row floor {label}"] = rows
        self.results[f"category engine in process {label}"] = engine
        floor = self.serve(f"floor-category-{label}", db, "--fixed-response", fixed)
        try:
            fl = self.ops(f"category floor {label} 4×16", floor, CATEGORY_PAGE, variables, connections=4, inflight=16)
            # The same page's bytes through the transport alone at 1 × 1: what the served cold
            # page's p50 carries besides executing it.
            fl1 = self.ops(f"category floor {label} 1×1", floor, CATEGORY_PAGE, variables, connections=1, inflight=1,
                           duration=self.latency_duration)
        finally:
            floor.stop()
        warm = self.serve(f"category-warm-{label}", db)
        try:
            wm = self.ops(f"category warm {label} 4×16", warm, CATEGORY_PAGE, variables, connections=4, inflight=16)
        finally:
            warm.stop()
        products = rows["products"]
        q = mid["served_ratio"]
        each = lambda key: ", ".join(f"{r[key]:.2f}×" for r in rounds)  # noqa: E731
        of_rounds = f"median of {len(rounds)} rounds ({each('served_ratio')}); " if len(rounds) > 1 else ""
        self.ratio(f"category page cold ({label}, {products} products), 1×1", lat["p50"], "ms/op (p50)", rows["median_ms"],
                   "row floor", q, "≤ 1.0", q <= 1.0,
                   f"{of_rounds}p99 {lat['p99']:.2f} ms; server CPU {thr['server_us_op'] or 0:.0f} µs/op at 4×4 ({thr['ops_s']:.0f} ops/s); "
                   f"{rows['rows']} rows, {lat['bytes']} B answer; the transport floor alone answers this page in "
                   f"{fl1['p50']:.2f} ms p50 at 1×1, so what the served page adds to its transport, "
                   f"{lat['p50'] - fl1['p50']:.2f} ms, is {(lat['p50'] - fl1['p50']) / rows['median_ms']:.2f}× the row floor; "
                   f"at 1×1 the server's CPU per page is {lat['server_us_op'] or 0:.0f} µs (transport floor "
                   f"{fl1['server_us_op'] or 0:.0f} µs), and its workers' own time per page (prepare, execution, "
                   f"framing; /metrics) {mid['worker_ms']:.3f} ms mean against {mid['engine']['median_ms']:.3f} ms "
                   f"median for the engine in process in the same round")
        q = engine_mid["engine_ratio"]
        of_rounds = f"median of {len(rounds)} rounds ({each('engine_ratio')}); " if len(rounds) > 1 else ""
        self.ratio(f"category page cold ({label}), engine in process", engine["median_ms"], "ms/op (median)",
                   engine_mid["row_floor"]["median_ms"], "row floor", q, "", None,
                   f"{of_rounds}no target (≤ 1.0× is for the page served, above); `bench-query` right after `bench-rows`, "
                   f"same page; p99 {engine['p99_ms']:.2f} ms (floor {engine_mid['row_floor']['p99_ms']:.2f})")
        q = wm["ops_s"] / fl["ops_s"]
        self.ratio(f"category page warm ({label}), 4×16", wm["ops_s"], "ops/s", fl["ops_s"], "transport floor", q, "≥ 0.50",
                   q >= 0.5, f"p50 {wm['p50']:.2f} / p99 {wm['p99']:.2f} ms")
        n = self.other_name
        self.against_other(f"category-{label}", db, [
            (f"category page ({label}), 1×1, gateway cold", "ms (p50)", "lower", lat["p50"],
             lambda o: self.ops(f"category {label} 1×1 ({n})", o, CATEGORY_PAGE, variables, connections=1, inflight=1,
                                duration=self.latency_duration)["p50"]),
            (f"category page ({label}), 4×4, gateway cold", "ops/s", "higher", thr["ops_s"],
             lambda o: self.ops(f"category {label} 4×4 ({n})", o, CATEGORY_PAGE, variables, connections=4, inflight=4)["ops_s"]),
            (f"category page ({label}), 4×16, gateway warm", "ops/s", "higher", wm["ops_s"],
             lambda o: self.ops(f"category {label} 4×16 ({n})", o, CATEGORY_PAGE, variables, connections=4, inflight=16)["ops_s"]),
        ])
        return cat

    def search(self, label, db, target_ms):
        srv = self.serve(f"search-{label}", db, "--answer-cache-mb", "0")
        try:
            s = self.ops(f"search {label} 1×1", srv, SEARCH_QUERY, {"text": SEARCH_TEXT}, connections=1, inflight=1,
                         duration=self.latency_duration)
        finally:
            srv.stop()
        met = None if target_ms is None else s["p50"] <= target_ms
        self.ratio(f"search \"{SEARCH_TEXT}\" ({label}), answer cache off", s["p50"], "ms (p50)", None, "", None,
                   f"≤ {target_ms} ms" if target_ms else "", met, f"p99 {s['p99']:.2f} ms")
        n = self.other_name
        self.against_other(f"search-{label}", db, [
            (f"search \"{SEARCH_TEXT}\" ({label}), 1×1, gateway cold", "ms (p50)", "lower", s["p50"],
             lambda o: self.ops(f"search {label} 1×1 ({n})", o, SEARCH_QUERY, {"text": SEARCH_TEXT}, connections=1,
                                inflight=1, duration=self.latency_duration)["p50"]),
        ])

    def hol(self, label, db, cat, ids_file):
        srv = self.serve(f"hol-{label}", db, "--answer-cache-mb", "0")
        heavy = CATEGORY_PAGE.replace("products(first: 50)", "products(first: 100)")
        try:
            r = self.cg_load(f"head-of-line {label}", "hol", srv, "--connections", 4, "--inflight", 1,
                             "--query", SMALL_QUERY, "--variables-file", ids_file,
                             "--heavy-query", heavy, "--heavy-variables", json.dumps({"id": cat}),
                             "--heavy-connections", 1, "--heavy-inflight", 8,
                             "--duration", self.duration, "--warmup", self.warmup)
        finally:
            srv.stop()
        alone, loaded = r["phases"][0]["groups"][0], r["phases"][1]["groups"][0]
        heavy_g = r["phases"][1]["groups"][1]
        q = loaded["latency"]["p99_ms"] / max(alone["latency"]["p99_ms"], 1e-9)
        self.ratio(f"head-of-line ({label}): small p99 beside heavy pages", loaded["latency"]["p99_ms"], "ms (p99)",
                   alone["latency"]["p99_ms"], "small alone", q, "", None,
                   f"p50 {loaded['latency']['p50_ms']:.2f} ms (alone {alone['latency']['p50_ms']:.2f}); "
                   f"heavy: {heavy_g['ops_per_s']:.0f} ops/s, p50 {heavy_g['latency']['p50_ms']:.1f} ms")

    def fanout(self, db, n):
        copy = os.path.join(self.work, "fanout.sqlite")
        shutil.copyfile(db, copy)
        srv = self.serve("fanout", copy)
        try:
            r = self.cg_load(f"fan-out {n}", "fanout", srv, "--subscribers", n, "--bumps", 3 if self.smoke else 20,
                             "--db", copy, "--gap-ms", 50 if self.smoke else 250)
        finally:
            srv.stop()
        # The floor: the same number of loopback sockets, as many threads as the gateway sends
        # with send()ing each a frame of the same size, no server in between (cg-load fanout-floor).
        # As many sending threads as the gateway's --send-threads default (4).
        fl = self.cg_load(f"fan-out floor {n}", "fanout-floor", None, "--subscribers", n,
                                "--bumps", 3 if self.smoke else 20, "--gap-ms", 50 if self.smoke else 250,
                                "--sender-threads", 4)
        if self.other_cmd:
            other_copy = os.path.join(self.work, "fanout-other.sqlite")
            shutil.copyfile(db, other_copy)
            self.against_other("fanout", other_copy, [
                (f"fan-out to {n}: commit → last next", "ms (p99)", "lower", r["commit_to_last_next"]["p99_ms"],
                 lambda o: self.fanout_other(o, other_copy, n)),
            ])
        last, flast = r["commit_to_last_next"], fl["commit_to_last_next"]
        got = r["subscribers"]
        met = (last["p99_ms"] <= 100 and got == n and r["missed_deliveries"] == 0) if n >= 10000 else None
        short = "" if got == n else f"only {got} of {n} subscribed ({r.get('first_failure')}); "
        q = last["p99_ms"] / max(flast["p99_ms"], 1e-9)
        self.ratio(f"fan-out to {n} subscribers: commit → last next", last["p99_ms"], "ms (p99)", flast["p99_ms"],
                   "send floor", q, "≤ 100 ms (at 10,000)", met,
                   f"{short}median {last['p50_ms']:.1f} ms (floor {flast['p50_ms']:.1f}) over {r['bumps']} bumps; "
                   f"each delivery p50 {r['commit_to_each_next']['p50_ms']:.1f} ms; missed deliveries {r['missed_deliveries']}; "
                   f"server CPU {r.get('server_cpu_s', 0):.1f} s (floor sender {fl.get('server_cpu_s') or 0:.1f} s), "
                   f"client {r['client_cpu_s']:.1f} s")

    def fanout_other(self, srv, db, n):
        r = self.cg_load(f"fan-out {n} ({self.other_name})", "fanout", srv, "--subscribers", n, "--bumps", 3 if self.smoke else 20,
                         "--db", db, "--gap-ms", 50 if self.smoke else 250)
        if r["subscribers"] != n or r["missed_deliveries"]:
            raise SystemExit(f"{r['subscribers']} of {n} subscribed, {r['missed_deliveries']} deliveries missed")
        return r["commit_to_last_next"]["p99_ms"]

    def memory(self, db, n):
        srv = self.serve("memory", db)
        try:
            time.sleep(0.5)
            r = self.cg_load(f"memory {n}", "idle", srv, "--connections", n, "--subscribe",
                             "--settle", 0.5 if self.smoke else 2)
        finally:
            srv.stop()
        per = r.get("kib_per_connection")
        self.ratio(f"RSS per idle connection ({r['connections']} open)", per, "KiB", None, "", None, "≤ 8 KiB",
                   None if per is None else per <= 8,
                   f"server RSS {r.get('server_rss_before_kib')} → {r.get('server_rss_connected_kib')} KiB")
        self.ratio("RSS per subscription (catalogVersion)", r.get("kib_per_subscription"), "KiB", None, "", None, "", None,
                   f"→ {r.get('server_rss_subscribed_kib')} KiB subscribed")

        def idle_other(o):
            time.sleep(0.5)
            ro = self.cg_load(f"memory {n} ({self.other_name})", "idle", o, "--connections", n, "--subscribe",
                              "--settle", 0.5 if self.smoke else 2)
            if ro.get("kib_per_connection") is None:
                raise SystemExit(f"only {ro.get('connections')} of {n} connections opened")
            return ro["kib_per_connection"]
        self.against_other("memory", db, [(f"RSS per idle connection ({n} open)", "KiB", "lower", per, idle_other)])

    def slowreader(self, db, ids_file, n):
        """Small queries among n idle connections, without and then with a client that asks for
        large answers and never reads; the server (--max-queued-bytes 1 MiB) must close it."""
        limit = 1 << 20
        srv = self.serve("slowreader", db, "--max-queued-bytes", str(limit))
        conns = 4 if self.smoke else 50
        try:
            r = self.cg_load(f"slow reader {n}", "slowreader", srv, "--idle", n, "--connections", conns, "--inflight", 2,
                             "--query", SMALL_QUERY, "--variables-file", ids_file, "--slow-readers", 1,
                             "--duration", 1.0 if self.smoke else self.duration, "--warmup", self.warmup,
                             "--settle", 0.3 if self.smoke else 1)
        finally:
            srv.stop()
        with open(os.path.join(self.work, "slowreader.log")) as f:
            closed_by_server = sum(1 for line in f if "event=slow_client_closed" in line)
        without, with_ = r["phases"][0], r["phases"][1]
        for phase in (without, with_):
            g = phase["groups"][0]
            errors = g["errors"] + g["responses_with_errors"]
            if errors or g["ops"] == 0:
                raise SystemExit(f"slow reader: {errors} errors, {g['ops']} small queries in phase {phase['name']}")
            self.details.append({"name": f"slow reader {n}: small, {phase['name']} slow reader", "conns": f"{conns}×2",
                                 "ops_s": g["ops_per_s"], "p50": g["latency"]["p50_ms"], "p99": g["latency"]["p99_ms"],
                                 "bytes": g["response_bytes_mean"], "client_cpu": phase["client_cpu_percent"],
                                 "server_cpu": phase.get("server_cpu_percent"), "server_us_op": phase.get("server_cpu_us_per_op")})
        if r["slow_sessions_closed"] == 0 or closed_by_server == 0:
            raise SystemExit(f"slow reader: not closed ({r['slow_session_ends']}; server log: {closed_by_server} closes)")
        if r["idle_still_open_at_end"] < r["idle_connections"]:
            raise SystemExit(f"slow reader: {r['idle_connections'] - r['idle_still_open_at_end']} idle connections lost")
        a, b = without["groups"][0]["latency"], with_["groups"][0]["latency"]
        rss = r.get("server_rss", {})
        growth = rss.get("max_with_kib", 0) - rss.get("max_without_kib", 0)
        ends = ", ".join(f"{k} ×{v}" for k, v in sorted(r["slow_session_ends"].items()))
        q = b["p99_ms"] / max(a["p99_ms"], 1e-9)
        self.ratio(f"slow reader among {r['idle_connections']} idle connections: small p99 with / without", b["p99_ms"],
                   "ms (p99)", a["p99_ms"], "no slow reader", q, "", None,
                   f"p50 {b['p50_ms']:.2f} ms (without {a['p50_ms']:.2f}); {r['slow_sessions']} slow connections, "
                   f"{closed_by_server} closed by the server (limit 1 MiB), seen as {ends}; "
                   f"server RSS {rss.get('crowd_connected_kib')} → {rss.get('max_without_kib')} (max without) → "
                   f"{rss.get('max_with_kib')} (max with) → {rss.get('after_kib')} KiB after: +{growth / 1024:.1f} MiB "
                   f"with the slow reader; all {r['idle_still_open_at_end']} idle connections still open")

    @staticmethod
    def launch_times(command, path, runs, limit_s=30):
        """Milliseconds from launching command(port) to its first HTTP 200 answer with "data", per run."""
        times = []
        for i in range(runs):
            port = free_port()
            t0 = time.monotonic()
            p = subprocess.Popen(command(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            answer = None
            while time.monotonic() - t0 < limit_s and p.poll() is None:
                data = http_answer(port, path, SMALL_QUERY, {"id": "1"}, timeout=5)
                if data is not None and data.startswith(b"HTTP/1.1 200") and b'"data"' in data:
                    answer = time.monotonic() - t0
                    break
                time.sleep(0.001)
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
            if answer is None:
                raise SystemExit(f"start-up: no answer within {limit_s} s")
            times.append(answer * 1000)
        return times

    def startup(self, db, runs):
        times = self.launch_times(lambda port: [self.bin, "serve", "--db", db, "--port", str(port), "--log-level", "warn"],
                                  "/graphql", runs)
        med = statistics.median(times)
        self.results["startup"] = {"runs_ms": times, "median_ms": med}
        label = "1M products" if not self.smoke else "smoke catalog"
        self.ratio(f"start-up to first answer ({label})", med, "ms (median)", None, "", None, "≤ 500 ms", med <= 500,
                   f"{runs} launches: " + ", ".join(f"{t:.0f}" for t in times) + " ms")
        if self.other_cmd:
            self.side_measure(f"start-up to first answer ({label})", "ms (median)", "lower", med,
                              lambda: statistics.median(self.launch_times(lambda port: self.other_command(db, port),
                                                                          self.args.compare_path, runs,
                                                                          self.args.compare_ready_s)))

    def http(self, db, first_id):
        wrk = shutil.which("wrk")
        if not wrk:
            self.ratio("HTTP POST /graphql (wrk)", None, "", None, "", None, "", None, "wrk not installed: skipped")
            return
        script = os.path.join(ROOT, "bench", "wrk-post.lua")
        seconds = "1" if self.smoke else str(int(self.args.duration))
        env = dict(os.environ, CG_QUERY=SMALL_QUERY, CG_VARIABLES=json.dumps({"id": first_id}))

        def run(name, server):
            log(f"--- {name}: wrk -t1 -c50 -d{seconds}s")
            r = subprocess.run([wrk, "-t1", "-c50", f"-d{seconds}s", "--latency", "-s", script,
                                f"http://127.0.0.1:{server.port}{server.path}"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=120)
            sys.stderr.write(r.stdout)
            out = parse_wrk(r.stdout)
            self.results[name] = out
            if out.get("non_2xx") or out.get("errors"):
                raise SystemExit(f"{name}: wrk saw errors: {out}")
            self.details.append({"name": name, "conns": "50 (HTTP/1.1 keep-alive)", "ops_s": out["requests_per_s"],
                                 "p50": out.get("p50_ms"), "p99": out.get("p99_ms"), "bytes": None,
                                 "client_cpu": None, "server_cpu": None, "server_us_op": None})
            return out

        fixed = self.fixed_file("http", self.query_once(db, SMALL_QUERY, {"id": first_id}))
        floor = self.serve("http-floor", db, "--fixed-response", fixed)
        try:
            f = run("HTTP floor 50 conns", floor)
        finally:
            floor.stop()
        srv = self.serve("http", db)
        try:
            m = run("HTTP small 50 conns", srv)
        finally:
            srv.stop()
        q = m["requests_per_s"] / f["requests_per_s"]
        self.ratio("HTTP POST /graphql small query, 50 connections (wrk)", m["requests_per_s"], "req/s",
                   f["requests_per_s"], "transport floor", q, "", None,
                   f"p50 {m.get('p50_ms', 0):.2f} / p99 {m.get('p99_ms', 0):.2f} ms")
        self.against_other("http", db, [
            ("HTTP POST small query, 50 connections (wrk)", "req/s", "higher", m["requests_per_s"],
             lambda o: run(f"HTTP small 50 conns ({self.other_name})", o)["requests_per_s"]),
        ])

    # ---------- report ----------

    def report(self, started, machine):
        lines = ["| scenario | measured | floor | ratio | target | met | notes |", "|---|---|---|---|---|---|---|"]
        for r in self.ratios:
            measured = "-" if r["measured"] is None else f"{fmt(r['measured'])} {r['unit']}"
            floor = "" if r["floor"] is None else f"{fmt(r['floor'])} ({r['floor_name']})"
            ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}×"
            met = {True: "yes", False: "**no**", None: ""}[r["met"]]
            lines.append(f"| {r['scenario']} | {measured} | {floor} | {ratio} | {r['target']} | {met} | {r['note']} |")
        table1 = "\n".join(lines)
        lines = ["| run | conns × in flight | ops/s | p50 ms | p99 ms | answer B | client CPU | server CPU | server µs/op |",
                 "|---|---|---|---|---|---|---|---|---|"]
        def pct(v):
            return "" if v is None else f"{v:.0f}%"

        for d in self.details:
            us = "" if d["server_us_op"] is None else f"{d['server_us_op']:.0f}"
            answer = "" if d["bytes"] is None else str(d["bytes"])
            lines.append(f"| {d['name']} | {d['conns']} | {fmt(d['ops_s'])} | {fmt(d['p50'])} | {fmt(d['p99'])} | "
                         f"{answer} | {pct(d['client_cpu'])} | {pct(d['server_cpu'])} | {us} |")
        table2 = "\n".join(lines)
        print()
        print(table1)
        print()
        print(table2)
        print()
        if self.other_cmd:
            n = self.other_name
            lines = [f"| scenario (side by side, one run) | catalog-gateway | {n} | gateway advantage | note |",
                     "|---|---|---|---|---|"]
            for r in self.side:
                adv = "" if r["gateway_advantage"] is None else f"{r['gateway_advantage']:.2f}×"
                other = "-" if r["other"] is None else f"{fmt(r['other'])} {r['unit']}"
                lines.append(f"| {r['scenario']} | {fmt(r['gateway'])} {r['unit']} | {other} | {adv} | {r['note']} |")
            print("\n".join(lines))
            print(f"\ngateway advantage: how many times better the gateway's figure is ({n}'s time ÷ the gateway's, "
                  f"or the gateway's rate ÷ {n}'s); {n}: {self.other_cmd}")
            if self.other_protocols:
                print(f"{n}'s WebSockets spoke {', '.join(sorted(self.other_protocols))} (the gateway's graphql-transport-ws)")
            print()
        print(f"machine: {machine['summary']}; {time.monotonic() - started:.0f} s")
        doc = {"timestamp": self.stamp, "smoke": self.smoke, "machine": machine, "command": " ".join(sys.argv),
               "ratios": self.ratios, "runs": self.details, "raw": self.results,
               "compare": {"name": self.other_name, "command": self.other_cmd, "side_by_side": self.side,
                           "subprotocols": sorted(self.other_protocols)} if self.other_cmd else None,
               "seconds": round(time.monotonic() - started, 1)}
        os.makedirs(self.args.out, exist_ok=True)
        path = os.path.join(self.args.out, f"{self.stamp}{'-smoke' if self.smoke else ''}.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
        print(f"wrote {path}")


class Server:
    def __init__(self, p, port, name, path="/graphql", other=False):
        self.p, self.port, self.name, self.pid, self.path = p, port, name, p.pid, path
        self.other = other  # the --compare server, not a gateway

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        if v >= 1000:
            return f"{v:,.0f}"
        if v >= 100:
            return f"{v:.0f}"
        if v >= 10:
            return f"{v:.1f}"
        return f"{v:.2f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_answer(port, path, query, variables, timeout=5):
    """The raw bytes of the answer to one GraphQL POST on loopback (Connection: close), or None
    when nothing answers (refused, reset, timed out)."""
    body = json.dumps({"query": query, "variables": variables}).encode()
    req = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
           f"Accept: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    return http_exchange(port, req, timeout)


def http_get(port, path, timeout=5):
    """The raw bytes of the answer to one GET on loopback (Connection: close), or None."""
    return http_exchange(port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode(),
                         timeout)


def http_exchange(port, request, timeout):
    """Sends `request` on a new loopback connection and reads until the server closes it: the
    answer's raw bytes, or None when nothing answers (refused, reset, timed out)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(request)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return data or None
    except OSError:
        return None


def operation_time(port):
    """The gateway's own time for the WebSocket operations it has answered so far, from /metrics
    (`catalog_gateway_operation_duration_seconds`: a worker's prepare, execution and framing of
    each one, from taking the job to handing its frames over): (seconds in all, operations)."""
    raw = http_get(port, "/metrics")
    if raw is None:
        raise SystemExit(f"no answer from /metrics on port {port}")
    text = raw.split(b"\r\n\r\n", 1)[-1].decode("utf-8", "replace")
    found = {}
    for key in ("sum", "count"):
        m = re.search(rf'^catalog_gateway_operation_duration_seconds_{key}\{{transport="websocket"\}} (\S+)$', text, re.M)
        if not m:
            raise SystemExit(f"/metrics on port {port} has no catalog_gateway_operation_duration_seconds_{key} for websocket")
        found[key] = float(m.group(1))
    return found["sum"], int(found["count"])


def parse_wrk(text):
    out = {}
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    out["requests_per_s"] = float(m.group(1)) if m else 0.0
    units = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    for pct, key in (("50", "p50_ms"), ("90", "p90_ms"), ("99", "p99_ms")):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        if m:
            out[key] = float(m.group(1)) * units[m.group(2)]
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    if m:
        out["non_2xx"] = int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        out["errors"] = sum(map(int, m.groups()))
    return out


def machine_info():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = f.readline().split(":", 1)[1].strip()
    except OSError:
        pass
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True).stdout.strip()
    info = {"cpus": os.cpu_count(), "cpu_model": model, "memory": mem, "kernel": platform.release(),
            "sqlite": sqlite3.sqlite_version, "commit": commit, "loadavg_start": os.getloadavg()}
    info["summary"] = f"{info['cpus']} × {model}, {mem}, Linux {info['kernel']}, commit {commit}"
    return info


def product_ids(db, path, limit=1000):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        ids = [r[0] for r in c.execute("SELECT keyid FROM Product_Catalog ORDER BY keyid LIMIT ?", (limit,))]
    with open(path, "w") as f:
        for i in ids:
            f.write(json.dumps({"id": str(i)}) + "\n")
    return str(ids[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="seconds-long version of every scenario (no timing asserted)")
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    ap.add_argument("--data", default=os.path.join(ROOT, "bench", "data"))
    ap.add_argument("--out", default=None, help="results folder (default bench/results; DATA/results with --smoke)")
    ap.add_argument("--demo-db", default=None, help="default: DATA/demo.sqlite")
    ap.add_argument("--large-db", default=None, help="default: DATA/catalog-1m.sqlite (DATA/smoke-20k.sqlite with --smoke)")
    ap.add_argument("--fanout", type=int, default=int(os.environ.get("BENCH_FANOUT", "1000")),
                    help="subscribers in the fan-out scenario (env BENCH_FANOUT; 10000 for the target)")
    ap.add_argument("--connections", type=int, default=int(os.environ.get("BENCH_IDLE", "10000")),
                    help="idle connections in the memory scenario (env BENCH_IDLE)")
    ap.add_argument("--duration", type=float, default=float(os.environ.get("BENCH_SECONDS", "10")),
                    help="seconds of each throughput measurement (env BENCH_SECONDS)")
    ap.add_argument("--compare", default=os.environ.get("BENCH_COMPARE", ""),
                    help="command line of another server to measure side by side ({db}, {port} replaced; env BENCH_COMPARE)")
    ap.add_argument("--compare-name", default=os.environ.get("BENCH_COMPARE_NAME", ""),
                    help="its name in the table (default: the command's first word)")
    ap.add_argument("--compare-path", default=os.environ.get("BENCH_COMPARE_PATH", "/graphql"),
                    help="its WebSocket and HTTP path (default /graphql)")
    ap.add_argument("--compare-ready-s", type=float, default=120.0,
                    help="seconds it may take to answer its first POST (default 120)")
    ap.add_argument("--only", default="", help="comma-separated scenarios: small,category,search,hol,fanout,memory,slowreader,startup,http")
    args = ap.parse_args()

    if args.out is None:
        args.out = os.path.join(args.data, "results") if args.smoke else os.path.join(ROOT, "bench", "results")
    demo = args.demo_db or os.path.join(args.data, "demo.sqlite")
    large = args.large_db or os.path.join(args.data, "smoke-20k.sqlite" if args.smoke else "catalog-1m.sqlite")
    for path in (demo, large):
        if not os.path.exists(path):
            raise SystemExit(f"missing catalog {path}: run `make bench` (it creates them) or pass --demo-db/--large-db")

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = max(args.fanout, args.connections) + 512
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    fanout_n = 50 if args.smoke else args.fanout
    idle_n = 100 if args.smoke else args.connections
    if limit < max(fanout_n, idle_n) + 512:
        cap = max(16, limit - 512)
        log(f"open-files limit {limit}: fan-out and idle connections capped at {cap}")
        fanout_n, idle_n = min(fanout_n, cap), min(idle_n, cap)

    b = Bench(args)
    # `serve` adds the gateway's indexes, search index and change capture at start when they are
    # missing; do it now (a no-op when current) so that no scenario, start-up above all, pays it.
    for path in (demo, large):
        subprocess.run([b.bin, "prepare", "--db", path], stdout=subprocess.DEVNULL, check=True)
    started = time.monotonic()
    machine = machine_info()
    log(f"machine: {machine['summary']}")
    only = set(filter(None, args.only.split(",")))
    want = lambda s: not only or s in only
    ids_file = os.path.join(b.work, "ids.jsonl")
    first_id = product_ids(demo, ids_file)
    ids_large = os.path.join(b.work, "ids-large.jsonl")
    product_ids(large, ids_large)
    large_label = "20k" if args.smoke else "1M"
    cat_large = None
    if want("small"):
        b.small(demo, ids_file, first_id)
    if want("category"):
        b.category("demo", demo)
        cat_large = b.category(large_label, large)
    if want("search"):
        b.search("demo", demo, None)
        b.search(large_label, large, 20)
    if want("hol"):
        if cat_large is None:
            cat_large = b.row_floor(large)["category"]
        b.hol(large_label, large, cat_large, ids_large)
    if want("fanout"):
        b.fanout(demo, fanout_n)
    if want("memory"):
        b.memory(demo, idle_n)
    if want("slowreader"):
        b.slowreader(demo, ids_file, idle_n)
    if want("startup"):
        b.startup(large, 1 if args.smoke else 5)
    if want("http"):
        b.http(demo, first_id)
    machine["loadavg_end"] = os.getloadavg()
    b.report(started, machine)


if __name__ == "__main__":
    main()
