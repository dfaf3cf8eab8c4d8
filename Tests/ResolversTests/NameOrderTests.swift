import Foundation
import Testing
@testable import Resolvers

/// NameOrder sorts search matches in Swift exactly as `ORDER BY "Product" COLLATE NOCASE,
/// "keyid"` does in SQLite, for every storage class a messy file can hold.
@Suite struct NameOrderTests {
    /// Values of every kind, written as SQL literals: case variants, shared prefixes longer than
    /// 8 bytes, NUL bytes (NOCASE stops comparing at a NUL of its left operand), bytes that are
    /// not UTF-8, non-ASCII letters (never folded), numbers of both kinds that compare equal,
    /// blobs that differ only in length.
    static let literals = [
        "NULL", "'cooke s4/i 32mm'", "'Cooke S4/i 32mm'", "'COOKE S4/I 32MM'", "'Cooke S4/i 32mm '", "'Cooke S4'",
        "'Cooke Panchro/i Classic 32mm'", "'Cooke Anamorphic/i 32mm'", "''", "' '", "'a'", "'A'", "'b'", "'_'", "'['",
        "'Z'", "'z'", "'ÉCLAIR'", "'éclair'", "'Eclair'", "CAST(X'41004243' AS TEXT)", "CAST(X'41004244' AS TEXT)",
        "CAST(X'410042' AS TEXT)", "CAST(X'00' AS TEXT)", "CAST(X'0041' AS TEXT)", "CAST(X'4142FF43' AS TEXT)",
        "CAST(X'41428043' AS TEXT)", "'abcdefgh'", "'ABCDEFGHI'", "'abcdefgh\u{7F}'", "'abcdefg'", "0", "-1", "2", "2.0", "2.5",
        "-0.0", "0.0", "9223372036854775807", "-9223372036854775808", "9.3e18", "-9.3e18", "1e300", "0.5",
        "X''", "X'00'", "X'0000'", "X'41'", "X'61'", "X'4142434445464748'", "X'414243444546474849'", "X'FF'",
    ]

    /// keyids are `offset + 7 * i`: past 32 bits or negative, the (rank, keyid) pairs cannot be
    /// packed into one integer and take the general sort.
    func check(_ values: [String], seed: UInt64, offset: Int64 = 0) throws {
        let db = try Database(path: ":memory:", readOnly: false, create: true)
        try db.execute("CREATE TABLE t (keyid INTEGER PRIMARY KEY, Product)")
        var rng = SplitMix64(seed: seed)
        // Keyids in a shuffled order, so neither the table's order nor the keyids give the answer.
        var keys = Array(1...values.count).map { offset + Int64($0) * 7 }
        keys.shuffle(using: &rng)
        for (key, v) in zip(keys, values) { try db.execute("INSERT INTO t VALUES (\(key), \(v))") }
        let unsorted = try db.prepare("SELECT keyid, Product FROM t ORDER BY random()")
        var order = NameOrder()
        while try unsorted.step() { order.append(unsorted, keyColumn: 0, nameColumn: 1) }
        let sqlite = try db.prepare("SELECT keyid FROM t ORDER BY Product COLLATE NOCASE, keyid")
        var expected: [Int64] = []
        while try sqlite.step() { expected.append(sqlite.int64(0)) }
        #expect(order.sortedKeys() == expected, "seed \(seed)")
    }

    @Test func everyKindAsSQLiteOrdersIt() throws {
        // Each value twice, so equal names fall back to keyid order.
        try check(Self.literals + Self.literals, seed: 1)
        try check(Self.literals + Self.literals, seed: 1, offset: -400)
        try check(Self.literals + Self.literals, seed: 1, offset: 4_294_967_000)
    }

    @Test(arguments: [2, 3, 4, 5, 6] as [UInt64])
    func randomNamesAsSQLiteOrdersThem(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        // Few distinct names from a small alphabet (many ties and shared prefixes), some picked
        // from the literals above.
        let alphabet = Array("aAbB cC_\u{0}é".unicodeScalars)
        var values: [String] = []
        for _ in 0..<600 {
            if Int.random(in: 0..<5, using: &rng) == 0 {
                values.append(Self.literals.randomElement(using: &rng)!)
                continue
            }
            let n = Int.random(in: 0..<12, using: &rng)
            let bytes = (0..<n).flatMap { _ in Array(String(alphabet.randomElement(using: &rng)!).utf8) }
            values.append("CAST(X'" + bytes.map { String(format: "%02X", $0) }.joined() + "' AS TEXT)")
        }
        try check(values, seed: seed)
    }

    @Test func integersAgainstDoubles() {
        #expect(NameOrder.intFloat(2, 2.0) == 0)
        #expect(NameOrder.intFloat(2, 2.5) < 0)
        #expect(NameOrder.intFloat(-2, -2.5) > 0)
        #expect(NameOrder.intFloat(-3, -2.5) < 0)
        #expect(NameOrder.intFloat(Int64.max, 9223372036854775808.0) < 0)
        #expect(NameOrder.intFloat(Int64.min, -9223372036854775808.0) == 0)
        #expect(NameOrder.intFloat(Int64.min, -1e19) > 0)
        #expect(NameOrder.intFloat(9007199254740993, 9007199254740992.0) > 0)
    }
}
