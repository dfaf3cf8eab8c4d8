import Foundation
import Testing
@testable import Resolvers

/// The cost of computing a change set on a large catalog. Runs only when CG_SYNC_BENCH_DB names
/// a prepared catalog (it edits that file), e.g.
///   catalog-gateway demo-db --out /tmp/1m.db --products 1000000 && catalog-gateway prepare --db /tmp/1m.db
///   CG_SYNC_BENCH_DB=/tmp/1m.db swift test -c release --filter SyncBenchTests
@Suite struct SyncBenchTests {
    static let path = ProcessInfo.processInfo.environment["CG_SYNC_BENCH_DB"]

    @Test(.enabled(if: path != nil))
    func tenProductChangeOnALargeCatalog() throws {
        guard let path = Self.path else { return }
        let w = try Database(path: path, readOnly: false)
        let reader = try Database(path: path, readOnly: true)
        let ids = try keyids(w, count: 10)
        func measure(_ label: String, _ edit: String) throws {
            let since = try ChangeCapture.currentVersion(w)
            try w.execute("BEGIN; \(edit); COMMIT")
            try VersionBump.insert(w)
            var times: [Double] = []
            var set = ChangeSet(version: 0)
            for _ in 0..<5 {
                let start = ContinuousClock.now
                try reader.execute("BEGIN")
                set = try ChangeSets.compute(reader, since: since)
                try reader.execute("COMMIT")
                let d = ContinuousClock.now - start
                times.append(Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1000)
            }
            times.sort()
            print("sync bench: \(label): \(set.productIDs.count) products, \(set.categoryIDs.count) categories, median \(String(format: "%.2f", times[2])) ms")
        }
        let list = ids.map(String.init).joined(separator: ",")
        try measure("10 product rows", "UPDATE Product_Catalog SET description = description || '.' WHERE keyid IN (\(list))")
        try measure("10 kits (1 row each)", """
            UPDATE Product_Assets SET kitQTY = kitQTY WHERE assetID IN (
              SELECT min(a.assetID) FROM Product_Assets a JOIN Product_Catalog p ON a.kitID = p.product_ID
              WHERE p.keyid IN (\(list)) GROUP BY p.keyid)
            """)
        try measure("1 mfg row", "UPDATE mfg SET logo = logo WHERE mfgid = (SELECT min(mfgid) FROM mfg)")
        try measure("1 template", "UPDATE DetailsKeyValues SET spec_a = spec_a WHERE DetailsKey = (SELECT min(DetailsKey) FROM DetailsKeyValues)")
        try measure("1 category deleted and re-added", """
            CREATE TEMP TABLE h AS SELECT * FROM hierarchy WHERE id = (SELECT max(id) FROM hierarchy);
            DELETE FROM hierarchy WHERE id = (SELECT id FROM h);
            """)
        try w.execute("INSERT INTO hierarchy SELECT * FROM temp.h; DROP TABLE temp.h")
        try VersionBump.insert(w)
    }

    private func keyids(_ db: Database, count: Int) throws -> [Int64] {
        let s = try db.prepare("SELECT keyid FROM Product_Catalog ORDER BY keyid LIMIT ? OFFSET 1000")
        s.bind(count, at: 1)
        var out: [Int64] = []
        while try s.step() { out.append(s.int64(0)) }
        return out
    }
}
