#if canImport(Glibc)
import Glibc
#endif

/// The members of a graphql-transport-ws message that the load generator acts on, found by
/// walking the top-level object only: nested values are skipped (strings with memchr), never
/// decoded, so a 100 KB `next` costs a scan, not a parse.
struct ScannedMessage {
    var type: MessageType = .other
    /// The `id` string's bytes (no escapes expected: the load generator chose it).
    var id: Int = -1
    /// The `payload` value's byte range within the message, when `wantPayload` asked for it.
    var payload: Range<Int>?
}

enum MessageType {
    /// `data` (graphql-ws) is a `next`, `ka` an `other`; `connectionError` is graphql-ws's refusal
    /// of `connection_init`.
    case connectionAck, next, complete, error, ping, pong, connectionError, other
}

enum MessageScan {
    /// Scans one message. Stops as soon as type and id (and the payload, when wanted) are known.
    /// Returns nil when the text is not a JSON object.
    static func scan(_ p: UnsafePointer<UInt8>, _ n: Int, wantPayload: Bool) -> ScannedMessage? {
        var m = ScannedMessage()
        var haveType = false, haveID = false
        var i = skipSpace(p, 0, n)
        guard i < n, p[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        while true {
            i = skipSpace(p, i, n)
            guard i < n else { return nil }
            if p[i] == UInt8(ascii: "}") { return m }
            guard p[i] == UInt8(ascii: "\"") else { return nil }
            let keyStart = i + 1
            guard let keyEnd = stringEnd(p, i, n) else { return nil }
            let key = UnsafeRawBufferPointer(start: p + keyStart, count: keyEnd - 1 - keyStart)
            i = skipSpace(p, keyEnd, n)
            guard i < n, p[i] == UInt8(ascii: ":") else { return nil }
            i = skipSpace(p, i + 1, n)
            guard i < n else { return nil }
            let valueStart = i
            guard let valueEnd = skipValue(p, i, n) else { return nil }
            if equals(key, "type"), p[valueStart] == UInt8(ascii: "\"") {
                m.type = messageType(UnsafeRawBufferPointer(start: p + valueStart + 1, count: valueEnd - valueStart - 2))
                haveType = true
            } else if equals(key, "id"), p[valueStart] == UInt8(ascii: "\"") {
                m.id = decimal(p, valueStart + 1, valueEnd - 1)
                haveID = true
            } else if equals(key, "payload") {
                m.payload = valueStart..<valueEnd
            }
            if haveType && (haveID || m.type == .connectionAck || m.type == .ping || m.type == .pong || m.type == .connectionError)
                && (!wantPayload || m.payload != nil || m.type != .next) {
                return m
            }
            i = skipSpace(p, valueEnd, n)
            guard i < n else { return nil }
            if p[i] == UInt8(ascii: ",") { i += 1; continue }
            if p[i] == UInt8(ascii: "}") { return m }
            return nil
        }
    }

    /// True when the object at `range` has a top-level member named `name` (e.g. "errors").
    static func hasMember(_ p: UnsafePointer<UInt8>, _ range: Range<Int>, _ name: String) -> Bool {
        let n = range.upperBound
        var i = skipSpace(p, range.lowerBound, n)
        guard i < n, p[i] == UInt8(ascii: "{") else { return false }
        i += 1
        while true {
            i = skipSpace(p, i, n)
            guard i < n, p[i] == UInt8(ascii: "\""), let keyEnd = stringEnd(p, i, n) else { return false }
            if equalsString(UnsafeRawBufferPointer(start: p + i + 1, count: keyEnd - i - 2), name) { return true }
            i = skipSpace(p, keyEnd, n)
            guard i < n, p[i] == UInt8(ascii: ":") else { return false }
            i = skipSpace(p, i + 1, n)
            guard let end = skipValue(p, i, n) else { return false }
            i = skipSpace(p, end, n)
            guard i < n, p[i] == UInt8(ascii: ",") else { return false }
            i += 1
        }
    }

    /// The integer after the first `"key":` inside `range` (for `{"version":42}`-like payloads).
    static func integer(after key: String, _ p: UnsafePointer<UInt8>, _ range: Range<Int>) -> Int? {
        let needle = Array("\"\(key)\":".utf8)
        var i = range.lowerBound
        while i + needle.count <= range.upperBound {
            if p[i] == needle[0] && memcmp(p + i, needle, needle.count) == 0 {
                var j = skipSpace(p, i + needle.count, range.upperBound)
                var negative = false
                if j < range.upperBound && p[j] == UInt8(ascii: "-") { negative = true; j += 1 }
                var v = 0, digits = 0
                while j < range.upperBound, p[j] >= 48, p[j] <= 57 { v = v * 10 + Int(p[j] - 48); j += 1; digits += 1 }
                return digits > 0 ? (negative ? -v : v) : nil
            }
            i += 1
        }
        return nil
    }

    // MARK: Helpers

    @inline(__always)
    static func skipSpace(_ p: UnsafePointer<UInt8>, _ i: Int, _ n: Int) -> Int {
        var i = i
        while i < n, p[i] == 32 || p[i] == 10 || p[i] == 13 || p[i] == 9 { i += 1 }
        return i
    }

    /// `i` at an opening quote; returns the index after the closing quote.
    @inline(__always)
    static func stringEnd(_ p: UnsafePointer<UInt8>, _ i: Int, _ n: Int) -> Int? {
        var j = i + 1
        while j < n {
            guard let q = memchr(p + j, 0x22, n - j) else { return nil }
            let k = UnsafeRawPointer(q) - UnsafeRawPointer(p)
            var backslashes = 0
            var b = k - 1
            while b > i, p[b] == 0x5C { backslashes += 1; b -= 1 }
            if backslashes % 2 == 0 { return k + 1 }
            j = k + 1
        }
        return nil
    }

    /// Returns the index after the value starting at `i`.
    static func skipValue(_ p: UnsafePointer<UInt8>, _ i: Int, _ n: Int) -> Int? {
        switch p[i] {
        case 0x22:
            return stringEnd(p, i, n)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var j = i
            while j < n {
                let c = p[j]
                if c == 0x22 {
                    guard let e = stringEnd(p, j, n) else { return nil }
                    j = e
                    continue
                }
                if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") { depth += 1 }
                else if c == UInt8(ascii: "}") || c == UInt8(ascii: "]") {
                    depth -= 1
                    if depth == 0 { return j + 1 }
                }
                j += 1
            }
            return nil
        default:
            var j = i
            while j < n {
                let c = p[j]
                if c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == UInt8(ascii: "]") || c == 32 || c == 10 || c == 13 || c == 9 { break }
                j += 1
            }
            return j
        }
    }

    @inline(__always)
    static func equals(_ b: UnsafeRawBufferPointer, _ s: StaticString) -> Bool {
        b.count == s.utf8CodeUnitCount && (b.count == 0 || memcmp(b.baseAddress!, s.utf8Start, b.count) == 0)
    }

    static func equalsString(_ b: UnsafeRawBufferPointer, _ s: String) -> Bool {
        var s = s
        return s.withUTF8 { u in b.count == u.count && (b.count == 0 || memcmp(b.baseAddress!, u.baseAddress!, b.count) == 0) }
    }

    static func messageType(_ b: UnsafeRawBufferPointer) -> MessageType {
        if equals(b, "next") || equals(b, "data") { return .next }
        if equals(b, "complete") { return .complete }
        if equals(b, "connection_ack") { return .connectionAck }
        if equals(b, "error") { return .error }
        if equals(b, "ping") { return .ping }
        if equals(b, "pong") { return .pong }
        if equals(b, "connection_error") { return .connectionError }
        return .other
    }

    /// A non-negative decimal in [from, to), or -1.
    static func decimal(_ p: UnsafePointer<UInt8>, _ from: Int, _ to: Int) -> Int {
        guard to > from, to - from <= 18 else { return -1 }
        var v = 0
        for j in from..<to {
            let c = p[j]
            guard c >= 48, c <= 57 else { return -1 }
            v = v * 10 + Int(c - 48)
        }
        return v
    }
}
