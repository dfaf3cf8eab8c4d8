"""Query latency while another process commits: a writer edits one product row every 100 ms
while a query of category 145 (the 1M catalog's) runs over HTTP every 200 ms (docs/FAULTS.md, "Found in stop 28's audit
of catalog shapes at scale"). It writes to DB: give it a copy of a catalog, never bench/data's.

    python3 bench/tools/commits.py BINARY PORT SECONDS DB
"""
import sqlite3, subprocess, sys, time, threading, json, statistics, urllib.request, os, signal
import tool_args
binary, port, seconds, db, _ = tool_args.positional(__doc__, ["BINARY", "PORT", "SECONDS", "DB"],
                                                   numbers={"PORT": int, "SECONDS": float})
p = subprocess.Popen([binary, "serve", "--db", db, "--port", str(port)], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
def q(query):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"content-type": "application/json"})
    t = time.perf_counter(); body = urllib.request.urlopen(req, timeout=30).read(); return time.perf_counter() - t, body
for _ in range(100):
    try: q("{ catalogVersion { version } }"); break
    except Exception: time.sleep(0.1)
stop = False; commits = [0]
def writer():
    c = sqlite3.connect(db, timeout=5); i = 0
    while not stop:
        i += 1
        c.execute("UPDATE Product_Catalog SET Product = Product WHERE keyid = ?", (1000 + i % 500,)); c.commit(); commits[0] += 1
        time.sleep(0.1)
query = "{ category(id: 145) { title path { id } children { id } products(first: 5) { nodes { id name } } } }"
q(query)
t = threading.Thread(target=writer); t.start()
lat = []; end = time.time() + seconds
cpu0 = sum(os.times()[2:4])
with open(f"/proc/{p.pid}/stat") as f: s0 = f.read().split()
while time.time() < end:
    d, body = q(query); lat.append(d * 1000); time.sleep(0.2)
with open(f"/proc/{p.pid}/stat") as f: s1 = f.read().split()
stop = True; t.join()
cpu = (int(s1[13]) + int(s1[14]) - int(s0[13]) - int(s0[14])) / os.sysconf("SC_CLK_TCK")
p.send_signal(signal.SIGTERM); p.wait()
lat.sort()
print(f"{binary}: queries {len(lat)} p50 {statistics.median(lat):.1f} ms p90 {lat[int(len(lat)*0.9)]:.1f} max {lat[-1]:.1f}; server CPU {cpu:.1f} s in {seconds:.0f} s; commits {commits[0]}")
