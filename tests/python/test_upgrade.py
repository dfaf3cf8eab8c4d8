"""Gateways of different versions on one catalog file: an upgrade over a file an older gateway
prepared, a rollback over one a newer gateway prepared, and both serving at once during a
rolling or blue/green deploy (docs/FAULTS.md, stop 34). Old and future versions cannot be built
here, so their on-disk objects are written with the sqlite3 shell: an older text of a trigger,
and a newer gateway's objects with the format it records."""
import hashlib
import sqlite3 as pysqlite
import subprocess
import time

import requests

from conftest import BINARY
from gateway_server import Gateway, acked, catalog, recv, send, sqlite3  # noqa: F401 (fixtures)

WAIT = ".timeout 5000\n"

# What a newer gateway might make: cg_search's update trigger only for the searched columns (an
# optimisation a later version could well make), change capture's insert trigger with another
# text, and the formats it records for them.
NEWER_SEARCH_UPDATE = """CREATE TRIGGER cg_search_update AFTER UPDATE OF "keyid", "Product", "description", "Manufacturer" ON "Product_Catalog" BEGIN
  DELETE FROM cg_search WHERE rowid = old."keyid";
  INSERT OR REPLACE INTO cg_search(rowid, name, description, manufacturer)
    VALUES (new."keyid", new."Product", new."description", new."Manufacturer");
END"""
NEWER_CAPTURE_AI = """CREATE TRIGGER cg_product_catalog_ai AFTER INSERT ON "Product_Catalog" BEGIN
  INSERT INTO cg_changes (tbl, op, new_key, new_ref) VALUES ('P', 'I', NEW."keyid", NULL);
END"""
MAKE_NEWER = f"""BEGIN;
DROP TRIGGER cg_search_update; {NEWER_SEARCH_UPDATE};
DROP TRIGGER cg_product_catalog_ai; {NEWER_CAPTURE_AI};
CREATE TABLE IF NOT EXISTS cg_formats (family TEXT NOT NULL, format INTEGER NOT NULL);
DELETE FROM cg_formats WHERE family = 'cg_search'; INSERT INTO cg_formats VALUES ('cg_search', 2);
UPDATE cg_sync_state SET format = 2;
COMMIT;"""


def prepare(db, *args):
    return subprocess.run([BINARY, "prepare", "--db", db, *args], capture_output=True, text=True)


def cg_objects(db):
    with pysqlite.connect(db) as c:
        return dict(c.execute("SELECT name, sql FROM sqlite_master WHERE name LIKE 'cg\\_%' ESCAPE '\\'"))


def gql(g, query):
    return requests.post(g.http_url, json={"query": query}, timeout=10).json()


def test_a_newer_gateways_objects_are_left_to_it(catalog):
    # A newer gateway prepared the file (or serves it beside this one). This one used to take
    # any trigger whose text was not its own, or capture of another format, for a broken one
    # and replace it — at start and then at every schema change its watcher saw. Two versions
    # on one file each replaced the other's from then on: measured with two builds, about 20
    # replacements a second, each refilling the search index and restarting the change history
    # (every feed CHANGES_EXPIRED), sqlite3 writers without a busy timeout refused as locked.
    assert prepare(catalog).returncode == 0
    sqlite3(catalog, MAKE_NEWER)
    before = cg_objects(catalog)
    g = Gateway(catalog)
    try:
        # Another program's schema change, as the newer gateway's own installs are: this one's
        # watcher looks at the gateway's objects after it.
        sqlite3(catalog, WAIT + "CREATE TABLE scratch (a); DROP TABLE scratch;"
                       "UPDATE Product_Catalog SET Product = 'Plughole kit' WHERE keyid = 1;"
                       "INSERT INTO version VALUES (2, '', '');")
        deadline = time.time() + 5
        while gql(g, "{ catalogVersion { version } }")["data"]["catalogVersion"]["version"] != 2 and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        # Search does without the index it may not understand, and stays right.
        assert gql(g, '{ search(text: "Plughole") { nodes { id } } }') == {"data": {"search": {"nodes": [{"id": "1"}]}}}
    finally:
        assert g.stop() == 0
    log = g.proc.stderr.read().decode()
    assert cg_objects(catalog) == before, "this gateway replaced a newer one's objects"
    with pysqlite.connect(catalog) as c:
        assert c.execute("SELECT format FROM cg_sync_state").fetchone() == (2,)
    assert "event=catalog_objects_newer" in log and "cg_search (format 2; this catalog-gateway makes 1)" in log
    assert "catalog_objects_incomplete" not in log
    # `prepare` leaves them too, and says so.
    r = prepare(catalog)
    assert r.returncode == 0 and cg_objects(catalog) == before
    assert "left cg_changes (format 2; this catalog-gateway makes 1): made by a newer catalog-gateway" in r.stdout


def test_prepare_downgrade_replaces_a_newer_gateways_objects(catalog):
    # After a rollback, once no newer gateway serves the file: this version's objects again,
    # the index refilled and the change history restarted (older versions expire), and a
    # trigger only the newer gateway knew dropped (its table is gone: it would fail every write).
    assert prepare(catalog).returncode == 0
    sqlite3(catalog, MAKE_NEWER + """
        CREATE TABLE cg_future (k); CREATE TRIGGER cg_future_ad AFTER DELETE ON Product_Catalog BEGIN INSERT INTO cg_future VALUES (OLD.keyid); END;
        DROP TRIGGER cg_search_insert;
        INSERT INTO Product_Catalog (keyid, Product, cat) VALUES (2, 'Plughole lens', 1);
        INSERT INTO version VALUES (2, '', '');""")
    r = prepare(catalog, "--downgrade")
    assert r.returncode == 0, r.stderr
    assert "created cg_future_ad (a newer gateway's, dropped)" in r.stdout
    objects = cg_objects(catalog)
    assert objects["cg_search_update"].startswith('CREATE TRIGGER cg_search_update AFTER UPDATE ON "Product_Catalog"')
    assert "cg_future_ad" not in objects
    with pysqlite.connect(catalog) as c:
        assert c.execute("SELECT format, installed_version, oldest_version FROM cg_sync_state").fetchone() == (1, 2, 2)
        assert dict(c.execute("SELECT family, format FROM cg_formats")) == {
            "cg_indexes": 1, "cg_search": 1, "cg_category_counts": 1}
    sqlite3(catalog, "DROP TABLE cg_future; DELETE FROM Product_Catalog WHERE keyid = 1; INSERT INTO version VALUES (3, '', '');")
    g = Gateway(catalog)
    try:
        # The row inserted while the newer insert trigger was gone is found: the index was refilled.
        assert gql(g, '{ search(text: "Plughole") { nodes { id } } }') == {"data": {"search": {"nodes": [{"id": "2"}]}}}
        r = gql(g, "{ catalogChanges(sinceVersion: 1) { version } }")
        assert r["errors"][0]["extensions"]["code"] == "CHANGES_EXPIRED"
        assert gql(g, "{ catalogChanges(sinceVersion: 2) { version removedProductIds } }") == {
            "data": {"catalogChanges": {"version": 3, "removedProductIds": ["1"]}}}
    finally:
        assert g.stop() == 0


def test_an_older_text_of_a_capture_trigger_is_replaced(catalog):
    # Upgrading over a file whose change capture triggers have another, older text. Capture was
    # recognised by its trigger names and format number only: triggers of an older text (the
    # format number was left at 1 when the capture triggers last changed, in commit 6cc0685)
    # stayed in place for good, recording what the older version recorded. Here an older
    # cg_product_catalog_ad that recorded nothing: no change set ever removed the product.
    assert prepare(catalog).returncode == 0
    sqlite3(catalog, """BEGIN; DROP TRIGGER cg_product_catalog_ad;
        CREATE TRIGGER cg_product_catalog_ad AFTER DELETE ON "Product_Catalog" BEGIN SELECT 1; END; COMMIT;""")
    g = Gateway(catalog)
    try:
        with acked(g.ws_url) as ws:
            send(ws, {"id": "s", "type": "subscribe", "payload": {
                "query": "subscription { catalogChanges(sinceVersion: 1) { version removedProductIds } }"}})
            assert recv(ws)["payload"] == {"data": {"catalogChanges": {"version": 1, "removedProductIds": []}}}
            sqlite3(catalog, WAIT + "DELETE FROM Product_Catalog WHERE keyid = 1; INSERT INTO version VALUES (2, '', '');")
            assert recv(ws)["payload"] == {"data": {"catalogChanges": {"version": 2, "removedProductIds": ["1"]}}}
    finally:
        assert g.stop() == 0


def test_an_older_text_of_a_counts_trigger_is_replaced(catalog):
    # The same for the category counts, recognised by their names only: an older cg_counts_ad
    # that did not uncount a deleted product kept it counted for good.
    sqlite3(catalog, "INSERT INTO Product_Catalog (keyid, Product, cat) VALUES (2, 'Lens', 1), (3, 'Lens 2', 1);")
    assert prepare(catalog).returncode == 0
    sqlite3(catalog, """BEGIN; DROP TRIGGER cg_counts_ad;
        CREATE TRIGGER cg_counts_ad AFTER DELETE ON "Product_Catalog" BEGIN
          DELETE FROM cg_category_counts_pending WHERE keyid = OLD."keyid";
        END; COMMIT;""")
    g = Gateway(catalog)
    try:
        sqlite3(catalog, WAIT + "DELETE FROM Product_Catalog WHERE keyid = 2; INSERT INTO version VALUES (2, '', '');")
        assert gql(g, '{ category(id: "1") { productCount } }') == {"data": {"category": {"productCount": 2}}}
    finally:
        assert g.stop() == 0


# The SQL of every cg_ object a fresh `prepare` makes, per family, and the family's format: a
# change to the SQL must bump the format (then update the pin here), so that gateways of two
# versions on one file tell whose objects are whose (`GatewayFormat`). Capture's format is
# cg_sync_state.format.
PINNED = {
    "cg_indexes": (1, "1ea7871555709568"),
    "cg_search": (1, "55cf7651c1311151"),
    "cg_category_counts": (1, "03a2eaa99514f276"),
    "cg_changes": (1, "c72bf9fe534b7af9"),
}


def family(name):
    if name.startswith("cg_search"):
        return "cg_search"
    if name.startswith(("cg_category_counts", "cg_counts_")):
        return "cg_category_counts"
    if name.startswith(("cg_changes", "cg_versions", "cg_sync_state", "cg_product_details_key", "cg_version_")) \
            or name.endswith(("_bi", "_ai", "_bu", "_au", "_ad")):
        return "cg_changes"
    return "cg_indexes"


def test_each_family_records_the_format_its_sql_is_pinned_to(catalog):
    assert prepare(catalog).returncode == 0
    digests = {}
    for name, sql in sorted(cg_objects(catalog).items()):
        if name == "cg_formats" or sql is None:
            continue
        digests.setdefault(family(name), hashlib.sha256()).update(f"{name}\n{sql}\n".encode())
    with pysqlite.connect(catalog) as c:
        formats = dict(c.execute("SELECT family, format FROM cg_formats"))
        formats["cg_changes"] = c.execute("SELECT format FROM cg_sync_state").fetchone()[0]
    got = {f: (formats.get(f), d.hexdigest()[:16]) for f, d in digests.items()}
    assert got == PINNED, "a cg_ object's SQL changed: bump its family's format, then the pin"
