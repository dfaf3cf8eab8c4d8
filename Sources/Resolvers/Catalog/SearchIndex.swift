/// The gateway's own substring index for `search`: an FTS5 table with the trigram tokenizer,
/// `cg_search(name, description, manufacturer)` with rowid = Product_Catalog.keyid, kept current
/// by `cg_search_*` triggers on Product_Catalog in every writer's own transaction.
///
/// It only narrows: the executor still applies SEMANTICS.md's exact test (`SearchWords`) to the
/// rows it yields (trigram case folding covers ASCII, so it never drops a true match). Words
/// shorter than three characters have no trigrams and fall back to the scan.
/// `INSERT OR REPLACE` into Product_Catalog deletes the old row without its DELETE trigger; the
/// INSERT trigger's own `INSERT OR REPLACE` on the same rowid keeps the index exact anyway.
public enum SearchIndex {
    public static let table = "cg_search"

    /// The format of the table and triggers below (`GatewayFormat`): bump it with any change to
    /// their SQL.
    public static let format = 1

    /// The rows whose searched text holds a NUL: the trigram tokenizer ends a text at U+0000, so
    /// the index does not hold what follows, and these rows are added to its hits
    /// (`cg_product_nul_text`, a partial index of exactly these rows, finds them).
    static let nulTextCondition = ["Product", "description", "Manufacturer"]
        .map { "instr(\"\($0)\", char(0)) > 0" }.joined(separator: " OR ")

    static let create = """
        CREATE VIRTUAL TABLE cg_search USING fts5(name, description, manufacturer, tokenize = 'trigram');
        INSERT INTO cg_search(rowid, name, description, manufacturer)
            SELECT "keyid", "Product", "description", "Manufacturer" FROM "Product_Catalog";
        """

    static let triggers = [
        ("cg_search_insert", """
            CREATE TRIGGER cg_search_insert AFTER INSERT ON "Product_Catalog" BEGIN
              INSERT OR REPLACE INTO cg_search(rowid, name, description, manufacturer)
                VALUES (new."keyid", new."Product", new."description", new."Manufacturer");
            END
            """),
        ("cg_search_update", """
            CREATE TRIGGER cg_search_update AFTER UPDATE ON "Product_Catalog" BEGIN
              DELETE FROM cg_search WHERE rowid = old."keyid";
              INSERT OR REPLACE INTO cg_search(rowid, name, description, manufacturer)
                VALUES (new."keyid", new."Product", new."description", new."Manufacturer");
            END
            """),
        ("cg_search_delete", """
            CREATE TRIGGER cg_search_delete AFTER DELETE ON "Product_Catalog" BEGIN
              DELETE FROM cg_search WHERE rowid = old."keyid";
            END
            """),
    ]

    /// Creates the table (filled from the catalog) and its triggers when absent. Call inside a
    /// write transaction. Returns the names of the objects it created. Objects a newer gateway
    /// made (`isNewer`) are left as they are unless `replacingNewer`.
    static func install(_ db: Database, replacingNewer: Bool = false) throws -> [String] {
        var created: [String] = []
        var hadTable = try exists(db)
        // A trigger of that name whose text is not ours (a catalog's own, by an unlucky name)
        // does not keep the index current: it is replaced, as every cg_ name is the gateway's.
        let missing = try triggers.filter { try !isOurs(db, trigger: $0.0, sql: $0.1) }
        if hadTable && missing.isEmpty { return [] }
        if try isNewer(db) {
            guard replacingNewer else { return [] }
            // Its table may be of another shape too: made again from the catalog.
            try db.execute("DROP TABLE IF EXISTS \(table)")
            hadTable = false
        }
        if !hadTable {
            try db.execute(create)
            created.append(table)
        }
        for (name, _) in missing where try exists(db, type: "trigger", name: name) {
            try db.execute("DROP TRIGGER \(name)")
            created.append(name + " (not the gateway's, dropped)")
        }
        if hadTable && !missing.isEmpty {
            // While a trigger was gone (dropped, or Product_Catalog rebuilt by another program,
            // which drops its triggers) the index missed writes: it is filled again, since a
            // row missing from it would be missing from search.
            try db.execute(refill)
            created.append(table + " (refilled)")
        }
        for (name, sql) in missing {
            try db.execute(sql)
            created.append(name)
        }
        try GatewayFormat.record(db, family: table, format: format)
        return created
    }

    static let refill = """
        DELETE FROM cg_search;
        INSERT INTO cg_search(rowid, name, description, manufacturer)
            SELECT "keyid", "Product", "description", "Manufacturer" FROM "Product_Catalog";
        """

    /// True when the index is not this gateway's and a newer gateway recorded its format: it is
    /// left alone (and not used).
    static func isNewer(_ db: Database) throws -> Bool {
        try GatewayFormat.isNewer(db, family: table, than: format) && !isInstalled(db)
    }

    /// Whether the index table exists (complete or not).
    static func exists(_ db: Database) throws -> Bool { try exists(db, type: "table", name: table) }

    /// True when the table and all its triggers are present (so its content is current).
    public static func isInstalled(_ db: Database) throws -> Bool {
        guard try exists(db, type: "table", name: table) else { return false }
        for (name, sql) in triggers where try !isOurs(db, trigger: name, sql: sql) { return false }
        return true
    }

    /// The trigger `name` exists with exactly the text the gateway creates it with.
    private static func isOurs(_ db: Database, trigger name: String, sql: String) throws -> Bool {
        let s = try db.cachedStatement("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?")
        defer { s.reset() }
        s.bind(name, at: 1)
        return try s.step() && s.text(0) == sql
    }

    private static func exists(_ db: Database, type: String, name: String) throws -> Bool {
        let s = try db.cachedStatement("SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?")
        defer { s.reset() }
        s.bind(type, at: 1)
        s.bind(name, at: 2)
        return try s.step()
    }

    /// The FTS5 query for the words that have trigrams (three or more characters), nil when none
    /// has: each word's covering trigrams (`coveringTrigrams`), each a quoted term, all ANDed.
    ///
    /// A row holding a word holds each of its trigrams, so any subset of them narrows without
    /// losing a match. Terms are cheaper than the word's phrase: FTS5 reads no positions, and
    /// a covering set reads about a third of the trigrams' doclists. On bench/data's 1M
    /// catalog, "cooke 32mm" took 7 ms as two phrases and 4 ms as four terms (sqlite3 CLI), for
    /// the same 3,721 candidates.
    static func matchQuery(_ words: [String]) -> String? {
        // The longest few words narrow best; `SearchWords` still checks every word.
        let usable = words.map { ($0.unicodeScalars.count, $0) }.filter { $0.0 >= 3 }
            .sorted { $0.0 > $1.0 }.map(\.1)
        var terms: [String] = []
        var seen = Set<String>()
        for word in usable where terms.count < maxTerms {
            for t in coveringTrigrams(word, limit: maxTerms - terms.count) where seen.insert(t).inserted {
                terms.append(t)
            }
        }
        guard !terms.isEmpty else { return nil }
        return terms.map { "\"" + $0.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\"" }
            .joined(separator: " AND ")
    }

    /// At most this many terms per query: enough to narrow, few enough that a long text does
    /// not become a long query.
    static let maxTerms = 16

    /// The trigrams (three Unicode scalars, as the tokenizer counts them) that cover `word` with
    /// the least overlap: at offsets 0, 3, 6, … and the last three; at most `limit` of them (the
    /// first ones), made without copying the word (a search word may be megabytes). Empty for a
    /// word under three scalars.
    static func coveringTrigrams(_ word: String, limit: Int = .max) -> [String] {
        let scalars = word.unicodeScalars
        let n = scalars.count
        guard n >= 3, limit > 0 else { return [] }
        var starts = Array(stride(from: 0, through: n - 3, by: 3).prefix(limit))
        if starts.last != n - 3 && starts.count < limit { starts.append(n - 3) }
        var out: [String] = []
        out.reserveCapacity(starts.count)
        var i = scalars.startIndex
        var at = 0
        for start in starts {
            i = scalars.index(i, offsetBy: start - at)
            at = start
            out.append(String(scalars[i..<scalars.index(i, offsetBy: 3)]))
        }
        return out
    }
}
