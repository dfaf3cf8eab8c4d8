import Schema

/// Shared, immutable front half of the engine: schema, limits; parses and validates requests.
/// Safe to use from any thread.
public final class QueryService: Sendable {
    public let schema: GraphQLSchema
    public let options: EngineOptions

    public init(schema: GraphQLSchema, options: EngineOptions = EngineOptions()) {
        self.schema = schema; self.options = options
    }

    /// Parses, validates and coerces variables. Never touches the database.
    public func prepare(_ request: GraphQLRequest) -> PreparedRequest {
        .failed(.requestErrors([GraphQLError("engine not implemented yet")]))
    }
}

/// One SQLite connection with its statement cache, used by one thread at a time.
public final class CatalogSession {
    public let service: QueryService
    public let path: String

    /// Opens the catalog; throws CatalogError naming the file and what is missing.
    public init(path: String, service: QueryService, readOnly: Bool = true) throws {
        self.path = path; self.service = service
    }

    /// Executes a prepared query (or one event of a subscription: the subscription's
    /// selection set over the current snapshot) in one read transaction.
    public func execute(_ operation: PreparedOperation) -> ExecutionResult {
        .requestErrors([GraphQLError("engine not implemented yet")])
    }

    /// `PRAGMA data_version`: changes whenever another connection commits.
    public func dataVersion() throws -> Int64 { 0 }

    /// The current CatalogVersion (greatest versionid row).
    public func catalogVersion() throws -> CatalogVersionValue { CatalogVersionValue(version: 0, catalogRow: nil, assetRow: nil) }
}
