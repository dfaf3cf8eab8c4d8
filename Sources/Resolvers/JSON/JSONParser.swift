import CJansson
import Schema

/// Why a JSON text was rejected, with jansson's position.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int
    public init(message: String, line: Int, column: Int) {
        self.message = message; self.line = line; self.column = column
    }
    /// The message, then where jansson stopped (line 0: found after parsing, no position).
    public var description: String { line == 0 ? message : "\(message) (line \(line), column \(column))" }
}

/// Owns one jansson value (json_t*) and releases it in `deinit`; never shared across threads.
final class JanssonValue {
    let raw: UnsafeMutablePointer<json_t>

    /// Parses any JSON value; NUL characters in strings are allowed (`\u0000`). `extraFlags`:
    /// more of jansson's decoding flags (JSON_REJECT_DUPLICATES for `import`);
    /// `bigIntegersAsReals`: see below (`import` refuses them instead).
    init(parsing bytes: UnsafeRawBufferPointer, extraFlags: Int32 = 0, bigIntegersAsReals: Bool = true) throws(JSONParseError) {
        var err = json_error_t()
        let flags = Int(JSON_DECODE_ANY | JSON_ALLOW_NUL | extraFlags)
        guard let p = bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count > 0 else {
            throw JSONParseError(message: "empty input, a JSON value was expected", line: 1, column: 0)
        }
        // An integer beyond 64 bits is valid JSON (RFC 8259 sets no limit) but jansson refuses
        // it: the text is read again with every number as a double, as JavaScript (graphql-js,
        // graphql-ws) reads JSON — an Int or ID argument then gets the usual coercion error, or
        // finds nothing, instead of the whole message being invalid (which closed the socket).
        var v = json_loadb(p, bytes.count, flags, &err)
        if v == nil, bigIntegersAsReals, err.position > 0, Self.errorText(&err).hasPrefix("too big") {
            v = json_loadb(p, bytes.count, flags | Int(JSON_DECODE_INT_AS_REAL), &err)
        }
        guard let v else {
            throw JSONParseError(message: Self.errorText(&err), line: Int(err.line), column: Int(err.column))
        }
        raw = v
    }

    private static func errorText(_ err: inout json_error_t) -> String {
        withUnsafeBytes(of: &err.text) { buf -> String in
            let chars = buf.bindMemory(to: UInt8.self)
            let n = chars.firstIndex(of: 0) ?? chars.count
            return String(decoding: chars[0..<n], as: UTF8.self)
        }
    }

    deinit { cg_json_decref(raw) }

    /// Converts to the Schema's JSONValue, keeping object member order.
    func value(maxDepth: Int = JSONParser.maxDepth) throws(JSONParseError) -> JSONValue {
        try Self.convert(raw, depth: 0, maxDepth: maxDepth)
    }

    private static func tooDeep(_ maxDepth: Int) -> JSONParseError {
        JSONParseError(message: "JSON nesting too deep (more than \(maxDepth) levels of arrays and objects)", line: 0, column: 0)
    }

    private static func string(_ j: UnsafeMutablePointer<json_t>) -> String {
        let n = json_string_length(j)
        guard let p = json_string_value(j) else { return "" }
        return p.withMemoryRebound(to: UInt8.self, capacity: n) {
            String(decoding: UnsafeBufferPointer(start: $0, count: n), as: UTF8.self)
        }
    }

    private static func convert(_ j: UnsafeMutablePointer<json_t>, depth: Int, maxDepth: Int) throws(JSONParseError) -> JSONValue {
        switch json_type(rawValue: UInt32(cg_json_typeof(j))) {
        case JSON_OBJECT:
            guard depth < maxDepth else { throw tooDeep(maxDepth) }
            var members: [(String, JSONValue)] = []
            members.reserveCapacity(json_object_size(j))
            var it = json_object_iter(j)
            while let i = it {
                let klen = json_object_iter_key_len(i)
                let key = json_object_iter_key(i).map { p in
                    p.withMemoryRebound(to: UInt8.self, capacity: klen) {
                        String(decoding: UnsafeBufferPointer(start: $0, count: klen), as: UTF8.self)
                    }
                } ?? ""
                if let v = json_object_iter_value(i) {
                    members.append((key, try convert(v, depth: depth + 1, maxDepth: maxDepth)))
                }
                it = json_object_iter_next(j, i)
            }
            return .object(members)
        case JSON_ARRAY:
            guard depth < maxDepth else { throw tooDeep(maxDepth) }
            let n = json_array_size(j)
            var items: [JSONValue] = []
            items.reserveCapacity(n)
            for k in 0..<n {
                if let v = json_array_get(j, k) { items.append(try convert(v, depth: depth + 1, maxDepth: maxDepth)) }
            }
            return .array(items)
        case JSON_STRING: return .string(string(j))
        case JSON_INTEGER: return .int(Int64(json_integer_value(j)))
        case JSON_REAL: return .double(json_real_value(j))
        case JSON_TRUE: return .bool(true)
        case JSON_FALSE: return .bool(false)
        default: return .null
        }
    }
}

/// Parses JSON text (any top-level value) with jansson: client messages, HTTP bodies and
/// parameters, `--variables`, `import` records — one reading of JSON for all of them.
public enum JSONParser {
    /// Arrays and objects nested deeper than this are refused (the conversion recurses).
    public static let maxDepth = 512

    /// Plain text (`PlainJSON`: what clients send almost always) is read in Swift; anything
    /// else, and every error, by jansson.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        if let plain = PlainJSON.parse(bytes) { return plain }
        return try JanssonValue(parsing: bytes).value()
    }

    /// jansson's reading alone, without the fast path: the reference `PlainJSON` is checked
    /// against (tests, FuzzPlainJSON).
    public static func parseWithJansson(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        try JanssonValue(parsing: bytes).value()
    }

    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        do {
            return try bytes.withUnsafeBytes { (b: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue in try parse(b) }
        } catch let e as JSONParseError {
            throw e
        } catch {
            throw JSONParseError(message: "\(error)", line: 0, column: 0)
        }
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}

/// The fast path of `JSONParser`: JSON text in the subset clients send almost always, read
/// straight into a `JSONValue` in one pass. jansson reads a text a character at a time through
/// its stream functions, about 130 instructions a byte: 75,000 per graphql-transport-ws
/// `subscribe` of the benchmark's category page (callgrind, stop 43), on the service thread,
/// ahead of every operation.
///
/// Returns nil — and `JSONParser` hands the text to jansson, which gives the answer or the error
/// — for anything outside the subset: a byte outside printable ASCII in a string (so no UTF-8
/// to validate here), a `\u` escape, a number other than an integer of at most 18 digits, an
/// object with a repeated key or more than 32 members, nesting deeper than 64, and every text
/// that is not valid JSON. Within the subset the value is the one jansson's reading converts to
/// (`PlainJSONTests` and the FuzzPlainJSON target compare the two).
public enum PlainJSON {
    static let maxDepth = 64
    static let maxMembers = 32

    public static func parse(_ bytes: UnsafeRawBufferPointer) -> JSONValue? {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return nil }
        var r = Reader(p: base.assumingMemoryBound(to: UInt8.self), n: bytes.count)
        guard let v = r.value(depth: 0) else { return nil }
        r.skipSpace()
        return r.i == r.n ? v : nil
    }

    struct Reader {
        let p: UnsafePointer<UInt8>
        let n: Int
        var i = 0

        @inline(__always)
        mutating func skipSpace() {
            while i < n {
                let c = p[i]
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
                i += 1
            }
        }

        mutating func value(depth: Int) -> JSONValue? {
            skipSpace()
            guard i < n else { return nil }
            switch p[i] {
            case UInt8(ascii: "{"): return object(depth: depth + 1)
            case UInt8(ascii: "["): return array(depth: depth + 1)
            case UInt8(ascii: "\""): return string().map { .string($0) }
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
            default: return nil
            }
        }

        mutating func object(depth: Int) -> JSONValue? {
            guard depth <= PlainJSON.maxDepth else { return nil }
            i += 1
            skipSpace()
            var members: [(String, JSONValue)] = []
            if i < n && p[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            while true {
                guard i < n, p[i] == UInt8(ascii: "\""), let key = string() else { return nil }
                skipSpace()
                guard i < n, p[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                guard let v = value(depth: depth), members.count < PlainJSON.maxMembers else { return nil }
                for (k, _) in members where k == key { return nil }
                members.append((key, v))
                skipSpace()
                guard i < n else { return nil }
                if p[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
                guard p[i] == UInt8(ascii: ",") else { return nil }
                i += 1
                skipSpace()
            }
        }

        mutating func array(depth: Int) -> JSONValue? {
            guard depth <= PlainJSON.maxDepth else { return nil }
            i += 1
            skipSpace()
            var items: [JSONValue] = []
            if i < n && p[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                guard let v = value(depth: depth) else { return nil }
                items.append(v)
                skipSpace()
                guard i < n else { return nil }
                if p[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                guard p[i] == UInt8(ascii: ",") else { return nil }
                i += 1
            }
        }

        /// At an opening quote: the string, printable ASCII with the short escapes. Runs between
        /// escapes are copied whole.
        mutating func string() -> String? {
            let start = i + 1
            var j = start
            var run = start
            var decoded: [UInt8] = []
            var escaped = false
            while j < n {
                // Eight bytes at a time while none of them ends the run: no quote, no backslash,
                // nothing below 0x20 or from 0x7F (each test is exact as "any byte", not per byte).
                while n - j >= 8 {
                    let w = UnsafeRawPointer(p + j).loadUnaligned(as: UInt64.self)
                    let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                    let quote = w ^ 0x2222_2222_2222_2222, backslash = w ^ 0x5C5C_5C5C_5C5C_5C5C, del = w ^ 0x7F7F_7F7F_7F7F_7F7F
                    let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((del &- ones) & ~del)
                        | ((w &- 0x2020_2020_2020_2020) & ~w) | w
                    if special & highs != 0 { break }
                    j += 8
                }
                guard j < n else { break }
                let c = p[j]
                if c == UInt8(ascii: "\"") {
                    i = j + 1
                    guard escaped else {
                        return String(decoding: UnsafeBufferPointer(start: p + start, count: j - start), as: UTF8.self)
                    }
                    decoded.append(contentsOf: UnsafeBufferPointer(start: p + run, count: j - run))
                    return String(decoding: decoded, as: UTF8.self)
                }
                if c == UInt8(ascii: "\\") {
                    guard j + 1 < n else { return nil }
                    let e: UInt8
                    switch p[j + 1] {
                    case UInt8(ascii: "\""): e = 0x22
                    case UInt8(ascii: "\\"): e = 0x5C
                    case UInt8(ascii: "/"): e = 0x2F
                    case UInt8(ascii: "b"): e = 0x08
                    case UInt8(ascii: "f"): e = 0x0C
                    case UInt8(ascii: "n"): e = 0x0A
                    case UInt8(ascii: "r"): e = 0x0D
                    case UInt8(ascii: "t"): e = 0x09
                    default: return nil  // \u, or not an escape
                    }
                    if !escaped {
                        escaped = true
                        decoded.reserveCapacity(j - start + 256)
                    }
                    decoded.append(contentsOf: UnsafeBufferPointer(start: p + run, count: j - run))
                    decoded.append(e)
                    j += 2
                    run = j
                    continue
                }
                guard c >= 0x20 && c < 0x7F else { return nil }
                j += 1
            }
            return nil
        }

        mutating func literal(_ word: StaticString, _ v: JSONValue) -> JSONValue? {
            let w = word.utf8Start, k = word.utf8CodeUnitCount
            guard n - i >= k else { return nil }
            for d in 0..<k where p[i + d] != w[d] { return nil }
            i += k
            return v
        }

        /// -?(0|[1-9][0-9]*), at most 18 digits, not followed by a fraction or an exponent.
        mutating func integer() -> JSONValue? {
            var negative = false
            if p[i] == UInt8(ascii: "-") { negative = true; i += 1 }
            guard i < n, p[i] >= UInt8(ascii: "0"), p[i] <= UInt8(ascii: "9") else { return nil }
            var v: Int64 = 0
            var digits = 0
            if p[i] == UInt8(ascii: "0") {
                i += 1
                digits = 1
            } else {
                while i < n, p[i] >= UInt8(ascii: "0"), p[i] <= UInt8(ascii: "9") {
                    v = v &* 10 &+ Int64(p[i] &- UInt8(ascii: "0"))
                    digits += 1
                    i += 1
                }
            }
            guard digits <= 18 else { return nil }
            if i < n {
                let c = p[i]
                if c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
                    || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) { return nil }
            }
            return .int(negative ? -v : v)
        }
    }
}
