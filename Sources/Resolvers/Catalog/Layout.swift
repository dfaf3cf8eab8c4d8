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

    /// The spec templates of a JSON array of DetailsKeys: DetailsKey, then each spec's template
    /// column in `specs` order.
    let specTemplatesSQL: String
    /// "p"."col", ... for SELECT lists.
    let productSelectList: String
    /// One product by keyid, and the products whose keyids a JSON array lists: made once, not
    /// at every lookup.
    let productByKeySQL: String
    let productsByKeysSQL: String
    /// The cg_search trigram index and its triggers are installed (see SearchIndex).
    let hasSearchIndex: Bool
    /// cg_category_counts and its triggers are installed on an eligible file (see CategoryCounts).
    let hasCategoryCounts: Bool

    init(db: Database, path: String) throws {
        for t in Self.requiredTables where !(try db.tableExists(t)) {
            throw CatalogError(path: path, message: "not a Radiant catalog: table \(t) is missing")
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
        let cols = specs.map { quoteIdentifier($0.2) }.joined(separator: ", ")
        self.specTemplatesSQL =
            "SELECT \"DetailsKey\", \(cols) FROM \"DetailsKeyValues\" WHERE \"DetailsKey\" IN (SELECT value FROM json_each(?))"
        self.productColumns = selected
        // The stored columns, then displayOrder computed as SEMANTICS.md's integer rule:
        // null for NULL or '', else CAST(x AS INTEGER).
        self.productSelectList = selected.map { "p." + quoteIdentifier($0) }.joined(separator: ", ")
            + ", " + Self.integerRule("p." + quoteIdentifier(selected[displayOrder]))
        self.productByKeySQL = "SELECT \(productSelectList) FROM \"Product_Catalog\" p WHERE p.\"keyid\" = ?"
        self.productsByKeysSQL =
            "SELECT \(productSelectList) FROM \"Product_Catalog\" p WHERE p.\"keyid\" IN (SELECT value FROM json_each(?))"
        self.hasSearchIndex = (try? SearchIndex.isInstalled(db)) ?? false
        self.hasCategoryCounts = (try? CategoryCounts.isInstalled(db)) ?? false
    }

    /// Reads one product from a statement whose columns start at `offset` in productColumns order.
    func readProduct(_ s: Statement, offset: Int32 = 0) -> ProductRow {
        let keyid = s.int64(offset + Int32(keyid))
        let catIndex = offset + Int32(cat)
        let cat: Int64?
        switch s.type(catIndex) {
        case .integer: cat = s.int64(catIndex)
        case .real:
            let d = s.double(catIndex)
            cat = d == d.rounded() && abs(d) < 9e18 ? Int64(d) : nil
        default: cat = nil
        }
        let computed = offset + Int32(productColumns.count)
        let displayOrder = s.isNull(computed) ? nil : Int(s.int64(computed))
        return ProductRow(s, offset: offset, count: productColumns.count, keyid: keyid, cat: cat, displayOrder: displayOrder)
    }

    /// SQL for an integer field: NULL when the stored value is NULL or '', else CAST(x AS INTEGER).
    static func integerRule(_ column: String) -> String {
        "CASE WHEN \(column) IS NULL OR \(column) = '' THEN NULL ELSE CAST(\(column) AS INTEGER) END"
    }
}

private extension String {
    func caseInsensitiveCompare(_ other: String) -> Bool { lowercased() == other.lowercased() }
}
