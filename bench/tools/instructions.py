#!/usr/bin/env python3
"""The cold category page in instructions (valgrind's callgrind), which unlike wall time repeats
on a shared machine: the row floor, the engine in process, and the page served over a WebSocket.

  python3 bench/tools/instructions.py [--bin .build/release] [--db bench/data/catalog-1m.sqlite]
                                      [--category ID] [--served-seconds 15]

  row floor   `bench-rows`, run for 100 and for 400 pages; the difference in instructions over the
              pages between (its warm-up is min(200, iterations) pages, so 400 pages).
  engine      `bench-query` the same way (warm-up min(100, iterations) + 1 executions: 300), with
              no execution limit (--max-execution-ms 0; also for serve below): under callgrind the
              first 1M execution, which reads the whole hierarchy, outran the default 5 s.
  served      `serve --answer-cache-mb 0` under callgrind (a copy of the binary without debug
              information, which valgrind 3.19 cannot read); `cg-load ops` at 1 connection × 1 in
              flight warms it up, the counters are zeroed (callgrind_control -z), a second
              `cg-load` runs for --served-seconds, and the dump (callgrind_control -d) is divided
              by the operations it answered. The part inside CatalogSession.execute is the engine;
              the rest is the transport, the protocol and the two thread hand-offs.

Prints one table and, with --json, one JSON object. Run through `make bench-instructions`.
Everything runs under callgrind, so this takes minutes.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import run  # noqa: E402  (CATEGORY_PAGE, the page `make bench` times)


def collected(cmd):
    """Total instructions of one command under callgrind."""
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr[-2000:]}")
    m = re.search(r"Collected : (\d+)", r.stderr)
    if not m:
        raise SystemExit(f"no callgrind total for {' '.join(cmd)}")
    return int(m.group(1))


def per_execution(cmd, lo, hi, executions_between):
    return (collected(cmd + ["--iterations", str(hi)]) - collected(cmd + ["--iterations", str(lo)])) / executions_between


def inclusive(dump, pattern):
    """The inclusive instructions of the first function whose name matches `pattern`, and the total."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", dump],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    total = part = None
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([\s\d.]+%\)\s+(.*)", line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        if total is None and "PROGRAM TOTALS" in m.group(2):
            total = n
        elif part is None and re.search(pattern, m.group(2)):
            part = n
    return total, part or 0


def served(binary, load, db, category, seconds):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    work = tempfile.mkdtemp(prefix="cg-instr-")
    out = os.path.join(work, "callgrind.out")
    server = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "serve",
                               "--db", db, "--port", str(port), "--log-level", "warn", "--answer-cache-mb", "0",
                               "--max-execution-ms", "0"],
                              stdout=subprocess.PIPE, stderr=open(os.path.join(work, "server.log"), "w"), text=True)
    try:
        line = server.stdout.readline()
        if "listening" not in line:
            raise SystemExit(f"the server did not start under valgrind ({line!r}); see {work}/server.log")
        page = os.path.join(work, "page.graphql")
        with open(page, "w") as f:
            f.write(run.CATEGORY_PAGE)

        result = os.path.join(work, "cg-load.json")

        def ops(duration, warmup):
            r = subprocess.run([load, "ops", "--url", f"ws://127.0.0.1:{port}/graphql", "--query-file", page,
                                "--variables", json.dumps({"id": category}), "--connections", "1", "--inflight", "1",
                                "--duration", str(duration), "--warmup", str(warmup), "--json", result],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                raise SystemExit(f"cg-load: exit {r.returncode}\n{r.stderr[-2000:]}")
            with open(result) as f:
                g = json.load(f)["phases"][0]["groups"][0]
            if g["errors"] or g["responses_with_errors"]:
                raise SystemExit(f"cg-load: {g['errors']} errors, {g['responses_with_errors']} answers with errors")
            return g["ops"]

        # First executions (statement caches, page cache, the worker's buffers); under valgrind the
        # very first can take seconds. Then a pause, so nothing is in flight when the counters zero.
        for _ in range(6):
            if ops(5, 0) >= 10:
                break
        time.sleep(2)
        subprocess.run(["callgrind_control", "-z", str(server.pid)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        n = ops(seconds, 0)
        before = set(os.listdir(work))
        subprocess.run(["callgrind_control", "-d", str(server.pid)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dumps = []
        for _ in range(100):
            dumps = sorted(f for f in set(os.listdir(work)) - before if f.startswith("callgrind.out."))
            if dumps:
                break
            time.sleep(0.1)
        if not dumps or n == 0:
            raise SystemExit(f"no dump or no operations ({n}); see {work}")
        time.sleep(0.5)  # the dump file is complete once callgrind_control returns; be generous
        total, engine = inclusive(os.path.join(work, dumps[-1]), r"CatalogSessionC7execute")
        shutil.rmtree(work, ignore_errors=True)  # kept only when something failed
        return {"operations": n, "total": total / n, "engine": engine / n}
    finally:
        server.terminate()
        server.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build", "release"))
    ap.add_argument("--db", default=os.path.join(ROOT, "bench", "data", "catalog-1m.sqlite"))
    ap.add_argument("--category", help="category id (default: the one bench-rows picks, the most products)")
    ap.add_argument("--served-seconds", type=float, default=15)
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    a = ap.parse_args()
    load = os.path.join(a.bin, "cg-load")
    # Valgrind 3.19 (bookworm) cannot read the DWARF 5 that Swift writes: profile a copy without it.
    copy = tempfile.mkdtemp(prefix="cg-instr-bin-")
    try:
        measure(a, load, os.path.join(copy, "catalog-gateway"))
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def measure(a, load, binary):
    subprocess.run(["strip", "--strip-debug", "-o", binary, os.path.join(a.bin, "catalog-gateway")], check=True)
    category = a.category or json.loads(subprocess.run(
        [binary, "bench-rows", "--db", a.db, "--iterations", "1", "--json"],
        stdout=subprocess.PIPE, check=True, text=True).stdout)["category"]
    floor = per_execution([binary, "bench-rows", "--db", a.db, "--category", category, "--json"], 100, 400, 400)
    # No execution limit: under callgrind the first 1M execution (the whole hierarchy read) runs
    # close to the default 5 s and was stopped with EXECUTION_TIMEOUT.
    engine = per_execution([binary, "bench-query", "--db", a.db, "--variables", json.dumps({"id": category}),
                            "--max-execution-ms", "0", "--json"], 100, 400, 300)
    s = served(binary, load, a.db, category, a.served_seconds)
    result = {"db": a.db, "category": category, "row_floor": floor, "engine_in_process": engine,
              "served_total": s["total"], "served_engine": s["engine"], "served_operations": s["operations"]}
    if a.json:
        print(json.dumps(result))
        return
    m = lambda x: f"{x / 1e6:.2f} M"  # noqa: E731
    print(f"cold category page {category} of {a.db}, instructions per operation (callgrind)")
    print("| measure | instructions | × row floor |")
    print("|---|---|---|")
    print(f"| row floor (bench-rows) | {m(floor)} | 1.00× |")
    print(f"| engine in process (bench-query) | {m(engine)} | {engine / floor:.2f}× |")
    print(f"| served at 1×1, whole server ({s['operations']} operations) | {m(s['total'])} | {s['total'] / floor:.2f}× |")
    print(f"| … of which CatalogSession.execute | {m(s['engine'])} | {s['engine'] / floor:.2f}× |")
    print(f"| … transport, protocol, hand-offs | {m(s['total'] - s['engine'])} | {(s['total'] - s['engine']) / floor:.2f}× |")


if __name__ == "__main__":
    main()
