import CJansson
import Schema

/// A JSON text that jansson rejected: its message and position.
public struct JSONParseError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public let line: Int
    public let column: Int
    public let position: Int
    public var description: String { "invalid JSON at line \(line), column \(column): \(message)" }
}

/// Owns one jansson value and releases it in deinit.
final class JanssonValue {
    let pointer: UnsafeMutablePointer<json_t>
    init(_ pointer: UnsafeMutablePointer<json_t>) { self.pointer = pointer }
    deinit { cg_json_decref(pointer) }
}

/// Parses JSON text (any top-level value) into a JSONValue with jansson.
public enum JSONParser {
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        var error = json_error_t()
        let flags = JSON_DECODE_ANY | JSON_ALLOW_NUL
        let root: UnsafeMutablePointer<json_t>? = bytes.withUnsafeBufferPointer { p in
            p.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: p.count) { json_loadb($0, p.count, Int(flags), &error) }
            } ?? json_loadb("", 0, Int(flags), &error)
        }
        guard let root else {
            let message = withUnsafeBytes(of: error.text) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            throw JSONParseError(message: message, line: Int(error.line), column: Int(error.column),
                                 position: Int(error.position))
        }
        let owner = JanssonValue(root)
        return convert(owner.pointer)
    }

    /// Converts a jansson value (recursion bounded by jansson's own parser depth limit).
    static func convert(_ v: UnsafeMutablePointer<json_t>) -> JSONValue {
        switch json_type(rawValue: UInt32(cg_json_typeof(v))) {
        case JSON_OBJECT:
            var members: [(String, JSONValue)] = []
            var iter = json_object_iter(v)
            while let it = iter {
                let key = json_object_iter_key(it)
                let keyLength = json_object_iter_key_len(it)
                let name = key.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: keyLength), as: UTF8.self) } ?? ""
                if let value = json_object_iter_value(it) { members.append((name, convert(value))) }
                iter = json_object_iter_next(v, it)
            }
            return .object(members)
        case JSON_ARRAY:
            let n = json_array_size(v)
            var items: [JSONValue] = []
            items.reserveCapacity(n)
            for i in 0..<n { if let e = json_array_get(v, i) { items.append(convert(e)) } }
            return .array(items)
        case JSON_STRING:
            let n = json_string_length(v)
            guard let p = json_string_value(v) else { return .string("") }
            return .string(String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self))
        case JSON_INTEGER: return .int(Int64(json_integer_value(v)))
        case JSON_REAL: return .double(json_real_value(v))
        case JSON_TRUE: return .bool(true)
        case JSON_FALSE: return .bool(false)
        default: return .null
        }
    }
}
