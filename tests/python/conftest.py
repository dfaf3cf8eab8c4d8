import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("CATALOG_GATEWAY", str(ROOT / ".build/release/catalog-gateway"))
CONTRACT = ROOT.parent / "shared" / "contract"


@pytest.fixture(scope="session")
def binary():
    return BINARY


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory):
    """A demo catalog made by the binary itself (deterministic, default size)."""
    path = tmp_path_factory.mktemp("demo") / "catalog.sqlite"
    subprocess.run([BINARY, "demo-db", "--out", str(path)], check=True, capture_output=True)
    return str(path)


@pytest.fixture(scope="session")
def bench_catalogs(tmp_path_factory):
    """bench/run.py's two catalogs, small: (folder, demo, a 2,000-product "large" one), for
    `run.py --smoke --data folder --demo-db demo --large-db large`."""
    d = tmp_path_factory.mktemp("bench")
    demo, large = d / "demo.sqlite", d / "large.sqlite"
    subprocess.run([BINARY, "demo-db", "--out", str(demo)], check=True, capture_output=True)
    subprocess.run([BINARY, "demo-db", "--out", str(large), "--products", "2000"], check=True, capture_output=True)
    return d, demo, large
