/// The gateway's own product count per category: `cg_category_counts(cat, n)`, one row per
/// distinct non-null `Product_Catalog.cat` value, kept exact by `cg_counts_*` triggers in every
/// writer's own transaction.
///
/// SQLite keeps no counts in its B-trees, so `count(*) ... WHERE cat = ?` steps every index entry
/// of the category: 2,856 entries, about 100 µs, for the busiest category of the benchmark's
/// 1,000,000-product catalog, a tenth of that category page's execution — and
/// `productCount(includeDescendants: true)` near a root steps every product below it. With this
/// table a category's `totalCount` is one indexed row per category.
///
/// The table is made with `CREATE TABLE ... AS SELECT "cat"`, so its `cat` column has the affinity
/// of `Product_Catalog.cat`: a stored value and the bound id compare exactly as they do in
/// `p."cat" = ?` (145 and '145' are one integer, ' x' stays text, NULL is never counted).
///
/// INSERT OR REPLACE (and UPDATE OR REPLACE of keyid) delete the row they replace without firing
/// delete triggers. The BEFORE triggers copy the row about to be replaced (its keyid and cat) into
/// `cg_category_counts_pending`; the AFTER trigger of the insert or update that did replace it
/// takes it back out and uncounts it. An INSERT OR IGNORE that was ignored fires the BEFORE
/// trigger only: its copy stays behind, names a row that still exists, and is overwritten or
/// removed by the next statement that touches that keyid (every trigger clears the copies of the
/// keys it sees go), so it is never uncounted. This holds only when keyid is the table's rowid
/// and no other UNIQUE index can make REPLACE delete a row: `install` checks both and adds nothing
/// otherwise, and `isInstalled` checks them again, so such a file keeps counting with count(*).
///
/// Plain SQL that any SQLite since 3.7 runs (no UPSERT), as ChangeCapture's triggers: every
/// program that opens the catalog must be able to run them. No statement in a trigger body has
/// an ON CONFLICT clause (the outer statement's, say INSERT OR REPLACE, would override it) and
/// none can meet a constraint (a copy is inserted only after the copy of the same keyid is
/// deleted, and a rowid names one row), so the triggers never make a writer's statement fail.
public enum CategoryCounts {
    public static let table = "cg_category_counts"
    static let pendingTable = "cg_category_counts_pending"
    static let indexName = "cg_category_counts_cat"

    /// The format of the objects below (`GatewayFormat`): bump it with any change to their SQL.
    public static let format = 1

    static let triggers: [(name: String, sql: String)] = [
        ("cg_counts_bi", """
            CREATE TRIGGER cg_counts_bi BEFORE INSERT ON "Product_Catalog" BEGIN
              DELETE FROM cg_category_counts_pending WHERE keyid = NEW."keyid";
              INSERT INTO cg_category_counts_pending (keyid, cat)
                SELECT "keyid", "cat" FROM "Product_Catalog" WHERE "keyid" = NEW."keyid";
            END
            """),
        ("cg_counts_ai", """
            CREATE TRIGGER cg_counts_ai AFTER INSERT ON "Product_Catalog" BEGIN
              UPDATE cg_category_counts SET n = n - 1
                WHERE cat IN (SELECT cat FROM cg_category_counts_pending WHERE keyid = NEW."keyid");
              DELETE FROM cg_category_counts_pending WHERE keyid = NEW."keyid";
              INSERT INTO cg_category_counts (cat, n) SELECT NEW."cat", 0
                WHERE NEW."cat" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM cg_category_counts WHERE cat = NEW."cat");
              UPDATE cg_category_counts SET n = n + 1 WHERE cat = NEW."cat";
            END
            """),
        ("cg_counts_bu", """
            CREATE TRIGGER cg_counts_bu BEFORE UPDATE OF "keyid" ON "Product_Catalog"
            WHEN NEW."keyid" IS NOT OLD."keyid" BEGIN
              DELETE FROM cg_category_counts_pending WHERE keyid = NEW."keyid";
              INSERT INTO cg_category_counts_pending (keyid, cat)
                SELECT "keyid", "cat" FROM "Product_Catalog" WHERE "keyid" = NEW."keyid";
            END
            """),
        ("cg_counts_au", """
            CREATE TRIGGER cg_counts_au AFTER UPDATE ON "Product_Catalog"
            WHEN NEW."keyid" IS NOT OLD."keyid" OR NEW."cat" IS NOT OLD."cat" BEGIN
              UPDATE cg_category_counts SET n = n - 1
                WHERE NEW."keyid" IS NOT OLD."keyid"
                  AND cat IN (SELECT cat FROM cg_category_counts_pending WHERE keyid = NEW."keyid");
              DELETE FROM cg_category_counts_pending
                WHERE NEW."keyid" IS NOT OLD."keyid" AND keyid IN (NEW."keyid", OLD."keyid");
              UPDATE cg_category_counts SET n = n - 1 WHERE cat = OLD."cat";
              INSERT INTO cg_category_counts (cat, n) SELECT NEW."cat", 0
                WHERE NEW."cat" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM cg_category_counts WHERE cat = NEW."cat");
              UPDATE cg_category_counts SET n = n + 1 WHERE cat = NEW."cat";
            END
            """),
        ("cg_counts_ad", """
            CREATE TRIGGER cg_counts_ad AFTER DELETE ON "Product_Catalog" BEGIN
              UPDATE cg_category_counts SET n = n - 1 WHERE cat = OLD."cat";
              DELETE FROM cg_category_counts_pending WHERE keyid = OLD."keyid";
            END
            """),
    ]

    /// Every object `install` creates, in creation order.
    public static var objectNames: [String] { [table, indexName, pendingTable] + triggers.map(\.name) }

    /// Creates the table (filled from the catalog), its index, the pending table and the triggers
    /// when any of them is missing or a trigger is not ours (another text: an older gateway's) —
    /// dropping whatever part was left, since a missing trigger means a count may have gone
    /// stale. Does nothing on a file whose Product_Catalog is not eligible (see the type's
    /// comment), nor, unless `replacingNewer`, when a newer gateway made them (`isNewer`). Call
    /// inside a write transaction. Returns the names of the objects it created.
    static func install(_ db: Database, replacingNewer: Bool = false) throws -> [String] {
        guard try eligible(db) else { return [] }
        if try allPresent(db) { return [] }
        if !replacingNewer, try isNewer(db) { return [] }
        for (name, _) in triggers { try db.execute("DROP TRIGGER IF EXISTS \(name)") }
        try db.execute("""
            DROP TABLE IF EXISTS \(table);
            DROP TABLE IF EXISTS \(pendingTable);
            CREATE TABLE \(table) AS
              SELECT "cat" AS cat, count(*) AS n FROM "Product_Catalog" WHERE "cat" IS NOT NULL GROUP BY "cat";
            CREATE UNIQUE INDEX \(indexName) ON \(table)(cat);
            CREATE TABLE \(pendingTable) (keyid INTEGER PRIMARY KEY, cat);
            """)
        for (_, sql) in triggers { try db.execute(sql) }
        try GatewayFormat.record(db, family: table, format: format)
        return objectNames
    }

    /// True when the objects are not this gateway's and a newer gateway recorded their format:
    /// they are left alone (and counting falls back to count(*)).
    static func isNewer(_ db: Database) throws -> Bool {
        try GatewayFormat.isNewer(db, family: table, than: format) && !allPresent(db)
    }

    /// True when the counts can be read instead of counting: every object is present and the
    /// file is still eligible.
    public static func isInstalled(_ db: Database) throws -> Bool {
        try allPresent(db) && eligible(db)
    }

    /// Every object is present and each trigger has the text this gateway creates it with (one
    /// of another text counts only what its own gateway meant it to).
    private static func allPresent(_ db: Database) throws -> Bool {
        let s = try db.cachedStatement("SELECT name, type = 'trigger', sql FROM sqlite_master WHERE name IN (SELECT value FROM json_each(?))")
        defer { s.reset() }
        s.bind("[" + objectNames.map { "\"\($0)\"" }.joined(separator: ",") + "]", at: 1)
        var present = 0
        while try s.step() {
            present += 1
            if s.int64(1) != 0, let name = s.text(0), s.text(2) != triggerSQL[name] { return false }
        }
        return present == objectNames.count
    }

    private static let triggerSQL = Dictionary(uniqueKeysWithValues: triggers.map { ($0.name, $0.sql) })

    /// Product_Catalog has `keyid` and an integer `cat`, keyid is its rowid (INTEGER PRIMARY KEY
    /// of a rowid table) and it has no UNIQUE index (a constraint REPLACE could delete rows for).
    static func eligible(_ db: Database) throws -> Bool {
        let info = try db.prepare("SELECT name, upper(type), pk FROM pragma_table_info('Product_Catalog')")
        var keyidIsRowid = false, hasCat = false, pkColumns = 0
        while try info.step() {
            let name = (info.text(0) ?? "").lowercased()
            if info.int64(2) > 0 { pkColumns += 1 }
            if name == "keyid" { keyidIsRowid = info.int64(2) == 1 && info.text(1) == "INTEGER" }
            // An integer column (as radiant-schema.sql declares it): no collation games.
            if name == "cat" { hasCat = (info.text(1) ?? "").contains("INT") }
        }
        guard keyidIsRowid, hasCat, pkColumns == 1 else { return false }
        // A WITHOUT ROWID table lists its primary key here too (origin 'pk').
        let unique = try db.prepare("SELECT count(*) FROM pragma_index_list('Product_Catalog') WHERE \"unique\"")
        return try unique.step() && unique.int64(0) == 0
    }
}
