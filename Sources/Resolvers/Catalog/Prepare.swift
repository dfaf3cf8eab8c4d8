import CSQLite

/// The gateway's own indexes on a Radiant catalog.
///
/// Real catalog files carry no indexes at all. The executor's queries are written so that these
/// indexes serve them (the same column lists, the same trim expressions built from
/// `CatalogSQL.ws`); without them the answers are the same, only slower. Every index is named with
/// a `cg_` prefix, so the gateway only ever creates or drops its own objects: the catalog's tables,
/// their rows and their definitions are never touched. No ANALYZE either (it would write
/// sqlite_stat1 into the catalog).
public enum CatalogPreparation {
    /// One `cg_` index: its name, table, the indexed expressions and, for a partial index, the
    /// condition of the rows it holds.
    public struct Index: Sendable, Equatable {
        public let name: String
        public let table: String
        public let columns: String
        public var condition: String? = nil

        private var definition: String { "\(name) ON \(table)(\(columns))" + (condition.map { " WHERE \($0)" } ?? "") }

        /// The statement that creates it (idempotent).
        public var createSQL: String { "CREATE INDEX IF NOT EXISTS \(definition)" }

        /// The text SQLite stores for it in sqlite_master (it drops `IF NOT EXISTS`).
        public var storedSQL: String { "CREATE INDEX \(definition)" }
    }

    /// The complete set, in creation order.
    public static let indexes: [Index] = [
        // Category pages in CATALOG order: cat = ? ORDER BY Manufacturer, displayorder, Product, keyid.
        Index(name: "cg_product_cat_order", table: "Product_Catalog",
              columns: "cat, Manufacturer, displayorder, Product, keyid"),
        // Unfiltered lists in CATALOG order.
        Index(name: "cg_product_catalog_order", table: "Product_Catalog",
              columns: "Manufacturer, displayorder, Product, keyid"),
        // NAME order, search, alphabet.
        Index(name: "cg_product_name", table: "Product_Catalog", columns: "Product COLLATE NOCASE, keyid"),
        // products(filter: {sku}): the stored value as text, whatever its type.
        Index(name: "cg_product_sku", table: "Product_Catalog", columns: "CAST(product_ID AS TEXT)"),
        // products(filter: {manufacturer}), manufacturers, Manufacturer.productCount.
        Index(name: "cg_product_mfg", table: "Product_Catalog", columns: CatalogSQL.trim("Manufacturer")),
        // Product.kit: kitID = product_ID ORDER BY assetID. Covering: a kit's rows are read from
        // the index alone, with no lookup in the table per item.
        Index(name: "cg_assets_kit", table: "Product_Assets", columns: "kitID, assetID, asset, kitQTY"),
        // search: the products whose text holds a NUL, which the trigram index cannot see past
        // (its tokenizer ends a text at U+0000); searches add them to its hits. Usually empty.
        nulText,
        // Category.children and descendants.
        Index(name: "cg_hierarchy_parent", table: "hierarchy", columns: "parent"),
        // Manufacturer.logo: lowest mfgid whose trimmed manufacturer equals the name.
        Index(name: "cg_mfg_name", table: "mfg", columns: "\(CatalogSQL.trim("manufacturer")), mfgid"),
    ]

    /// The format of the index set (`GatewayFormat`): bump it with any change to a definition.
    public static let format = 1
    static let indexFamily = "cg_indexes"

    static let nulText = Index(name: "cg_product_nul_text", table: "Product_Catalog", columns: "keyid",
                               condition: SearchIndex.nulTextCondition)

    /// Creates every missing `cg_` index (and recreates one whose definition differs from the
    /// current set) in one transaction. Returns the names it created, [] when all were present.
    /// Throws `CatalogFileError` naming the file when it is read-only, not a Radiant catalog, or
    /// cannot be written. What a newer gateway made (`newerObjects`) is left as it is unless
    /// `replacingNewer` (`prepare --downgrade`), which also drops the cg_ triggers this gateway
    /// does not know (a newer one's, which may write to tables replaced here).
    @discardableResult
    public static func prepare(_ db: Database, replacingNewer: Bool = false) throws -> [String] {
        if db.cannotWrite {
            // Prepared already (by another user, or before the file was made read-only): there is
            // nothing to add, and nothing to warn about.
            if (try? isPrepared(db)) == true { return [] }
            throw CatalogFileError(path: db.path, reason: "read-only; cannot add the gateway's cg_ indexes")
        }
        try requireTables(db)
        var created: [String] = []
        do {
            try db.transaction("IMMEDIATE") {
                let newerIndexes = try GatewayFormat.isNewer(db, family: indexFamily, than: format)
                if replacingNewer { created += try dropUnknownTriggers(db) }
                for index in indexes {
                    switch try storedSQL(db, index.name) {
                    case index.storedSQL?:
                        continue
                    case .some:
                        // Another definition of one of our own indexes: an older one is replaced,
                        // a newer gateway's left to it.
                        if newerIndexes && !replacingNewer { continue }
                        try db.execute("DROP INDEX \(index.name)")
                    case nil:
                        break
                    }
                    try db.execute(index.createSQL)
                    created.append(index.name)
                }
                if !created.isEmpty, !newerIndexes || replacingNewer {
                    try GatewayFormat.record(db, family: indexFamily, format: format)
                }
                created += try SearchIndex.install(db, replacingNewer: replacingNewer)
                created += try CategoryCounts.install(db, replacingNewer: replacingNewer)
                created += try ChangeCapture.install(db, replacingNewer: replacingNewer)
            }
        } catch let error as SQLiteError {
            throw CatalogFileError(path: db.path, reason: "cannot add the gateway's cg_ indexes: \(error.message)")
        } catch ChangeCaptureError.notACatalog(let reason) {
            throw CatalogFileError(path: db.path, reason: "not a Radiant catalog: \(reason)")
        } catch ChangeCaptureError.database(let error) {
            throw CatalogFileError(path: db.path, reason: "cannot add the gateway's change capture: \(error.message)")
        }
        return created
    }

    /// The families of gateway objects a newer gateway made, which `prepare` leaves as they are
    /// (and this gateway does without): `serve` logs them at start, `prepare` prints them.
    public static func newerObjects(_ db: Database) throws -> [GatewayFormat.Newer] {
        var out: [GatewayFormat.Newer] = []
        if try GatewayFormat.isNewer(db, family: indexFamily, than: format), try !missingIndexes(db).isEmpty {
            out.append(.init(family: indexFamily, stored: try GatewayFormat.stored(db, family: indexFamily) ?? 0, ours: format))
        }
        if try SearchIndex.isNewer(db) {
            out.append(.init(family: SearchIndex.table, stored: try GatewayFormat.stored(db, family: SearchIndex.table) ?? 0,
                             ours: SearchIndex.format))
        }
        if try CategoryCounts.isNewer(db) {
            out.append(.init(family: CategoryCounts.table, stored: try GatewayFormat.stored(db, family: CategoryCounts.table) ?? 0,
                             ours: CategoryCounts.format))
        }
        if try ChangeCapture.isNewer(db) {
            let stored = try db.scalarInt("SELECT format FROM cg_sync_state WHERE id = 1") ?? 0
            out.append(.init(family: "cg_changes", stored: Int(stored), ours: ChangeCapture.format))
        }
        return out
    }

    /// Drops every trigger named cg_ that this gateway does not create (`prepare --downgrade`).
    private static func dropUnknownTriggers(_ db: Database) throws -> [String] {
        let known = Set(SearchIndex.triggers.map(\.0) + CategoryCounts.triggers.map(\.name) + ChangeCapture.triggerNames())
        var unknown: [String] = []
        let s = try db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'cg\\_%' ESCAPE '\\'")
        while try s.step() { if let n = s.text(0), !known.contains(n) { unknown.append(n) } }
        for name in unknown { try db.execute("DROP TRIGGER \(quoteIdentifier(name))") }
        return unknown.map { $0 + " (a newer gateway's, dropped)" }
    }

    /// Whether every object `prepare` adds is present and current, so that it would add none.
    static func isPrepared(_ db: Database) throws -> Bool {
        try missingIndexes(db).isEmpty && SearchIndex.isInstalled(db) && ChangeCapture.isInstalled(db)
            && !ChangeCapture.detailsIndexMissing(db) && (CategoryCounts.isInstalled(db) || !CategoryCounts.eligible(db))
    }

    /// The names of the `cg_` indexes that are absent (or defined differently), in creation order.
    /// Reads only sqlite_master; works on a read-only connection.
    public static func missingIndexes(_ db: Database) throws -> [String] {
        do {
            return try indexes.filter { try storedSQL(db, $0.name) != $0.storedSQL }.map(\.name)
        } catch let error as SQLiteError {
            throw CatalogFileError(path: db.path, reason: "cannot read the schema: \(error.message)")
        }
    }

    private static func storedSQL(_ db: Database, _ name: String) throws(SQLiteError) -> String? {
        let s = try db.cachedStatement("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?")
        defer { s.reset() }
        s.bind(name, at: 1)
        return try s.step() ? s.text(0) : nil
    }

    private static func requireTables(_ db: Database) throws {
        let needed = ["Product_Catalog", "Product_Assets", "hierarchy", "mfg"]
        var missing: [String] = []
        do {
            for name in needed where try !db.tableExists(name) { missing.append(name) }
        } catch {
            // SQLite's message, explained: a lock is a lock, not a file that is no catalog.
            throw CatalogFileError(path: db.path, reason: error.message)
        }
        if !missing.isEmpty {
            let list = missing.joined(separator: ", ")
            throw CatalogFileError(path: db.path,
                                   reason: "not a Radiant catalog: missing table\(missing.count > 1 ? "s" : "") \(list)")
        }
        // Every table and column the queries read, as `query` and `serve` check them: a file
        // they refuse is not written to either.
        do {
            _ = try CatalogLayout(db: db, path: db.path)
        } catch let error as CatalogError {
            throw CatalogFileError(path: db.path, reason: error.message)
        }
    }
}
