"""Memory and time of the first category queries of a fresh server: two HTTP queries of
categories 2 and 3 sent at once, so that both workers need the hierarchy (docs/FAULTS.md, "Found
in stop 29"). Prints the wall time, each query's time and the server's RSS before and after.
It only reads DB, but `serve` prepares a file that lacks the gateway's objects: give it a copy.

    python3 bench/tools/first-category.py BINARY DB WORKERS
"""
import subprocess, sys, time, json, threading, http.client, re
import tool_args
binary, db, workers, _ = tool_args.positional(__doc__, ["BINARY", "DB", "WORKERS"], numbers={"WORKERS": int})
p = subprocess.Popen([binary, "serve", "--db", db, "--host", "127.0.0.1", "--port", "0", "--workers", str(workers), "--log-level", "warn"], stdout=subprocess.PIPE, text=True)
line = p.stdout.readline(); port = int(re.search(r":(\d+)/graphql", line).group(1))
def rss(): return int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{p.pid}/status").read()).group(1))
r0 = rss()
def q(cid, out, i):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t = time.perf_counter()
    c.request("POST", "/graphql", json.dumps({"query": "{ category(id: %d) { title path { id } children { id } } }" % cid}), {"content-type": "application/json"})
    b = c.getresponse().read(); out[i] = (time.perf_counter() - t, len(b))
out = [None, None]
ts = [threading.Thread(target=q, args=(c, out, i)) for i, c in enumerate([2, 3])]
t0 = time.perf_counter(); [t.start() for t in ts]; [t.join() for t in ts]; wall = time.perf_counter() - t0
print(f"{binary.split('/')[-1]}: both answered in {wall*1000:.0f} ms (each {out[0][0]*1000:.0f}/{out[1][0]*1000:.0f} ms, {out[0][1]}/{out[1][1]} B); RSS before {r0/1024:.1f} MB after {rss()/1024:.1f} MB")
p.terminate(); p.wait()
