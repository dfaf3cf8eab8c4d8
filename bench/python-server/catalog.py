"""The catalog contract (../../schema.graphql, SEMANTICS.md) as graphql-core resolvers over sqlite3.

Per-field resolvers issue SQL on one read-only connection; each operation runs inside one read
transaction. The products of a page are batched DataLoader-style: the first product of a page
that needs its kit, spec template or manufacturer logo loads them for the whole page in one
statement. The catalog's own tables are never written; the gateway's `cg_` indexes (created by
`catalog-gateway prepare`) are used where present, and search narrows through its `cg_search`
trigram index when the catalog has one.
"""
import base64
import json
import re
import sqlite3
import struct

from graphql import GraphQLError

# SEMANTICS.md, General rules: "trimmed" = C isspace in the C locale (U+00A0 is kept).
SPACE = " \t\n\x0b\x0c\r"
SQL_SPACE = "char(32,9,10,13,11,12)"
LETTERS = [chr(c) for c in range(ord("A"), ord("Z") + 1)] + ["#"]
VIDEO_COLUMNS = [("bracketvid", "BRACKET"), ("dynamicvid", "DYNAMIC_RANGE"), ("colorrendvid", "COLOR_RENDITION"),
                 ("promovid", "PROMO"), ("gscreenvid", "GREEN_SCREEN")]
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
DEFAULT_FIRST, MAX_FIRST = 50, 100
INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
# SQLite refuses LIKE patterns longer than this (SQLITE_MAX_LIKE_PATTERN_LENGTH, bytes).
MAX_LIKE_PATTERN_BYTES = 50_000
# More search words than this are read from one JSON array instead of one condition each.
MAX_INLINE_WORDS = 8

ORDER_SQL = {
    "CATALOG": 'p."Manufacturer", p."displayorder", p."Product", p."keyid"',
    "NAME": 'p."Product" COLLATE NOCASE, p."keyid"',
    "NEWEST": 'p."keyid" DESC',
}
INITIAL_SQL = (f'(CASE WHEN upper(substr(trim(p."Product", {SQL_SPACE}), 1, 1)) BETWEEN \'A\' AND \'Z\' '
               f'THEN upper(substr(trim(p."Product", {SQL_SPACE}), 1, 1)) ELSE \'#\' END)')
TRIMMED_MANUFACTURER_SQL = f'trim(p."Manufacturer", {SQL_SPACE})'


def trimmed(text):
    """A non-null String: the trimmed text, "" for NULL."""
    return "" if text is None else text.strip(SPACE)


def nullable(text):
    """A nullable String: null when NULL or it trims to ""."""
    if text is None:
        return None
    return text.strip(SPACE) or None


def parse_id(value):
    """An ID compared with an integer column ("05" finds 5), or None when it is not an integer."""
    if isinstance(value, int):
        return value
    if not INTEGER_TEXT.fullmatch(value):
        return None
    n = int(value)
    return n if INT64_MIN <= n <= INT64_MAX else None


def split_words(text):
    return [w for w in re.split("[" + re.escape(SPACE) + "]+", text) if w]


def int32(value):
    """catalogVersion's row numbers: an integer, or a text of plain digits, that fits an Int."""
    if isinstance(value, int):
        n = value
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        n = int(value)
    else:
        return None
    return n if INT32_MIN <= n <= INT32_MAX else None


# ---- cursors: base64 of the row's sort key, the gateway's own format (Cursor.swift) ----------
# "K1", the order (C, N, W), then per value: n (NULL), i / r and 8 bytes big-endian, t / b and a
# LEB128 length and the bytes. Text values are kept as the stored bytes: ("t", b"..").

ORDER_TAGS = {"CATALOG": b"C", "NAME": b"N", "NEWEST": b"W"}
SORT_COLUMNS = {
    "CATALOG": ['p."Manufacturer"', 'p."displayorder"', 'p."Product"', 'p."keyid"'],
    "NAME": ['p."Product"', 'p."keyid"'],
    "NEWEST": ['p."keyid"'],
}
MAX_CURSOR_LENGTH = 8192
# Texts and blobs longer than this are kept as their first this-many bytes, tagged T / B.
MAX_VALUE_BYTES = 1024


def encode_cursor(order, values):
    out = bytearray(b"K1" + ORDER_TAGS[order])
    for v in values:
        if v is None:
            out += b"n"
        elif isinstance(v, int):
            out += b"i" + struct.pack(">q", v)
        elif isinstance(v, float):
            out += b"r" + struct.pack(">d", v)
        else:
            tag, data = v[0], v[1]
            if len(data) > MAX_VALUE_BYTES or (len(v) > 2 and v[2]):
                tag, data = tag.upper(), data[:MAX_VALUE_BYTES]
            out += tag.encode()
            n = len(data)
            while True:
                out.append((n & 0x7F) | (0x80 if n >= 0x80 else 0))
                n >>= 7
                if not n:
                    break
            out += data
    return base64.b64encode(bytes(out)).decode()


def decode_cursor(cursor, order):
    """The sort values a cursor of `order` holds; a GraphQLError when it is not one of ours."""
    def invalid():
        return GraphQLError(f"Invalid cursor: {cursor!r}")
    try:
        if len(cursor) > MAX_CURSOR_LENGTH:
            raise ValueError
        data = base64.b64decode(cursor, validate=True)
    except ValueError:
        raise invalid()
    if data[:3] != b"K1" + ORDER_TAGS[order]:
        raise invalid()
    at, values = 3, []
    try:
        while at < len(data):
            tag = data[at:at + 1]
            at += 1
            if tag == b"n":
                values.append(None)
            elif tag in (b"i", b"r"):
                if len(data) - at < 8:
                    raise ValueError
                values.append(struct.unpack(">q" if tag == b"i" else ">d", data[at:at + 8])[0])
                at += 8
            elif tag in (b"t", b"b", b"T", b"B"):
                n, shift = 0, 0
                while True:
                    if shift >= 28:
                        raise ValueError
                    b = data[at]
                    at += 1
                    n |= (b & 0x7F) << shift
                    shift += 7
                    if not b & 0x80:
                        break
                if len(data) - at < n:
                    raise ValueError
                if tag in (b"T", b"B") and n != MAX_VALUE_BYTES:
                    raise ValueError
                # A cut value: (kind, first bytes, True); ProductConnection completes it.
                values.append((tag.decode().lower(), data[at:at + n]) + ((True,) if tag in (b"T", b"B") else ()))
                at += n
            else:
                raise ValueError
    except (ValueError, IndexError):
        raise invalid()
    if (len(values) != len(SORT_COLUMNS[order]) or type(values[-1]) is not int
            or encode_cursor(order, values) != cursor):
        raise invalid()
    return values


def after_condition(order, values):
    """SQL for "the row sorts after these values" in `order`, and its bound values (texts as
    blobs read back with CAST AS TEXT, so their bytes stay exactly as stored)."""
    columns = SORT_COLUMNS[order]
    if order == "NEWEST":
        return 'p."keyid" < ?', [values[0]]
    binds = []

    def operand(v):
        if isinstance(v, tuple):
            binds.append(v[1])
            return "CAST(? AS TEXT)" if v[0] == "t" else "?"
        binds.append(v)
        return "?"

    def condition(i):
        column, v = columns[i], values[i]
        if i == len(columns) - 1:
            return f"{column} > {operand(v)}"
        collate = " COLLATE NOCASE" if order == "NAME" and column == 'p."Product"' else ""
        greater = f"{column} IS NOT NULL" if v is None else f"{column} > {operand(v)}{collate}"
        equal = f"{column} IS NULL" if v is None else f"{column} = {operand(v)}{collate}"
        return f"({greater} OR ({equal} AND {condition(i + 1)}))"
    return condition(0), binds


def page_size(first):
    """A connection's `first`; explicit null means the default."""
    first = DEFAULT_FIRST if first is None else first
    if not 0 <= first <= MAX_FIRST:
        raise GraphQLError(f"first must be between 0 and {MAX_FIRST}, got {first}")
    return first


# ---- the database ---------------------------------------------------------------------------

class Catalog:
    """The catalog file: one read-only connection for queries and what the tables look like."""

    def __init__(self, path):
        self.path = path
        self.conn = open_read_only(path)
        product_columns = self.columns("Product_Catalog")
        template_columns = self.columns("DetailsKeyValues")
        self.image_columns = [c for c in product_columns if re.fullmatch(r"display_Image[0-9]+", c)]
        self.spec_letters = [x for x in "abcdefghijklmnopqrstuvwxyz"
                             if f"info_spec_{x}" in product_columns and f"spec_{x}" in template_columns]
        self.has_search_index = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cg_search'").fetchone() is not None
        text = lambda c: f'CAST(p."{c}" AS TEXT) AS "{c}"'  # noqa: E731
        columns = ['p."keyid" AS keyid', 'CAST(p."product_ID" AS TEXT) AS product_ID', text("Product"),
                   text("Manufacturer"), 'p."cat" AS cat',
                   'CASE WHEN p."displayorder" IS NULL OR p."displayorder" = \'\' THEN NULL '
                   'ELSE CAST(p."displayorder" AS INTEGER) END AS displayorder',
                   text("display_Thumbnail"), text("panorama"), text("description"), text("info_DetailsKey")]
        columns += [text(c) for c in self.image_columns]
        columns += [text(c) for c, _ in VIDEO_COLUMNS]
        columns += [text(f"info_spec_{x}") for x in self.spec_letters]
        self.product_columns_sql = ", ".join(columns)
        self.template_sql = ('SELECT "DetailsKey", ' + ", ".join(
            f'CAST("spec_{x}" AS TEXT) AS "spec_{x}"' for x in self.spec_letters) + ' FROM "DetailsKeyValues" '
            'WHERE "DetailsKey" IN (SELECT value FROM json_each(?))') if self.spec_letters else None

    def columns(self, table):
        return [r[1] for r in self.conn.execute(f'PRAGMA table_info("{table}")')]


def open_read_only(path):
    """A read-only connection (the catalog's tables are never written), waiting up to 5 s for a
    writer's lock, rows addressable by column name, transactions issued explicitly, with the
    gateway's page cache size."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA cache_size = -65536")  # 64 MiB, the gateway's page cache per connection
    return conn


def read_catalog_version(conn):
    row = conn.execute('SELECT "versionid", "updatecatalogrow", "updateassetrow" FROM "version" '
                       'ORDER BY "versionid" DESC LIMIT 1').fetchone()
    if row is None:
        return {"version": 0, "catalogRow": None, "assetRow": None}
    return {"version": row[0], "catalogRow": int32(row[1]), "assetRow": int32(row[2])}


class Request:
    """One operation's context: the catalog, a read transaction and per-operation caches."""

    def __init__(self, catalog, hub=None):
        self.catalog = catalog
        self.conn = catalog.conn
        self.hub = hub
        self.categories = {}
        self.logos = {}

    def __enter__(self):
        self.conn.execute("BEGIN")
        return self

    def __exit__(self, *exc):
        self.conn.execute("COMMIT")

    def all(self, sql, binds=()):
        return self.conn.execute(sql, binds).fetchall()

    def one(self, sql, binds=()):
        return self.conn.execute(sql, binds).fetchone()

    # -- categories --

    def category(self, cid):
        if cid is None:
            return None
        if cid not in self.categories:
            self.categories[cid] = self.one(CATEGORY_SQL + ' WHERE "id" = ?', (cid,))
        return self.categories[cid]

    def descendants(self, cid):
        """cid itself and every category reachable downward by parent links, each once."""
        return [r[0] for r in self.all(
            'WITH RECURSIVE d(id) AS (SELECT ? UNION SELECT h."id" FROM "hierarchy" h JOIN d ON h."parent" = d.id) '
            'SELECT id FROM d', (cid,))]

    # -- manufacturers --

    def logo(self, name, names):
        """The logo of `name`, loading those of `names` (its page's) in the same statement."""
        if name not in self.logos:
            wanted = [n for n in names if n not in self.logos]
            for n in wanted:
                self.logos[n] = None
            rows = self.all(f'SELECT trim("manufacturer", {SQL_SPACE}), CAST("logo" AS TEXT) FROM "mfg" '
                            f'WHERE trim("manufacturer", {SQL_SPACE}) IN (SELECT value FROM json_each(?)) '
                            f'ORDER BY "mfgid" DESC', (json.dumps(wanted),))
            for n, logo in rows:  # the lowest mfgid is written last
                self.logos[n] = nullable(logo)
        return self.logos[name]


CATEGORY_SQL = ('SELECT "id", CAST("menu_title" AS TEXT) AS title, CAST("menu_icon" AS TEXT) AS icon, '
                'CASE WHEN "level" IS NULL OR "level" = \'\' THEN NULL ELSE CAST("level" AS INTEGER) END AS level, '
                '"parent" FROM "hierarchy"')


# ---- product sets and connections -----------------------------------------------------------

class ProductSet:
    """Which products a list holds: FROM and WHERE clauses with their bound values."""

    def __init__(self, catalog):
        self.catalog = catalog
        self.source = ' FROM "Product_Catalog" p'
        self.conditions = []
        self.binds = []
        self.search = False

    def where(self, condition, *binds):
        self.conditions.append(condition)
        self.binds.extend(binds)
        return self

    def sql(self):
        return self.source + (" WHERE " + " AND ".join(self.conditions) if self.conditions else "")

    def categories(self, cats):
        if len(cats) == 1:
            return self.where('p."cat" = ?', cats[0])
        return self.where('p."cat" IN (SELECT value FROM json_each(?))', json.dumps(cats))

    def nothing(self):
        return self.where("0")

    def manufacturer(self, name):
        return self.where(f"{TRIMMED_MANUFACTURER_SQL} = ?", name)

    def sku(self, sku):
        # The stored value as text (the gateway's cg_product_sku index): REAL and BLOB ids too.
        return self.where('CAST(p."product_ID" AS TEXT) = ?', sku)

    def letter(self, letter):
        if letter not in LETTERS:
            raise GraphQLError(f'letter must be one of "A" to "Z" or "#", got {letter!r}')
        return self.where(f"{INITIAL_SQL} = ?", letter)

    def words(self, text):
        """Every word a case-insensitive (ASCII) literal substring of the trimmed name,
        description or manufacturer."""
        words = split_words(text)
        if not words:
            raise GraphQLError("search text must contain at least one word")
        self.search = True
        if self.catalog.has_search_index:
            # The trigram index only narrows (its case folding covers ASCII); LIKE decides.
            usable = sorted((w for w in words if len(w) >= 3 and len(w.encode()) <= 256), key=len, reverse=True)[:8]
            if usable:
                match = " AND ".join('"' + w.replace('"', '""') + '"' for w in usable)
                self.source = (' FROM (SELECT rowid AS hit FROM cg_search WHERE cg_search MATCH ?) AS hits '
                               'CROSS JOIN "Product_Catalog" p ON p."keyid" = hits.hit')
                self.binds.insert(0, match)
        patterns = []
        for w in words:
            pattern = "%" + re.sub(r"([%_\\])", r"\\\1", w) + "%"
            if len(pattern.encode()) > MAX_LIKE_PATTERN_BYTES:
                # lower() folds ASCII only, as LIKE does; instr() takes the word literally.
                self.where('(instr(lower(CAST(p."Product" AS TEXT)), lower(?)) > 0 '
                           'OR instr(lower(CAST(p."description" AS TEXT)), lower(?)) > 0 '
                           'OR instr(lower(CAST(p."Manufacturer" AS TEXT)), lower(?)) > 0)', w, w, w)
            else:
                patterns.append(pattern)
        if len(patterns) <= MAX_INLINE_WORDS:
            for pattern in patterns:
                self.where('(CAST(p."Product" AS TEXT) LIKE ? ESCAPE \'\\\' '
                           'OR CAST(p."description" AS TEXT) LIKE ? ESCAPE \'\\\' '
                           'OR CAST(p."Manufacturer" AS TEXT) LIKE ? ESCAPE \'\\\')', pattern, pattern, pattern)
        else:
            self.where('NOT EXISTS (SELECT 1 FROM json_each(?) w WHERE NOT ('
                       'ifnull(CAST(p."Product" AS TEXT), \'\') LIKE w.value ESCAPE \'\\\' OR '
                       'ifnull(CAST(p."description" AS TEXT), \'\') LIKE w.value ESCAPE \'\\\' OR '
                       'ifnull(CAST(p."Manufacturer" AS TEXT), \'\') LIKE w.value ESCAPE \'\\\'))',
                       json.dumps(patterns))
        return self


def category_set(req, cid, include_descendants):
    s = ProductSet(req.catalog)
    if cid is None:
        return s.nothing()
    return s.categories(req.descendants(cid) if include_descendants else [cid])


class ProductConnection:
    """One page of a product list; its count and rows are read only when selected."""

    def __init__(self, req, products, order, first, after):
        self.req = req
        self.set = products
        self.order = "CATALOG" if order is None else order
        self.first = page_size(first)
        self.after = None if after is None else self._complete(decode_cursor(after, self.order))
        self.after_given = after is not None
        self._total = None
        self._page = None
        self._has_next = False
        self._matches = None
        self._cursors = None

    def _complete(self, values):
        """Cut values read whole from the cursor's row when it still starts so (Cursor.swift)."""
        if not any(isinstance(v, tuple) and len(v) > 2 for v in values):
            return values
        row = self.req.one('SELECT typeof(p."Manufacturer"), CAST(p."Manufacturer" AS BLOB), typeof(p."displayorder"), '
                           'CAST(p."displayorder" AS BLOB), typeof(p."Product"), CAST(p."Product" AS BLOB) '
                           'FROM "Product_Catalog" p WHERE p."keyid" = ?', (values[-1],))
        out = []
        for i, v in enumerate(values):
            if isinstance(v, tuple) and len(v) > 2:
                column = 2 if self.order == "NAME" else i
                kind = {"text": "t", "blob": "b"}.get(row[2 * column]) if row else None
                whole = row[2 * column + 1] if row else None
                v = (v[0], whole) if kind == v[0] and whole.startswith(v[1]) else (v[0], v[1])
            out.append(v)
        return out

    def matches(self):
        """Search: every match's keyid in order, read once for both the count and the first page."""
        if self._matches is None:
            self._matches = [r[0] for r in self.req.all(
                'SELECT p."keyid"' + self.set.sql() + " ORDER BY " + ORDER_SQL[self.order], self.set.binds)]
        return self._matches

    def total(self):
        if self._total is None:
            if self.set.search:
                self._total = len(self.matches())
            else:
                self._total = self.req.one("SELECT count(*)" + self.set.sql(), self.set.binds)[0]
        return self._total

    def _where_after(self):
        """The set's FROM/WHERE with the after-cursor condition last, and all its bound values."""
        if self.after is None:
            return self.set.sql(), list(self.set.binds)
        condition, binds = after_condition(self.order, self.after)
        sql = self.set.sql() + (" AND " if self.set.conditions else " WHERE ") + condition
        return sql, list(self.set.binds) + binds

    def page(self):
        if self._page is None:
            columns = self.req.catalog.product_columns_sql
            where, binds = self._where_after()
            if self.set.search:
                if self.after is None:
                    ids = self.matches()[:self.first + 1]
                else:
                    ids = [r[0] for r in self.req.all(
                        f'SELECT p."keyid"{where} ORDER BY {ORDER_SQL[self.order]} LIMIT ?', binds + [self.first + 1])]
                self._has_next = len(ids) > self.first
                ids = ids[:self.first]
                rows = {r["keyid"]: r for r in self.req.all(
                    f'SELECT {columns} FROM "Product_Catalog" p WHERE p."keyid" IN (SELECT value FROM json_each(?))',
                    (json.dumps(ids),))}
                rows = [rows[i] for i in ids if i in rows]
            else:
                rows = self.req.all(f"SELECT {columns}{where} ORDER BY {ORDER_SQL[self.order]} LIMIT ?",
                                    binds + [self.first + 1])
                self._has_next = len(rows) > self.first
                rows = rows[:self.first]
            self._keyids = [r["keyid"] for r in rows]
            self._page = Page(self.req, rows).products
        return self._page

    def cursors(self):
        """Every row's cursor: its sort values read by keyid (a NEWEST key is the keyid)."""
        if self._cursors is None:
            self.page()
            stored = {}
            if self.order != "NEWEST" and self._keyids:
                for r in self.req.all(
                        'SELECT p."keyid", ' + ", ".join(
                            f"typeof({c}), CAST({c} AS BLOB), {c}" for c in ('p."Manufacturer"', 'p."displayorder"', 'p."Product"'))
                        + ' FROM "Product_Catalog" p WHERE p."keyid" IN (SELECT value FROM json_each(?))',
                        (json.dumps(self._keyids),)):
                    values = []
                    for k in range(3):
                        kind, raw, value = r[1 + 3 * k], r[2 + 3 * k], r[3 + 3 * k]
                        values.append(("t", raw) if kind == "text" else ("b", raw) if kind == "blob" else value)
                    stored[r[0]] = values
            keys = {"NEWEST": lambda k, v: [k], "NAME": lambda k, v: [v[2], k], "CATALOG": lambda k, v: v + [k]}
            self._cursors = [encode_cursor(self.order, keys[self.order](k, stored.get(k, [None, None, None])))
                             for k in self._keyids]
        return self._cursors

    def page_info(self):
        page = self.page()
        cursors = self.cursors() if page else []
        return {"hasNextPage": self._has_next, "hasPreviousPage": self.after_given,
                "startCursor": cursors[0] if page else None,
                "endCursor": cursors[-1] if page else None}

    def edges(self):
        return [{"cursor": c, "node": p} for c, p in zip(self.cursors(), self.page())]


class Page:
    """Products read together: their kits, spec templates and logos are loaded together."""

    def __init__(self, req, rows):
        self.req = req
        self.products = [Product(r, self) for r in rows]
        self._kits = None
        self._templates = None
        self._names = None

    def kit(self, sku):
        if self._kits is None:
            self._kits = {}
            skus = sorted({p.row["product_ID"] for p in self.products if p.row["product_ID"] is not None})
            for r in self.req.all('SELECT "kitID", "assetID", CAST("asset" AS TEXT), CAST("kitQTY" AS INTEGER) '
                                  'FROM "Product_Assets" WHERE "kitID" IN (SELECT value FROM json_each(?)) '
                                  'ORDER BY "kitID", "assetID"', (json.dumps(skus),)):
                self._kits.setdefault(r[0], []).append({"id": str(r[1]), "name": trimmed(r[2]), "quantity": r[3]})
        return self._kits.get(sku, [])

    def template(self, key):
        if self._templates is None:
            self._templates = {}
            keys = sorted({k for k in (template_key(p.row) for p in self.products) if k is not None})
            if keys and self.req.catalog.template_sql:
                for r in self.req.all(self.req.catalog.template_sql, (json.dumps(keys),)):
                    self._templates[r[0]] = r
        return self._templates.get(key)

    def manufacturer_names(self):
        if self._names is None:
            self._names = sorted({n for n in (nullable(p.row["Manufacturer"]) for p in self.products) if n})
        return self._names


def template_key(row):
    key = trimmed(row["info_DetailsKey"])
    if not INTEGER_TEXT.fullmatch(key):
        return None
    n = int(key)
    return n if INT64_MIN <= n <= INT64_MAX else None


class Product:
    __slots__ = ("row", "page")

    def __init__(self, row, page):
        self.row = row
        self.page = page


class Manufacturer:
    __slots__ = ("name", "group")

    def __init__(self, name, group):
        self.name = name
        self.group = group  # the names whose logos are loaded together with this one


def product_by_id(req, pid):
    if pid is None:
        return None
    rows = req.all(f'SELECT {req.catalog.product_columns_sql} FROM "Product_Catalog" p WHERE p."keyid" = ?', (pid,))
    return Page(req, rows).products[0] if rows else None


# ---- resolvers ------------------------------------------------------------------------------

def ctx(info):
    return info.context


def q_catalog_version(_, info):
    return read_catalog_version(ctx(info).conn)


def q_categories(_, info):
    return ctx(info).all(CATEGORY_SQL + ' WHERE "parent" = 0 ORDER BY "id"')


def q_category(_, info, id):
    return ctx(info).category(parse_id(id))


def q_product(_, info, id):
    return product_by_id(ctx(info), parse_id(id))


def q_products(_, info, filter=None, orderBy=None, first=None, after=None):
    req = ctx(info)
    s = ProductSet(req.catalog)
    f = filter or {}
    if f.get("categoryId") is not None:
        cid = parse_id(f["categoryId"])
        if cid is None:
            s.nothing()
        else:
            s.categories(req.descendants(cid) if f.get("includeDescendants") else [cid])
    if f.get("manufacturer") is not None:
        s.manufacturer(f["manufacturer"])
    if f.get("sku") is not None:
        s.sku(f["sku"])
    if f.get("letter") is not None:
        s.letter(f["letter"])
    return ProductConnection(req, s, orderBy, first, after)


def q_search(_, info, text, first=None, after=None):
    req = ctx(info)
    return ProductConnection(req, ProductSet(req.catalog).words(text), "NAME", first, after)


def q_alphabet(_, info):
    counts = dict(ctx(info).all(f'SELECT {INITIAL_SQL} AS initial, count(*) FROM "Product_Catalog" p GROUP BY initial'))
    return [{"letter": l, "count": counts[l]} for l in LETTERS if counts.get(l)]


def q_manufacturers(_, info):
    names = [r[0] for r in ctx(info).all(
        f'SELECT DISTINCT {TRIMMED_MANUFACTURER_SQL} AS name FROM "Product_Catalog" p WHERE name <> \'\' ORDER BY name')]
    return [Manufacturer(n, names) for n in names]


def not_served(*_, **__):
    raise GraphQLError("catalogChanges is not served by this server (bench/python-server/README.md)",
                       extensions={"code": "NOT_IMPLEMENTED"})


def c_parent(row, info):
    p = row["parent"]
    if p == 0:
        return None
    return ctx(info).category(p if isinstance(p, int) else None)


def c_children(row, info):
    return ctx(info).all(CATEGORY_SQL + ' WHERE "parent" = ? ORDER BY "id"', (row["id"],))


def c_path(row, info):
    req = ctx(info)
    chain = [row]
    seen = {row["id"]}
    while True:
        p = chain[0]["parent"]
        parent = None if p == 0 or not isinstance(p, int) else req.category(p)
        if parent is None or parent["id"] in seen:
            return chain
        seen.add(parent["id"])
        chain.insert(0, parent)


def c_product_count(row, info, includeDescendants=False):
    s = category_set(ctx(info), row["id"], includeDescendants)
    return ctx(info).one("SELECT count(*)" + s.sql(), s.binds)[0]


def c_products(row, info, includeDescendants=False, orderBy=None, first=None, after=None):
    req = ctx(info)
    return ProductConnection(req, category_set(req, row["id"], includeDescendants), orderBy, first, after)


def p_manufacturer(p, info):
    name = nullable(p.row["Manufacturer"])
    return None if name is None else Manufacturer(name, p.page.manufacturer_names())


def p_category(p, info):
    cat = p.row["cat"]
    return ctx(info).category(cat if isinstance(cat, int) else None)


def p_images(p, info):
    return [t for t in (nullable(p.row[c]) for c in p.page.req.catalog.image_columns) if t]


def p_videos(p, info):
    return [{"kind": kind, "url": url} for column, kind in VIDEO_COLUMNS for url in [nullable(p.row[column])] if url]


def p_specs(p, info):
    key = template_key(p.row)
    template = None if key is None else p.page.template(key)
    if template is None:
        return []
    specs = []
    for x in p.page.req.catalog.spec_letters:
        stored = template[f"spec_{x}"]
        label = "" if stored is None else trimmed(stored[1:])
        value = trimmed(p.row[f"info_spec_{x}"])
        if label and value:
            specs.append({"key": x, "label": label, "value": value})
    return specs


def p_kit(p, info):
    sku = p.row["product_ID"]
    return [] if sku is None else p.page.kit(sku)


def m_logo(m, info):
    return ctx(info).logo(m.name, m.group)


def m_product_count(m, info):
    return ctx(info).one(f'SELECT count(*) FROM "Product_Catalog" p WHERE {TRIMMED_MANUFACTURER_SQL} = ?', (m.name,))[0]


def m_products(m, info, orderBy=None, first=None, after=None):
    req = ctx(info)
    return ProductConnection(req, ProductSet(req.catalog).manufacturer(m.name), orderBy, first, after)


RESOLVERS = {
    "Query": {
        "catalogVersion": q_catalog_version, "categories": q_categories, "category": q_category,
        "product": q_product, "products": q_products, "search": q_search, "alphabet": q_alphabet,
        "manufacturers": q_manufacturers, "catalogChanges": not_served,
    },
    "Category": {
        "id": lambda r, i: str(r["id"]), "title": lambda r, i: trimmed(r["title"]),
        "icon": lambda r, i: nullable(r["icon"]), "level": lambda r, i: r["level"],
        "parent": c_parent, "children": c_children, "path": c_path,
        "productCount": c_product_count, "products": c_products,
    },
    "Product": {
        "id": lambda p, i: str(p.row["keyid"]), "sku": lambda p, i: trimmed(p.row["product_ID"]),
        "name": lambda p, i: trimmed(p.row["Product"]), "manufacturer": p_manufacturer, "category": p_category,
        "displayOrder": lambda p, i: p.row["displayorder"], "thumbnail": lambda p, i: nullable(p.row["display_Thumbnail"]),
        "images": p_images, "videos": p_videos, "panoramaUrl": lambda p, i: nullable(p.row["panorama"]),
        "description": lambda p, i: nullable(p.row["description"]), "specs": p_specs, "kit": p_kit,
    },
    "Manufacturer": {
        "name": lambda m, i: m.name, "logo": m_logo, "productCount": m_product_count, "products": m_products,
    },
    "ProductConnection": {
        "totalCount": lambda c, i: c.total(), "nodes": lambda c, i: c.page(), "edges": lambda c, i: c.edges(),
        "pageInfo": lambda c, i: c.page_info(),
    },
}


def attach_resolvers(schema):
    for type_name, fields in RESOLVERS.items():
        graphql_type = schema.type_map[type_name]
        for field_name, resolve in fields.items():
            graphql_type.fields[field_name].resolve = resolve
