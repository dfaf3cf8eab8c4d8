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

    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
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
