import Foundation
import Testing
@testable import Resolvers
import Schema

/// The cg_search trigram index narrows `search` without changing its answers, and its triggers
/// keep it current whoever writes.
@Suite struct SearchIndexTests {
    static let queries = ["alexa", "ARRI mini", "100%", "p_ime", "lens cooke", "e", "zeiss ultra", "\\\"quote", "dolly chapman", "ÉLAN"]

    func answers(_ engine: TestEngine) -> [String] {
        Self.queries.map { text in
            engine.run("query($t: String!) { search(text: $t, first: 100) { totalCount nodes { id } } }",
                       variables: .object([("t", .string(text))]))
        }
    }

    @Test func sameAnswersWithAndWithoutTheIndex() throws {
        let plain = try Fixture.make()
        let indexed = try Fixture.make()
        let db = try Database(path: indexed, readOnly: false)
        try CatalogPreparation.prepare(db)
        let a = answers(try TestEngine(path: plain))
        let b = answers(try TestEngine(path: indexed))
        #expect(a == b)
        #expect(a[0] == #"{"data":{"search":{"totalCount":2,"nodes":[{"id":"2"},{"id":"1"}]}}}"#)
    }

    @Test func usesTheIndexWhenInstalled() throws {
        let path = try Fixture.make()
        try CatalogPreparation.prepare(try Database(path: path, readOnly: false))
        let service = QueryService()
        let session = try CatalogSession(path: path, service: service)
        guard case .ready(let op) = service.prepare(GraphQLRequest(query: #"{ search(text: "alexa mini") { nodes { id } } }"#)) else {
            Issue.record("no prepare"); return
        }
        var sql: [String] = []
        session.traceSQL { sql.append($0) }
        #expect(String(decoding: session.execute(op).json, as: UTF8.self) == #"{"data":{"search":{"nodes":[{"id":"1"}]}}}"#)
        #expect(sql.contains { $0.contains("cg_search MATCH") })
    }

    @Test func triggersKeepTheIndexCurrent() throws {
        let path = try Fixture.make()
        let writer = try Database(path: path, readOnly: false)
        try CatalogPreparation.prepare(writer)
        let engine = try TestEngine(path: path)
        try writer.execute("UPDATE Product_Catalog SET Product = 'Steadicam Volt' WHERE keyid = 1")
        try writer.execute("INSERT OR REPLACE INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES (2, 'N2', 'Volt gimbal', 'DJI', 12)")
        try writer.execute("DELETE FROM Product_Catalog WHERE keyid = 3")
        try writer.execute("INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES (40, 'N40', 'Cooke Volt adapter', 'Cooke', 12)")
        #expect(engine.run(#"{ search(text: "volt") { nodes { id } } }"#) == #"{"data":{"search":{"nodes":[{"id":"40"},{"id":"1"},{"id":"2"}]}}}"#)
        #expect(engine.run(#"{ search(text: "alexa") { totalCount } }"#) == #"{"data":{"search":{"totalCount":0}}}"#)
        #expect(engine.run(#"{ search(text: "cooke") { nodes { id } } }"#) == #"{"data":{"search":{"nodes":[{"id":"6"},{"id":"40"}]}}}"#)
        let check = try writer.prepare("INSERT INTO cg_search(cg_search) VALUES ('integrity-check')")
        try check.run()
    }

    /// A catalog trigger that happens to be named like one of the index's (`cg_search_insert`,
    /// doing something else) is replaced by prepare: inserts still reach the index. It used to
    /// be taken for the gateway's, and a new product was missing from 3-letter searches.
    @Test func aForeignTriggerWithTheIndexsNameIsReplaced() throws {
        let path = try Fixture.make(extraSQL: """
            CREATE TABLE audit_log (note TEXT);
            CREATE TRIGGER cg_search_insert AFTER INSERT ON "Product_Catalog" BEGIN
              INSERT INTO audit_log VALUES ('inserted');
            END;
            """)
        let writer = try Database(path: path, readOnly: false)
        try CatalogPreparation.prepare(writer)
        #expect(try SearchIndex.isInstalled(writer))
        try writer.execute("INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES (41, 'Z41', 'Zoom controller', 'Preston', 12)")
        let engine = try TestEngine(path: path)
        #expect(engine.run(#"{ search(text: "zoom") { nodes { id } } }"#) == #"{"data":{"search":{"nodes":[{"id":"41"}]}}}"#)
        // A trigger of that name added back by someone else makes the index "not installed"
        // (search scans, still right) until prepare runs again.
        try writer.execute("DROP TRIGGER cg_search_insert; CREATE TRIGGER cg_search_insert AFTER INSERT ON \"Product_Catalog\" BEGIN SELECT 1; END;")
        #expect(try !SearchIndex.isInstalled(writer))
    }

    @Test func aWordBeyondLIKEsPatternLimitStillMatches() throws {
        let long = String(repeating: "ab", count: 30_000)  // 60,000 bytes: LIKE would refuse it
        let query = "query($t: String!) { search(text: $t) { totalCount nodes { id } } }"
        for indexed in [false, true] {
            let path = try Fixture.make()
            let writer = try Database(path: path, readOnly: false)
            if indexed { try CatalogPreparation.prepare(writer) }
            try writer.execute("UPDATE Product_Catalog SET description = 'x\(long.uppercased())y' WHERE keyid = 1")
            let engine = try TestEngine(path: path)
            #expect(engine.run(query, variables: .object([("t", .string(long + " alexa"))]))
                    == #"{"data":{"search":{"totalCount":1,"nodes":[{"id":"1"}]}}}"#)
            #expect(engine.run(query, variables: .object([("t", .string(long + "ba"))]))
                    == #"{"data":{"search":{"totalCount":0,"nodes":[]}}}"#)
        }
    }
}
