/// A JSON value as received from a client (variables, protocol payloads).
/// Object member order is kept as received.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self {
            for (k, v) in members where k == key { return v }
        }
        return nil
    }

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x == y
        case (.int(let x), .double(let y)), (.double(let y), .int(let x)): return Double(x) == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            for (k, v) in x { guard let w = b[k], w == v else { return false } }
            return true
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .int(let i): hasher.combine(Double(i))
        case .double(let d): hasher.combine(d)
        case .string(let s): hasher.combine(s)
        case .array(let a): hasher.combine(a)
        case .object(let o):
            hasher.combine(o.count)
            for (k, v) in o.sorted(by: { $0.0 < $1.0 }) { hasher.combine(k); hasher.combine(v) }
        }
    }

    /// Stricter than `==`, which compares objects as maps and an int with an equal double: the
    /// same cases, strings and keys of the same bytes, members in the same order, doubles of
    /// the same bits. What two readings of one JSON text must agree on (`PlainJSON`, jansson).
    public func isIdentical(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { $0.isIdentical(to: $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0.utf8.elementsEqual($1.0.utf8) && $0.1.isIdentical(to: $1.1) }
        default: return false
        }
    }
}
