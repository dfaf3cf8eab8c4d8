import Schema

/// A file that cannot be served: names the file and what is wrong with it.
public struct CatalogError: Error, CustomStringConvertible, Sendable {
    public let path: String
    public let message: String
    public init(path: String, message: String) { self.path = path; self.message = message }
    public var description: String { "\(path): \(message)" }
}

/// Quotes an SQL identifier.
func quoteIdentifier(_ name: String) -> String {
    var out = "\""
    for ch in name {
        if ch == "\"" { out.append("\"") }
        out.append(ch)
    }
    out.append("\"")
    return out
}

/// What this catalog file's tables look like: the columns the semantics discover at run time
/// (display_Image<digits>, info_spec_x / spec_x letters, videos), read with PRAGMA table_info.
struct CatalogLayout {
    static let requiredTables = ["hierarchy", "Product_Catalog", "Product_Assets", "DetailsKeyValues", "mfg", "version"]
    /// Columns read by name besides Product_Catalog's (checked with its own below).
    static let requiredColumns: [(String, [String])] = [
        ("hierarchy", ["id", "menu_title", "menu_icon", "level", "parent"]),
        ("Product_Catalog", ["description"]),
        ("Product_Assets", ["kitID", "asset", "kitQTY"]),
        ("DetailsKeyValues", ["DetailsKey"]),
        ("mfg", ["manufacturer", "logo"]),
        ("version", ["versionid", "updatecatalogrow", "updateassetrow"]),
    ]
    static let videoColumns: [(String, String)] = [
        ("bracketvid", "BRACKET"), ("dynamicvid", "DYNAMIC_RANGE"), ("colorrendvid", "COLOR_RENDITION"),
        ("promovid", "PROMO"), ("gscreenvid", "GREEN_SCREEN"),
    ]

    /// Product_Catalog columns in the order they are selected (ProductRow column indexes).
    let productColumns: [String]
    let keyid: Int
    let productID: Int
    let name: Int
    let manufacturer: Int
    let cat: Int
    let displayOrder: Int
    let thumbnail: Int?
    let panorama: Int?
    let description: Int?
    let detailsKey: Int?
    let images: [Int]
    let videos: [(kind: String, column: Int)]
    /// (letter, index of info_spec_x in productColumns, template column name spec_x), letter order.
    let specs: [(letter: String, column: Int, templateColumn: String)]
    /// Each spec's column alone, in `specs` order: a loop over it copies no String per spec.
    let specColumns: [Int]
    /// The specs' letters, in `specs` order, to write as JSON.
    let specLetters: JSONStrings

    /// The spec templates of a JSON array of DetailsKeys: DetailsKey, then each spec's template
    /// column in `specs` order.
    let specTemplatesSQL: String
    /// Every column (`select(for:)` when a selection reads a field it does not know).
    let allColumns: ProductSelect
    /// The ProductSelect of each column set met so far (this session's, like the layout).
    private let selects = ProductSelectCache()
    /// This layout's identity: what the resolver made of a planned field for one layout
    /// (`PlannedField.resolverMemo`) is not used with another, read after a schema change.
    final class Token {}
    let token = Token()
    /// The cg_search trigram index and its triggers are installed (see SearchIndex).
    let hasSearchIndex: Bool
    /// cg_category_counts and its triggers are installed on an eligible file (see CategoryCounts).
    let hasCategoryCounts: Bool

    init(db: Database, path: String) throws {
        for t in Self.requiredTables where !(try db.tableExists(t)) {
            throw CatalogError(path: path, message: "not a Radiant catalog: table \(t) is missing")
        }
        // Every other column read by name. Without this check a missing column was no error at
        // all where SQLite reads a double-quoted name it cannot resolve as a string literal
        // (hierarchy.menu_icon served as "menu_icon"); the connections now refuse that
        // (`Database`, SQLITE_DBCONFIG_DQS_DML), and the file is refused here, by name.
        for (table, columns) in Self.requiredColumns {
            let present = try db.columns(of: table)
            for c in columns where !present.contains(where: { $0.caseInsensitiveCompare(c) }) {
                throw CatalogError(path: path, message: "not a Radiant catalog: column \(table).\(c) is missing")
            }
        }
        let pc = try db.columns(of: "Product_Catalog")
        func find(_ name: String, in cols: [String]) -> String? {
            cols.first { $0.caseInsensitiveCompare(name) }
        }
        var selected: [String] = []
        func add(_ name: String) -> Int? {
            guard let real = find(name, in: pc) else { return nil }
            if let i = selected.firstIndex(of: real) { return i }
            selected.append(real)
            return selected.count - 1
        }
        func require(_ name: String) throws -> Int {
            guard let i = add(name) else {
                throw CatalogError(path: path, message: "not a Radiant catalog: column Product_Catalog.\(name) is missing")
            }
            return i
        }
        keyid = try require("keyid")
        productID = try require("product_ID")
        name = try require("Product")
        manufacturer = try require("Manufacturer")
        cat = try require("cat")
        displayOrder = try require("displayorder")
        thumbnail = add("display_Thumbnail")
        panorama = add("panorama")
        description = add("description")
        detailsKey = add("info_DetailsKey")
        var images: [Int] = []
        for c in pc {
            let lower = c.lowercased()
            let prefix = "display_image"
            if lower.hasPrefix(prefix) {
                let rest = lower.dropFirst(prefix.count)
                if !rest.isEmpty, rest.allSatisfy({ $0.isASCII && $0.isNumber }), let i = add(c) { images.append(i) }
            }
        }
        self.images = images
        var videos: [(String, Int)] = []
        for (col, kind) in Self.videoColumns { if let i = add(col) { videos.append((kind, i)) } }
        self.videos = videos

        let templateCols = try db.columns(of: "DetailsKeyValues")
        func letterOf(_ col: String, prefix: String) -> String? {
            guard col.hasPrefix(prefix) else { return nil }
            let rest = col.dropFirst(prefix.count)
            guard rest.count == 1, let ch = rest.first, ch >= "a" && ch <= "z" else { return nil }
            return String(ch)
        }
        var templateLetters: [String: String] = [:]
        for c in templateCols { if let l = letterOf(c, prefix: "spec_") { templateLetters[l] = c } }
        var specs: [(String, Int, String)] = []
        let productLetters = pc.compactMap { c in letterOf(c, prefix: "info_spec_").map { ($0, c) } }
        for (letter, col) in productLetters.sorted(by: { $0.0 < $1.0 }) {
            guard let t = templateLetters[letter], let i = add(col) else { continue }
            specs.append((letter, i, t))
        }
        self.specs = specs
        specColumns = specs.map { $0.1 }
        specLetters = JSONStrings(specs.map { $0.0 })
        let cols = specs.map { quoteIdentifier($0.2) }.joined(separator: ", ")
        self.specTemplatesSQL =
            "SELECT \"DetailsKey\", \(cols) FROM \"DetailsKeyValues\" WHERE \"DetailsKey\" IN (SELECT value FROM json_each(?))"
        self.productColumns = selected
        self.allColumns = ProductSelect(columns: Array(selected.indices), names: selected, displayOrder: displayOrder,
                                        keyid: keyid, cat: cat)
        self.hasSearchIndex = (try? SearchIndex.isInstalled(db)) ?? false
        self.hasCategoryCounts = (try? CategoryCounts.isInstalled(db)) ?? false
    }

    /// The columns that the Product fields `fields` read (always keyid and cat), as the
    /// statements that select them. A field this does not know selects every column.
    func select(for fields: [PlannedField]) -> ProductSelect {
        guard productColumns.count <= 64 else { return allColumns }
        var mask: UInt64 = 1 << UInt64(keyid) | 1 << UInt64(cat)
        func add(_ i: Int?) { if let i { mask |= 1 << UInt64(i) } }
        for f in fields {
            switch f.name {
            case "id", "category", "displayOrder", "__typename": break
            case "sku", "kit": add(productID)
            case "name": add(name)
            case "manufacturer": add(manufacturer)
            case "thumbnail": add(thumbnail)
            case "panoramaUrl": add(panorama)
            case "description": add(description)
            case "images": images.forEach(add)
            case "videos": videos.forEach { add($0.column) }
            case "specs": add(detailsKey); specs.forEach { add($0.column) }
            default: return allColumns
            }
        }
        if let known = selects.byMask[mask] { return known }
        let columns = productColumns.indices.filter { mask & (1 << UInt64($0)) != 0 }
        let made = ProductSelect(columns: columns, names: productColumns, displayOrder: displayOrder, keyid: keyid, cat: cat)
        selects.byMask[mask] = made
        return made
    }

    /// Column sets met so far (tests).
    var selectCount: Int { selects.byMask.count }

    /// Reads one product from a statement whose columns from `offset` on are `select`'s.
    func readProduct(_ s: Statement, _ select: ProductSelect, offset: Int32 = 0) -> ProductRow {
        let keyid = s.int64(offset + Int32(select.keyidAt))
        let catIndex = offset + Int32(select.catAt)
        let cat: Int64?
        switch s.type(catIndex) {
        case .integer: cat = s.int64(catIndex)
        case .real:
            let d = s.double(catIndex)
            cat = d == d.rounded() && abs(d) < 9e18 ? Int64(d) : nil
        default: cat = nil
        }
        let computed = offset + Int32(select.columns.count)
        let displayOrder = s.isNull(computed) ? nil : Int(s.int64(computed))
        return ProductRow(s, offset: offset, columns: select.textColumns, of: productColumns.count, keyid: keyid, cat: cat,
                          displayOrder: displayOrder)
    }

    /// SQL for an integer field: NULL when the stored value is NULL or '', else CAST(x AS INTEGER).
    static func integerRule(_ column: String) -> String {
        "CASE WHEN \(column) IS NULL OR \(column) = '' THEN NULL ELSE CAST(\(column) AS INTEGER) END"
    }
}

/// Some of Product_Catalog's columns, and the SQL that selects them: made once per column set
/// and session, not at every lookup. Reading fewer columns matters: SQLite copies every
/// selected text column into a register of its own at each step.
struct ProductSelect {
    /// productColumns indexes, ascending: the statement's columns, in this order.
    let columns: [Int]
    /// One bit per column of `columns`; every bit when the layout has more than 64 columns
    /// (then every statement reads them all). Equal masks, equal statements.
    let mask: UInt64
    /// Where keyid and cat are among `columns`.
    let keyidAt: Int
    let catAt: Int
    /// The columns a ProductRow keeps as text: each one's place among `columns` and its
    /// productColumns index. Not keyid and cat, which are read as integers and which no field
    /// reads as text: an integer column's text is made by SQLite at each read (about 470
    /// instructions a column with copying it, two per product).
    let textColumns: [(at: Int32, column: Int)]
    /// "p"."col", ... then displayOrder computed as SEMANTICS.md's integer rule (null for NULL
    /// or '', else CAST(x AS INTEGER)), for SELECT lists.
    let list: String
    /// One product by keyid, and the products whose keyids a JSON array lists.
    let byKeySQL: String
    let byKeysSQL: String

    init(columns: [Int], names: [String], displayOrder: Int, keyid: Int, cat: Int) {
        self.columns = columns
        mask = names.count > 64 ? .max : columns.reduce(0) { $0 | 1 << UInt64($1) }
        keyidAt = columns.firstIndex(of: keyid)!
        catAt = columns.firstIndex(of: cat)!
        textColumns = columns.enumerated().filter { $0.element != keyid && $0.element != cat }.map { (Int32($0.offset), $0.element) }
        list = columns.map { "p." + quoteIdentifier(names[$0]) }.joined(separator: ", ")
            + ", " + CatalogLayout.integerRule("p." + quoteIdentifier(names[displayOrder]))
        byKeySQL = "SELECT \(list) FROM \"Product_Catalog\" p WHERE p.\"keyid\" = ?"
        byKeysSQL = "SELECT \(list) FROM \"Product_Catalog\" p WHERE p.\"keyid\" IN (SELECT value FROM json_each(?))"
    }
}

/// At most 512 entries: keyid and cat are always read, and the Product fields read nine groups
/// of columns (sku and kit, name, manufacturer, thumbnail, panoramaUrl, description, images,
/// videos, specs).
final class ProductSelectCache {
    var byMask: [UInt64: ProductSelect] = [:]
}

private extension String {
    func caseInsensitiveCompare(_ other: String) -> Bool { lowercased() == other.lowercased() }
}
