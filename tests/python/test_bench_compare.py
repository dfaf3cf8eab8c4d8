"""bench/run.py --compare: the same scenarios, in the same run, against another server over the
same catalog file (issue 5: the benchmark is compared side by side with another implementation).
The other server here is the gateway itself without its answer cache, or a command that dies."""
import glob
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_bench(binary, catalogs, only, compare, name):
    d, demo, large = catalogs
    out = d / f"results-{name}"
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--only", only,
                        "--bin", os.path.dirname(os.path.abspath(binary)), "--data", str(d),
                        "--demo-db", str(demo), "--large-db", str(large), "--out", str(out),
                        "--compare", compare, "--compare-name", name],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    [path] = glob.glob(str(out / "*.json"))
    with open(path) as f:
        return json.load(f), p.stdout


def test_side_by_side_with_a_second_server(binary, bench_catalogs):
    twin = f"{os.path.abspath(binary)} serve --db {{db}} --port {{port}} --log-level warn --answer-cache-mb 0"
    doc, stdout = run_bench(binary, bench_catalogs, "small,startup", twin, "twin")
    assert doc["compare"]["name"] == "twin"
    rows = {r["scenario"]: r for r in doc["compare"]["side_by_side"]}
    assert set(rows) == {"small query, 1 connection × 100 in flight, gateway answer cache on",
                         "small query, 1 connection × 100 in flight, gateway answer cache off",
                         "small query, 50 connections × 100 in flight, gateway answer cache on",
                         "start-up to first answer (smoke catalog)"}
    # Their one measurement at 1 connection is set beside the gateway's with and without its cache.
    assert (rows["small query, 1 connection × 100 in flight, gateway answer cache on"]["other"]
            == rows["small query, 1 connection × 100 in flight, gateway answer cache off"]["other"])
    for r in rows.values():
        assert r["note"] == "", r
        assert r["gateway"] > 0 and r["other"] > 0
        want = r["gateway"] / r["other"] if r["better"] == "higher" else r["other"] / r["gateway"]
        assert r["gateway_advantage"] == pytest.approx(want)
    # The other server's runs are in the per-run table under its name, and the side table is printed.
    assert any(run["name"] == "small 1 conn (twin)" and run["ops_s"] > 0 for run in doc["runs"])
    assert "| scenario (side by side, one run) | catalog-gateway | twin |" in stdout


def test_a_server_that_dies_is_reported_and_the_run_goes_on(binary, bench_catalogs):
    doc, stdout = run_bench(binary, bench_catalogs, "small", "sh -c 'exit 3'", "broken")
    rows = doc["compare"]["side_by_side"]
    assert len(rows) == 3
    for r in rows:
        assert r["other"] is None and r["gateway_advantage"] is None
        assert "exited with 3 before answering" in r["note"]
        assert r["gateway"] > 0
    # The gateway's own figures are all there.
    assert [x["scenario"] for x in doc["ratios"]][:2] == ["small query, 1 connection × 100 in flight",
                                                         "small query, 50 connections × 100 in flight"]


def test_side_by_side_with_a_server_of_the_legacy_graphql_ws_protocol(binary, bench_catalogs):
    """cg-load offers both subprotocols: a server speaking only the legacy graphql-ws (the
    repository's Python server in that mode) is measured, not failed, and the run says which
    protocol it spoke."""
    server = ROOT / "bench" / "python-server" / "server.py"
    legacy = f"{sys.executable} {server} --db {{db}} --port {{port}} --processes 1 --ws-protocol graphql-ws"
    doc, stdout = run_bench(binary, bench_catalogs, "small", legacy, "legacy")
    rows = doc["compare"]["side_by_side"]
    assert len(rows) == 3
    for r in rows:
        assert r["note"] == "" and r["other"] > 0 and r["gateway"] > 0, r
    assert doc["compare"]["subprotocols"] == ["graphql-ws"]
    assert "legacy's WebSockets spoke graphql-ws (the gateway's graphql-transport-ws)" in stdout
    # The gateway's own runs spoke graphql-transport-ws (its first choice of the two offered).
    gateway_runs = [v for k, v in doc["raw"].items() if "legacy" not in k and "subprotocols" in v]
    assert gateway_runs and all(v["subprotocols"]["graphql-ws"] == 0 for v in gateway_runs)

