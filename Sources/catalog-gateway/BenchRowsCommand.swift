import ArgumentParser
import CSQLite
import Foundation
import Resolvers
#if canImport(Glibc)
import Glibc
#endif

/// `catalog-gateway bench-rows`: the row floor of the category page. It steps exactly the rows
/// that a 50-product category page needs, one prepared statement per row, through sqlite3 directly,
/// and copies their text into a buffer — no GraphQL, no JSON, no batching. The gateway's cold
/// category page is measured against this time per page.
struct BenchRowsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-rows",
        abstract: "Time the row floor of a category page: its rows stepped through sqlite3 one statement per row.",
        discussion: """
            One page, in one read transaction: the category row, each ancestor of its path and its \
            children (hierarchy by id, by parent); then for each of the page's products (the first \
            --page products of the category in CATALOG order, chosen before timing): the product row \
            by keyid and its kit rows by kitID; the spec template of each distinct DetailsKey and the \
            logo of each distinct manufacturer. Every column's text is copied into one buffer. \
            Statements are prepared once and reset between rows. Not included (the floor is the \
            lower for it): totalCount, pageInfo, sorting the page.

            Without --category it uses the category with the most products. --json prints one \
            JSON object (category, products, rows, bytes, iterations, median_ms, p99_ms, min_ms) for \
            scripts.
            """)

    @Option(name: .long, help: "Catalog SQLite file (with the cg_ indexes: `catalog-gateway prepare`).")
    var db: String

    @Option(name: .long, parsing: .unconditional, help: "Category id (default: the category with the most products).")
    var category: Int64?

    @Option(name: .long, parsing: .unconditional, help: "Products on the page.")
    var page: Int = 50

    @Option(name: .long, parsing: .unconditional, help: "Number of timed pages.")
    var iterations: Int = 2000

    @Flag(name: .long, help: "Print one JSON object instead of text.")
    var json = false

    func validate() throws {
        guard iterations >= 1 else { throw ValidationError("--iterations must be at least 1") }
        guard (1...100).contains(page) else { throw ValidationError("--page must be between 1 and 100") }
    }

    func run() throws {
        if let reason = Database.missingFileReason(db) { fail("\(db): \(reason)") }
        let floor: RowFloor
        do {
            let database = try Database(path: db, readOnly: true)
            // As `query` says it, rather than SQLite's "no such table" from the first statement.
            for table in ["hierarchy", "Product_Catalog", "Product_Assets", "DetailsKeyValues", "mfg"]
            where try !database.tableExists(table) {
                fail("\(db): not a Radiant catalog: table \(table) is missing")
            }
            // The same page cache as the gateway's own catalog connections.
            try database.execute("PRAGMA cache_size = -\(EngineOptions().pageCacheKiB)")
            let id = try category ?? RowFloor.busiestCategory(database)
            if category != nil {
                // Timing an empty page would pass for a measurement.
                let s = try database.prepare("SELECT 1 FROM hierarchy WHERE id = ?")
                s.bind(id, at: 1)
                guard try s.step() else { fail("\(db): --category \(id): no such category (hierarchy has no row with that id)") }
            }
            floor = try RowFloor(database: database, category: id, page: page)
        } catch let e as SQLiteError {
            fail("\(db): \(e.message)")
        }
        var stats = (rows: 0, bytes: 0)
        do {
            for _ in 0..<min(200, iterations) { stats = try floor.step() }
            var times: [Double] = []
            times.reserveCapacity(iterations)
            for _ in 0..<iterations {
                let t0 = now()
                _ = try floor.step()
                times.append(now() - t0)
            }
            times.sort()
            let median = times[times.count / 2] * 1000
            let p99 = times[min(times.count - 1, times.count * 99 / 100)] * 1000
            if json {
                print(String(format: "{\"category\":\"%lld\",\"products\":%d,\"rows\":%d,\"bytes\":%d,\"iterations\":%d,\"median_ms\":%.4f,\"p99_ms\":%.4f,\"min_ms\":%.4f}",
                             floor.category, floor.keyids.count, stats.rows, stats.bytes, iterations, median, p99, times[0] * 1000))
            } else {
                print("bench-rows: category \(floor.category), \(floor.keyids.count) products, \(stats.rows) rows, \(stats.bytes) bytes of text per page, \(iterations) pages")
                print(String(format: "median %.3f ms   p99 %.3f ms   min %.3f ms", median, p99, times[0] * 1000))
            }
        } catch {
            fail("\(db): \(error.message)")
        }
    }
}

/// The statements of the row floor, prepared once on one connection.
final class RowFloor {
    let database: Database
    let category: Int64
    /// The page's products, in CATALOG order (chosen once, outside the timing).
    let keyids: [Int64]
    private let begin, commit, categoryByID, childrenByParent, productByKey, kitByID, templateByKey, logoByName: Statement
    private var buffer: [UInt8] = []

    static let productColumns = ["keyid", "product_ID", "Product", "Manufacturer", "displayorder", "display_Thumbnail",
                                 "display_Image01", "display_Image02", "display_Image03", "display_Image04", "display_Image05",
                                 "description", "info_DetailsKey"] + (UInt8(ascii: "a")...UInt8(ascii: "q")).map { "info_spec_\(Character(UnicodeScalar($0)))" }
    static let templateColumns = ["DetailsKey"] + (UInt8(ascii: "a")...UInt8(ascii: "q")).map { "spec_\(Character(UnicodeScalar($0)))" }

    init(database: Database, category: Int64, page: Int) throws(SQLiteError) {
        self.database = database
        self.category = category
        let pick = try database.prepare("""
            SELECT keyid FROM Product_Catalog WHERE cat = ? ORDER BY Manufacturer, displayorder, Product, keyid LIMIT ?
            """)
        pick.bind(category, at: 1)
        pick.bind(page, at: 2)
        var ids: [Int64] = []
        while try pick.step() { ids.append(pick.int64(0)) }
        keyids = ids
        begin = try database.prepare("BEGIN")
        commit = try database.prepare("COMMIT")
        categoryByID = try database.prepare("SELECT id, menu_title, menu_icon, level, parent FROM hierarchy WHERE id = ?")
        childrenByParent = try database.prepare("SELECT id, menu_title, menu_icon, level, parent FROM hierarchy WHERE parent = ? ORDER BY id")
        productByKey = try database.prepare("SELECT \(Self.productColumns.map { "\"\($0)\"" }.joined(separator: ", ")) FROM Product_Catalog WHERE keyid = ?")
        kitByID = try database.prepare("SELECT assetID, asset, kitQTY FROM Product_Assets WHERE kitID = ? ORDER BY assetID")
        templateByKey = try database.prepare("SELECT \(Self.templateColumns.map { "\"\($0)\"" }.joined(separator: ", ")) FROM DetailsKeyValues WHERE DetailsKey = ?")
        logoByName = try database.prepare("SELECT logo FROM mfg WHERE \(CatalogSQL.trim("manufacturer")) = ? ORDER BY mfgid LIMIT 1")
        buffer.reserveCapacity(1 << 20)
    }

    /// The category with the most products (ties: the lowest id) among rows of hierarchy.
    static func busiestCategory(_ database: Database) throws(SQLiteError) -> Int64 {
        let s = try database.prepare("""
            SELECT p.cat FROM Product_Catalog p JOIN hierarchy h ON h.id = p.cat
            GROUP BY p.cat ORDER BY count(*) DESC, p.cat LIMIT 1
            """)
        return try s.step() ? s.int64(0) : 1
    }

    /// Steps every row of one page; returns the rows stepped and the bytes of text copied.
    func step() throws(SQLiteError) -> (rows: Int, bytes: Int) {
        // The buffer is a local for the page (the property keeps its capacity between pages):
        // appending to a class's stored property from a closure pays Swift's dynamic
        // exclusivity check on every column, ~8% of this loop's instructions, which is no part
        // of a lower bound.
        var out = Output(buffer: [])
        swap(&out.buffer, &buffer)
        out.buffer.removeAll(keepingCapacity: true)
        defer { swap(&out.buffer, &buffer) }
        begin.reset()
        try begin.run()
        defer { commit.reset(); _ = try? commit.run() }
        // The category, then its ancestors up to a root (stopping before a repeat), then children.
        var seen: Set<Int64> = []
        var id = category
        while id != 0, seen.insert(id).inserted {
            categoryByID.reset()
            categoryByID.bind(id, at: 1)
            guard try categoryByID.step() else { break }
            copyRow(categoryByID, &out)
            id = categoryByID.int64(4)
        }
        childrenByParent.reset()
        childrenByParent.bind(category, at: 1)
        while try childrenByParent.step() { copyRow(childrenByParent, &out) }

        var templates: Set<Int64> = []
        var manufacturers: Set<[UInt8]> = []
        for key in keyids {
            productByKey.reset()
            productByKey.bind(key, at: 1)
            guard try productByKey.step() else { continue }
            copyRow(productByKey, &out)
            // Kit rows: kitID = product_ID as stored text.
            kitByID.reset()
            withColumnText(productByKey, 1) { sku in
                _ = sqlite3_bind_text(kitByID.handle, 1, sku.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(sku.count), cg_sqlite_transient())
            }
            while try kitByID.step() { copyRow(kitByID, &out) }
            if let detailsKey = Int64(String(decoding: trimmed(productByKey, 12), as: UTF8.self)) {
                templates.insert(detailsKey)
            }
            let name = trimmed(productByKey, 3)
            if !name.isEmpty { manufacturers.insert(name) }
        }
        for key in templates {
            templateByKey.reset()
            templateByKey.bind(key, at: 1)
            if try templateByKey.step() { copyRow(templateByKey, &out) }
        }
        for name in manufacturers {
            logoByName.reset()
            _ = name.withUnsafeBufferPointer { b in
                sqlite3_bind_text(logoByName.handle, 1, UnsafeRawPointer(b.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(b.count), cg_sqlite_transient())
            }
            if try logoByName.step() { copyRow(logoByName, &out) }
        }
        return (out.rows, out.buffer.count)
    }

    struct Output {
        var buffer: [UInt8]
        var rows = 0
    }

    private func copyRow(_ s: Statement, _ out: inout Output) {
        out.rows += 1
        let n = sqlite3_column_count(s.handle)
        for i in 0..<n {
            withColumnText(s, i) { out.buffer.append(contentsOf: $0) }
        }
    }

    private func withColumnText(_ s: Statement, _ i: Int32, _ body: (UnsafeRawBufferPointer) -> Void) {
        guard let p = sqlite3_column_text(s.handle, i) else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        body(UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(s.handle, i))))
    }

    private func trimmed(_ s: Statement, _ i: Int32) -> [UInt8] {
        var out: [UInt8] = []
        withColumnText(s, i) { b in
            var lo = 0, hi = b.count
            func space(_ c: UInt8) -> Bool { c == 32 || (9...13).contains(c) }
            while lo < hi, space(b[lo]) { lo += 1 }
            while hi > lo, space(b[hi - 1]) { hi -= 1 }
            out = Array(b[lo..<hi])
        }
        return out
    }
}
