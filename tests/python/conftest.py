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
