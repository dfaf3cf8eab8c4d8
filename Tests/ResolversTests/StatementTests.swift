import CSQLite
import Testing
@testable import Resolvers

/// A bind that SQLite refuses is not dropped: the statement's next step throws it, instead of
/// running with that parameter NULL (which would answer as if the value matched nothing).
@Suite struct StatementTests {
    private func database() throws -> Database {
        try Database(path: ":memory:", readOnly: false, create: true)
    }

    @Test func aParameterIndexOutOfRangeFailsTheStep() throws {
        let db = try database()
        let s = try db.cachedStatement("SELECT ? IS NULL")
        s.bind(Int64(7), at: 2)
        let error = #expect(throws: SQLiteError.self) { _ = try s.step() }
        #expect(error?.primaryCode == SQLITE_RANGE)
        #expect(error?.message.contains("cannot bind a parameter") == true)
        #expect(error?.sql == "SELECT ? IS NULL")
        // The failure was consumed: bound right, the statement runs.
        s.reset()
        s.bind(Int64(7), at: 1)
        #expect(try s.step())
        #expect(s.int64(0) == 0)
    }

    @Test func textOverSQLitesLengthLimitFailsTheStepNotTheBindSilently() throws {
        let db = try database()
        sqlite3_limit(db.handle, SQLITE_LIMIT_LENGTH, 100)
        let s = try db.cachedStatement("SELECT length(?), ?")
        s.bind(String(repeating: "x", count: 101), at: 1)
        s.bind("fits", at: 2)
        let error = #expect(throws: SQLiteError.self) { _ = try s.step() }
        #expect(error?.primaryCode == SQLITE_TOOBIG)
        // A failed bind is forgotten by reset, as the bindings are.
        s.reset()
        s.bind(String(repeating: "x", count: 100), at: 1)
        s.bind("fits", at: 2)
        #expect(try s.step())
        #expect(s.int64(0) == 100)
        #expect(s.text(1) == "fits")
    }

    @Test func theFirstFailedBindIsTheOneReported() throws {
        let db = try database()
        sqlite3_limit(db.handle, SQLITE_LIMIT_LENGTH, 10)
        let s = try db.cachedStatement("SELECT ?")
        s.bind(String(repeating: "y", count: 11), at: 1)  // SQLITE_TOOBIG
        s.bind(Int64(1), at: 5)                            // SQLITE_RANGE, later
        let error = #expect(throws: SQLiteError.self) { _ = try s.step() }
        #expect(error?.primaryCode == SQLITE_TOOBIG)
    }
}
