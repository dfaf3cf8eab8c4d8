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
import argparse, os, re, resource, socket, statistics, subprocess, sys, time

# The docstring: its first paragraph, then the usage line (argparse writes its own), then the rest.
_paragraphs = __doc__.split("\n\n")
parser = argparse.ArgumentParser(description=_paragraphs[0], epilog="\n\n".join(_paragraphs[2:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("binary", metavar="BINARY", help="the catalog-gateway executable, e.g. .build/release/catalog-gateway")
parser.add_argument("db", metavar="CATALOG", help="the catalog file to serve")
parser.add_argument("n", metavar="N", type=int, nargs="?", default=4000,
                    help="connections per round and value (default 4000)")
parser.add_argument("rounds", metavar="ROUNDS", type=int, nargs="?", default=3, help="rounds (default 3)")
parser.add_argument("values", metavar="MAX-CONNECTIONS", type=int, nargs="*", default=[],
                    help="--max-connections values to compare (default 100, 16384 and the hard limit less 1,000 "
                         "when that is larger)")
opts = parser.parse_args()
if not os.access(opts.binary, os.X_OK) or os.path.isdir(opts.binary):
    parser.error(f"{opts.binary}: no such executable")
if not os.path.isfile(opts.db):
    parser.error(f"{opts.db}: no such catalog file")
for metavar, value in [("N", opts.n), ("ROUNDS", opts.rounds)] + [("MAX-CONNECTIONS", v) for v in opts.values]:
    if value < 1:
        parser.error(f"{metavar} must be at least 1")
binary, db, n, rounds = opts.binary, opts.db, opts.n, opts.rounds
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
default = [100, 16384] + ([hard - 1000] if hard != resource.RLIM_INFINITY and hard - 1000 > 16384 else [])
values = opts.values or default
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
