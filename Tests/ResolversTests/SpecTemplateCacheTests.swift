import Foundation
import Testing
@testable import Resolvers
import Schema

/// Spec templates kept per session for one snapshot (EngineOptions.cacheSpecTemplates): the
/// answers are the ones every execution reading its templates gives, a commit drops them, and a
/// page whose templates are all known runs no template statement.
@Suite struct SpecTemplateCacheTests {
    /// The fixture's templates (26; 7, which '+7' also names; 99 missing; 'x7' not an integer)
    /// plus one whose labels are not ASCII and not valid UTF-8.
    static let extraSQL = """
        INSERT INTO DetailsKeyValues (DetailsKey, spec_a, spec_b) VALUES (8, 'aÉclair ', CAST(X'62FF20' AS TEXT));
        UPDATE Product_Catalog SET info_DetailsKey = ' 8', info_spec_a = 'yes', info_spec_b = 'b' WHERE keyid = 5;
        """

    static let queries = [
        "{ products(first: 50) { nodes { id specs { key label value } } } }",
        "{ products(first: 50) { nodes { id specs { label __typename } } } }",
        "{ a: product(id: 3) { specs { label } } b: product(id: 7) { specs { key label } } c: product(id: 4) { specs { key } } }",
        "{ category(id: 12) { products { nodes { specs { key label value } } } } }",
    ]

    static func engine(_ path: String, cache: Bool, serialize: Bool = true) throws -> TestEngine {
        var options = EngineOptions()
        options.cacheSpecTemplates = cache
        options.serializeLeafLists = serialize
        let e = try TestEngine(path: path, options: options)
        e.session.answerCacheLimit = 0  // every run executes
        return e
    }

    @Test(arguments: [true, false])
    func repeatedExecutionsAnswerAsReadingEachTime(serialize: Bool) throws {
        let path = try Fixture.make(extraSQL: Self.extraSQL)
        let cached = try Self.engine(path, cache: true, serialize: serialize)
        let uncached = try Self.engine(path, cache: false, serialize: serialize)
        expectCachedAnswersMatch(cached, uncached, Self.queries)
        // The rows the extra template is there for, read from the cache.
        let page = cached.run(Self.queries[0])
        #expect(page.contains(#"{"key":"a","label":"Éclair","value":"yes"},{"key":"b","label":"\#u{FFFD}","value":"b"}"#))
        #expect(page.contains(#""label":"Focal length""#))
    }

    @Test func aCommitDropsWhatTheSessionKept() throws {
        let path = try Fixture.make(extraSQL: Self.extraSQL)
        let cached = try Self.engine(path, cache: true)
        let q = Self.queries[0]
        let before = cached.run(q)
        #expect(before.contains(#""label":"Weight""#))
        let writer = try Database(path: path, readOnly: false)
        // A changed label, a template that was missing (product 4 names 99), one removed (7).
        try writer.execute("""
            UPDATE DetailsKeyValues SET spec_b = 'bMass' WHERE DetailsKey = 26;
            INSERT INTO DetailsKeyValues (DetailsKey, spec_a) VALUES (99, 'aColour');
            DELETE FROM DetailsKeyValues WHERE DetailsKey = 7;
            """)
        let after = cached.run(q)
        #expect(after == (try Self.engine(path, cache: false)).run(q))
        #expect(after.contains(#""label":"Mass""#) && !after.contains(#""label":"Weight""#))
        #expect(after.contains(#"{"key":"a","label":"Colour","value":"z"}"#))
        #expect(!after.contains("Focal length") && !after.contains("T-stop"))
    }

    /// Statements that read DetailsKeyValues while one query runs.
    static func templateReads(_ e: TestEngine, _ q: String) -> Int {
        var n = 0
        e.session.traceSQL { if $0.contains("DetailsKeyValues") { n += 1 } }
        _ = e.run(q)
        e.session.traceSQL(nil)
        return n
    }

    @Test func knownTemplatesRunNoStatement() throws {
        let path = try Fixture.make(extraSQL: Self.extraSQL)
        let cached = try Self.engine(path, cache: true)
        let uncached = try Self.engine(path, cache: false)
        let q = Self.queries[0]
        #expect(Self.templateReads(cached, q) == 1)
        // Known labels and known-missing keys (99) alike: nothing to read.
        #expect(Self.templateReads(cached, q) == 0)
        #expect(Self.templateReads(cached, Self.queries[2]) == 0)
        #expect(Self.templateReads(uncached, q) == 1)
        #expect(Self.templateReads(uncached, q) == 1)
        try Database(path: path, readOnly: false).execute("UPDATE Product_Catalog SET description = 'x' WHERE keyid = 1")
        #expect(Self.templateReads(cached, q) == 1)
        #expect(Self.templateReads(cached, q) == 0)
    }

    /// Each label's JSON, made once, is what JSONWriter writes for the String: quotes,
    /// escapes and all, in any order and after other text.
    @Test func jsonStringsWriteWhatJSONWriterWrites() {
        let strings = ["Sensor", "", "say \"cheese\"", "tab\there\u{1}", "Été \u{FFFD}", "back\\slash"]
        let labels = JSONStrings(strings)
        var w = ScalarText(capacity: 16)  // grows while writing
        var expected = JSONWriter(capacity: 16)
        for i in [3, 0, 5, 1, 4, 2, 2] {
            w.byte(0x2C); expected.raw(",")
            labels.write(i, to: &w)
            expected.string(strings[i])
            #expect(labels[i] == strings[i])
            #expect(labels.isEmpty(i) == strings[i].isEmpty)
        }
        #expect(w.withWritten { Array($0) } == expected.bytes)
    }

    @Test func theCacheIsBounded() throws {
        let cache = SpecTemplateCache(maxEntries: 2)
        cache.use(dataVersion: 1)
        cache.store(1, JSONStrings(["a"]))
        cache.store(2, nil)
        #expect(cache.count == 2 && cache.entries[1]?.strings == ["a"] && cache.missing.contains(2))
        cache.store(3, JSONStrings(["c"]))  // full: starts over
        #expect(cache.count == 1 && cache.entries[3]?.strings == ["c"] && cache.entries[1] == nil)
        cache.use(dataVersion: 1)
        #expect(cache.count == 1)
        cache.use(dataVersion: 2)
        #expect(cache.count == 0)
        cache.store(4, JSONStrings(["d"]))
        cache.invalidate()
        #expect(cache.count == 0 && cache.dataVersion == -1)

        // Bounded by bytes too: templates of long labels start it over before their count
        // would, and one over a quarter of the bound is not kept at all.
        let byBytes = SpecTemplateCache(maxEntries: 4096, maxBytes: 100_000, cost: { _, labels in labels.byteCount })
        byBytes.use(dataVersion: 1)
        let long = JSONStrings([String(repeating: "x", count: 10_000)])
        #expect(long.byteCount > 20_000 && long.byteCount < 25_000)
        for key in 1...4 { byBytes.store(Int64(key), long) }
        #expect(byBytes.count == 4 && byBytes.bytes == 4 * long.byteCount)
        byBytes.store(5, long)  // past 100,000 bytes: starts over
        #expect(byBytes.count == 1 && byBytes.entries[5] != nil && byBytes.bytes == long.byteCount)
        byBytes.store(6, JSONStrings([String(repeating: "y", count: 13_000)]))
        #expect(byBytes.entries[6] == nil && byBytes.count == 1)

        // A resolver whose cache holds one key answers a page of several templates as one
        // without a cache, run after run.
        let path = try Fixture.make(extraSQL: Self.extraSQL)
        let db = try Database(path: path, readOnly: true)
        let layout = try CatalogLayout(db: db, path: path)
        let tiny = SpecTemplateCache(maxEntries: 1)
        tiny.use(dataVersion: 0)
        func run(_ query: String, _ cache: SpecTemplateCache?) -> String {
            let service = QueryService()
            guard case .ready(let op) = service.prepare(GraphQLRequest(query: query)) else { return "does not prepare" }
            let resolver = CatalogResolver(db: db, layout: layout, hierarchy: { Hierarchy(rows: []) },
                                           schema: CatalogSchema.shared, templateCache: cache)
            let planner = Planner(schema: CatalogSchema.shared, document: op.document, variables: op.variables)
            let root = planner.plan(typeName: "Query", selectionSets: [op.operation.selectionSet])
            return String(decoding: Executor(planner: planner, resolver: resolver).run(rootPlan: root).json, as: UTF8.self)
        }
        let expected = run(Self.queries[0], nil)
        #expect(expected.contains("Focal length") && expected.contains("Weight"))
        for _ in 0..<3 { #expect(run(Self.queries[0], tiny) == expected) }
        #expect(tiny.count <= 1)
    }
}
