/// One element of a response path: a field's response key or a list index.
public enum PathComponent: Hashable, Sendable, CustomStringConvertible {
    case key(String)
    case index(Int)

    public var description: String {
        switch self {
        case .key(let k): return k
        case .index(let i): return String(i)
        }
    }
}

/// The one error type of the query language: message, locations, path and extensions,
/// serialised as the GraphQL spec's error format (graphql-js `GraphQLError`).
public struct GraphQLError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var locations: [SourceLocation]
    public var path: [PathComponent]?
    /// extensions.code and friends; values are strings or ints only.
    public var extensions: [String: ExtensionValue]

    public enum ExtensionValue: Hashable, Sendable {
        case string(String)
        case int(Int)
    }

    public init(
        _ message: String,
        locations: [SourceLocation] = [],
        path: [PathComponent]? = nil,
        extensions: [String: ExtensionValue] = [:]
    ) {
        self.message = message
        self.locations = locations
        self.path = path
        self.extensions = extensions
    }

    /// Convenience: an error at the given byte offsets of a source.
    public init(_ message: String, source: Source, offsets: [Int], code: String? = nil) {
        self.init(message, locations: offsets.map { source.location(of: $0) })
        if let code { extensions["code"] = .string(code) }
    }

    public var code: String? {
        if case .string(let c)? = extensions["code"] { return c }
        return nil
    }

    public var description: String {
        var s = message
        if let l = locations.first { s += " (\(l.line):\(l.column))" }
        return s
    }
}

/// Thrown by the parser: a syntax error is always a single error.
public struct GraphQLSyntaxError: Error, Sendable {
    public let error: GraphQLError
    public init(_ error: GraphQLError) { self.error = error }
}
