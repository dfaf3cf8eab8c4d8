"""bench/run.py's cold category page: each round records the workers' own time per page, read from
the served gateway's /metrics around that round, beside the engine in process (issue 5: where the
served page's time goes, in every run rather than by hand). No timing is asserted."""
import glob
import http.server
import json
import os
import pathlib
import subprocess
import sys
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import run as bench_run  # noqa: E402


def test_each_cold_round_has_the_workers_time_per_page(binary, bench_catalogs):
    d, demo, large = bench_catalogs
    out = d / "results"
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--only", "category",
                        "--bin", os.path.dirname(os.path.abspath(binary)), "--data", str(d),
                        "--demo-db", str(demo), "--large-db", str(large), "--out", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    [path] = glob.glob(str(out / "*.json"))
    with open(path) as f:
        doc = json.load(f)
    # Both catalogs' pages: the demo one and the large one (labelled 20k in a smoke run).
    for label in ("demo", "20k"):
        rounds = doc["raw"][f"category cold rounds {label}"]
        assert rounds
        for r in rounds:
            # /metrics counted every operation cg-load timed in the round (and its warm-up's).
            assert r["worker_ops"] >= r["served"]["ops"] > 0
            assert r["worker_ms"] > 0
    served = [r for r in doc["ratios"] if r["scenario"].startswith("category page cold (") and "1×1" in r["scenario"]]
    assert len(served) == 2
    for r in served:
        assert "its workers' own time per page (prepare, execution, framing; /metrics)" in r["note"], r["note"]
    # The warm-up that precedes the rounds is in the table of runs, at 2 connections.
    warmups = [run for run in doc["runs"] if run["name"].endswith("(warm-up)")]
    assert len(warmups) == 2 and all(w["conns"] == "2×1" and w["ops"] > 0 for w in warmups)


class _Metrics(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(self.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def _serve_metrics(body):
    handler = type("H", (_Metrics,), {"body": body})
    srv = http.server.HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_operation_time_reads_the_websocket_series_and_names_what_is_missing():
    text = (b'catalog_gateway_operation_duration_seconds_sum{transport="websocket"} 1.250000\n'
            b'catalog_gateway_operation_duration_seconds_count{transport="websocket"} 5000\n'
            b'catalog_gateway_operation_duration_seconds_sum{transport="http"} 9.000000\n'
            b'catalog_gateway_operation_duration_seconds_count{transport="http"} 7\n')
    srv = _serve_metrics(text)
    try:
        assert bench_run.operation_time(srv.server_address[1]) == (1.25, 5000)
    finally:
        srv.shutdown()
    srv = _serve_metrics(b'catalog_gateway_operation_duration_seconds_sum{transport="websocket"} 1.0\n')
    try:
        with pytest.raises(SystemExit, match="no catalog_gateway_operation_duration_seconds_count for websocket"):
            bench_run.operation_time(srv.server_address[1])
    finally:
        srv.shutdown()
