import Schema

enum ProductOrder: String {
    case catalog = "CATALOG", name = "NAME", newest = "NEWEST"

    var sql: String {
        switch self {
        case .catalog: return "p.\"Manufacturer\", p.\"displayorder\", p.\"Product\", p.\"keyid\""
        case .name: return "p.\"Product\" COLLATE NOCASE, p.\"keyid\""
        case .newest: return "p.\"keyid\" DESC"
        }
    }
}

/// Which products a connection lists.
enum ProductSet {
    /// Query.products / Query.search: one set described by filters.
    case filtered(ProductFilter)
    /// Category.products: products filed under any of `cats` (the category and, with
    /// includeDescendants, its descendants); `root` is the category's id.
    case category(root: Int64, cats: [Int64])
    /// Manufacturer.products: products whose trimmed Manufacturer is `name`.
    case manufacturer(String)
}

struct ProductFilter {
    var cats: [Int64]? = nil
    var manufacturer: String? = nil
    var sku: String? = nil
    var letter: String? = nil
    /// Search words, all of which must match (`SearchWords`).
    var searchWords: [String]? = nil
    /// An FTS5 query over cg_search that every match satisfies (narrows before `SearchWords`).
    var searchMatch: String? = nil
}

/// One ProductConnection object: its set, order and page window; page and count are loaded
/// in batches across all connections of a level.
final class ConnectionRef {
    let set: ProductSet
    let order: ProductOrder
    let first: Int
    /// The `after` argument: its text (connections of one level are batched by it) and the
    /// sort key it holds; the page is the rows that sort after that key.
    let afterCursor: String?
    let after: SortKey?
    var afterGiven: Bool { after != nil }
    var total: Int?
    var page: [ProductRow]?
    /// For search: every match's keyid in order, read once for both totalCount and the page.
    var matches: [Int64]?
    var hasNextPage = false
    /// The columns the page's products are read with (what the connection's fields select).
    let select: ProductSelect

    /// The cursors of the page's rows read so far, by index (`CatalogResolver.loadCursors`).
    var cursors: [Int: String] = [:]

    init(set: ProductSet, order: ProductOrder, first: Int, afterCursor: String?, after: SortKey?, select: ProductSelect) {
        self.set = set; self.order = order; self.first = first; self.afterCursor = afterCursor; self.after = after
        self.select = select
    }

    /// Once the cursors of its first and last rows are loaded.
    var pageInfo: PageInfoValue {
        let rows = page ?? []
        return PageInfoValue(
            hasNextPage: hasNextPage, hasPreviousPage: afterGiven,
            startCursor: rows.isEmpty ? nil : cursors[0],
            endCursor: rows.isEmpty ? nil : cursors[rows.count - 1])
    }
}

/// SQL text for product sets. Every value is bound; lists are bound as one JSON array and read
/// with json_each, so each statement's text is fixed and its prepared form is cached.
enum ProductSQL {
    static let trimmedManufacturer = CatalogSQL.trim("p.\"Manufacturer\"")
    static let initial =
        "(CASE WHEN upper(substr(\(CatalogSQL.trim("p.\"Product\"")), 1, 1)) BETWEEN 'A' AND 'Z' " +
        "THEN upper(substr(\(CatalogSQL.trim("p.\"Product\"")), 1, 1)) ELSE '#' END)"

    /// FROM and WHERE clauses and their bindings for a filtered set; `also`, a condition whose
    /// values the caller binds after these, is the last of the WHERE's conditions.
    static func whereClause(_ f: ProductFilter, also: String? = nil) -> (String, [SQLValue]) {
        var parts: [String] = []
        var binds: [SQLValue] = []
        var from = " FROM \"Product_Catalog\" p"
        if let match = f.searchMatch {
            // The hits drive the join (CROSS JOIN fixes the order): a few index lookups instead
            // of a scan of every product in name order.
            // The rows whose text holds a NUL join the hits (the tokenizer stops there): from
            // cg_product_nul_text, or, in a catalog prepared before it existed, a scan.
            let nulRows = " UNION SELECT \"keyid\" FROM \"Product_Catalog\" WHERE \(SearchIndex.nulTextCondition)"
            from = " FROM (SELECT rowid AS cg_id FROM cg_search WHERE cg_search MATCH ?\(nulRows)) AS cg_hits" +
                " CROSS JOIN \"Product_Catalog\" p ON p.\"keyid\" = cg_hits.cg_id"
            binds.append(.text(match))
        }
        if let cats = f.cats {
            if cats.count == 1 {
                // One category: an equality lets the (cat, order...) index deliver rows in order.
                parts.append("p.\"cat\" = ?")
                binds.append(.integer(cats[0]))
            } else {
                parts.append("p.\"cat\" IN (SELECT value FROM json_each(?))")
                binds.append(.text(jsonArray(cats)))
            }
        }
        if let m = f.manufacturer {
            parts.append(needsServedText(m) ? "cg_served_text(\(trimmedManufacturer)) = ?" : "\(trimmedManufacturer) = ?")
            binds.append(.text(m))
        }
        if let sku = f.sku {
            if needsServedText(sku) {
                parts.append("cg_served_text(CAST(p.\"product_ID\" AS TEXT)) = ?")
                binds.append(.text(sku))
            } else {
                // The stored value as text, which `cg_product_sku` indexes: a REAL or a BLOB
                // product_ID is found by the text it is served as, which `product_ID = ?` (integer
                // affinity: '0.333333333333333' becomes a REAL that is not 1/3) would miss.
                parts.append("CAST(p.\"product_ID\" AS TEXT) = ?")
                binds.append(.text(sku))
            }
        }
        if let l = f.letter {
            parts.append("\(initial) = ?")
            binds.append(.text(l))
        }
        if let words = f.searchWords {
            parts.append("\(SearchWords.sqlFunction)(p.\"Product\", p.\"description\", p.\"Manufacturer\", ?)")
            binds.append(.blob(SearchWords.encode(words)))
        }
        if let also { parts.append(also) }
        return (from + (parts.isEmpty ? "" : " WHERE " + parts.joined(separator: " AND ")), binds)
    }

    /// Whether `text` (a name, sku or search word a client sent) holds U+FFFD, which a stored value
    /// that is not valid UTF-8 may be served as: it is then compared with `cg_served_text` of the
    /// column (Database.swift), the text served, in a scan. Any other text can only equal — or be
    /// a substring of — stored text that is valid UTF-8, which the indexed comparisons see as it is.
    static func needsServedText(_ text: String) -> Bool { text.unicodeScalars.contains("\u{FFFD}") }

    /// Whether `text` holds U+0000, which SQLite 3.40's json_each ends a string at (`["a\u0000b"]`
    /// reads as "a"): such a name or id is bound on its own, never in a JSON list, and compared
    /// with `=`, which sees the whole value. (Search words travel in a BLOB: `SearchWords`.)
    static func needsOwnBinding(_ text: String) -> Bool { text.utf8.contains(0) }

    /// Names split by how they are compared: `listed` in a JSON list with `=` on the stored text,
    /// `served` in a JSON list with `cg_served_text` (`needsServedText`), `alone` bound one by one
    /// (`needsOwnBinding`).
    static func splitNames(_ names: [String]) -> (listed: [String], served: [String], alone: [String]) {
        var out: (listed: [String], served: [String], alone: [String]) = ([], [], [])
        for n in names {
            if needsOwnBinding(n) { out.alone.append(n) } else if needsServedText(n) { out.served.append(n) } else { out.listed.append(n) }
        }
        return out
    }

    static func jsonArray(_ values: [Int64]) -> String {
        "[" + values.map(String.init).joined(separator: ",") + "]"
    }
    static func jsonArray(_ values: [String]) -> String {
        var w = JSONWriter(capacity: 64)
        w.json(.array(values.map { .string($0) }))
        return String(decoding: w.bytes, as: UTF8.self)
    }
    /// A JSON array of strings of valid UTF-8 bytes (a row's columns: `ProductRow.textBytes`).
    static func jsonArray(_ values: [UnsafeRawBufferPointer]) -> String {
        var w = ScalarText(capacity: values.reduce(2) { $0 + $1.count + 3 })
        w.byte(0x5B)
        for (i, v) in values.enumerated() {
            if i > 0 { w.byte(0x2C) }
            w.string(v)
        }
        w.byte(0x5D)
        return w.withWritten { String(decoding: $0, as: UTF8.self) }
    }
    static func jsonPairs(_ pairs: [(Int64, Int64)]) -> String {
        "[" + pairs.map { "[\($0.0),\($0.1)]" }.joined(separator: ",") + "]"
    }
}
