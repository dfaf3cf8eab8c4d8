import Foundation
import Testing
@testable import Resolvers
import Schema

/// Manufacturer logos kept per session for one snapshot (EngineOptions.cacheLogos): the answers
/// are the ones every execution reading its logos gives, a commit drops them, and a page whose
/// manufacturers are all known runs no logo statement.
@Suite struct LogoCacheTests {
    static let queries = [
        // Written by the resolver (manufacturersJSON) and by the general path.
        "{ products(first: 50) { nodes { id manufacturer { name logo } } } }",
        "{ products(first: 50) { nodes { id manufacturer { name logo productCount } } } }",
        "{ manufacturers { name logo } }",
        "{ a: product(id: 1) { manufacturer { logo } } b: product(id: 5) { manufacturer { logo name } } }",
    ]

    static func engine(_ path: String, cache: Bool) throws -> TestEngine {
        var options = EngineOptions()
        options.cacheLogos = cache
        let e = try TestEngine(path: path, options: options)
        e.session.answerCacheLimit = 0  // every run executes
        return e
    }

    @Test func repeatedExecutionsAnswerAsReadingEachTime() throws {
        let path = try Fixture.make()
        let cached = try Self.engine(path, cache: true)
        let uncached = try Self.engine(path, cache: false)
        expectCachedAnswersMatch(cached, uncached, Self.queries)
        // The first mfg row by mfgid of a trimmed name; an empty logo; a name with no row.
        let page = cached.run(Self.queries[0])
        #expect(page.contains(#""manufacturer":{"name":"ARRI","logo":"arri-old.png"}"#))
        #expect(page.contains(#""manufacturer":{"name":"Cooke","logo":null}"#))
        #expect(page.contains(#""manufacturer":{"name":"Chapman","logo":null}"#))
    }

    @Test func aCommitDropsWhatTheSessionKept() throws {
        let path = try Fixture.make()
        let cached = try Self.engine(path, cache: true)
        let q = Self.queries[0]
        #expect(cached.run(q).contains(#""logo":"arri-old.png""#))
        // A changed logo, a name that had no row, a row removed.
        try Database(path: path, readOnly: false).execute("""
            UPDATE mfg SET logo = 'arri-new.png' WHERE mfgid = 3;
            INSERT INTO mfg VALUES (11, 'Chapman', 'chapman.png');
            UPDATE mfg SET logo = 'cooke.png' WHERE manufacturer = 'Cooke';
            DELETE FROM mfg WHERE manufacturer = 'RED';
            """)
        let after = cached.run(q)
        #expect(after == (try Self.engine(path, cache: false)).run(q))
        #expect(after.contains(#""manufacturer":{"name":"ARRI","logo":"arri-new.png"}"#))
        #expect(after.contains(#""manufacturer":{"name":"Chapman","logo":"chapman.png"}"#))
        #expect(after.contains(#""manufacturer":{"name":"Cooke","logo":"cooke.png"}"#))
    }

    /// Statements that read logos while one query runs.
    static func logoReads(_ e: TestEngine, _ q: String) -> Int {
        var n = 0
        e.session.traceSQL { if $0.contains(#""logo" FROM "mfg""#) { n += 1 } }
        _ = e.run(q)
        e.session.traceSQL(nil)
        return n
    }

    @Test func knownLogosRunNoStatement() throws {
        let path = try Fixture.make()
        let cached = try Self.engine(path, cache: true)
        let uncached = try Self.engine(path, cache: false)
        let q = Self.queries[0]
        #expect(Self.logoReads(cached, q) == 1)
        // Known logos and known-missing names (Chapman) alike: nothing to read.
        #expect(Self.logoReads(cached, q) == 0)
        #expect(Self.logoReads(cached, Self.queries[3]) == 0)
        #expect(Self.logoReads(uncached, q) == 1)
        #expect(Self.logoReads(uncached, q) == 1)
        try Database(path: path, readOnly: false).execute("UPDATE Product_Catalog SET description = 'x' WHERE keyid = 1")
        #expect(Self.logoReads(cached, q) == 1)
        #expect(Self.logoReads(cached, q) == 0)
    }
}
