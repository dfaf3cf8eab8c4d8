"""The WebSocket protocols as a state machine, fuzzed over the wire: a Hypothesis
RuleBasedStateMachine holds several connections to one running gateway (graphql-transport-ws
and the legacy graphql-ws) and drives random sequences and interleavings of what clients do —
open, init (once, twice, late, never), subscribe with fresh, duplicate and just-completed ids,
fast, slow and failing queries, catalogVersion and catalogChanges subscriptions, complete for
live, finished and unknown ids, ping, malformed messages, clean closes and TCP resets — while
another process commits versions. A model of what each connection is owed checks every message
as it arrives and, at the end of each run, that nothing owed is missing and that the server is
back to idle (its log's connection count, its open sockets).

The ordering rule the checks rest on: the server handles one connection's messages in order and
writes its answers in order, and a result of an operation the client completed or stopped is
dropped once the server has read that complete. So a ping (graphql-transport-ws) or an invalid
message (graphql-ws, answered with an `error`) sent right after a `complete` is a barrier:
nothing for the completed operation may come after its answer.

PROTOCOL_FUZZ_EXAMPLES (default 60) and PROTOCOL_FUZZ_STEPS (default 50) size a run; make them
large to run it long. `--hypothesis-seed=N` picks another sequence."""
import collections
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import time
import base64

import pytest
import requests
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from conftest import BINARY

EXAMPLES = int(os.environ.get("PROTOCOL_FUZZ_EXAMPLES", "60"))
STEPS = int(os.environ.get("PROTOCOL_FUZZ_STEPS", "50"))
STATS = collections.Counter()

READY = re.compile(r"listening on ws://(?P<host>[^:]+):(?P<port>\d+)/graphql")

# What a client asks, by kind. Queries are answered the same on every connection while the
# catalog's rows do not change (a version commit changes only the version row).
QUERIES = {
    "small": ("{ categories { id title } }", None),
    "product": ("query($id: ID!) { product(id: $id) { id name sku manufacturer { name } } }", {"id": "3"}),
    "heavy": ("{ manufacturers { name products(first: 100) { totalCount nodes { id name description kit { name } category { id title } } } } }", None),
    "search": ("query($t: String!) { search(text: $t, first: 100) { totalCount nodes { id name } } }", {"t": "a"}),
    "badvars": ("query($n: Int!) { products(first: $n) { totalCount } }", {"n": "x"}),
    "ahead": ("subscription($v: Int) { catalogChanges(sinceVersion: $v) { version } }", {"v": 1 << 40}),
    "invalid": ("{ nope }", None),
    "syntax": ("{ categories {", None),
}
VERSION_SUB = "subscription { catalogVersion { version } }"
CHANGES_SUB = "subscription($v: Int) { catalogChanges(sinceVersion: $v) { version products { id } removedProductIds } }"
# Kinds whose answer (transport) is an `error` message alone; every other query is next + complete.
REFUSED = {"invalid", "syntax"}
QUERY_KINDS = sorted(QUERIES)
SUB_KINDS = ["version", "changes", "changes_since"]
MALFORMED = ["not json", "[]", "{}", '{"type": 5}', '{"type": "subscribe", "id": "m"}',
             '{"type": "subscribe", "id": "", "payload": {"query": "{ categories { id } }"}}',
             '{"type": "next", "id": "x", "payload": {}}', '{"type": "complete"}', '{"type": "bogus"}']


class Violation(AssertionError):
    pass


# ---- a WebSocket client that reads frames without blocking, in order, close frames included ----

class Wire:
    def __init__(self, host, port, subprotocol, tag="-"):
        self.sock = socket.create_connection((host, port), timeout=5)
        # Each message leaves at once: with Nagle's algorithm a small message sent right after
        # another waits for its ACK, which the server delays 40 ms when it has nothing to
        # answer (a stop for a finished id), and the model would take the server to have read
        # what it had not.
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /graphql HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"Sec-WebSocket-Protocol: {subprotocol}\r\nX-Forwarded-For: {tag}\r\n\r\n").encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError(f"closed during the handshake: {buf!r}")
            buf += chunk
        head, self.buf = buf.split(b"\r\n\r\n", 1)
        assert b" 101 " in head.split(b"\r\n", 1)[0], head
        self.sock.setblocking(False)
        self.eof = False
        self.t0 = time.monotonic()
        self.sent = []
        self.local_port = self.sock.getsockname()[1]
        self.out = b""

    def send_frame(self, opcode, payload):
        if isinstance(payload, str):
            payload = payload.encode()
        n = len(payload)
        header = bytes([0x80 | opcode])
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        self.out += header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.flush()

    def flush(self, timeout=5):
        deadline = time.monotonic() + timeout
        while self.out and not self.eof:
            try:
                n = self.sock.send(self.out)
                self.out = self.out[n:]
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise Violation("the server took none of our bytes for 5 s")
                select.select([], [self.sock], [], 0.05)
            except OSError as e:
                self.sent.append(("send failed", round(time.monotonic() - self.t0, 3), repr(e)))
                self.eof = True  # it closed; what it said is still to be read

    def send(self, message):
        text = message if isinstance(message, str) else json.dumps(message)
        self.sent.append(("sent", round(time.monotonic() - self.t0, 3), text[:160]))
        self.send_frame(0x1, text)

    def fill(self, timeout):
        """Reads what is there, waiting up to `timeout` for something."""
        if self.eof:
            return False
        r, _, _ = select.select([self.sock], [], [], timeout)
        if not r:
            return False
        try:
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return False
        except OSError as e:
            self.sent.append(("recv failed", round(time.monotonic() - self.t0, 3), repr(e)))
            chunk = b""
        if not chunk:
            self.sent.append(("eof", round(time.monotonic() - self.t0, 3), ""))
            self.eof = True
            return False
        self.buf += chunk
        return True

    def frames(self):
        """Complete frames in the buffer: ("text", obj) / ("close", code, reason); pings answered."""
        out = []
        while len(self.buf) >= 2:
            b0, b1 = self.buf[0], self.buf[1]
            n, at = b1 & 0x7F, 2
            if n == 126:
                if len(self.buf) < 4:
                    break
                n, at = struct.unpack("!H", self.buf[2:4])[0], 4
            elif n == 127:
                if len(self.buf) < 10:
                    break
                n, at = struct.unpack("!Q", self.buf[2:10])[0], 10
            if len(self.buf) < at + n:
                break
            payload, self.buf = self.buf[at:at + n], self.buf[at + n:]
            opcode = b0 & 0x0F
            if opcode == 0x8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                out.append(("close", code, payload[2:].decode("utf-8", "replace")))
            elif opcode == 0x9:
                self.send_frame(0xA, payload)
            elif opcode in (0x1, 0x2):
                out.append(("text", json.loads(payload)))
            else:
                raise Violation(f"unexpected frame opcode {opcode}")
        return out

    def close_clean(self):
        try:
            self.send_frame(0x8, struct.pack("!H", 1000))
        except OSError:
            pass

    def reset(self):
        """A TCP reset: SO_LINGER 0, then close."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.sock.close()
        self.eof = True

    def shut(self):
        try:
            self.sock.close()
        except OSError:
            pass


# ---- the gateway: one process for the whole test, its log in a file ----

class Server:
    def __init__(self, db, log_path):
        self.db = db
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen([BINARY, "serve", "--db", db, "--port", "0", "--log-level", "info"],
                                     stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode()
        m = READY.search(line)
        assert m, f"no ready line: {line!r}"
        self.host, self.port = m.group("host"), int(m.group("port"))
        self.base = f"http://{self.host}:{self.port}"

    def alive(self):
        return self.proc.poll() is None

    def version(self):
        return requests.get(self.base + "/healthz", timeout=5).json()["version"]

    def log_counts(self):
        text = open(self.log_path, "rb").read().decode("utf-8", "replace")
        return text.count(" connection_opened "), text.count(" connection_closed ")

    def sockets(self):
        n = 0
        for fd in os.listdir(f"/proc/{self.proc.pid}/fd"):
            try:
                if os.readlink(f"/proc/{self.proc.pid}/fd/{fd}").startswith("socket:"):
                    n += 1
            except OSError:
                pass
        return n

    def rss_kib(self):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


# ---- the model ----

class Op:
    def __init__(self, oid, kind, since_version=None):
        self.id = oid
        self.kind = kind
        self.since_version = since_version  # the model's version when it was sent
        self.nexts = []
        self.terminal = None                # "complete" / "error"
        self.client_done = None              # barrier number sent after our complete/stop
        self.legacy_live_at_stop = False     # graphql-ws: stopped while live, so owed a complete
        self.sent_seq = self.end_seq = None  # the model's clock when sent / no longer registered
        self.refused = False                 # TOO_MANY_SUBSCRIPTIONS
        self.seen_versions = []
        self.at = time.monotonic()

    @property
    def streaming(self):
        return self.kind in SUB_KINDS

    def __repr__(self):
        return f"Op({self.id!r}, {self.kind}, nexts={len(self.nexts)}, terminal={self.terminal}, client_done={self.client_done})"


class Conn:
    def __init__(self, name, proto, wire):
        self.name = name
        self.proto = proto            # "transport" / "legacy"
        self.wire = wire
        self.opened = time.monotonic()
        self.init_sent = 0
        self.acks = 0
        self.live = {}                # id -> Op the server may still answer for
        self.pending = {}             # barrier -> [Op] completed by us, answers allowed until it
        self.done = []                # ops with their last word
        self.barrier = 0
        self.barriers_seen = 0
        self.pongs = collections.deque()   # payloads of pings we sent, in order
        self.expect_close = None      # set of codes the server must close with
        self.closed = None            # (code, reason) once the close frame arrived
        self.gone = False             # we closed or reset it
        self.legacy_errors = 0        # legacy `error`s we asked for (malformed, start before init)
        self.streams = []             # every subscription that went live, for the limit's check
        self.next_id = 0
        self.log = []

    @property
    def usable(self):
        return not self.gone and self.closed is None and self.expect_close is None and not self.wire.eof

    def fresh_id(self):
        self.next_id += 1
        return f"{self.name}.{self.next_id}"


class ProtocolModel(RuleBasedStateMachine):
    server = None
    answers = None

    def __init__(self):
        super().__init__()
        self.conns = []
        self.count = 0
        self.version = self.server.version()
        self.versions = [self.version]  # every version committed while this run lasts
        self.steps = []
        self.seq = 0
        STATS["examples"] += 1

    # -- helpers --

    def fail(self, conn, message):
        time.sleep(0.2)  # the server's log of it
        tag = f"run{STATS['examples']}-{conn.name}"
        text = open(self.server.log_path, "rb").read().decode("utf-8", "replace")
        m = re.search(r"event=connection_opened conn=(\d+) [^\n]*forwarded_for=" + re.escape(tag) + " ", text)
        server = [l[:300] for l in text.splitlines() if m and f" conn={m.group(1)} " in l]
        trace = "\n  ".join([str(e)[:240] for e in conn.log[-40:]] + ["server log:"] + server
                             + ["steps of this run:"] + [str(st)[:200] for st in self.steps])
        raise Violation(f"{conn.name} ({conn.proto}, port {conn.wire.local_port}): {message}\nits last messages:\n  {trace}")

    def usable(self, proto=None):
        return [c for c in self.conns if c.usable and (proto is None or c.proto == proto)]

    def pick(self, i, proto=None, acked=None):
        """The i-th usable connection matching; a new one when none does (so that no step is
        lost), up to 16 per run."""
        cs = [c for c in self.usable(proto) if acked is None or (c.init_sent > 0) == acked]
        if cs:
            return cs[i % len(cs)]
        if self.count >= 16:
            return None
        return self.connect(proto or ("legacy" if i % 3 == 2 else "transport"), acked is not False)

    def ops_of(self, conn, pred):
        return [op for op in conn.live.values() if pred(op)]

    def drain(self, timeout=0.0):
        """Reads every connection's messages that are there (waiting up to `timeout` for one)."""
        socks = {c.wire.sock: c for c in self.conns if not c.gone and not c.wire.eof and c.closed is None}
        if not socks:
            return
        r, _, _ = select.select(list(socks), [], [], timeout)
        for s in r:
            c = socks[s]
            while c.wire.fill(0):
                pass
            self.handle(c)
        for c in self.conns:
            if not c.gone and c.closed is None and c.wire.eof:
                self.handle(c)
                c.log.extend(c.wire.sent)
                c.wire.sent.clear()
                if c.closed is None:
                    if c.expect_close is not None and None in c.expect_close:
                        c.closed = (None, "")
                        STATS["close without frame (allowed)"] += 1
                    else:
                        self.fail(c, "the server dropped the connection without a close frame")

    def handle(self, c):
        for f in c.wire.frames():
            STATS["messages"] += 1
            c.log.extend(c.wire.sent)
            c.wire.sent.clear()
            c.log.append(("got", round(time.monotonic() - c.wire.t0, 3)) + f)
            if f[0] == "close":
                self.closed(c, f[1], f[2])
                return
            if c.closed is not None:
                self.fail(c, f"a message after the close frame: {f}")
            m = f[1]
            if c.proto == "transport":
                self.transport_message(c, m)
            else:
                self.legacy_message(c, m)

    def closed(self, c, code, reason):
        c.closed = (code, reason)
        allowed = set(c.expect_close or ())
        if c.init_sent == 0 and time.monotonic() - c.opened > 2.5:
            allowed.add(4408)
        if code not in allowed:
            self.fail(c, f"closed with {code} {reason!r}, expected {sorted(allowed, key=str) or 'no close'}")
        STATS[f"close {code}"] += 1
        c.live.clear()
        c.pending.clear()

    def owner(self, c, oid):
        """The operation a message for `oid` belongs to: one completed by us whose barrier has not
        come back yet comes first (its answers may still be on the wire), else the live one."""
        for b in sorted(c.pending):
            for op in c.pending[b]:
                if op.id == oid and op.terminal is None:
                    return op
        return c.live.get(oid)

    def tick(self):
        self.seq += 1
        return self.seq

    def ended(self, op):
        if op.end_seq is None:
            op.end_seq = self.tick()

    def too_many(self, c, op):
        """TOO_MANY_SUBSCRIPTIONS is right only if more than --max-subscriptions (100) could
        have been registered when it was refused: every subscription live at some point between
        this one's subscribe and now (whatever order the workers registered them in)."""
        bound = sum(1 for o in c.streams if o.end_seq is None or o.end_seq > op.sent_seq)
        if bound <= 100:
            self.fail(c, f"{op} refused as too many with at most {bound} subscriptions live (limit 100)")
        op.refused = True
        STATS["too many subscriptions (allowed)"] += 1

    def terminal(self, c, op, how):
        if op.terminal is not None:
            self.fail(c, f"a second terminal message ({how}) for {op}")
        op.terminal = how
        self.ended(op)
        if c.live.get(op.id) is op:
            del c.live[op.id]
            c.done.append(op)

    def check_next(self, c, op, payload):
        if op.terminal is not None:
            self.fail(c, f"next after the terminal message of {op}")
        op.nexts.append(payload)
        codes = [e.get("extensions", {}).get("code") for e in payload.get("errors") or []]
        if op.streaming and codes == ["TOO_MANY_SUBSCRIPTIONS"] and c.proto == "legacy":
            self.too_many(c, op)
            return
        if op.kind in QUERIES:
            if len(op.nexts) > 1:
                self.fail(c, f"a second next for the query {op}")
            if op.kind == "invalid" or op.kind == "syntax":
                if c.proto == "transport":
                    self.fail(c, f"next for a document that does not validate: {op}")
                if payload.get("data") is not None or not payload.get("errors"):
                    self.fail(c, f"legacy answer to {op.kind} is not errors alone: {payload}")
            elif payload != self.answers[op.kind]:
                self.fail(c, f"the answer to {op.kind} differs from a clean connection's: {str(payload)[:300]}")
        elif op.kind == "version":
            v = payload["data"]["catalogVersion"]["version"]
            self.check_version_step(c, op, v)
        else:
            cs = payload["data"]["catalogChanges"]
            if cs["products"] or cs["removedProductIds"]:
                self.fail(c, f"a change set with products for a version-row commit: {cs}")
            self.check_version_step(c, op, cs["version"])

    def check_version_step(self, c, op, v):
        seen = op.seen_versions
        if seen and v <= seen[-1]:
            self.fail(c, f"{op}: version {v} after {seen[-1]} (not strictly increasing)")
        if not seen:
            floor = op.since_version
            if op.kind == "changes":
                # Without sinceVersion: sets from the next version on.
                if v <= floor:
                    self.fail(c, f"{op}: first set {v} is not after the version {floor} current at subscribing")
            elif v < floor:
                self.fail(c, f"{op}: first version {v} is older than {floor}, current at subscribing")
        else:
            # Every version committed between two deliveries is delivered (the model waits for
            # each commit to arrive before the next, so none are read as one).
            missed = [w for w in self.versions if seen[-1] < w < v]
            if missed and op.kind == "version":
                self.fail(c, f"{op}: versions {missed} skipped between {seen[-1]} and {v}")
        if v not in self.versions and v > max(self.versions):
            self.fail(c, f"{op}: version {v} was never committed (model: {self.versions[-3:]})")
        seen.append(v)

    def transport_message(self, c, m):
        t = m.get("type")
        if t == "connection_ack":
            c.acks += 1
            if c.init_sent == 0 or c.acks > 1:
                self.fail(c, f"connection_ack #{c.acks} after {c.init_sent} connection_init")
            return
        if t == "pong":
            if not c.pongs:
                self.fail(c, f"a pong for no ping: {m}")
            want = c.pongs.popleft()
            got = m.get("payload")
            if got != want:
                self.fail(c, f"pong payload {got} for ping {want}")
            if isinstance(want, dict) and "barrier" in want:
                self.barrier_reached(c, want["barrier"])
            return
        if t == "ping":
            c.wire.send({"type": "pong"})
            return
        if t not in ("next", "error", "complete"):
            self.fail(c, f"unexpected message {m}")
        oid = m.get("id")
        op = self.owner(c, oid)
        if op is None:
            self.fail(c, f"{t} for id {oid!r}, which has no operation the server may answer")
        if c.init_sent == 0:
            self.fail(c, f"{t} on a connection that never sent connection_init")
        if t == "next":
            self.check_next(c, op, m["payload"])
        elif t == "error":
            codes = [e.get("extensions", {}).get("code") for e in m.get("payload") or [] if isinstance(e, dict)]
            if op.streaming and codes == ["TOO_MANY_SUBSCRIPTIONS"]:
                self.too_many(c, op)
            elif op.kind not in REFUSED and op.client_done is None:
                self.fail(c, f"error for {op}: {m}")
            if not isinstance(m.get("payload"), list) or not m["payload"]:
                self.fail(c, f"error without errors: {m}")
            self.terminal(c, op, "error")
        else:
            if op.kind in REFUSED:
                self.fail(c, f"complete for a document that does not validate: {op}")
            if op.kind in QUERIES and len(op.nexts) != 1 and op.client_done is None:
                self.fail(c, f"complete after {len(op.nexts)} next for the query {op}")
            if op.streaming and op.client_done is None:
                self.fail(c, f"complete for a subscription we did not complete: {op}")
            self.terminal(c, op, "complete")

    def legacy_message(self, c, m):
        t = m.get("type")
        if t == "ka":
            if c.init_sent == 0:
                self.fail(c, "ka before connection_init")
            return
        if t == "connection_ack":
            c.acks += 1
            if c.acks > c.init_sent:
                self.fail(c, f"connection_ack #{c.acks} after {c.init_sent} connection_init")
            return
        oid = m.get("id")
        if t == "error" and isinstance(oid, str) and oid.startswith("~b"):
            self.barrier_reached(c, int(oid[2:]))
            return
        if t == "error":
            if c.legacy_errors <= 0:
                self.fail(c, f"an error we did not ask for: {m}")
            c.legacy_errors -= 1
            return
        if t not in ("data", "complete"):
            self.fail(c, f"unexpected message {m}")
        op = self.owner(c, oid)
        if op is None:
            self.fail(c, f"{t} for id {oid!r}, which has no operation the server may answer")
        if t == "data":
            self.check_next(c, op, m["payload"])
        else:
            if op.kind in QUERIES and len(op.nexts) != 1 and op.client_done is None:
                self.fail(c, f"complete after {len(op.nexts)} data for the query {op}")
            if op.streaming and op.client_done is None and not op.refused:
                self.fail(c, f"complete for a subscription we did not stop: {op}")
            self.terminal(c, op, "complete")

    def send_barrier(self, c):
        c.barrier += 1
        b = c.barrier
        c.pending.setdefault(b, [])
        if c.proto == "transport":
            c.pongs.append({"barrier": b})
            c.wire.send({"type": "ping", "payload": {"barrier": b}})
        else:
            c.wire.send({"type": "~barrier", "id": f"~b{b}"})
        return b

    def barrier_reached(self, c, b):
        if b != c.barriers_seen + 1:
            self.fail(c, f"barrier {b} answered after {c.barriers_seen}: out of order")
        c.barriers_seen = b
        for op in c.pending.pop(b, []):
            if c.proto == "legacy" and op.terminal is None and op.legacy_live_at_stop:
                # subscriptions-transport-ws: stop of a running operation is answered with complete.
                self.fail(c, f"no complete for {op} stopped while live")
            if op.terminal is None:
                op.terminal = "cancelled"
            c.done.append(op)

    def wait_barrier(self, c, timeout=10):
        b = self.send_barrier(c)
        deadline = time.monotonic() + timeout
        while c.usable and c.barriers_seen < b:
            if time.monotonic() > deadline:
                self.fail(c, f"no answer to barrier {b} within {timeout} s")
            self.drain(0.05)

    def subscribe(self, c, oid, kind):
        if kind in QUERIES:
            query, variables = QUERIES[kind]
        elif kind == "version":
            query, variables = VERSION_SUB, None
        else:
            query, variables = CHANGES_SUB, ({"v": self.version} if kind == "changes_since" else {})
        payload = {"query": query}
        if variables is not None:
            payload["variables"] = variables
        c.wire.send({"id": oid, "type": "subscribe" if c.proto == "transport" else "start", "payload": payload})
        STATS[f"sent {kind}"] += 1

    # -- rules --

    @rule(proto=st.sampled_from(["transport", "transport", "legacy"]), init=st.sampled_from([True, True, True, False]))
    def open(self, proto, init):
        STATS["rule open"] += 1
        self.steps.append(("open", {k: v for k, v in locals().items() if k != "self"}))
        if len(self.usable()) < 6:
            self.connect(proto, init)

    def connect(self, proto, init):
        self.count += 1
        name = f"c{self.count}"
        wire = Wire(self.server.host, self.server.port, "graphql-transport-ws" if proto == "transport" else "graphql-ws",
                    tag=f"run{STATS['examples']}-{name}")
        c = Conn(name, proto, wire)
        self.conns.append(c)
        if init:
            self.init(c)
        return c

    def init(self, c):
        c.init_sent += 1
        c.wire.send({"type": "connection_init", "payload": {}})
        if c.proto == "transport" and c.init_sent > 1:
            c.expect_close = {4429}

    @rule(i=st.integers(0, 7), again=st.sampled_from([False, False, False, True]))
    def connection_init(self, i, again):
        """A late connection_init, or (`again`) one more on any connection."""
        STATS["rule connection_init"] += 1
        self.steps.append(("connection_init", {k: v for k, v in locals().items() if k != "self"}))
        c = self.pick(i, acked=None if again else False)
        if c is None:
            return
        if c is not None:
            self.init(c)

    @rule(i=st.integers(0, 7), kind=st.sampled_from(QUERY_KINDS + ["heavy", "search", "small"]))
    def subscribe_query(self, i, kind):
        STATS["rule subscribe_query"] += 1
        self.steps.append(("subscribe_query", {k: v for k, v in locals().items() if k != "self"}))
        c = self.pick(i, acked=True) or self.pick(i)
        if c is None:
            return
        self.start(c, c.fresh_id(), kind)

    @rule(i=st.integers(0, 7), kind=st.sampled_from(SUB_KINDS + ["version"]))
    def subscribe_stream(self, i, kind):
        STATS["rule subscribe_stream"] += 1
        self.steps.append(("subscribe_stream", {k: v for k, v in locals().items() if k != "self"}))
        c = self.pick(i, acked=True) or self.pick(i)
        if c is None:
            return
        self.start(c, c.fresh_id(), kind)

    @rule(i=st.integers(0, 7), kinds=st.lists(st.sampled_from(QUERY_KINDS + SUB_KINDS), min_size=2, max_size=6))
    def subscribe_burst(self, i, kinds):
        """Several subscribes in a row, before any answer."""
        STATS["rule subscribe_burst"] += 1
        self.steps.append(("subscribe_burst", {k: v for k, v in locals().items() if k != "self"}))
        c = self.pick(i, acked=True) or self.pick(i)
        if c is None:
            return
        for kind in kinds:
            if c.usable:
                self.start(c, c.fresh_id(), kind)

    def start(self, c, oid, kind):
        if kind == "heavy" and sum(op.kind == "heavy" for op in c.live.values()) >= 4:
            # A client that keeps 16 answers of 1 MB waiting is a slow reader, closed with 1008
            # by --max-queued-bytes (tests/python/test_faults.py): not this model's subject.
            kind = "search"
        op = Op(oid, kind, since_version=self.version)
        self.subscribe(c, oid, kind)
        if c.init_sent == 0:
            if c.proto == "transport":
                c.expect_close = {4401}
            else:
                c.legacy_errors += 1
            return
        if oid in c.live:
            assert c.proto == "transport"
            c.expect_close = {4409}
            return
        c.live[oid] = op
        if op.streaming:
            op.sent_seq = self.tick()
            c.streams.append(op)

    @rule(i=st.integers(0, 7), j=st.integers(0, 50))
    def subscribe_duplicate(self, i, j):
        """A subscribe under the id of a live subscription: 4409 (graphql-transport-ws); graphql-ws
        replaces the operation. There the model first waits for the old one's first answer, so
        that every later message for the id is the new operation's."""
        STATS["rule subscribe_duplicate"] += 1
        self.steps.append(("subscribe_duplicate", {k: v for k, v in locals().items() if k != "self"}))
        def candidate(c, op):
            return op.streaming and (c.proto == "transport" or op.kind != "changes")
        cs = [c for c in self.usable() if c.init_sent and any(candidate(c, op) for op in c.live.values())]
        if not cs:
            return
        c = cs[i % len(cs)]
        subs = sorted(oid for oid, op in c.live.items() if candidate(c, op))
        oid = subs[j % len(subs)]
        old = c.live[oid]
        if c.proto == "legacy":
            deadline = time.monotonic() + 10
            while c.usable and not old.seen_versions:
                if time.monotonic() > deadline:
                    self.fail(c, f"no first answer for {old} within 10 s")
                self.drain(0.02)
            if not c.usable:
                return
            del c.live[oid]
            old.terminal = "replaced"
            self.ended(old)
            c.done.append(old)
        STATS["duplicate " + c.proto] += 1
        self.start(c, oid, "small")

    @rule(i=st.integers(0, 7), j=st.integers(0, 50), kind=st.sampled_from(["small", "version", "heavy", "invalid"]))
    def subscribe_reused(self, i, j, kind):
        """A subscribe under an id whose operation has had its last word (or was completed by us)."""
        STATS["rule subscribe_reused"] += 1
        self.steps.append(("subscribe_reused", {k: v for k, v in locals().items() if k != "self"}))
        cs = [c for c in self.usable() if c.done]
        if not cs:
            return
        c = cs[i % len(cs)]
        ids = sorted({op.id for op in c.done} - set(c.live))
        if ids:
            self.start(c, ids[j % len(ids)], kind)

    @rule(i=st.integers(0, 7), j=st.integers(0, 50), resubscribe=st.booleans())
    def complete_live(self, i, j, resubscribe):
        """complete (stop) for an operation we have no last word for, then a barrier; with
        `resubscribe` the same id again right after, before anything came back."""
        STATS["rule complete_live"] += 1
        self.steps.append(("complete_live", {k: v for k, v in locals().items() if k != "self"}))
        cs = [c for c in self.usable() if c.live and c.init_sent]
        if not cs:
            return
        c = cs[i % len(cs)]
        oid = sorted(c.live)[j % len(c.live)]
        op = c.live.pop(oid)
        c.wire.send({"id": oid, "type": "complete" if c.proto == "transport" else "stop"})
        self.ended(op)
        op.legacy_live_at_stop = True
        op.client_done = self.send_barrier(c)
        c.pending[op.client_done].append(op)
        STATS["complete live"] += 1
        if resubscribe:
            self.start(c, oid, "small")

    @rule(i=st.integers(0, 7), j=st.integers(0, 50), unknown=st.booleans())
    def complete_finished_or_unknown(self, i, j, unknown):
        STATS["rule complete_finished_or_unknown"] += 1
        self.steps.append(("complete_finished_or_unknown", {k: v for k, v in locals().items() if k != "self"}))
        c = self.pick(i)
        if c is None:
            return
        ids = sorted({op.id for op in c.done} - set(c.live))
        oid = f"{c.name}.nobody" if unknown or not ids else ids[j % len(ids)]
        c.wire.send({"id": oid, "type": "complete" if c.proto == "transport" else "stop"})

    @rule(i=st.integers(0, 7), payload=st.sampled_from([None, {}, {"k": [1, "x", None]}]))
    def ping(self, i, payload):
        STATS["rule ping"] += 1
        self.steps.append(("ping", {k: v for k, v in locals().items() if k != "self"}))
        c = self.pick(i, "transport")
        if c is None:
            return
        message = {"type": "ping"}
        if payload is not None:
            message["payload"] = payload
        c.pongs.append(payload)
        c.wire.send(message)

    @rule(i=st.integers(0, 7), text=st.sampled_from(MALFORMED), legacy_only=st.booleans())
    def malformed(self, i, text, legacy_only):
        STATS["rule malformed"] += 1
        self.steps.append(("malformed", {k: v for k, v in locals().items() if k != "self"}))
        c = self.pick(i, "legacy") if legacy_only else self.pick(i)
        if c is None:
            return
        c.wire.send(text)
        if c.proto == "transport":
            c.expect_close = {4400}
        else:
            c.legacy_errors += 1

    @rule(i=st.integers(0, 7))
    def connection_terminate(self, i):
        STATS["rule connection_terminate"] += 1
        self.steps.append(("connection_terminate", {k: v for k, v in locals().items() if k != "self"}))
        c = self.pick(i, "legacy")
        if c is None:
            return
        c.wire.send({"type": "connection_terminate"})
        c.expect_close = {1000}

    @rule(i=st.integers(0, 7), reset=st.booleans())
    def close(self, i, reset):
        STATS["rule close"] += 1
        self.steps.append(("close", {k: v for k, v in locals().items() if k != "self"}))
        c = self.pick(i)
        if c is None:
            return
        if reset:
            c.wire.reset()
        else:
            c.wire.close_clean()
            # lws 4.1 answers a close frame that arrives while it holds part of a frame the
            # socket did not take with a TCP close, no close frame (ops-ws.c, "Closing on peer
            # close due to Pending tx"): known, and left (docs/FAULTS.md).
            c.expect_close = {1000, 1005, None}
            deadline = time.monotonic() + 5
            while c.closed is None and not c.wire.eof and time.monotonic() < deadline:
                self.drain(0.05)
            if c.closed is None and not c.wire.eof:
                self.fail(c, "no close frame answered ours within 5 s")
            c.wire.shut()
        c.gone = True
        STATS["closed reset" if reset else "closed clean"] += 1

    @rule()
    def bump_version(self):
        """Another process commits a version; every live catalogVersion / catalogChanges
        subscription is pushed it, exactly once and in order."""
        STATS["rule bump_version"] += 1
        self.steps.append(("bump_version", {k: v for k, v in locals().items() if k != "self"}))
        if not any(op.streaming for c in self.usable() for op in c.live.values()):
            return
        # The server has read what each connection sent (a start replacing a subscription, a
        # stop): otherwise the commit may rightly reach an operation the model thinks gone.
        for c in self.usable():
            self.wait_barrier(c)
        r = subprocess.run([BINARY, "bump-version", "--db", self.server.db], capture_output=True)
        assert r.returncode == 0, r.stderr
        deadline = time.monotonic() + 10
        while (v := self.server.version()) == self.version:
            assert time.monotonic() < deadline, "/healthz never saw the new version"
            time.sleep(0.005)
        self.version = v
        self.versions.append(v)
        STATS["bumps"] += 1
        self.await_versions(v)

    def await_versions(self, v, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            owed = [(c, op) for c in self.usable() for op in c.live.values()
                    if op.streaming and c.init_sent and (op.kind != "changes" or op.seen_versions)
                    and (not op.seen_versions or op.seen_versions[-1] < v)]
            if not owed:
                return
            if time.monotonic() > deadline:
                c, op = owed[0]
                self.fail(c, f"{op} was not pushed version {v} within {timeout} s")
            self.drain(0.02)

    @rule(wait=st.sampled_from([0.0, 0.0, 0.01, 0.1]))
    def settle(self, wait):
        STATS["rule settle"] += 1
        self.steps.append(("settle", {k: v for k, v in locals().items() if k != "self"}))
        self.drain(wait)

    @rule(i=st.integers(0, 7))
    def barrier(self, i):
        STATS["rule barrier"] += 1
        self.steps.append(("barrier", {k: v for k, v in locals().items() if k != "self"}))
        c = self.pick(i)
        if c is not None:
            self.wait_barrier(c)

    @rule(go=st.integers(0, 3))
    def bystander(self, go):
        """A clean connection's query is answered right, whatever the others do."""
        STATS["rule bystander"] += 1
        self.steps.append(("bystander", {k: v for k, v in locals().items() if k != "self"}))
        if go:
            return
        w = Wire(self.server.host, self.server.port, "graphql-transport-ws")
        try:
            w.send({"type": "connection_init"})
            w.send({"id": "b", "type": "subscribe", "payload": {"query": QUERIES["small"][0]}})
            got = []
            deadline = time.monotonic() + 10
            while len(got) < 3 and time.monotonic() < deadline:
                w.fill(0.05)
                got += w.frames()
            assert got == [("text", {"type": "connection_ack"}),
                           ("text", {"id": "b", "type": "next", "payload": self.answers["small"]}),
                           ("text", {"id": "b", "type": "complete"})], got
        finally:
            w.close_clean()
            w.shut()

    # -- invariants --

    @invariant()
    def server_up(self):
        self.drain(0)
        assert self.server.alive(), f"the gateway exited with {self.server.proc.returncode}"
        STATS["steps"] += 1

    def teardown(self):
        try:
            self.finish()
        finally:
            for c in self.conns:
                c.wire.shut()

    def finish(self):
        if not self.server.alive():
            return
        # Whatever each open connection is owed arrives: every query its one answer, every
        # completed operation nothing after its barrier, every expected close its code.
        deadline = time.monotonic() + 15
        for c in self.conns:
            if c.usable:
                self.wait_barrier(c)
            def owed(op):
                return not op.streaming or (op.kind != "changes" and not op.seen_versions)
            while c.usable and any(owed(op) for op in c.live.values()) and c.init_sent:
                if time.monotonic() > deadline:
                    self.fail(c, f"never answered: {[op for op in c.live.values() if owed(op)]}")
                self.drain(0.05)
            while not c.gone and c.expect_close is not None and c.closed is None and not c.wire.eof:
                if time.monotonic() > deadline:
                    self.fail(c, f"no close {c.expect_close} within 15 s")
                self.drain(0.05)
            if c.closed is None and c.wire.eof and not c.gone:
                self.drain(0)
        for c in self.conns:
            for op in c.done:
                if op.kind in QUERIES and op.client_done is None and op.kind not in REFUSED and len(op.nexts) != 1:
                    self.fail(c, f"{op} ended without its answer")
            for op in c.live.values():
                if op.streaming and c.usable:
                    seen = op.seen_versions
                    later = [v for v in self.versions if seen and v > seen[0]]
                    if op.kind == "version" and seen[1:] != later:
                        self.fail(c, f"{op}: versions {seen} for commits {self.versions}")
        for c in self.conns:
            if not c.gone:
                c.wire.reset() if len(c.name) % 2 else (c.wire.close_clean(), c.wire.shut())
                c.gone = True
        # The server's accounting is back to idle: as many connections closed as opened (its
        # log), and no socket of ours left (its open descriptors: the listener and whatever it
        # had before).
        deadline = time.monotonic() + 10
        while True:
            opened, closed = self.server.log_counts()
            socks = self.server.sockets()
            if opened == closed and socks <= self.server.idle_sockets:
                break
            if time.monotonic() > deadline:
                raise Violation(f"not idle 10 s after every client left: {opened} opened, {closed} closed, "
                                f"{socks} sockets (idle: {self.server.idle_sockets})")
            time.sleep(0.02)
        self.server.rss.append(self.server.rss_kib())
        if STATS["examples"] % 200 == 0:
            print(f"[protocol model] {STATS['examples']} runs, {STATS['steps']} steps, {STATS['messages']} messages, "
                  f"{STATS['bumps']} commits, RSS {self.server.rss[-1]} KiB", flush=True)


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("protocol-model")
    db = str(directory / "catalog.sqlite")
    subprocess.run([BINARY, "demo-db", "--out", db, "--products", "3000"], check=True, capture_output=True)
    server = Server(db, str(directory / "gateway.log"))
    try:
        answers = {}
        for kind, (query, variables) in QUERIES.items():
            if kind in REFUSED:
                continue
            w = Wire(server.host, server.port, "graphql-transport-ws")
            w.send({"type": "connection_init"})
            w.send({"id": "q", "type": "subscribe", "payload": {"query": query, "variables": variables}})
            got = []
            deadline = time.monotonic() + 10
            while len(got) < 3 and time.monotonic() < deadline:
                w.fill(0.05)
                got += w.frames()
            w.shut()
            assert got[1][1]["type"] == "next", got
            answers[kind] = got[1][1]["payload"]
        assert len(json.dumps(answers["heavy"])) > 500_000
        assert answers["search"]["data"]["search"]["totalCount"] > 0
        time.sleep(0.2)
        server.idle_sockets = server.sockets()
        server.rss = []
        yield server, answers
    finally:
        assert server.stop() == 0, open(server.log_path, "rb").read()[-3000:]


def test_protocol_state_machine(fuzz_server):
    ProtocolModel.server, ProtocolModel.answers = fuzz_server
    STATS.clear()
    started = time.monotonic()
    try:
        run_state_machine_as_test(ProtocolModel, settings=settings(
            max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None,
            suppress_health_check=list(HealthCheck)))
    finally:
        rss = ProtocolModel.server.rss
        counts = dict(sorted((k, v) for k, v in STATS.items() if k.startswith(("close", "sent", "rule", "dup", "too"))))
        print(f"\nprotocol model: {STATS['examples']} runs, {STATS['steps']} steps, {STATS['messages']} messages, "
              f"{STATS['bumps']} commits in {time.monotonic() - started:.0f} s; RSS after each run (KiB): "
              f"{rss[:3]}…{rss[-3:]}; {counts}")
    # Many rounds of opening and dropping connections leave the server's memory where it was.
    if len(rss) >= 40:
        quarter = len(rss) // 4
        early, late = sorted(rss[quarter:2 * quarter])[quarter // 2], sorted(rss[-quarter:])[quarter // 2]
        assert late - early < 16 * 1024, f"RSS grew from {early} to {late} KiB over {len(rss)} runs"
