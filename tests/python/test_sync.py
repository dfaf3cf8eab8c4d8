"""catalogChanges over the real server: push sync over graphql-transport-ws with edits made by
the sqlite3 shell (a separate process), resume after a reconnect and after a gateway restart,
expiry, and pull sync over HTTP."""
import sqlite3 as pysqlite
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
