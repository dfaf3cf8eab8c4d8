"""catalogChanges over the real server: push sync over graphql-transport-ws with edits made by
the sqlite3 shell (a separate process), resume after a reconnect and after a gateway restart,
expiry, and pull sync over HTTP."""
import sqlite3 as pysqlite
import subprocess
import sys
import time

import requests

from gateway_server import Gateway, acked, catalog, gateway, gateway_factory, recv, send, sqlite3  # noqa: F401 (fixtures)

FEED = "subscription($v: Int) { catalogChanges(sinceVersion: $v) { version products { id name kit { name } } removedProductIds categories { id title } removedCategoryIds } }"


def change_set(version, products=(), removed=(), categories=(), removed_categories=()):
    return {"data": {"catalogChanges": {
        "version": version, "products": list(products), "removedProductIds": list(removed),
        "categories": list(categories), "removedCategoryIds": list(removed_categories)}}}


def subscribe(ws, since=None, sid="s"):
    variables = {} if since is None else {"v": since}
    send(ws, {"id": sid, "type": "subscribe", "payload": {"query": FEED, "variables": variables}})


def test_push_sync_sees_product_kit_and_category_edits(gateway):
    with acked(gateway.ws_url) as ws:
        subscribe(ws, since=1)
        assert recv(ws) == {"id": "s", "type": "next", "payload": change_set(1)}
        sqlite3(gateway.db, "UPDATE Product_Catalog SET Product = 'ALEXA Mini LF' WHERE keyid = 1;"
                            "INSERT INTO version VALUES (2, '', '');")
        assert recv(ws) == {"id": "s", "type": "next", "payload": change_set(
            2, products=[{"id": "1", "name": "ALEXA Mini LF", "kit": []}])}
        # A kit-only edit changes the product that owns the kit.
        sqlite3(gateway.db, "INSERT INTO Product_Assets (kitID, asset, kitQTY) VALUES ('100', 'Top handle', '1');"
                            "INSERT INTO version VALUES (3, '', '');")
        assert recv(ws) == {"id": "s", "type": "next", "payload": change_set(
            3, products=[{"id": "1", "name": "ALEXA Mini LF", "kit": [{"name": "Top handle"}]}])}
        sqlite3(gateway.db, "DELETE FROM Product_Catalog WHERE keyid = 1; UPDATE hierarchy SET menu_title = 'Camera bodies' WHERE id = 1;"
                            "INSERT INTO version VALUES (4, '', '');")
        assert recv(ws) == {"id": "s", "type": "next", "payload": change_set(
            4, removed=["1"], categories=[{"id": "1", "title": "Camera bodies"}])}


def test_without_since_version_sets_start_at_the_next_version(gateway):
    with acked(gateway.ws_url) as ws:
        subscribe(ws)
        send(ws, {"type": "ping"})
        assert recv(ws) == {"type": "pong"}  # nothing was sent for the subscription
        sqlite3(gateway.db, "INSERT INTO hierarchy VALUES (3, 'Grip', '', 1, 0); INSERT INTO version VALUES (2, '', '');")
        assert recv(ws) == {"id": "s", "type": "next", "payload": change_set(2, categories=[{"id": "3", "title": "Grip"}])}


def test_without_since_version_a_commit_that_returned_before_subscribing_is_not_sent(gateway):
    """SYNC.md: "without it, sets from the next version on". The version a writer committed before
    the client subscribed is current, even when the gateway's watcher has not polled it yet: the
    first set is the version after it (it used to be that one, most times, within milliseconds).

    Each commit here is followed within milliseconds by reads that must take the catalog's shared
    lock (the subscription's current version, the watcher's read of the commit), and by the next
    commit: so the writer waits for locks as tools should (docs/FAULTS.md, "Writers without a
    busy timeout"). Without `.timeout`, one `make test` of a fresh checkout in stop 40 failed here with
    "database is locked" from the shell."""
    with acked(gateway.ws_url) as ws:
        for i in range(2, 12):
            sqlite3(gateway.db, f".timeout 5000\nUPDATE Product_Catalog SET Product = 'r{i}' WHERE keyid = 1;"
                                f"INSERT INTO version VALUES ({i}, '', '');")
            subscribe(ws, sid=str(i))
            send(ws, {"type": "ping"})
            # Answers come in order: nothing for the subscription before the pong.
            assert recv(ws) == {"type": "pong"}, f"a set for version {i}, current when subscribing"
            send(ws, {"id": str(i), "type": "complete"})


def test_resume_after_a_gateway_restart_misses_nothing(gateway_factory):
    first = gateway_factory()
    with acked(first.ws_url) as ws:
        subscribe(ws, since=1)
        assert recv(ws)["payload"] == change_set(1)
    assert first.stop() == 0
    # Edits and a version bump while no gateway runs: capture is in the writer's transaction.
    sqlite3(first.db, "UPDATE Product_Catalog SET description = 'offline edit' WHERE keyid = 1;"
                      "INSERT INTO version VALUES (2, '', '');")
    second = gateway_factory()
    with acked(second.ws_url) as ws:
        subscribe(ws, since=1)
        assert recv(ws)["payload"] == change_set(2, products=[{"id": "1", "name": "ALEXA Mini", "kit": []}])
        subscribe(ws, since=2, sid="t")
        assert recv(ws) == {"id": "t", "type": "next", "payload": change_set(2)}


def test_expired_and_ahead_versions_end_the_subscription_with_an_error(gateway):
    with acked(gateway.ws_url) as ws:
        subscribe(ws, since=-1)
        message = recv(ws)
        assert message["type"] == "next"
        assert message["payload"]["data"] is None
        assert message["payload"]["errors"][0]["extensions"]["code"] == "CHANGES_EXPIRED"
        assert recv(ws) == {"id": "s", "type": "complete"}
        subscribe(ws, since=99, sid="a")
        assert recv(ws)["payload"]["errors"][0]["extensions"]["code"] == "VERSION_AHEAD"
        assert recv(ws) == {"id": "a", "type": "complete"}


def test_pull_sync_over_http(gateway):
    sqlite3(gateway.db, "UPDATE mfg SET logo = 'arri-2.png' WHERE mfgid = 1; INSERT INTO version VALUES (2, '', '');")
    r = requests.post(gateway.http_url, json={
        "query": "query($v: Int!) { catalogChanges(sinceVersion: $v) { version products { id manufacturer { logo } } } }",
        "variables": {"v": 1}})
    assert r.status_code == 200
    assert r.json() == {"data": {"catalogChanges": {"version": 2, "products": [{"id": "1", "manufacturer": {"logo": "arri-2.png"}}]}}}


def test_a_rebuilt_table_loses_no_change(gateway):
    # What "modify table" in a SQLite editor does: a new table, the rows copied, the old one
    # dropped, the new one renamed. That drops the table's triggers, and with them change
    # capture (and the search index's upkeep). The gateway used to fall back to the version-row
    # rule without a word, so the delete below was never sent and the client kept product 1 for
    # good; now it installs its triggers again as soon as it sees the schema change.
    db = gateway.db
    # The gateway writes too here (its repair), so these writers wait for locks as tools should:
    # the sqlite3 shell has no busy timeout of its own (docs/FAULTS.md).
    wait = ".timeout 5000\n"
    with pysqlite.connect(db) as c:
        ddl = c.execute("SELECT sql FROM sqlite_master WHERE name = 'Product_Catalog'").fetchone()[0] + ";"

    def rebuild(then=""):
        return (wait + "BEGIN; " + ddl.replace("Product_Catalog", "pc_new", 1) + " INSERT INTO pc_new SELECT * FROM Product_Catalog;"
                " DROP TABLE Product_Catalog; ALTER TABLE pc_new RENAME TO Product_Catalog; " + then + " COMMIT;")
    with acked(gateway.ws_url) as ws:
        subscribe(ws, since=1)
        assert recv(ws)["payload"] == change_set(1)
        sqlite3(db, rebuild())
        # The repair commits before the next edit is made: the change set is exact.
        for _ in range(100):
            with pysqlite.connect(db) as c:
                if c.execute("SELECT 1 FROM sqlite_master WHERE name = 'cg_product_catalog_ad'").fetchone():
                    break
            time.sleep(0.05)
        sqlite3(db, wait + "DELETE FROM Product_Catalog WHERE keyid = 1; INSERT INTO version VALUES (2, '', '');")
        assert recv(ws)["payload"] == change_set(2, removed=["1"])
        r = requests.post(gateway.http_url, json={"query": '{ search(text: "ALEXA") { totalCount } }'})
        assert r.json() == {"data": {"search": {"totalCount": 0}}}
        # Rebuilt again with an edit and a version in the same transaction: the edit went
        # unrecorded, so a feed behind the repair is told to refetch, never given a set that
        # misses it.
        sqlite3(db, rebuild("INSERT INTO Product_Catalog (keyid, Product, cat) VALUES (9, 'ALEXA 35', 1);"
                            " INSERT INTO version VALUES (3, '', '');"))
        message = recv(ws)
        assert message["payload"]["data"] is None
        assert message["payload"]["errors"][0]["extensions"]["code"] == "CHANGES_EXPIRED"
        assert recv(ws) == {"id": "s", "type": "complete"}
    # The search index was filled again: the product inserted while its triggers were gone is found.
    r = requests.post(gateway.http_url, json={"query": '{ search(text: "ALEXA 35") { nodes { id } } }'})
    assert r.json() == {"data": {"search": {"nodes": [{"id": "9"}]}}}


def test_heavy_change_feeds_do_not_hold_back_the_next_version(catalog):
    # 30 distinct catalogChanges subscriptions, each set nesting every changed product's
    # category page, and one catalogVersion subscription, all on one socket (so the order in
    # which the watcher answers them is the order they arrive in). Every version changes all
    # 201 products.
    products = 200
    sqlite3(catalog, "BEGIN;" + "".join(
        f"INSERT INTO Product_Catalog (product_ID, Product, Manufacturer, cat, displayorder, description, keyid)"
        f" VALUES ({1000 + i}, 'Product {i}', 'ARRI', 1, {i}, 'first', {10 + i});" for i in range(products)) + "COMMIT;")
    feeds = [f"f{k}" for k in range(30)]

    def bump(version):
        sqlite3(catalog, f".timeout 5000\nUPDATE Product_Catalog SET description = 'v{version}';"
                         f" INSERT INTO version VALUES ({version}, '', '');")

    g = Gateway(catalog)
    try:
        with acked(g.ws_url, max_size=None) as ws:
            for f in feeds:
                query = (f"subscription {{ {f}: catalogChanges {{ version products {{ id"
                         f" category {{ products(first: 50) {{ nodes {{ id name }} }} }} }} }} }}")
                send(ws, {"id": f, "type": "subscribe", "payload": {"query": query}})
            send(ws, {"id": "cv", "type": "subscribe", "payload": {"query": "subscription { catalogVersion { version } }"}})
            assert recv(ws) == {"id": "cv", "type": "next", "payload": {"data": {"catalogVersion": {"version": 1}}}}
            bump(2)
            arrivals = []  # (id, version) in the order they came
            sets = {f: [] for f in feeds}
            while not (("cv", 3) in arrivals and all(s and s[-1]["version"] == 3 for s in sets.values())):
                m = recv(ws)
                assert m["type"] == "next", m
                data = m["payload"]["data"]
                if m["id"] == "cv":
                    arrivals.append(("cv", data["catalogVersion"]["version"]))
                    if arrivals[-1] == ("cv", 2):
                        # The next commit lands while the feeds of version 2 are being answered.
                        bump(3)
                else:
                    sets[m["id"]].append(data[m["id"]])
                    arrivals.append((m["id"], data[m["id"]]["version"]))
        # catalogVersion subscribers are answered before the change feeds...
        assert arrivals[0] == ("cv", 2)
        # ...and the next version's before the feeds left behind by its commit.
        first_set = {f: arrivals.index(next(a for a in arrivals if a[0] == f)) for f in feeds}
        assert any(i > arrivals.index(("cv", 3)) for i in first_set.values()), arrivals
        # No feed lost anything: each set has every product, versions only go up, ending at 3.
        every = sorted(["1"] + [str(10 + i) for i in range(products)], key=int)
        for f, received in sets.items():
            versions = [s["version"] for s in received]
            assert versions == sorted(set(versions)) and versions[-1] == 3, (f, versions)
            for s in received:
                assert sorted((p["id"] for p in s["products"]), key=int) == every
    finally:
        assert g.stop() == 0


WRITER = """
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
c.execute("PRAGMA synchronous = OFF")  # a commit every millisecond or so, not one per fsync
v, end = 1, time.time() + float(sys.argv[2])
while time.time() < end:
    v += 1
    c.execute("BEGIN IMMEDIATE")
    c.execute("UPDATE Product_Catalog SET description = ? WHERE keyid = ?", (f"v{v}", 10 + v % 3))
    c.execute("INSERT INTO version VALUES (?, '', '')", (v,))
    c.execute("COMMIT")
    time.sleep(0.002)
print(v)
"""


def test_heavy_feeds_are_answered_while_commits_keep_coming(catalog):
    # Cheap and heavy catalogChanges subscriptions while a writer commits a version every few
    # milliseconds for 3 s. A commit interrupts the feeds' round; the feeds it left behind must
    # go first in the next one, or the heavy ones (last in cost order) never get a set while
    # the writes go on.
    products = 200
    sqlite3(catalog, "BEGIN;" + "".join(
        f"INSERT INTO Product_Catalog (product_ID, Product, Manufacturer, cat, displayorder, description, keyid)"
        f" VALUES ({1000 + i}, 'Product {i}', 'ARRI', 1, {i}, 'first', {10 + i});" for i in range(products)) + "COMMIT;")
    # WAL: the writer never waits for the watcher's reads, so commits do keep coming.
    with pysqlite.connect(catalog) as c:
        assert c.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    cheap = [f"c{k}" for k in range(10)]
    heavy = [f"h{k}" for k in range(3)]
    # The client reads more slowly than the sets come: let it lag rather than be closed.
    g = Gateway(catalog, "--max-queued-bytes", str(1 << 30), "--max-total-queued-bytes", str(1 << 30))
    # The writer is another process (as writers are), committing for 3 s.
    writer = subprocess.Popen([sys.executable, "-c", WRITER, catalog, "3"], stdout=subprocess.PIPE, text=True)
    try:
        with acked(g.ws_url, max_size=None) as ws:
            for f in cheap:
                send(ws, {"id": f, "type": "subscribe", "payload": {"query": f"subscription {{ {f}: catalogChanges {{ version }} }}"}})
            for f in heavy:
                query = (f"subscription {{ {f}: catalogChanges {{ version products {{ id category {{"
                         f" products(first: 100) {{ nodes {{ id category {{ products(first: 60) {{ nodes {{ id }} }} }} }} }} }} }} }} }}")
                send(ws, {"id": f, "type": "subscribe", "payload": {"query": query}})
            send(ws, {"type": "ping"})
            assert recv(ws) == {"type": "pong"}  # every subscription is registered
            sets = {f: [] for f in cheap + heavy}
            last = None
            while last is None or any(not v or v[-1] != last for v in sets.values()):
                m = recv(ws)
                assert m["type"] == "next", m
                sets[m["id"]].append(m["payload"]["data"][m["id"]]["version"])
                if last is None and writer.poll() is not None:
                    last = int(writer.stdout.read())
        # Sets before the last version were computed while the commits kept coming (whenever
        # this client got to read them).
        during = {f: sum(1 for v in versions if v < last) for f, versions in sets.items()}
        assert last > 300
        # Every feed gets its turn: a round left unfinished is taken up where it stopped, so
        # the heavy feeds get about as many sets as the cheap ones (when the round restarted
        # from the cheapest, the last heavy feed got 5 to the cheap ones' 180).
        assert min(during[f] for f in heavy) >= 0.5 * max(during[f] for f in cheap), during
        for f, versions in sets.items():
            assert versions == sorted(set(versions)), f
    finally:
        writer.kill()
        assert g.stop() == 0
