"""What one connection costs the server, by --max-connections (docs/FAULTS.md, "Found in stop
35"). Debian's libwebsockets 4.1 is built with its debug checks: closing any socket walks lws's
whole fd table, one entry per possible descriptor, and the gateway sizes that table (the
open-files soft limit) from --max-connections. This opens N connections one after another, each
a GET /healthz with `Connection: close`, against a server started with each --max-connections
value in turn (ROUNDS alternating rounds), and prints the server's CPU time per connection
(/proc/PID/stat utime + stime) and the wall time per connection, medians over the rounds.

    close_cost.py BINARY CATALOG [N] [ROUNDS] [MAX-CONNECTIONS...]

The values must fit the open-files hard limit (`ulimit -Hn`); the server caps a larger one.
"""
import os, re, resource, socket, statistics, subprocess, sys, time

binary, db = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 4000
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
default = [100, 16384] + ([hard - 1000] if hard != resource.RLIM_INFINITY and hard - 1000 > 16384 else [])
values = [int(v) for v in sys.argv[5:]] or default
clk = os.sysconf("SC_CLK_TCK")
request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def cpu_s(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / clk


def one_round(max_connections):
    p = subprocess.Popen([binary, "serve", "--db", db, "--port", "0", "--log-level", "warn",
                          "--max-connections", str(max_connections)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        port = int(re.search(rb":(\d+)/graphql", p.stdout.readline()).group(1))
        for _ in range(200):  # warm-up
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(request)
                while s.recv(65536):
                    pass
        c0, t0 = cpu_s(p.pid), time.perf_counter()
        for _ in range(n):
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(request)
                while s.recv(65536):
                    pass
        wall, cpu = time.perf_counter() - t0, cpu_s(p.pid) - c0
        return cpu / n * 1e6, wall / n * 1e6
    finally:
        p.terminate()
        p.wait()


results = {v: [] for v in values}
for _ in range(rounds):
    for v in values:
        results[v].append(one_round(v))
print(f"{n} connections per round, {rounds} rounds; medians")
print(f"{'--max-connections':>18}  {'server CPU us/conn':>18}  {'wall us/conn':>12}")
for v in values:
    cpu = statistics.median(r[0] for r in results[v])
    wall = statistics.median(r[1] for r in results[v])
    print(f"{v:>18}  {cpu:>18.1f}  {wall:>12.1f}")
