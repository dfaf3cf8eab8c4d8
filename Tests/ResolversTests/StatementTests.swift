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

    /// `int64ReadingDigits` reads plain digits itself and leaves everything else to SQLite: it
    /// gives what `sqlite3_column_int64` gives for every value (the same value in a second column).
    @Test func int64ReadingDigitsReadsWhatSQLiteReads() throws {
        let db = try database()
        let texts = ["2", "0", "007", "12", "999999999999999999", "1000000000000000000", "9223372036854775807",
                     "9223372036854775808", "99999999999999999999", "", " 2", "2 ", "+3", "-1", "1.5", "2e3",
                     "2x", "x2", "٣", "2\u{0}5", "0x10", "1e400"]
        let s = try db.cachedStatement("SELECT ?, ?1")
        for t in texts {
            s.reset()
            s.bind(t, at: 1)
            #expect(try s.step())
            #expect(s.int64ReadingDigits(0) == s.int64(1), "text \(t.debugDescription)")
        }
        let others = try db.cachedStatement("""
            SELECT v, v FROM (SELECT 7 AS v UNION ALL SELECT -2.9 UNION ALL SELECT NULL \
            UNION ALL SELECT x'3432' UNION ALL SELECT 1e30)
            """)
        var n = 0
        while try others.step() {
            #expect(others.int64ReadingDigits(0) == others.int64(1))
            n += 1
        }
        #expect(n == 5)
    }
}
