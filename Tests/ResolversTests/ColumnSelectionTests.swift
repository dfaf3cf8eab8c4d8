import Foundation
import Testing
@testable import Resolvers
import Schema

/// Products are read with only the columns their selected fields need (CatalogLayout.select):
/// each Product field, asked for alone, answers exactly what it answers beside every other
/// field, wherever products are listed; and the statements select no more than that.
@Suite struct ColumnSelectionTests {
    /// Each Product field with a selection that reads all of it.
    static let fields: [(name: String, selection: String)] = [
        ("id", "id"), ("sku", "sku"), ("name", "name"), ("manufacturer", "manufacturer { name logo }"),
        ("category", "category { id title }"), ("displayOrder", "displayOrder"), ("thumbnail", "thumbnail"),
        ("images", "images"), ("videos", "videos { kind url }"), ("panoramaUrl", "panoramaUrl"),
        ("description", "description"), ("specs", "specs { key label value }"), ("kit", "kit { id name quantity }"),
    ]

    /// Where products are listed: a query with `SEL` where the product's fields go, and how to
    /// find the products in its data.
    static let places: [(query: String, products: @Sendable ([String: Any]) -> [Any])] = [
        ("{ product(id: 1) { SEL } }", { [$0["product"] as Any] }),
        ("{ products(first: 50) { nodes { SEL } } }", { (($0["products"] as? [String: Any])?["nodes"] as? [Any]) ?? [] }),
        ("{ products(first: 50) { edges { node { SEL } } } }", {
            ((($0["products"] as? [String: Any])?["edges"] as? [[String: Any]]) ?? []).map { $0["node"] as Any }
        }),
        ("{ search(text: \"a\") { nodes { SEL } } }", { (($0["search"] as? [String: Any])?["nodes"] as? [Any]) ?? [] }),
        ("{ categories { products(first: 50, includeDescendants: true) { nodes { SEL } } } }", {
            (($0["categories"] as? [[String: Any]]) ?? []).flatMap { (($0["products"] as? [String: Any])?["nodes"] as? [Any]) ?? [] }
        }),
        ("{ manufacturers { products { nodes { SEL } } } }", {
            (($0["manufacturers"] as? [[String: Any]]) ?? []).flatMap { (($0["products"] as? [String: Any])?["nodes"] as? [Any]) ?? [] }
        }),
    ]

    static func data(_ json: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect(object?["errors"] == nil, "\(json)")
        return (object?["data"] as? [String: Any]) ?? [:]
    }

    /// The field's values, product by product, as JSON text (comparable).
    static func values(_ products: [Any], _ field: String) throws -> [String] {
        try products.map { p in
            guard let p = p as? [String: Any] else { return "not an object" }
            let v = p[field] ?? NSNull()
            let wrapped = try JSONSerialization.data(withJSONObject: [v], options: [.sortedKeys])
            return String(decoding: wrapped, as: UTF8.self)
        }
    }

    func checkEveryFieldAlone(_ path: String) throws {
        let engine = try TestEngine(path: path)
        let all = Self.fields.map(\.selection).joined(separator: " ")
        for place in Self.places {
            let full = place.products(try Self.data(engine.run(place.query.replacingOccurrences(of: "SEL", with: all))))
            #expect(full.count >= 1, "\(place.query)")
            for f in Self.fields {
                let alone = place.products(try Self.data(engine.run(place.query.replacingOccurrences(of: "SEL", with: f.selection))))
                #expect(try Self.values(alone, f.name) == Self.values(full, f.name), "\(f.name) in \(place.query)")
            }
        }
    }

    @Test func everyFieldAloneAnswersAsBesideTheOthers() throws {
        try checkEveryFieldAlone(try Fixture.make())
    }

    /// Past 64 columns the set of columns has no mask: every column is read, with the same answers.
    @Test func everyFieldAloneOnAWideCatalog() throws {
        let extra = (10..<70).map { "ALTER TABLE Product_Catalog ADD COLUMN display_Image\($0) text;" }.joined(separator: "\n")
            + "\nUPDATE Product_Catalog SET display_Image69 = 'wide-' || keyid || '.jpg' WHERE keyid <= 3;"
        let path = try Fixture.make(extraSQL: extra)
        try checkEveryFieldAlone(path)
        let images = try TestEngine(path: path).run("{ product(id: 2) { images } }")
        #expect(images == #"{"data":{"product":{"images":["wide-2.jpg"]}}}"#)
    }

    /// Column sets multiply the SQL texts a session prepares; the statement cache stays bounded,
    /// and a statement held across the cache starting over still steps.
    @Test func statementCacheIsBounded() throws {
        let db = try Database(path: try Fixture.make(), readOnly: true)
        let held = try db.cachedStatement("SELECT keyid FROM Product_Catalog ORDER BY keyid")
        #expect(try held.step() && held.int64(0) == 1)
        for i in 0..<(Database.statementCacheLimit * 2 + 10) {
            let s = try db.cachedStatement("SELECT \(i) + 1")
            #expect(try s.step() && s.int64(0) == Int64(i + 1))
            #expect(db.cachedStatementCount <= Database.statementCacheLimit)
        }
        #expect(try held.step() && held.int64(0) == 2)
        // Prepared again after it left the cache: a statement of its own, from the first row.
        let again = try db.cachedStatement("SELECT keyid FROM Product_Catalog ORDER BY keyid")
        #expect(again !== held)
        #expect(try again.step() && again.int64(0) == 1)
        // Every distinct column set of one place: as many product statements as sets, bounded.
        let engine = try TestEngine(path: try Fixture.make())
        engine.session.answerCacheLimit = 0
        let groups = ["sku", "name", "manufacturer { name }", "thumbnail", "panoramaUrl", "description", "images",
                      "videos { url }", "specs { key }"]
        for mask in 0..<(1 << groups.count) {
            let sel = ["id"] + groups.indices.filter { mask & (1 << $0) != 0 }.map { groups[$0] }
            let answer = engine.run("{ product(id: 2) { \(sel.joined(separator: " ")) } }")
            #expect(answer.hasPrefix(#"{"data":{"product":{"id":"2""#), "\(answer)")
            #expect(engine.session.db.cachedStatementCount <= Database.statementCacheLimit)
        }
        #expect(engine.session.layoutSelectCount == 1 << groups.count)
    }

    /// The SQL that read a product: the columns it names.
    func productSQL(_ query: String) throws -> String {
        let engine = try TestEngine(path: try Fixture.make())
        engine.session.answerCacheLimit = 0  // executed, not answered from the cache
        _ = engine.run(query)
        var sql: [String] = []
        engine.session.traceSQL { sql.append($0) }
        _ = engine.run(query)
        engine.session.traceSQL(nil)
        return sql.filter { $0.contains("FROM \"Product_Catalog\" p WHERE p.\"keyid\" = ") }.joined(separator: "\n")
    }

    @Test func statementsSelectOnlyWhatTheFieldsRead() throws {
        let small = try productSQL("{ product(id: 1) { id sku } }")
        #expect(small.contains("p.\"keyid\"") && small.contains("p.\"product_ID\"") && small.contains("p.\"cat\""))
        for column in ["\"Product\"", "\"description\"", "\"info_spec_a\"", "\"display_Image01\"", "\"promovid\""] {
            #expect(!small.contains(column), "\(column) in \(small)")
        }
        let specs = try productSQL("{ product(id: 1) { specs { label } } }")
        #expect(specs.contains("\"info_DetailsKey\"") && specs.contains("\"info_spec_e\""))
        #expect(!specs.contains("\"description\""))
        let everything = try productSQL("{ product(id: 1) { \(Self.fields.map(\.selection).joined(separator: " ")) } }")
        for column in ["\"Product\"", "\"description\"", "\"info_spec_a\"", "\"display_Image05\"", "\"gscreenvid\"", "\"panorama\""] {
            #expect(everything.contains(column), "\(column) not in \(everything)")
        }
    }
}
