import Resolvers
import Schema

/// What graphql-ws says about client JSON (which `JSONParser` reads).
public enum JSONInput {
    /// The type name graphql-ws uses in its messages (`extendedTypeof`).
    public static func typeName(_ v: JSONValue?) -> String {
        guard let v else { return "undefined" }
        switch v {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}
