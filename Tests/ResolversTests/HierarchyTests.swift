import Foundation
import Testing
@testable import Resolvers
import Schema
import Synchronization

/// The hierarchy as the catalog holds it: trees, cycles, self-parents, parents without a row,
/// duplicate ids. Rows hold no references to each other, and counts with descendants are summed
/// in one pass where the lists would be long.
@Suite struct HierarchyTests {
    /// With change capture installed the hierarchy is read again only after a commit that wrote
    /// to it: a product edit leaves it as it was (no `FROM "hierarchy"` statement), a title
    /// edit, an insert or a delete by another connection are seen at once. Without capture it
    /// is read at every commit, as before.
    @Test func theHierarchyIsReadAgainOnlyWhenItChanged() throws {
        for prepared in [true, false] {
            let path = try Fixture.make()
            let writer = try Database(path: path, readOnly: false)
            if prepared { try CatalogPreparation.prepare(writer) }
            let engine = try TestEngine(path: path)
            var sql: [String] = []
            engine.session.traceSQL { sql.append($0) }
            let reads = { sql.filter { $0.contains("FROM \"hierarchy\"") }.count }
            let query = "{ category(id: 20) { title children { id } } }"
            let first = engine.run(query)
            #expect(first.contains(#""title":"#) && reads() == 1, "\(first)")
            try writer.execute("UPDATE Product_Catalog SET Product = 'renamed' WHERE keyid = 3")
            #expect(engine.run(query) == first)
            #expect(reads() == (prepared ? 1 : 2), "prepared \(prepared)")
            try writer.execute("UPDATE hierarchy SET menu_title = 'Prime lenses (new)' WHERE id = 20")
            #expect(engine.run(query).contains(#""title":"Prime lenses (new)""#))
            try writer.execute("INSERT INTO hierarchy (id, menu_title, menu_icon, parent) VALUES (9001, 'new child', '', 20)")
            #expect(engine.run(query).contains(#"{"id":"9001"}"#))
            try writer.execute("DELETE FROM hierarchy WHERE id = 9001")
            #expect(!engine.run(query).contains("9001"))
            try writer.execute("UPDATE Product_Catalog SET Product = 'again' WHERE keyid = 3")
            _ = engine.run(query)
            #expect(reads() == (prepared ? 4 : 6), "prepared \(prepared): \(reads())")
            guard prepared else { continue }
            // Compaction deletes the log up to a version's mark, hierarchy rows included: a
            // session whose hierarchy is older than what was deleted reads it again.
            try writer.execute("""
                UPDATE hierarchy SET menu_title = 'Compacted away' WHERE id = 20;
                INSERT INTO version VALUES (7, '', '');
                UPDATE Product_Catalog SET Product = 'later' WHERE keyid = 3;
                INSERT INTO version VALUES (8, '', '');
                """)
            let compacted = try ChangeCapture.compact(writer, keepVersions: 1, keepDays: nil)
            #expect(compacted.deletedChanges > 0)
            #expect(engine.run(query).contains(#""title":"Compacted away""#))
        }
    }

    /// Sessions of one service on one file share what one of them read (each worker read the
    /// whole table and kept its own copy): with change capture, a second session reads no
    /// hierarchy until a hierarchy row changes, and then only the first to ask reads it.
    @Test func sessionsShareTheHierarchyTheyRead() throws {
        for prepared in [true, false] {
            let path = try Fixture.make()
            let writer = try Database(path: path, readOnly: false)
            if prepared { try CatalogPreparation.prepare(writer) }
            let service = QueryService()
            let sessions = try (0..<2).map { _ in try CatalogSession(path: path, service: service) }
            var reads = [0, 0]
            for (i, session) in sessions.enumerated() {
                session.traceSQL { if $0.contains("FROM \"hierarchy\"") { reads[i] += 1 } }
            }
            let run = { (i: Int, query: String) -> String in
                guard case .ready(let op) = service.prepare(GraphQLRequest(query: query)) else { return "not ready" }
                return String(decoding: sessions[i].execute(op).json, as: UTF8.self)
            }
            let query = "{ category(id: 20) { title children { id } path { id } } }"
            let first = run(0, query)
            #expect(first.contains(#""title":"#) && reads == [1, 0], "\(first)")
            #expect(run(1, query) == first)
            #expect(reads == (prepared ? [1, 0] : [1, 1]), "prepared \(prepared): \(reads)")
            try writer.execute("UPDATE hierarchy SET menu_title = 'Shared lenses' WHERE id = 20")
            #expect(run(1, query).contains(#""title":"Shared lenses""#))
            #expect(run(0, query).contains(#""title":"Shared lenses""#))
            #expect(reads == (prepared ? [1, 1] : [2, 2]), "prepared \(prepared): \(reads)")
            try writer.execute("UPDATE Product_Catalog SET Product = 'renamed' WHERE keyid = 3")
            _ = run(0, query); _ = run(1, query)
            #expect(reads == (prepared ? [1, 1] : [3, 3]), "prepared \(prepared): \(reads)")
            // What another session shared before a hierarchy row was logged is not taken.
            guard prepared else { continue }
            try writer.execute("UPDATE hierarchy SET menu_title = 'Newer lenses' WHERE id = 20")
            #expect(run(1, query).contains(#""title":"Newer lenses""#))
            try writer.execute("UPDATE hierarchy SET menu_title = 'Newest lenses' WHERE id = 20")
            #expect(run(0, query).contains(#""title":"Newest lenses""#))
            #expect(reads == [2, 2], "\(reads)")
        }
    }

    /// Sessions asking at once wait for the one that reads (each read the table and kept its own
    /// copy): both are held at the read lock until both have asked, then one read serves both.
    @Test func sessionsAskingAtOnceReadTheHierarchyOnce() throws {
        let path = try Fixture.make()
        try CatalogPreparation.prepare(Database(path: path, readOnly: false))
        let service = QueryService()
        let reads = Mutex(0)
        let sessions = try (0..<2).map { _ in
            let session = try CatalogSession(path: path, service: service)
            session.traceSQL { if $0.contains("FROM \"hierarchy\"") { reads.withLock { $0 += 1 } } }
            return session
        }
        guard case .ready(let op) = service.prepare(GraphQLRequest(query: "{ category(id: 20) { title } }")) else {
            Issue.record("not ready"); return
        }
        let answers = Mutex<[String]>([])
        let done = DispatchGroup()
        let asked = DispatchSemaphore(value: 0)
        service.hierarchyReads.withLock { _ in
            for session in sessions {
                nonisolated(unsafe) let session = session
                DispatchQueue.global().async(group: done) {
                    asked.signal()
                    let json = String(decoding: session.execute(op).json, as: UTF8.self)
                    answers.withLock { $0.append(json) }
                }
            }
            asked.wait(); asked.wait()
            usleep(100_000)
            // Neither has read the table: both wait at the lock.
            #expect(answers.withLock { $0.isEmpty } && reads.withLock { $0 } == 0)
        }
        done.wait()
        let both = answers.withLock { $0 }
        #expect(both.count == 2 && both[0] == both[1] && both[0].contains(#""title":"#), "\(both)")
        #expect(reads.withLock { $0 } == 1)
    }

    /// A query waiting for another session's read of the hierarchy stops at its own limit: the
    /// reader may be a subscription event, which has none (a query waited 10 times
    /// --max-execution-ms behind a change set's categories).
    @Test func aQueryWaitingForTheHierarchyStopsAtItsTimeLimit() throws {
        let path = try Fixture.make()
        try CatalogPreparation.prepare(Database(path: path, readOnly: false))
        var options = EngineOptions()
        options.maxExecutionMs = 100
        let service = QueryService(options: options)
        let session = try CatalogSession(path: path, service: service)
        guard case .ready(let op) = service.prepare(GraphQLRequest(query: "{ category(id: 20) { title } }")) else {
            Issue.record("not ready"); return
        }
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            service.hierarchyReads.withLock { _ in
                held.signal()
                release.wait()
            }
            done.signal()
        }
        held.wait()
        let started = DispatchTime.now().uptimeNanoseconds
        let answer = String(decoding: session.execute(op).json, as: UTF8.self)
        let ms = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        release.signal()
        done.wait()
        #expect(answer.contains("EXECUTION_TIMEOUT") && ms < 2_000, "\(ms) ms: \(answer)")
        // With the lock free again the same query answers.
        #expect(String(decoding: session.execute(op).json, as: UTF8.self).contains(#""title":"#))
    }

    /// A query waiting for another process's lock stops at its own limit and at its client's
    /// cancellation: SQLite's busy timeout slept through both (the progress handler runs only
    /// while SQL runs), and a stop waited for it past --shutdown-timeout.
    @Test func aQueryWaitingForALockStopsAtItsLimitAndItsCancellation() throws {
        let path = try Fixture.make()
        var options = EngineOptions()
        options.maxExecutionMs = 200
        options.busyTimeoutMs = 10_000
        let service = QueryService(options: options)
        let session = try CatalogSession(path: path, service: service)
        guard case .ready(let op) = service.prepare(GraphQLRequest(query: "{ product(id: \"3\") { name } }")) else {
            Issue.record("not ready"); return
        }
        let writer = try Database(path: path, readOnly: false)
        try writer.execute("BEGIN EXCLUSIVE")
        var started = DispatchTime.now().uptimeNanoseconds
        let timedOut = String(decoding: session.execute(op).json, as: UTF8.self)
        var ms = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        #expect(timedOut.contains("EXECUTION_TIMEOUT") && ms < 2_000, "\(ms) ms: \(timedOut)")
        let cancelAt = DispatchTime.now().uptimeNanoseconds + 50_000_000
        started = DispatchTime.now().uptimeNanoseconds
        let cancelled = String(decoding: session.execute(op, cancelled: { DispatchTime.now().uptimeNanoseconds > cancelAt }).json, as: UTF8.self)
        ms = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        #expect(cancelled.contains("OPERATION_CANCELLED") && ms < 2_000, "\(ms) ms: \(cancelled)")
        try writer.execute("COMMIT")
        #expect(String(decoding: session.execute(op).json, as: UTF8.self).contains(#""name":"#))
    }

    /// A session moved to a replacement file drops the shared hierarchy of the file before: that
    /// file may be deleted and its inode given to a later one, which nothing else would tell
    /// from it.
    @Test func aReopenedSessionDropsTheSharedHierarchyOfTheFileBefore() throws {
        let path = try Fixture.make()
        try CatalogPreparation.prepare(Database(path: path, readOnly: false))
        let service = QueryService()
        let session = try CatalogSession(path: path, service: service)
        guard case .ready(let op) = service.prepare(GraphQLRequest(query: "{ category(id: 20) { title } }")) else {
            Issue.record("not ready"); return
        }
        _ = session.execute(op)
        let before = CatalogFileIdentity(path: path)
        #expect(before != nil && service.sharedHierarchyFile == before)
        let other = try Fixture.make()
        try CatalogPreparation.prepare(Database(path: other, readOnly: false))
        #expect(rename(other, path) == 0)
        try session.reopen()
        #expect(service.sharedHierarchyFile == nil)
        _ = session.execute(op)
        #expect(service.sharedHierarchyFile == CatalogFileIdentity(path: path))
    }

    /// Random hierarchies: `descendantSums` equals summing each id's `descendants(of:)`, or is
    /// nil exactly when some id has rows under two parents.
    @Test func descendantSumsEqualSummingEachList() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<300 {
            let n = Int.random(in: 1...40, using: &rng)
            let duplicates = round % 3 == 0
            var rows: [CategoryNode] = []
            for k in 1...n {
                let id = Int64(duplicates ? Int.random(in: 1...n, using: &rng) : k)
                // Parents: 0 (root), another row, itself, or an id without a row.
                let parent: Int64? = switch Int.random(in: 0..<10, using: &rng) {
                case 0: 0
                case 1: id
                case 2: Int64(n + 5)
                case 3: nil
                default: Int64.random(in: 1...Int64(n), using: &rng)
                }
                rows.append(CategoryNode(id: id, title: "c\(id)", icon: nil, level: nil, parent: parent))
            }
            let h = Hierarchy(rows: rows)
            let weight: (Int64) -> Int = { Int(($0 * 7919) % 13) }
            var parentsOf: [Int64: Set<Int64>] = [:]
            for r in rows { if let p = r.parent { parentsOf[r.id, default: []].insert(p) } }
            let ambiguous = parentsOf.values.contains { $0.count > 1 }
            let sums = h.descendantSums(weight)
            #expect((sums == nil) == ambiguous, "round \(round)")
            guard let sums else { continue }
            var ids = Set(rows.map(\.id))
            for r in rows { if let p = r.parent { ids.insert(p) } }
            for id in ids {
                let expected = h.descendants(of: id).reduce(0) { $0 + weight($1) }
                #expect((sums[id] ?? weight(id)) == expected, "round \(round), id \(id)")
            }
            if let counts = h.descendantCounts {
                for id in ids { #expect((counts[id] ?? 1) == h.descendants(of: id).count) }
            }
        }
    }

    /// Rows hold no references to each other: a self-parent or a cycle is freed with its
    /// hierarchy (it leaked with every reload), and a 200,000-deep chain is freed without one
    /// nested deinit per level (the stack ran out at about 40,000 in the server).
    @Test func cyclesAndDeepChainsAreFreed() {
        weak var selfParent: CategoryNode?
        weak var inCycle: CategoryNode?
        do {
            let a = CategoryNode(id: 1, title: "A", icon: nil, level: nil, parent: 1)
            let b = CategoryNode(id: 2, title: "B", icon: nil, level: nil, parent: 3)
            let c = CategoryNode(id: 3, title: "C", icon: nil, level: nil, parent: 2)
            selfParent = a
            inCycle = b
            let h = Hierarchy(rows: [a, b, c])
            #expect(h.children(of: a).map(\.id) == [1])
            #expect(h.descendants(of: 2).sorted() == [2, 3])
        }
        #expect(selfParent == nil)
        #expect(inCycle == nil)
        do {
            let depth = 200_000
            let rows = (1...depth).map { CategoryNode(id: Int64($0), title: "", icon: nil, level: nil, parent: Int64($0 - 1)) }
            let h = Hierarchy(rows: rows)
            #expect(h.path(of: rows[depth - 1]).count == depth)
            #expect(h.descendantCounts?[1] == depth)
        }
    }

    func chainCatalog(depth: Int, extraSQL: String = "") throws -> String {
        var sql = "DELETE FROM hierarchy; DELETE FROM Product_Catalog;"
        sql += "INSERT INTO hierarchy (id, menu_title, menu_icon, level, parent) VALUES "
        sql += (1...depth).map { "(\($0), 'C\($0)', '', \($0), \($0 - 1))" }.joined(separator: ",") + ";"
        // Product k in category k for every third category.
        sql += "INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat) VALUES "
        sql += stride(from: 3, through: depth, by: 3).map { "(\($0), 'P\($0)', 'Product \($0)', 'ARRI', \($0))" }.joined(separator: ",") + ";"
        return try Fixture.make(extraSQL: sql + extraSQL)
    }

    /// A 3,000-deep chain: every category on the deepest one's path counts the products at or
    /// below it (4.5 million ids in all, summed in one pass), with and without cg_category_counts;
    /// and a reload of the hierarchy (after a commit) frees the old one without recursion.
    @Test(arguments: [false, true])
    func pathCountsAlongADeepChain(prepared: Bool) throws {
        let depth = 3_000
        let path = try chainCatalog(depth: depth)
        if prepared {
            let writer = try Database(path: path, readOnly: false)
            try CatalogPreparation.prepare(writer)
        }
        let engine = try TestEngine(path: path)
        let text = engine.run("{ category(id: \(depth)) { path { id productCount(includeDescendants: true) } } }")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let data = try #require(json["data"] as? [String: Any], "\(text.prefix(300))")
        let pathNodes = try #require((data["category"] as? [String: Any])?["path"] as? [[String: Any]])
        #expect(pathNodes.count == depth)
        for node in pathNodes {
            let id = Int(node["id"] as? String ?? "") ?? -1
            // Products in categories id...depth whose number is a multiple of 3.
            let expected = depth / 3 - (id - 1) / 3
            #expect(node["productCount"] as? Int == expected, "category \(id)")
        }
    }
}

/// A catalog missing a column the gateway reads by name is refused when opened, naming it; and
/// no statement of the gateway's can read a missing column's quoted name as a string.
@Suite struct MissingColumnTests {
    /// `table` rebuilt without `column` (its other columns and rows kept).
    func without(_ table: String, _ column: String) throws -> String {
        let path = try Fixture.make()
        let db = try Database(path: path, readOnly: false)
        let keep = try db.columns(of: table).filter { $0.lowercased() != column.lowercased() }
        let list = keep.map { "\"\($0)\"" }.joined(separator: ", ")
        try db.execute("""
            CREATE TABLE cg_rebuild AS SELECT \(list) FROM "\(table)";
            DROP TABLE "\(table)";
            ALTER TABLE cg_rebuild RENAME TO "\(table)";
            """)
        return path
    }

    @Test(arguments: CatalogLayout.requiredColumns.flatMap { t in t.1.map { (t.0, $0) } } + [("Product_Catalog", "displayorder")])
    func aMissingColumnIsRefusedByName(table: String, column: String) throws {
        let path = try without(table, column)
        do {
            _ = try TestEngine(path: path)
            Issue.record("\(table).\(column) missing: the catalog was accepted")
        } catch let e as CatalogError {
            #expect(e.message == "not a Radiant catalog: column \(table).\(column) is missing")
        }
    }

    @Test func aQuotedUnknownNameIsAnErrorNotAString() throws {
        let db = try Database(path: try Fixture.make(), readOnly: true)
        #expect(throws: SQLiteError.self) { _ = try db.prepare("SELECT \"no_such_column\" FROM hierarchy") }
    }
}

/// --max-execution-ms stops a query's SQL where it runs, and so does its client going away.
@Suite struct ExecutionLimitTests {
    /// 200,000 products: each `alphabet` scans them all.
    static func bigCatalog() throws -> String {
        try Fixture.make(extraSQL: """
            WITH RECURSIVE n(k) AS (SELECT 1000 UNION ALL SELECT k + 1 FROM n WHERE k < 201000)
            INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder)
            SELECT k, 'P' || k, char(65 + k % 26) || ' product ' || k, 'ARRI', 12, k FROM n;
            """)
    }

    static let heavy = "{ " + (0..<40).map { "a\($0): alphabet { letter count }" }.joined(separator: " ") + " }"

    func codes(_ text: String) throws -> [String] {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let errors = json["errors"] as? [[String: Any]] ?? []
        return errors.compactMap { ($0["extensions"] as? [String: Any])?["code"] as? String }
    }

    @Test func aQueryPastTheLimitIsStoppedWithFieldErrors() throws {
        let path = try Self.bigCatalog()
        var options = EngineOptions()
        options.maxExecutionMs = 100
        let limited = try TestEngine(path: path, options: options)
        let started = DispatchTime.now().uptimeNanoseconds
        let text = limited.run(Self.heavy)
        let ms = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        let codes = try codes(text)
        #expect(!codes.isEmpty && codes.allSatisfy { $0 == "EXECUTION_TIMEOUT" }, "\(text.prefix(400))")
        #expect(text.contains("execution limit of 100 ms"))
        #expect(ms < 5_000, "stopped after \(ms) ms")
        // A small query on the same session still answers (the limit is per query).
        #expect(limited.run("{ product(id: 1000) { name } }").contains("\"name\""))
        // Without a limit the same query answers in full.
        options.maxExecutionMs = 0
        let unlimited = try TestEngine(path: path, options: options)
        #expect(try self.codes(unlimited.run("{ a: alphabet { letter count } b: alphabet { letter count } }")).isEmpty)
    }

    /// --max-response-bytes: once the levels run pass it, no further one runs; the answer is one
    /// RESPONSE_TOO_LARGE error, and a query under it answers in full.
    @Test func anAnswerPastTheByteLimitIsRefused() throws {
        let path = try Self.bigCatalog()
        var options = EngineOptions()
        options.maxResponseBytes = 3_000
        let engine = try TestEngine(path: path, options: options)
        // 100 nodes of ~45 bytes of JSON each: past 3,000; 50 are not.
        let big = engine.run("{ products(first: 100) { nodes { id name sku } } }")
        #expect(try codes(big) == ["RESPONSE_TOO_LARGE"], "\(big.prefix(300))")
        #expect(big.contains("\"data\":null"))
        let small = engine.run("{ products(first: 50) { nodes { id name sku } } }")
        #expect(try codes(small).isEmpty, "\(small.prefix(300))")
    }

    /// The byte limit is checked before a level runs and after each of its fields, so work past
    /// it is not done: thousands of aliases over a page (a 3 KB document of this shape cost the
    /// server seconds and gigabytes before stop 27) run none of their statements.
    @Test func aLevelPastTheByteLimitIsNotRun() throws {
        let path = try Self.bigCatalog()
        var options = EngineOptions()
        options.maxResponseBytes = 200_000
        let engine = try TestEngine(path: path, options: options)
        var sql: [String] = []
        engine.session.traceSQL { sql.append($0) }
        let aliases = (0..<2000).map { "k\($0): kit { id }" }.joined(separator: " ")
        let big = engine.run("{ products(first: 100) { nodes { id \(aliases) } } }")
        #expect(try codes(big) == ["RESPONSE_TOO_LARGE"], "\(big.prefix(300))")
        #expect(!sql.contains { $0.contains("Product_Assets") }, "kit statements ran: \(sql.filter { $0.contains("Product_Assets") }.count)")
        // Under the limit the same shape answers, and reads the kits.
        sql = []
        let few = (0..<3).map { "k\($0): kit { id }" }.joined(separator: " ")
        #expect(try codes(engine.run("{ products(first: 100) { nodes { id \(few) } } }")).isEmpty)
        #expect(sql.contains { $0.contains("Product_Assets") })
    }

    /// Within a level, the text of a field that passes the limit stops the level there: the
    /// fields after it (here a kit, a statement) do not run. (Through `edges`: `nodes` of these
    /// fields are written by the resolver, which stops at the same budget.)
    @Test func aFieldPastTheByteLimitStopsItsLevel() throws {
        let path = try Fixture.make(extraSQL: """
            WITH RECURSIVE n(k) AS (SELECT 1000 UNION ALL SELECT k + 1 FROM n WHERE k < 1099)
            INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder, description)
            SELECT k, 'P' || k, 'product ' || k, 'ARRI', 12, k, printf('%.1000c', 'd') FROM n;
            """)
        var options = EngineOptions()
        options.maxResponseBytes = 50_000  // the slots fit (~16 × 100 × 3), the descriptions (100 KB) do not
        let engine = try TestEngine(path: path, options: options)
        var sql: [String] = []
        engine.session.traceSQL { sql.append($0) }
        let text = engine.run("{ products(first: 100, orderBy: NEWEST) { edges { node { id description kit { id } } } } }")
        #expect(try codes(text) == ["RESPONSE_TOO_LARGE"], "\(text.prefix(300))")
        #expect(!sql.contains { $0.contains("Product_Assets") })
        options.maxResponseBytes = 200_000
        #expect(try codes(try TestEngine(path: path, options: options).run(
            "{ products(first: 100, orderBy: NEWEST) { edges { node { id description kit { id } } } } }")).isEmpty)
    }

    /// What the limit refuses is about the answer's size: many small fields of a page (ten
    /// aliases of `id`, ~11 KB) pass a 16 KB limit, and padded text counts as served (trimmed),
    /// through the resolver's JSON and through the general path alike.
    @Test func answersUnderTheByteLimitStillAnswer() throws {
        let path = try Fixture.make(extraSQL: """
            WITH RECURSIVE n(k) AS (SELECT 1000 UNION ALL SELECT k + 1 FROM n WHERE k < 1099)
            INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder, description)
            SELECT k, 'P' || k, 'product ' || k, 'ARRI', 12, k, 'Lens.' || printf('%.5000c', ' ') FROM n;
            """)
        let ids = "{ products(first: 100, orderBy: NEWEST) { nodes { " + "abcdefghij".map { "\($0): id" }.joined(separator: " ") + " } } }"
        let padded = "{ products(first: 100, orderBy: NEWEST) { edges { node { id description } } } }"
        let full = try TestEngine(path: path)
        var options = EngineOptions()
        options.maxResponseBytes = 16_000
        let limited = try TestEngine(path: path, options: options)
        let answer = limited.run(ids)
        #expect(answer.utf8.count < 16_000 && answer.utf8.count > 10_000)
        #expect(answer == full.run(ids))
        options.maxResponseBytes = 100_000  // the descriptions are 500 KB stored, 0.5 KB served
        let text = try TestEngine(path: path, options: options).run(padded)
        #expect(try codes(text).isEmpty, "\(text.prefix(200))")
        #expect(text == full.run(padded) && text.contains(#""description":"Lens.""#))
    }

    /// --max-nodes at run time: a list multiplies nothing in the estimate made before execution,
    /// so each connection counts `first` for the objects it actually runs on, before its page is
    /// read. 300 manufacturers × first 10 pass a limit of 1,000 that the estimate (10) met; the
    /// pages' statement never runs. Three each (900), or `totalCount` alone, answer.
    @Test func connectionsUnderAListCountEveryObjectAgainstTheNodeLimit() throws {
        let path = try Fixture.make(extraSQL: """
            WITH RECURSIVE n(k) AS (SELECT 1000 UNION ALL SELECT k + 1 FROM n WHERE k < 1299)
            INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder)
            SELECT k, 'P' || k, 'product ' || k, 'maker ' || k, 12, k FROM n;
            """)
        var options = EngineOptions()
        options.maxNodes = 1_000
        let engine = try TestEngine(path: path, options: options)
        var sql: [String] = []
        engine.session.traceSQL { sql.append($0) }
        let over = engine.run("{ manufacturers { name products(first: 10) { nodes { id } } } }")
        #expect(try codes(over) == ["NODE_LIMIT_EXCEEDED"], "\(over.prefix(300))")
        #expect(over.contains("\"data\":null") && over.contains(#""locations":[{"line":1,"column":24}]"#), "\(over.prefix(400))")
        let makers = try #require(try JSONSerialization.jsonObject(
            with: Data(engine.run("{ manufacturers { name } }").utf8)) as? [String: Any])
        let count = try #require((makers["data"] as? [String: Any])?["manufacturers"] as? [Any]).count
        #expect(count >= 300 && count * 3 <= 1_000)
        #expect(over.contains("up to \(count * 10) nodes"), "\(over.prefix(300))")
        #expect(!sql.contains { $0.contains("cg_rn") }, "the pages' statement ran: \(sql.suffix(2))")
        sql = []
        let three = engine.run("{ manufacturers { name products(first: 3) { nodes { id } } } }")
        #expect(try codes(three).isEmpty, "\(three.prefix(300))")
        #expect(sql.contains { $0.contains("cg_rn") })
        #expect(three.components(separatedBy: "\"id\"").count - 1 >= 300)
        #expect(try codes(engine.run("{ manufacturers { products(first: 10) { totalCount } } }")).isEmpty)
        // Connections alone never count past the estimate: 100 + 100 × 100 meet a limit of 10,100.
        options.maxNodes = 10_100
        let nested = try TestEngine(path: path, options: options).run(
            "{ products(first: 100) { nodes { manufacturer { products(first: 100) { nodes { id } } } } } }")
        #expect(try codes(nested).isEmpty, "\(nested.prefix(300))")
    }

    /// Lists of categories count against the byte limit as the resolver makes them: `path {
    /// path { id } }` under a 20,000-deep chain (2 × 10^8 items) is refused before they exist,
    /// where it used to grow memory without bound before the executor could estimate the field.
    @Test func nestedCategoryListsPastTheByteLimitAreNotMade() throws {
        let path = try Fixture.make(extraSQL: """
            WITH RECURSIVE n(k) AS (SELECT 100000 UNION ALL SELECT k + 1 FROM n WHERE k < 120000)
            INSERT INTO hierarchy (id, menu_title, menu_icon, parent) SELECT k, 'c' || k, '', k - 1 FROM n;
            """)
        let engine = try TestEngine(path: path)
        let text = engine.run("{ category(id: 120000) { path { path { id } } } }")
        #expect(try codes(text) == ["RESPONSE_TOO_LARGE"], "\(text.prefix(300))")
        // One level of it answers: 20,001 ancestors.
        let one = engine.run("{ category(id: 120000) { path { id } } }")
        #expect(try codes(one).isEmpty && one.components(separatedBy: "\"id\"").count - 1 >= 20_001)
    }

    /// Errors are part of the answer: a field that fails for each of many objects (here an
    /// argument out of range under 300 manufacturers, as a timed-out list does under 500,000)
    /// counts its errors against the byte limit.
    @Test func errorsCountAgainstTheByteLimit() throws {
        let path = try Fixture.make(extraSQL: """
            WITH RECURSIVE n(k) AS (SELECT 1000 UNION ALL SELECT k + 1 FROM n WHERE k < 1299)
            INSERT INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, displayorder)
            SELECT k, 'P' || k, 'product ' || k, 'maker ' || k, 12, k FROM n;
            """)
        let query = "{ manufacturers { name products(first: 500) { totalCount } } }"
        var options = EngineOptions()
        options.maxResponseBytes = 200_000
        let roomy = try TestEngine(path: path, options: options).run(query)
        let codes = try codes(roomy)
        #expect(codes.count >= 300 && codes.allSatisfy { $0 == "BAD_USER_INPUT" }, "\(roomy.prefix(300))")
        #expect(roomy.utf8.count > 30_000)
        options.maxResponseBytes = 30_000
        let tight = try TestEngine(path: path, options: options).run(query)
        #expect(try self.codes(tight) == ["RESPONSE_TOO_LARGE"], "\(tight.prefix(300))")
    }

    @Test func aQueryWhoseClientLeftIsStopped() throws {
        let engine = try TestEngine(path: try Self.bigCatalog())
        guard case .ready(let op) = engine.service.prepare(GraphQLRequest(query: Self.heavy)) else {
            Issue.record("did not prepare")
            return
        }
        let result = engine.session.execute(op, cancelled: { true })
        let codes = try codes(String(decoding: result.json, as: UTF8.self))
        #expect(!codes.isEmpty && codes.allSatisfy { $0 == "OPERATION_CANCELLED" })
    }
}
