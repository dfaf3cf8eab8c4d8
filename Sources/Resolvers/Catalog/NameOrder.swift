#if canImport(Glibc)
import Glibc
#endif

/// Search results in `ORDER BY "Product" COLLATE NOCASE, "keyid"` order, sorted in Swift.
///
/// SQLite sorts a few thousand search matches with its external-merge sorter, one record
/// comparison through the VDBE per step: on the 1,000,000-product catalog that was about a
/// quarter of a search's instructions. The statement now returns the matches unsorted with their
/// names, and this sorts them exactly as SQLite would:
/// - storage classes first: NULL < INTEGER and REAL (by numeric value) < TEXT < BLOB;
/// - TEXT by the NOCASE collation: `sqlite3StrNICmp` over the shorter length (bytes folded by
///   ASCII only, unsigned, stopping at a NUL byte of the left operand), then the longer first
///   loses (`nKey1 - nKey2`);
/// - BLOB by `memcmp` over the shorter length, then by length;
/// - ties by keyid (an INTEGER PRIMARY KEY: always an integer).
/// `NameOrderTests` compares it with SQLite's own ORDER BY over messy values.
struct NameOrder {
    /// One distinct stored value (bytes kept once, however many matches carry it).
    private struct Entry {
        /// 0 NULL, 1 numeric, 2 TEXT, 3 BLOB.
        var kind: UInt8
        var isInteger: Bool
        var integer: Int64
        var real: Double
        var start: Int32
        var count: Int32
        /// TEXT: the first 8 bytes folded (BLOB: as stored), big-endian, zero-padded: when two
        /// prefixes differ they order the values; equal ones fall back to the full comparison.
        var prefix: UInt64
        /// TEXT with a NUL byte in its first 8: the prefix does not decide (NOCASE stops at NUL).
        var nulInPrefix: Bool
    }

    /// The distinct values and their bytes, found again by hash (`bucket`: a hash's first
    /// value, `chain`: the next value with the same hash).
    private var entries: [Entry] = []
    private var bytes: [UInt8] = []
    private var bucket: [Int: Int32] = [:]
    private var chain: [Int32] = []
    /// Each match: its keyid and the index of its value in `entries`. Matches of a search
    /// share few names, so memory grows by 12 bytes per match plus each distinct name once.
    private var keys: [Int64] = []
    private var groups: [Int32] = []

    /// Appends the current row: keyid in column `keyColumn`, the name in `nameColumn`.
    mutating func append(_ s: Statement, keyColumn: Int32, nameColumn: Int32) {
        var e = Entry(kind: 0, isInteger: false, integer: 0, real: 0, start: 0, count: 0, prefix: 0, nulInPrefix: false)
        let type = s.type(nameColumn)
        switch type {
        case .null: e.kind = 0
        case .integer: e.kind = 1; e.isInteger = true; e.integer = s.int64(nameColumn)
        case .real: e.kind = 1; e.real = s.double(nameColumn)
        case .text, .blob: e.kind = type == .text ? 2 : 3
        }
        keys.append(s.int64(keyColumn))
        // A BLOB compares as its stored bytes (`memcmp`), which in a UTF-16 database are not
        // what sqlite3_column_text gives.
        let g: Int32 = e.kind == 3 ? s.withBlob(nameColumn) { group(e, $0) }
            : e.kind == 2 ? s.withText(nameColumn) { group(e, $0) } : group(e, UnsafeRawBufferPointer(start: nil, count: 0))
        groups.append(g)
    }

    /// The index of the value `e` (with `text` for TEXT and BLOB) among the distinct ones,
    /// added when new.
    private mutating func group(_ e: Entry, _ text: UnsafeRawBufferPointer) -> Int32 {
        var hasher = Hasher()
        hasher.combine(e.kind)
        hasher.combine(e.isInteger ? UInt64(bitPattern: e.integer) : e.real.bitPattern)
        hasher.combine(bytes: text)
        let h = hasher.finalize()
        var at = bucket[h] ?? -1
        while at >= 0 {
            let o = entries[Int(at)]
            if o.kind == e.kind && o.isInteger == e.isInteger && o.integer == e.integer
                && o.real.bitPattern == e.real.bitPattern && Int(o.count) == text.count
                && (text.count == 0 || bytes.withUnsafeBytes { memcmp($0.baseAddress! + Int(o.start), text.baseAddress!, text.count) == 0 }) {
                return at
            }
            at = chain[Int(at)]
        }
        var n = e
        n.start = Int32(bytes.count)
        n.count = Int32(text.count)
        bytes.append(contentsOf: text)
        if n.kind >= 2 {
            let isText = n.kind == 2
            for i in 0..<Swift.min(8, text.count) {
                let c = text[i]
                if isText && c == 0 { n.nulInPrefix = true }
                n.prefix |= UInt64(isText ? UInt8(Self.fold(c)) : c) << (56 - 8 * UInt64(i))
            }
        }
        let g = Int32(entries.count)
        entries.append(n)
        chain.append(bucket[h] ?? -1)
        bucket[h] = g
        return g
    }

    /// The keyids in order: the distinct values are sorted with the full comparison, each gets a
    /// rank (values equal under the collation share one), and the matches are sorted by (rank,
    /// keyid) with integer comparisons.
    func sortedKeys() -> [Int64] {
        var rank = [Int32](repeating: 0, count: entries.count)
        bytes.withUnsafeBufferPointer { b in
            let order = entries.indices.sorted { Self.compare(entries[$0], entries[$1], b) < 0 }
            var r: Int32 = 0
            for (n, g) in order.enumerated() {
                if n > 0 && Self.compare(entries[order[n - 1]], entries[g], b) != 0 { r += 1 }
                rank[g] = r
            }
        }
        if keys.allSatisfy({ $0 >= 0 && $0 <= Int64(UInt32.max) }) {
            // The usual keyids: (rank, keyid) packed into one integer, 8 bytes a match.
            var packed = keys.indices.map { UInt64(UInt32(rank[Int(groups[$0])])) << 32 | UInt64(keys[$0]) }
            packed.sort()
            return packed.map { Int64($0 & 0xFFFF_FFFF) }
        }
        var pairs = keys.indices.map { (rank: rank[Int(groups[$0])], keyid: keys[$0]) }
        pairs.sort { $0.rank != $1.rank ? $0.rank < $1.rank : $0.keyid < $1.keyid }
        return pairs.map(\.keyid)
    }

    private static func compare(_ x: Entry, _ y: Entry, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        if x.kind != y.kind { return Int(x.kind) - Int(y.kind) }
        switch x.kind {
        case 0: return 0
        case 1: return numeric(x, y)
        case 2:
            if x.prefix != y.prefix && !x.nulInPrefix && !y.nulInPrefix { return x.prefix < y.prefix ? -1 : 1 }
            return nocase(b, Int(x.start), Int(x.count), Int(y.start), Int(y.count))
        default:
            if x.prefix != y.prefix { return x.prefix < y.prefix ? -1 : 1 }
            return binary(b, Int(x.start), Int(x.count), Int(y.start), Int(y.count))
        }
    }

    private static func numeric(_ x: Entry, _ y: Entry) -> Int {
        switch (x.isInteger, y.isInteger) {
        case (true, true): return x.integer < y.integer ? -1 : (x.integer > y.integer ? 1 : 0)
        case (false, false): return x.real < y.real ? -1 : (x.real > y.real ? 1 : 0)
        case (true, false): return intFloat(x.integer, y.real)
        case (false, true): return -intFloat(y.integer, x.real)
        }
    }

    /// An integer against a double, exactly (SQLite's sqlite3IntFloatCompare; no NaN is stored).
    static func intFloat(_ i: Int64, _ r: Double) -> Int {
        if r < -9223372036854775808.0 { return 1 }
        if r >= 9223372036854775808.0 { return -1 }
        let t = Int64(r.rounded(.down))
        if i < t { return -1 }
        if i > t { return 1 }
        // Equal integer parts: the double is larger when it has a fraction.
        return Double(t) < r ? -1 : 0
    }

    /// SQLite's ASCII `UpperToLower`.
    @inline(__always) static func fold(_ c: UInt8) -> Int {
        Int(c >= 0x41 && c <= 0x5A ? c | 0x20 : c)
    }

    /// The NOCASE collation of two byte ranges.
    static func nocase(_ b: UnsafeBufferPointer<UInt8>, _ xs: Int, _ xn: Int, _ ys: Int, _ yn: Int) -> Int {
        let n = min(xn, yn)
        guard n > 0, let p = b.baseAddress else { return xn - yn }
        var i = 0
        while i < n {
            let a = p[xs + i], c = p[ys + i]
            if a == 0 || fold(a) != fold(c) {
                let d = fold(a) - fold(c)
                return d != 0 ? d : xn - yn
            }
            i += 1
        }
        return xn - yn
    }

    /// BLOBs: `memcmp` over the shorter length, then the length.
    static func binary(_ b: UnsafeBufferPointer<UInt8>, _ xs: Int, _ xn: Int, _ ys: Int, _ yn: Int) -> Int {
        let n = min(xn, yn)
        guard n > 0, let p = b.baseAddress else { return xn - yn }
        let r = Int(memcmp(p + xs, p + ys, n))
        return r != 0 ? r : xn - yn
    }
}
