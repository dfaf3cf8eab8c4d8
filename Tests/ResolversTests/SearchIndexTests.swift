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

    @Test func coveringTrigramsSpanTheWholeWord() {
        #expect(SearchIndex.coveringTrigrams("ab") == [])
        #expect(SearchIndex.coveringTrigrams("abc") == ["abc"])
        #expect(SearchIndex.coveringTrigrams("cooke") == ["coo", "oke"])
        #expect(SearchIndex.coveringTrigrams("32mm") == ["32m", "2mm"])
        #expect(SearchIndex.coveringTrigrams("abcdef") == ["abc", "def"])
        #expect(SearchIndex.coveringTrigrams("abcdefg") == ["abc", "def", "efg"])
        // Three Unicode scalars each, as the tokenizer counts: "e" + U+0301 is two.
        #expect(SearchIndex.coveringTrigrams("ce\u{301}le") == ["ce\u{301}", "\u{301}le"])
        #expect(SearchIndex.matchQuery(["cooke", "32mm", "x"]) == #""coo" AND "oke" AND "32m" AND "2mm""#)
        #expect(SearchIndex.matchQuery(["a\"b"]) == #""a""b""#)
        #expect(SearchIndex.matchQuery(["ab", "x"]) == nil)
        // A long text stays a short query; every term is one of its trigrams.
        let long = String(String.UnicodeScalarView((0..<300).map { UnicodeScalar(0x4E00 + $0)! }))
        let q = SearchIndex.matchQuery([long])!
        #expect(q.components(separatedBy: " AND ").count == SearchIndex.maxTerms)
        // A limit keeps the first ones; a word of megabytes costs no copy of its scalars.
        #expect(SearchIndex.coveringTrigrams("abcdefg", limit: 2) == ["abc", "def"])
        #expect(SearchIndex.coveringTrigrams("abcdefg", limit: 0) == [])
        let huge = String(repeating: "xyz", count: 1_000_000) + "END"
        #expect(SearchIndex.coveringTrigrams(huge, limit: 3) == ["xyz", "xyz", "xyz"])
        #expect(SearchIndex.matchQuery([huge]) == #""xyz""#)
        #expect(SearchIndex.matchQuery(["abcdefghijklmnopqrstuvwxyz" + String(repeating: "0123456789", count: 10), "short"])!
            .components(separatedBy: " AND ").count == SearchIndex.maxTerms)
    }

    /// The index only narrows: for random words over a catalog of near-miss names (case,
    /// accents, the word split across fields or by a space, repeated letters), search answers
    /// exactly as the scan without the index.
    @Test func randomWordsAnswerAsTheScan() throws {
        var rng = SystemRandomNumberGenerator()
        let pieces = ["coo", "ke", "Cooke", "COOKE", "cook", "e ", "32", "mm", "32mm", "aaa", "aa", "é", "É", "e\u{301}", "K", "\u{212A}", "ß", "ss", "%", "_", "\"", " "]
        func text(_ n: Int) -> String { (0..<n).map { _ in pieces.randomElement(using: &rng)! }.joined() }
        var inserts: [String] = []
        for id in 100..<400 {
            func lit(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }
            inserts.append("INSERT INTO Product_Catalog (keyid, product_ID, Product, description, Manufacturer, cat) VALUES (\(id), 'R\(id)', \(lit(text(Int.random(in: 1...5, using: &rng)))), \(lit(text(Int.random(in: 0...8, using: &rng)))), \(lit(text(Int.random(in: 0...2, using: &rng)))), 12);")
        }
        let extra = inserts.joined(separator: "\n")
        let plain = try Fixture.make(extraSQL: extra)
        let indexed = try Fixture.make(extraSQL: extra)
        try CatalogPreparation.prepare(try Database(path: indexed, readOnly: false))
        let a = try TestEngine(path: plain), b = try TestEngine(path: indexed)
        let query = "query($t: String!) { search(text: $t, first: 100) { totalCount nodes { id } } }"
        var hits = 0
        for _ in 0..<150 {
            let words = (0..<Int.random(in: 1...3, using: &rng)).map { _ in text(Int.random(in: 1...2, using: &rng)).replacingOccurrences(of: " ", with: "") }
                .filter { !$0.isEmpty }
            guard !words.isEmpty else { continue }
            let vars = JSONValue.object([("t", .string(words.joined(separator: " ")))])
            let scan = a.run(query, variables: vars)
            #expect(scan.hasPrefix(#"{"data":{"search":{"totalCount":"#))
            #expect(scan == b.run(query, variables: vars), "words \(words)")
            if !scan.contains(#""totalCount":0"#) { hits += 1 }
        }
        #expect(hits > 30)  // the words do find products, so the comparison means something
    }
}
