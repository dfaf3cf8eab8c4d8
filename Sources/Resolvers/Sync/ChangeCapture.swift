import CSQLite

// Change capture: gateway-owned tables and triggers (all `cg_`-prefixed) that record every insert,
// update and delete of Product_Catalog, Product_Assets, hierarchy, DetailsKeyValues and mfg in
// the writer's own transaction, whoever the writer is. The catalog's own tables are never
// altered. Design and the reasons behind it: docs/SYNC.md.
//
// Everything below is plain SQL that any SQLite since 3.7 parses and runs (no UPSERT, window
// functions, char(), unixepoch() ...): the triggers become part of the file's schema, and every
// program that ever opens the catalog — an old app, the sqlite3 shell — must be able to run them.

/// What the capture objects record about each watched table.
struct WatchedTable: Sendable {
    /// The one-letter code stored in cg_changes.tbl.
    let code: String
    let table: String
    /// The column that identifies a row (the table's primary key).
    let key: String
    /// A second column the change sets need (the kit a Product_Assets row belongs to, the name
    /// of an mfg row), old and new value recorded with the key.
    let ref: String?
    /// Trigger name stem: cg_<stem>_ai ...
    let stem: String

    static let all: [WatchedTable] = [
        WatchedTable(code: "P", table: "Product_Catalog", key: "keyid", ref: nil, stem: "product_catalog"),
        WatchedTable(code: "A", table: "Product_Assets", key: "assetID", ref: "kitID", stem: "product_assets"),
        WatchedTable(code: "H", table: "hierarchy", key: "id", ref: nil, stem: "hierarchy"),
        WatchedTable(code: "D", table: "DetailsKeyValues", key: "DetailsKey", ref: nil, stem: "details_key_values"),
        WatchedTable(code: "M", table: "mfg", key: "mfgid", ref: "manufacturer", stem: "mfg"),
    ]
}

/// Why change capture could not be installed or compacted.
public enum ChangeCaptureError: Error, CustomStringConvertible, Sendable {
    /// The file lacks a table or column the triggers need.
    case notACatalog(String)
    case database(SQLiteError)

    public var description: String {
        switch self {
        case .notACatalog(let m): return "not a Radiant catalog: \(m)"
        case .database(let e): return e.description
        }
    }
}

/// Installs, inspects and compacts the change log. All methods take the connection they run on;
/// `install` and `compact` write (each in one IMMEDIATE transaction of its own, so call them
/// outside any transaction), the others only read.
public enum ChangeCapture {
    /// Format of the capture objects, stored in cg_sync_state.format. Bumped when the SQL of any
    /// of them changes: an install finding an older format (or triggers of another text)
    /// recreates the triggers and restarts the history (older versions expire); one finding a
    /// newer format leaves them to the newer gateway that made them (`GatewayFormat`).
    public static let format = 1

    static let tablesSQL = """
        CREATE TABLE IF NOT EXISTS cg_changes (
          seq INTEGER PRIMARY KEY,
          tbl TEXT NOT NULL,
          op TEXT NOT NULL,
          old_key,
          new_key,
          old_ref,
          new_ref
        );
        CREATE TABLE IF NOT EXISTS cg_versions (
          versionid INTEGER PRIMARY KEY,
          seq INTEGER NOT NULL,
          recorded_at REAL NOT NULL
        );
        CREATE TABLE IF NOT EXISTS cg_sync_state (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          format INTEGER NOT NULL,
          installed_version INTEGER NOT NULL,
          installed_at REAL NOT NULL,
          oldest_version INTEGER NOT NULL
        );
        """

    /// The CREATE TRIGGER statements for one watched table.
    static func triggersSQL(_ t: WatchedTable) -> [String] {
        let table = quoteIdentifier(t.table)
        let k = quoteIdentifier(t.key)
        let refOld = t.ref.map { "OLD." + quoteIdentifier($0) } ?? "NULL"
        let refNew = t.ref.map { "NEW." + quoteIdentifier($0) } ?? "NULL"
        let refCol = t.ref.map(quoteIdentifier) ?? "NULL"
        let c = "'\(t.code)'"
        let name = "cg_\(t.stem)"
        return [
            // INSERT OR REPLACE (and UPDATE OR REPLACE) delete the row they replace without
            // firing delete triggers (unless recursive_triggers is on). The BEFORE triggers note
            // the row about to be replaced as op 'R'; it counts as deleted only when the next
            // change naming its key is the insert (or update) that replaced it — INSERT OR
            // IGNORE fires BEFORE triggers too (ChangeSets resolves this when reading).
            """
            CREATE TRIGGER \(name)_bi BEFORE INSERT ON \(table) BEGIN
              INSERT INTO cg_changes (tbl, op, old_key, old_ref)
                SELECT \(c), 'R', \(k), \(refCol) FROM \(table) WHERE \(k) = NEW.\(k);
            END
            """,
            """
            CREATE TRIGGER \(name)_ai AFTER INSERT ON \(table) BEGIN
              INSERT INTO cg_changes (tbl, op, new_key, new_ref) VALUES (\(c), 'I', NEW.\(k), \(refNew));
            END
            """,
            """
            CREATE TRIGGER \(name)_bu BEFORE UPDATE OF \(k) ON \(table) WHEN NEW.\(k) IS NOT OLD.\(k) BEGIN
              INSERT INTO cg_changes (tbl, op, old_key, old_ref)
                SELECT \(c), 'R', \(k), \(refCol) FROM \(table) WHERE \(k) = NEW.\(k);
            END
            """,
            """
            CREATE TRIGGER \(name)_au AFTER UPDATE ON \(table) BEGIN
              INSERT INTO cg_changes (tbl, op, old_key, new_key, old_ref, new_ref)
                VALUES (\(c), 'U', OLD.\(k), NEW.\(k), \(refOld), \(refNew));
            END
            """,
            """
            CREATE TRIGGER \(name)_ad AFTER DELETE ON \(table) BEGIN
              INSERT INTO cg_changes (tbl, op, old_key, old_ref) VALUES (\(c), 'D', OLD.\(k), \(refOld));
            END
            """,
        ]
    }

    /// The two triggers on `version`: when a version row with a greater versionid than any seen
    /// appears (inserted, or an existing row's versionid raised), remember the change log's
    /// high-water mark at that moment. Every change up to it belongs to that version or an
    /// earlier one.
    static let versionTriggersSQL: [String] = [
        """
        CREATE TRIGGER cg_version_ai AFTER INSERT ON "version"
        WHEN NOT EXISTS (SELECT 1 FROM cg_versions WHERE versionid >= NEW."versionid") BEGIN
          INSERT INTO cg_versions (versionid, seq, recorded_at)
            VALUES (NEW."versionid", (SELECT coalesce(max(seq), 0) FROM cg_changes), julianday('now'));
        END
        """,
        """
        CREATE TRIGGER cg_version_au AFTER UPDATE OF "versionid" ON "version"
        WHEN NOT EXISTS (SELECT 1 FROM cg_versions WHERE versionid >= NEW."versionid") BEGIN
          INSERT INTO cg_versions (versionid, seq, recorded_at)
            VALUES (NEW."versionid", (SELECT coalesce(max(seq), 0) FROM cg_changes), julianday('now'));
        END
        """,
    ]

    /// The triggers `install` creates, in creation order.
    public static func triggerNames() -> [String] {
        WatchedTable.all.flatMap { t in ["bi", "ai", "bu", "au", "ad"].map { "cg_\(t.stem)_\($0)" } }
            + ["cg_version_ai", "cg_version_au"]
    }

    // MARK: Install

    /// The tables `install` creates, in creation order.
    public static let tableNames = ["cg_changes", "cg_versions", "cg_sync_state"]

    /// Every object `install` creates, in creation order: the tables, the index, the triggers.
    public static var objectNames: [String] { tableNames + indexNames + triggerNames() }

    /// The index that finds the products a template names (change sets for a template edit
    /// would otherwise scan every product).
    public static let indexNames = ["cg_product_details_key"]

    /// The integer a product's info_DetailsKey names, as indexed and as ChangeSets queries it
    /// (a prefilter: the exact rule, an integer with an optional sign, is checked in Swift).
    static let detailsKeyExpression = "CAST(trim(info_DetailsKey, \(CatalogSQL.ws)) AS INTEGER)"

    /// Installs the capture tables and triggers when they are missing or of an older format;
    /// does nothing (and writes nothing) when they are in place. Returns the names of the
    /// objects it created ([] when all were present). Runs in the caller's transaction when
    /// there is one (`prepare` installs inside its own IMMEDIATE transaction), else in one
    /// IMMEDIATE transaction of its own.
    ///
    /// History starts at the version current at installation: a `sinceVersion` older than that
    /// is CHANGES_EXPIRED. A reinstall (older format, or a trigger found missing, so changes may
    /// have gone unrecorded) restarts the history at the current version.
    ///
    /// Capture of a newer format (`isNewer`) is left as it is unless `replacingNewer`.
    @discardableResult
    public static func install(_ db: Database, replacingNewer: Bool = false) throws(ChangeCaptureError) -> [String] {
        do {
            if try isInstalled(db), try !detailsIndexMissing(db) { return [] }
            if !replacingNewer, try isNewer(db) { return [] }
            try checkCatalog(db)
            let body = { () throws -> [String] in
                // Re-checked under the write lock: another process may have installed meanwhile.
                // An index alone is added without touching the history.
                if try isInstalled(db) { return try createDetailsIndex(db) }
                if try isNewer(db) {
                    guard replacingNewer else { return [] }
                    // Its tables may be of another shape too: made again, the history with them.
                    for t in tableNames { try db.execute("DROP TABLE IF EXISTS \(t)") }
                }
                return try installNow(db)
            }
            if db.isInTransaction { return try body() }
            return try db.transaction("IMMEDIATE", body)
        } catch let e as ChangeCaptureError {
            throw e
        } catch let e as SQLiteError {
            throw .database(e)
        } catch {
            throw .database(SQLiteError(code: SQLITE_ERROR, message: "\(error)"))
        }
    }

    private static func installNow(_ db: Database) throws -> [String] {
        let existing = try objectsPresent(db)
        try db.execute(tablesSQL)
        _ = try createDetailsIndex(db)
        let now = try objectsPresent(db)
        var created = (tableNames + indexNames).filter { !existing.contains($0) && now.contains($0) }
        for name in triggerNames() { try db.execute("DROP TRIGGER IF EXISTS \(name)") }
        for t in WatchedTable.all { for sql in triggersSQL(t) { try db.execute(sql) } }
        for sql in versionTriggersSQL { try db.execute(sql) }
        created += triggerNames()
        let current = try currentVersion(db)
        let hw = try db.scalarInt("SELECT coalesce(max(seq), 0) FROM cg_changes") ?? 0
        // Versions recorded by an earlier install are history that may have gaps.
        try db.execute("DELETE FROM cg_versions")
        let v = try db.prepare("INSERT INTO cg_versions (versionid, seq, recorded_at) VALUES (?, ?, julianday('now'))")
        v.bind(current, at: 1); v.bind(hw, at: 2)
        try v.run()
        let s = try db.prepare("""
            INSERT OR REPLACE INTO cg_sync_state (id, format, installed_version, installed_at, oldest_version)
            VALUES (1, ?, ?, julianday('now'), ?)
            """)
        s.bind(format, at: 1); s.bind(current, at: 2); s.bind(current, at: 3)
        try s.run()
        return created
    }

    /// True when Product_Catalog has info_DetailsKey but cg_product_details_key is absent.
    static func detailsIndexMissing(_ db: Database) throws -> Bool {
        try db.columns(of: "Product_Catalog").contains { $0.lowercased() == "info_detailskey" }
            && !objectsPresent(db).contains("cg_product_details_key")
    }

    private static func createDetailsIndex(_ db: Database) throws -> [String] {
        guard try detailsIndexMissing(db) else { return [] }
        try db.execute("CREATE INDEX cg_product_details_key ON Product_Catalog(\(detailsKeyExpression))")
        return ["cg_product_details_key"]
    }

    private static func objectsPresent(_ db: Database) throws(SQLiteError) -> Set<String> {
        let s = try db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'cg%'")
        var out: Set<String> = []
        while try s.step() { if let n = s.text(0) { out.insert(n) } }
        return out
    }

    /// True when the capture tables and every trigger exist, each trigger with the text this
    /// gateway creates it with, and are of the current format.
    public static func isInstalled(_ db: Database) throws(SQLiteError) -> Bool {
        let names = triggerNames()
        let s = try db.cachedStatement("""
            SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN (SELECT value FROM json_each(?))
            """)
        defer { s.reset() }
        s.bind("[" + names.map { "\"\($0)\"" }.joined(separator: ",") + "]", at: 1)
        var present = 0
        while try s.step() {
            guard let name = s.text(0), s.text(1) == triggerSQL[name] else { return false }
            present += 1
        }
        guard present == names.count else { return false }
        s.reset()
        for t in tableNames where !(try db.tableExists(t)) {
            return false
        }
        return try db.scalarInt("SELECT format FROM cg_sync_state WHERE id = 1") == Int64(format)
    }

    /// Each trigger's text by name, as `installNow` creates it.
    private static let triggerSQL: [String: String] = Dictionary(uniqueKeysWithValues: zip(
        triggerNames(), WatchedTable.all.flatMap(triggersSQL) + versionTriggersSQL))

    /// True when capture is not this gateway's and cg_sync_state records a newer format than
    /// this gateway's: a newer gateway made it, and it is left alone (catalogChanges takes the
    /// version-row rule, as on a read-only file).
    public static func isNewer(_ db: Database) throws(SQLiteError) -> Bool {
        guard try db.tableExists("cg_sync_state"),
              let stored = try db.scalarInt("SELECT format FROM cg_sync_state WHERE id = 1"),
              stored > Int64(format) else { return false }
        return try !isInstalled(db)
    }

    /// Every table and column the triggers name must exist (an unknown column in a trigger body
    /// would make every later write to that table fail).
    static func checkCatalog(_ db: Database) throws -> Void {
        for t in WatchedTable.all {
            let cols = try db.columns(of: t.table).map { $0.lowercased() }
            if cols.isEmpty { throw ChangeCaptureError.notACatalog("table \(t.table) is missing") }
            for c in [t.key] + (t.ref.map { [$0] } ?? []) where !cols.contains(c.lowercased()) {
                throw ChangeCaptureError.notACatalog("column \(t.table).\(c) is missing")
            }
        }
        if !(try db.columns(of: "version").map { $0.lowercased() }.contains("versionid")) {
            throw ChangeCaptureError.notACatalog("table version or its column versionid is missing")
        }
    }

    // MARK: State

    /// The catalog's current version: the greatest versionid, 0 when `version` is empty.
    public static func currentVersion(_ db: Database) throws(SQLiteError) -> Int {
        Int(try db.scalarInt("SELECT coalesce(max(versionid), 0) FROM \"version\"") ?? 0)
    }

    /// The capture bookkeeping as stored, nil when capture is not installed.
    public struct State: Sendable, Equatable {
        /// The version current when capture was (last) installed.
        public var installedVersion: Int
        /// The oldest `sinceVersion` still answered: history before it was never recorded or
        /// has been compacted away.
        public var oldestVersion: Int
    }

    public static func state(_ db: Database) throws(SQLiteError) -> State? {
        guard try db.tableExists("cg_sync_state") else { return nil }
        let s = try db.cachedStatement("SELECT installed_version, oldest_version FROM cg_sync_state WHERE id = 1")
        defer { s.reset() }
        guard try s.step() else { return nil }
        return State(installedVersion: Int(s.int64(0)), oldestVersion: Int(s.int64(1)))
    }

    // MARK: Retention

    /// What a compaction did.
    public struct CompactionResult: Sendable, Equatable {
        /// The oldest `sinceVersion` still answered afterwards.
        public var oldestVersion: Int
        /// Change rows deleted.
        public var deletedChanges: Int
    }

    /// Drops the history no client may ask for any more, in one IMMEDIATE transaction.
    /// `keepVersions`: the newest n versions (n >= 1, the current one included) stay valid
    /// `sinceVersion`s. `keepDays`: versions recorded in the last d days stay valid. With both,
    /// a version must satisfy both; with neither, nothing happens. The current version always
    /// stays valid. Older `sinceVersion`s then get CHANGES_EXPIRED.
    public static func compact(_ db: Database, keepVersions: Int?, keepDays: Int?,
                               now: Double? = nil) throws(ChangeCaptureError) -> CompactionResult {
        do {
            return try db.transaction("IMMEDIATE") { () throws -> CompactionResult in
                guard let st = try state(db) else {
                    throw ChangeCaptureError.notACatalog("change capture is not installed")
                }
                var versions: [(id: Int, seq: Int64, at: Double)] = []
                let s = try db.prepare("SELECT versionid, seq, recorded_at FROM cg_versions ORDER BY versionid")
                while try s.step() { versions.append((Int(s.int64(0)), s.int64(1), s.double(2))) }
                guard let newest = versions.last else {
                    return CompactionResult(oldestVersion: st.oldestVersion, deletedChanges: 0)
                }
                var oldest = st.oldestVersion
                if let n = keepVersions {
                    let n = max(1, n)
                    if versions.count > n { oldest = max(oldest, versions[versions.count - n].id) }
                }
                if let d = keepDays {
                    let nowJD: Double
                    if let now { nowJD = now } else { nowJD = try julianNow(db) }
                    let cutoff = nowJD - Double(d)
                    let first = versions.first { $0.at >= cutoff }?.id ?? newest.id
                    oldest = max(oldest, first)
                }
                oldest = min(oldest, newest.id)
                guard oldest > st.oldestVersion else {
                    return CompactionResult(oldestVersion: st.oldestVersion, deletedChanges: 0)
                }
                // The high-water mark of the new oldest version: changes up to it are history.
                guard let mark = versions.last(where: { $0.id <= oldest })?.seq else {
                    return CompactionResult(oldestVersion: st.oldestVersion, deletedChanges: 0)
                }
                // The newest change row is never deleted: seq is an INTEGER PRIMARY KEY, whose
                // next value is max(seq) + 1, and must never go back below a recorded mark.
                let del = try db.prepare("""
                    DELETE FROM cg_changes WHERE seq <= ? AND seq < (SELECT max(seq) FROM cg_changes)
                    """)
                del.bind(mark, at: 1)
                try del.run()
                let deleted = db.changes
                let dv = try db.prepare("DELETE FROM cg_versions WHERE versionid < ?")
                dv.bind(oldest, at: 1)
                try dv.run()
                let up = try db.prepare("UPDATE cg_sync_state SET oldest_version = ? WHERE id = 1")
                up.bind(oldest, at: 1)
                try up.run()
                return CompactionResult(oldestVersion: oldest, deletedChanges: deleted)
            }
        } catch let e as ChangeCaptureError {
            throw e
        } catch let e as SQLiteError {
            throw .database(e)
        } catch {
            throw .database(SQLiteError(code: SQLITE_ERROR, message: "\(error)"))
        }
    }

    static func julianNow(_ db: Database) throws(SQLiteError) -> Double {
        let s = try db.cachedStatement("SELECT julianday('now')")
        defer { s.reset() }
        _ = try s.step()
        return s.double(0)
    }
}
