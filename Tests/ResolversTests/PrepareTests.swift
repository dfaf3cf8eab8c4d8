import CSQLite
import Foundation
import Testing
@testable import Resolvers

@Suite struct PrepareTests {
    private let searchObjects = ["cg_search", "cg_search_insert", "cg_search_update", "cg_search_delete"]
    private let captureObjects = ChangeCapture.objectNames
    private let countObjects = ["cg_category_counts", "cg_category_counts_cat", "cg_category_counts_pending",
                                "cg_counts_bi", "cg_counts_ai", "cg_counts_bu", "cg_counts_au", "cg_counts_ad"]
    private let expectedNames = [
        "cg_product_cat_order", "cg_product_catalog_order", "cg_product_name", "cg_product_sku",
        "cg_product_mfg", "cg_assets_kit", "cg_product_nul_text", "cg_hierarchy_parent", "cg_mfg_name",
    ]

    /// A fresh demo catalog in its own directory; `cleanup` removes it.
    private func catalog(products: Int = 560) throws -> (path: String, cleanup: () -> Void) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cg-prepare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("catalog.sqlite").path
        try DemoCatalog(products: products).write(to: path)
        return (path, { try? FileManager.default.removeItem(at: dir) })
    }

    private func schema(_ db: Database, type: String) throws -> [String] {
        let s = try db.prepare("SELECT name || ': ' || coalesce(sql, '') FROM sqlite_master WHERE type = ? ORDER BY name")
        s.bind(type, at: 1)
        var out: [String] = []
        while try s.step() { out.append(s.text(0) ?? "") }
        return out
    }

    private func snapshot(_ db: Database) throws -> [String: [[SQLValue]]] {
        var all: [String: [[SQLValue]]] = [:]
        for table in CatalogSQL.radiantTables { all[table] = try catalogRows(db, table) }
        return all
    }

    @Test func createsTheEightIndexesOnce() throws {
        let (path, cleanup) = try catalog()
        defer { cleanup() }
        let db = try Database(path: path, readOnly: false)
        #expect(try CatalogPreparation.missingIndexes(db) == expectedNames)
        #expect(try CatalogPreparation.prepare(db) == expectedNames + searchObjects + countObjects + captureObjects)
        #expect(try CatalogPreparation.missingIndexes(db) == [])
        let indexesAfterFirst = try schema(db, type: "index")
        #expect(try CatalogPreparation.prepare(db) == [])
        #expect(try schema(db, type: "index") == indexesAfterFirst)
        #expect(CatalogPreparation.indexes.map(\.name) == expectedNames)
    }

    @Test func storesTheExactExpressionsTheExecutorUses() throws {
        let (path, cleanup) = try catalog(products: 50)
        defer { cleanup() }
        let db = try Database(path: path, readOnly: false)
        try CatalogPreparation.prepare(db)
        let stored = try schema(db, type: "index").filter { $0.hasPrefix("cg_") }
        #expect(stored == [
            "cg_assets_kit: CREATE INDEX cg_assets_kit ON Product_Assets(kitID, assetID, asset, kitQTY)",
            "cg_category_counts_cat: CREATE UNIQUE INDEX cg_category_counts_cat ON cg_category_counts(cat)",
            "cg_hierarchy_parent: CREATE INDEX cg_hierarchy_parent ON hierarchy(parent)",
            "cg_mfg_name: CREATE INDEX cg_mfg_name ON mfg(trim(manufacturer, char(32,9,10,13,11,12)), mfgid)",
            "cg_product_cat_order: CREATE INDEX cg_product_cat_order ON Product_Catalog(cat, Manufacturer, displayorder, Product, keyid)",
            "cg_product_catalog_order: CREATE INDEX cg_product_catalog_order ON Product_Catalog(Manufacturer, displayorder, Product, keyid)",
            "cg_product_details_key: CREATE INDEX cg_product_details_key ON Product_Catalog(CAST(trim(info_DetailsKey, char(32,9,10,13,11,12)) AS INTEGER))",
            "cg_product_mfg: CREATE INDEX cg_product_mfg ON Product_Catalog(trim(Manufacturer, char(32,9,10,13,11,12)))",
            "cg_product_name: CREATE INDEX cg_product_name ON Product_Catalog(Product COLLATE NOCASE, keyid)",
            "cg_product_nul_text: CREATE INDEX cg_product_nul_text ON Product_Catalog(keyid) WHERE instr(\"Product\", char(0)) > 0 OR instr(\"description\", char(0)) > 0 OR instr(\"Manufacturer\", char(0)) > 0",
            "cg_product_sku: CREATE INDEX cg_product_sku ON Product_Catalog(CAST(product_ID AS TEXT))",
        ])
    }

    @Test(arguments: [
        ("SELECT keyid FROM Product_Catalog WHERE cat = 4 ORDER BY Manufacturer, displayorder, Product, keyid", "cg_product_cat_order"),
        ("SELECT keyid FROM Product_Catalog ORDER BY Manufacturer, displayorder, Product, keyid LIMIT 50", "cg_product_catalog_order"),
        ("SELECT keyid FROM Product_Catalog ORDER BY Product COLLATE NOCASE, keyid LIMIT 50", "cg_product_name"),
        ("SELECT keyid FROM Product_Catalog p WHERE CAST(p.\"product_ID\" AS TEXT) = 'K1011'", "cg_product_sku"),
        ("SELECT keyid FROM Product_Catalog WHERE trim(Manufacturer, char(32,9,10,13,11,12)) = 'ARRI'", "cg_product_mfg"),
        ("SELECT assetID, asset FROM Product_Assets WHERE kitID = '10000' ORDER BY assetID", "cg_assets_kit"),
        // Product.kit's statement reads the index alone.
        ("SELECT j.key, a.assetID, a.asset, CAST(a.kitQTY AS INTEGER) FROM json_each('[\"1\"]') AS j JOIN Product_Assets AS a ON a.kitID = j.value", "COVERING INDEX cg_assets_kit"),
        ("SELECT id FROM hierarchy WHERE parent = 1 ORDER BY id", "cg_hierarchy_parent"),
        ("SELECT logo FROM mfg WHERE trim(manufacturer, char(32,9,10,13,11,12)) = 'ARRI' ORDER BY mfgid LIMIT 1", "cg_mfg_name"),
        // search's hits: the rows whose text holds a NUL, from the partial index alone.
        ("SELECT keyid FROM Product_Catalog WHERE \(SearchIndex.nulTextCondition)", "cg_product_nul_text"),
    ])
    func queriesUseTheIndexes(sql: String, index: String) throws {
        let (path, cleanup) = try catalog(products: 200)
        defer { cleanup() }
        let db = try Database(path: path, readOnly: false)
        try CatalogPreparation.prepare(db)
        let plan = try db.prepare("EXPLAIN QUERY PLAN " + sql)
        var details: [String] = []
        while try plan.step() { details.append(plan.text(3) ?? "") }
        #expect(details.contains { $0.contains(index) }, "\(details)")
    }

    @Test func leavesTheCatalogTablesUntouched() throws {
        let (path, cleanup) = try catalog()
        defer { cleanup() }
        let before: (tables: [String], rows: [String: [[SQLValue]]])
        do {
            let db = try Database(path: path, readOnly: true)
            before = (try schema(db, type: "table"), try snapshot(db))
        }
        do {
            let db = try Database(path: path, readOnly: false)
            try CatalogPreparation.prepare(db)
        }
        let db = try Database(path: path, readOnly: true)
        #expect(try schema(db, type: "table").filter { !$0.hasPrefix("cg_") } == before.tables)
        #expect(try snapshot(db) == before.rows)
        // No statistics either.
        #expect(try !db.tableExists("sqlite_stat1"))
        #expect(try schema(db, type: "index").filter { !$0.hasPrefix("cg_") }.map { $0.prefix { $0 != ":" } }
                == ["sqlite_autoindex_DetailsKeyValues_1", "sqlite_autoindex_rfq_1"])
    }

    @Test func replacesAnOutdatedDefinitionOfItsOwnIndex() throws {
        let (path, cleanup) = try catalog(products: 50)
        defer { cleanup() }
        let db = try Database(path: path, readOnly: false)
        try db.execute("CREATE INDEX cg_product_sku ON Product_Catalog(Product)")
        #expect(try CatalogPreparation.missingIndexes(db) == expectedNames)
        #expect(try CatalogPreparation.prepare(db) == expectedNames + searchObjects + countObjects + captureObjects)
        #expect(try schema(db, type: "index").contains(
            "cg_product_sku: CREATE INDEX cg_product_sku ON Product_Catalog(CAST(product_ID AS TEXT))"))
    }

    @Test func refusesAReadOnlyConnection() throws {
        let (path, cleanup) = try catalog(products: 50)
        defer { cleanup() }
        let db = try Database(path: path, readOnly: true)
        #expect(try CatalogPreparation.missingIndexes(db) == expectedNames)
        do {
            try CatalogPreparation.prepare(db)
            Issue.record("expected an error")
        } catch let error as CatalogFileError {
            #expect(error.path == path)
            #expect(error.reason == "read-only; cannot add the gateway's cg_ indexes")
        }
    }

    @Test func refusesAFileOpenedReadWriteThatIsReadOnly() throws {
        let (path, cleanup) = try catalog(products: 50)
        defer { cleanup() }
        // mode=ro in the URI: a read-write open that SQLite downgrades, as for a write-protected
        // file (root ignores chmod, so the URI stands in for it).
        let db = try Database(path: "file:\(path)?mode=ro", readOnly: false)
        #expect(throws: CatalogFileError.self) { try CatalogPreparation.prepare(db) }
        if geteuid() != 0 {
            chmod(path, 0o444)
            let protected = try Database(path: path, readOnly: false)
            #expect(throws: CatalogFileError.self) { try CatalogPreparation.prepare(protected) }
        }
        let check = try Database(path: path, readOnly: true)
        #expect(try CatalogPreparation.missingIndexes(check) == expectedNames)
    }

    @Test func refusesAFileThatIsNotACatalog() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cg-prepare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        let empty = dir.appendingPathComponent("empty.sqlite").path
        let db = try Database(path: empty, readOnly: false, create: true)
        try db.execute("CREATE TABLE hierarchy (id integer)")
        do {
            try CatalogPreparation.prepare(db)
            Issue.record("expected an error")
        } catch let error as CatalogFileError {
            #expect(error.reason == "not a Radiant catalog: missing tables Product_Catalog, Product_Assets, mfg")
        }

        let text = dir.appendingPathComponent("notes.txt").path
        try Data(String(repeating: "not a database\n", count: 100).utf8).write(to: URL(fileURLWithPath: text))
        let notDB = try Database(path: text, readOnly: false)
        do {
            try CatalogPreparation.prepare(notDB)
            Issue.record("expected an error")
        } catch let error as CatalogFileError {
            #expect(error.description == "\(text): not an SQLite database")
        }
    }

    /// A catalog without a column the queries read is refused as `query` and `serve` refuse it,
    /// and nothing is written to it.
    @Test(arguments: [("hierarchy", "menu_title"), ("version", "updatecatalogrow"), ("Product_Catalog", "Manufacturer")])
    func refusesACatalogMissingAColumnAndWritesNothing(table: String, column: String) throws {
        let (path, cleanup) = try catalog(products: 20)
        defer { cleanup() }
        let db = try Database(path: path, readOnly: false)
        try db.execute("ALTER TABLE \(table) DROP COLUMN \(column)")
        let before = try schema(db, type: "index") + schema(db, type: "table") + schema(db, type: "trigger")
        do {
            try CatalogPreparation.prepare(db)
            Issue.record("expected an error")
        } catch let error as CatalogFileError {
            #expect(error.reason == "not a Radiant catalog: column \(table).\(column) is missing")
        }
        #expect(try schema(db, type: "index") + schema(db, type: "table") + schema(db, type: "trigger") == before)
    }
}
