import CSQLite
import Schema

/// The ids a CatalogChangeSet lists for (since, version] (SYNC.md); the executor loads the
/// products and categories themselves in their current state.
public struct ChangeSet: Sendable, Equatable {
    /// The `to` end of the range: the version the client holds after applying this set.
    public var version: Int
    /// keyids of products changed in (since, version] that exist now, ascending.
    public var productIDs: [Int64]
    /// keyids of products deleted in the range that existed at `since` and do not exist now.
    public var removedProductIDs: [Int64]
    /// hierarchy ids of categories changed in the range that exist now, ascending.
    public var categoryIDs: [Int64]
    /// hierarchy ids deleted in the range that existed at `since` and do not exist now.
    public var removedCategoryIDs: [Int64]

    public init(version: Int, productIDs: [Int64] = [], removedProductIDs: [Int64] = [],
                categoryIDs: [Int64] = [], removedCategoryIDs: [Int64] = []) {
        self.version = version; self.productIDs = productIDs; self.removedProductIDs = removedProductIDs
        self.categoryIDs = categoryIDs; self.removedCategoryIDs = removedCategoryIDs
    }

    public var isEmpty: Bool {
        productIDs.isEmpty && removedProductIDs.isEmpty && categoryIDs.isEmpty && removedCategoryIDs.isEmpty
    }
}

/// Why a change set cannot be computed. `code` is the GraphQL error's extensions.code.
public enum ChangeSetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `since` is older than the retained history: negative, from before change capture was
    /// installed, or compacted away. `oldest` is the oldest version still answered (nil when
    /// the catalog has no change capture).
    case expired(since: Int, oldest: Int?)
    /// `since` (or `to`) is greater than the catalog's current version.
    case ahead(since: Int, current: Int)
    case database(SQLiteError)

    /// extensions.code: CHANGES_EXPIRED, VERSION_AHEAD, or INTERNAL_SERVER_ERROR.
    public var code: String {
        switch self {
        case .expired: return "CHANGES_EXPIRED"
        case .ahead: return "VERSION_AHEAD"
        case .database: return "INTERNAL_SERVER_ERROR"
        }
    }

    /// The GraphQL error message.
    public var message: String {
        switch self {
        case .expired(let since, let oldest?):
            return "Changes since version \(since) are no longer available: the oldest version that can be resumed from is \(oldest). Refetch the catalog."
        case .expired(let since, nil):
            return "Changes since version \(since) are not available. Refetch the catalog."
        case .ahead(let since, let current):
            return "Version \(since) is ahead of the catalog's current version \(current). Refetch the catalog."
        case .database(let e):
            return "Catalog read failed: \(e.message)"
        }
    }

    public var description: String { "\(code): \(message)" }

    public static func == (a: ChangeSetError, b: ChangeSetError) -> Bool {
        switch (a, b) {
        case let (.expired(s1, o1), .expired(s2, o2)): return s1 == s2 && o1 == o2
        case let (.ahead(s1, c1), .ahead(s2, c2)): return s1 == s2 && c1 == c2
        case let (.database(e1), .database(e2)): return e1.code == e2.code && e1.message == e2.message
        default: return false
        }
    }
}

/// How change sets are derived for a catalog.
public enum ChangeSetMode: Sendable, Equatable {
    /// Change capture is installed: exact sets from the change log (SYNC.md).
    case captured
    /// No change capture (read-only catalog): the original apps' rule — products with keyid >=
    /// the version row's updatecatalogrow, and those owning Product_Assets rows with assetID >=
    /// updateassetrow; no categories; nothing is ever removed.
    case versionRows
}

/// Computes change sets. Every method only runs SELECTs, on the caller's connection and inside
/// the caller's read transaction (one consistent snapshot per operation).
public enum ChangeSets {
    /// `captured` when change capture is installed in this catalog, else `versionRows`.
    public static func mode(_ db: Database) throws(SQLiteError) -> ChangeSetMode {
        guard try ChangeCapture.state(db) != nil else { return .versionRows }
        return try ChangeCapture.isInstalled(db) ? .captured : .versionRows
    }

    /// The oldest version a change set can be computed from (nil without change capture): what
    /// a CHANGES_EXPIRED error names.
    public static func oldestResumable(_ db: Database) throws(SQLiteError) -> Int? {
        guard try mode(db) == .captured else { return nil }
        return try ChangeCapture.state(db)?.oldestVersion
    }

    /// The change set for (since, to]; `to` nil means the current version.
    public static func compute(_ db: Database, since: Int, to: Int? = nil) throws(ChangeSetError) -> ChangeSet {
        do {
            let current = try ChangeCapture.currentVersion(db)
            let to = to ?? current
            if since > current { throw ChangeSetError.ahead(since: since, current: current) }
            if to > current { throw ChangeSetError.ahead(since: to, current: current) }
            switch try mode(db) {
            case .captured:
                guard let state = try ChangeCapture.state(db) else { throw ChangeSetError.expired(since: since, oldest: nil) }
                if since < 0 || since < state.oldestVersion {
                    throw ChangeSetError.expired(since: since, oldest: state.oldestVersion)
                }
                if since >= to { return ChangeSet(version: to) }
                return try captured(db, since: since, to: to, oldest: state.oldestVersion)
            case .versionRows:
                if since < 0 { throw ChangeSetError.expired(since: since, oldest: nil) }
                if since >= to { return ChangeSet(version: to) }
                return try versionRows(db, since: since, to: to)
            }
        } catch let e as ChangeSetError {
            throw e
        } catch let e as SQLiteError {
            throw .database(e)
        } catch {
            throw .database(SQLiteError(code: SQLITE_ERROR, message: "\(error)"))
        }
    }

    // MARK: Captured

    /// One row of cg_changes.
    private struct Change {
        let table: UInt8   // P A H D M
        let op: UInt8      // I U D, or R: a row an INSERT/UPDATE OR REPLACE was about to replace
        let oldKey: SQLValue
        let newKey: SQLValue
        let oldRef: String?
        let newRef: String?

        static let insert = UInt8(ascii: "I"), update = UInt8(ascii: "U"), delete = UInt8(ascii: "D")
        static let replace = UInt8(ascii: "R")
    }

    /// Turns 'R' notes into deletions: a note counts when the next change naming its key is the
    /// insert or update that put a new row under that key (the replacement happened); any other
    /// next change (INSERT OR IGNORE left the row, or recursive_triggers recorded the deletion
    /// itself) drops it. A note and its insert come from one statement, so never straddle a
    /// version mark.
    private struct ReplaceResolver {
        struct HoldKey: Hashable {
            let table: UInt8
            let key: SQLValue
        }
        var held: [HoldKey: Change] = [:]

        mutating func feed(_ c: Change, _ emit: (Change) -> Void) {
            if c.op == Change.replace {
                held[HoldKey(table: c.table, key: c.oldKey)] = c
                return
            }
            if !held.isEmpty {
                for key in [c.oldKey, c.newKey] where key != .null {
                    guard let r = held.removeValue(forKey: HoldKey(table: c.table, key: key)) else { continue }
                    if (c.op == Change.insert || c.op == Change.update) && c.newKey == key {
                        emit(Change(table: r.table, op: Change.delete, oldKey: r.oldKey, newKey: .null,
                                    oldRef: r.oldRef, newRef: nil))
                    }
                }
            }
            emit(c)
        }
    }

    /// Per-key bookkeeping of a row-identified table (Product_Catalog, hierarchy).
    private struct KeyHistory {
        /// keys named by any change in the range.
        var touched: Set<Int64> = []
        /// Whether the key's row existed at `since`: from the first change naming it.
        var existedAtSince: [Int64: Bool] = [:]
        /// Whether the key's row existed at `to`: from the last change naming it.
        var existsAtTo: [Int64: Bool] = [:]
        /// Whether the row existed at `to`, for keys changed after `to` (by changes pending or
        /// of later versions): from the first such change.
        var existedBeforeLater: [Int64: Bool] = [:]

        /// Records a change of `old` -> `new` (nil = no row on that side) inside the range.
        mutating func note(old: Int64?, new: Int64?) {
            if let old {
                touched.insert(old)
                if existedAtSince[old] == nil { existedAtSince[old] = true }
                existsAtTo[old] = (old == new)
            }
            if let new {
                touched.insert(new)
                if existedAtSince[new] == nil { existedAtSince[new] = (new == old) }
                existsAtTo[new] = true
            }
        }

        /// Records a change after `to`.
        mutating func noteLater(old: Int64?, new: Int64?) {
            if let old, existedBeforeLater[old] == nil { existedBeforeLater[old] = true }
            if let new, existedBeforeLater[new] == nil { existedBeforeLater[new] = (new == old) }
        }

        /// Whether `key`'s row existed at `to`, given whether it exists now.
        func existedAtTo(_ key: Int64, existsNow: Bool) -> Bool {
            existsAtTo[key] ?? existedBeforeLater[key] ?? existsNow
        }
    }

    private static func captured(_ db: Database, since: Int, to: Int, oldest: Int) throws -> ChangeSet {
        // Version boundaries: a change belongs to the first version whose mark is >= its seq.
        let marks = try db.cachedStatement("""
            SELECT versionid, seq FROM cg_versions WHERE versionid <= ? ORDER BY versionid DESC LIMIT 1
            """)
        func mark(_ v: Int) throws -> Int64? {
            marks.reset()
            marks.bind(v, at: 1)
            defer { marks.reset() }
            return try marks.step() ? marks.int64(1) : nil
        }
        guard let lo = try mark(since) else { throw ChangeSetError.expired(since: since, oldest: oldest) }
        guard let hi = try mark(to), hi > lo else { return ChangeSet(version: to) }

        var boundaries: [Int64] = []
        let b = try db.cachedStatement("SELECT seq FROM cg_versions WHERE versionid > ? AND versionid <= ? ORDER BY versionid")
        b.bind(since, at: 1); b.bind(to, at: 2)
        while try b.step() { boundaries.append(b.int64(0)) }
        b.reset()

        var products = KeyHistory()
        var categories = KeyHistory()
        // hierarchy existence per version: (bucket, id) -> (existed before the version, after)
        var existence: [HierarchyBucketKey: (before: Bool, after: Bool)] = [:]
        var kitRefs: Set<ExactString> = []
        var detailKeys: Set<Int64> = []
        var makerNames: Set<ExactString> = []

        let s = try db.cachedStatement("""
            SELECT seq, tbl, op, old_key, new_key, old_ref, new_ref FROM cg_changes
            WHERE seq > ? AND seq <= ? ORDER BY seq
            """)
        s.bind(lo, at: 1); s.bind(hi, at: 2)
        defer { s.reset() }
        var bucket = 0
        var resolver = ReplaceResolver()
        func process(_ c: Change) {
            let (old, new) = sides(c)
            switch c.table {
            case UInt8(ascii: "P"):
                products.note(old: old.flatMap(intKey), new: new.flatMap(intKey))
            case UInt8(ascii: "H"):
                let o = old.flatMap(intKey), n = new.flatMap(intKey)
                categories.note(old: o, new: n)
                if let o {
                    let k = HierarchyBucketKey(bucket: bucket, id: o)
                    let before = existence[k]?.before ?? true
                    existence[k] = (before, o == n)
                }
                if let n, n != o {
                    let k = HierarchyBucketKey(bucket: bucket, id: n)
                    let before = existence[k]?.before ?? false
                    existence[k] = (before, true)
                }
            case UInt8(ascii: "A"):
                if let r = c.oldRef { kitRefs.insert(ExactString(r)) }
                if let r = c.newRef { kitRefs.insert(ExactString(r)) }
            case UInt8(ascii: "D"):
                if let k = old.flatMap(intKey) { detailKeys.insert(k) }
                if let k = new.flatMap(intKey) { detailKeys.insert(k) }
            case UInt8(ascii: "M"):
                if let r = c.oldRef { makerNames.insert(ExactString(r.trimmedASCII)) }
                if let r = c.newRef { makerNames.insert(ExactString(r.trimmedASCII)) }
            default:
                break
            }
        }
        while try s.step() {
            let seq = s.int64(0)
            while bucket < boundaries.count - 1 && seq > boundaries[bucket] { bucket += 1 }
            let table = s.withText(1) { $0.first ?? 0 }
            let op = s.withText(2) { $0.first ?? 0 }
            resolver.feed(Change(table: table, op: op, oldKey: s.value(3), newKey: s.value(4),
                                 oldRef: s.isNull(5) ? nil : s.text(5), newRef: s.isNull(6) ? nil : s.text(6)),
                          process)
        }
        var existenceChanged: Set<Int64> = []
        for (k, v) in existence where v.before != v.after { existenceChanged.insert(k.id) }

        // Products: own rows that exist now, plus every current product a related change names.
        let ownProducts = try existing(db, "SELECT keyid FROM \"Product_Catalog\" WHERE keyid IN (SELECT value FROM json_each(?))",
                                       Array(products.touched))
        var changed = ownProducts
        let columns = Set(try db.columns(of: "Product_Catalog").map { $0.lowercased() })
        // The refs are read as served (text that is not UTF-8 repaired with U+FFFD), so they
        // are compared with the product_ID and Manufacturer as served, as the kit and the logo
        // are (`ProductSQL.splitNames`): plain text in one IN list, text holding U+FFFD through
        // cg_served_text, text holding a NUL (which json_each would cut) bound on its own.
        if !kitRefs.isEmpty {
            let (plain, served, alone) = ProductSQL.splitNames(kitRefs.map(\.value))
            // The kit of a product is the rows whose kitID is exactly the product_ID's text
            // (SEMANTICS.md): the stored value as text, which cg_product_sku indexes (a REAL or a
            // BLOB product_ID too, which the column itself would compare with the text's
            // integer affinity, and never equal); each row found is checked against the refs.
            func collect(_ q: Statement) throws {
                while try q.step() {
                    if let t = q.text(1), kitRefs.contains(ExactString(t)) { changed.insert(q.int64(0)) }
                }
            }
            for (list, column) in [(plain, Self.productIDText), (served, "cg_served_text(\"product_ID\")")] where !list.isEmpty {
                let q = try db.cachedStatement("""
                    SELECT keyid, \(column) FROM "Product_Catalog" WHERE \(column) IN (SELECT value FROM json_each(?))
                    """)
                defer { q.reset() }
                q.bind(jsonArray(list), at: 1)
                try collect(q)
            }
            for ref in alone {
                let column = ProductSQL.needsServedText(ref) ? "cg_served_text(\"product_ID\")" : Self.productIDText
                let q = try db.cachedStatement("SELECT keyid, \(column) FROM \"Product_Catalog\" WHERE \(column) = ?")
                defer { q.reset() }
                q.bind(ref, at: 1)
                try collect(q)
            }
        }
        if !detailKeys.isEmpty && columns.contains("info_detailskey") {
            let q = try db.cachedStatement("""
                SELECT keyid, "info_DetailsKey" FROM "Product_Catalog"
                WHERE \(ChangeCapture.detailsKeyExpression) IN (SELECT value FROM json_each(?))
                """)
            defer { q.reset() }
            q.bind(jsonArray(Array(detailKeys)), at: 1)
            while try q.step() {
                if let k = q.text(1)?.trimmedASCII.strictInteger, detailKeys.contains(k) { changed.insert(q.int64(0)) }
            }
        }
        if !makerNames.isEmpty {
            let (plain, served, alone) = ProductSQL.splitNames(makerNames.map(\.value))
            let trimmed = CatalogSQL.trim("\"Manufacturer\"")
            for (list, column) in [(plain, trimmed), (served, "cg_served_text(\(trimmed))")] where !list.isEmpty {
                let q = try db.cachedStatement(
                    "SELECT keyid FROM \"Product_Catalog\" WHERE \(column) IN (SELECT value FROM json_each(?))")
                defer { q.reset() }
                q.bind(jsonArray(list), at: 1)
                while try q.step() { changed.insert(q.int64(0)) }
            }
            for name in alone {
                let column = ProductSQL.needsServedText(name) ? "cg_served_text(\(trimmed))" : trimmed
                let q = try db.cachedStatement("SELECT keyid FROM \"Product_Catalog\" WHERE \(column) = ?")
                defer { q.reset() }
                q.bind(name, at: 1)
                while try q.step() { changed.insert(q.int64(0)) }
            }
        }
        if !existenceChanged.isEmpty {
            let q = try db.cachedStatement("""
                SELECT keyid FROM "Product_Catalog" WHERE cat IN (SELECT value FROM json_each(?))
                """)
            defer { q.reset() }
            q.bind(jsonArray(Array(existenceChanged)), at: 1)
            while try q.step() { changed.insert(q.int64(0)) }
        }

        // Categories: own rows that exist now, plus the children of rows that appeared or went.
        let ownCategories = try existing(db, "SELECT id FROM hierarchy WHERE id IN (SELECT value FROM json_each(?))",
                                         Array(categories.touched))
        var changedCategories = ownCategories
        if !existenceChanged.isEmpty {
            let q = try db.cachedStatement("SELECT id FROM hierarchy WHERE parent IN (SELECT value FROM json_each(?))")
            defer { q.reset() }
            q.bind(jsonArray(Array(existenceChanged)), at: 1)
            while try q.step() { changedCategories.insert(q.int64(0)) }
        }

        // Membership is decided by the catalog's state at `to`; rows are served as they are now.
        // A row that exists now but not at `to` (deleted in the range and inserted again by a
        // change not yet in a version) is removed, not listed: its insertion reaches the client
        // with the next version. Without this, a client could keep a row that a later version
        // inserts and deletes again (docs/SYNC.md, "Pending changes").
        try laterChanges(db, after: hi, products: &products, categories: &categories)
        let listedProducts = changed.filter { products.existedAtTo($0, existsNow: true) }
        let listedCategories = changedCategories.filter { categories.existedAtTo($0, existsNow: true) }
        // Removed: named by a change in the range, existed at `since`, not at `to` (nor now).
        let removedProducts = products.touched.filter {
            products.existedAtSince[$0] == true && !products.existedAtTo($0, existsNow: ownProducts.contains($0))
        }
        let removedCategories = categories.touched.filter {
            categories.existedAtSince[$0] == true && !categories.existedAtTo($0, existsNow: ownCategories.contains($0))
        }
        return ChangeSet(version: to, productIDs: listedProducts.sorted(), removedProductIDs: removedProducts.sorted(),
                         categoryIDs: listedCategories.sorted(), removedCategoryIDs: removedCategories.sorted())
    }

    /// Notes the Product_Catalog and hierarchy changes recorded after `to`'s mark (pending, or
    /// of versions after `to`).
    private static func laterChanges(_ db: Database, after hi: Int64, products: inout KeyHistory,
                                     categories: inout KeyHistory) throws {
        let s = try db.cachedStatement("""
            SELECT tbl, op, old_key, new_key FROM cg_changes WHERE seq > ? AND tbl IN ('P', 'H') ORDER BY seq
            """)
        defer { s.reset() }
        s.bind(hi, at: 1)
        var resolver = ReplaceResolver()
        func process(_ c: Change) {
            let (old, new) = sides(c)
            if c.table == UInt8(ascii: "P") {
                products.noteLater(old: old.flatMap(intKey), new: new.flatMap(intKey))
            } else {
                categories.noteLater(old: old.flatMap(intKey), new: new.flatMap(intKey))
            }
        }
        while try s.step() {
            let table = s.withText(0) { $0.first ?? 0 }
            let op = s.withText(1) { $0.first ?? 0 }
            resolver.feed(Change(table: table, op: op, oldKey: s.value(2), newKey: s.value(3), oldRef: nil, newRef: nil),
                          process)
        }
    }

    private struct HierarchyBucketKey: Hashable {
        let bucket: Int
        let id: Int64
    }

    /// The key on each side of a change (nil where that side has no row).
    private static func sides(_ c: Change) -> (old: SQLValue?, new: SQLValue?) {
        switch c.op {
        case UInt8(ascii: "I"): return (nil, c.newKey)
        case UInt8(ascii: "D"): return (c.oldKey, nil)
        default: return (c.oldKey, c.newKey)
        }
    }

    /// Integer keys only (rowid aliases always are; a DetailsKey stored as text matches no
    /// product, whose info_DetailsKey names an integer).
    private static func intKey(_ v: SQLValue) -> Int64? {
        if case .integer(let i) = v { return i }
        return nil
    }

    /// The subset of `ids` the one-column `sql` (ids bound as a JSON array) returns.
    private static func existing(_ db: Database, _ sql: String, _ ids: [Int64]) throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        let q = try db.cachedStatement(sql)
        defer { q.reset() }
        q.bind(jsonArray(ids), at: 1)
        var out: Set<Int64> = []
        while try q.step() { out.insert(q.int64(0)) }
        return out
    }

    // MARK: Version rows (no capture)

    /// A set may cover several versions (two quick bumps, a client resuming): each version row
    /// in (since, to] asks for the rows from its updatecatalogrow / updateassetrow on, so the set
    /// holds the rows from the least of them.
    private static func versionRows(_ db: Database, since: Int, to: Int) throws -> ChangeSet {
        let v = try db.cachedStatement(
            "SELECT updatecatalogrow, updateassetrow FROM \"version\" WHERE versionid > ? AND versionid <= ?")
        defer { v.reset() }
        v.bind(since, at: 1)
        v.bind(to, at: 2)
        var catalogRow: Int64?
        var assetRow: Int64?
        while try v.step() {
            if let r = rowNumber(v, 0) { catalogRow = min(catalogRow ?? r, r) }
            if let r = rowNumber(v, 1) { assetRow = min(assetRow ?? r, r) }
        }
        v.reset()
        var ids: Set<Int64> = []
        if let catalogRow {
            let q = try db.cachedStatement("SELECT keyid FROM \"Product_Catalog\" WHERE keyid >= ?")
            defer { q.reset() }
            q.bind(catalogRow, at: 1)
            while try q.step() { ids.insert(q.int64(0)) }
        }
        if let assetRow {
            var kits: Set<ExactString> = []
            let a = try db.cachedStatement("SELECT DISTINCT \"kitID\" FROM \"Product_Assets\" WHERE \"assetID\" >= ?")
            a.bind(assetRow, at: 1)
            while try a.step() { if let t = a.text(0) { kits.insert(ExactString(t)) } }
            a.reset()
            if !kits.isEmpty {
                let q = try db.cachedStatement("""
                    SELECT keyid, \(Self.productIDText) FROM "Product_Catalog" WHERE \(Self.productIDText) IN (SELECT value FROM json_each(?))
                    """)
                defer { q.reset() }
                q.bind(jsonArray(kits.map(\.value)), at: 1)
                while try q.step() {
                    if let t = q.text(1), kits.contains(ExactString(t)) { ids.insert(q.int64(0)) }
                }
            }
        }
        return ChangeSet(version: to, productIDs: ids.sorted())
    }

    /// updatecatalogrow / updateassetrow as a row number: an integer, or a text of plain digits.
    private static func rowNumber(_ s: Statement, _ i: Int32) -> Int64? {
        switch s.type(i) {
        case .integer: return s.int64(i)
        case .real:
            let d = s.double(i)
            return d == d.rounded() && abs(d) < 9e18 ? Int64(d) : nil
        case .text: return s.text(i)?.plainDigits
        default: return nil
        }
    }

    // MARK: Helpers

    /// A product's product_ID as the text its kit rows name (cg_product_sku's expression).
    static let productIDText = "CAST(\"product_ID\" AS TEXT)"

    static func jsonArray(_ values: [Int64]) -> String {
        "[" + values.map(String.init).joined(separator: ",") + "]"
    }

    static func jsonArray(_ values: [String]) -> String {
        var w = JSONWriter(capacity: 16 * values.count + 2)
        w.json(.array(values.map { .string($0) }))
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
