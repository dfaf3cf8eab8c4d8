"""Memory of operations waiting for a worker (docs/FAULTS.md, "Found in stop 33's audit:
overload"). The catalog's write lock is held by this script, so every query waits; each of C
connections first sends one operation that stays (its lane's worker waits for the lock), then
N operations with documents of PAD bytes (mode plain), N subscribe/complete pairs (mode
cycle), or N pairs whose variables are PAD bytes of `[1,1,…]` (mode cyclevars). Prints RSS
before and after, and once the lock is released. Serve a copy of a catalog: the lock is a write.

    overload_memory.py BINARY CATALOG-COPY C N PAD MODE [serve flags...]
"""
import json, os, sqlite3, subprocess, sys, time, re, signal
import tool_args

from websockets.sync.client import connect

binary, db, conns, n, pad, mode, extra = tool_args.positional(
    __doc__, ["BINARY", "CATALOG-COPY", "C", "N", "PAD", "MODE"], numbers={"C": int, "N": int, "PAD": int})
p = subprocess.Popen([binary, "serve", "--db", db, "--port", "0", "--workers", "2", "--busy-timeout-ms", "600000",
                      "--max-execution-ms", "0", "--log-level", "info", *extra], stdout=subprocess.PIPE, stderr=open(os.environ.get("MEMQ_LOG", "/dev/null"), "w"))
port = int(re.search(rb":(\d+)/graphql", p.stdout.readline()).group(1))
def rss():
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith("VmRSS"): return int(l.split()[1])
ws = []
for _ in range(conns):
    w = connect(f"ws://127.0.0.1:{port}/graphql", subprotocols=["graphql-transport-ws"], max_size=None)
    w.send(json.dumps({"type": "connection_init"})); w.recv()
    ws.append(w)
time.sleep(0.5)
r0 = rss()
lock = sqlite3.connect(db, isolation_level=None); lock.execute("BEGIN EXCLUSIVE")
filler = "#" + "x" * pad + "\n" if pad and mode != "cyclevars" else ""
t0 = time.time(); sent = 0
for k, w in enumerate(ws):  # one operation per connection that stays: its lane's worker waits for the lock
    w.send(json.dumps({"id": "blocker", "type": "subscribe", "payload": {"query": "{ b%d: catalogVersion { version } }" % k}}))
time.sleep(0.3)
for k, w in enumerate(ws):
    for i in range(n):
        q = filler + "{ v%d_%d: catalogVersion { version } }" % (k, i)
        if mode == "cyclevars":
            q = "{ v%d_%d: catalogVersion { version } }" % (k, i)
            w.send('{"id":"%d","type":"subscribe","payload":{"query":%s,"variables":{"x":[%s]}}}' % (i, json.dumps(q), ",".join(["1"] * (pad // 2))))
        else:
            w.send(json.dumps({"id": str(i), "type": "subscribe", "payload": {"query": q}}))
        if mode.startswith("cycle"):
            w.send(json.dumps({"id": str(i), "type": "complete"}))
        sent += 1
time.sleep(2)
r1 = rss()
errors = 0
for w in ws:
    try:
        while True:
            m = json.loads(w.recv(0.2))
            if m["type"] == "error": errors += 1
    except TimeoutError:
        pass
print(json.dumps({"mode": mode, "conns": conns, "per_conn": n, "pad": pad, "sent": sent, "send_s": round(time.time() - t0 - 2, 2),
                  "rss_before_mib": round(r0 / 1024, 1), "rss_queued_mib": round(r1 / 1024, 1),
                  "per_op_kib": round((r1 - r0) / max(1, sent), 2), "errors_seen": errors}))
lock.execute("COMMIT"); lock.close()
time.sleep(3)
print(json.dumps({"rss_after_release_mib": round(rss() / 1024, 1), "alive": p.poll() is None}))
for w in ws: w.close()
p.send_signal(signal.SIGTERM); p.wait(20)
