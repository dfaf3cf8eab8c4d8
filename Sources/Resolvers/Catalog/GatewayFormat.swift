/// Which format of each family of the gateway's objects a catalog file holds, so that gateways
/// of different versions on one file (a rolling or blue/green deploy, a rollback) do not fight.
///
/// Each family has a format number, bumped whenever the SQL of any of its objects changes
/// (`tests/python/test_upgrade.py` pins the SQL of each format): the cg_ indexes
/// (`CatalogPreparation.format`), the search index (`SearchIndex.format`), the category counts
/// (`CategoryCounts.format`) in `cg_formats(family, format)`, and change capture in its own
/// `cg_sync_state.format`. An install records the format it made. A gateway recognises its
/// objects by their text; one that is not its own is replaced when its family's recorded format
/// is this gateway's or older (or none is recorded: gateways up to 0.33 recorded none, and made
/// format 1 of every family), and left alone when it is newer: a newer gateway made it, and
/// replacing it made each gateway's watcher replace the other's at every schema change — the
/// search index refilled and the change history restarted (every feed CHANGES_EXPIRED) 10 to
/// 20 times a second on a 2,000-product catalog (docs/FAULTS.md, stop 34). This gateway then does without it (search
/// scans, counts count rows, catalogChanges takes the version-row rule) and says so at start;
/// `prepare --downgrade` replaces it.
public enum GatewayFormat {
    public static let table = "cg_formats"

    /// Plain SQL any SQLite since 3.7 runs (as every cg_ object: old programs open the file too),
    /// with no key: a PRIMARY KEY on text would add an index named sqlite_autoindex_…, not cg_.
    static let createSQL = "CREATE TABLE IF NOT EXISTS cg_formats (family TEXT NOT NULL, format INTEGER NOT NULL)"

    /// The format recorded for `family`, nil when none is (no cg_formats table, or no row).
    static func stored(_ db: Database, family: String) throws(SQLiteError) -> Int? {
        guard try db.tableExists(table) else { return nil }
        let s = try db.cachedStatement("SELECT max(format) FROM cg_formats WHERE family = ?")
        defer { s.reset() }
        s.bind(family, at: 1)
        return try s.step() && !s.isNull(0) ? Int(s.int64(0)) : nil
    }

    /// True when a newer gateway than this one recorded `family` (format above `ours`).
    static func isNewer(_ db: Database, family: String, than ours: Int) throws(SQLiteError) -> Bool {
        try (stored(db, family: family) ?? 0) > ours
    }

    /// Records that `family`'s objects are now of `format`. Inside the installing transaction.
    static func record(_ db: Database, family: String, format: Int) throws(SQLiteError) {
        guard try stored(db, family: family) != format else { return }
        try db.execute(createSQL)
        let d = try db.prepare("DELETE FROM cg_formats WHERE family = ?")
        d.bind(family, at: 1)
        try d.run()
        let s = try db.prepare("INSERT INTO cg_formats (family, format) VALUES (?, ?)")
        s.bind(family, at: 1)
        s.bind(format, at: 2)
        try s.run()
    }

    /// A family left alone because a newer gateway made it: as `serve` logs and `prepare` prints it.
    public struct Newer: Sendable, Equatable, CustomStringConvertible {
        public let family: String
        public let stored: Int
        public let ours: Int
        public var description: String { "\(family) (format \(stored); this catalog-gateway makes \(ours))" }
    }
}
