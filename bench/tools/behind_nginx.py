"""Clients behind nginx (docs/FAULTS.md, "Stop 34: clients behind a reverse proxy, and
connections per address"). Starts the gateway over CATALOG-COPY (its write lock is taken, so
serve a copy) with --workers 1 and the serve flags given, and nginx in front of it configured
as README shows (`proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for`); clients reach
nginx from 127.0.0.2 and 127.0.0.3, nginx the gateway from 127.0.0.1. Then:

- lanes: with the lock held, 12 heavy POSTs from 127.0.0.2 (each forging `X-Forwarded-For:
  127.0.0.3`, the other client's address), then one small POST from 127.0.0.3; prints the place
  at which the small one was answered (1 = first) and each client as the gateway logged it.
- conns: WebSockets through nginx, 3 from 127.0.0.2 (the third forging `X-Forwarded-For:
  10.9.9.9`), then one from 127.0.0.3; prints each upgrade's status.

    behind_nginx.py BINARY CATALOG-COPY [serve flags...]

nginx (Debian's nginx-light) must be installed; it runs from a temporary directory and is
stopped at the end, as is the gateway.
"""
import base64
import tool_args
import concurrent.futures
import http.client
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

binary, db, extra = tool_args.positional(__doc__, ["BINARY", "CATALOG-COPY"])
work = tempfile.mkdtemp(prefix="behind-nginx-")
log = open(os.path.join(work, "gateway.log"), "w")
gw = subprocess.Popen([binary, "serve", "--db", db, "--port", "0", "--workers", "1", "--busy-timeout-ms", "20000",
                       "--log-level", "debug", *extra], stdout=subprocess.PIPE, stderr=log)
gw_port = int(re.search(rb":(\d+)/graphql", gw.stdout.readline()).group(1))
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
conf = os.path.join(work, "nginx.conf")
with open(conf, "w") as f:
    f.write(f"""
daemon off; worker_processes 1; user root; pid {work}/nginx.pid; error_log {work}/error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {work}/body; proxy_temp_path {work}/proxy;
  fastcgi_temp_path {work}/fastcgi; uwsgi_temp_path {work}/uwsgi; scgi_temp_path {work}/scgi;
  map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
  server {{
    listen 127.0.0.1:{port};
    location /graphql {{
      proxy_pass http://127.0.0.1:{gw_port};
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }}
  }}
}}
""")
ngx = subprocess.Popen(["nginx", "-c", conf, "-p", work], stderr=subprocess.DEVNULL)
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        break
    except OSError:
        time.sleep(0.05)


def post(source, query, forged=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    headers = {"Content-Type": "application/json"}
    if forged:
        headers["X-Forwarded-For"] = forged
    c.request("POST", "/graphql", body=json.dumps({"query": query}), headers=headers)
    r = c.getresponse()
    r.read()
    c.close()
    return r.status


def upgrade(source, forged=None):
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /graphql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n"
               + (f"X-Forwarded-For: {forged}\r\n" if forged else "") + "\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            break
        head += chunk
    return s, int(head.split(b" ", 2)[1]) if head else None


try:
    heavy = "{ %s }" % " ".join("v%d: catalogVersion { version }" % i for i in range(1500))
    order = []
    lock = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    lock.execute("BEGIN EXCLUSIVE")
    with concurrent.futures.ThreadPoolExecutor(13) as pool:
        fs = [pool.submit(lambda i: order.append(("flood", post("127.0.0.2", heavy + " " * i, "127.0.0.3"))), i)
              for i in range(12)]
        time.sleep(0.5)
        fs.append(pool.submit(lambda: order.append(("other", post("127.0.0.3", "{ small: catalogVersion { version } }")))))
        time.sleep(0.5)
        lock.execute("COMMIT")
        for f in fs:
            f.result()
    print("lanes: statuses", sorted({o[1] for o in order}), "- the other client's request answered",
          [o[0] for o in order].index("other") + 1, "of", len(order))
    conns = []
    for source, forged in [("127.0.0.2", None), ("127.0.0.2", None), ("127.0.0.2", "10.9.9.9"), ("127.0.0.3", None)]:
        s, status = upgrade(source, forged)
        conns.append(s)
        print(f"conns: upgrade from {source}" + (f" forging {forged}" if forged else "") + f": {status}")
    for s in conns:
        s.close()
    time.sleep(0.5)
finally:
    ngx.terminate()
    ngx.wait()
    gw.terminate()
    gw.wait()
    log.close()
text = open(os.path.join(work, "gateway.log")).read()
clients = re.findall(r"event=http_request http=\d+ peer=(\S+) (?:client=(\S+) )?forwarded_for=(\"[^\"]*\"|\S+)", text)
print("logged (peer, client, forwarded_for):", sorted(set(clients)))
print("upgrades logged:", re.findall(r"event=(connection_opened|upgrade_rejected) .*?peer=(\S+) (?:client=(\S+) )?", text))
