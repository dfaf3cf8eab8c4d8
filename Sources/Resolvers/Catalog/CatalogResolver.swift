import Schema
import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// Resolves the catalog schema's fields over one read transaction of one session. Each call
/// handles every object of one level, with at most a couple of SQL statements.
final class CatalogResolver: BatchResolver {
    /// Set by the executor before each field (`BatchResolver.byteBudget`): bounds what
    /// `nodesJSON` writes.
    var byteBudget = Int.max
    let db: Database
    let layout: CatalogLayout
    /// Reads the hierarchy (cached per committed change by the session); called only by fields
    /// that need it, so `product(id:)` never pays for a large category table.
    private let loadHierarchy: () throws -> Hierarchy
    private var loadedHierarchy: Hierarchy?
    /// The hierarchy, once `needsHierarchy` has loaded it for the current field.
    var hierarchy: Hierarchy { loadedHierarchy ?? Hierarchy(rows: []) }
    let introspection: IntrospectionResolver
    /// For a subscription event: the version the subscriber last received (catalogChanges).
    let subscriptionSince: Int?
    /// The subscriber's `subscriptionSince` is a version of another catalog file (the catalog
    /// was replaced on disk): its change set is CHANGES_EXPIRED whatever the numbers say.
    let subscriptionHistoryLost: Bool
    /// The version of the last change set computed (reported to the subscription hub).
    private(set) var lastChangeSetVersion: Int?

    /// EngineOptions.serializeLeafLists.
    let serializeLeafLists: Bool
    /// The session's spec templates of this snapshot (EngineOptions.cacheSpecTemplates); nil:
    /// every execution reads the templates it needs.
    let templateCache: SpecTemplateCache?
    /// The session's manufacturer logos of this snapshot (EngineOptions.cacheLogos); nil: none.
    let logoCache: LogoCache?

    init(db: Database, layout: CatalogLayout, hierarchy: @escaping () throws -> Hierarchy, schema: GraphQLSchema,
         subscriptionSince: Int? = nil, subscriptionHistoryLost: Bool = false, serializeLeafLists: Bool = true, templateCache: SpecTemplateCache? = nil,
         logoCache: LogoCache? = nil) {
        self.db = db; self.layout = layout; self.loadHierarchy = hierarchy
        self.introspection = IntrospectionResolver(schema: schema)
        self.subscriptionSince = subscriptionSince
        self.subscriptionHistoryLost = subscriptionHistoryLost
        self.serializeLeafLists = serializeLeafLists
        self.templateCache = templateCache
        self.logoCache = logoCache
    }

    func resolve(type: String, field: PlannedField, objects: [ObjectValue]) throws(GraphQLError) -> [ResolvedValue] {
        do {
            if loadedHierarchy == nil && Self.needsHierarchy(type: type, field: field.name) {
                loadedHierarchy = try loadHierarchy()
            }
            switch type {
            case "Query": return try objects.map { _ in try root(field) }
            case "Subscription":
                if field.name == "catalogChanges" {
                    let since = subscriptionSince ?? field.int("sinceVersion")
                    return try objects.map { _ in try changeSet(since: since) }
                }
                return try objects.map { _ in try root(field) }
            case "CatalogChangeSet": return try changeSetField(field, objects)
            case "CatalogVersion": return objects.map { catalogVersionField(field, $0) }
            case "Category": return try category(field, objects)
            case "Product": return try product(field, objects)
            case "Manufacturer": return try manufacturer(field, objects)
            case "ProductConnection": return try connection(field, objects)
            case "ProductEdge": return objects.map { edgeField(field, $0) }
            case "PageInfo": return objects.map { pageInfoField(field, $0) }
            case "Video", "Spec", "KitItem", "LetterCount": return leafObjectFields(field, objects)
            default: return try introspection.resolve(type: type, field: field, objects: objects)
            }
        } catch {
            throw Self.graphQLError(for: error, stopError: db.stopError)
        }
    }

    /// What a failure while resolving is answered with: a GraphQL error as it is; the stop's
    /// reason (`stopError`) when SQL was stopped while it ran (INTERRUPT) or waited for a lock
    /// (BUSY); a database error with its code; anything else as an internal error.
    static func graphQLError(for error: Error, stopError: GraphQLError?) -> GraphQLError {
        switch error {
        case let e as GraphQLError: return e
        case let e as SQLiteError:
            if e.primaryCode == SQLITE_INTERRUPT || e.isBusy, let stopError { return stopError }
            return databaseError(e)
        case let c as CatalogError: return GraphQLError(c.description, extensions: ["code": .string("CATALOG_UNAVAILABLE")])
        default: return GraphQLError("Internal error: \(error)", extensions: ["code": .string("INTERNAL_SERVER_ERROR")])
        }
    }

    static func needsHierarchy(type: String, field: String) -> Bool {
        switch (type, field) {
        case ("Category", _), ("Query", "categories"), ("Query", "category"), ("Query", "products"),
             ("Product", "category"), ("CatalogChangeSet", "categories"):
            return true
        default:
            return false
        }
    }

    static func databaseError(_ e: SQLiteError) -> GraphQLError {
        if e.isBusy {
            return GraphQLError("The catalog is locked by another writer; try again.",
                                extensions: ["code": .string("CATALOG_BUSY")])
        }
        return GraphQLError("Catalog database error: \(e.message)", extensions: ["code": .string("DATABASE_ERROR")])
    }

    static func badInput(_ message: String) -> GraphQLError {
        GraphQLError(message, extensions: ["code": .string("BAD_USER_INPUT")])
    }

    // MARK: Query / Subscription

    private func root(_ f: PlannedField) throws -> ResolvedValue {
        switch f.name {
        case "catalogVersion": return .object(.catalogVersion(try Self.catalogVersion(db)))
        case "categories": return .list(hierarchy.roots.map { .object(.category($0)) })
        case "category":
            guard let id = f.string("id")?.idInteger, let node = hierarchy.byID[id] else { return .null }
            return .object(.category(node))
        case "product":
            guard let id = f.string("id")?.idInteger else { return .null }
            let select = layout.select(for: f.child.fields)
            let s = try db.cachedStatement(select.byKeySQL)
            s.bind(id, at: 1)
            defer { s.reset() }
            return try s.step() ? .object(.product(layout.readProduct(s, select))) : .null
        case "products":
            var filter = ProductFilter()
            if case .object? = f.arguments["filter"], let input = f.arguments["filter"] {
                if case .string(let c)? = input["categoryId"] {
                    let id = c.idInteger
                    var include = false
                    if case .bool(let b)? = input["includeDescendants"] { include = b }
                    if let id { filter.cats = include ? hierarchy.descendants(of: id) : [id] } else { filter.cats = [] }
                }
                if case .string(let m)? = input["manufacturer"] { filter.manufacturer = m }
                if case .string(let s)? = input["sku"] { filter.sku = s }
                if case .string(let l)? = input["letter"] {
                    guard l == "#" || (l.utf8.count == 1 && l >= "A" && l <= "Z") else {
                        throw Self.badInput("Argument \"filter.letter\" must be a capital letter \"A\"..\"Z\" or \"#\", got \"\(l)\".")
                    }
                    filter.letter = l
                }
            }
            return .object(.connection(try makeConnection(.filtered(filter), f, select: connectionSelect(f))))
        case "search":
            let text = f.string("text") ?? ""
            // Repeated words change nothing (every word must match): keep each once.
            // By their bytes (`uniqueExactly`): "é" and "e\u{301}" are two words.
            let words = text.utf8.split(whereSeparator: isSpaceByte).map { String(decoding: $0, as: UTF8.self) }
                .uniqueExactly()
            guard !words.isEmpty else {
                throw Self.badInput("Argument \"text\" must contain at least one word.")
            }
            var filter = ProductFilter()
            filter.searchWords = words
            // The index holds the stored bytes: a word with U+FFFD may match damaged text only
            // as served (`ProductSQL.needsServedText`), so it does not narrow through the index;
            // nor does a word holding U+0000, which an FTS5 query cannot spell.
            if layout.hasSearchIndex {
                filter.searchMatch = SearchIndex.matchQuery(words.filter {
                    !ProductSQL.needsServedText($0) && !ProductSQL.needsOwnBinding($0)
                })
            }
            return .object(.connection(try makeConnection(.filtered(filter), f, select: connectionSelect(f), defaultOrder: .name)))
        case "alphabet":
            let s = try db.cachedStatement("SELECT \(ProductSQL.initial) AS l, count(*) FROM \"Product_Catalog\" p GROUP BY l")
            defer { s.reset() }
            var counts: [String: Int] = [:]
            while try s.step() { counts[s.text(0) ?? "#"] = Int(s.int64(1)) }
            let letters = (65...90).map { String(UnicodeScalar(UInt8($0))) } + ["#"]
            return .list(letters.compactMap { l in
                guard let c = counts[l], c > 0 else { return nil }
                return .object(.letterCount(letter: l, count: c))
            })
        case "manufacturers":
            let s = try db.cachedStatement("""
                SELECT DISTINCT \(ProductSQL.trimmedManufacturer) AS m FROM "Product_Catalog" p \
                WHERE m <> '' ORDER BY m
                """)
            defer { s.reset() }
            var names: [String] = []
            while try s.step() { names.append(s.text(0) ?? "") }
            // Stored names that are not valid UTF-8 are served repaired, and several may be
            // served as one name: that name once, in the order of the names as served.
            if names.contains(where: ProductSQL.needsServedText) {
                // By their bytes (`uniqueExactly`): names that differ only by normalization are
                // two manufacturers.
                names = names.uniqueExactly().sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            }
            return .list(names.map { .object(.manufacturer(ManufacturerRef(name: $0))) })
        case "catalogChanges": return try changeSet(since: f.int("sinceVersion"))
        case "__schema": return .object(.introSchema)
        case "__type":
            guard let name = f.string("name"), introspection.schema.type(name) != nil else { return .null }
            return .object(.introType(.named(name)))
        default: return .null
        }
    }

    static func catalogVersion(_ db: Database) throws -> CatalogVersionValue {
        let s = try db.cachedStatement(
            "SELECT versionid, updatecatalogrow, updateassetrow FROM \"version\" ORDER BY versionid DESC LIMIT 1")
        defer { s.reset() }
        guard try s.step() else { return CatalogVersionValue(version: 0, catalogRow: nil, assetRow: nil) }
        func row(_ i: Int32) -> Int? {
            let v: Int64?
            switch s.type(i) {
            case .integer: v = s.int64(i)
            case .text: v = s.text(i)?.plainDigits
            default: v = nil
            }
            guard let v, v >= Int64(Int32.min), v <= Int64(Int32.max) else { return nil }
            return Int(v)
        }
        return CatalogVersionValue(version: Int(s.int64(0)), catalogRow: row(1), assetRow: row(2))
    }

    private func catalogVersionField(_ f: PlannedField, _ o: ObjectValue) -> ResolvedValue {
        guard case .catalogVersion(let v) = o else { return .null }
        switch f.name {
        case "version": return .int(v.version)
        case "catalogRow": return v.catalogRow.map { .int($0) } ?? .null
        case "assetRow": return v.assetRow.map { .int($0) } ?? .null
        default: return .null
        }
    }

    // MARK: Sync

    /// The change set for (since, current]; without `since`, the empty set at the current version.
    private func changeSet(since: Int?) throws -> ResolvedValue {
        do {
            if subscriptionHistoryLost, let since {
                throw ChangeSetError.expired(since: since, oldest: (try? ChangeSets.oldestResumable(db)) ?? nil)
            }
            let set = try ChangeSets.compute(db, since: since ?? ChangeCapture.currentVersion(db))
            lastChangeSetVersion = set.version
            return .object(.changeSet(set))
        } catch let e as ChangeSetError {
            if case .database(let d) = e { throw Self.databaseError(d) }
            throw GraphQLError(e.message, extensions: ["code": .string(e.code)])
        }
    }

    private func changeSetField(_ f: PlannedField, _ objects: [ObjectValue]) throws -> [ResolvedValue] {
        let sets: [ChangeSet] = objects.compactMap { if case .changeSet(let c) = $0 { return c } else { return nil } }
        switch f.name {
        case "version": return sets.map { .int($0.version) }
        case "removedProductIds": return sets.map { .list($0.removedProductIDs.map { .id($0) }) }
        case "removedCategoryIds": return sets.map { .list($0.removedCategoryIDs.map { .id($0) }) }
        case "categories":
            return sets.map { .list($0.categoryIDs.compactMap { hierarchy.byID[$0] }.map { .object(.category($0)) }) }
        case "products":
            let ids = Array(Set(sets.flatMap(\.productIDs)))
            let select = layout.select(for: f.child.fields)
            let s = try db.cachedStatement(select.byKeysSQL)
            defer { s.reset() }
            s.bind(ProductSQL.jsonArray(ids), at: 1)
            var rows: [Int64: ProductRow] = [:]
            while try s.step() {
                let row = layout.readProduct(s, select)
                rows[row.keyid] = row
            }
            return sets.map { .list($0.productIDs.compactMap { rows[$0] }.map { .object(.product($0)) }) }
        default: return sets.map { _ in .null }
        }
    }

    // MARK: Connections

    /// The columns a connection field's products are read with: what its `nodes` and
    /// `edges { node }` select.
    private func connectionSelect(_ f: PlannedField) -> ProductSelect {
        var fields: [PlannedField] = []
        for c in f.child.fields {
            switch c.name {
            case "nodes": fields += c.child.fields
            case "edges": for e in c.child.fields where e.name == "node" { fields += e.child.fields }
            default: break
            }
        }
        return layout.select(for: fields)
    }

    private func makeConnection(_ set: ProductSet, _ f: PlannedField, select: ProductSelect,
                                defaultOrder: ProductOrder = .catalog) throws -> ConnectionRef {
        let first = try Self.firstArgument(f)
        let order = f.string("orderBy").flatMap(ProductOrder.init(rawValue:)) ?? defaultOrder
        let afterCursor = f.string("after")
        var key: SortKey?
        if let afterCursor {
            // A cursor of another order (another orderBy's page) is as foreign as a malformed one.
            guard let k = Cursor.decode(afterCursor, order: order) else {
                throw Self.badInput("Argument \"after\" is not a valid cursor: \"\(Self.shown(afterCursor))\".")
            }
            key = k.truncated.isEmpty ? k : try completeKey(k)
        }
        return ConnectionRef(set: set, order: order, first: first, afterCursor: afterCursor, after: key, select: select)
    }

    /// A client's text as an error message repeats it: at most its first 100 characters.
    static func shown(_ text: String) -> String {
        text.count <= 100 ? text : "\(text.prefix(100))… (\(text.utf8.count) bytes)"
    }

    /// A decoded key whose long texts the cursor holds only the start of: the rest is read
    /// from the cursor's row (by keyid, in this read transaction) when that row's value still
    /// starts so; otherwise (the row was deleted or its value changed) the start stands for the
    /// value, and the page begins after it — after the rows whose value it is a prefix of.
    private func completeKey(_ key: SortKey) throws -> SortKey {
        guard case .integer(let keyid) = key.values.last else { return key }
        let s = try db.cachedStatement(Self.sortValuesByKeySQL)
        defer { s.reset() }
        s.bind(keyid, at: 1)
        guard try s.step() else { return key }
        // Columns 1...3: Manufacturer, displayorder, Product; the key's columns are a suffix of
        // those for NAME (Product) and all of them for CATALOG.
        let stored = [s.sortValue(1), s.sortValue(2), s.sortValue(3)]
        var complete = key
        for i in key.truncated {
            let column = key.order == .name ? 2 : i
            switch (key.values[i], stored[column]) {
            case (.text(let start), .text(let whole)) where whole.starts(with: start),
                 (.blob(let start), .blob(let whole)) where whole.starts(with: start):
                complete.values[i] = stored[column]
            default: break
            }
        }
        complete.truncated = []
        return complete
    }

    static func firstArgument(_ f: PlannedField) throws -> Int {
        guard let n = f.connectionFirst else {
            let value = f.arguments["first"] ?? .null
            let shown: String
            switch value {
            case .int(let i): shown = String(i)
            case .double(let d): shown = String(d)
            default: shown = "\(value)"
            }
            throw badInput("Argument \"first\" must be between 0 and 100, got \(shown).")
        }
        return n
    }

    private func connection(_ f: PlannedField, _ objects: [ObjectValue]) throws -> [ResolvedValue] {
        let refs: [ConnectionRef] = objects.compactMap { if case .connection(let c) = $0 { return c } else { return nil } }
        switch f.name {
        case "totalCount":
            try loadCounts(refs.filter { $0.total == nil })
            return refs.map { .int($0.total ?? 0) }
        case "nodes":
            try loadPages(refs.filter { $0.page == nil })
            if let json = nodesJSON(f, refs) { return json }
            return refs.map { r in .list((r.page ?? []).map { .object(.product($0)) }) }
        case "edges":
            try loadPages(refs.filter { $0.page == nil })
            if f.child.fields.contains(where: { $0.name == "cursor" }) {
                try loadCursors(refs.map { r in (r, Array((r.page ?? []).indices)) })
            }
            return refs.map { r in
                .list((r.page ?? []).enumerated().map { i, p in .object(.edge(p, cursor: r.cursors[i] ?? "")) })
            }
        case "pageInfo":
            try loadPages(refs.filter { $0.page == nil })
            let names = Set(f.child.fields.map(\.name))
            try loadCursors(refs.map { r in
                let count = r.page?.count ?? 0
                var wanted: [Int] = []
                if count > 0, names.contains("startCursor") { wanted.append(0) }
                if count > 0, names.contains("endCursor") { wanted.append(count - 1) }
                return (r, wanted)
            })
            return refs.map { .object(.pageInfo($0.pageInfo)) }
        default: return refs.map { _ in .null }
        }
    }

    private func edgeField(_ f: PlannedField, _ o: ObjectValue) -> ResolvedValue {
        guard case .edge(let p, let cursor) = o else { return .null }
        return f.name == "cursor" ? .string(cursor) : .object(.product(p))
    }

    private func pageInfoField(_ f: PlannedField, _ o: ObjectValue) -> ResolvedValue {
        guard case .pageInfo(let p) = o else { return .null }
        switch f.name {
        case "hasNextPage": return .bool(p.hasNextPage)
        case "hasPreviousPage": return .bool(p.hasPreviousPage)
        case "startCursor": return p.startCursor.map { .string($0) } ?? .null
        case "endCursor": return p.endCursor.map { .string($0) } ?? .null
        default: return .null
        }
    }

    /// Groups of connections that one statement can serve: all filtered sets stand alone;
    /// category and manufacturer sets of one level share a statement.
    private func loadCounts(_ refs: [ConnectionRef]) throws {
        guard !refs.isEmpty else { return }
        var categories: [ConnectionRef] = []
        var makers: [ConnectionRef] = []
        for r in refs {
            switch r.set {
            case .filtered(let filter) where filter.searchWords != nil:
                r.total = try searchMatches(r, filter).count
            case .filtered(let filter):
                let (w, binds) = ProductSQL.whereClause(filter)
                let s = try db.cachedStatement("SELECT count(*)" + w)
                defer { s.reset() }
                s.bind(binds)
                r.total = try s.step() ? Int(s.int64(0)) : 0
            case .category: categories.append(r)
            case .manufacturer: makers.append(r)
            }
        }
        if !categories.isEmpty {
            let counts = try categoryCounts(categories.map { r in
                if case .category(let root, let cats) = r.set { return (root, cats) } else { return (0, []) }
            })
            for r in categories { if case .category(let root, _) = r.set { r.total = counts[root] ?? 0 } }
        }
        if !makers.isEmpty {
            let counts = try manufacturerCounts(makers.compactMap { if case .manufacturer(let n) = $0.set { return n } else { return nil } })
            for r in makers { if case .manufacturer(let n) = r.set { r.total = counts[ExactString(n)] ?? 0 } }
        }
    }

    private static let categoryMap =
        "WITH m(root, cat) AS MATERIALIZED (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)) "
    private static let makerMap = "WITH m(root) AS MATERIALIZED (SELECT DISTINCT value FROM json_each(?)) "

    private func categoryPairs(_ sets: [(Int64, [Int64])]) -> String {
        var pairs: [(Int64, Int64)] = []
        var seenRoots = Set<Int64>()
        for (root, cats) in sets where seenRoots.insert(root).inserted {
            for c in cats { pairs.append((root, c)) }
        }
        return ProductSQL.jsonPairs(pairs)
    }

    /// Past this many category ids in one call, and past a quarter of the hierarchy's categories
    /// (descendants near the root of a large tree), the counts are read whole — one scan of
    /// cg_category_counts, a row per category — and summed here, instead of each id being bound
    /// through json_each and looked up. On the 1,000,000-product catalog (225,016 categories),
    /// `bench-query` alternating: `categories` with all descendants went from 568–786 to
    /// 163–166 ms, while `category(id: 2)` with its descendants took 32–49 ms looked up and
    /// 95–100 ms with the whole table read (hence the quarter of the hierarchy).
    static let wholeCountsAbove = 4096

    private func wholeCountsPay(_ sets: [(Int64, [Int64])]) -> Bool {
        let ids = sets.reduce(0) { $0 + $1.1.count }
        return ids > Self.wholeCountsAbove && ids > (loadedHierarchy?.byID.count ?? Int.max) / 4
    }

    /// Product counts per category id (each with its descendant list, every id once), one
    /// statement: the sums of cg_category_counts when it is installed (a row per category), else
    /// count(*) over the products (an index entry per product). Roots without products may be
    /// absent from the result.
    /// `readWhole` forces either way (tests); nil decides by `wholeCountsPay`.
    func categoryCounts(_ sets: [(Int64, [Int64])], readWhole: Bool? = nil) throws -> [Int64: Int] {
        let counted = layout.hasCategoryCounts
        if counted, readWhole ?? wholeCountsPay(sets) {
            // `p."cat" = <integer id>` only ever matches values stored as integers (INTEGER
            // affinity turns '12' and 12.0 into 12 when they are stored).
            let s = try db.cachedStatement("SELECT cat, n FROM \(CategoryCounts.table) WHERE typeof(cat) = 'integer'")
            defer { s.reset() }
            var byCat: [Int64: Int] = [:]
            while try s.step() { byCat[s.int64(0), default: 0] += Int(s.int64(1)) }
            var out: [Int64: Int] = [:]
            for (root, cats) in sets where out[root] == nil {
                out[root] = cats.reduce(0) { $0 + (byCat[$1] ?? 0) }
            }
            return out
        }
        if sets.count == 1, let (root, cats) = sets.first {
            // One category: one indexed row per id, or a covering-index count on cat (= or IN).
            var (w, binds) = ProductSQL.whereClause(ProductFilter(cats: cats))
            if counted {
                w = " FROM \(CategoryCounts.table) WHERE cat " + (cats.count == 1 ? "= ?" : "IN (SELECT value FROM json_each(?))")
                binds = cats.count == 1 ? [.integer(cats[0])] : [.text(ProductSQL.jsonArray(cats))]
            }
            let s = try db.cachedStatement((counted ? "SELECT sum(n)" : "SELECT count(*)") + w)
            defer { s.reset() }
            s.bind(binds)
            return [root: try s.step() ? Int(s.int64(0)) : 0]
        }
        let s = try db.cachedStatement(Self.categoryMap + (counted
            ? "SELECT m.root, sum(c.n) FROM m JOIN \(CategoryCounts.table) c ON c.cat = m.cat GROUP BY m.root"
            : "SELECT m.root, count(*) FROM m JOIN \"Product_Catalog\" p ON p.\"cat\" = m.cat GROUP BY m.root"))
        defer { s.reset() }
        s.bind(categoryPairs(sets), at: 1)
        var out: [Int64: Int] = [:]
        while try s.step() { out[s.int64(0)] = Int(s.int64(1)) }
        return out
    }

    /// Past this many descendant ids in all, counts with descendants are summed over the
    /// hierarchy in one pass (`Hierarchy.descendantSums`) instead of per list.
    static let summedCountsAbove = 100_000

    /// Products per category with descendants for `nodes`, when their descendant lists would
    /// total more than `summedCountsAbove` ids (a long `path` of a deep hierarchy): each
    /// category's own count, read whole, summed over the hierarchy in one pass. nil: the lists
    /// are small (or the hierarchy has an id under two parents), and `categoryCounts` does it.
    private func productCountsSummed(_ nodes: [CategoryNode]) throws -> [Int64: Int]? {
        let h = hierarchy
        var unique: [Int64] = []
        var seen = Set<Int64>()
        for n in nodes where seen.insert(n.id).inserted { unique.append(n.id) }
        guard let sizes = h.descendantCounts else {
            // An id under two parents: no one-pass sums. Past the same total, each list is
            // summed here in turn (time as the lists, memory as one) rather than bound to SQL
            // all at once.
            var total = 0
            for id in unique {
                total += h.descendants(of: id).count
                if total > Self.summedCountsAbove { break }
            }
            guard total > Self.summedCountsAbove else { return nil }
            let own = try ownProductCounts()
            var out: [Int64: Int] = [:]
            for id in unique { out[id] = h.descendants(of: id).reduce(0) { $0 + (own[$1] ?? 0) } }
            return out
        }
        let total = unique.reduce(0) { $0 + (sizes[$1] ?? 1) }
        guard total > Self.summedCountsAbove else { return nil }
        let own = try ownProductCounts()
        return h.descendantSums { own[$0] ?? 0 }
    }

    /// Each category's own product count (products whose `cat` is stored as that integer), read
    /// whole: a row per category from cg_category_counts, else a scan grouped by `cat`.
    private func ownProductCounts() throws -> [Int64: Int] {
        let s = try db.cachedStatement(layout.hasCategoryCounts
            ? "SELECT cat, n FROM \(CategoryCounts.table) WHERE typeof(cat) = 'integer'"
            : "SELECT \"cat\", count(*) FROM \"Product_Catalog\" WHERE typeof(\"cat\") = 'integer' GROUP BY \"cat\"")
        defer { s.reset() }
        var own: [Int64: Int] = [:]
        while try s.step() { own[s.int64(0), default: 0] += Int(s.int64(1)) }
        return own
    }

    func manufacturerCounts(_ names: [String]) throws -> [ExactString: Int] {
        var out: [ExactString: Int] = [:]
        let (plain, served, alone) = ProductSQL.splitNames(names)
        // A name with a NUL is counted on its own (`ProductSQL.needsOwnBinding`).
        for name in alone {
            let (w, binds) = ProductSQL.whereClause(ProductFilter(manufacturer: name))
            let s = try db.cachedStatement("SELECT count(*)" + w)
            defer { s.reset() }
            s.bind(binds)
            out[ExactString(name)] = try s.step() ? Int(s.int64(0)) : 0
        }
        if !served.isEmpty {
            // Names with U+FFFD: every product whose trimmed Manufacturer is served as one of them
            // (`ProductSQL.needsServedText`), in one scan.
            let s = try db.cachedStatement(Self.makerMap + """
                SELECT m.root, count(*) FROM "Product_Catalog" p \
                JOIN m ON cg_served_text(\(ProductSQL.trimmedManufacturer)) = m.root GROUP BY m.root
                """)
            defer { s.reset() }
            s.bind(ProductSQL.jsonArray(served), at: 1)
            while try s.step() { out[ExactString(s.text(0) ?? "")] = Int(s.int64(1)) }
        }
        guard !plain.isEmpty else { return out }
        let s = try db.cachedStatement(Self.makerMap +
            "SELECT m.root, count(*) FROM m JOIN \"Product_Catalog\" p ON \(ProductSQL.trimmedManufacturer) = m.root GROUP BY m.root")
        defer { s.reset() }
        s.bind(ProductSQL.jsonArray(plain), at: 1)
        while try s.step() { out[ExactString(s.text(0) ?? "")] = Int(s.int64(1)) }
        return out
    }

    private func loadPages(_ refs: [ConnectionRef]) throws {
        guard !refs.isEmpty else { return }
        var categories: [ConnectionRef] = []
        var makers: [ConnectionRef] = []
        for r in refs {
            switch r.set {
            case .filtered(let filter): try loadPage(r, filter)
            // A lone connection is one ordered range scan (LIMIT stops early on the index).
            case .category(_, let cats) where refs.count == 1: try loadPage(r, ProductFilter(cats: cats))
            // A name with U+FFFD is found by what the stored names are served as (a scan each);
            // one with a NUL cannot go in the batch's JSON list.
            case .manufacturer(let name) where refs.count == 1 || ProductSQL.needsServedText(name)
                                               || ProductSQL.needsOwnBinding(name):
                try loadPage(r, ProductFilter(manufacturer: name))
            case .category: categories.append(r)
            case .manufacturer: makers.append(r)
            }
        }
        // Connections of one level share order and window (same field, same arguments); group
        // defensively by them anyway.
        for group in Dictionary(grouping: categories, by: { "\($0.order.rawValue):\($0.first):\($0.afterCursor ?? ""):\($0.select.mask)" }).values {
            let sets = group.map { r -> (Int64, [Int64]) in
                if case .category(let root, let cats) = r.set { return (root, cats) } else { return (0, []) }
            }
            let rows = try windowPage(
                Self.categoryMap, join: "p.\"cat\" = m.cat", bind: categoryPairs(sets), template: group[0])
            for r in group {
                if case .category(let root, _) = r.set { fill(r, rows[.integer(root)] ?? []) }
            }
        }
        for group in Dictionary(grouping: makers, by: { "\($0.order.rawValue):\($0.first):\($0.afterCursor ?? ""):\($0.select.mask)" }).values {
            let names = group.compactMap { r -> String? in if case .manufacturer(let n) = r.set { return n } else { return nil } }
            let rows = try windowPage(
                Self.makerMap, join: "\(ProductSQL.trimmedManufacturer) = m.root",
                bind: ProductSQL.jsonArray(names), template: group[0])
            for r in group {
                if case .manufacturer(let n) = r.set { fill(r, rows[.text(n)] ?? []) }
            }
        }
    }

    private func loadPage(_ r: ConnectionRef, _ filter: ProductFilter) throws {
        let after = r.after.map { r.order.after($0) }
        let (w, binds) = ProductSQL.whereClause(filter, also: after?.sql)
        if filter.searchWords != nil {
            // Search: the ordered matches (shared with totalCount), then the page's rows whole;
            // after a cursor, the matches that sort after it, up to the page.
            let ids: [Int64]
            if let after {
                let s = try db.cachedStatement("SELECT p.\"keyid\"\(w) ORDER BY \(r.order.sql) LIMIT ?")
                defer { s.reset() }
                s.bind(binds)
                s.bind(after.binds, from: Int32(binds.count + 1))
                s.bind(r.first + 1, at: Int32(binds.count + after.binds.count + 1))
                var found: [Int64] = []
                while try s.step() { found.append(s.int64(0)) }
                ids = found
            } else {
                let all = try searchMatches(r, filter)
                ids = Array(all.prefix(r.first + 1))
            }
            let rows = try db.cachedStatement(r.select.byKeysSQL)
            defer { rows.reset() }
            rows.bind(ProductSQL.jsonArray(ids), at: 1)
            var byID: [Int64: ProductRow] = [:]
            while try rows.step() {
                let row = layout.readProduct(rows, r.select)
                byID[row.keyid] = row
            }
            fill(r, ids.compactMap { byID[$0] })
            return
        }
        let s = try db.cachedStatement(
            "SELECT \(r.select.list)\(w) ORDER BY \(r.order.sql) LIMIT ?")
        defer { s.reset() }
        s.bind(binds)
        let afterBinds = after?.binds ?? []
        s.bind(afterBinds, from: Int32(binds.count + 1))
        s.bind(r.first + 1, at: Int32(binds.count + afterBinds.count + 1))
        var rows: [ProductRow] = []
        while try s.step() { rows.append(layout.readProduct(s, r.select)) }
        fill(r, rows)
    }

    /// Every search match's keyid in the connection's order: one walk over the candidates
    /// serves both totalCount and the page.
    private func searchMatches(_ r: ConnectionRef, _ filter: ProductFilter) throws -> [Int64] {
        if let m = r.matches { return m }
        let (w, binds) = ProductSQL.whereClause(filter)
        // By name: unsorted, with the names, and NameOrder sorts as SQLite's ORDER BY would, for less.
        let byName = r.order == .name
        let s = try db.cachedStatement(byName ? "SELECT p.\"keyid\", p.\"Product\"\(w)"
                                              : "SELECT p.\"keyid\"\(w) ORDER BY \(r.order.sql)")
        defer { s.reset() }
        s.bind(binds)
        var ids: [Int64] = []
        if byName {
            var order = NameOrder()
            while try s.step() { order.append(s, keyColumn: 0, nameColumn: 1) }
            ids = order.sortedKeys()
        } else {
            while try s.step() { ids.append(s.int64(0)) }
        }
        r.matches = ids
        return ids
    }

    /// The cursors of the given rows of each connection's page (`ConnectionRef.cursors`): a
    /// NEWEST key is the keyid; the others' values are read by keyid in one statement for all.
    private func loadCursors(_ wanted: [(ConnectionRef, [Int])]) throws {
        var need: [Int64] = []
        for (r, indexes) in wanted where r.order != .newest {
            for i in indexes where r.cursors[i] == nil { need.append(r.page![i].keyid) }
        }
        var stored: [Int64: [SortValue]] = [:]
        if !need.isEmpty {
            let s: Statement
            if need.count == 1 {
                s = try db.cachedStatement(Self.sortValuesByKeySQL)
                s.bind(need[0], at: 1)
            } else {
                s = try db.cachedStatement(Self.sortValuesByKeysSQL)
                s.bind(ProductSQL.jsonArray(need), at: 1)
            }
            defer { s.reset() }
            while try s.step() { stored[s.int64(0)] = [s.sortValue(1), s.sortValue(2), s.sortValue(3)] }
        }
        for (r, indexes) in wanted {
            for i in indexes where r.cursors[i] == nil {
                let keyid = r.page![i].keyid
                let values: [SortValue]
                switch r.order {
                case .newest: values = [.integer(keyid)]
                case .name: values = [stored[keyid]?[2] ?? .null, .integer(keyid)]
                case .catalog:
                    let v = stored[keyid] ?? [.null, .null, .null]
                    values = [v[0], v[1], v[2], .integer(keyid)]
                }
                r.cursors[i] = Cursor.encode(SortKey(order: r.order, values: values))
            }
        }
    }

    /// Products' sort columns by keyid (Manufacturer, displayorder, Product as stored).
    private static let sortValuesByKeySQL =
        "SELECT p.\"keyid\", p.\"Manufacturer\", p.\"displayorder\", p.\"Product\" FROM \"Product_Catalog\" p WHERE p.\"keyid\" = ?"
    private static let sortValuesByKeysSQL =
        "SELECT p.\"keyid\", p.\"Manufacturer\", p.\"displayorder\", p.\"Product\" FROM \"Product_Catalog\" p WHERE p.\"keyid\" IN (SELECT value FROM json_each(?))"

    private func fill(_ r: ConnectionRef, _ rows: [ProductRow]) {
        var rows = rows
        r.hasNextPage = rows.count > r.first
        if rows.count > r.first { rows.removeLast(rows.count - r.first) }
        r.page = rows
    }

    /// One statement for the pages of many connections: rows (after the cursor, when there is
    /// one) numbered per partition in the connection's order, the first `first` + 1 kept (one
    /// extra row tells hasNextPage).
    private func windowPage(_ map: String, join: String, bind: String, template: ConnectionRef) throws -> [SQLValue: [ProductRow]] {
        let after = template.after.map { template.order.after($0) }
        // Rows are numbered on the sort keys alone; only the page's rows are then read whole.
        let sql = map + """
            , r AS (SELECT m.root AS cg_root, p."keyid" AS cg_key, \
            row_number() OVER (PARTITION BY m.root ORDER BY \(template.order.sql)) AS cg_rn \
            FROM m JOIN "Product_Catalog" p ON \(join)\(after.map { " WHERE " + $0.sql } ?? "")) \
            SELECT r.cg_root, \(template.select.list) FROM r JOIN "Product_Catalog" p ON p."keyid" = r.cg_key \
            WHERE r.cg_rn <= ? ORDER BY r.cg_root, r.cg_rn
            """
        let s = try db.cachedStatement(sql)
        defer { s.reset() }
        s.bind(bind, at: 1)
        let afterBinds = after?.binds ?? []
        s.bind(afterBinds, from: 2)
        s.bind(template.first + 1, at: Int32(afterBinds.count + 2))
        var out: [SQLValue: [ProductRow]] = [:]
        while try s.step() {
            out[s.value(0), default: []].append(layout.readProduct(s, template.select, offset: 1))
        }
        return out
    }

    // MARK: Category

    private func category(_ f: PlannedField, _ objects: [ObjectValue]) throws -> [ResolvedValue] {
        let nodes: [CategoryNode] = objects.compactMap { if case .category(let c) = $0 { return c } else { return nil } }
        switch f.name {
        case "id": return nodes.map { .id($0.id) }
        case "title": return nodes.map { .string($0.title.trimmedASCII) }
        case "icon": return nodes.map { nullableText($0.icon) }
        case "level": return nodes.map { $0.level.map { .int($0) } ?? .null }
        case "parent": return nodes.map { n in hierarchy.parent(of: n).map { .object(.category($0)) } ?? .null }
        case "children": return try categoryLists(nodes) { hierarchy.children(of: $0) }
        case "path": return try categoryLists(nodes) { hierarchy.path(of: $0) }
        case "productCount":
            let include = f.bool("includeDescendants") ?? false
            if include, nodes.count > 1, let counts = try productCountsSummed(nodes) {
                return nodes.map { .int(counts[$0.id] ?? 0) }
            }
            let sets = nodes.map { n in (n.id, include ? hierarchy.descendants(of: n.id) : [n.id]) }
            let counts = try categoryCounts(sets)
            return nodes.map { .int(counts[$0.id] ?? 0) }
        case "products":
            let include = f.bool("includeDescendants") ?? false
            let select = connectionSelect(f)
            return try nodes.map { n in
                let cats = include ? hierarchy.descendants(of: n.id) : [n.id]
                return .object(.connection(try makeConnection(.category(root: n.id, cats: cats), f, select: select)))
            }
        default: return nodes.map { _ in .null }
        }
    }

    /// A list of categories for each node, within `byteBudget` (16 bytes an item, as the
    /// executor estimates): past it, RESPONSE_TOO_LARGE before the rest are made. Nested
    /// `path { path { id } }` on a 100,000-deep chain made 10^10 items (memory grew 120 MB/s)
    /// before the executor's estimate, which comes after the field, could see one.
    private func categoryLists(_ nodes: [CategoryNode], _ items: (CategoryNode) -> [CategoryNode]) throws(GraphQLError) -> [ResolvedValue] {
        let most = byteBudget / 16
        var total = 0
        var out: [ResolvedValue] = []
        out.reserveCapacity(nodes.count)
        for n in nodes {
            let list = items(n)
            total += list.count
            if total > most { throw GraphQLError("over the byte budget", extensions: ["code": .string(Executor.tooLargeCode)]) }
            out.append(.list(list.map { .object(.category($0)) }))
        }
        return out
    }

    // MARK: Product

    /// One field of every product written as JSON by the resolver: one buffer, a range per
    /// product. A list field's range is its items (brackets not included); an object field's
    /// range is the object, empty for null (an object's text never is).
    struct JSONColumn {
        let text: TextBuffer
        let ranges: [Range<Int>]
        let isList: Bool

        var values: [ResolvedValue] {
            ranges.map { r in
                isList ? .jsonList(text, items: r) : r.isEmpty ? .null : .jsonValue(text, bytes: r)
            }
        }
    }

    /// How `nodesJSON` writes one Product field. By the time its loop runs every `.images` and
    /// leaf list has become `.json`, so no part it reads holds a reference to count.
    private enum NodePart {
        case typeName, id, text(Int), nullableText(Int?), displayOrder
        /// Made by `product`'s JSON path: images, or a leaf list's template (`leafList`).
        case images, manufacturer(ItemTemplate), specs(ItemTemplate), kit(ItemTemplate)
        /// The `json`-th JSON column (product k's value: `ranges[json * rows + k]` of `bases[json]`).
        case json(Int, isList: Bool)
    }

    /// `nodes` as JSON, one value per connection, when the products select only scalars and
    /// fields that `product` writes as JSON itself (images; manufacturer, specs and kit as
    /// leaf lists): no object per product, no level of products, no value or slot per field.
    /// The lists are made for all products of all the connections at once, by the same
    /// statements in the same order as on the general path; the scalars are written straight
    /// from the rows, as `product` and the executor's in-place completion write them.
    /// Nil — the general path, which then reports it — when a field is anything else (decided
    /// before any statement runs), a displayOrder does not fit an Int, a kit quantity does not
    /// (`kitsJSON`), or a statement fails.
    private func nodesJSON(_ f: PlannedField, _ refs: [ConnectionRef]) -> [ResolvedValue]? {
        guard serializeLeafLists else { return nil }
        let memo: NodesPlan
        if let m = f.resolverMemo as? NodesPlan, m.layout === layout.token {
            memo = m
        } else {
            memo = NodesPlan(layout: layout.token, parts: nodeParts(f.child),
                             template: ItemTemplate(f.child.fields.enumerated().map { i, p in
                                 ([i == 0 ? UInt8(ascii: "{") : UInt8(ascii: ",")] + p.keyJSON, p.name == "__typename" ? nil : i)
                             }, typeName: f.child.typeName),
                             leastPerProduct: f.child.fields.reduce(2) { $0 + $1.keyJSON.count + 3 },
                             readsDisplayOrder: f.child.fields.contains { $0.name == "displayOrder" })
            f.resolverMemo = memo
        }
        guard var parts = memo.parts else { return nil }
        let rows = refs.flatMap { $0.page ?? [] }
        // Past the answer's byte budget, the JSON is left to the general path, whose level of
        // products the executor measures and refuses (RESPONSE_TOO_LARGE) before it runs. Known
        // at once when every product's fields (key, separator, at least two bytes of value: `[]`,
        // `""`, `0,`) would pass it — thousands of aliases, before a statement of theirs runs;
        // else counted as the JSON grows (the lists' columns, then the products), so an answer
        // under the budget is written here whatever its number of fields.
        let least = rows.count.multipliedReportingOverflow(by: memo.leastPerProduct)
        guard !least.overflow, least.partialValue <= byteBudget else { return nil }
        if memo.readsDisplayOrder {
            guard rows.allSatisfy({ r in r.displayOrder.map { Int32(exactly: $0) != nil } ?? true }) else { return nil }
        }
        return nodesJSON(rows, refs, &parts, memo.template)
    }

    /// What `nodesJSON` makes of a `nodes` field's plan before reading any row, once per planned
    /// field and layout (`PlannedField.resolverMemo`; plans are kept per session and prepared
    /// operation): its parts (nil: the general path), the products' template, the least bytes
    /// per product. Made at every execution it was 2 % of the demo page (three leaf-list
    /// templates and the product template compiled, the fields' names compared).
    private final class NodesPlan {
        let layout: CatalogLayout.Token
        let parts: [NodePart]?
        let template: ItemTemplate
        let leastPerProduct: Int
        let readsDisplayOrder: Bool

        init(layout: CatalogLayout.Token, parts: [NodePart]?, template: ItemTemplate, leastPerProduct: Int, readsDisplayOrder: Bool) {
            self.layout = layout; self.parts = parts; self.template = template
            self.leastPerProduct = leastPerProduct; self.readsDisplayOrder = readsDisplayOrder
        }
    }

    /// The parts of `nodesJSON`'s products, nil when a field is not one it writes.
    private func nodeParts(_ plan: SelectionPlan) -> [NodePart]? {
        guard plan.error == nil else { return nil }
        let L = layout
        var parts: [NodePart] = []
        parts.reserveCapacity(plan.fields.count)
        for p in plan.fields {
            guard p.argumentError == nil else { return nil }
            switch p.name {
            case "__typename": parts.append(.typeName)
            case "id": parts.append(.id)
            case "sku": parts.append(.text(L.productID))
            case "name": parts.append(.text(L.name))
            case "thumbnail": parts.append(.nullableText(L.thumbnail))
            case "panoramaUrl": parts.append(.nullableText(L.panorama))
            case "description": parts.append(.nullableText(L.description))
            case "displayOrder": parts.append(.displayOrder)
            case "images": parts.append(.images)
            case "manufacturer":
                guard let item = leafList(p, Self.manufacturerColumns) else { return nil }
                parts.append(.manufacturer(item))
            case "specs":
                guard let item = leafList(p, Self.specColumns) else { return nil }
                parts.append(.specs(item))
            case "kit":
                guard let item = leafList(p, Self.kitColumns) else { return nil }
                parts.append(.kit(item))
            default: return nil
            }
        }
        return parts
    }

    /// `nodesJSON`'s products from their rows and `parts` (`nodeParts`; the lists become `.json`).
    private func nodesJSON(_ rows: [ProductRow], _ refs: [ConnectionRef], _ parts: inout [NodePart],
                           _ template: ItemTemplate) -> [ResolvedValue]? {
        // The JSON fields, in selection order (the general path's statement order).
        var columns: [JSONColumn] = []
        var ranges: [Range<Int>] = []
        var columnBytes = 0
        for i in parts.indices {
            let column: JSONColumn?
            switch parts[i] {
            case .images: column = imagesJSON(rows)
            case .manufacturer(let item): column = try? manufacturersJSON(rows, item)
            case .specs(let item): column = try? specsJSON(rows, item)
            case .kit(let item): column = (try? kitsJSON(rows, item)) ?? nil
            default: continue
            }
            guard let column else { return nil }
            parts[i] = .json(columns.count, isList: column.isList)
            columns.append(column)
            ranges += column.ranges
            columnBytes += column.ranges.reduce(0) { $0 + $1.count }
            // Each column's text is copied into every product's JSON: past the budget, stop.
            if columnBytes > byteBudget { return nil }
        }
        let bases = columns.map { UnsafeRawPointer($0.text.base) }
        // Room for the lists' text besides the scalars: the demo page's 24 KB outgrew 25 × 768
        // bytes, and growing copied 19 KB once more.
        var w = ScalarText(capacity: min(rows.count * 768 + columnBytes, max(4096, byteBudget)))
        var overBudget = false
        var lists: [Range<Int>] = []
        lists.reserveCapacity(refs.count)
        withExtendedLifetime((columns, rows)) {
            parts.withUnsafeBufferPointer { parts in
                ranges.withUnsafeBufferPointer { ranges in
                    template.withWriter { item in
                        var k = 0
                        for ref in refs {
                            let start = w.count
                            for _ in 0..<(ref.page?.count ?? 0) {
                                if w.count > byteBudget { overBudget = true; return }
                                if w.count > start { w.byte(0x2C) }
                                let r = Unmanaged.passUnretained(rows[k])
                                item.write(&w) { w, c in
                                    r._withUnsafeGuaranteedRef { r in
                                        Self.write(parts[c], of: r, k, rows.count, bases, ranges, to: &w)
                                    }
                                }
                                k += 1
                            }
                            lists.append(start..<w.count)
                        }
                    }
                }
            }
        }
        if overBudget || w.count > byteBudget { return nil }
        let text = w.buffer
        return lists.map { .jsonList(text, items: $0) }
    }

    /// Writes field `part` of product `k` (`row`), as `product` and the executor write it.
    @inline(__always)
    private static func write(_ part: NodePart, of row: ProductRow, _ k: Int, _ count: Int, _ bases: [UnsafeRawPointer],
                              _ ranges: UnsafeBufferPointer<Range<Int>>, to w: inout ScalarText) {
        switch part {
        case .id: w.int(row.keyid, quoted: true)
        case .text(let c): row.withTrimmed(c) { w.string($0) }
        case .nullableText(let c):
            if let c, !row.trimsToEmpty(c) { row.withTrimmed(c) { w.string($0) } } else { w.append("null") }
        case .displayOrder:
            if let d = row.displayOrder { w.int(Int64(d), quoted: false) } else { w.append("null") }
        case .json(let j, let isList):
            let r = ranges[j * count + k]
            let bytes = UnsafeRawBufferPointer(start: bases[j] + r.lowerBound, count: r.count)
            if isList {
                w.byte(0x5B); w.append(bytes); w.byte(0x5D)
            } else if r.isEmpty {
                w.append("null")
            } else {
                w.append(bytes)
            }
        case .typeName, .images, .manufacturer, .specs, .kit: break  // __typename is the template's; the others are .json by now
        }
    }

    /// The leaf lists' columns, in the numbering their writers use (`leafList`).
    private static let manufacturerColumns = ["name", "logo"]
    private static let specColumns = ["key", "label", "value"]
    private static let kitColumns = ["id", "name", "quantity"]

    private func product(_ f: PlannedField, _ objects: [ObjectValue]) throws -> [ResolvedValue] {
        let rows: [ProductRow] = objects.compactMap { if case .product(let p) = $0 { return p } else { return nil } }
        let L = layout
        switch f.name {
        case "id": return rows.map { .id($0.keyid) }
        case "sku": return rows.map { .rowText($0, column: L.productID) }
        case "name": return rows.map { .rowText($0, column: L.name) }
        case "manufacturer":
            if let plan = leafList(f, Self.manufacturerColumns) { return try manufacturersJSON(rows, plan).values }
            return rows.map { r in
                r.trimsToEmpty(L.manufacturer) ? .null : .object(.manufacturer(ManufacturerRef(name: r.trimmed(L.manufacturer))))
            }
        case "category":
            return rows.map { r in r.cat.flatMap { hierarchy.byID[$0] }.map { .object(.category($0)) } ?? .null }
        case "displayOrder": return rows.map { $0.displayOrder.map { .int($0) } ?? .null }
        case "thumbnail": return rows.map { $0.nullableText(L.thumbnail) }
        case "panoramaUrl": return rows.map { $0.nullableText(L.panorama) }
        case "description": return rows.map { $0.nullableText(L.description) }
        case "images":
            if serializeLeafLists { return imagesJSON(rows).values }
            return rows.map { r in
                var out: [ResolvedValue] = []
                out.reserveCapacity(L.images.count)
                for i in L.images where !r.trimsToEmpty(i) { out.append(.rowText(r, column: i)) }
                return .list(out)
            }
        case "videos":
            return rows.map { r in
                .list(L.videos.compactMap { v in
                    r.trimsToEmpty(v.column) ? nil : .object(.video(kind: v.kind, url: r.trimmed(v.column)))
                })
            }
        case "specs":
            if let plan = leafList(f, Self.specColumns) { return try specsJSON(rows, plan).values }
            return try specs(rows)
        case "kit":
            if let plan = leafList(f, Self.kitColumns), let json = try kitsJSON(rows, plan) { return json.values }
            return try kits(rows)
        default: return rows.map { _ in .null }
        }
    }

    /// `images` as JSON, one value per product: its image columns that do not trim to empty, as
    /// strings — what the general path completes `[String!]!` to, with no array per product. All
    /// products' lists are written back to back into one buffer (a product's is a range).
    private func imagesJSON(_ rows: [ProductRow]) -> JSONColumn {
        var w = ScalarText(capacity: 2 << 10)
        let ranges = rows.map { r -> Range<Int> in
            let start = w.count
            for i in layout.images where !r.trimsToEmpty(i) {
                if w.count > start { w.byte(0x2C) }
                r.withTrimmed(i) { w.string($0) }
            }
            return start..<w.count
        }
        return JSONColumn(text: w.buffer, ranges: ranges, isList: true)
    }

    /// Each product's spec template key (nil when none) and the labels of the templates found,
    /// in `layout.specs` order; nil when the catalog has no spec columns or no product a key.
    private func specTemplates(_ rows: [ProductRow]) throws -> (keys: [Int64?], labels: [Int64: JSONStrings])? {
        guard let dk = layout.detailsKey, !layout.specs.isEmpty else { return nil }
        let keys = rows.map { $0.trimmedInteger(dk) }
        let distinct = Set(keys.compactMap { $0 })
        guard !distinct.isEmpty else { return nil }
        var labels: [Int64: JSONStrings] = [:]
        var unknown = Array(distinct)
        if let cache = templateCache {
            unknown = cache.lookUp(distinct, into: &labels)
            guard !unknown.isEmpty else { return (keys, labels) }
        }
        let s = try db.cachedStatement(layout.specTemplatesSQL)
        defer { s.reset() }
        s.bind(ProductSQL.jsonArray(unknown), at: 1)
        while try s.step() {
            guard s.type(0) == .integer else { continue }
            let key = s.int64(0)
            if labels[key] != nil { continue }
            labels[key] = JSONStrings((0..<layout.specs.count).map { i in
                // The label without its first character: for ASCII text, its bytes from the second.
                let ascii: String? = s.withText(Int32(i + 1)) { b in
                    guard !b.contains(where: { $0 >= 0x80 }) else { return nil }
                    return String(decoding: trimmedASCII(b, from: 1), as: UTF8.self)
                }
                if let ascii { return ascii }
                guard let raw = s.text(Int32(i + 1)), !raw.isEmpty else { return "" }
                return String(raw.unicodeScalars.dropFirst()).trimmedASCII
            })
        }
        // Only a complete read is remembered: a key it did not return has no template row.
        templateCache?.storeAll(unknown, from: labels)
        return (keys, labels)
    }

    /// Calls `body` with each spec of product `k` (its index in `layout.specs`, its template's
    /// labels and its value column), in letter order: the letters whose template label and
    /// product value are both non-empty.
    private func forEachSpec(_ templates: (keys: [Int64?], labels: [Int64: JSONStrings])?, _ k: Int, _ r: ProductRow,
                             _ body: (Int, JSONStrings, Int) -> Void) {
        guard let templates, let key = templates.keys[k], let labels = templates.labels[key] else { return }
        for (i, column) in layout.specColumns.enumerated() where !labels.isEmpty(i) && !r.trimsToEmpty(column) {
            body(i, labels, column)
        }
    }

    private func specs(_ rows: [ProductRow]) throws -> [ResolvedValue] {
        let templates = try specTemplates(rows)
        return rows.enumerated().map { k, r in
            var out: [ResolvedValue] = []
            forEachSpec(templates, k, r) { i, labels, column in
                out.append(.object(.spec(key: layout.specs[i].letter, label: labels[i], row: r, column: column)))
            }
            return .list(out)
        }
    }

    /// `specs` as JSON, one value per product (see `leafList`): plan columns 0 key, 1 label, 2 value.
    /// Every product's specs are written back to back into one buffer (a product's is a range).
    private func specsJSON(_ rows: [ProductRow], _ plan: ItemTemplate) throws -> JSONColumn {
        let templates = try specTemplates(rows)
        let letters = layout.specLetters
        var w = ScalarText(capacity: 8 << 10)
        let ranges = plan.withWriter { item in
            rows.enumerated().map { k, r -> Range<Int> in
                let start = w.count
                forEachSpec(templates, k, r) { i, labels, column in
                    if w.count > start { w.byte(0x2C) }
                    item.write(&w) { w, c in
                        switch c {
                        case 0: letters.write(i, to: &w)
                        case 1: labels.write(i, to: &w)
                        default: r.withTrimmed(column) { w.string($0) }
                        }
                    }
                }
                return start..<w.count
            }
        }
        return JSONColumn(text: w.buffer, ranges: ranges, isList: true)
    }

    /// Each kit's rows by the kit's place in the bound JSON array (`key`): json_each as the outer
    /// loop, in array order, and cg_assets_kit (kitID, assetID, asset, kitQTY) as the inner one,
    /// read from the index alone, in assetID order — no sort, no table lookup, and no kitID text
    /// to read and compare per row. That order is the plan's, not a promise of the SQL, so
    /// `collectKits` checks it and falls back to `kitOrderedSQL`, which sorts. kitQTY is read
    /// as it is stored and converted by `sqlite3_column_int64`, which gives what
    /// `CAST(kitQTY AS INTEGER)` gives for every type (both are SQLite's `sqlite3VdbeIntValue`:
    /// the longest integer prefix of text, a real truncated, 0 for NULL), without a cast per row;
    /// text of plain digits (nearly every kitQTY) is read in Swift (`int64ReadingDigits`).
    private static let kitSQL = """
        SELECT j."key", a."assetID", a."asset", a."kitQTY" \
        FROM json_each(?) AS j JOIN "Product_Assets" AS a ON a."kitID" = j."value"
        """
    private static let kitOrderedSQL = kitSQL + #" ORDER BY j."key", a."assetID""#
    /// One kit id bound on its own (it holds a NUL): its rows in assetID order, key 0.
    private static let kitOneSQL = """
        SELECT 0, a."assetID", a."asset", a."kitQTY" FROM "Product_Assets" AS a \
        WHERE a."kitID" = ? ORDER BY a."assetID"
        """
    private static let kitOneServedSQL = """
        SELECT 0, a."assetID", a."asset", a."kitQTY" FROM "Product_Assets" AS a \
        WHERE cg_served_text(a."kitID") = ? ORDER BY a."assetID"
        """
    /// Kit ids with U+FFFD: the kit rows whose kitID is served as the id (one scan of the kit rows).
    private static let kitServedSQL = """
        SELECT j."key", a."assetID", a."asset", a."kitQTY" \
        FROM "Product_Assets" AS a JOIN json_each(?) AS j ON cg_served_text(a."kitID") = j."value" \
        ORDER BY j."key", a."assetID"
        """

    /// Steps the kit rows of the products' kits and collects them per product: `add` appends the
    /// statement's current row (and its assetID, already read) to its kit's `Items` (false: give
    /// up, the result is nil). Each kit's rows come together, in assetID order (checked: see `kitSQL`).
    private func collectKits<Items>(_ rows: [ProductRow], empty: Items,
                                    add: (inout Items, Statement, Int64) -> Bool) throws -> [Items]? {
        // The distinct kit ids in first-seen order, and each product's place among them. An id
        // with U+FFFD — a damaged product_ID as served, or a stored U+FFFD — matches the kit rows
        // whose kitID is served as it (`kitServedSQL`, a scan); the others match exactly.
        // An id with a NUL, which json_each would cut short, is looked up on its own
        // (`kitOneSQL`, `ProductSQL.needsOwnBinding`).
        var ids = DistinctBytes(capacity: rows.count)
        var served: [Int] = []
        var single: [(k: Int, id: String, served: Bool)] = []
        var plain: [Int]? = nil  // nil: every id
        let arrays: (plain: String, served: String) = withExtendedLifetime(rows) {
            for r in rows { ids.number(r.textBytes(layout.productID)) }
            for (k, b) in ids.distinct.enumerated() {
                if b.contains(0) {
                    single.append((k, String(decoding: b, as: UTF8.self), containsReplacementCharacter(b)))
                } else if containsReplacementCharacter(b) {
                    served.append(k)
                }
            }
            guard !served.isEmpty || !single.isEmpty else { return (ProductSQL.jsonArray(ids.distinct), "") }
            let p = ids.distinct.indices.filter { k in !served.contains(k) && !single.contains { $0.k == k } }
            plain = p
            return (ProductSQL.jsonArray(p.map { ids.distinct[$0] }), ProductSQL.jsonArray(served.map { ids.distinct[$0] }))
        }
        let places = ids.numbers
        guard !ids.distinct.isEmpty else { return rows.map { _ in empty } }
        var kits = [Items](repeating: empty, count: ids.distinct.count)
        /// Steps one kit statement over `array` (ids `map[key]`, or `key` without a map): nil when
        /// `add` gave up, false when a kit's rows did not come together in assetID order.
        func collect(_ sql: String, _ array: String, _ map: [Int]?, count: Int) throws -> Bool? {
            let s = try db.cachedStatement(sql)
            defer { s.reset() }
            s.bind(array, at: 1)
            var kit = -1
            var lastAsset = Int64.min
            while try s.step() {
                let k = Int(s.int64(0)), asset = s.int64(1)
                if k != kit {
                    // A kit met again, or out of range: not the order this loop needs.
                    guard k > kit, k < count else { return false }
                    kit = k
                } else if asset < lastAsset {
                    return false
                }
                lastAsset = asset
                guard add(&kits[map?[k] ?? k], s, asset) else { return nil }
            }
            return true
        }
        let plainCount = plain?.count ?? ids.distinct.count
        if plainCount > 0 {
            var done = false
            for sql in [Self.kitSQL, Self.kitOrderedSQL] {
                guard let inOrder = try collect(sql, arrays.plain, plain, count: plainCount) else { return nil }
                if inOrder { done = true; break }
                kits = [Items](repeating: empty, count: ids.distinct.count)
            }
            guard done else {
                throw SQLiteError(code: SQLITE_INTERNAL, message: "kit rows out of order under ORDER BY", sql: Self.kitOrderedSQL)
            }
        }
        var ordered: [(sql: String, array: String, map: [Int])] = []
        if !served.isEmpty { ordered.append((Self.kitServedSQL, arrays.served, served)) }
        for one in single { ordered.append((one.served ? Self.kitOneServedSQL : Self.kitOneSQL, one.id, [one.k])) }
        for (sql, array, map) in ordered {
            guard let inOrder = try collect(sql, array, map, count: map.count) else { return nil }
            guard inOrder else {
                throw SQLiteError(code: SQLITE_INTERNAL, message: "kit rows out of order under ORDER BY", sql: sql)
            }
        }
        return places.map { $0 < 0 ? empty : kits[$0] }
    }

    private func kits(_ rows: [ProductRow]) throws -> [ResolvedValue] {
        let lists = try collectKits(rows, empty: [ResolvedValue](), add: { items, s, assetID in
            items.append(.object(.kitItem(KitRow(assetID: assetID, name: (s.text(2) ?? "").trimmedASCII, quantity: s.int64ReadingDigits(3)))))
            return true
        })
        return (lists ?? []).map { .list($0) }
    }

    /// `kit` as JSON, one value per product (see `leafList`): plan columns 0 id, 1 name,
    /// 2 quantity. Every kit's items are written back to back into one buffer (a kit is its
    /// range). Nil when a quantity does not fit an Int (the general path reports the error).
    private func kitsJSON(_ rows: [ProductRow], _ plan: ItemTemplate) throws -> JSONColumn? {
        var w = ScalarText(capacity: 16 << 10)
        let kits = try plan.withWriter { item in
            try collectKits(rows, empty: 0..<0, add: { (items: inout Range<Int>, s, assetID) in
                let quantity = s.int64ReadingDigits(3)
                guard quantity >= Int64(Int32.min) && quantity <= Int64(Int32.max) else { return false }
                let start = items.isEmpty ? w.count : items.lowerBound
                if !items.isEmpty { w.byte(0x2C) }
                item.write(&w) { w, c in
                    switch c {
                    case 0: w.int(assetID, quoted: true)
                    case 1:
                        s.withText(2) { b in
                            let name = trimmedASCII(b)
                            // Plain ASCII (the usual case) is copied as it is; other text is
                            // trimmed and written as the String the general path makes of it.
                            if JSONWriter.isPlain(name) { return w.plainString(name) }
                            guard !b.contains(where: { $0 >= 0x80 }) else { return w.string((s.text(2) ?? "").trimmedASCII) }
                            w.string(name)
                        }
                    default: w.int(quantity, quoted: false)
                    }
                }
                items = start..<w.count
                return true
            })
        }
        guard let kits else { return nil }
        return JSONColumn(text: w.buffer, ranges: kits, isList: true)
    }

    /// A leaf list's item, compiled once per list from its planned fields: the constant text
    /// (each field's `{"key":` or `,"key":` prefix, `__typename`'s value, the closing brace), cut
    /// where a column's value goes (columns in the resolver's own numbering).
    struct ItemTemplate {
        private var text: [UInt8] = []
        /// For each column value, in order: where the constant text before it ends, and the column.
        private var cuts: [(end: Int, column: Int)] = []

        /// `fields`: each planned field's prefix and its column, or nil for `__typename`.
        init(_ fields: [(prefix: [UInt8], column: Int?)], typeName: String) {
            var quotedName = JSONWriter(capacity: typeName.utf8.count + 2)
            quotedName.string(typeName)
            for f in fields {
                text += f.prefix
                if let c = f.column { cuts.append((text.count, c)) } else { text += quotedName.bytes }
            }
            if fields.isEmpty { text.append(0x7B) }
            text.append(0x7D)
        }

        /// Whether a field of column `column` is selected.
        func reads(_ column: Int) -> Bool { cuts.contains { $0.column == column } }

        /// Runs `body` with a writer of items, the template's storage pinned meanwhile.
        func withWriter<R>(_ body: (ItemWriter) throws -> R) rethrows -> R {
            try text.withUnsafeBytes { t in try cuts.withUnsafeBufferPointer { c in try body(ItemWriter(text: t, cuts: c)) } }
        }
    }

    /// Writes items of an ItemTemplate (only inside its `withWriter`).
    struct ItemWriter {
        let text: UnsafeRawBufferPointer
        let cuts: UnsafeBufferPointer<(end: Int, column: Int)>

        /// One item: the constant text, with `value` writing each column between its pieces.
        /// (An index loop: `for cut in cuts` cost about 50 instructions an item in iterator code.)
        @inline(__always) func write(_ w: inout ScalarText, _ value: (inout ScalarText, Int) -> Void) {
            var from = 0
            var k = 0
            while k < cuts.count {
                let cut = cuts[k]
                w.append(UnsafeRawBufferPointer(start: text.baseAddress! + from, count: cut.end - from))
                value(&w, cut.column)
                from = cut.end
                k += 1
            }
            w.append(UnsafeRawBufferPointer(start: text.baseAddress! + from, count: text.count - from))
        }
    }

    /// The items' planned fields when `field` (a list of leaf objects) selects only fields named
    /// in `names` (column = index in it) and __typename: the resolver then writes each product's
    /// list as JSON itself — no object per item, no level for the items, no slot per item field.
    /// Nil (the general path) when serializeLeafLists is off or anything else is selected.
    private func leafList(_ field: PlannedField, _ names: [String]) -> ItemTemplate? {
        guard serializeLeafLists else { return nil }
        let child = field.child
        guard child.error == nil else { return nil }
        var out: [(prefix: [UInt8], column: Int?)] = []
        for (i, f) in child.fields.enumerated() {
            guard f.argumentError == nil else { return nil }
            let prefix = [i == 0 ? UInt8(ascii: "{") : UInt8(ascii: ",")] + f.keyJSON
            if f.name == "__typename" {
                out.append((prefix, nil))
            } else if let c = names.firstIndex(of: f.name) {
                out.append((prefix, c))
            } else {
                return nil
            }
        }
        return ItemTemplate(out, typeName: child.typeName)
    }

    /// A field of Video, Spec, KitItem or LetterCount for every object (null for an object of
    /// another type), the field's name matched once per level.
    private func leafObjectFields(_ f: PlannedField, _ objects: [ObjectValue]) -> [ResolvedValue] {
        var out: [ResolvedValue] = []
        out.reserveCapacity(objects.count)
        switch f.name {
        case "kind": for i in objects.indices { if case .video(let kind, _) = objects[i] { out.append(.enumName(kind)) } else { out.append(.null) } }
        case "url": for i in objects.indices { if case .video(_, let url) = objects[i] { out.append(.string(url)) } else { out.append(.null) } }
        case "key": for i in objects.indices { if case .spec(let key, _, _, _) = objects[i] { out.append(.string(key)) } else { out.append(.null) } }
        case "label": for i in objects.indices { if case .spec(_, let label, _, _) = objects[i] { out.append(.string(label)) } else { out.append(.null) } }
        case "value": for i in objects.indices { if case .spec(_, _, let row, let column) = objects[i] { out.append(.rowText(row, column: column)) } else { out.append(.null) } }
        case "id": for i in objects.indices { if case .kitItem(let k) = objects[i] { out.append(.id(k.assetID)) } else { out.append(.null) } }
        case "name": for i in objects.indices { if case .kitItem(let k) = objects[i] { out.append(.string(k.name)) } else { out.append(.null) } }
        case "quantity": for i in objects.indices { if case .kitItem(let k) = objects[i] { out.append(.int(Int(k.quantity))) } else { out.append(.null) } }
        case "letter": for i in objects.indices { if case .letterCount(let l, _) = objects[i] { out.append(.string(l)) } else { out.append(.null) } }
        case "count": for i in objects.indices { if case .letterCount(_, let c) = objects[i] { out.append(.int(c)) } else { out.append(.null) } }
        default: for _ in objects { out.append(.null) }
        }
        return out
    }

    // MARK: Manufacturer

    /// Each name's logo column (nil for NULL), from its first mfg row by mfgid whose trimmed
    /// manufacturer is the name; a name with no row is absent. Names the session's LogoCache
    /// knows for this snapshot are not read again.
    private func logos(_ names: [String]) throws -> [ExactString: String?] {
        var logos: [ExactString: String?] = [:]
        var unknown = names.map(ExactString.init)
        if let cache = logoCache {
            unknown = cache.lookUp(unknown, into: &logos)
            guard !unknown.isEmpty else { return logos }
        }
        // Names with U+FFFD match the mfg rows whose names are served as them (a scan of mfg).
        let trimmed = CatalogSQL.trim("\"manufacturer\"")
        let (plain, served, alone) = ProductSQL.splitNames(unknown.map(\.value))
        // A name with a NUL is looked up on its own (`ProductSQL.needsOwnBinding`).
        for name in alone {
            let column = ProductSQL.needsServedText(name) ? "cg_served_text(\(trimmed))" : trimmed
            let s = try db.cachedStatement("SELECT \"logo\" FROM \"mfg\" WHERE \(column) = ? ORDER BY \"mfgid\" LIMIT 1")
            defer { s.reset() }
            s.bind(name, at: 1)
            if try s.step() { logos[ExactString(name)] = .some(s.text(0)) }
        }
        for (list, name) in [(plain, trimmed),
                             (served, "cg_served_text(\(trimmed))")] where !list.isEmpty {
            let s = try db.cachedStatement("""
                SELECT \(name) AS m, "logo" FROM "mfg" \
                WHERE \(name) IN (SELECT value FROM json_each(?)) ORDER BY "mfgid"
                """)
            defer { s.reset() }
            s.bind(ProductSQL.jsonArray(list), at: 1)
            while try s.step() {
                let name = ExactString(s.text(0) ?? "")
                if logos[name] == nil { logos[name] = .some(s.text(1)) }
            }
        }
        // Only a complete read is remembered: a name it did not return has no mfg row.
        logoCache?.storeAll(unknown, from: logos)
        return logos
    }

    /// `manufacturer` as JSON when it selects only `name` and `logo` (see `leafList`: plan
    /// columns 0 name, 1 logo), one value per product: null when the column trims to empty, else
    /// the object — no ManufacturerRef, no level of objects, no resolver call per field. Every
    /// product's object is a range of one buffer (empty for null).
    private func manufacturersJSON(_ rows: [ProductRow], _ plan: ItemTemplate) throws -> JSONColumn {
        let column = layout.manufacturer
        // Each distinct name once: its String (for the logos) and its object, written once; a
        // product's range is its name's object (empty for null).
        var distinct = DistinctBytes(capacity: rows.count)
        let names: [String] = withExtendedLifetime(rows) {
            for r in rows { distinct.number(r.trimmedBytes(column)) }
            return distinct.distinct.map { String(decoding: $0, as: UTF8.self) }
        }
        let logos = plan.reads(1) ? try logos(names) : [:]
        var w = ScalarText(capacity: 4 << 10)
        let objects = plan.withWriter { item in
            names.map { name -> Range<Int> in
                let start = w.count
                item.write(&w) { w, c in
                    if c == 0 { return w.string(name) }
                    // SEMANTICS.md's nullable text rule, as the general path applies it.
                    if case .string(let logo) = nullableText(logos[ExactString(name)] ?? nil) { w.string(logo) } else { w.append("null") }
                }
                return start..<w.count
            }
        }
        let ranges = distinct.numbers.map { $0 < 0 ? 0..<0 : objects[$0] }
        return JSONColumn(text: w.buffer, ranges: ranges, isList: false)
    }

    private func manufacturer(_ f: PlannedField, _ objects: [ObjectValue]) throws -> [ResolvedValue] {
        let refs: [ManufacturerRef] = objects.compactMap { if case .manufacturer(let m) = $0 { return m } else { return nil } }
        switch f.name {
        case "name": return refs.map { .string($0.name) }
        case "logo":
            let logos = try logos(refs.map(\.name).uniqueExactly())
            return refs.map { r in
                guard let logo = logos[ExactString(r.name)] else { return .null }
                return nullableText(logo)
            }
        case "productCount":
            let counts = try manufacturerCounts(refs.map(\.name).uniqueExactly())
            return refs.map { .int(counts[ExactString($0.name)] ?? 0) }
        case "products":
            let select = connectionSelect(f)
            return try refs.map { .object(.connection(try makeConnection(.manufacturer($0.name), f, select: select))) }
        default: return refs.map { _ in .null }
        }
    }
}

extension String {
    /// An ID argument compared as an integer ("05" finds 5); nil when it is not an integer.
    var idInteger: Int64? { strictInteger }
}
