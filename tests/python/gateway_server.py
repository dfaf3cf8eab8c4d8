"""Starts the real `catalog-gateway serve` binary on an ephemeral port against a small catalog
made with the sqlite3 shell, for the WebSocket and HTTP interop tests."""
import json
import os
import re
import select
import signal
import subprocess
import time

import pytest

from websockets.sync.client import connect

from conftest import BINARY, CONTRACT

READY = re.compile(r"^catalog-gateway listening on ws://(?P<host>\[[^\]]+\]|[^:]+):(?P<port>\d+)/graphql "
                   r"and http://[^ ]+/graphql \(catalog: (?P<db>.+)\)$")

ROWS = """
INSERT INTO version VALUES (1, 10, 20);
INSERT INTO hierarchy VALUES (1, 'Cameras', 'cameras.png', 1, 0);
INSERT INTO hierarchy VALUES (2, 'Lenses', 'lenses.png', 1, 0);
INSERT INTO mfg VALUES (1, 'ARRI', 'arri.png');
INSERT INTO Product_Catalog (product_ID, Product, Manufacturer, cat, displayorder, description, keyid)
  VALUES (100, 'ALEXA Mini', 'ARRI', 1, 1, 'Super 35 camera', 1);
"""


def sqlite3(db, sql):
    """Runs SQL with the sqlite3 shell: a separate process, like any other writer."""
    subprocess.run(["sqlite3", str(db)], input=sql.encode(), check=True, capture_output=True)


def make_catalog(directory):
    schema = (CONTRACT / "radiant-schema.sql").read_text()
    schema = "\n".join(l for l in schema.splitlines() if not l.startswith("CREATE TABLE sqlite_sequence"))
    db = directory / "catalog.sqlite"
    sqlite3(db, schema + "\n" + ROWS)
    return str(db)


class Gateway:
    def __init__(self, db, *args, preexec_fn=None):
        self.db = db
        self.proc = subprocess.Popen([BINARY, "serve", "--db", db, "--port", "0", "--log-level", "warn", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=preexec_fn)
        line = self._ready_line(timeout=15)
        m = READY.match(line)
        assert m, f"unexpected ready line: {line!r}"
        assert m.group("db") == db
        # An IPv6 host (serve --host ::1) is shown in brackets: `host` is the address, for
        # sockets; `authority` is host:port as URLs and the Host header write it.
        self.host = m.group("host").strip("[]")
        self.port = int(m.group("port"))
        self.authority = f"{m.group('host')}:{self.port}"
        self.ws_url = f"ws://{self.authority}/graphql"
        self.http_url = f"http://{self.authority}/graphql"
        self.base = f"http://{self.authority}"

    def _ready_line(self, timeout):
        deadline = time.time() + timeout
        buf = b""
        while time.time() < deadline:
            r, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if r:
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    break
                buf += chunk
                if b"\n" in buf:
                    return buf.split(b"\n", 1)[0].decode()
            if self.proc.poll() is not None:
                break
        err = self.proc.stderr.read().decode() if self.proc.poll() is not None else ""
        raise AssertionError(f"server did not become ready: {buf!r} {err}")

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture
def catalog(tmp_path):
    return make_catalog(tmp_path)


@pytest.fixture
def gateway(catalog):
    g = Gateway(catalog)
    yield g
    assert g.stop() == 0


@pytest.fixture
def gateway_factory(catalog):
    started = []

    def start(*args):
        g = Gateway(catalog, *args)
        started.append(g)
        return g

    yield start
    for g in started:
        g.stop()


def send(ws, message):
    """One graphql-transport-ws message as JSON text."""
    ws.send(json.dumps(message))


def recv(ws, timeout=10):
    """The next message, parsed (TimeoutError after `timeout` seconds)."""
    return json.loads(ws.recv(timeout))


def acked(url, **kw):
    """A graphql-transport-ws connection past connection_init/connection_ack (`kw`: more
    arguments for websockets' connect)."""
    ws = connect(url, subprotocols=["graphql-transport-ws"], **kw)
    send(ws, {"type": "connection_init"})
    assert recv(ws) == {"type": "connection_ack"}
    return ws
