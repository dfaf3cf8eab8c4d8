"""What an HTTP request costs the server while many WebSockets sit idle, with the service
thread's epoll wait and with plain poll() (`--no-epoll`) (docs/FAULTS.md, "Stop 36: epoll
under lws's poll()"). For each round and each mode: a server with `--http-idle-timeout 600`,
`cg-load idle` holding IDLE acknowledged WebSockets, then SHORT POST /graphql requests each on
its own `Connection: close` connection and KEEP on one keep-alive connection, one after another;
prints the server's CPU time per request (/proc/PID/stat utime + stime, in clock ticks) and the
p50 / p99 of each request's wall time. Modes alternate within each round.

    idle_http_cost.py BIN-DIR CATALOG [IDLE] [ROUNDS] [SHORT] [KEEP]

BIN-DIR holds catalog-gateway and cg-load (e.g. .build/release). IDLE must fit the open-files
hard limit (`ulimit -Hn`) twice over: the server and cg-load each hold one descriptor apiece.
"""
import json, os, re, socket, subprocess, sys, time

bin_dir, db = sys.argv[1], sys.argv[2]
idle = int(sys.argv[3]) if len(sys.argv) > 3 else 8000
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
short_n = int(sys.argv[5]) if len(sys.argv) > 5 else 1000
keep_n = int(sys.argv[6]) if len(sys.argv) > 6 else 3000
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


def requests(pid, port, n, close):
    times, s = [], None
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
    return (cpu_s(pid) - c0) / n * 1e6, times[n // 2] * 1e3, times[n * 99 // 100] * 1e3


def one(flags):
    srv = subprocess.Popen([os.path.join(bin_dir, "catalog-gateway"), "serve", "--db", db, "--port", "0",
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


print(f"{idle} idle WebSockets; {short_n} short connections, {keep_n} keep-alive requests; CPU in µs per request")
for r in range(rounds):
    for name, flags in (("epoll", []), ("poll", ["--no-epoll"])):
        (sc, sp50, sp99), (kc, kp50, kp99) = one(flags)
        print(f"round {r + 1} {name:5}  short: {sc:8.0f} µs CPU  p50 {sp50:6.2f} ms  p99 {sp99:6.2f} ms   "
              f"keep-alive: {kc:8.0f} µs CPU  p50 {kp50:6.2f} ms  p99 {kp99:6.2f} ms", flush=True)
