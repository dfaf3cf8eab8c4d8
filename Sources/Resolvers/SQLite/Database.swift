import CSQLite
import Schema
#if canImport(Glibc)
import Glibc
#endif

/// One SQLite connection, owned by one thread at a time (opened NOMUTEX). Closes in deinit.
/// Busy handling is configured once here (busy timeout), never retried at call sites.
public final class Database {
    public let handle: OpaquePointer
    public let path: String
    /// Opened read-only (`readOnly:`); `cannotWrite` also says whether SQLite opened a
    /// read-write request read-only (a file or directory without write permission).
    public let readOnly: Bool
    public var cannotWrite: Bool { readOnly || sqlite3_db_readonly(handle, "main") == 1 }
    private var cache: [SQLKey: Statement] = [:]
    private var traceBox: TraceBox?
    private var progressBox: ProgressBox?
    /// How long a statement waits for another connection's lock (the busy handler's bound).
    private var busyTimeoutMs: Int32 = 5_000
    /// When the current wait for a lock began (monotonic ns).
    private var busySince: UInt64 = 0
    /// Why the last statement was stopped (`stopWhen`), as the error to report; set by the
    /// handler's owner before it returns true.
    public var stopError: GraphQLError?

    /// Process-wide SQLite settings, applied once before the first connection opens: memory
    /// statistics off (`cg_sqlite_disable_memstatus`). False when SQLite was already initialized
    /// by someone else in the process; everything works the same, only slower.
    static let configured: Bool = cg_sqlite_disable_memstatus() == SQLITE_OK

    /// Why there is nothing to open at `path`, said before SQLite is asked, or nil when something
    /// is there: "no such file", or the system's reason when a file may be there but this user
    /// cannot reach it (a directory on the way it may not search fails with EACCES, not ENOENT).
    public static func missingFileReason(_ path: String) -> String? {
        guard access(path, F_OK) != 0 else { return nil }
        return errno == ENOENT ? "no such file" : "cannot open: \(String(cString: strerror(errno)))"
    }

    public init(path: String, readOnly: Bool, create: Bool = false, busyTimeoutMs: Int32 = 5_000) throws(SQLiteError) {
        _ = Self.configured
        // SQLite opens a directory read-only and fails only at the first read, as "disk I/O error".
        var st = stat()
        if !path.hasPrefix("file:"), stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "is a directory, not an SQLite file", sql: nil)
        }
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            var error = statementDidFail(rc, db, sql: nil)
            // "unable to open database file" does not say why; the system's error does
            // (a file this user may not read: Permission denied).
            if rc & 0xFF == SQLITE_CANTOPEN, let db, sqlite3_system_errno(db) != 0 {
                error = SQLiteError(code: error.code, message: "cannot open: \(String(cString: strerror(sqlite3_system_errno(db))))")
            }
            sqlite3_close_v2(db)
            throw error
        }
        self.handle = db
        self.path = path
        self.readOnly = readOnly
        sqlite3_extended_result_codes(db, 1)
        _ = cg_sqlite_disable_dqs(db)
        self.busyTimeoutMs = busyTimeoutMs
        installBusyHandler()
        // Only on this connection, never in the file's schema (no index or trigger names it, so
        // other writers never need it).
        try check(sqlite3_create_function_v2(db, "cg_served_text", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                             nil, servedText, nil, nil, nil), db)
        try check(sqlite3_create_function_v2(db, SearchWords.sqlFunction, 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                             nil, searchWordsFunction, nil, nil, nil), db)
    }

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws(SQLiteError) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), handle, sql: sql)
    }

    /// A new, uncached statement.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: self, sql: sql, persistent: false)
    }

    /// A statement from this connection's cache, reset and with its bindings cleared.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        let key = SQLKey(sql: sql)
        if let s = cache[key] {
            s.reset()
            return s
        }
        let s = try Statement(database: self, sql: sql, persistent: true)
        if cache.count >= Self.statementCacheLimit { cache.removeAll(keepingCapacity: true) }
        cache[key] = s
        return s
    }

    /// Most statements kept prepared on one connection. The SQL texts the resolvers make are
    /// bounded by the shapes of queries, but the Product columns a request reads
    /// (CatalogLayout.select) multiply them by the sets of Product fields clients ask for, up
    /// to 512 — each variant a prepared statement of tens of KB. Past the limit the cache
    /// starts over; a statement in use stays valid (its caller holds it, and it is finalized
    /// when released).
    public static let statementCacheLimit = 256

    /// Statements in the cache (for tests).
    var cachedStatementCount: Int { cache.count }

    /// A statement cache key: equal when the SQL texts are, hashed by the text's length and its
    /// first and last 16 bytes. Hashing the whole text (SipHash over a product SELECT of
    /// 800 bytes) was 3.6 % of a one-product query's instructions, on every lookup.
    struct SQLKey: Hashable {
        let sql: String

        static func == (a: SQLKey, b: SQLKey) -> Bool { a.sql == b.sql }

        func hash(into hasher: inout Hasher) {
            var text = sql
            text.withUTF8 { b in
                hasher.combine(b.count)
                let n = min(16, b.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(b)[0..<n]))
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(b)[(b.count - n)...]))
            }
        }
    }

    /// Drops cached statements (after a schema change, say).
    public func clearStatementCache() { cache.removeAll() }

    public var changes: Int { Int(sqlite3_changes(handle)) }
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` in one transaction, committing on success and rolling back on error.
    public func transaction<T>(_ kind: String = "DEFERRED", _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind)")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The main file's change counter (header offset 24), read straight from the file through
    /// the connection's own VFS handle, without a lock or a transaction; nil unless the header
    /// says rollback-journal mode (read/write versions 1 at offsets 18–19). In that mode every
    /// transaction that modifies the file increments the counter before it releases its lock, so
    /// an unchanged counter means no commit since it was last read; WAL commits do not touch it.
    public func fileChangeCounter() -> UInt32? {
        readHeader(28) { b -> UInt32? in
            guard b[18] == 1, b[19] == 1 else { return nil }
            return UInt32(b[24]) << 24 | UInt32(b[25]) << 16 | UInt32(b[26]) << 8 | UInt32(b[27])
        } ?? nil
    }

    /// The first `count` bytes of the main file's header, read through the connection's own VFS
    /// handle (no lock, no transaction), passed to `body`; nil when the VFS cannot read them.
    private func readHeader<T>(_ count: Int32, _ body: (UnsafeMutableBufferPointer<UInt8>) -> T) -> T? {
        var fp: UnsafeMutableRawPointer? = nil
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &fp) == SQLITE_OK,
              let file = fp?.assumingMemoryBound(to: sqlite3_file.self),
              let read = file.pointee.pMethods?.pointee.xRead else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(count)) { b -> T? in
            guard read(file, b.baseAddress, count, 0) == SQLITE_OK else { return nil }
            return body(b)
        }
    }

    /// Whether the open main file's header says WAL mode (read/write versions 2 at offsets
    /// 18–19), read as `fileChangeCounter` reads; nil when the VFS cannot say.
    public func fileIsWAL() -> Bool? {
        readHeader(20) { b in b[18] == 2 || b[19] == 2 }
    }

    /// How long statements wait for another connection's lock before SQLITE_BUSY.
    public func setBusyTimeout(_ ms: Int32) { busyTimeoutMs = ms }

    /// SQLite's busy timeout, but one that also asks `stopWhen`'s check while it waits: the
    /// progress handler runs only while SQL runs, so a query waiting for another process's lock
    /// waited the whole busy timeout past --max-execution-ms, past its client's cancellation,
    /// and past the shutdown deadline (a stop took 6.8 s with --shutdown-timeout 1 while a
    /// writer held the lock, 39.7 s with --busy-timeout-ms 20000).
    private func installBusyHandler() {
        sqlite3_busy_handler(handle, { ctx, count in
            guard let ctx else { return 0 }
            return Unmanaged<Database>.fromOpaque(ctx).takeUnretainedValue().waitForLock(attempt: count) ? 1 : 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Sleeps a little and returns true to try the lock again, or false to give up (SQLITE_BUSY):
    /// past the busy timeout, or when the stop check says stop (then `stopError` says why).
    private func waitForLock(attempt: Int32) -> Bool {
        let now = monotonicNs()
        if attempt == 0 { busySince = now }
        if let box = progressBox, box.shouldStop() { return false }
        let waited = (now &- busySince) / 1_000_000
        guard waited < UInt64(max(0, busyTimeoutMs)) else { return false }
        // SQLite's own handler sleeps 1, 2, 5, 10 ... 100 ms; a short step keeps the stop check
        // prompt and the lock taken soon after it is free.
        let stepMs = min(UInt64(attempt < 10 ? 1 : 5), UInt64(busyTimeoutMs) - waited)
        usleep(UInt32(stepMs * 1000))
        return true
    }

    /// Whether a writer — this process or another — holds a RESERVED or stronger lock on the
    /// main file (it is inside a write transaction, or committing one), asked through the VFS's
    /// xCheckReservedLock without taking a lock; nil when the VFS cannot say.
    public func writerHoldsLock() -> Bool? {
        var fp: UnsafeMutableRawPointer? = nil
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &fp) == SQLITE_OK,
              let file = fp?.assumingMemoryBound(to: sqlite3_file.self),
              let check = file.pointee.pMethods?.pointee.xCheckReservedLock else { return nil }
        var held: Int32 = 0
        guard check(file, &held) == SQLITE_OK else { return nil }
        return held != 0
    }

    /// The single integer of a one-row query such as a PRAGMA.
    public func scalarInt(_ sql: String) throws(SQLiteError) -> Int64? {
        let s = try cachedStatement(sql)
        defer { s.reset() }
        guard try s.step() else { return nil }
        return s.isNull(0) ? nil : s.int64(0)
    }

    /// Column names of a table in their declared order (PRAGMA table_info), [] if no such table.
    public func columns(of table: String) throws(SQLiteError) -> [String] {
        let s = try prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid")
        s.bind(table, at: 1)
        var names: [String] = []
        while try s.step() { names.append(s.text(0) ?? "") }
        return names
    }

    public func tableExists(_ name: String) throws(SQLiteError) -> Bool {
        let s = try prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE")
        s.bind(name, at: 1)
        return try s.step()
    }

    /// Calls `callback` with the SQL text of every statement as it starts (sqlite3_trace_v2,
    /// SQLITE_TRACE_STMT); nil stops tracing. Used by tests that count statements.
    public func trace(_ callback: ((String) -> Void)?) {
        guard let callback else {
            sqlite3_trace_v2(handle, 0, nil, nil)
            traceBox = nil
            return
        }
        let box = TraceBox(callback)
        traceBox = box
        sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_STMT), { _, ctx, p, _ in
            guard let ctx, let p else { return 0 }
            let box = Unmanaged<TraceBox>.fromOpaque(ctx).takeUnretainedValue()
            if let sql = sqlite3_sql(OpaquePointer(p)) { box.callback(String(cString: sql)) }
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
    }
}

extension Database {
    /// Calls `shouldStop` about every `instructions` SQLite VM instructions of any statement
    /// on this connection; when it returns true the statement stops with SQLITE_INTERRUPT
    /// (sqlite3_progress_handler). nil removes it.
    public func stopWhen(everyInstructions instructions: Int32, _ shouldStop: (() -> Bool)?) {
        guard let shouldStop else {
            sqlite3_progress_handler(handle, 0, nil, nil)
            progressBox = nil
            return
        }
        let box = ProgressBox(shouldStop)
        progressBox = box
        sqlite3_progress_handler(handle, instructions, { ctx in
            guard let ctx else { return 0 }
            return Unmanaged<ProgressBox>.fromOpaque(ctx).takeUnretainedValue().shouldStop() ? 1 : 0
        }, Unmanaged.passUnretained(box).toOpaque())
    }
}

private final class ProgressBox {
    let shouldStop: () -> Bool
    init(_ shouldStop: @escaping () -> Bool) { self.shouldStop = shouldStop }
}

private final class TraceBox {
    let callback: (String) -> Void
    init(_ callback: @escaping (String) -> Void) { self.callback = callback }
}

/// `cg_served_text(x)`: x's text as the gateway serves it — a value that is not valid UTF-8 the way
/// `String(decoding:as:)` repairs it (each maximal invalid sequence one U+FFFD), any other text as
/// it is; NULL stays NULL. Damaged text is served repaired, so two stored values can be served as
/// one name, and a served name is what a client sends back (`ProductSQL.needsServedText`).
private let servedText: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { ctx, _, argv in
    guard let value = argv?[0], sqlite3_value_type(value) != SQLITE_NULL, let p = sqlite3_value_text(value) else {
        sqlite3_result_null(ctx)
        return
    }
    let bytes = UnsafeBufferPointer(start: p, count: Int(sqlite3_value_bytes(value)))
    var text = String(decoding: bytes, as: UTF8.self)
    text.withUTF8 { u in
        if let base = u.baseAddress, !u.isEmpty {
            sqlite3_result_text(ctx, base, Int32(u.count), cg_sqlite_transient())
        } else {
            sqlite3_result_text(ctx, "", 0, cg_sqlite_transient())
        }
    }
}
