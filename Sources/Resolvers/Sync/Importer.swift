import CSQLite
import Schema

// `catalog-gateway import`: upserts products (with their kit and specs), categories, templates
// and manufacturers from a JSON or CSV file in one transaction. The whole file is read and
// checked before the catalog is written: one bad record and nothing is written (the file stays
// byte for byte the same). File formats: docs/SYNC.md, "Import".

/// One thing wrong with an import file, located by line, record and field.
public struct ImportProblem: Sendable, Equatable, CustomStringConvertible {
    /// The line the record starts on (1-based); for problems of the whole file, the line found.
    public var line: Int
    /// "record 3" (position in a top-level array, or CSV data row), "products[2]" (element of a
    /// top-level member); nil for problems of the whole file.
    public var record: String?
    /// The field, as a path into the record: "kit[1].quantity", "displayorder".
    public var field: String?
    public var message: String

    public init(line: Int, record: String?, field: String?, message: String) {
        self.line = line; self.record = record; self.field = field; self.message = message
    }

    /// "14: record 3: kit[1].quantity: expected an integer" (the file name goes in front).
    /// The problem as printed; the file's own text in it (member names, values quoted in the
    /// message) with control and text-direction characters escaped (`DisplayText`): a file
    /// cannot steer the terminal or forge lines of the report.
    public var description: String {
        var s = "\(line):"
        if let record { s += " \(DisplayText.escaped(record)):" }
        if let field { s += " \(DisplayText.escaped(field)):" }
        return s + " " + DisplayText.escaped(message)
    }
}

/// Why an import wrote nothing.
public enum ImportFailure: Error, CustomStringConvertible, Sendable {
    /// The file has bad records (every one is listed) or cannot be parsed.
    case invalid(file: String, problems: [ImportProblem])
    /// The file cannot be read.
    case unreadable(file: String, message: String)
    /// The catalog cannot be used: not a catalog, read-only.
    case catalog(String)
    /// Writing failed (locked, disk full ...): everything was rolled back.
    case writeFailed(String)

    /// True for `writeFailed` (exit status 1), false for problems of the input (2).
    public var isWriteFailure: Bool {
        if case .writeFailed = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .invalid(let file, let problems): return problems.map { "\(file):\($0)" }.joined(separator: "\n")
        case .unreadable(let file, let message): return "\(file): \(message)"
        case .catalog(let message), .writeFailed(let message): return message
        }
    }
}

/// What an import did.
public struct ImportSummary: Sendable, Equatable {
    public var productsInserted = 0
    public var productsUpdated = 0
    public var productsUnchanged = 0
    public var kitRowsWritten = 0
    public var categoriesInserted = 0
    public var categoriesUpdated = 0
    public var templatesInserted = 0
    public var templatesUpdated = 0
    public var manufacturersInserted = 0
    public var manufacturersUpdated = 0
    /// The version row written; when the import changed nothing, no row is written
    /// (`versionWritten` false) and this is the catalog's current version.
    public var version = 0
    public var versionWritten = true
    public var catalogRow: Int64 = 0
    public var assetRow: Int64 = 0
    public init() {}

    /// No row was inserted or changed.
    var writesNothing: Bool {
        productsInserted + productsUpdated + kitRowsWritten + categoriesInserted + categoriesUpdated
            + templatesInserted + templatesUpdated + manufacturersInserted + manufacturersUpdated == 0
    }
}

/// Progress of a long import: `phase` ("reading", "checking", "writing"), `done` of `total`.
public typealias ImportProgress = @Sendable (_ phase: String, _ done: Int, _ total: Int) -> Void

public enum CatalogImporter {
    public enum Format: Sendable { case json, csv }

    /// JSON when the first non-blank byte is `[` or `{`, else CSV.
    public static func detectFormat(_ bytes: [UInt8]) -> Format {
        var i = (bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF) ? 3 : 0
        while i < bytes.count, bytes[i] == 0x20 || (bytes[i] >= 0x09 && bytes[i] <= 0x0D) { i += 1 }
        return i < bytes.count && (bytes[i] == UInt8(ascii: "[") || bytes[i] == UInt8(ascii: "{")) ? .json : .csv
    }

    /// Reads and checks `bytes` against the catalog's columns without writing anything; returns
    /// the number of records.
    public static func check(_ db: Database, bytes: [UInt8], file: String,
                             format: Format? = nil) throws(ImportFailure) -> Int {
        try batch(db, bytes: bytes, file: file, format: format).batch.recordCount
    }

    private static func batch(_ db: Database, bytes: [UInt8], file: String, format: Format?,
                              progress: ImportProgress? = nil) throws(ImportFailure) -> (batch: ImportBatch, layout: ImportLayout) {
        let layout: ImportLayout
        do {
            layout = try ImportLayout(db)
        } catch let error as SQLiteError {
            throw .catalog("\(db.path): \(error.message)")
        } catch {
            throw .catalog("\(error)")
        }
        if bytes.allSatisfy({ $0 == 0x20 || ($0 >= 0x09 && $0 <= 0x0D) }) {
            throw .invalid(file: file, problems: [ImportProblem(line: 1, record: nil, field: nil, message: "empty file")])
        }
        switch format ?? detectFormat(bytes) {
        case .json: return (try ImportRecords.json(bytes, file: file, layout: layout, progress: progress), layout)
        case .csv: return (try ImportRecords.csv(bytes, file: file, layout: layout), layout)
        }
    }

    /// Reads and checks `bytes` against the catalog's columns, then writes every record and a
    /// new version row in one IMMEDIATE transaction. `file` names the input in messages.
    public static func run(_ db: Database, bytes: [UInt8], file: String, format: Format? = nil,
                           progress: ImportProgress? = nil) throws(ImportFailure) -> ImportSummary {
        let (batch, layout) = try batch(db, bytes: bytes, file: file, format: format, progress: progress)
        if db.cannotWrite {
            throw .catalog("\(db.path): read-only; cannot import")
        }
        do {
            return try ImportWriter(db: db, layout: layout, progress: progress).write(batch)
        } catch let e as ImportFailure {
            throw e
        } catch {
            throw .writeFailed("\(db.path): import rolled back, nothing written: \((error as? SQLiteError)?.message ?? "\(error)")")
        }
    }
}

// MARK: Layout

/// The catalog's columns, read before anything is written: what the records may name.
struct ImportLayout {
    /// Product_Catalog columns in table order, with whether the declared type is an integer type.
    let productColumns: [(name: String, integer: Bool)]
    /// lowercased column name -> index in productColumns
    let productColumnIndex: [String: Int]
    let imageColumns: [Int]
    let videoColumns: [(kind: String, column: Int)]
    /// letter -> index of info_spec_<letter>
    let productSpecColumns: [String: Int]
    /// letter -> spec_<letter> (DetailsKeyValues)
    let templateSpecColumns: [String: String]
    let hasDetailsKey: Bool
    let hasReferenceCategory: Bool

    init(_ db: Database) throws {
        for t in ["Product_Catalog", "Product_Assets", "hierarchy", "DetailsKeyValues", "mfg", "version"]
        where try !db.tableExists(t) {
            throw CatalogFileError(path: db.path, reason: "not a Radiant catalog: table \(t) is missing")
        }
        // Every column the queries read: a file `query` and `serve` refuse is not written to.
        do {
            _ = try CatalogLayout(db: db, path: db.path)
        } catch let error as CatalogError {
            throw CatalogFileError(path: db.path, reason: error.message)
        }
        let s = try db.prepare("SELECT name, upper(coalesce(type, '')) FROM pragma_table_info('Product_Catalog') ORDER BY cid")
        var cols: [(String, Bool)] = []
        while try s.step() { cols.append((s.text(0) ?? "", (s.text(1) ?? "").contains("INT"))) }
        productColumns = cols
        var byLower: [String: Int] = [:]
        for (i, (c, _)) in cols.enumerated() where byLower[c.lowercased()] == nil { byLower[c.lowercased()] = i }
        productColumnIndex = byLower
        guard byLower["keyid"] != nil else {
            throw CatalogFileError(path: db.path, reason: "not a Radiant catalog: column Product_Catalog.keyid is missing")
        }
        imageColumns = cols.indices.filter { i in
            let l = cols[i].0.lowercased()
            guard l.hasPrefix("display_image") else { return false }
            let rest = l.dropFirst("display_image".count)
            return !rest.isEmpty && rest.allSatisfy { $0.isASCII && $0.isNumber }
        }
        videoColumns = [("BRACKET", "bracketvid"), ("DYNAMIC_RANGE", "dynamicvid"), ("COLOR_RENDITION", "colorrendvid"),
                        ("PROMO", "promovid"), ("GREEN_SCREEN", "gscreenvid")]
            .compactMap { kind, col in byLower[col].map { (kind, $0) } }
        func letters(_ names: [String], prefix: String) -> [String: Int] {
            var out: [String: Int] = [:]
            for (i, c) in names.enumerated() where c.hasPrefix(prefix) {
                let rest = c.dropFirst(prefix.count)
                if rest.count == 1, let ch = rest.first, ch >= "a" && ch <= "z" { out[String(ch)] = i }
            }
            return out
        }
        productSpecColumns = letters(cols.map(\.0), prefix: "info_spec_")
        let templateCols = try db.columns(of: "DetailsKeyValues")
        templateSpecColumns = letters(templateCols, prefix: "spec_").mapValues { templateCols[$0] }
        hasDetailsKey = byLower["info_detailskey"] != nil
        hasReferenceCategory = templateCols.contains { $0.lowercased() == "referencecategory" }
    }

    func index(_ lower: String) -> Int? { productColumnIndex[lower] }
}

// MARK: Records

struct ProductUpsert {
    let line: Int
    let keyid: Int64
    /// The value this record sets for each Product_Catalog column (ImportLayout.productColumns
    /// order), nil where it leaves the column alone.
    var values: [SQLValue?]
    /// The new kit (replacing the rows keyed by the product's sku), nil to leave it.
    var kit: [(name: String, quantity: Int64)]?
}

struct CategoryUpsert {
    let line: Int
    let id: Int64
    var values: [(column: String, value: SQLValue)]
}

struct TemplateUpsert {
    let line: Int
    let key: Int64
    var values: [(column: String, value: SQLValue)]
}

struct ManufacturerUpsert {
    let line: Int
    let name: String
    var logo: SQLValue?
}

/// A whole file, checked.
struct ImportBatch {
    var products: [ProductUpsert] = []
    var categories: [CategoryUpsert] = []
    var templates: [TemplateUpsert] = []
    var manufacturers: [ManufacturerUpsert] = []
    var recordCount: Int { products.count + categories.count + templates.count + manufacturers.count }
}

// MARK: Writing

/// Applies a checked batch in one IMMEDIATE transaction and adds the version row.
final class ImportWriter {
    let db: Database
    let layout: ImportLayout
    let progress: ImportProgress?
    private let keyidIndex: Int
    private let productInsertSQL: String
    /// UPDATE statements by the set of columns they write.
    private var productUpdateSQL: [[Int]: String] = [:]

    init(db: Database, layout: ImportLayout, progress: ImportProgress?) {
        self.db = db; self.layout = layout; self.progress = progress
        keyidIndex = layout.index("keyid") ?? 0
        let names = layout.productColumns.map { quoteIdentifier($0.name) }
        productInsertSQL = "INSERT INTO \"Product_Catalog\" (" + names.joined(separator: ", ") + ") VALUES ("
            + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
    }

    func write(_ batch: ImportBatch) throws -> ImportSummary {
        // Bulk work: a larger page cache for this connection only (nothing is stored in the file).
        try db.execute("PRAGMA cache_size = -65536")
        return try db.transaction("IMMEDIATE") { () throws -> ImportSummary in
            var summary = ImportSummary()
            var minKeyid: Int64?
            var minAsset: Int64?
            let total = batch.recordCount
            var done = 0
            func tick() {
                done += 1
                if done % 1000 == 0 || done == total { progress?("writing", done, total) }
            }

            for m in batch.manufacturers {
                try writeManufacturer(m, &summary); tick()
            }
            for t in batch.templates {
                try writeTemplate(t, &summary); tick()
            }
            for c in batch.categories {
                try writeCategory(c, &summary); tick()
            }
            var kits = batch.products.contains { $0.kit != nil } ? try loadKits() : [:]
            for p in batch.products {
                let changed = try writeProduct(p, &summary)
                if changed { minKeyid = min(minKeyid ?? p.keyid, p.keyid) }
                if let kit = p.kit, let first = try writeKit(p.keyid, kit, &kits, &summary) {
                    minAsset = min(minAsset ?? first, first)
                }
                tick()
            }
            if summary.writesNothing {
                // Every record as stored already: a version row would wake every subscriber and
                // send the original apps downloading for nothing.
                summary.versionWritten = false
                summary.version = try ChangeCapture.currentVersion(db)
                return summary
            }
            let bump = try VersionBump.insert(db, catalogRow: minKeyid, assetRow: minAsset)
            summary.version = bump.version
            summary.catalogRow = bump.catalogRow
            summary.assetRow = bump.assetRow
            return summary
        }
    }

    /// `UPDATE table SET a = ?, b = ? WHERE key = ? AND NOT (a IS ? AND b IS ?)`: writes only
    /// rows that differ, so an unchanged record is no change for change capture either. `IS`
    /// compares with the columns' affinity ('1480' is the stored 1480).
    private func conditionalUpdate(table: String, key: String, keyValue: SQLValue,
                                   values: [(column: String, value: SQLValue)]) throws -> Bool {
        guard !values.isEmpty else { return false }
        let sets = values.map { "\(quoteIdentifier($0.column)) = ?" }.joined(separator: ", ")
        let same = values.map { "\(quoteIdentifier($0.column)) IS ?" }.joined(separator: " AND ")
        let s = try db.cachedStatement(
            "UPDATE \(quoteIdentifier(table)) SET \(sets) WHERE \(quoteIdentifier(key)) = ? AND NOT (\(same))")
        var i: Int32 = 1
        for v in values { s.bind(v.value, at: i); i += 1 }
        s.bind(keyValue, at: i); i += 1
        for v in values { s.bind(v.value, at: i); i += 1 }
        try s.run()
        return db.changes > 0
    }

    private func insert(table: String, values: [(column: String, value: SQLValue)]) throws {
        let cols = values.map { quoteIdentifier($0.column) }.joined(separator: ", ")
        let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
        let s = try db.cachedStatement("INSERT INTO \(quoteIdentifier(table)) (\(cols)) VALUES (\(marks))")
        s.bind(values.map(\.value))
        try s.run()
    }

    private func exists(_ sql: String, _ key: SQLValue) throws -> Bool {
        let s = try db.cachedStatement(sql)
        defer { s.reset() }
        s.bind(key, at: 1)
        return try s.step()
    }

    private func writeProduct(_ p: ProductUpsert, _ summary: inout ImportSummary) throws -> Bool {
        let key = SQLValue.integer(p.keyid)
        if try exists("SELECT 1 FROM \"Product_Catalog\" WHERE keyid = ?", key) {
            var columns: [Int] = []
            for (i, v) in p.values.enumerated() where v != nil { columns.append(i) }
            guard !columns.isEmpty else { summary.productsUnchanged += 1; return false }
            let sql: String
            if let cached = productUpdateSQL[columns] {
                sql = cached
            } else {
                let names = columns.map { quoteIdentifier(layout.productColumns[$0].name) }
                sql = "UPDATE \"Product_Catalog\" SET " + names.map { "\($0) = ?" }.joined(separator: ", ")
                    + " WHERE keyid = ? AND NOT (" + names.map { "\($0) IS ?" }.joined(separator: " AND ") + ")"
                productUpdateSQL[columns] = sql
            }
            let s = try db.cachedStatement(sql)
            var n: Int32 = 1
            for i in columns { s.bind(p.values[i] ?? .null, at: n); n += 1 }
            s.bind(key, at: n); n += 1
            for i in columns { s.bind(p.values[i] ?? .null, at: n); n += 1 }
            try s.run()
            if db.changes > 0 {
                summary.productsUpdated += 1
                return true
            }
            summary.productsUnchanged += 1
            return false
        }
        // A new row: every column not given is '', as in the original catalogs, whose apps
        // read columns without NULL checks.
        let s = try db.cachedStatement(productInsertSQL)
        for (i, v) in p.values.enumerated() {
            s.bind(i == keyidIndex ? key : (v ?? .text("")), at: Int32(i + 1))
        }
        try s.run()
        summary.productsInserted += 1
        return true
    }

    /// kitID -> rows (assetID, asset, kitQTY) in assetID order, for every kit.
    private func loadKits() throws -> [String: [(id: Int64, asset: String?, qty: String?)]] {
        var out: [String: [(id: Int64, asset: String?, qty: String?)]] = [:]
        let s = try db.prepare("SELECT assetID, kitID, asset, kitQTY FROM \"Product_Assets\" ORDER BY assetID")
        while try s.step() {
            guard let kit = s.text(1) else { continue }
            out[kit, default: []].append((s.int64(0), s.text(2), s.text(3)))
        }
        return out
    }

    /// Replaces the kit rows of the product's sku (as stored) when they differ from `items`.
    /// Returns the first assetID written, nil when the kit was already so.
    private func writeKit(_ keyid: Int64, _ items: [(name: String, quantity: Int64)],
                          _ kits: inout [String: [(id: Int64, asset: String?, qty: String?)]],
                          _ summary: inout ImportSummary) throws -> Int64? {
        let q = try db.cachedStatement("SELECT product_ID FROM \"Product_Catalog\" WHERE keyid = ?")
        q.bind(keyid, at: 1)
        let sku = try q.step() ? q.text(0) : nil
        q.reset()
        guard let sku else { return nil }
        let existing = kits[sku] ?? []
        let same = existing.count == items.count && zip(existing, items).allSatisfy {
            $0.asset == $1.name && $0.qty == String($1.quantity)
        }
        if same { return nil }
        let del = try db.cachedStatement("DELETE FROM \"Product_Assets\" WHERE assetID = ?")
        for row in existing {
            del.reset(); del.bind(row.id, at: 1)
            try del.run()
        }
        let ins = try db.cachedStatement("INSERT INTO \"Product_Assets\" (kitID, asset, kitQTY) VALUES (?, ?, ?)")
        var first: Int64?
        var rows: [(id: Int64, asset: String?, qty: String?)] = []
        for item in items {
            ins.reset()
            ins.bind(sku, at: 1); ins.bind(item.name, at: 2); ins.bind(String(item.quantity), at: 3)
            try ins.run()
            let id = db.lastInsertRowID
            if first == nil { first = id }
            rows.append((id, item.name, String(item.quantity)))
            summary.kitRowsWritten += 1
        }
        kits[sku] = rows
        return first
    }

    private func writeCategory(_ c: CategoryUpsert, _ summary: inout ImportSummary) throws {
        let key = SQLValue.integer(c.id)
        if try exists("SELECT 1 FROM hierarchy WHERE id = ?", key) {
            if try conditionalUpdate(table: "hierarchy", key: "id", keyValue: key, values: c.values) {
                summary.categoriesUpdated += 1
            }
            return
        }
        var given: [String: SQLValue] = [:]
        for v in c.values { given[v.column] = v.value }
        try insert(table: "hierarchy", values: [
            ("id", key), ("menu_title", given["menu_title"] ?? .text("")), ("menu_icon", given["menu_icon"] ?? .text("")),
            ("level", given["level"] ?? .null), ("parent", given["parent"] ?? .integer(0)),
        ])
        summary.categoriesInserted += 1
    }

    private func writeTemplate(_ t: TemplateUpsert, _ summary: inout ImportSummary) throws {
        let key = SQLValue.integer(t.key)
        if try exists("SELECT 1 FROM \"DetailsKeyValues\" WHERE DetailsKey = ?", key) {
            if try conditionalUpdate(table: "DetailsKeyValues", key: "DetailsKey", keyValue: key, values: t.values) {
                summary.templatesUpdated += 1
            }
            return
        }
        // '' in the text column not given, as for every new row (unused spec_x stay NULL).
        var values = t.values
        if layout.hasReferenceCategory && !values.contains(where: { $0.column == "ReferenceCategory" }) {
            values.append(("ReferenceCategory", .text("")))
        }
        try insert(table: "DetailsKeyValues", values: [("DetailsKey", key)] + values)
        summary.templatesInserted += 1
    }

    private func writeManufacturer(_ m: ManufacturerUpsert, _ summary: inout ImportSummary) throws {
        let find = try db.cachedStatement(
            "SELECT mfgid FROM mfg WHERE \(CatalogSQL.trim("manufacturer")) = ? ORDER BY mfgid LIMIT 1")
        find.bind(m.name, at: 1)
        let id = try find.step() ? find.int64(0) : nil
        find.reset()
        if let id {
            if let logo = m.logo,
               try conditionalUpdate(table: "mfg", key: "mfgid", keyValue: .integer(id), values: [("logo", logo)]) {
                summary.manufacturersUpdated += 1
            }
            return
        }
        let next = (try db.scalarInt("SELECT coalesce(max(mfgid), 0) + 1 FROM mfg")) ?? 1
        try insert(table: "mfg", values: [("mfgid", .integer(next)), ("manufacturer", .text(m.name)), ("logo", m.logo ?? .text(""))])
        summary.manufacturersInserted += 1
    }
}

// MARK: Version rows

/// Writes the version row that makes a set of edits a new catalog version.
public enum VersionBump {
    /// The greatest versionid is already the largest integer SQLite holds (or a REAL past it):
    /// there is no next version to write.
    public struct Exhausted: Error, CustomStringConvertible {
        public var description: String {
            "the version table's greatest versionid is \(Int.max), the largest integer SQLite holds: there is no next version"
        }
    }

    public struct Result: Sendable, Equatable {
        public var version: Int
        public var catalogRow: Int64
        public var assetRow: Int64
    }

    /// Inserts version max+1 (1 for an empty table). updatecatalogrow / updateassetrow tell the
    /// original apps from which keyid / assetID on to download rows again: with change capture
    /// installed, the smallest row inserted or updated since the last version; when there is
    /// none (or no capture), one past the greatest (nothing to download). A given row only
    /// lowers that, never raises it: a higher one would make the apps skip changed rows. Runs
    /// in the caller's transaction when there is one, else in its own.
    @discardableResult
    public static func insert(_ db: Database, catalogRow: Int64? = nil, assetRow: Int64? = nil) throws -> Result {
        if !db.isInTransaction {
            return try db.transaction("IMMEDIATE") { try insert(db, catalogRow: catalogRow, assetRow: assetRow) }
        }
        var productRow: Int64? = nil
        var assetFrom: Int64? = nil
        if try ChangeCapture.isInstalled(db) {
            let s = try db.cachedStatement("""
                SELECT tbl, min(new_key) FROM cg_changes
                WHERE seq > (SELECT coalesce(max(seq), 0) FROM cg_versions) AND tbl IN ('P', 'A')
                  AND op IN ('I', 'U') AND typeof(new_key) = 'integer'
                GROUP BY tbl
                """)
            defer { s.reset() }
            while try s.step() {
                let v = s.int64(1)
                if s.text(0) == "P" { productRow = min(productRow ?? v, v) } else { assetFrom = min(assetFrom ?? v, v) }
            }
        }
        let catalogFrom = try productRow ?? (db.scalarInt("SELECT coalesce(max(keyid), 0) + 1 FROM \"Product_Catalog\"") ?? 1)
        let assetDefault = try assetFrom ?? (db.scalarInt("SELECT coalesce(max(assetID), 0) + 1 FROM \"Product_Assets\"") ?? 1)
        let catalogValue = min(catalogRow ?? catalogFrom, catalogFrom)
        let assetValue = min(assetRow ?? assetDefault, assetDefault)
        let current = try ChangeCapture.currentVersion(db)
        guard current < Int.max else { throw Exhausted() }
        let next = current + 1
        let s = try db.cachedStatement("INSERT INTO \"version\" (versionid, updatecatalogrow, updateassetrow) VALUES (?, ?, ?)")
        s.bind(next, at: 1); s.bind(catalogValue, at: 2); s.bind(assetValue, at: 3)
        try s.run()
        return Result(version: next, catalogRow: catalogValue, assetRow: assetValue)
    }
}
