import Foundation
import Testing
@testable import Resolvers

/// Deterministic pseudo-random numbers (SplitMix64), so a failing seed can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What a product or category looks like to a client: its row and every row SYNC.md says it
/// depends on (kit rows, template, mfg rows of its manufacturer, existence of its category /
/// parent). Two catalogs serve the same product iff these strings are equal.
enum ServedState {
    static func products(_ db: Database) throws -> [Int64: String] {
        let rows = try db.prepare("SELECT * FROM Product_Catalog")
        let cols = Int(rows.columnCount)
        let names = (0..<cols).map { rows.columnName(Int32($0)).lowercased() }
        func idx(_ n: String) -> Int32 { Int32(names.firstIndex(of: n.lowercased()) ?? 0) }
        let kit = try db.prepare("SELECT assetID, asset, kitQTY FROM Product_Assets WHERE kitID = ? ORDER BY assetID")
        let tpl = try db.prepare("SELECT * FROM DetailsKeyValues WHERE DetailsKey = ?")
        let mfg = try db.prepare("SELECT * FROM mfg WHERE trim(manufacturer, char(32,9,10,13,11,12)) = ? ORDER BY mfgid")
        let cat = try db.prepare("SELECT count(*) FROM hierarchy WHERE id = ?")
        var out: [Int64: String] = [:]
        while try rows.step() {
            var s = (0..<cols).map { "\(rows.value(Int32($0)))" }.joined(separator: "|")
            if let sku = rows.text(idx("product_ID")) {
                kit.reset(); kit.bind(sku, at: 1)
                while try kit.step() { s += " kit:\(kit.value(0)),\(kit.value(1)),\(kit.value(2))" }
            }
            if let k = rows.text(idx("info_DetailsKey"))?.trimmedASCII.strictInteger {
                tpl.reset(); tpl.bind(k, at: 1)
                while try tpl.step() { s += " tpl:" + (0..<Int(tpl.columnCount)).map { "\(tpl.value(Int32($0)))" }.joined(separator: ",") }
            }
            if let m = rows.text(idx("Manufacturer"))?.trimmedASCII {
                mfg.reset(); mfg.bind(m, at: 1)
                while try mfg.step() { s += " mfg:\(mfg.value(0)),\(mfg.value(1)),\(mfg.value(2))" }
            }
            cat.reset(); cat.bind(rows.value(idx("cat")), at: 1)
            _ = try cat.step()
            s += " cat:\(cat.int64(0))"
            out[rows.int64(idx("keyid"))] = s
        }
        return out
    }

    static func categories(_ db: Database) throws -> [Int64: String] {
        let rows = try db.prepare("SELECT id, menu_title, menu_icon, level, parent, (SELECT count(*) FROM hierarchy p WHERE p.id = h.parent) FROM hierarchy h")
        var out: [Int64: String] = [:]
        while try rows.step() {
            out[rows.int64(0)] = (1..<6).map { "\(rows.value(Int32($0)))" }.joined(separator: "|")
        }
        return out
    }
}

/// A sync client: its copy of the catalog (served states by id) and the version it holds.
struct SyncClient {
    var version: Int
    var products: [Int64: String]
    var categories: [Int64: String]
}

/// Random edit sequences by a separate connection, random version bumps (inserted or raised
/// rows, some inside the editing transaction, some rolled back), compactions, and a client that
/// resumes from the last version it received and applies each change set to its own copy.
/// Checks: the copy equals the source whenever no change is pending; every listed or removed
/// id was touched by an edit in the set's versions (nothing applied that did not change); no id
/// is both listed and removed; a removed id is one the client holds.
@Suite struct SyncRandomizedTests {
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomEditsConverge(seed: UInt64) throws {
        var sim = try Simulation(seed: seed)
        for _ in 0..<600 { try sim.step() }
        try sim.bump()
        try sim.sync()
        #expect(sim.syncs > 20)
        #expect(sim.failures.isEmpty, "seed \(seed): \(sim.failures.prefix(5))")
    }
}

struct Simulation {
    var rng: SplitMix64
    let path: String
    let w: Database
    let reader: Database
    var client: SyncClient
    /// Ids an edit touched (its own rows, and those its related rows name before and after),
    /// by the version they belong to; `pending` for edits after the last version row.
    var touchedByVersion: [Int: (p: Set<Int64>, c: Set<Int64>)] = [:]
    var pending: (p: Set<Int64>, c: Set<Int64>) = ([], [])
    var pendingEdits = 0
    /// The last sync was computed while changes were pending: removed ids may be ones the
    /// client never received (inserted, then deleted before the set was computed).
    var lenient = false
    var syncs = 0
    var failures: [String] = []

    static let skus = ["K1478", "1480", "k1479", "1481", "D6", "D7", "S1", "01480", "K1478 "]
    static let makers = ["ARRI", "ARRI ", "Cooke", "RED", " ZEISS", "Sony", ""]
    static let detailKeys = ["26", " 26 ", "7", "+7", "x7", "99", "", "12"]
    static let templateKeys = [7, 12, 26, 99]
    static let hierarchyIDs: [Int64] = [1, 2, 10, 11, 12, 20, 30, 31, 50, 51, 60, 61, 70, 999]

    init(seed: UInt64) throws {
        rng = SplitMix64(seed: seed)
        path = try SyncFixture.make()
        w = try SyncFixture.writer(path)
        reader = try Database(path: path, readOnly: true)
        client = SyncClient(version: 6, products: try ServedState.products(reader), categories: try ServedState.categories(reader))
    }

    mutating func int(_ n: Int) -> Int { Int.random(in: 0..<n, using: &rng) }
    mutating func pick<T>(_ a: [T]) -> T { a[int(a.count)] }
    mutating func keyid() -> Int64 { Int64(1 + int(14)) }
    mutating func assetID() -> Int64 { Int64(1 + int(25)) }
    mutating func mfgid() -> Int64 { Int64(1 + int(12)) }

    mutating func step() throws {
        switch int(100) {
        case 0..<55: try edit()
        case 55..<70: try bump()
        case 70..<80: try group()
        case 80..<95: try sync()
        case 95..<97:
            _ = try ChangeCapture.compact(w, keepVersions: 3, keepDays: nil)
        default:
            // Edits through the sqlite3 shell now and then.
            let id = keyid()
            let r = try SyncFixture.sqlite3(path, "INSERT OR REPLACE INTO Product_Catalog (keyid, product_ID, Product, cat) VALUES (\(id), 'S1', 'shell \(int(1000))', 12);")
            if r.status != 0 { failures.append("sqlite3: \(r.stderr)") }
            pending.p.insert(id); pendingEdits += 1
        }
    }

    /// BEGIN; a few edits; then a version row and COMMIT, or a ROLLBACK.
    mutating func group() throws {
        try w.execute("BEGIN")
        let saved = (pending, pendingEdits)
        for _ in 0..<(1 + int(4)) { try edit() }
        switch int(3) {
        case 0:
            try w.execute("ROLLBACK")
            // Rolled-back edits touched nothing; keep their ids (a superset is harmless) but
            // do not count them as pending.
            pendingEdits = saved.1
        case 1:
            try bump()
            try w.execute("COMMIT")
        default:
            try w.execute("COMMIT")
        }
    }

    mutating func bump() throws {
        let current = Int(try w.scalarInt("SELECT max(versionid) FROM version") ?? 0)
        let next = current + 1 + int(2)
        if int(3) == 0 {
            try w.execute("UPDATE version SET versionid = \(next) WHERE versionid = \(current)")
        } else {
            try w.execute("INSERT INTO version VALUES (\(next), '', '')")
        }
        touchedByVersion[next] = pending
        pending = ([], [])
        pendingEdits = 0
    }

    // MARK: Edits

    /// Products related to the given kit ids, template keys, manufacturer names and categories.
    func related(kits: Set<String>, details: Set<Int64>, makers: Set<String>, cats: Set<Int64>) throws -> Set<Int64> {
        let s = try w.prepare("SELECT keyid, product_ID, Manufacturer, info_DetailsKey, cat FROM Product_Catalog")
        var out: Set<Int64> = []
        while try s.step() {
            if let t = s.text(1), kits.contains(t) { out.insert(s.int64(0)) }
            if let m = s.text(2)?.trimmedASCII, makers.contains(m) { out.insert(s.int64(0)) }
            if let d = s.text(3)?.trimmedASCII.strictInteger, details.contains(d) { out.insert(s.int64(0)) }
            if s.type(4) == .integer, cats.contains(s.int64(4)) { out.insert(s.int64(0)) }
        }
        return out
    }

    func texts(_ sql: String) throws -> Set<String> {
        let s = try w.prepare(sql)
        var out: Set<String> = []
        while try s.step() { if let t = s.text(0) { out.insert(t) } }
        return out
    }

    func children(of ids: Set<Int64>) throws -> Set<Int64> {
        let s = try w.prepare("SELECT id FROM hierarchy WHERE parent IN (SELECT value FROM json_each(?))")
        s.bind("[" + ids.map(String.init).joined(separator: ",") + "]", at: 1)
        var out: Set<Int64> = []
        while try s.step() { out.insert(s.int64(0)) }
        return out
    }

    /// Runs a statement that may legitimately fail (a constraint); failures change nothing.
    func run(_ sql: String) {
        do { try w.execute(sql) } catch {}
    }

    mutating func edit() throws {
        pendingEdits += 1
        switch int(5) {
        case 0, 1: try productEdit()
        case 2: try assetEdit()
        case 3:
            if int(2) == 0 { try templateEdit() } else { try makerEdit() }
        default: try hierarchyEdit()
        }
    }

    mutating func productEdit() throws {
        let id = keyid()
        let n = int(1_000_000)
        switch int(7) {
        case 0:
            let verb = pick(["INSERT", "INSERT OR REPLACE", "INSERT OR IGNORE", "REPLACE"])
            run("""
                \(verb) INTO Product_Catalog (keyid, product_ID, Product, Manufacturer, cat, info_DetailsKey)
                VALUES (\(id), '\(pick(Self.skus))', 'p\(n)', '\(pick(Self.makers))', \(pick(Self.hierarchyIDs)), '\(pick(Self.detailKeys))')
                """)
            pending.p.insert(id)
        case 1:
            run("UPDATE Product_Catalog SET Product = 'u\(n)' WHERE keyid = \(id)")
            pending.p.insert(id)
        case 2:
            let col = pick(["product_ID", "Manufacturer", "info_DetailsKey", "cat", "description"])
            let value: String
            switch col {
            case "product_ID": value = "'\(pick(Self.skus))'"
            case "Manufacturer": value = "'\(pick(Self.makers))'"
            case "info_DetailsKey": value = "'\(pick(Self.detailKeys))'"
            case "cat": value = "\(pick(Self.hierarchyIDs))"
            default: value = "'d\(n)'"
            }
            run("UPDATE Product_Catalog SET \(col) = \(value) WHERE keyid = \(id)")
            pending.p.insert(id)
        case 3:
            run("DELETE FROM Product_Catalog WHERE keyid = \(id)")
            pending.p.insert(id)
        case 4:
            let to = keyid()
            run("UPDATE OR \(pick(["REPLACE", "IGNORE", "ABORT"])) Product_Catalog SET keyid = \(to) WHERE keyid = \(id)")
            pending.p.formUnion([id, to])
        case 5:
            // Same value again: still a change.
            run("UPDATE Product_Catalog SET Product = Product WHERE keyid = \(id)")
            pending.p.insert(id)
        default:
            let more = [keyid(), keyid()]
            run("DELETE FROM Product_Catalog WHERE keyid IN (\(id), \(more[0]), \(more[1]))")
            pending.p.formUnion([id] + more)
        }
    }

    mutating func assetEdit() throws {
        let a = assetID(), b = assetID()
        let before = try texts("SELECT kitID FROM Product_Assets WHERE assetID IN (\(a), \(b))")
        switch int(5) {
        case 0: run("INSERT INTO Product_Assets (kitID, asset, kitQTY) VALUES ('\(pick(Self.skus))', 'part', '\(int(4))')")
        case 1: run("UPDATE Product_Assets SET kitQTY = '\(int(9))' WHERE assetID = \(a)")
        case 2: run("UPDATE Product_Assets SET kitID = '\(pick(Self.skus))' WHERE assetID = \(a)")
        case 3: run("DELETE FROM Product_Assets WHERE assetID = \(a)")
        default: run("INSERT OR REPLACE INTO Product_Assets (assetID, kitID, asset, kitQTY) VALUES (\(a), '\(pick(Self.skus))', 'r', '1')")
        }
        // A fresh row gets the greatest assetID.
        let after = try texts("SELECT kitID FROM Product_Assets WHERE assetID IN (\(a), \(b), (SELECT max(assetID) FROM Product_Assets))")
        pending.p.formUnion(try related(kits: before.union(after), details: [], makers: [], cats: []))
    }

    mutating func templateEdit() throws {
        let k = pick(Self.templateKeys)
        switch int(4) {
        case 0: run("INSERT INTO DetailsKeyValues (DetailsKey, spec_a, spec_b) VALUES (\(k), 'aA\(int(99))', 'bB')")
        case 1: run("UPDATE DetailsKeyValues SET spec_b = 'b\(int(99))' WHERE DetailsKey = \(k)")
        case 2: run("DELETE FROM DetailsKeyValues WHERE DetailsKey = \(k)")
        default: run("INSERT OR REPLACE INTO DetailsKeyValues (DetailsKey, spec_a) VALUES (\(k), 'aR\(int(99))')")
        }
        pending.p.formUnion(try related(kits: [], details: [Int64(k)], makers: [], cats: []))
    }

    mutating func makerEdit() throws {
        let m = mfgid()
        let before = try texts("SELECT manufacturer FROM mfg WHERE mfgid = \(m)")
        switch int(4) {
        case 0: run("INSERT OR REPLACE INTO mfg VALUES (\(m), '\(pick(Self.makers))', 'l\(int(99)).png')")
        case 1: run("UPDATE mfg SET logo = 'l\(int(99)).png' WHERE mfgid = \(m)")
        case 2: run("UPDATE mfg SET manufacturer = '\(pick(Self.makers))' WHERE mfgid = \(m)")
        default: run("DELETE FROM mfg WHERE mfgid = \(m)")
        }
        let after = try texts("SELECT manufacturer FROM mfg WHERE mfgid = \(m)")
        pending.p.formUnion(try related(kits: [], details: [], makers: Set(before.union(after).map(\.trimmedASCII)), cats: []))
    }

    mutating func hierarchyEdit() throws {
        let h = pick(Self.hierarchyIDs), h2 = pick(Self.hierarchyIDs)
        let ids: Set<Int64> = [h, h2]
        var touchedC = ids.union(try children(of: ids))
        var touchedP = try related(kits: [], details: [], makers: [], cats: ids)
        switch int(6) {
        case 0: run("INSERT INTO hierarchy VALUES (\(h), 't\(int(99))', '', 2, \(pick(Self.hierarchyIDs + [0])))")
        case 1: run("INSERT OR REPLACE INTO hierarchy VALUES (\(h), 'r\(int(99))', '', 2, \(pick(Self.hierarchyIDs + [0])))")
        case 2: run("UPDATE hierarchy SET menu_title = 'm\(int(99))' WHERE id = \(h)")
        case 3: run("UPDATE hierarchy SET parent = \(pick(Self.hierarchyIDs + [0])) WHERE id = \(h)")
        case 4: run("DELETE FROM hierarchy WHERE id = \(h)")
        default: run("UPDATE OR REPLACE hierarchy SET id = \(h2) WHERE id = \(h)")
        }
        touchedC.formUnion(try children(of: ids))
        touchedP.formUnion(try related(kits: [], details: [], makers: [], cats: ids))
        pending.p.formUnion(touchedP)
        pending.c.formUnion(touchedC)
    }

    // MARK: Client

    mutating func sync() throws {
        try reader.execute("BEGIN")
        defer { try? reader.execute("COMMIT") }
        let clean = pendingEdits == 0
        let set: ChangeSet
        switch Result(catching: { () throws(ChangeSetError) -> ChangeSet in try ChangeSets.compute(reader, since: client.version) }) {
        case .success(let s): set = s
        case .failure(.expired):
            // Refetch everything, as a client told CHANGES_EXPIRED does.
            client = SyncClient(version: try ChangeCapture.currentVersion(reader),
                                products: try ServedState.products(reader), categories: try ServedState.categories(reader))
            lenient = !clean
            return
        case .failure(let e): throw e
        }
        syncs += 1
        var allowed = pending
        for (v, t) in touchedByVersion where v > client.version && v <= set.version {
            allowed.p.formUnion(t.p); allowed.c.formUnion(t.c)
        }
        let since = client.version
        func fail(_ m: String) { failures.append("sync (\(since), \(set.version)]: \(m)") }
        if !Set(set.productIDs).isDisjoint(with: set.removedProductIDs) { fail("product listed and removed") }
        if !Set(set.categoryIDs).isDisjoint(with: set.removedCategoryIDs) { fail("category listed and removed") }
        for id in set.productIDs + set.removedProductIDs where !allowed.p.contains(id) { fail("product \(id) untouched") }
        for id in set.categoryIDs + set.removedCategoryIDs where !allowed.c.contains(id) { fail("category \(id) untouched") }
        if set.productIDs != set.productIDs.sorted() || set.removedProductIDs != set.removedProductIDs.sorted() { fail("unordered") }

        let products = try ServedState.products(reader)
        let categories = try ServedState.categories(reader)
        for id in set.removedProductIDs {
            if client.products.removeValue(forKey: id) == nil && !lenient { fail("removed product \(id) the client does not hold") }
        }
        for id in set.removedCategoryIDs {
            if client.categories.removeValue(forKey: id) == nil && !lenient { fail("removed category \(id) the client does not hold") }
        }
        for id in set.productIDs {
            guard let p = products[id] else { fail("listed product \(id) does not exist"); continue }
            client.products[id] = p
        }
        for id in set.categoryIDs {
            guard let c = categories[id] else { fail("listed category \(id) does not exist"); continue }
            client.categories[id] = c
        }
        client.version = set.version
        lenient = !clean
        if clean {
            if client.products != products {
                let bad = Set(products.keys).union(client.products.keys).filter { products[$0] != client.products[$0] }
                fail("products differ: \(bad.sorted())")
            }
            if client.categories != categories {
                let bad = Set(categories.keys).union(client.categories.keys).filter { categories[$0] != client.categories[$0] }
                fail("categories differ: \(bad.sorted())")
            }
        }
    }
}
