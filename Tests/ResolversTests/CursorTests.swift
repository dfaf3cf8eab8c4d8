import Foundation
import Testing
@testable import Resolvers
import Schema

/// Cursors hold the row's sort key: following endCursor visits every row once, in order, over
/// sort values of every type, and keeps doing so while another writer inserts and deletes rows
/// between pages (an offset repeated or skipped rows then).
@Suite struct CursorTests {
    /// Sort columns of every storage class, NULLs, ties broken by keyid, names equal but for case.
    static let messyRows = """
        INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder) VALUES
          (101, 'M1', 'alpha', NULL, 12, 1),
          (102, 'M2', 'ALPHA', NULL, 12, NULL),
          (103, 'M3', NULL, '', 12, 'abc'),
          (104, 'M4', 'beta', X'00FF', 12, 2.5),
          (105, 'M5', CAST(X'62C3' AS TEXT), 'ARRI', 12, 2),
          (106, 'M6', X'7A', 'ARRI', 12, 2),
          (107, 'M7', 'Alpha', 'ARRI', 12, 2),
          (108, 'M8', '', 'ARRI', 12, -1),
          (109, 'M9', 'gamma', 'ARRI ', 12, 1);
        """

    static let orders = ["CATALOG", "NAME", "NEWEST"]

    func page(_ engine: TestEngine, _ field: String, order: String, first: Int, after: String?) -> (ids: [String], end: String?, hasNext: Bool) {
        let args = "first: \(first), orderBy: \(order)" + (after.map { ", after: \"\($0)\"" } ?? "")
        let json = engine.json("{ \(field.replacingOccurrences(of: "ARGS", with: args)) }")
        var value: Any? = json["data"]
        // "products(…)" or "category(…) { products(…) }": the connection is the last "products".
        let root = String(field.prefix { $0 != "(" })
        for key in root == "products" ? ["products"] : [root, "products"] {
            value = (value as? [String: Any])?[key]
        }
        let connection = value as? [String: Any] ?? [:]
        let nodes = connection["nodes"] as? [[String: Any]] ?? []
        let info = connection["pageInfo"] as? [String: Any] ?? [:]
        return (nodes.compactMap { $0["id"] as? String }, info["endCursor"] as? String, info["hasNextPage"] as? Bool ?? false)
    }

    /// Every id of the list, one page of `first` at a time.
    func walk(_ engine: TestEngine, _ field: String, order: String, first: Int, between: (Int) throws -> Void = { _ in }) rethrows -> [String] {
        var ids: [String] = []
        var after: String?
        for round in 0..<200 {
            let p = page(engine, field, order: order, first: first, after: after)
            ids += p.ids
            guard p.hasNext, let end = p.end else { break }
            after = end
            try between(round)
        }
        return ids
    }

    @Test(arguments: orders) func pagesOfOneVisitEveryRowInOrder(order: String) throws {
        let engine = try TestEngine(path: try Fixture.make(extraSQL: Self.messyRows))
        let all = page(engine, "products(ARGS) { nodes { id } pageInfo { hasNextPage endCursor } }", order: order, first: 100, after: nil).ids
        #expect(all.count == 16)
        for first in [1, 2, 5] {
            #expect(try walk(engine, "products(ARGS) { nodes { id } pageInfo { hasNextPage endCursor } }", order: order, first: first) == all,
                    "first: \(first)")
        }
        // The same over a category's list (one connection: a range scan of its own).
        let field = #"category(id: "12") { products(ARGS) { nodes { id } pageInfo { hasNextPage endCursor } } }"#
        let inCategory = page(engine, field, order: order, first: 100, after: nil).ids
        #expect(inCategory.count == 11)
        #expect(try walk(engine, field, order: order, first: 2) == inCategory)
    }

    /// Between pages another writer inserts rows on both sides of the cursor and deletes rows
    /// on both sides: every row that was there throughout is visited exactly once, in order,
    /// and no row twice.
    @Test(arguments: orders) func pagesFollowOnAcrossWrites(order: String) throws {
        let path = try Fixture.make(extraSQL: Self.messyRows)
        let engine = try TestEngine(path: path)
        let writer = try Database(path: path, readOnly: false)
        let field = "products(ARGS) { nodes { id } pageInfo { hasNextPage endCursor } }"
        let before = page(engine, field, order: order, first: 100, after: nil).ids
        #expect(before.count == 16)
        var deleted: Set<String> = []
        var inserted: Set<String> = []
        let seen = try walk(engine, field, order: order, first: 3) { round in
            guard round < 3 else { return }
            let a = 200 + 2 * round, b = a + 1
            // One row at each end of every order (names "0…" and "~…", ids below and above).
            try writer.execute("""
                INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder)
                VALUES (\(a), 'N\(a)', '0 new', NULL, 12, 0), (-\(b), 'N\(b)', '~ new', 'zzz', 12, 9);
                """)
            inserted.formUnion(["\(a)", "-\(b)"])
            // Delete the first and the last of the original rows not deleted yet.
            let left = before.filter { !deleted.contains($0) }
            for id in [left.first!, left.last!] {
                try writer.execute("DELETE FROM Product_Catalog WHERE keyid = \(id)")
                deleted.insert(id)
            }
        }
        #expect(inserted.count == 6 && deleted.count == 6)
        #expect(Set(seen).count == seen.count, "a row twice: \(seen)")
        let kept = before.filter { !deleted.contains($0) }
        // Every row present throughout, in the order of the first listing.
        #expect(seen.filter { !inserted.contains($0) }.filter(kept.contains) == kept, "\(seen)")
    }

    /// Batched pages (one statement for the connections of many categories) take the cursor as
    /// a single connection does.
    @Test(arguments: orders) func batchedPagesAfterACursorMatchSinglePages(order: String) throws {
        let engine = try TestEngine(path: try Fixture.make(extraSQL: Self.messyRows + """
            INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder) VALUES
              (301, 'P1', 'Alpha two', 'ARRI', 1, 2), (302, 'P2', 'delta', 'Cooke', 1, 1), (303, 'P3', 'beta', NULL, 1, 1);
            """))
        let single = #"category(id: "12") { products(ARGS) { nodes { id } pageInfo { hasNextPage endCursor } } }"#
        let cursor = page(engine, single, order: order, first: 3, after: nil).end!
        let batched = engine.json("""
            { categories { id products(first: 4, includeDescendants: true, orderBy: \(order), after: "\(cursor)") { nodes { id } } } }
            """)
        let roots = ((batched["data"] as? [String: Any])?["categories"] as? [[String: Any]]) ?? []
        #expect(roots.count == 2)
        var rows = 0
        defer { #expect(rows >= 5) }
        for root in roots {
            let id = root["id"] as! String
            let nodes = ((root["products"] as? [String: Any])?["nodes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            let alone = page(engine, "category(id: \"\(id)\") { products(includeDescendants: true, ARGS) { nodes { id } pageInfo { hasNextPage endCursor } } }",
                             order: order, first: 4, after: cursor).ids
            #expect(nodes == alone, "category \(id)")
            rows += nodes.count
        }
    }

    @Test func edgeCursorsAreTheRowsOwnAndStartAfterThem() throws {
        let engine = try TestEngine(path: try Fixture.make(extraSQL: Self.messyRows))
        for order in Self.orders {
            let json = engine.json("{ products(first: 100, orderBy: \(order)) { edges { cursor node { id } } pageInfo { startCursor endCursor } } }")
            let connection = (json["data"] as? [String: Any])?["products"] as? [String: Any] ?? [:]
            let edges = connection["edges"] as? [[String: Any]] ?? []
            let ids = edges.map { ($0["node"] as! [String: Any])["id"] as! String }
            let cursors = edges.map { $0["cursor"] as! String }
            #expect(Set(cursors).count == cursors.count)
            let info = connection["pageInfo"] as! [String: Any]
            #expect(info["startCursor"] as? String == cursors.first && info["endCursor"] as? String == cursors.last)
            for (i, c) in cursors.enumerated() {
                #expect(page(engine, "products(ARGS) { nodes { id } pageInfo { hasNextPage endCursor } }", order: order, first: 100, after: c).ids
                        == Array(ids[(i + 1)...]), "\(order) after edge \(i)")
            }
        }
    }

    @Test func searchPagesFollowTheCursor() throws {
        let engine = try TestEngine(path: try Fixture.make(extraSQL: Self.messyRows))
        let field = #"search(text: "a", ARGS) { nodes { id } pageInfo { hasNextPage endCursor } }"#
        let search = { (args: String) in field.replacingOccurrences(of: "ARGS", with: args) }
        let all = ((engine.json("{ \(search("first: 100")) }")["data"] as? [String: Any])?["search"] as? [String: Any])
        let ids = (all?["nodes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(ids.count > 5)
        var seen: [String] = []
        var after: String?
        while true {
            let args = "first: 2" + (after.map { ", after: \"\($0)\"" } ?? "")
            let s = (engine.json("{ \(search(args)) }")["data"] as? [String: Any])?["search"] as? [String: Any] ?? [:]
            seen += (s["nodes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            let info = s["pageInfo"] as? [String: Any] ?? [:]
            guard info["hasNextPage"] as? Bool == true, let end = info["endCursor"] as? String else { break }
            after = end
        }
        #expect(seen == ids)
    }

    /// Names longer than a cursor keeps (`Cursor.maxValueBytes`), alike in their first
    /// kilobytes: cursors stay small, and pages still follow on exactly (the rest of the value is
    /// read from the cursor's row).
    @Test(arguments: ["CATALOG", "NAME"]) func longSortValuesKeepCursorsSmallAndPagesExact(order: String) throws {
        let long = String(repeating: "x", count: 5000)
        var rows: [String] = []
        for (k, tail) in ["b", "a", "c", "a", "d"].enumerated() {
            rows.append("(\(400 + k), 'L\(k)', '\(long)\(tail)', '\(long)', 12, 1)")
        }
        rows.append("(410, 'L9', X'\(String(repeating: "41", count: 2000))', X'\(String(repeating: "42", count: 3000))', 12, 1)")
        let path = try Fixture.make(extraSQL: Self.messyRows + """
            INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder) VALUES \(rows.joined(separator: ", "));
            """)
        let engine = try TestEngine(path: path)
        let field = "products(ARGS) { nodes { id } pageInfo { hasNextPage endCursor } }"
        let all = page(engine, field, order: order, first: 100, after: nil).ids
        #expect(all.count == 22)
        #expect(try walk(engine, field, order: order, first: 1) == all)
        // Every cursor fits a request: under 4.2 KB of base64 for three values cut at 1 KiB.
        var after: String?
        for _ in all {
            let p = page(engine, field, order: order, first: 1, after: after)
            if let end = p.end { #expect(end.utf8.count < 4200) }
            after = p.end
        }
        // The cursor's row deleted before the next page: its kilobyte stands for the value, and
        // the page starts after it (rows that share it come again) — never an error.
        let writer = try Database(path: path, readOnly: false)
        let cut = all.firstIndex(of: "401")!
        let cursor = try #require(page(engine, field, order: order, first: cut + 1, after: nil).end)
        try writer.execute("DELETE FROM Product_Catalog WHERE keyid = 401")
        let next = page(engine, field, order: order, first: 100, after: cursor).ids
        #expect(!next.isEmpty && !next.contains("401"))
        #expect(Array(all[(cut + 1)...]).allSatisfy(next.contains))
    }

    /// Random cursors, most of them one byte away from a real one: decoding never traps, and
    /// whatever decodes is a key that encodes back to the very same text (one spelling per key).
    @Test func randomCursorsDecodeToNothingOrToTheirOwnKey() {
        var rng = SystemRandomNumberGenerator()
        let seeds: [SortKey] = [
            SortKey(order: .catalog, values: [.text(Array("ARRI".utf8)), .integer(3), .blob([1, 2]), .integer(9)]),
            SortKey(order: .name, values: [.text(Array(repeating: 0x61, count: 1500)), .integer(-4)]),
            SortKey(order: .newest, values: [.integer(77)]),
        ]
        var decoded = 0
        for round in 0..<6_000 {
            var bytes = Array(Data(base64Encoded: Cursor.encode(seeds[round % seeds.count]))!)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...bytes.count, using: &rng))
                default: if bytes.count > 1 { bytes.remove(at: Int.random(in: 0..<bytes.count, using: &rng)) }
                }
            }
            let text = Data(bytes).base64EncodedString()
            for order in [ProductOrder.catalog, .name, .newest] {
                if let key = Cursor.decode(text, order: order) {
                    decoded += 1
                    #expect(Cursor.encode(key) == text)
                    #expect(key.values.count == order.sortColumns.count)
                }
            }
        }
        // Some mutations land on a value's own bytes and still decode; most do not.
        #expect(decoded > 30 && decoded < 6_000)
    }

    /// After a key without NULLs, the page is one seek in the order's index, not a scan from
    /// the start (a page 500,000 rows into the 1M catalog: 0.16 ms, against 28.6 ms as OFFSET).
    @Test(arguments: [
        (ProductOrder.catalog, [SortValue.text(Array("ARRI".utf8)), .integer(2), .text(Array("b".utf8)), .integer(5)], "cg_product_catalog_order"),
        (ProductOrder.name, [SortValue.text(Array("b".utf8)), .integer(5)], "cg_product_name"),
        (ProductOrder.newest, [SortValue.integer(5)], "INTEGER PRIMARY KEY"),
    ]) func pagesAfterAKeySeekTheOrdersIndex(order: ProductOrder, values: [SortValue], index: String) throws {
        let path = try Fixture.make(extraSQL: Self.messyRows)
        let db = try Database(path: path, readOnly: false)
        try CatalogPreparation.prepare(db)
        let after = order.after(SortKey(order: order, values: values))
        let plan = try db.prepare("EXPLAIN QUERY PLAN SELECT p.\"keyid\" FROM \"Product_Catalog\" p WHERE \(after.sql) ORDER BY \(order.sql) LIMIT 101")
        plan.bind(after.binds, from: 1)
        var details: [String] = []
        while try plan.step() { details.append(plan.text(3) ?? "") }
        #expect(details.count == 1 && details[0].hasPrefix("SEARCH") && details[0].contains(index), "\(details)")
    }

    @Test func cursorRoundTripsEveryKindOfValue() {
        let key = SortKey(order: .catalog, values: [.blob([0, 255]), .real(-2.5), .text([0x62, 0xC3, 0x00, 0x41]), .integer(Int64.min)])
        let text = Cursor.encode(key)
        #expect(Cursor.decode(text, order: .catalog) == key)
        #expect(Cursor.decode(text, order: .name) == nil)
        let long = SortKey(order: .name, values: [.text(Array(repeating: 0x61, count: 300)), .integer(7)])
        #expect(Cursor.decode(Cursor.encode(long), order: .name) == long)
    }
}
