"""Differential test: `catalog-gateway query` against reference.py, an independent Python reading of
SEMANTICS.md, on demo catalogs (seeds 1, 2, 3) and on a small catalog full of real-world quirks.
Many aliased fields go into each document to keep the number of processes low. Every difference is
collected with its path and both values, and the test fails listing them."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import reference  # noqa: E402
from gateway_server import make_catalog  # noqa: E402

PRODUCT = ("fragment P on Product { id sku name manufacturer { name logo productCount } category { id } "
           "displayOrder thumbnail images videos { kind url } panoramaUrl description "
           "specs { key label value } kit { id name quantity } }")
CATEGORY = ("fragment K on Category { id title icon level parent { id } children { id } path { id } "
            "productCount allCount: productCount(includeDescendants: true) "
            "nullCount: productCount(includeDescendants: null) }")
CONNECTION = ("fragment C on ProductConnection { totalCount nodes { id } edges { cursor node { id } } "
              "pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }")
BATCH = 200          # product(id:) / category(id:) fields per document
CONNECTIONS = 150    # connections per document


def gql(value):
    """A GraphQL string literal (JSON string escapes are GraphQL string escapes)."""
    return json.dumps(value)


class Engine:
    def __init__(self, binary, db):
        self.binary, self.db, self.calls = binary, db, 0

    def run(self, body, fragments=(), expect_errors=False, variables=None, head=""):
        doc = head + "{\n" + "\n".join(body) + "\n}\n" + "\n".join(fragments)
        self.calls += 1
        extra = ["--variables", json.dumps(variables)] if variables is not None else []
        p = subprocess.run([self.binary, "query", "--db", self.db, *extra, "-"], input=doc.encode(),
                           capture_output=True, timeout=60)
        assert p.returncode in (0, 1), f"query exited {p.returncode}: {p.stderr.decode()}\n{doc[:2000]}"
        response = json.loads(p.stdout)
        if not expect_errors:
            assert "errors" not in response, f"unexpected errors {response['errors'][:3]}\n{doc[:2000]}"
        return response


class Diffs:
    def __init__(self):
        self.items = []

    def add(self, where, expected, got):
        self.items.append((where, expected, got))

    def compare(self, where, expected, got):
        if isinstance(expected, dict) and isinstance(got, dict):
            for k in expected:
                if k not in got:
                    self.add(f"{where}.{k}", expected[k], "<missing>")
                else:
                    self.compare(f"{where}.{k}", expected[k], got[k])
        elif isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
            for i, (e, g) in enumerate(zip(expected, got)):
                self.compare(f"{where}[{i}]", e, g)
        elif expected != got or type(expected) is not type(got):
            self.add(where, expected, got)

    def report(self, limit=60):
        lines = [f"{len(self.items)} differences (expected = contract/reference, got = engine):"]
        for where, e, g in self.items[:limit]:
            lines.append(f"  {where}: expected {short(e)} got {short(g)}")
        return "\n".join(lines)


def short(v, n=300):
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= n else s[:n] + "…"


def chunks(seq, n):
    seq = list(seq)
    return [seq[i:i + n] for i in range(0, len(seq), n)]


# ---- connections ------------------------------------------------------------------------------

class Conn:
    """One connection to follow: `prefix field(args, first, after) { ...C } suffix`, the connection
    found at `path` under the alias, expected node ids in order."""

    def __init__(self, label, field, args, expected, prefix="", suffix="", path=()):
        self.label, self.field, self.args, self.expected = label, field, args, expected
        self.prefix, self.suffix, self.path = prefix, suffix, path


def follow(engine, diffs, conns, first):
    """Follows endCursor page by page for every connection at once (one document per round)."""
    state = {i: {"after": None, "ids": [], "pages": 0} for i in range(len(conns))}
    pending = list(state)
    while pending:
        for group in chunks(pending, CONNECTIONS):
            body = []
            for i in group:
                c, s = conns[i], state[i]
                args = list(c.args) + [f"first: {first}"] + ([f"after: {gql(s['after'])}"] if s["after"] else [])
                body.append(f"c{i}: {c.prefix}{c.field}({', '.join(args)}) {{ ...C }}{c.suffix}")
            data = engine.run(body, [CONNECTION])["data"]
            for i in group:
                c, s = conns[i], state[i]
                conn = data[f"c{i}"]
                for key in c.path:
                    conn = conn[key] if conn is not None else None
                where = f"{c.label} (first: {first}, page {s['pages'] + 1})"
                if conn is None:
                    diffs.add(where, "a connection", None)
                    s["done"] = True
                    continue
                check_page(diffs, where, c.expected, s, conn, first)
                s["pages"] += 1
                if first > 0 and conn["pageInfo"]["hasNextPage"] and s["pages"] <= len(c.expected) // first + 1:
                    s["after"] = conn["pageInfo"]["endCursor"]
                else:
                    s["done"] = True
        pending = [i for i in pending if not state[i].get("done")]
    for i, c in enumerate(conns):
        if first > 0 and state[i]["ids"] != c.expected:
            diffs.add(f"{c.label} (first: {first}, all pages) ids", c.expected, state[i]["ids"])


def check_page(diffs, where, expected, s, conn, first):
    offset = len(s["ids"])
    page = expected[offset:offset + first]
    nodes = [n["id"] for n in conn["nodes"]]
    edges = conn["edges"]
    if conn["totalCount"] != len(expected):
        diffs.add(f"{where} totalCount", len(expected), conn["totalCount"])
    if nodes != page:
        diffs.add(f"{where} nodes", page, nodes)
    if [e["node"]["id"] for e in edges] != nodes:
        diffs.add(f"{where} edges", nodes, [e["node"]["id"] for e in edges])
    info = conn["pageInfo"]
    want = {"hasNextPage": offset + len(page) < len(expected), "hasPreviousPage": s["after"] is not None,
            "startCursor": edges[0]["cursor"] if edges else None,
            "endCursor": edges[-1]["cursor"] if edges else None}
    diffs.compare(f"{where} pageInfo", want, info)
    s["ids"].extend(nodes)


# ---- the comparison ---------------------------------------------------------------------------

def search_texts(ref):
    """Words drawn from the data plus the awkward cases SEMANTICS.md names."""
    texts = ["arri", "ARRI", "aRrI", "alexa mini", "  mini \t  ALEXA\n", "lens prime", "%", "_", "\\",
             "50%", "a_b", "100%", "%%", "zzqqxx", "a", "e", "ARRIALEXA", "mm", "12", "\u00a0",
             "lens\u00a0", "x\x0bmini", "LeNs", "kit", "\u00e9cl", "\u00c9cl", "\u00c9CLAIR", "\u00a0Le",
             "\\s", "\\%", "\x1cfs", "\u2003em", "em space", "e\u0301", "\u0131p",
             "widget", "REPLACED", "zoom 24", "fujinon", "now with %"]
    for r in ref.products[::37]:
        name = ref.trimmed(r["Product"]) or ""
        words = reference.split_words(name)
        if words:
            texts.append(words[0])
            texts.append(" ".join(words[-2:]).upper())
        desc = reference.split_words(ref.trimmed(r["description"]) or "")
        if desc:
            texts.append(desc[len(desc) // 2])
        m = ref.manufacturer_name(r)
        if m and words:
            texts.append(f"{m.split()[0].lower()} {words[-1]}")
    return list(dict.fromkeys(texts))


def compare_catalog(binary, db, small_page=41, page=100, sparse=True):
    ref = reference.Catalog(db)
    engine = Engine(binary, db)
    diffs = Diffs()

    # catalogVersion, categories, alphabet, manufacturers (first page of products)
    data = engine.run([
        "catalogVersion { version catalogRow assetRow }",
        "categories { ...K }",
        "alphabet { letter count }",
        "manufacturers { name logo productCount products(first: 100) { totalCount nodes { id } } }",
    ], [CATEGORY])["data"]
    diffs.compare("catalogVersion", ref.catalog_version(), data["catalogVersion"])
    diffs.compare("categories", [ref.category(ref.by_hid[i]) for i in ref.categories()], data["categories"])
    diffs.compare("alphabet", ref.alphabet(), data["alphabet"])
    want = ref.manufacturers()
    for m in want:
        ids = ref.products_ids(manufacturer=m["name"])
        m["products"] = {"totalCount": len(ids), "nodes": [{"id": i} for i in ids[:100]]}
    diffs.compare("manufacturers", want, data["manufacturers"])

    # category(id) for every row, plus ids in other spellings
    queries = [(f"c{r['id']}".replace("-", "m"), gql(str(r["id"])), ref.category(r)) for r in ref.hierarchy]
    extra = [("missing", gql("987654321"), None), ("abc", gql("abc"), None), ("empty", gql(""), None),
             ("over", gql("9223372036854775808"), None), ("under", gql("-9223372036854775809"), None),
             ("wrap", gql("18446744073709551617"), None), ("frac", gql("1.5"), None)]
    if ref.hierarchy:
        r = ref.hierarchy[-1]
        extra += [("zeroPadded", gql("0" + str(r["id"])), ref.category(r)), ("intLiteral", str(r["id"]), ref.category(r))]
    for group in chunks(queries + extra, BATCH):
        data = engine.run([f"{alias}: category(id: {arg}) {{ ...K }}" for alias, arg, _ in group], [CATEGORY])["data"]
        for alias, arg, want in group:
            diffs.compare(f"category(id: {arg})", want, data[alias])

    # product(id) for every row with every field, plus ids in other spellings
    queries = [(f"p{r['keyid']}".replace("-", "m"), gql(str(r["keyid"])), ref.product(r)) for r in ref.products]
    extra = [("missing", gql("987654321"), None), ("abc", gql("abc"), None), ("empty", gql(""), None),
             ("over", gql("9223372036854775808"), None), ("under", gql("-9223372036854775809"), None),
             ("wrap", gql("18446744073709551617"), None), ("frac", gql("1.0"), None)]
    if ref.products:
        r = ref.products[len(ref.products) // 2]
        extra += [("zeroPadded", gql("0" + str(r["keyid"])) if r["keyid"] >= 0 else gql(str(r["keyid"])), ref.product(r)),
                  ("intLiteral", str(r["keyid"]), ref.product(r))]
    for group in chunks(queries + extra, BATCH):
        data = engine.run([f"{alias}: product(id: {arg}) {{ ...P }}" for alias, arg, _ in group], [PRODUCT])["data"]
        for alias, arg, want in group:
            diffs.compare(f"product(id: {arg})", want, data[alias])

    # products: every order unfiltered, in small pages, and first: 0
    small = []
    for order in ("CATALOG", "NAME", "NEWEST"):
        small.append(Conn(f"products(orderBy: {order})", "products", [f"orderBy: {order}"], ref.products_ids(order)))
    small.append(Conn("products(orderBy: null)", "products", ["orderBy: null", "filter: null"], ref.products_ids()))
    follow(engine, diffs, small, small_page)
    follow(engine, diffs, small[:1], 0)

    # after the fifth row with first: 0, and after the last row
    ids = ref.products_ids()
    if len(ids) >= 5:
        data = engine.run(["a: products(first: 5) { edges { cursor } }",
                           f"b: products(first: {min(len(ids), 100)}, after: null) {{ edges {{ cursor }} }}"])["data"]
        fifth, last = data["a"]["edges"][4]["cursor"], data["b"]["edges"][-1]["cursor"]
        data = engine.run([f"a: products(first: 0, after: {gql(fifth)}) {{ ...C }}",
                           f"b: products(first: 3, after: {gql(fifth)}) {{ ...C }}"] +
                          ([f"c: products(first: 5, after: {gql(last)}) {{ ...C }}"] if len(ids) <= 100 else []),
                          [CONNECTION])["data"]
        for alias, first, offset in (("a", 0, 5), ("b", 3, 5), ("c", 5, len(ids))):
            if alias in data:
                seen = {"ids": list(ids[:offset]), "after": "given"}
                check_page(diffs, f"products(first: {first}) after row {offset}", ids, seen, data[alias], first)

    # defaults and explicit nulls: first 50, no after; ID given as an Int variable
    data = engine.run(["a: products { totalCount nodes { id } pageInfo { hasNextPage hasPreviousPage } }",
                       "b: products(first: null, after: null, orderBy: null, filter: {categoryId: null, "
                       "includeDescendants: null, manufacturer: null, sku: null, letter: null}) "
                       "{ totalCount nodes { id } pageInfo { hasNextPage hasPreviousPage } }",
                       "c: search(text: \"a\", first: null, after: null) { totalCount nodes { id } }",
                       "d: product(id: $pid) { id }", "e: category(id: $cid) { id "
                       "products(includeDescendants: null, orderBy: null, first: null, after: null) { nodes { id } } }"],
                      variables={"pid": int(ref.products[0]["keyid"]) if ref.products else 1,
                                 "cid": int(ref.hierarchy[0]["id"]) if ref.hierarchy else 1},
                      head="query Q($pid: ID!, $cid: ID!) ")["data"]
    ids = ref.products_ids()
    want = {"totalCount": len(ids), "nodes": [{"id": i} for i in ids[:50]],
            "pageInfo": {"hasNextPage": len(ids) > 50, "hasPreviousPage": False}}
    diffs.compare("products (defaults)", want, data["a"])
    diffs.compare("products (explicit nulls)", want, data["b"])
    ids = ref.search_ids("a")
    diffs.compare('search(text: "a", first: null)', {"totalCount": len(ids), "nodes": [{"id": i} for i in ids[:50]]},
                  data["c"])
    if ref.products:
        diffs.compare("product(id: $pid Int variable)", {"id": str(ref.products[0]["keyid"])}, data["d"])
    if ref.hierarchy:
        cid = ref.hierarchy[0]["id"]
        diffs.compare("category(id: $cid Int variable) { products(explicit nulls) }",
                      {"id": str(cid), "products": {"nodes": [{"id": i} for i in ref.products_ids(category_id=cid)[:50]]}},
                      data["e"])

    # products with every filter
    conns = []
    cat_ids = sorted({r["id"] for r in ref.hierarchy} | {p for r in ref.hierarchy for p in [r["parent"]]
                                                       if isinstance(p, int) and p not in ref.by_hid})
    for cid in cat_ids:
        for incl in (False, True):
            conns.append(Conn(f"products(categoryId: {cid}, includeDescendants: {incl})", "products",
                              [f"filter: {{categoryId: {gql(str(cid))}, includeDescendants: {str(incl).lower()}}}"],
                              ref.products_ids(category_id=cid, include_descendants=incl)))
    for cid in ("abc", "", "0" + str(cat_ids[0]) if cat_ids else "0"):
        conns.append(Conn(f"products(categoryId: {gql(cid)})", "products",
                          [f"filter: {{categoryId: {gql(cid)}, includeDescendants: true}}"],
                          ref.products_ids(category_id=cid, include_descendants=True)))
    names = ref.manufacturer_names()
    has_null_mfg = any(r["Manufacturer"] is None for r in ref.products)
    probes = names + [n.lower() for n in names[:5]] + [n + " " for n in names[:3]] + ["no such maker"]
    if not has_null_mfg:
        probes.append("")
    for name in dict.fromkeys(probes):
        conns.append(Conn(f"products(manufacturer: {gql(name)})", "products",
                          [f"filter: {{manufacturer: {gql(name)}}}", "orderBy: NAME"],
                          ref.products_ids("NAME", manufacturer=name)))
    skus = sorted({ref.text(r["product_ID"]) for r in ref.products if r["product_ID"] is not None})
    probes = skus[::max(1, len(skus) // 40)] + [" " + s for s in skus[:3]] + [s.lower() for s in skus if not s.isdigit()][:3]
    probes += ["0" + s for s in skus if s.isdigit()][:2] + ["nope"]
    for sku in dict.fromkeys(probes):
        conns.append(Conn(f"products(sku: {gql(sku)})", "products", [f"filter: {{sku: {gql(sku)}}}", "orderBy: NEWEST"],
                          ref.products_ids("NEWEST", sku=sku)))
    for letter in reference.LETTERS:
        conns.append(Conn(f"products(letter: {letter})", "products", [f"filter: {{letter: {gql(letter)}}}", "orderBy: NAME"],
                          ref.products_ids("NAME", letter=letter)))
    # combined filters
    for r in ref.products[::61]:
        m = ref.manufacturer_name(r)
        if m is None or not isinstance(r["cat"], int):
            continue
        letter = ref.initial(r)
        conns.append(Conn(f"products(cat {r['cat']}+desc, {m!r}, {letter})", "products",
                          [f"filter: {{categoryId: {r['cat']}, includeDescendants: true, manufacturer: {gql(m)}, "
                           f"letter: {gql(letter)}, sku: null}}"],
                          ref.products_ids(category_id=r["cat"], include_descendants=True, manufacturer=m, letter=letter)))
    # Category.products and Manufacturer.products, each order
    for cid in [r["id"] for r in ref.hierarchy][::9 if sparse else 1]:
        for incl, order in ((False, "NAME"), (True, "CATALOG"), (True, "NEWEST")):
            conns.append(Conn(f"category({cid}).products(includeDescendants: {incl}, orderBy: {order})", "products",
                              [f"includeDescendants: {str(incl).lower()}", f"orderBy: {order}"],
                              ref.products_ids(order, category_id=cid, include_descendants=incl),
                              prefix=f"category(id: {gql(str(cid))}) {{ ", suffix=" }", path=("products",)))
    owners = {}
    for r in ref.products:
        m = ref.manufacturer_name(r)
        if m is not None:
            owners.setdefault(m, r["keyid"])
    for m, keyid in list(owners.items())[::3 if sparse else 1]:
        for order in ("CATALOG", "NAME", "NEWEST"):
            conns.append(Conn(f"manufacturer({m!r}).products(orderBy: {order})", "products", [f"orderBy: {order}"],
                              ref.products_ids(order, manufacturer=m),
                              prefix=f"product(id: {gql(str(keyid))}) {{ manufacturer {{ ", suffix=" } }",
                              path=("manufacturer", "products")))
    # search
    for text in search_texts(ref):
        conns.append(Conn(f"search({gql(text)})", "search", [f"text: {gql(text)}"], ref.search_ids(text)))
    follow(engine, diffs, conns, page)

    check_field_errors(engine, diffs, ref)
    return diffs, engine.calls


def check_field_errors(engine, diffs, ref):
    """Bad argument values are field errors with message, locations and path; the field is null and
    the null propagates to the nearest nullable parent (data itself for Query.products/search)."""
    def shape(response):
        return [(bool(e.get("message")), bool(e.get("locations")), e.get("path")) for e in response.get("errors", [])]

    for field, body in (("products", 'filter: {letter: "a"}'), ("products", 'filter: {letter: ""}'),
                        ("search", 'text: " \\t\\n "'), ("search", 'text: "a", first: 101'),
                        ("products", 'after: "garbage"')):
        response = engine.run([f"{field}({body}) {{ totalCount }}"], expect_errors=True)
        diffs.compare(f"{{ {field}({body}) }}", {"data": None, "errors": [(True, True, [field])]},
                      {"data": response.get("data", "<absent>"), "errors": shape(response)})
    if not ref.hierarchy or not any(ref.manufacturer_name(r) for r in ref.products):
        return
    cid = ref.hierarchy[0]["id"]
    owner = next(r["keyid"] for r in ref.products if ref.manufacturer_name(r))
    response = engine.run([
        "ok: alphabet { letter count }",
        f'c1: category(id: "{cid}") {{ id products(first: 101) {{ totalCount }} }}',
        f'c2: category(id: "{cid}") {{ id products(first: -1, includeDescendants: true) {{ totalCount }} }}',
        f'c3: category(id: "{cid}") {{ id products(after: "garbage") {{ totalCount }} }}',
        f'p: product(id: "{owner}") {{ id manufacturer {{ name products(first: 500) {{ totalCount }} }} }}',
    ], expect_errors=True)
    want = {"data": {"ok": ref.alphabet(), "c1": None, "c2": None, "c3": None, "p": {"id": str(owner), "manufacturer": None}},
            "errors": sorted([(True, True, ["c1", "products"]), (True, True, ["c2", "products"]),
                              (True, True, ["c3", "products"]), (True, True, ["p", "manufacturer", "products"])])}
    diffs.compare("field errors in nested connections", want,
                  {"data": response.get("data"), "errors": sorted(shape(response))})


def check(binary, db, **options):
    diffs, calls = compare_catalog(binary, db, **options)
    print(f"{db}: {calls} query processes, {len(diffs.items)} differences")
    assert not diffs.items, diffs.report()


# ---- catalogs ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_catalogs(binary, tmp_path_factory):
    out = {}
    for seed in (1, 2, 3):
        path = tmp_path_factory.mktemp(f"demo{seed}") / "catalog.sqlite"
        subprocess.run([binary, "demo-db", "--out", str(path), "--seed", str(seed)], check=True, capture_output=True)
        out[seed] = str(path)
    return out


def prepared_copy(binary, db, suffix="-prepared"):
    copy = db.replace(".sqlite", suffix + ".sqlite")
    shutil.copyfile(db, copy)
    subprocess.run([binary, "prepare", "--db", copy], check=True, capture_output=True)
    return copy


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_demo_catalog_matches_reference(binary, demo_catalogs, seed):
    check(binary, demo_catalogs[seed])


def test_prepared_demo_catalog_matches_reference(binary, demo_catalogs):
    """With the gateway's own cg_ indexes (search index included), as `serve` runs it."""
    check(binary, prepared_copy(binary, demo_catalogs[1]))


NBSP = "\u00a0"

QUIRK_SQL = [
    # columns discovered from the tables: display_Image06 and display_Image00 appended after keyid,
    # a spec letter r on both tables, look-alikes that are not image/spec columns
    "ALTER TABLE Product_Catalog ADD COLUMN display_Image06 text",
    "ALTER TABLE Product_Catalog ADD COLUMN display_Image00 text",
    "ALTER TABLE Product_Catalog ADD COLUMN display_Image text",
    "ALTER TABLE Product_Catalog ADD COLUMN display_ImageX text",
    "ALTER TABLE Product_Catalog ADD COLUMN info_spec_r text",
    "ALTER TABLE Product_Catalog ADD COLUMN info_spec_aa text",
    "ALTER TABLE DetailsKeyValues ADD COLUMN spec_aa text",
]

HIERARCHY = [
    # id, menu_title, menu_icon, level, parent
    (3, "  Grip\t", NBSP, "", 0),          # icon is U+00A0 (kept), level '' -> null
    (4, "Dollies", " \t", 2, 3),           # icon blank -> null
    (5, "Track", "t.png", 3.0, 4),
    (10, "Cycle A", "a.png", 2, 11),        # 10 <-> 11 cycle
    (11, "Cycle B", "b.png", 2, 10),
    (12, "Under cycle", "", 3, 10),
    (13, "Self", "s.png", 1, 13),           # its own parent
    (14, "Orphan", "o.png", 2, 999),        # parent row missing
    (15, "Orphan child", "oc.png", 3, 14),
    (16, "Text parent", "tp.png", None, "x"),
    (17, "Real parent", "rp.png", 2, 3.0),
    (18, "\x0b\x0c\r\nTitle ws\n", "i.png", 1, 0),
    (0, "Zero", "z.png", 0, 0),             # id 0 with parent 0: a root, and every root's parent id
    (19, "Empty parent", "e.png", 1, ""),   # parent '' is not 0 and names no row
    (20, NBSP, "\x1c", 1, 0),               # U+00A0 title, U+001C icon: neither is C whitespace
    (2 ** 63 - 1, "Max", "m.png", 1, 0),
]

PRODUCT_COLUMNS = ("keyid", "product_ID", "Product", "Manufacturer", "cat", "displayorder", "display_Thumbnail",
                   "display_Image01", "display_Image02", "display_Image05", "display_Image06", "display_Image00",
                   "display_Image", "display_ImageX", "panorama", "description", "info_DetailsKey",
                   "info_spec_a", "info_spec_b", "info_spec_c", "info_spec_d", "info_spec_r", "info_spec_aa",
                   "bracketvid", "promovid", "gscreenvid")

PRODUCTS = [
    # keyid, product_ID, Product, Manufacturer, cat, displayorder, thumb, img01, img02, img05, img06, img00,
    # img, imgX, panorama, description, info_DetailsKey, a, b, c, d, r, aa, bracket, promo, gscreen
    (2, 500, "apple box", "Zeiss", 3, 2, " t.jpg ", " i1 ", "", "i5", "i6", "i0", "no", "no", " \t", "100% cotton",
     "3", "A1", "B1", " ", "D1", "R1", "AA", " br ", "", NBSP),
    (3, 500, "Apple Box", " Zeiss ", 4, 1, "\t", NBSP, None, None, None, None, None, None, None, "a_b grip",
     " +3 ", "x", "y", "z", "w", "", "", None, "p", None),
    (4, "500", "APPLE BOX", "zeiss", 5, None, None, None, None, None, None, None, None, None, None, None,
     "3.0", "x", None, None, None, None, None, None, None, None),
    (5, "K-7", None, None, "abc", "", None, None, None, None, None, None, None, None, None, None,
     "777", None, None, None, None, None, None, None, None, None),
    (6, None, "\t\x0bzeiss lens\x0c\r\n", "ARRI" + NBSP, 10, 10.5, None, None, None, None, None, None, None, None,
     "pano", " \x0b ", "-3", "neg", None, None, None, None, None, None, None, None),
    (7, " K-9 ", NBSP + "Lens" + NBSP, "Cooke", 11, "", None, None, None, None, None, None, None, None, None, None,
     "", None, None, None, None, None, None, None, None, None),
    (8, 42, "_under score", "Cooke", 12, 3, None, None, None, None, None, None, None, None, None, "50% off",
     "4", "v", "v", "v", "v", "v", None, None, None, None),
    (9, "k-7", "%percent", "Cooke ", 13, 3, None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None, None, None, None, None, None),
    (10, 600, "Zebra", "", 14, 1, None, None, None, None, None, None, None, None, None, "\\ back\\slash",
     None, None, None, None, None, None, None, None, None, None),
    (11, 601, "zulu", "  ", 15, 1, None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None, None, None, None, None, None),
    (12, 602, "9 Volt", "Cooke", 16, "abc", None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None, None, None, None, None, None),
    (13, 603, "Éclair", "Éclair", 17, 1, None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None, None, None, None, None, None),
    (14, 604, "Lens Kit", "Cooke", 999, 1, None, None, None, None, None, None, None, None, None, "kit\tcase",
     None, None, None, None, None, None, None, None, None, None),
    (15, 605, "lens kit", "Cooke", 999, 1, None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None, None, None, None, None, None),
    (1099511627776, 606, "Big id", "ARRI", 1, 5, None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None, None, None, None, None, None),
    (-5, 607, "Negative id", "ARRI", 18, 5, None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None, None, None, None, None, None),
    (16, 608, "", "ARRI", 2, 0, None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None, None, None, None, None, None),
    (17, 1.5, "\u2003Em space", NBSP, 2.5, 1, None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None, None, None, None, None, None),
    (18, 1e20, "\u0131pad", "Cooke", 1, None, None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None, None, None, None, None, None),
    (19, 700, "Name\x85", "Cooke", 1, 2, None, None, None, None, None, None, None, None, None, None,
     "0004", "q", "q", "q", "q", "q", None, None, None, None),
    (20, 701, "\x1cFS", "Cooke", 1, 2, None, None, None, None, None, None, None, None, None, None,
     NBSP + "4", "q", "q", "q", "q", "q", None, None, None, None),
    # 64-bit bounds: ids, cat, info_DetailsKey beyond them must not wrap or saturate
    (2 ** 63 - 1, 710, "Max id", "ARRI", 2 ** 63 - 1, 1, None, None, None, None, None, None, None, None, None, None,
     "99999999999999999999", "v", None, None, None, None, None, None, None, None),
    (-2 ** 63, 711, "Min id", "ARRI", 1, 1, None, None, None, None, None, None, None, None, None, None,
     "-9223372036854775808", "v", None, None, None, None, None, None, None, None),
]

ASSETS = [
    # assetID, kitID, asset, kitQTY
    (1, "500", " Cable ", "2"),
    (2, "500", "Plate", ""),
    (3, "500", "Rod", "abc"),
    (4, " 500", "Not matched (space)", "1"),
    (5, "0500", "Not matched (zero)", "1"),
    (6, "99999", "No such product", "1"),
    (7, "K-7", "Text sku", "2.9"),
    (8, "k-7", "Lowercase sku", " 3"),
    (9, "42", "Forty-two", "-4"),
    (10, " K-9 ", "Spaced sku", "1e2"),
    (11, "500", "\t", "7"),
    (12, "1.5", "Real sku", "1"),
    (13, "1.0e+20", "Big real sku", "1"),
    (14, "700.0", "Not matched (real text)", "1"),
]

TEMPLATES = [
    # DetailsKey, spec_a, spec_b, spec_c, spec_d, spec_r, spec_aa
    (3, "xWeight", " Mount", "-Size", None, "éLabel r", "xAA"),
    (-3, "xNeg", None, None, None, None, None),
    (4, "a", "  ", "x\tTabbed\t", NBSP + "nbsp", "xR", None),
    (2 ** 63 - 1, "xMAX", None, None, None, None, None),
    (-2 ** 63, "xMIN", None, None, None, None, None),
]

MFG = [
    # mfgid, manufacturer, logo
    (2, "Cooke", " \t"),
    (3, "Zeiss", " zeiss.png "),
    (4, " Zeiss ", "zeiss-other.png"),
    (5, "ARRI" + NBSP, "nbsp.png"),
    (0, "Éclair", "eclair.png"),
    (6, "ARRI", "arri-later.png"),
    (7, "Cooke ", "cooke.png"),     # Cooke's lowest mfgid (2) has a blank logo: null, no fallback
    (8, None, "null-name.png"),
    (9, "Zeiss", None),
]


def make_quirk_catalog(directory):
    db = make_catalog(directory)
    conn = sqlite3.connect(db)
    for sql in QUIRK_SQL:
        conn.execute(sql)
    conn.executemany("INSERT INTO hierarchy VALUES (?, ?, ?, ?, ?)", HIERARCHY)
    conn.executemany(f"INSERT INTO Product_Catalog ({', '.join(PRODUCT_COLUMNS)}) "
                     f"VALUES ({', '.join('?' * len(PRODUCT_COLUMNS))})", PRODUCTS)
    conn.executemany("INSERT INTO Product_Assets VALUES (?, ?, ?, ?)", ASSETS)
    conn.executemany("INSERT INTO DetailsKeyValues (DetailsKey, spec_a, spec_b, spec_c, spec_d, spec_r, spec_aa) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)", TEMPLATES)
    conn.executemany("INSERT INTO mfg VALUES (?, ?, ?)", MFG)
    # '' version fields and a value beyond 32 bits in the newest row
    conn.executemany("INSERT INTO version VALUES (?, ?, ?)", [(3, "", 99999999999), (2, 5, 6)])
    conn.commit()
    conn.close()
    return db


@pytest.fixture(scope="module")
def quirk_catalog(tmp_path_factory):
    return make_quirk_catalog(tmp_path_factory.mktemp("quirks"))


def test_quirk_catalog_matches_reference(binary, quirk_catalog):
    check(binary, quirk_catalog, small_page=3, page=4, sparse=False)


def test_prepared_quirk_catalog_matches_reference(binary, quirk_catalog):
    check(binary, prepared_copy(binary, quirk_catalog), small_page=3, page=4, sparse=False)


EDITS = [
    # another writer's edits after `prepare`: the gateway's own indexes must follow them
    "UPDATE Product_Catalog SET Product = 'Zoom lens 24-70' WHERE keyid = 2",
    "UPDATE Product_Catalog SET description = 'now with %' WHERE keyid = 3",
    "UPDATE Product_Catalog SET Manufacturer = 'Fujinon', displayorder = -1 WHERE keyid = 4",
    "DELETE FROM Product_Catalog WHERE keyid = 16",
    "INSERT OR REPLACE INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) "
    "VALUES (9, 'k-7', 'Replaced percent', 'Cooke', 13)",
    "INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, description) "
    "VALUES (30, 900, 'Brand new widget', 'Zeiss', 15, 'widget')",
    "UPDATE hierarchy SET parent = 12 WHERE id = 11",
    "DELETE FROM hierarchy WHERE id = 14",
    "UPDATE Product_Assets SET kitID = 'K-7' WHERE assetID = 1",
    "INSERT INTO version VALUES (10, 1, 1)",
    "UPDATE mfg SET logo = 'cooke2.png' WHERE mfgid = 2",
    "UPDATE DetailsKeyValues SET spec_b = 'xNew b' WHERE DetailsKey = 3",
    "ALTER TABLE Product_Catalog ADD COLUMN display_Image07 text",
    "UPDATE Product_Catalog SET display_Image07 = 'seven' WHERE keyid = 2",
]


def test_prepared_then_edited_quirk_catalog_matches_reference(binary, quirk_catalog):
    db = prepared_copy(binary, quirk_catalog, "-prepared-edited")
    conn = sqlite3.connect(db)
    for sql in EDITS:
        conn.execute(sql)
    conn.commit()
    conn.close()
    ref = reference.Catalog(db)
    assert ref.search_ids("widget") == ["30"] and ref.search_ids("zoom") == ["2"] and ref.search_ids("apple") == ["3", "4"]
    assert ref.product(ref.by_keyid[2])["images"][-1] == "seven" and 16 not in ref.by_keyid
    check(binary, db, small_page=3, page=4, sparse=False)


def test_reference_reads_quirks_as_the_contract_says(quirk_catalog):
    """Spot checks of the reference itself against answers worked out by hand from SEMANTICS.md."""
    ref = reference.Catalog(quirk_catalog)
    p = ref.product(ref.by_keyid[2])
    assert p["images"] == ["i1", "i5", "i6", "i0"]
    assert p["thumbnail"] == "t.jpg" and p["description"] == "100% cotton"
    assert p["specs"] == [{"key": "a", "label": "Weight", "value": "A1"},
                          {"key": "b", "label": "Mount", "value": "B1"},
                          {"key": "r", "label": "Label r", "value": "R1"}]
    assert p["videos"] == [{"kind": "BRACKET", "url": "br"}, {"kind": "GREEN_SCREEN", "url": NBSP}]
    assert p["kit"] == [{"id": "1", "name": "Cable", "quantity": 2}, {"id": "2", "name": "Plate", "quantity": 0},
                        {"id": "3", "name": "Rod", "quantity": 0}, {"id": "11", "name": "", "quantity": 7}]
    assert p["manufacturer"] == {"name": "Zeiss", "logo": "zeiss.png", "productCount": 2}
    assert ref.product(ref.by_keyid[3])["specs"][0] == {"key": "a", "label": "Weight", "value": "x"}
    assert ref.product(ref.by_keyid[4])["specs"] == [] and ref.product(ref.by_keyid[4])["kit"] == ref.product(ref.by_keyid[2])["kit"]
    p5 = ref.product(ref.by_keyid[5])
    assert p5["name"] == "" and p5["manufacturer"] is None and p5["category"] is None and p5["displayOrder"] is None
    assert p5["kit"] == [{"id": "7", "name": "Text sku", "quantity": 2}]
    p6 = ref.product(ref.by_keyid[6])
    assert p6["name"] == "zeiss lens" and p6["sku"] == "" and p6["kit"] == [] and p6["displayOrder"] == 10
    assert p6["manufacturer"]["name"] == "ARRI" + NBSP and p6["manufacturer"]["logo"] == "nbsp.png"
    assert p6["specs"] == [{"key": "a", "label": "Neg", "value": "neg"}] and p6["description"] is None
    p7 = ref.product(ref.by_keyid[7])
    assert p7["name"] == NBSP + "Lens" + NBSP and p7["sku"] == "K-9" and ref.initial(ref.by_keyid[7]) == "#"
    assert p7["kit"] == [{"id": "10", "name": "Spaced sku", "quantity": 1}]
    assert ref.product(ref.by_keyid[8])["kit"] == [{"id": "9", "name": "Forty-two", "quantity": -4}]
    assert ref.product(ref.by_keyid[8])["specs"] == [{"key": "c", "label": "Tabbed", "value": "v"},
                                                     {"key": "d", "label": "nbsp", "value": "v"},
                                                     {"key": "r", "label": "R", "value": "v"}]
    assert ref.product(ref.by_keyid[9])["kit"] == [{"id": "8", "name": "Lowercase sku", "quantity": 3}]
    assert ref.product(ref.by_keyid[12])["manufacturer"]["logo"] is None
    cats = {r["id"]: ref.category(r) for r in ref.hierarchy}
    assert cats[3]["icon"] == NBSP and cats[3]["level"] is None and cats[3]["title"] == "Grip"
    assert cats[4]["icon"] is None and cats[5]["level"] == 3
    assert [c["id"] for c in cats[10]["path"]] == ["11", "10"] and [c["id"] for c in cats[12]["path"]] == ["11", "10", "12"]
    assert cats[13]["parent"] == {"id": "13"} and cats[13]["path"] == [{"id": "13"}] and cats[13]["children"] == [{"id": "13"}]
    assert cats[14]["parent"] is None and cats[15]["path"] == [{"id": "14"}, {"id": "15"}]
    assert cats[16]["parent"] is None and cats[16]["path"] == [{"id": "16"}]
    assert cats[17]["parent"] == {"id": "3"} and cats[18]["title"] == "Title ws"
    assert ref.categories() == [0, 1, 2, 3, 18, 20, 2 ** 63 - 1]
    assert cats[0]["parent"] is None and cats[0]["path"] == [{"id": "0"}] and cats[0]["allCount"] == 13
    assert [c["id"] for c in cats[0]["children"]] == ["0", "1", "2", "3", "18", "20", str(2 ** 63 - 1)]
    assert cats[19]["parent"] is None and cats[20]["title"] == NBSP and cats[20]["icon"] == "\x1c"
    p17 = ref.product(ref.by_keyid[17])
    assert p17["sku"] == "1.5" and p17["name"] == "\u2003Em space" and p17["manufacturer"]["name"] == NBSP
    assert p17["category"] is None and p17["kit"] == [{"id": "12", "name": "Real sku", "quantity": 1}]
    p18 = ref.product(ref.by_keyid[18])
    assert p18["sku"] == "1.0e+20" and p18["kit"][0]["id"] == "13" and ref.initial(ref.by_keyid[18]) == "#"
    assert [x["key"] for x in ref.product(ref.by_keyid[19])["specs"]] == ["c", "d", "r"]
    assert ref.product(ref.by_keyid[2 ** 63 - 1])["specs"] == []
    assert ref.product(ref.by_keyid[-2 ** 63])["specs"] == [{"key": "a", "label": "MIN", "value": "v"}]
    assert ref.product(ref.by_keyid[20])["specs"] == [] and ref.product(ref.by_keyid[19])["name"] == "Name\x85"
    assert cats[10]["allCount"] == 3 and cats[3]["allCount"] == 4 and cats[13]["allCount"] == 1
    assert ref.products_ids(category_id="999", include_descendants=True) == ["10", "11", "14", "15"]
    assert ref.products_ids(category_id="0999") == ["14", "15"]
    assert ref.products_ids(sku="500") == ["3", "2", "4"] and ref.products_ids(sku=" K-9 ") == ["7"]
    assert ref.products_ids(sku="K-9") == []
    assert ref.products_ids("NAME", letter="#") == ["5", "16", "20", "9", "12", "8", "7", "13", "18", "17"]
    assert ref.products_ids("NAME", letter="A") == ["1", "2", "3", "4"]
    assert ref.products_ids("NAME", letter="L") == ["14", "15"]
    assert ref.search_ids("%") == ["9", "8", "2"] and ref.search_ids("_") == ["8", "3"]
    assert ref.search_ids("\\") == ["10"] and ref.search_ids("ZEISS   apple") == ["2", "3", "4"]
    assert ref.search_ids(NBSP) == ["6", "7", "17"] and ref.search_ids("kit case") == ["14"]
    assert ref.catalog_version() == {"version": 3, "catalogRow": None, "assetRow": None}
    assert [m["name"] for m in ref.manufacturers()] == ["ARRI", "ARRI" + NBSP, "Cooke", "Zeiss", "zeiss", NBSP, "Éclair"]
    # CATALOG: Manufacturer (stored: NULL, '', '  ', ' Zeiss ', 'ARRI', ...), displayorder, Product, keyid
    assert ref.products_ids()[:4] == ["5", "10", "11", "3"]


VERSION_VARIANTS = [
    # rows of an untyped version table (so texts stay texts) -> expected CatalogVersion
    ([], {"version": 0, "catalogRow": None, "assetRow": None}),
    ([(7, "12", "0034")], {"version": 7, "catalogRow": 12, "assetRow": 34}),
    ([(7, " 12", "+12")], {"version": 7, "catalogRow": None, "assetRow": None}),
    ([(7, "-12", -12)], {"version": 7, "catalogRow": None, "assetRow": -12}),
    ([(7, 2147483647, "2147483648")], {"version": 7, "catalogRow": 2147483647, "assetRow": None}),
    ([(7, -2147483648, -2147483649)], {"version": 7, "catalogRow": -2147483648, "assetRow": None}),
    ([(7, 12.0, b"12")], {"version": 7, "catalogRow": None, "assetRow": None}),
    ([(7, "", None)], {"version": 7, "catalogRow": None, "assetRow": None}),
    ([(7, "1 2", "12a")], {"version": 7, "catalogRow": None, "assetRow": None}),
    ([(5, 1, 1), (9, 2, "2"), (7, 3, 3)], {"version": 9, "catalogRow": 2, "assetRow": 2}),
]


def test_catalog_version_variants(binary, tmp_path):
    """catalogVersion: the greatest versionid; catalogRow/assetRow only for an integer or a text of
    plain digits that fits 32 bits."""
    diffs = Diffs()
    for n, (rows, want) in enumerate(VERSION_VARIANTS):
        directory = tmp_path / f"v{n}"
        directory.mkdir()
        db = make_catalog(directory)
        conn = sqlite3.connect(db)
        conn.execute("DROP TABLE version")
        conn.execute("CREATE TABLE version (versionid integer, updatecatalogrow, updateassetrow, PRIMARY KEY(versionid))")
        conn.executemany("INSERT INTO version VALUES (?, ?, ?)", rows)
        conn.commit()
        conn.close()
        diffs.compare(f"catalogVersion with version rows {rows}", want, reference.Catalog(db).catalog_version())
        got = Engine(binary, db).run(["catalogVersion { version catalogRow assetRow }"])["data"]["catalogVersion"]
        diffs.compare(f"catalogVersion with version rows {rows}", want, got)
    assert not diffs.items, diffs.report()


def test_blob_text_is_searched_as_the_text_served(binary, tmp_path):
    """A BLOB in Product / Manufacturer / description is served as its text (name "Blob name",
    manufacturer "Blobmaker", description "blobdesc text") and filtered by that manufacturer, so
    search must match those same trimmed values (SEMANTICS.md: "a product matches when every word is
    a case-insensitive substring of at least one of its trimmed Product, description or
    Manufacturer")."""
    db = make_catalog(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, description) "
                 "VALUES (21, 709, ?, ?, 1, ?)", (b" Blob name ", b"Blobmaker", b"blobdesc text"))
    conn.commit()
    conn.close()
    ref = reference.Catalog(db)
    diffs = Diffs()
    texts = ["blob", "Name", "blobdesc", "BLOBMAKER", "blob alexa", "blobmaker text"]
    data = Engine(binary, db).run(
        ['p: product(id: "21") { name manufacturer { name productCount } description }',
         'm: products(filter: {manufacturer: "Blobmaker"}) { nodes { id } }',
         "manufacturers { name }", "alphabet { letter count }"] +
        [f"s{i}: search(text: {gql(t)}) {{ nodes {{ id }} }}" for i, t in enumerate(texts)])["data"]
    diffs.compare("product(id: 21)", {"name": "Blob name", "manufacturer": {"name": "Blobmaker", "productCount": 1},
                                      "description": "blobdesc text"}, data["p"])
    diffs.compare('products(manufacturer: "Blobmaker")', {"nodes": [{"id": "21"}]}, data["m"])
    diffs.compare("manufacturers", [{"name": m["name"]} for m in ref.manufacturers()], data["manufacturers"])
    diffs.compare("alphabet", ref.alphabet(), data["alphabet"])
    for i, t in enumerate(texts):
        diffs.compare(f"search(text: {gql(t)})", {"nodes": [{"id": x} for x in ref.search_ids(t)]}, data[f"s{i}"])
    assert ref.search_ids("blob") == ["21"]
    assert not diffs.items, diffs.report()


DAMAGED_PRODUCTS = [
    # keyid, product_ID, Product, Manufacturer, description — bytes; Latin-1 where UTF-8 belongs
    (21, b"S\xfc1", b"Kabel M\xfcller", b"M\xfcller", b"gr\xfcn"),
    (22, b"S\xf61", b"Kabel M\xf6ller", b"M\xf6ller", b"gr\xfcn und blau"),
    (23, b"S3", b"M\xef\xbf\xbdller stand", b"M\xef\xbf\xbdller", None),   # a real U+FFFD
    (24, b"S4", "Müller arm".encode(), "Müller".encode(), None),
    (25, b"S5", b"\xfcber lamp", b"  M\xfcller \t", b"\xff"),
    (26, b"S6", b"Plain", b"\xff", b"x\xe2\x82"),
    (27, b"S7", b"Euro \xe2\x82", b"X\xe2\x82", None),                    # a cut multibyte character
    (28, b"S8", "Euro €".encode(), "X€".encode(), None),
    (29, b"S\xfc1", b"Second S\xfc1", b"Cooke", None),
]
DAMAGED_MFG = [(11, b"M\xf6ller", b"moeller.png"), (12, b"M\xfcller", b"mueller.png"), (13, "Müller".encode(), b"real.png"),
               (14, b"X\xe2\x82", b"x.png")]
DAMAGED_ASSETS = [(31, b"S\xfc1", b"Kabel \xfc", "2"), (32, b"S\xf61", b"Other", "1"), (33, b"S7", b"Rod", "1")]


def make_damaged_text_catalog(directory):
    db = make_catalog(directory)
    conn = sqlite3.connect(db)
    text = "CAST(? AS TEXT)"
    conn.executemany(f"INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, description) "
                     f"VALUES (?, {text}, {text}, {text}, 1, {text})", DAMAGED_PRODUCTS)
    conn.executemany(f"INSERT INTO mfg VALUES (?, {text}, {text})", DAMAGED_MFG)
    conn.executemany(f"INSERT INTO Product_Assets VALUES (?, {text}, {text}, ?)", DAMAGED_ASSETS)
    conn.commit()
    conn.close()
    return db


@pytest.mark.parametrize("prepared", [False, True])
def test_damaged_text_is_compared_as_the_text_served(binary, tmp_path, prepared):
    """Text that is not valid UTF-8 (Latin-1 written where UTF-8 belongs) is served with U+FFFD, and
    two stored names can be served as one: "M\xfcller" and "M\xf6ller" are both "M\ufffdller". Every
    comparison with a name a client has is with the name as served (the reference's reading):
    manufacturers lists it once with all its products, its logo is the lowest mfgid served as it,
    and the manufacturer and sku filters and search find every product served with that text."""
    db = make_damaged_text_catalog(tmp_path)
    if prepared:
        db = prepared_copy(binary, db)
    check(binary, db, small_page=3, page=4, sparse=False)
    ref = reference.Catalog(db)
    # The reading this test relies on, not only the engine's agreement with the reference.
    assert [m["name"] for m in ref.manufacturers()] == ["ARRI", "Cooke", "Müller", "M\ufffdller", "X€", "X\ufffd", "\ufffd"]
    assert ref.logo("M\ufffdller") == "moeller.png" and sorted(ref.products_ids(manufacturer="M\ufffdller")) == ["21", "22", "23", "25"]
    assert sorted(ref.products_ids(sku="S\ufffd1")) == ["21", "22", "29"] and len(ref.search_ids("m\ufffdller")) == 4
    assert ref.product(ref.by_keyid[21])["kit"] == ref.product(ref.by_keyid[22])["kit"] != []
    data = Engine(binary, db).run([
        'm: products(filter: {manufacturer: "M\\ufffdller"}) { totalCount nodes { id } }',
        'k: products(filter: {sku: "S\\ufffd1"}) { totalCount nodes { id } }',
        's: search(text: "m\\ufffdller") { totalCount }', 't: search(text: "gr\\ufffdn blau") { nodes { id } }',
        'p: product(id: "22") { manufacturer { name logo productCount } }'])["data"]
    assert data["m"]["totalCount"] == 4 and sorted(n["id"] for n in data["m"]["nodes"]) == ["21", "22", "23", "25"]
    assert data["k"]["totalCount"] == 3 and data["s"]["totalCount"] == 4 and data["t"] == {"nodes": [{"id": "22"}]}
    assert data["p"] == {"manufacturer": {"name": "M\ufffdller", "logo": "moeller.png", "productCount": 4}}


def make_nul_catalog(binary, tmp_path, prepared):
    db = make_catalog(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, description) "
                 "VALUES (2, ?, ?, ?, 1, ?)", ("A\x00B", "Nul\x00name ", "Mk\x00r", "d\x00zzz"))
    conn.execute("INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) "
                 "VALUES (3, 'A', 'Plain A', 'Mk', 1)")
    conn.execute("INSERT INTO Product_Assets VALUES (1, ?, ?, '1')", ("A\x00B", "as\x00set"))
    conn.execute("INSERT INTO Product_Assets VALUES (2, 'A', 'only A', '1')")
    conn.execute("INSERT INTO mfg VALUES (9, ?, ?)", ("Mk\x00r", "lo\x00go"))
    conn.execute("INSERT INTO mfg VALUES (10, 'Mk', 'mk.png')")
    conn.commit()
    conn.close()
    return prepared_copy(binary, db) if prepared else db


@pytest.mark.parametrize("prepared", [False, True])
def test_nul_characters_are_part_of_the_text(binary, tmp_path, prepared):
    """U+0000 inside a stored text is a character like any other (SQLite stores the whole value): it
    is served, and equality sees the whole value (SEMANTICS.md: manufacturer filter "trimmed
    Manufacturer = the given string (exact)", sku "compared as the stored text", kit "kitID =
    product_ID (exact text match)", logo "the mfg row ... whose trimmed manufacturer equals name").
    SQLite 3.40's json_each ends a string at \u0000, so such a value is bound on its own: "A\0B" used
    to find the kit of "A", and "Mk\0r" the count and logo of "Mk". A search word holding a NUL is
    matched whole too (instr)."""
    db = make_nul_catalog(binary, tmp_path, prepared)
    ref = reference.Catalog(db)
    data = Engine(binary, db).run([
        'p: product(id: "2") { ...P }', 'q: product(id: "3") { ...P }',
        'm: products(filter: {manufacturer: "Mk\\u0000r"}) { nodes { id } }',
        'k: products(filter: {sku: "A\\u0000B"}) { nodes { id } }',
        's: search(text: "l\\u0000N") { nodes { id } }', 't: search(text: "k\\u0000") { nodes { id } }',
        "manufacturers { name logo productCount products { totalCount nodes { id } } }"], [PRODUCT])["data"]
    diffs = Diffs()
    diffs.compare('product(id: "2")', ref.product(ref.by_keyid[2]), data["p"])
    diffs.compare('product(id: "3")', ref.product(ref.by_keyid[3]), data["q"])
    diffs.compare('products(filter: {manufacturer: "Mk\\u0000r"})',
                  {"nodes": [{"id": i} for i in ref.products_ids(manufacturer="Mk\x00r")]}, data["m"])
    diffs.compare('products(filter: {sku: "A\\u0000B"})', {"nodes": [{"id": i} for i in ref.products_ids(sku="A\x00B")]},
                  data["k"])
    for alias, text in (("s", "l\x00N"), ("t", "k\x00")):
        diffs.compare(f"search(text: {text!r})", {"nodes": [{"id": i} for i in ref.search_ids(text)]}, data[alias])
    want = ref.manufacturers()
    for m in want:
        ids = ref.products_ids(manufacturer=m["name"])
        m["products"] = {"totalCount": len(ids), "nodes": [{"id": i} for i in ids]}
    diffs.compare("manufacturers", want, data["manufacturers"])
    # The reading this relies on, not only the engine's agreement with the reference.
    assert ref.products_ids(sku="A\x00B") == ["2"] and ref.search_ids("l\x00N") == ["2"]
    assert ref.product(ref.by_keyid[2])["kit"] == [{"id": "1", "name": "as\x00set", "quantity": 1}]
    assert {"name": "Mk\x00r", "logo": "lo\x00go", "productCount": 1} in ref.manufacturers()
    assert not diffs.items, diffs.report()


@pytest.mark.parametrize("prepared", [False, True, "without cg_product_nul_text"])
def test_search_sees_stored_text_past_a_nul(binary, tmp_path, prepared):
    """SEMANTICS.md search: "substring of ... its trimmed Product, description or Manufacturer".
    SQLite's LIKE reads stored text only up to a NUL; the gateway's own test (cg_search_words)
    reads every byte. Prepared, the rows holding a NUL join the trigram index's hits (its tokenizer
    stops at the NUL): from cg_product_nul_text, or by a scan in a catalog prepared before it."""
    db = make_nul_catalog(binary, tmp_path, bool(prepared))
    if prepared == "without cg_product_nul_text":
        conn = sqlite3.connect(db)
        conn.execute("DROP INDEX cg_product_nul_text")
        conn.close()
    ref = reference.Catalog(db)
    texts = ["zzz", "name", "ZzZ NAME", "nul zzz mk"]
    data = Engine(binary, db).run([f"s{i}: search(text: {json.dumps(t)}) {{ nodes {{ id }} }}"
                                   for i, t in enumerate(texts)])["data"]
    diffs = Diffs()
    for i, t in enumerate(texts):
        diffs.compare(f"search(text: {t!r})", {"nodes": [{"id": i} for i in ref.search_ids(t)]}, data[f"s{i}"])
    assert ref.search_ids("zzz") == ["2"] and ref.search_ids("nul zzz mk") == ["2"]
    assert not diffs.items, diffs.report()


@pytest.mark.parametrize("prepared", [False, True])
def test_text_that_differs_only_by_normalization_is_different_text(binary, tmp_path, prepared):
    """Stored text compares exactly (SEMANTICS.md: manufacturer "exact", search "substring"):
    "Caf\u00e9" and "Cafe\u0301" are two manufacturers, each with its own products, count and logo,
    and the search words "K" and "\u212a" (the Kelvin sign) are two words. Swift's String equality
    is canonical equivalence; keyed by it, the two names shared one entry (one logo, one count,
    one product list) and the second search word was dropped as a repeat."""
    nfc, nfd, kelvin = "Caf\u00e9", "Cafe\u0301", "\u212a"
    db = make_catalog(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES "
                 "(11, 'a', 'Kit one', ?, 1), (12, 'b', ?, ?, 1), (13, 'c', 'plain', ?, 1)",
                 (nfc, kelvin + "it two", nfd, nfd))
    conn.execute("INSERT INTO mfg VALUES (901, ?, 'nfc.png'), (902, ?, 'nfd.png')", (nfc, nfd))
    conn.commit()
    conn.close()
    db = prepared_copy(binary, db) if prepared else db
    data = Engine(binary, db).run([
        "manufacturers { name productCount logo products { totalCount nodes { id manufacturer { name logo } } } }",
        f"nfc: products(filter: {{manufacturer: {json.dumps(nfc)}}}) {{ nodes {{ id }} }}",
        f"nfd: products(filter: {{manufacturer: {json.dumps(nfd)}}}) {{ nodes {{ id }} }}",
        f"k: search(text: {json.dumps('K ' + kelvin)}) {{ nodes {{ id }} }}",
        f"e: search(text: {json.dumps(nfc + ' ' + nfd)}) {{ nodes {{ id }} }}",
    ])["data"]
    makers = {m["name"]: m for m in data["manufacturers"]}
    assert makers[nfc] == {"name": nfc, "productCount": 1, "logo": "nfc.png", "products": {
        "totalCount": 1, "nodes": [{"id": "11", "manufacturer": {"name": nfc, "logo": "nfc.png"}}]}}
    assert makers[nfd] == {"name": nfd, "productCount": 2, "logo": "nfd.png", "products": {
        # CATALOG order: "plain" sorts before "\u212ait two" (binary).
        "totalCount": 2, "nodes": [{"id": "13", "manufacturer": {"name": nfd, "logo": "nfd.png"}},
                                   {"id": "12", "manufacturer": {"name": nfd, "logo": "nfd.png"}}]}}
    assert data["nfc"] == {"nodes": [{"id": "11"}]} and data["nfd"] == {"nodes": [{"id": "13"}, {"id": "12"}]}
    # "Kit one" has K, "\u212ait two" has the Kelvin sign; no product has both.
    assert data["k"] == {"nodes": []}
    assert data["e"] == {"nodes": []}


def test_name_order_of_names_holding_a_nul_is_sqlites(binary, tmp_path):
    """NOCASE stops comparing at a NUL in the first value, then compares lengths: "\\0b" and "\\0a"
    collate equal (keyid decides), and "\\0a" sorts before "\\0ab". The reference once compared
    past the NUL; the gateway, SQLite and now the reference agree."""
    db = make_catalog(tmp_path)
    conn = sqlite3.connect(db)
    for keyid, name in ((11, "\x00b"), (12, "\x00a"), (13, "\x00Z"), (14, "\x00ab")):
        conn.execute("INSERT INTO Product_Catalog (keyid, product_ID, Product, description, cat) VALUES (?, ?, ?, 'zz', 1)",
                     (keyid, f"n{keyid}", name))
    conn.commit()
    sqlite_order = [str(r[0]) for r in conn.execute(
        "SELECT keyid FROM Product_Catalog WHERE description = 'zz' ORDER BY Product COLLATE NOCASE, keyid")]
    conn.close()
    assert sqlite_order == ["11", "12", "13", "14"]
    ref = reference.Catalog(db)
    assert ref.search_ids("zz") == sqlite_order
    data = Engine(binary, db).run(['s: search(text: "zz") { nodes { id } }'])["data"]
    assert [n["id"] for n in data["s"]["nodes"]] == sqlite_order
