"""What an HTTP request costs the server while many WebSockets sit idle, with the service
thread's epoll wait and with plain poll() (`--no-epoll`) (docs/FAULTS.md, "Stop 36: epoll
under lws's poll()"). For each round and each mode: a server with `--http-idle-timeout 600`,
`cg-load idle` holding IDLE acknowledged WebSockets, then SHORT POST /graphql requests each on
its own `Connection: close` connection and KEEP on one keep-alive connection, one after another;
prints the server's CPU time per request (/proc/PID/stat utime + stime, in clock ticks) and the
p50 / p99 of each request's wall time. Modes alternate within each round.

    idle_http_cost.py BIN-DIR CATALOG [IDLE] [ROUNDS] [SHORT] [KEEP]

    idle_http_cost.py BIN-DIR CATALOG [IDLE] [ROUNDS] [SHORT] [KEEP] --against BINARY

BIN-DIR holds catalog-gateway and cg-load (e.g. .build/release). IDLE must fit the open-files
hard limit (`ulimit -Hn`) twice over: the server and cg-load each hold one descriptor apiece.

With --against, the modes are BIN-DIR's catalog-gateway and BINARY (another build, e.g. a
release's), both through epoll, alternating within each round (docs/FAULTS.md, stop 38).

Besides CPU and wall time, each line gives per request the server's context switches
(voluntary and not, summed over its threads in /proc/PID/task/*/status) and its service
thread's waits (`catalog_gateway_service_waits_total`, read from /metrics around each series).
"""
import argparse, json, os, re, socket, subprocess, sys, time
import urllib.request

# The docstring: its first paragraph, then the two usage lines (argparse writes its own), then the rest.
_paragraphs = __doc__.split("\n\n")
parser = argparse.ArgumentParser(description=_paragraphs[0], epilog="\n\n".join(_paragraphs[3:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("bin_dir", metavar="BIN-DIR", help="holds catalog-gateway and cg-load, e.g. .build/release")
parser.add_argument("db", metavar="CATALOG", help="the catalog file to serve")
parser.add_argument("idle", metavar="IDLE", type=int, nargs="?", default=8000,
                    help="idle WebSockets held open (default 8000)")
parser.add_argument("rounds", metavar="ROUNDS", type=int, nargs="?", default=2, help="rounds (default 2)")
parser.add_argument("short_n", metavar="SHORT", type=int, nargs="?", default=1000,
                    help="requests on their own connection each (default 1000)")
parser.add_argument("keep_n", metavar="KEEP", type=int, nargs="?", default=3000,
                    help="requests on one keep-alive connection (default 3000)")
parser.add_argument("--against", metavar="BINARY",
                    help="another catalog-gateway build to alternate with BIN-DIR's")
opts = parser.parse_args()
for name in ("catalog-gateway", "cg-load"):
    if not os.access(os.path.join(opts.bin_dir, name), os.X_OK):
        parser.error(f"{os.path.join(opts.bin_dir, name)}: no such executable")
if not os.path.isfile(opts.db):
    parser.error(f"{opts.db}: no such catalog file")
if opts.against and not os.access(opts.against, os.X_OK):
    parser.error(f"--against {opts.against}: no such executable")
for metavar, value, least in (("IDLE", opts.idle, 0), ("ROUNDS", opts.rounds, 1),
                              ("SHORT", opts.short_n, 1), ("KEEP", opts.keep_n, 1)):
    if value < least:
        parser.error(f"{metavar} must be at least {least}")
against = os.path.abspath(opts.against) if opts.against else None
bin_dir, db = opts.bin_dir, opts.db
idle, rounds, short_n, keep_n = opts.idle, opts.rounds, opts.short_n, opts.keep_n
clk = os.sysconf("SC_CLK_TCK")
body = json.dumps({"query": '{ product(id: "1") { id name } }'}).encode()


def request(close):
    return (b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n%s\r\n%s" % (len(body), b"Connection: close\r\n" if close else b"", body))


def cpu_s(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / clk


def answer(s, close):
    data = b""
    while True:
        head, _, rest = data.partition(b"\r\n\r\n")
        if rest and not close and len(rest) >= int(re.search(rb"(?i)content-length: (\d+)", head).group(1)):
            break
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    assert data.startswith(b"HTTP/1.1 200"), data[:80]


def switches(pid):
    """Context switches of every thread of `pid` so far."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            for line in open(f"/proc/{pid}/task/{t}/status"):
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


def waits(port):
    """The service thread's waits so far, both kinds (0 if /metrics does not have them)."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return sum(int(v) for v in re.findall(r"^catalog_gateway_service_waits_total\{[^}]*\} (\d+)", text, re.M))


def requests(pid, port, n, close):
    times, s = [], None
    # A /metrics request makes waits of its own: the second of two in a row counts them.
    wa = waits(port)
    w0 = waits(port)
    x0 = switches(pid)
    c0 = cpu_s(pid)
    for _ in range(n):
        t = time.perf_counter()
        if s is None or close:
            s = socket.create_connection(("127.0.0.1", port))
        s.sendall(request(close))
        answer(s, close)
        if close:
            s.close()
        times.append(time.perf_counter() - t)
    if s is not None:
        s.close()
    times.sort()
    cpu = (cpu_s(pid) - c0) / n * 1e6
    x = (switches(pid) - x0) / n
    w = (waits(port) - w0 - (w0 - wa)) / n
    return cpu, times[n // 2] * 1e3, times[n * 99 // 100] * 1e3, x, w


def one(binary, flags):
    srv = subprocess.Popen([binary, "serve", "--db", db, "--port", "0",
                            "--log-level", "warn", "--http-idle-timeout", "600", *flags],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    load = None
    try:
        port = int(re.search(rb":(\d+)/graphql", srv.stdout.readline()).group(1))
        if idle:
            load = subprocess.Popen([os.path.join(bin_dir, "cg-load"), "idle", "--url", f"ws://127.0.0.1:{port}/graphql",
                                     "--connections", str(idle), "--hold", "600", "--settle", "0.5", "--json", "/dev/null"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            while b"ready" not in load.stderr.readline():
                assert load.poll() is None, "cg-load idle ended before its connections were ready"
        short = requests(srv.pid, port, short_n, True)
        keep = requests(srv.pid, port, keep_n, False)
        return short, keep
    finally:
        if load:
            load.kill()
            load.wait()
        srv.terminate()
        srv.wait()


own = os.path.join(bin_dir, "catalog-gateway")
if against:
    modes = (("this", own, []), ("against", against, []))
else:
    modes = (("epoll", own, []), ("poll", own, ["--no-epoll"]))
print(f"{idle} idle WebSockets; {short_n} short connections, {keep_n} keep-alive requests; per request: "
      "CPU in µs, context switches (cs), service waits (w)" + (f"; against {against}" if against else ""))
for r in range(rounds):
    for name, binary, flags in modes:
        (sc, sp50, sp99, sx, sw), (kc, kp50, kp99, kx, kw) = one(binary, flags)
        print(f"round {r + 1} {name:7}  short: {sc:6.0f} µs CPU {sx:5.2f} cs {sw:5.2f} w  p50 {sp50:6.3f} ms  p99 {sp99:6.2f} ms   "
              f"keep-alive: {kc:6.0f} µs CPU {kx:5.2f} cs {kw:5.2f} w  p50 {kp50:6.3f} ms  p99 {kp99:6.2f} ms", flush=True)
