"""Two gateway binaries serving one catalog file at once (docs/FAULTS.md, "Found in stop 34's
audit: upgrades, downgrades and two versions on one file"). Makes a demo catalog of P products
with A, serves it with A, then with B beside it (each on its own port, each with a
catalogChanges feed from the version at A's start), and for 10 s lets the sqlite3 shell (no
busy timeout, as it runs by default) commit an edit and a version row every 100 ms. Prints how
far `PRAGMA schema_version` moved after both started, how many installs each server logged
(catalog_prepared), how many of the shell's writes were refused as locked, and whether either
feed got CHANGES_EXPIRED. Two versions whose cg_ objects differ, each replacing the other's,
show as thousands of schema changes and refused writes.

    version_mix.py BINARY-A BINARY-B [PRODUCTS]
"""
import json, os, re, subprocess, sys, tempfile, threading, time
import tool_args

from websockets.sync.client import connect

a, b, products, _ = tool_args.positional(__doc__, ["BINARY-A", "BINARY-B"], ["PRODUCTS"], numbers={"PRODUCTS": int})
products = str(products or 2000)
work = tempfile.mkdtemp(prefix="version-mix-")
db = os.path.join(work, "catalog.sqlite")
subprocess.run([a, "demo-db", "--out", db, "--products", products], check=True, capture_output=True)


def sql(text, wait=True):
    return subprocess.run(["sqlite3", db], input=((".timeout 10000\n" if wait else "") + text).encode(), capture_output=True)


def serve(binary, name):
    log = open(os.path.join(work, name + ".log"), "wb")
    p = subprocess.Popen([binary, "serve", "--db", db, "--port", "0"], stdout=subprocess.PIPE, stderr=log)
    port = int(re.search(rb":(\d+)/graphql", p.stdout.readline()).group(1))
    return p, port, log.name


def feed(port, since, out):
    ws = connect(f"ws://127.0.0.1:{port}/graphql", subprotocols=["graphql-transport-ws"])
    ws.send(json.dumps({"type": "connection_init"}))
    ws.recv(10)
    ws.send(json.dumps({"id": "f", "type": "subscribe", "payload": {
        "query": "subscription($v: Int) { catalogChanges(sinceVersion: $v) { version } }", "variables": {"v": since}}}))

    def run():
        try:
            while True:
                out.append(ws.recv())
        except Exception:
            pass
    threading.Thread(target=run, daemon=True).start()
    return ws


def schema_version():
    return int(sql("PRAGMA schema_version;").stdout.split()[-1])


servers = []
try:
    pa, port_a, log_a = serve(a, "a")
    servers.append(pa)
    since = int(sql("SELECT max(versionid) FROM version;").stdout.split()[-1])
    msgs_a, msgs_b = [], []
    wa = feed(port_a, since, msgs_a)
    pb, port_b, log_b = serve(b, "b")
    servers.append(pb)
    wb = feed(port_b, since, msgs_b)
    before = schema_version()
    ok = refused = 0
    start = time.time()
    while time.time() - start < 10:
        r = sql(f"UPDATE Product_Catalog SET Product = 'Mix {ok}' WHERE keyid = 1;"
                " INSERT INTO version (versionid, updatecatalogrow, updateassetrow) SELECT max(versionid) + 1, '', '' FROM version;",
                wait=False)
        if r.returncode:
            refused += 1
        else:
            ok += 1
        time.sleep(0.1)
    moved = schema_version() - before
    wa.close()
    wb.close()
finally:
    for p in servers:
        p.terminate()
        p.wait(30)
installs = [open(f).read().count("event=catalog_prepared") for f in (log_a, log_b)]
print(f"{products} products, 10 s: schema_version +{moved} after both started; installs logged: A {installs[0]}, B {installs[1]}; "
      f"sqlite3 writes: {ok} committed, {refused} refused as locked; CHANGES_EXPIRED: "
      f"A {any('CHANGES_EXPIRED' in m for m in msgs_a)}, B {any('CHANGES_EXPIRED' in m for m in msgs_b)}")
subprocess.run(["rm", "-rf", work])
