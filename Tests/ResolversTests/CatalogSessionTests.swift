import Foundation
import Testing
@testable import Resolvers

/// A catalog file replaced on disk while a session has it open (docs/FAULTS.md): the session
/// keeps reading the file it opened until `reopen`, which moves it to the file now at the path
/// or throws and keeps the old one.
@Suite struct CatalogSessionTests {
    static let nameQuery = "{ product(id: \"1\") { name } catalogVersion { version } }"

    /// Selection plans are reused per (document, operation, variables): other variables get
    /// their own plan, and a plan carrying an argument error fails the same way every time.
    @Test func plansAreReusedPerOperationAndVariables() throws {
        let path = try Fixture.make()
        defer { unlink(path) }
        let engine = try TestEngine(path: path)
        engine.session.answerCacheLimit = 0
        let query = "query($id: ID!) { product(id: $id) { id name } }"
        let one = engine.run(query, variables: .object([("id", .string("1"))]))
        let two = engine.run(query, variables: .object([("id", .string("2"))]))
        #expect(one == #"{"data":{"product":{"id":"1","name":"ALEXA Mini LF"}}}"#)
        #expect(two != one && two.hasPrefix(#"{"data":{"product":{"id":"2","#))
        #expect(engine.run(query, variables: .object([("id", .string("1"))])) == one)
        let bad = "{ products(first: 500) { totalCount } }"
        let first = engine.run(bad)
        #expect(first.contains("must be between 0 and 100, got 500.") && first.contains("\"path\":[\"products\"]"))
        #expect(engine.run(bad) == first)
    }

    /// Each catalog connection gets the page cache of --page-cache-mb, also after a reopen.
    @Test func pageCacheFollowsTheOption() throws {
        let path = try Fixture.make()
        defer { unlink(path) }
        #expect(EngineOptions().pageCacheKiB == 64 * 1024)
        var options = EngineOptions()
        options.pageCacheKiB = 12_345
        let engine = try TestEngine(path: path, options: options)
        #expect(try engine.session.db.scalarInt("PRAGMA cache_size") == -12_345)
        try engine.session.reopen()
        #expect(try engine.session.db.scalarInt("PRAGMA cache_size") == -12_345)
    }

    @Test func fileIdentityNamesTheInodeAtThePath() throws {
        let path = try Fixture.make()
        defer { unlink(path) }
        let engine = try TestEngine(path: path)
        #expect(engine.session.file == CatalogFileIdentity(path: path))
        #expect(engine.session.file != nil)
        #expect(CatalogFileIdentity(path: path + ".missing") == nil)
    }

    @Test func renamedOverFileIsReadOnlyAfterReopen() throws {
        let path = try Fixture.make()
        let other = try Fixture.make(extraSQL: "UPDATE Product_Catalog SET Product = 'Replaced' WHERE keyid = 1; INSERT INTO version VALUES (9, '', '');")
        defer { unlink(path) }
        let engine = try TestEngine(path: path)
        let before = #"{"data":{"product":{"name":"ALEXA Mini LF"},"catalogVersion":{"version":6}}}"#
        #expect(engine.run(Self.nameQuery) == before)

        #expect(rename(other, path) == 0)
        #expect(engine.session.file != CatalogFileIdentity(path: path))
        // Still the open (old) file, answer cache or not.
        #expect(engine.run(Self.nameQuery) == before)

        try engine.session.reopen()
        #expect(engine.session.file == CatalogFileIdentity(path: path))
        #expect(engine.run(Self.nameQuery) == #"{"data":{"product":{"name":"Replaced"},"catalogVersion":{"version":9}}}"#)
    }

    @Test func reopenOnAFileThatIsNotACatalogThrowsAndKeepsTheOldFile() throws {
        let path = try Fixture.make()
        defer { unlink(path) }
        let engine = try TestEngine(path: path)
        let before = engine.run(Self.nameQuery)
        let opened = engine.session.file

        let junk = path + ".junk"
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: junk))
        #expect(rename(junk, path) == 0)
        #expect(throws: CatalogError.self) { try engine.session.reopen() }
        #expect(engine.session.file == opened)
        #expect(engine.run(Self.nameQuery) == before)

        unlink(path)
        #expect(throws: CatalogError.self) { try engine.session.reopen() }
        #expect(engine.run(Self.nameQuery) == before)
    }
}
