"""A straightforward reference implementation of the catalog contract
(../shared/contract/SEMANTICS.md) over Python's sqlite3, written from the contract text alone,
for the differential test. Row by row, no cleverness: every answer is computed from the stored
values the way SEMANTICS.md words it.

Stored values are kept exactly as SQLite returns them: int, float, None, Text (a TEXT value, its
raw bytes) or bytes (a BLOB), so that orderings can follow SQLite's binary collation and type order.
"""
import re
import sqlite3

# SEMANTICS.md, General rules: "trimmed" = C isspace in the C locale. U+00A0 is kept.
C_SPACE = " \t\n\x0b\x0c\r"
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1
VIDEO_COLUMNS = [("bracketvid", "BRACKET"), ("dynamicvid", "DYNAMIC_RANGE"),
                 ("colorrendvid", "COLOR_RENDITION"), ("promovid", "PROMO"),
                 ("gscreenvid", "GREEN_SCREEN")]
LETTERS = [chr(c) for c in range(ord("A"), ord("Z") + 1)] + ["#"]


class Text(bytes):
    """A TEXT value as stored (its UTF-8 bytes); plain bytes are BLOBs."""


class ContractError(Exception):
    """An argument the contract says is an error (unknown letter, search without words)."""


def trim(s):
    return s.strip(C_SPACE)


def split_words(text):
    return [w for w in re.split("[" + re.escape(C_SPACE) + "]+", text) if w]


ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def ascii_lower(s):
    return s.translate(ASCII_LOWER)


def nocase_compare(a, b):
    """SQLite's NOCASE collation (nocaseCollatingFunc): sqlite3StrNICmp over the shorter length,
    folding ASCII letters only and stopping at a NUL in the first value, then the lengths. So
    "\0b" and "\0a" collate equal: the comparison never looks past their NULs."""
    fold = ASCII_LOWER_BYTES
    for x, y in zip(a, b):
        if x == 0 or fold[x] != fold[y]:
            r = fold[x] - fold[y]
            return r if r != 0 else len(a) - len(b)
    return len(a) - len(b)


class NocaseText:
    """A TEXT value ordered as COLLATE NOCASE orders it (`nocase_compare`)."""
    __slots__ = ("b",)

    def __init__(self, b):
        self.b = b

    def __eq__(self, other):
        return nocase_compare(self.b, other.b) == 0

    def __lt__(self, other):
        return nocase_compare(self.b, other.b) < 0


ASCII_LOWER_BYTES = bytes(c + 32 if 65 <= c <= 90 else c for c in range(256))


def sort_key(v, nocase=False):
    """SQLite's ordering of stored values: NULL < numbers < TEXT (memcmp or NOCASE) < BLOB."""
    if v is None:
        return (0, 0)
    if isinstance(v, (int, float)):
        return (1, v)
    if isinstance(v, Text):
        return (2, NocaseText(bytes(v)) if nocase else bytes(v))
    return (3, bytes(v))


def sql_eq(a, b):
    """SQLite `=` between two stored values of integer-affinity columns (no conversion)."""
    if a is None or b is None:
        return False
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Text) and isinstance(b, Text):
        return bytes(a) == bytes(b)
    if type(a) is bytes and type(b) is bytes:
        return a == b
    return False


def parse_id(value):
    """An ID argument compared with an integer column: "05" finds 5; a non-integer finds nothing."""
    if isinstance(value, int):
        return value
    if re.fullmatch(r"[+-]?[0-9]+", value):
        return int(value)
    return None


class Catalog:
    def __init__(self, path):
        self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.conn.text_factory = Text
        self.product_columns = self._columns("Product_Catalog")
        self.template_columns = self._columns("DetailsKeyValues")
        self.products = self._rows(
            "SELECT *, CAST(displayorder AS INTEGER) AS \"__displayorder\" FROM Product_Catalog ORDER BY keyid")
        self.by_keyid = {r["keyid"]: r for r in self.products}
        self.hierarchy = self._rows(
            "SELECT *, CAST(level AS INTEGER) AS \"__level\" FROM hierarchy ORDER BY id")
        self.by_hid = {r["id"]: r for r in self.hierarchy}
        self.assets = self._rows(
            "SELECT *, CAST(kitQTY AS INTEGER) AS \"__qty\" FROM Product_Assets ORDER BY assetID")
        self.templates = self._rows("SELECT * FROM DetailsKeyValues")
        self.mfg = self._rows("SELECT * FROM mfg ORDER BY mfgid")
        self.versions = self._rows("SELECT * FROM version ORDER BY versionid")
        self.image_columns = [c for c in self.product_columns if re.fullmatch(r"display_Image[0-9]+", c)]
        self.spec_letters = [x for x in "abcdefghijklmnopqrstuvwxyz"
                             if f"info_spec_{x}" in self.product_columns and f"spec_{x}" in self.template_columns]
        self._text_cache = {}
        # per-row values the filters read many times, computed once
        for r in self.products:
            r["__manufacturer"] = self.trimmed(r["Manufacturer"])
            r["__sku"] = self.text(r["product_ID"])
            r["__search"] = [ascii_lower(t) for t in (self.trimmed(r["Product"]), self.trimmed(r["description"]),
                                                      r["__manufacturer"]) if t is not None]
        self.kits = {}
        for a in self.assets:
            if isinstance(a["kitID"], Text):
                self.kits.setdefault(self.text(a["kitID"]), []).append(a)

    def _columns(self, table):
        return [r[1].decode() if isinstance(r[1], bytes) else r[1]
                for r in self.conn.execute(f'PRAGMA table_info("{table}")')]

    def _rows(self, sql):
        cur = self.conn.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur]

    # ---- values -------------------------------------------------------------------------------

    def text(self, v):
        """The stored value as text (SQLite CAST(x AS TEXT)), None for NULL. Not trimmed."""
        if v is None:
            return None
        if isinstance(v, bool):
            raise TypeError(v)
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            if v not in self._text_cache:
                self._text_cache[v] = self.conn.execute("SELECT CAST(? AS TEXT)", (v,)).fetchone()[0].decode()
            return self._text_cache[v]
        return bytes(v).decode("utf-8", errors="replace")

    def trimmed(self, v):
        """Every text value served is trimmed; NULL stays None."""
        t = self.text(v)
        return None if t is None else trim(t)

    def nullable(self, v):
        """A nullable String: null when NULL or it trims to ""."""
        t = self.trimmed(v)
        return t if t else None

    def non_null(self, v):
        t = self.trimmed(v)
        return "" if t is None else t

    @staticmethod
    def stored_int(v, cast):
        """An integer field: null where the stored value is NULL or '', else CAST(x AS INTEGER)."""
        if v is None or (isinstance(v, Text) and len(v) == 0):
            return None
        return cast

    # ---- catalogVersion ----------------------------------------------------------------------

    def catalog_version(self):
        if not self.versions:
            return {"version": 0, "catalogRow": None, "assetRow": None}
        row = max(self.versions, key=lambda r: r["versionid"])

        def int32(v):
            if isinstance(v, int) and not isinstance(v, bool):
                n = v
            elif isinstance(v, Text) and re.fullmatch(rb"[0-9]+", bytes(v)):
                n = int(bytes(v))
            else:
                return None
            return n if INT32_MIN <= n <= INT32_MAX else None

        return {"version": row["versionid"], "catalogRow": int32(row["updatecatalogrow"]),
                "assetRow": int32(row["updateassetrow"])}

    # ---- categories --------------------------------------------------------------------------

    def categories(self):
        return [r["id"] for r in self.hierarchy if sql_eq(r["parent"], 0)]

    def parent_row(self, row):
        p = row["parent"]
        if sql_eq(p, 0):
            return None
        for r in self.hierarchy:
            if sql_eq(r["id"], p):
                return r
        return None

    def children(self, cid):
        return [r["id"] for r in self.hierarchy if sql_eq(r["parent"], cid)]

    def path(self, row):
        chain = [row["id"]]
        cur = row
        while True:
            parent = self.parent_row(cur)
            if parent is None or parent["id"] in chain:
                break
            chain.insert(0, parent["id"])
            cur = parent
        return chain

    def descendants(self, cid):
        """id itself plus every row reachable downward by parent links, each once."""
        seen = {cid}
        queue = [cid]
        while queue:
            x = queue.pop()
            for r in self.hierarchy:
                if sql_eq(r["parent"], x) and r["id"] not in seen:
                    seen.add(r["id"])
                    queue.append(r["id"])
        return seen

    def category(self, row):
        """Category fields as the test selects them."""
        parent = self.parent_row(row)
        return {
            "id": str(row["id"]),
            "title": self.non_null(row["menu_title"]),
            "icon": self.nullable(row["menu_icon"]),
            "level": self.stored_int(row["level"], row["__level"]),
            "parent": None if parent is None else {"id": str(parent["id"])},
            "children": [{"id": str(c)} for c in self.children(row["id"])],
            "path": [{"id": str(c)} for c in self.path(row)],
            "productCount": len(self.filter_products(category_id=row["id"])),
            "allCount": len(self.filter_products(category_id=row["id"], include_descendants=True)),
        }

    # ---- products ----------------------------------------------------------------------------

    def name(self, row):
        return self.non_null(row["Product"])

    def initial(self, row):
        name = self.name(row)
        if name and ("A" <= name[0] <= "Z" or "a" <= name[0] <= "z"):
            return name[0].upper()
        return "#"

    def manufacturer_name(self, row):
        t = row["__manufacturer"]
        return t if t else None

    def filter_products(self, category_id=None, include_descendants=False, manufacturer=None, sku=None,
                        letter=None):
        rows = self.products
        if category_id is not None:
            n = parse_id(category_id)
            if n is None:
                return []
            ids = self.descendants(n) if include_descendants else {n}
            rows = [r for r in rows if isinstance(r["cat"], (int, float)) and r["cat"] in ids]
        if manufacturer is not None:
            rows = [r for r in rows if r["__manufacturer"] == manufacturer]
        if sku is not None:
            rows = [r for r in rows if r["__sku"] == sku]
        if letter is not None:
            if letter not in LETTERS:
                raise ContractError(f"unknown letter {letter!r}")
            rows = [r for r in rows if self.initial(r) == letter]
        return rows

    @staticmethod
    def order(rows, order_by="CATALOG"):
        if order_by == "CATALOG":
            key = lambda r: (sort_key(r["Manufacturer"]), sort_key(r["displayorder"]), sort_key(r["Product"]),
                             r["keyid"])
            return sorted(rows, key=key)
        if order_by == "NAME":
            return sorted(rows, key=lambda r: (sort_key(r["Product"], nocase=True), r["keyid"]))
        if order_by == "NEWEST":
            return sorted(rows, key=lambda r: r["keyid"], reverse=True)
        raise ValueError(order_by)

    def products_ids(self, order_by="CATALOG", **filters):
        return [str(r["keyid"]) for r in self.order(self.filter_products(**filters), order_by)]

    def search_ids(self, text):
        words = split_words(text)
        if not words:
            raise ContractError("search without words")
        words = [ascii_lower(w) for w in words]
        hits = []
        for r in self.products:
            # each word within one of the trimmed Product, description, Manufacturer
            if all(any(w in f for f in r["__search"]) for w in words):
                hits.append(r)
        return [str(r["keyid"]) for r in self.order(hits, "NAME")]

    def template(self, row):
        key = self.trimmed(row["info_DetailsKey"])
        if key is None or not re.fullmatch(r"[+-]?[0-9]+", key):
            return None
        n = int(key)
        found = [t for t in self.templates if sql_eq(t["DetailsKey"], n)]
        return found[0] if len(found) == 1 else None

    def specs(self, row):
        template = self.template(row)
        if template is None:
            return []
        out = []
        for x in self.spec_letters:
            stored = self.text(template[f"spec_{x}"])
            label = "" if stored is None else trim(stored[1:])
            value = self.trimmed(row[f"info_spec_{x}"]) or ""
            if label and value:
                out.append({"key": x, "label": label, "value": value})
        return out

    def kit(self, row):
        """Product_Assets rows whose (text) kitID is product_ID as text, by assetID."""
        if row["product_ID"] is None:
            return []
        return [{"id": str(a["assetID"]), "name": self.non_null(a["asset"]), "quantity": a["__qty"]}
                for a in self.kits.get(row["__sku"], [])]

    def product(self, row):
        m = self.manufacturer_name(row)
        cat = None
        for h in self.hierarchy:
            if sql_eq(h["id"], row["cat"]):
                cat = {"id": str(h["id"])}
                break
        return {
            "id": str(row["keyid"]),
            "sku": self.non_null(row["product_ID"]),
            "name": self.name(row),
            "manufacturer": None if m is None else {"name": m, "logo": self.logo(m),
                                                    "productCount": len(self.filter_products(manufacturer=m))},
            "category": cat,
            "displayOrder": self.stored_int(row["displayorder"], row["__displayorder"]),
            "thumbnail": self.nullable(row["display_Thumbnail"]),
            "images": [t for t in (self.trimmed(row[c]) for c in self.image_columns) if t],
            "videos": [{"kind": kind, "url": t} for col, kind in VIDEO_COLUMNS
                       for t in [self.trimmed(row[col])] if t],
            "panoramaUrl": self.nullable(row["panorama"]),
            "description": self.nullable(row["description"]),
            "specs": self.specs(row),
            "kit": self.kit(row),
        }

    # ---- alphabet, manufacturers -------------------------------------------------------------

    def alphabet(self):
        counts = {}
        for r in self.products:
            counts[self.initial(r)] = counts.get(self.initial(r), 0) + 1
        return [{"letter": l, "count": counts[l]} for l in LETTERS if counts.get(l)]

    def logo(self, name):
        for m in self.mfg:  # ordered by mfgid
            if self.trimmed(m["manufacturer"]) == name:
                return self.nullable(m["logo"])
        return None

    def manufacturer_names(self):
        names = {self.manufacturer_name(r) for r in self.products} - {None}
        return sorted(names, key=lambda s: s.encode("utf-8", errors="surrogatepass"))

    def manufacturers(self):
        return [{"name": n, "logo": self.logo(n), "productCount": len(self.filter_products(manufacturer=n))}
                for n in self.manufacturer_names()]
