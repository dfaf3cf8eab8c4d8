import CSQLite

/// A failed SQLite call: the (extended) result code, SQLite's message, and the SQL involved.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code; self.message = message; self.sql = sql
    }

    /// The primary result code (SQLITE_BUSY for SQLITE_BUSY_SNAPSHOT, ...).
    public var primaryCode: Int32 { code & 0xFF }
    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    /// SQLITE_READONLY_ROLLBACK: a read-only connection met a hot journal (a writer stopped in
    /// the middle of a transaction), which only a connection that can write rolls back.
    public var isHotJournal: Bool { code == Self.readOnlyRollback }
    static let readOnlyRollback: Int32 = SQLITE_READONLY | (3 << 8)

    public var description: String {
        var s = "SQLite error \(code): \(message)"
        if let sql { s += " — while executing `\(sql)`" }
        return s
    }
}

/// Every C return code goes through here: reads the connection's message first, then throws.
@inline(__always)
func check(_ rc: Int32, _ db: OpaquePointer?, sql: String? = nil) throws(SQLiteError) {
    if rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE { return }
    throw statementDidFail(rc, db, sql: sql)
}

func statementDidFail(_ rc: Int32, _ db: OpaquePointer?, sql: String?) -> SQLiteError {
    let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        ?? String(cString: sqlite3_errstr(rc))
    let code = db.map { sqlite3_extended_errcode($0) } ?? rc
    return SQLiteError(code: code, message: explained(message, code: code), sql: sql)
}

/// SQLite's message, with what "database is locked" alone does not say (it reads like a fault
/// of the file): whose lock, and that the busy timeout has already been waited. "file is not a
/// database" is said as every command says it, naming the format.
func explained(_ message: String, code: Int32) -> String {
    if code & 0xFF == SQLITE_NOTADB { return "not an SQLite database" }
    if code & 0xFF == SQLITE_BUSY { return message + " (another process held its lock longer than the busy timeout)" }
    if code == SQLiteError.readOnlyRollback {
        return message + " (a writer stopped in the middle of a transaction and left a hot journal, which only a"
            + " connection that can write rolls back: open the file read-write once, or serve it without --read-only)"
    }
    return message
}
