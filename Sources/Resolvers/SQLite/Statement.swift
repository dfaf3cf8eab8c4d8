import CSQLite

public enum SQLiteColumnType: Sendable {
    case integer, real, text, blob, null
}

/// A value to bind or read back.
public enum SQLValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// Text compares by its bytes, as SQLite compares it (`ExactString`), not by canonical
    /// equivalence as String does.
    public static func == (a: SQLValue, b: SQLValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.integer(x), .integer(y)): return x == y
        case let (.real(x), .real(y)): return x == y
        case let (.text(x), .text(y)): return x.utf8.elementsEqual(y.utf8)
        case let (.blob(x), .blob(y)): return x == y
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .integer(let v): hasher.combine(1); hasher.combine(v)
        case .real(let v): hasher.combine(2); hasher.combine(v)
        case .text(let s): hasher.combine(3); ExactString.hashUTF8(s, into: &hasher)
        case .blob(let b): hasher.combine(4); hasher.combine(b)
        }
    }
}

/// One prepared statement, owned by its Database; finalized in deinit.
public final class Statement {
    public let handle: OpaquePointer
    public let sql: String
    private unowned let database: Database
    /// The first failed bind since the last reset (SQLITE_OK when none): `step` throws it
    /// rather than run the statement with a parameter left unbound (NULL).
    private var bindResult: Int32 = SQLITE_OK

    init(database: Database, sql: String, persistent: Bool) throws(SQLiteError) {
        var stmt: OpaquePointer?
        let flags: UInt32 = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sqlite3_prepare_v3(database.handle, sql, -1, flags, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw statementDidFail(rc, database.handle, sql: sql)
        }
        self.handle = stmt
        self.sql = sql
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// Advances; true when a row is available, false when done.
    @inline(__always)
    public func step() throws(SQLiteError) -> Bool {
        if bindResult != SQLITE_OK { throw bindDidFail() }
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let error = statementDidFail(rc, database.handle, sql: sql)
        sqlite3_reset(handle)
        throw error
    }

    /// Runs to completion, ignoring rows.
    public func run() throws(SQLiteError) {
        while try step() {}
    }

    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        bindResult = SQLITE_OK
    }

    /// The error of the first failed bind, with its parameter's SQLite message; clears it (the
    /// statement's bindings are cleared too, so a retry binds afresh).
    private func bindDidFail() -> SQLiteError {
        let rc = bindResult
        bindResult = SQLITE_OK
        sqlite3_clear_bindings(handle)
        return SQLiteError(code: rc, message: "cannot bind a parameter: " + String(cString: sqlite3_errstr(rc)), sql: sql)
    }

    // MARK: Binding (1-based indexes, as SQLite)
    //
    // A bind fails on an index out of range (a programming error) or a value over SQLite's
    // length limit; the first failure is kept and thrown by the next `step`.

    @inline(__always)
    private func check(_ rc: Int32) {
        if rc != SQLITE_OK && bindResult == SQLITE_OK { bindResult = rc }
    }

    public func bind(_ value: Int64, at i: Int32) { check(sqlite3_bind_int64(handle, i, value)) }
    public func bind(_ value: Int, at i: Int32) { check(sqlite3_bind_int64(handle, i, Int64(value))) }
    public func bind(_ value: Double, at i: Int32) { check(sqlite3_bind_double(handle, i, value)) }
    /// Binds the whole string with its byte length (a NUL inside is part of the text).
    public func bind(_ value: String, at i: Int32) {
        var v = value
        v.withUTF8 { bindText(UnsafeRawBufferPointer($0), at: i) }
    }
    /// Binds UTF-8 bytes as text, all of them (a NUL inside is part of the text); SQLite copies them.
    public func bindText(_ bytes: UnsafeRawBufferPointer, at i: Int32) {
        if let base = bytes.baseAddress, bytes.count > 0 {
            check(sqlite3_bind_text64(handle, i, base.assumingMemoryBound(to: CChar.self), sqlite3_uint64(bytes.count),
                                      cg_sqlite_transient(), UInt8(SQLITE_UTF8)))
        } else {
            check(sqlite3_bind_text(handle, i, "", 0, cg_sqlite_transient()))
        }
    }
    public func bindNull(at i: Int32) { check(sqlite3_bind_null(handle, i)) }
    public func bind(_ value: SQLValue, at i: Int32) {
        switch value {
        case .null: bindNull(at: i)
        case .integer(let v): bind(v, at: i)
        case .real(let v): bind(v, at: i)
        case .text(let v): bind(v, at: i)
        case .blob(let b):
            b.withUnsafeBytes { p in
                check(sqlite3_bind_blob64(handle, i, p.baseAddress, sqlite3_uint64(p.count), cg_sqlite_transient()))
            }
        }
    }
    public func bind(_ values: [SQLValue]) {
        for (k, v) in values.enumerated() { bind(v, at: Int32(k + 1)) }
    }

    // MARK: Columns (0-based)

    public var columnCount: Int32 { sqlite3_column_count(handle) }
    public func columnName(_ i: Int32) -> String { String(cString: sqlite3_column_name(handle, i)) }

    @inline(__always)
    public func type(_ i: Int32) -> SQLiteColumnType {
        switch sqlite3_column_type(handle, i) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }
    @inline(__always) public func isNull(_ i: Int32) -> Bool { sqlite3_column_type(handle, i) == SQLITE_NULL }
    @inline(__always) public func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, i) }
    @inline(__always) public func double(_ i: Int32) -> Double { sqlite3_column_double(handle, i) }

    /// The column as `int64` reads it, for less when it is text of 1 to 18 ASCII digits (a
    /// number stored as text, such as kitQTY): `sqlite3_column_int64` parses text with
    /// `sqlite3Atoi64` (about 160 instructions for '2', against about 90 this way). Such digits
    /// are the number they spell for SQLite too; any other value is converted by SQLite.
    @inline(__always)
    public func int64ReadingDigits(_ i: Int32) -> Int64 {
        guard let v = sqlite3_column_value(handle, i) else { return 0 }
        if sqlite3_value_type(v) == SQLITE_TEXT, let p = sqlite3_value_text(v) {
            let n = Int(sqlite3_value_bytes(v))
            if n > 0 && n <= 18 {
                var x: Int64 = 0
                var k = 0
                while k < n {
                    let d = p[k] &- 0x30
                    if d > 9 { break }
                    x = x &* 10 &+ Int64(d)
                    k += 1
                }
                if k == n { return x }
            }
        }
        return sqlite3_value_int64(v)
    }

    /// The column as text (numbers converted by SQLite), nil for NULL.
    @inline(__always)
    public func text(_ i: Int32) -> String? {
        let b = textBytes(i)
        guard let p = b.baseAddress else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: b.count), as: UTF8.self)
    }

    /// The column's text bytes without copying, nil base address for NULL. Valid until the
    /// statement steps or resets, or this column is read again as another type.
    ///
    /// Read through the column's `sqlite3_value`: `sqlite3_column_text` and `_bytes` each find
    /// the column and check the connection's error state again (about 150 instructions a text
    /// column, against about 70 this way). The value is the same one they read ("unprotected",
    /// which matters only for a connection shared between threads: ours are NOMUTEX, one
    /// thread at a time), and `sqlite3_value_text` converts a number as `sqlite3_column_text`
    /// does.
    @inline(__always)
    public func textBytes(_ i: Int32) -> UnsafeRawBufferPointer {
        guard let v = sqlite3_column_value(handle, i), let p = sqlite3_value_text(v) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: p, count: Int(sqlite3_value_bytes(v)))
    }

    /// The column's text bytes without copying (valid only inside `body`); empty for NULL.
    @inline(__always)
    public func withText<R>(_ i: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(textBytes(i))
    }

    /// Column `i`'s bytes as stored, for a BLOB (sqlite3_column_text would convert them to the
    /// database's encoding first, in a UTF-16 database).
    public func withBlob<R>(_ i: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let p = sqlite3_column_blob(handle, i) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        let n = Int(sqlite3_column_bytes(handle, i))
        return try body(UnsafeRawBufferPointer(start: p, count: n))
    }

    public func value(_ i: Int32) -> SQLValue {
        switch type(i) {
        case .null: return .null
        case .integer: return .integer(int64(i))
        case .real: return .real(double(i))
        case .text: return .text(text(i) ?? "")
        case .blob:
            let n = Int(sqlite3_column_bytes(handle, i))
            guard let p = sqlite3_column_blob(handle, i) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: p, count: n)))
        }
    }
}
