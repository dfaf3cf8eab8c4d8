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

    /// For a catalogChanges execution: the `version` of the change set answered (the version a
    /// subscriber holds after it); nil otherwise.
    public var changeSetVersion: Int?
    /// For a request that failed before execution: true when the document itself is refused
    /// (parse, validation, operation selection, limits) — over graphql-transport-ws an `error`
    /// message; false when a valid document cannot run — its variables do not coerce, or it is a
    /// mutation — a `next` with the errors, then `complete` (SEMANTICS.md: "the `error` message is
    /// only for documents that fail to parse or validate"; graphql-ws does the same with
    /// execute's errors).
    public var documentRefused = true

    public init(json: [UInt8], errors: [GraphQLError], hasData: Bool, changeSetVersion: Int? = nil) {
        self.json = json; self.errors = errors; self.hasData = hasData; self.changeSetVersion = changeSetVersion
    }

    /// An execution that failed as a whole: `{"errors":[...],"data":null}`.
    static func failedExecution(_ errors: [GraphQLError]) -> ExecutionResult {
        var w = JSONWriter(capacity: 256)
        w.raw("{\"errors\":"); w.errors(errors); w.raw(",\"data\":null}")
        return ExecutionResult(json: w.bytes, errors: errors, hasData: true)
    }

    public static func requestErrors(_ errors: [GraphQLError], documentRefused: Bool = true) -> ExecutionResult {
        var r = ExecutionResult(json: JSONWriter.requestErrorResponse(errors), errors: errors, hasData: false)
        r.documentRefused = documentRefused
        return r
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

/// Limits and switches of the engine, each with a documented default and CLI flag.
public struct EngineOptions: Sendable {
    /// --max-document-bytes: largest accepted query text.
    public var maxDocumentBytes = 64 * 1024
    /// --max-depth: deepest selection nesting.
    public var maxDepth = 15
    /// --max-nodes: GitHub-style node limit (products of `first` along nested connections).
    public var maxNodes = 100_000
    /// Busy timeout for SQLite (ms) when a writer holds a lock.
    public var busyTimeoutMs: Int32 = 5_000
    /// --max-execution-ms: how long one query's SQL may run before it is stopped (its fields
    /// get EXECUTION_TIMEOUT errors); 0: no limit. Subscription events are not limited (a
    /// change set must be whole). A query whose client went away is stopped the same way.
    public var maxExecutionMs = 5_000
    /// --max-response-bytes: about how large one query's answer may grow (RESPONSE_TOO_LARGE).
    public var maxResponseBytes = 32 << 20
    /// --page-cache-mb: SQLite page cache per catalog connection (each worker, the watcher),
    /// in KiB. Filled only as pages are read, so a small catalog never uses more than its size.
    public var pageCacheKiB = 64 * 1024
    /// Product.kit and Product.specs selecting only their scalar fields, Product.manufacturer
    /// selecting only name and logo, and Product.images, are written as JSON by the resolver, one
    /// value per product (CatalogResolver.leafList, imagesJSON); so are whole products of a
    /// connection's `nodes` that select only those and scalars (nodesJSON). Off: every item is
    /// an object of its own level or a value of its own list, as any other list (tests and
    /// FuzzExecute compare the two).
    public var serializeLeafLists = true
    /// Each session keeps the spec template labels it has read for the current snapshot
    /// (SpecTemplateCache, dropped at the next commit). Off: every execution reads the templates
    /// its products need (tests compare the two).
    public var cacheSpecTemplates = true
    /// Each session keeps the manufacturer logos it has read for the current snapshot
    /// (LogoCache, dropped at the next commit). Off: every execution reads the logos its
    /// manufacturers need (tests compare the two).
    public var cacheLogos = true
    public init() {}
}

/// A request that parsed, validated and had its variables coerced: ready to execute any number
/// of times (a subscription executes it once per catalog version).
public final class PreparedOperation: Sendable {
    public let document: Document
    public let operation: OperationDefinition
    public let variables: [String: JSONValue]
    public var kind: OperationType { operation.operation }
    /// Identifies (document text, operation name, coerced variables): equal keys give equal
    /// answers on the same snapshot, so subscribers with equal keys can share one computation.
    public let cacheKey: String
    /// Set for `subscription { catalogChanges(sinceVersion:) }`: each subscriber is answered
    /// from the last version it received, not from the cohort's.
    public let changeFeed: ChangeFeed?

    public struct ChangeFeed: Sendable, Equatable {
        /// The sinceVersion argument, when given: the first set is (since, current] at once.
        public let since: Int?
    }

    public init(document: Document, operation: OperationDefinition, variables: [String: JSONValue], cacheKey: String,
                changeFeed: ChangeFeed? = nil) {
        self.document = document; self.operation = operation; self.variables = variables; self.cacheKey = cacheKey
        self.changeFeed = changeFeed
    }
}

public enum PreparedRequest: Sendable {
    /// Parse, validation, variable or limit errors: the response (no `data`) is ready to send.
    /// Over graphql-transport-ws an `error` message carrying `errors`, except for variables
    /// (`ExecutionResult.documentRefused`).
    case failed(ExecutionResult)
    case ready(PreparedOperation)
}
