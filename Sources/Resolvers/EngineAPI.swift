import Schema

// The engine's public surface, used by the CLI and by the Gateway.
//
// Threading: `QueryService` is immutable and shared by every thread (schema, limits, parse cache).
// `CatalogSession` owns one SQLite connection and its statement cache; it is used by one thread
// at a time and never shared concurrently.

/// One GraphQL request as received over any transport.
public struct GraphQLRequest: Sendable {
    public var query: String
    /// The `variables` member as received: nil when absent; must be an object or null.
    public var variables: JSONValue?
    public var operationName: String?

    public init(query: String, variables: JSONValue? = nil, operationName: String? = nil) {
        self.query = query; self.variables = variables; self.operationName = operationName
    }
}

/// A complete response object, serialised: `{"data":...}` and/or `"errors":[...]`.
public struct ExecutionResult: Sendable {
    public let json: [UInt8]
    public let errors: [GraphQLError]
    /// False when the request failed before execution (parse, validation, variables, limits):
    /// the response has no `data` member.
    public let hasData: Bool

    public init(json: [UInt8], errors: [GraphQLError], hasData: Bool) {
        self.json = json; self.errors = errors; self.hasData = hasData
    }

    public static func requestErrors(_ errors: [GraphQLError]) -> ExecutionResult {
        ExecutionResult(json: JSONWriter.requestErrorResponse(errors), errors: errors, hasData: false)
    }
}

/// The latest row of the `version` table, as CatalogVersion serves it.
public struct CatalogVersionValue: Hashable, Sendable {
    public var version: Int
    public var catalogRow: Int?
    public var assetRow: Int?
    public init(version: Int, catalogRow: Int?, assetRow: Int?) {
        self.version = version; self.catalogRow = catalogRow; self.assetRow = assetRow
    }
}
