import CSQLite

/// One value of a row's sort key, exactly as stored: a text keeps its bytes (valid UTF-8 or
/// not), so that binding it back compares equal to the row it came from.
enum SortValue: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text([UInt8])
    case blob([UInt8])
}

/// Where a row stands in a connection's order: its ORDER BY values (`ProductOrder.sortColumns`),
/// keyid last.
struct SortKey: Equatable {
    let order: ProductOrder
    var values: [SortValue]
    /// Indexes of `values` that a cursor holds only the first `Cursor.maxValueBytes` of (a
    /// decoded key; `CatalogResolver.completeKey` reads the rest from the row).
    var truncated: [Int] = []
}

/// Opaque connection cursors: base64 of the row's sort key. `after: cursor` then means "the rows
/// that sort after this key", so a page follows on from the previous one even when another
/// writer inserted or deleted rows in between (an offset would repeat or skip rows then).
///
/// Bytes: "K1", the order (`C`, `N` or `W`), then each value: `n` (NULL), `i` / `r` and eight
/// bytes big-endian (integer, IEEE double), `t` / `b` and a LEB128 length and the bytes. A text
/// or blob longer than `maxValueBytes` is cut there and tagged `T` / `B`: a cursor stays a few
/// KB whatever the catalog holds (a 1 MB name made a cursor no request could carry back).
enum Cursor {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    /// Texts and blobs longer than this are kept as their first this-many bytes.
    static let maxValueBytes = 1024
    /// Longer cursors are refused unread: `encode` writes at most about 4.2 KB.
    static let maxLength = 8192

    private static func tag(_ order: ProductOrder) -> UInt8 {
        switch order {
        case .catalog: return 0x43  // C
        case .name: return 0x4E     // N
        case .newest: return 0x57   // W
        }
    }

    static func encode(_ key: SortKey) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.values.reduce(3) { n, v in
            switch v {
            case .null: return n + 1
            case .integer, .real: return n + 9
            case .text(let b), .blob(let b): return n + 6 + min(b.count, maxValueBytes)
            }
        })
        bytes += [0x4B, 0x31, tag(key.order)]
        func be(_ v: UInt64) { for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) } }
        func counted(_ tag: UInt8, _ whole: [UInt8], cut: Bool) {
            // Cut (here, or already in a decoded key): the same tag in upper case (t → T, b → B).
            let b = whole.count > maxValueBytes ? Array(whole.prefix(maxValueBytes)) : whole
            bytes.append(cut || whole.count > maxValueBytes ? tag - 0x20 : tag)
            var n = b.count
            repeat {
                bytes.append(UInt8(n & 0x7F) | (n >= 0x80 ? 0x80 : 0))
                n >>= 7
            } while n > 0
            bytes += b
        }
        for (k, v) in key.values.enumerated() {
            switch v {
            case .null: bytes.append(0x6E)
            case .integer(let i): bytes.append(0x69); be(UInt64(bitPattern: i))
            case .real(let d): bytes.append(0x72); be(d.bitPattern)
            case .text(let t): counted(0x74, t, cut: key.truncated.contains(k))
            case .blob(let b): counted(0x62, b, cut: key.truncated.contains(k))
            }
        }
        return base64(bytes)
    }

    /// The sort key a cursor of `order` holds, or nil when it is not one of ours for that order
    /// (malformed, of another orderBy, or not in the one form `encode` writes).
    static func decode(_ cursor: String, order: ProductOrder) -> SortKey? {
        guard cursor.utf8.count <= maxLength, let bytes = unbase64(Array(cursor.utf8)),
              bytes.count >= 3, bytes[0] == 0x4B, bytes[1] == 0x31, bytes[2] == tag(order) else { return nil }
        var at = 3
        func take(_ n: Int) -> ArraySlice<UInt8>? {
            guard n >= 0, bytes.count - at >= n else { return nil }
            defer { at += n }
            return bytes[at..<at + n]
        }
        func be() -> UInt64? {
            guard let s = take(8) else { return nil }
            return s.reduce(0) { $0 << 8 | UInt64($1) }
        }
        func counted() -> [UInt8]? {
            var n = 0, shift = 0
            while true {
                guard shift < 28, let b = take(1)?.first else { return nil }
                n |= Int(b & 0x7F) << shift
                shift += 7
                if b & 0x80 == 0 { break }
            }
            return take(n).map(Array.init)
        }
        var values: [SortValue] = []
        var truncated: [Int] = []
        while at < bytes.count {
            switch take(1)?.first {
            case 0x6E: values.append(.null)
            case 0x69: guard let v = be() else { return nil }; values.append(.integer(Int64(bitPattern: v)))
            case 0x72: guard let v = be() else { return nil }; values.append(.real(Double(bitPattern: v)))
            case 0x74: guard let t = counted() else { return nil }; values.append(.text(t))
            case 0x62: guard let b = counted() else { return nil }; values.append(.blob(b))
            case 0x54: guard let t = counted(), t.count == maxValueBytes else { return nil }; truncated.append(values.count); values.append(.text(t))
            case 0x42: guard let b = counted(), b.count == maxValueBytes else { return nil }; truncated.append(values.count); values.append(.blob(b))
            default: return nil
            }
        }
        // keyid, the last value, is the table's integer primary key.
        guard values.count == order.sortColumns.count, case .integer = values.last else { return nil }
        let key = SortKey(order: order, values: values, truncated: truncated)
        // One spelling per key (no other padding, no longer lengths): cursors compare as strings.
        guard encode(key) == cursor else { return nil }
        return key
    }

    private static func base64(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: (bytes.count + 2) / 3 * 4) { out in
            var o = 0
            var i = 0
            while i < bytes.count {
                let b0 = bytes[i]
                let b1 = i + 1 < bytes.count ? bytes[i + 1] : 0
                let b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
                out[o] = alphabet[Int(b0 >> 2)]
                out[o + 1] = alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)]
                out[o + 2] = i + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : 0x3D
                out[o + 3] = i + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : 0x3D
                o += 4
                i += 3
            }
            return o
        }
    }

    private static func unbase64(_ chars: [UInt8]) -> [UInt8]? {
        guard !chars.isEmpty, chars.count % 4 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chars.count / 4 * 3)
        var i = 0
        while i < chars.count {
            var v: [UInt8] = [0, 0, 0, 0]
            for k in 0..<4 {
                switch chars[i + k] {
                case 0x41...0x5A: v[k] = chars[i + k] - 0x41
                case 0x61...0x7A: v[k] = chars[i + k] - 0x61 + 26
                case 0x30...0x39: v[k] = chars[i + k] - 0x30 + 52
                case 0x2B: v[k] = 62
                case 0x2F: v[k] = 63
                case 0x3D: v[k] = 64
                default: return nil
                }
            }
            let last = i + 4 == chars.count
            guard v[0] < 64, v[1] < 64 else { return nil }
            bytes.append(v[0] << 2 | v[1] >> 4)
            if v[2] < 64 {
                bytes.append((v[1] & 0x0F) << 4 | v[2] >> 2)
                if v[3] < 64 { bytes.append((v[2] & 0x03) << 6 | v[3]) } else if !last { return nil }
            } else if v[3] < 64 || !last {
                return nil
            }
            i += 4
        }
        return bytes
    }
}

extension ProductOrder {
    /// The columns of `sql`, in order, each as the page statements read it; keyid last.
    var sortColumns: [String] {
        switch self {
        case .catalog: return ["p.\"Manufacturer\"", "p.\"displayorder\"", "p.\"Product\"", "p.\"keyid\""]
        case .name: return ["p.\"Product\"", "p.\"keyid\""]
        case .newest: return ["p.\"keyid\""]
        }
    }

    /// The condition "the row sorts after `key`" in this order (`sql`: ascending with NULL
    /// first, SQLite's type order, binary collation, Product without case for NAME; keyid
    /// descending for NEWEST), and the values to bind to its `?`s, in order.
    ///
    /// Without NULLs it is one row-value comparison, `(Manufacturer, displayorder, Product,
    /// keyid) > (?, ?, ?, ?)`, which the order's index seeks to (a page half a million rows in
    /// took 130 ms as ORs of column comparisons, a scan from the start). Element by element it
    /// is what ORDER BY does: the first unequal pair decides, and a NULL in the row there makes
    /// the comparison NULL — false — which is right, as NULL sorts first. A NULL in the key
    /// cannot be compared so: that column is spelled out with IS (the rows that are not NULL
    /// there, or that are and come after on the columns that follow).
    func after(_ key: SortKey) -> (sql: String, binds: [SortValue]) {
        if self == .newest { return ("p.\"keyid\" < ?", [key.values[0]]) }
        let columns = sortColumns
        var binds: [SortValue] = []
        func operand(_ column: String) -> String { self == .name && column == "p.\"Product\"" ? "? COLLATE NOCASE" : "?" }
        func condition(_ i: Int) -> String {
            if !key.values[i...].contains(.null) {
                binds += key.values[i...]
                if i == columns.count - 1 { return "\(columns[i]) > ?" }
                return "(\(columns[i...].joined(separator: ", "))) > (\(columns[i...].map(operand).joined(separator: ", ")))"
            }
            let column = columns[i], v = key.values[i]
            if v == .null { return "(\(column) IS NOT NULL OR (\(column) IS NULL AND \(condition(i + 1))))" }
            binds.append(v)
            binds.append(v)
            return "(\(column) > \(operand(column)) OR (\(column) = \(operand(column)) AND \(condition(i + 1))))"
        }
        return (condition(0), binds)
    }
}

extension Statement {
    /// Column `i` as a sort value, a text's bytes as stored.
    func sortValue(_ i: Int32) -> SortValue {
        switch type(i) {
        case .null: return .null
        case .integer: return .integer(int64(i))
        case .real: return .real(double(i))
        case .text: return .text(Array(textBytes(i)))
        case .blob:
            let n = Int(sqlite3_column_bytes(handle, i))
            guard n > 0, let p = sqlite3_column_blob(handle, i) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: p, count: n)))
        }
    }

    /// Binds sort values from parameter `first` on.
    func bind(_ values: [SortValue], from first: Int32) {
        for (k, v) in values.enumerated() {
            let i = first + Int32(k)
            switch v {
            case .null: bindNull(at: i)
            case .integer(let x): bind(x, at: i)
            case .real(let x): bind(x, at: i)
            case .text(let t): t.withUnsafeBytes { bindText($0, at: i) }
            case .blob(let b): bind(SQLValue.blob(b), at: i)
            }
        }
    }
}
