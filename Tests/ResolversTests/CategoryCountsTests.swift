import Foundation
import Testing
@testable import Resolvers
import Schema

/// cg_category_counts answers `totalCount` and `productCount` for categories, and its triggers
/// keep it equal to `GROUP BY cat` whatever the writer does (REPLACE and IGNORE included).
@Suite struct CategoryCountsTests {
    /// The counts as the table holds them (zeros dropped) and as GROUP BY counts them, each as
    /// "cat:n" text sorted, so a text cat and an integer cat stay apart.
    func counts(_ db: Database) throws -> (table: [String], truth: [String]) {
        func read(_ sql: String) throws -> [String] {
            let s = try db.prepare(sql)
            var out: [String] = []
            while try s.step() { out.append("\(s.type(0) == .text ? "'\(s.text(0) ?? "")'" : (s.text(0) ?? "")):\(s.int64(1))") }
            return out.sorted()
        }
        return (try read("SELECT cat, n FROM cg_category_counts WHERE n <> 0"),
                try read("SELECT cat, count(*) FROM Product_Catalog WHERE cat IS NOT NULL GROUP BY cat"))
    }

    func prepared() throws -> (path: String, writer: Database) {
        let path = try Fixture.make()
        let writer = try Database(path: path, readOnly: false)
        try CatalogPreparation.prepare(writer)
        return (path, writer)
    }

    static let insert = "INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat)"

    @Test func prepareFillsTheTableAsGroupByCounts() throws {
        let (_, writer) = try prepared()
        let (table, truth) = try counts(writer)
        #expect(table == truth)
        #expect(table.contains("12:2"))
        #expect(try CategoryCounts.isInstalled(writer))
    }

    /// Every kind of write, the counts checked after each statement.
    @Test func everyKindOfWriteKeepsTheCountsExact() throws {
        let (_, writer) = try prepared()
        for sql in Self.writes {
            try writer.execute(sql)
            let (table, truth) = try counts(writer)
            #expect(table == truth, "after \(sql)")
        }
        #expect(try counts(writer).table == [])
    }

    static let writes = [
        "\(insert) VALUES (40, 'N40', 'New', 'ARRI', 12)",
        "\(insert) VALUES (NULL, 'N41', 'Auto key', 'ARRI', 20)",
        "INSERT OR REPLACE INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES (2, 'R2', 'Replaced', 'ARRI', 20)",
        "INSERT OR IGNORE INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES (1, 'I1', 'Ignored', 'ARRI', 20)",
        "REPLACE INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES (1, 'R1', 'Replaced', 'ARRI', NULL)",
        "UPDATE Product_Catalog SET cat = 11 WHERE keyid = 3",
        "UPDATE Product_Catalog SET cat = NULL WHERE keyid = 4",
        "UPDATE Product_Catalog SET cat = 'shelf ' WHERE keyid = 5",
        "UPDATE Product_Catalog SET cat = '20' WHERE keyid = 6",
        "UPDATE Product_Catalog SET description = 'unrelated' WHERE keyid = 7",
        "UPDATE Product_Catalog SET keyid = 90 WHERE keyid = 7",
        "UPDATE OR REPLACE Product_Catalog SET keyid = 3, cat = 12 WHERE keyid = 90",
        "UPDATE OR IGNORE Product_Catalog SET keyid = 3 WHERE keyid = 6",
        "DELETE FROM Product_Catalog WHERE keyid = 6",
        "DELETE FROM Product_Catalog",
    ]

    /// A thousand random writes of every kind (seeded), with recursive_triggers on for half of
    /// them: the table equals GROUP BY after every fiftieth, and the engine's totalCount and
    /// productCount equal count(*) at the end.
    @Test func randomWritesKeepTheCountsExact() throws {
        let (path, writer) = try prepared()
        var rng = SplitMix64(seed: 20261125)
        let cats = ["12", "20", "10", "11", "51", "999", "NULL", "'12'", "' x'", "12.0"]
        for i in 0..<1000 {
            if i == 500 { try writer.execute("PRAGMA recursive_triggers = ON") }
            let key = Int(rng.next() % 60) + 1
            let other = Int(rng.next() % 60) + 1
            let cat = cats[Int(rng.next() % UInt64(cats.count))]
            let sql: String
            switch rng.next() % 9 {
            case 0: sql = "\(Self.insert) VALUES (\(key), 'S\(key)', 'p', 'm', \(cat))"
            case 1: sql = "INSERT OR REPLACE INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES (\(key), 'S', 'p', 'm', \(cat))"
            case 2: sql = "INSERT OR IGNORE INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES (\(key), 'S', 'p', 'm', \(cat))"
            case 3: sql = "\(Self.insert) VALUES (NULL, 'S', 'p', 'm', \(cat))"
            case 4: sql = "UPDATE Product_Catalog SET cat = \(cat) WHERE keyid = \(key)"
            case 5: sql = "UPDATE OR REPLACE Product_Catalog SET keyid = \(other) WHERE keyid = \(key)"
            case 6: sql = "UPDATE OR IGNORE Product_Catalog SET keyid = \(other), cat = \(cat) WHERE keyid = \(key)"
            case 7: sql = "DELETE FROM Product_Catalog WHERE keyid = \(key)"
            default: sql = "UPDATE Product_Catalog SET keyid = keyid + 100 WHERE keyid = \(key)"
            }
            do { try writer.execute(sql) } catch {}  // a plain INSERT on an existing key fails: fine
            if i % 50 == 49 {
                let (table, truth) = try counts(writer)
                #expect(table == truth, "after write \(i): \(sql)")
                if table != truth { return }
            }
        }
        let engine = try TestEngine(path: path)
        for id in [12, 20, 10, 51] {
            let expected = try writer.scalarInt("SELECT count(*) FROM Product_Catalog WHERE cat = \(id)") ?? -1
            #expect(engine.run("{ category(id: \(id)) { products { totalCount } } }")
                    == #"{"data":{"category":{"products":{"totalCount":\#(expected)}}}}"#)
        }
        let descendants = try writer.scalarInt("SELECT count(*) FROM Product_Catalog WHERE cat IN (1, 10, 11, 12)") ?? -1
        #expect(engine.run("{ category(id: 1) { productCount(includeDescendants: true) } }")
                == #"{"data":{"category":{"productCount":\#(descendants)}}}"#)
    }

    /// Many ids at once are summed from the whole table: the same counts as looking them up,
    /// after writes that store text, real and NULL categories.
    @Test func wholeTableSumsEqualLookups() throws {
        let (path, writer) = try prepared()
        try writer.execute("""
            UPDATE Product_Catalog SET cat = '12' WHERE keyid = 3;
            UPDATE Product_Catalog SET cat = 20.0 WHERE keyid = 4;
            UPDATE Product_Catalog SET cat = 'shelf' WHERE keyid = 5;
            UPDATE Product_Catalog SET cat = 10.5 WHERE keyid = 6;
            UPDATE Product_Catalog SET cat = NULL WHERE keyid = 7;
            """)
        let db = try Database(path: path, readOnly: true)
        let layout = try CatalogLayout(db: db, path: path)
        #expect(layout.hasCategoryCounts)
        let resolver = CatalogResolver(db: db, layout: layout, hierarchy: { Hierarchy(rows: []) }, schema: CatalogSchema.shared)
        let sets: [(Int64, [Int64])] = [(1, [1, 10, 11, 12]), (2, [2, 20]), (12, [12]), (999, [999]), (50, [50, 51]), (10, [10])]
        let whole = try resolver.categoryCounts(sets, readWhole: true)
        let lookedUp = try resolver.categoryCounts(sets, readWhole: false)
        for (root, cats) in sets {
            let truth = try writer.scalarInt("SELECT count(*) FROM Product_Catalog WHERE cat IN (\(cats.map(String.init).joined(separator: ",")))") ?? -1
            #expect(whole[root] ?? 0 == Int(truth), "root \(root)")
            #expect(lookedUp[root] ?? 0 == Int(truth), "root \(root)")
        }
        #expect(whole[1] == 3 && whole[2] == 1)
    }

    /// The engine reads the table once it is installed, and counts rows otherwise: same answers.
    @Test func theEngineUsesTheTableAndAnswersAsCounting() throws {
        let query = """
            { a: category(id: 1) { productCount(includeDescendants: true) products { totalCount } }
              b: category(id: 12) { productCount products { totalCount } }
              categories { id productCount(includeDescendants: true) } }
            """
        let plain = try Fixture.make()
        let (path, _) = try prepared()
        let counted = try TestEngine(path: plain).run(query)
        let engine = try TestEngine(path: path)
        var sql: [String] = []
        engine.session.traceSQL { sql.append($0) }
        #expect(engine.run(query) == counted)
        #expect(counted.contains(#""b":{"productCount":2,"products":{"totalCount":2}}"#))
        #expect(sql.contains { $0.contains("cg_category_counts") })
        #expect(!sql.contains { $0.contains("count(*)") && $0.contains("\"Product_Catalog\"") && $0.contains("\"cat\"") })
    }

    /// A missing trigger (counts may have gone stale) or a file where REPLACE could delete rows
    /// the triggers do not see: the engine counts rows; `prepare` rebuilds what it can.
    @Test func staleOrIneligibleFilesAreCounted() throws {
        let (path, writer) = try prepared()
        try writer.execute("DROP TRIGGER cg_counts_ad")
        try writer.execute("DELETE FROM Product_Catalog WHERE keyid = 1")
        let q = "{ category(id: 12) { products { totalCount } } }"
        #expect(try TestEngine(path: path).run(q) == #"{"data":{"category":{"products":{"totalCount":1}}}}"#)
        #expect(try !CategoryCounts.isInstalled(writer))
        #expect(try CatalogPreparation.prepare(writer).contains("cg_counts_ad"))
        let (table, truth) = try counts(writer)
        #expect(table == truth)
        #expect(try CategoryCounts.isInstalled(writer))

        try writer.execute("CREATE UNIQUE INDEX sku_unique ON Product_Catalog(Product)")
        #expect(try !CategoryCounts.isInstalled(writer))
        #expect(try TestEngine(path: path).run(q) == #"{"data":{"category":{"products":{"totalCount":1}}}}"#)

        let other = try Fixture.make(extraSQL: "CREATE UNIQUE INDEX sku_unique ON Product_Catalog(Product)")
        let db = try Database(path: other, readOnly: false)
        #expect(try !CatalogPreparation.prepare(db).contains(CategoryCounts.table))
        #expect(try !db.tableExists(CategoryCounts.table))
    }
}
