/// Appends JSON text to a byte buffer. Strings are escaped per RFC 8259; bytes that are not
/// valid UTF-8 (damaged catalog text) are replaced by U+FFFD so the output is always valid JSON.
public struct JSONWriter: Sendable {
    public var bytes: [UInt8]

    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inlinable public mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
    @inlinable public mutating func raw(_ b: [UInt8]) { bytes.append(contentsOf: b) }
    @inlinable public mutating func byte(_ b: UInt8) { bytes.append(b) }

    public mutating func null() { raw("null") }
    public mutating func bool(_ v: Bool) { if v { raw("true") } else { raw("false") } }
    public mutating func int(_ v: Int) { int(Int64(v)) }
    /// Decimal digits written in place (no intermediate String).
    public mutating func int(_ v: Int64) {
        // A few bytes: appended one by one (cheaper than a bulk append's set-up).
        Self.withDecimal(v, quoted: false) { b in for x in b { bytes.append(x) } }
    }

    /// Calls `body` with the decimal digits of `v` (in double quotes when `quoted`, as for an
    /// ID), formed right to left in a stack buffer, two digits at a time from a table: no
    /// String is made.
    @inlinable @inline(__always)
    public static func withDecimal<R>(_ v: Int64, quoted: Bool, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        return withUnsafeMutableBytes(of: &buffer) { b in
            let pairs = UnsafeRawPointer(digitPairs.utf8Start)
            var i = b.count
            if quoted { i -= 1; b[i] = 0x22 }
            var m = v.magnitude
            while m >= 100 {
                let r = Int(truncatingIfNeeded: m % 100)
                m /= 100
                i -= 2
                b.storeBytes(of: pairs.loadUnaligned(fromByteOffset: 2 * r, as: UInt16.self), toByteOffset: i, as: UInt16.self)
            }
            if m >= 10 {
                i -= 2
                b.storeBytes(of: pairs.loadUnaligned(fromByteOffset: 2 * Int(m), as: UInt16.self), toByteOffset: i, as: UInt16.self)
            } else {
                i -= 1; b[i] = 0x30 + UInt8(truncatingIfNeeded: m)
            }
            if v < 0 { i -= 1; b[i] = 0x2D }
            if quoted { i -= 1; b[i] = 0x22 }
            return body(UnsafeRawBufferPointer(rebasing: b[i...]))
        }
    }

    /// "00", "01", … "99": the digits of every number below 100.
    @usableFromInline static var digitPairs: StaticString { """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """ }
    public mutating func double(_ v: Double) {
        if v.isFinite {
            if v == v.rounded(), abs(v) < 1e15 { bytes.append(contentsOf: String(Int64(v)).utf8) }
            else { bytes.append(contentsOf: String(v).utf8) }
        } else { raw("null") }
    }

    public mutating func string(_ s: String) {
        // Native strings (small ones included) expose their UTF-8 in place; others are copied.
        let done: Void? = s.utf8.withContiguousStorageIfAvailable { string(utf8: UnsafeRawBufferPointer($0)) }
        if done == nil {
            var s = s
            s.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes a JSON string from raw bytes that may not be valid UTF-8. Runs of bytes that need
    /// no escaping are copied in bulk.
    public mutating func string(utf8 raw: UnsafeRawBufferPointer) {
        let p = raw.bindMemory(to: UInt8.self)
        if Self.isPlain(raw) {
            // The usual case: nothing to escape or check, the bytes are copied whole.
            bytes.append(0x22)
            bytes.append(contentsOf: p)
            bytes.append(0x22)
            return
        }
        bytes.append(0x22)
        var i = 0
        var runStart = 0
        let n = p.count
        @inline(__always) func flush(_ upTo: Int) {
            if upTo > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<upTo])) }
        }
        while i < n {
            // Eight bytes at a time while none needs a look (< 0x20, >= 0x80, '"' or '\\').
            while i + 8 <= n && !Self.needsLook(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
            guard i < n else { break }
            let b = p[i]
            if b >= 0x20 && b < 0x80 && b != 0x22 && b != 0x5C {
                i += 1
                continue
            }
            if b >= 0x80 {
                let len = Self.validSequenceLength(raw, i)
                if len > 0 { i += len; continue }
                flush(i)
                bytes.append(contentsOf: [0xEF, 0xBF, 0xBD])  // U+FFFD
                i += 1
                runStart = i
                continue
            }
            flush(i)
            switch b {
            case 0x22: bytes.append(0x5C); bytes.append(0x22)
            case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
            case 0x0A: bytes.append(0x5C); bytes.append(0x6E)
            case 0x0D: bytes.append(0x5C); bytes.append(0x72)
            case 0x09: bytes.append(0x5C); bytes.append(0x74)
            case 0x08: bytes.append(0x5C); bytes.append(0x62)
            case 0x0C: bytes.append(0x5C); bytes.append(0x66)
            default:
                bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, Self.hex[Int(b >> 4)], Self.hex[Int(b & 0xF)]])
            }
            i += 1
            runStart = i
        }
        flush(n)
        bytes.append(0x22)
    }

    /// True when no byte of `raw` needs a look (see `needsLook`): eight bytes at a time, the
    /// last word overlapping the one before or padded with spaces.
    @inlinable @inline(__always) public static func isPlain(_ raw: UnsafeRawBufferPointer) -> Bool {
        let n = raw.count
        var i = 0
        while i + 8 <= n {
            if needsLook(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { return false }
            i += 8
        }
        guard i < n else { return true }
        if n >= 8 { return !needsLook(raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)) }
        var w: UInt64 = 0x2020_2020_2020_2020
        withUnsafeMutableBytes(of: &w) { $0.copyMemory(from: raw) }
        return !needsLook(w)
    }

    /// True when any of the eight bytes of `w` is below 0x20, at or above 0x80, '"' or '\\'
    /// (exact: the zero-byte tests below have no false negatives and no false positives).
    @inlinable @inline(__always) static func needsLook(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = w ^ (ones &* 0x22)
        let slash = w ^ (ones &* 0x5C)
        let control = (w &- ones &* 0x20) & ~w
        let q = (quote &- ones) & ~quote
        let s = (slash &- ones) & ~slash
        return ((w | control | q | s) & high) != 0
    }

    /// Length of the well-formed UTF-8 sequence starting at i (lead byte >= 0x80), or 0.
    @usableFromInline static func validSequenceLength(_ p: UnsafeRawBufferPointer, _ i: Int) -> Int {
        let n = p.count
        let b0 = p[i]
        func cont(_ k: Int) -> Bool { i + k < n && p[i + k] & 0xC0 == 0x80 }
        switch b0 {
        case 0xC2...0xDF: return cont(1) ? 2 : 0
        case 0xE0:
            return i + 2 < n && (0xA0...0xBF).contains(p[i + 1]) && cont(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF: return cont(1) && cont(2) ? 3 : 0
        case 0xED:
            return i + 2 < n && (0x80...0x9F).contains(p[i + 1]) && cont(2) ? 3 : 0
        case 0xF0:
            return i + 3 < n && (0x90...0xBF).contains(p[i + 1]) && cont(2) && cont(3) ? 4 : 0
        case 0xF1...0xF3: return cont(1) && cont(2) && cont(3) ? 4 : 0
        case 0xF4:
            return i + 3 < n && (0x80...0x8F).contains(p[i + 1]) && cont(2) && cont(3) ? 4 : 0
        default: return 0
        }
    }

    public mutating func json(_ v: JSONValue) {
        switch v {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let a):
            byte(0x5B)
            for (k, e) in a.enumerated() { if k > 0 { byte(0x2C) }; json(e) }
            byte(0x5D)
        case .object(let o):
            byte(0x7B)
            for (k, (key, e)) in o.enumerated() {
                if k > 0 { byte(0x2C) }
                string(key); byte(0x3A); json(e)
            }
            byte(0x7D)
        }
    }

    /// One error in the response format: {"message","locations","path","extensions"}.
    public mutating func error(_ e: GraphQLError) {
        raw("{\"message\":"); string(e.message)
        if !e.locations.isEmpty {
            raw(",\"locations\":[")
            for (k, l) in e.locations.enumerated() {
                if k > 0 { byte(0x2C) }
                raw("{\"line\":"); int(l.line); raw(",\"column\":"); int(l.column); byte(0x7D)
            }
            byte(0x5D)
        }
        if let path = e.path {
            raw(",\"path\":[")
            for (k, c) in path.enumerated() {
                if k > 0 { byte(0x2C) }
                switch c {
                case .key(let s): string(s)
                case .index(let i): int(i)
                }
            }
            byte(0x5D)
        }
        if !e.extensions.isEmpty {
            raw(",\"extensions\":{")
            for (k, (key, v)) in e.extensions.sorted(by: { $0.key < $1.key }).enumerated() {
                if k > 0 { byte(0x2C) }
                string(key); byte(0x3A)
                switch v {
                case .string(let s): string(s)
                case .int(let i): int(i)
                }
            }
            byte(0x7D)
        }
        byte(0x7D)
    }

    public mutating func errors(_ list: [GraphQLError]) {
        byte(0x5B)
        for (k, e) in list.enumerated() { if k > 0 { byte(0x2C) }; error(e) }
        byte(0x5D)
    }

    /// `{"errors":[...]}` — the response for a request that failed before execution.
    public static func requestErrorResponse(_ list: [GraphQLError]) -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\"errors\":"); w.errors(list); w.byte(0x7D)
        return w.bytes
    }
}
