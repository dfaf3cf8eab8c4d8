import Foundation
import Testing
@testable import Resolvers
import Schema

/// The number of SQL statements a request runs depends on the query's shape, never on the
/// number of rows it returns (traced with sqlite3_trace_v2).
@Suite struct SQLCountTests {
    /// `extra` more products in category 12, each with 3 kit rows and a spec template.
    static func catalog(extra: Int) throws -> String {
        try Fixture.make(extraSQL: """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(extra))
            INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder,
                display_Thumbnail, display_Image01, display_Image02, display_Image03, display_Image04, display_Image05,
                panorama, description, info_DetailsKey, info_spec_a, info_spec_b, info_spec_c, info_spec_d, info_spec_e,
                bracketvid, dynamicvid, colorrendvid, promovid, gscreenvid)
            SELECT 1000 + i, 'X' || i, 'Extra ' || i, CASE i % 3 WHEN 0 THEN 'ARRI' WHEN 1 THEN 'Cooke' ELSE 'RED' END,
                CASE i % 2 WHEN 0 THEN 12 ELSE 20 END, i, '', 'i.jpg', '', '', '', '', '', 'd', '26', 'v', 'w', '', '', '',
                '', '', '', '', '' FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(extra * 3))
            INSERT INTO Product_Assets (kitID, asset, kitQTY) SELECT 'X' || ((i + 2) / 3), 'part ' || i, '1' FROM n;
            """)
    }

    static let categoryPage = """
        query($id: ID!) {
          category(id: $id) {
            id title path { id title } children { id title productCount }
            products(first: 100, includeDescendants: true) {
              totalCount pageInfo { hasNextPage endCursor }
              nodes { id sku name thumbnail manufacturer { name logo } specs { key label value } kit { id name quantity } }
            }
          }
          categories { id products(first: 5) { nodes { id kit { id } } } }
          manufacturers { name productCount products(first: 3) { nodes { id specs { key } } } }
        }
        """

    func statements(path: String, query: String, variables: JSONValue) throws -> (count: Int, json: String) {
        let service = QueryService()
        let session = try CatalogSession(path: path, service: service)
        session.answerCacheLimit = 0  // measure execution, not the answer cache
        guard case .ready(let op) = service.prepare(GraphQLRequest(query: query, variables: variables)) else {
            Issue.record("query did not prepare"); return (0, "")
        }
        _ = session.execute(op)  // warm: hierarchy and layout loaded once per change
        var sql: [String] = []
        session.traceSQL { sql.append($0) }
        let result = session.execute(op)
        session.traceSQL(nil)
        return (sql.count, String(decoding: result.json, as: UTF8.self))
    }

    @Test func statementCountIndependentOfRowCount() throws {
        let vars = JSONValue.object([("id", .string("1"))])
        let small = try statements(path: try Self.catalog(extra: 10), query: Self.categoryPage, variables: vars)
        let large = try statements(path: try Self.catalog(extra: 300), query: Self.categoryPage, variables: vars)
        #expect(!small.json.contains("\"errors\""))
        #expect(large.json.contains("\"name\":\"Extra 300\"") || large.json.contains("\"Extra "))
        #expect(large.json.components(separatedBy: "\"sku\"").count - 1 == 100)
        #expect(small.count == large.count)
        // BEGIN, 2 pragmas, COMMIT, plus a bounded number per selection level.
        #expect(large.count <= 20, "ran \(large.count) statements")
    }

    /// `{ products { totalCount } }` on a fresh 12-product catalog: its session, and a writer
    /// (another connection) to commit with.
    struct TotalCount {
        struct NotPrepared: Error {}
        let session: CatalogSession
        let op: PreparedOperation
        let writer: Database

        init(wal: Bool = false) throws {
            let path = try SQLCountTests.catalog(extra: 5)
            writer = try Database(path: path, readOnly: false)
            if wal { try writer.execute("PRAGMA journal_mode=WAL") }
            let service = QueryService()
            session = try CatalogSession(path: path, service: service)
            guard case .ready(let op) = service.prepare(GraphQLRequest(query: "{ products { totalCount } }")) else {
                throw NotPrepared()
            }
            self.op = op
        }

        func run() -> String { String(decoding: session.execute(op).json, as: UTF8.self) }
    }

    @Test func warmAnswersComeFromCacheUntilACommit() throws {
        let q = try TotalCount()
        let cold = q.run()
        var sql: [String] = []
        q.session.traceSQL { sql.append($0) }
        #expect(q.run() == cold)
        #expect(!sql.contains { $0.contains("Product_Catalog") }, "warm answer ran \(sql)")
        try q.writer.execute("DELETE FROM Product_Catalog WHERE keyid = 1")
        sql.removeAll()
        let after = q.run()
        #expect(sql.contains { $0.contains("count(*)") })
        #expect(after == cold.replacingOccurrences(of: "\"totalCount\":12", with: "\"totalCount\":11"))
    }

    /// Rollback-journal catalogs: while the file's change counter is unchanged a cached answer
    /// is returned without any statement (no BEGIN, no pragma); the next commit by anyone, even
    /// one that leaves the answer's rows alone, sends it through a read transaction again.
    @Test func warmAnswersNeedNoTransactionUntilTheFileChanges() throws {
        let q = try TotalCount()
        let cold = q.run()
        var sql: [String] = []
        q.session.traceSQL { sql.append($0) }
        for _ in 0..<3 { #expect(q.run() == cold) }
        #expect(sql.isEmpty, "warm answers ran \(sql)")

        try q.writer.execute("UPDATE hierarchy SET menu_title = menu_title || '!'")
        #expect(q.run() == cold)
        #expect(sql.contains("BEGIN"), "after a commit the answer was not re-checked: \(sql)")
        sql.removeAll()
        #expect(q.run() == cold)
        #expect(sql.isEmpty, "the re-checked answer was not reused: \(sql)")

        try q.writer.execute("DELETE FROM Product_Catalog WHERE keyid = 1")
        #expect(q.run() == cold.replacingOccurrences(of: "\"totalCount\":12", with: "\"totalCount\":11"))
    }

    /// WAL catalogs: a commit does not touch the file's change counter, so every answer, cached
    /// or not, is checked in a read transaction (and a commit is still seen at once).
    @Test func walCatalogsCheckEveryAnswerInATransaction() throws {
        let q = try TotalCount(wal: true)
        let cold = q.run()
        var sql: [String] = []
        q.session.traceSQL { sql.append($0) }
        #expect(q.run() == cold)
        #expect(sql.contains("BEGIN") && !sql.contains { $0.contains("Product_Catalog") }, "\(sql)")
        try q.writer.execute("DELETE FROM Product_Catalog WHERE keyid = 1")
        #expect(q.run() == cold.replacingOccurrences(of: "\"totalCount\":12", with: "\"totalCount\":11"))
    }
}
