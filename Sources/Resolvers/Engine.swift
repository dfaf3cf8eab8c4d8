import CSQLite
import Schema
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Shared, immutable front half of the engine: schema and limits; parses and validates requests.
/// Safe to use from any thread.
public final class QueryService: Sendable {
    public let schema: GraphQLSchema
    public let options: EngineOptions

    /// Documents that parsed and validated, by (operation name, text): clients repeat the same
    /// few documents, so parse and validation run once per document, not once per request.
    private let documents = Mutex<[ExactString: CachedDocument]>([:])
    private static let maxCachedDocuments = 512
    /// And by their text: a parsed document takes ~20 times its text (600 distinct 56 KB
    /// documents held 700 MB), so at most this much text is kept (about 40 MB parsed).
    private static let maxCachedDocumentBytes = 2 << 20
    private let cachedDocumentBytes = Mutex(0)
    /// Documents kept and the bytes of their text (tests).
    var documentCacheUsage: (count: Int, bytes: Int) {
        documents.withLock { cache in cachedDocumentBytes.withLock { (cache.count, $0) } }
    }

    public init(schema: GraphQLSchema = CatalogSchema.shared, options: EngineOptions = EngineOptions()) {
        self.schema = schema; self.options = options
    }

    /// The hierarchy most recently read by a session whose file has intact change capture, with
    /// where it was read: sessions on the same file take it instead of each reading the table
    /// (`CatalogSession.loadHierarchy` checks it against its own snapshot). One copy for all
    /// workers: each read 225,000 categories of the 1M catalog on its first category query
    /// and kept its own copy.
    private let sharedHierarchy = Mutex<SharedHierarchy?>(nil)
    /// Held by the session reading the hierarchy table for sharing, so that the others wait and
    /// take its result instead of reading at the same time.
    let hierarchyReads = Mutex<Void>(())

    struct SharedHierarchy {
        let file: CatalogFileIdentity
        let schemaVersion: Int64
        /// cg_changes' last seq in the snapshot it was read in.
        let seq: Int64
        let hierarchy: Hierarchy
    }

    /// The file of the shared hierarchy, if one is shared (tests).
    var sharedHierarchyFile: CatalogFileIdentity? { sharedHierarchy.withLock { $0?.file } }

    /// The shared hierarchy of `file` at `schemaVersion`, if any.
    func sharedHierarchy(file: CatalogFileIdentity, schemaVersion: Int64) -> SharedHierarchy? {
        sharedHierarchy.withLock { shared in
            guard let shared, shared.file == file, shared.schemaVersion == schemaVersion else { return nil }
            return shared
        }
    }

    /// Drops the shared hierarchy unless it is of `file`: sessions moved to another file, and
    /// the one before may be deleted and its inode given to a later file, which nothing else
    /// would tell from it (a fresh catalog's schema version and empty change log match).
    func forgetSharedHierarchy(unlessOf file: CatalogFileIdentity) {
        sharedHierarchy.withLock { shared in
            if shared?.file != file { shared = nil }
        }
    }

    /// Offers a hierarchy just read; it replaces the shared one unless that one is of the same
    /// file and schema and at least as new.
    func share(_ offered: SharedHierarchy) {
        sharedHierarchy.withLock { shared in
            if let s = shared, s.file == offered.file, s.schemaVersion == offered.schemaVersion, s.seq >= offered.seq { return }
            shared = offered
        }
    }

    static func limitError(_ message: String, code: String, locations: [SourceLocation] = []) -> GraphQLError {
        GraphQLError(message, locations: locations, extensions: ["code": .string(code)])
    }

    /// Parses, validates, checks limits and coerces variables. Never touches the database.
    public func prepare(_ request: GraphQLRequest) -> PreparedRequest {
        let size = request.query.utf8.count
        let documentKey = ExactString((request.operationName ?? "") + "\u{0}" + request.query)
        if let cached = documents.withLock({ $0[documentKey] }) {
            return bind(request, cached)
        }
        if size > options.maxDocumentBytes {
            return .failed(.requestErrors([Self.limitError(
                "Document of \(size) bytes exceeds the limit of \(options.maxDocumentBytes) bytes.",
                code: "DOCUMENT_TOO_LARGE")]))
        }
        let document: Document
        do {
            document = try Parser.parse(Source(request.query))
        } catch {
            var e = error.error
            if e.extensions["code"] == nil { e.extensions["code"] = .string("GRAPHQL_PARSE_FAILED") }
            return .failed(.requestErrors([e]))
        }
        let validationErrors = validate(schema: schema, document: document)
        if !validationErrors.isEmpty {
            return .failed(.requestErrors(validationErrors.map { e in
                var e = e
                if e.extensions["code"] == nil { e.extensions["code"] = .string("GRAPHQL_VALIDATION_FAILED") }
                return e
            }))
        }
        let operations = document.operations
        let operation: OperationDefinition
        if let name = request.operationName {
            guard let op = operations.first(where: { $0.name?.value == name }) else {
                return .failed(.requestErrors([Self.limitError("Unknown operation named \"\(name)\".", code: "OPERATION_NOT_FOUND")]))
            }
            operation = op
        } else {
            guard let op = operations.first else {
                return .failed(.requestErrors([Self.limitError("Must provide an operation.", code: "OPERATION_NOT_FOUND")]))
            }
            guard operations.count == 1 else {
                return .failed(.requestErrors([Self.limitError(
                    "Must provide operation name if query contains multiple operations.", code: "OPERATION_NOT_FOUND")]))
            }
            operation = op
        }
        if schema.rootType(operation.operation) == nil {
            // The document is valid (graphql-js finds this at execution): over graphql-transport-ws
            // a `next` with the error, then `complete`, as graphql-ws sends it.
            return .failed(.requestErrors([Self.limitError(
                "Schema is not configured to execute \(operation.operation.rawValue) operation.",
                code: "OPERATION_NOT_SUPPORTED", locations: [document.location(operation.loc)])], documentRefused: false))
        }
        if let e = checkDepth(document: document, operation: operation, maxDepth: options.maxDepth) {
            return .failed(.requestErrors([e]))
        }
        // The node estimate, when no variable can change it, is made once here instead of per request.
        let fixedNodes = nodeEstimateVariables(document).isEmpty
            ? estimateNodes(schema: schema, document: document, operation: operation, variables: [:]) : nil
        let cached = CachedDocument(document: document, operation: operation, fixedNodes: fixedNodes)
        let keyBytes = documentKey.value.utf8.count
        documents.withLock { cache in
            cachedDocumentBytes.withLock { bytes in
                if cache.count >= Self.maxCachedDocuments || bytes + keyBytes > Self.maxCachedDocumentBytes {
                    cache.removeAll(keepingCapacity: true)
                    bytes = 0
                }
                if cache.updateValue(cached, forKey: documentKey) == nil { bytes += keyBytes }
            }
        }
        return bind(request, cached)
    }

    /// A parsed, validated document and the operation a request selects in it.
    struct CachedDocument {
        let document: Document
        let operation: OperationDefinition
        /// The node estimate when it does not depend on the variables (`nodeEstimateVariables`
        /// is empty); nil: estimated for each request's variables.
        let fixedNodes: Int?
    }

    /// Coerces the request's variables for a valid operation and checks the node limit.
    private func bind(_ request: GraphQLRequest, _ cached: CachedDocument) -> PreparedRequest {
        let document = cached.document, operation = cached.operation
        let size = request.query.utf8.count
        var inputs: [String: JSONValue] = [:]
        switch request.variables {
        case nil, .null?: break
        case .object(let members)?: for (k, v) in members { inputs[k] = v }
        case .some:
            return .failed(.requestErrors([Self.limitError(
                "Variables must be provided as an Object where each property is a variable value.",
                code: "BAD_USER_INPUT")], documentRefused: false))
        }
        let variables: [String: JSONValue]
        switch coerceVariableValues(schema: schema, operation: operation, inputs: inputs, document: document) {
        case .success(let v): variables = v
        case .failure(let failure):
            let errors = failure.errors
            return .failed(.requestErrors(errors.map { e in
                var e = e
                if e.extensions["code"] == nil { e.extensions["code"] = .string("BAD_USER_INPUT") }
                return e
            }, documentRefused: false))
        }
        let nodes = cached.fixedNodes
            ?? estimateNodes(schema: schema, document: document, operation: operation, variables: variables)
        if let e = nodeLimitError(nodes: nodes, maxNodes: options.maxNodes, document: document, operation: operation) {
            return .failed(.requestErrors([e]))
        }
        var key = JSONWriter(capacity: size + 64)
        key.raw(Array(request.query.utf8)); key.byte(0)
        key.raw(Array((request.operationName ?? "").utf8)); key.byte(0)
        key.json(.object(variables.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
        var feed: PreparedOperation.ChangeFeed?
        if operation.operation == .subscription, let root = schema.subscriptionType {
            let plan = Planner(schema: schema, document: document, variables: variables)
                .plan(typeName: root, selectionSets: [operation.selectionSet])
            // Validation counts the root fields without the variables, and takes `@skip(if: $v)`
            // as selecting its field; with them, @skip and @include may leave none, which the spec
            // (CreateSourceEventStream) makes a request error. A valid document: `next`, `complete`.
            guard plan.fields.count == 1 else {
                return .failed(.requestErrors([Self.limitError(
                    "Subscription operation must select exactly one root field; its @skip and @include directives leave \(plan.fields.count).",
                    code: "BAD_USER_INPUT", locations: [document.location(operation.loc)])], documentRefused: false))
            }
            if let field = plan.fields.first, field.name == "catalogChanges" {
                feed = PreparedOperation.ChangeFeed(since: field.int("sinceVersion"))
            }
        }
        return .ready(PreparedOperation(document: document, operation: operation, variables: variables,
                                        cacheKey: String(decoding: key.bytes, as: UTF8.self), changeFeed: feed))
    }
}

/// The file a path names now (device and inode): a catalog replaced by rename, or deleted and
/// made again, is another file under the same path.
public struct CatalogFileIdentity: Hashable, Sendable, CustomStringConvertible {
    public let device: UInt64
    public let inode: UInt64

    /// nil when nothing is at `path`.
    public init?(path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }

    public var description: String { "\(device):\(inode)" }
}

/// One SQLite connection with its statement cache, used by one thread at a time.
public final class CatalogSession {
    public let service: QueryService
    public let path: String
    public let readOnly: Bool
    /// The file this session reads (taken just before opening it, so a replacement racing the
    /// open shows as a difference later, never as a false match).
    public private(set) var file: CatalogFileIdentity?
    private(set) var db: Database
    private var layout: CatalogLayout
    /// The Product column sets this session has made statements for (tests).
    var layoutSelectCount: Int { layout.selectCount }
    private var schemaVersion: Int64
    private var hierarchy: Hierarchy?
    private var hierarchyDataVersion: Int64 = -1
    /// The change log's last seq when `hierarchy` was read (nil: no intact change capture).
    private var hierarchySeq: Int64?
    /// Whether change capture is intact, for schema version `captureCheckedSchema`.
    private var captureIntact = false
    private var captureCheckedSchema: Int64 = -1
    /// Spec template labels of the current snapshot (EngineOptions.cacheSpecTemplates).
    private let templates = SpecTemplateCache(cost: { _, labels in labels.byteCount })
    /// Manufacturer logos of the current snapshot (EngineOptions.cacheLogos).
    private let logos = LogoCache(cost: { name, logo in name.value.utf8.count + (logo?.utf8.count ?? 0) + 64 })
    /// Answers by PreparedOperation.cacheKey, valid while PRAGMA data_version is unchanged (no
    /// other connection has committed): a catalog changes only when someone commits.
    private var answers: [ExactString: ExecutionResult] = [:]
    private var answersBytes = 0
    private var answersDataVersion: Int64 = -1
    /// The file change counter of the snapshot the answers describe (rollback-journal catalogs
    /// only): while the file still shows it, nobody has committed and a cached answer is
    /// returned without a read transaction (no lock, no `PRAGMA`, one 28-byte read).
    private var answersChangeCounter: UInt32? = nil
    /// Upper bound of the answer cache, in bytes of JSON.
    public var answerCacheLimit = 32 << 20
    /// How long a statement waits for another process's write lock before CATALOG_BUSY:
    /// `service.options.busyTimeoutMs` unless shortened (the gateway does while its watcher
    /// finds the catalog locked past that timeout).
    public var busyTimeoutMs: Int32 {
        didSet { if busyTimeoutMs != oldValue { db.setBusyTimeout(busyTimeoutMs) } }
    }
    /// Planners and root plans by PreparedOperation.cacheKey: selection plans depend only on the
    /// schema, the document, the operation and the variables, so each is built once and reused
    /// (cold executions included) instead of per execution. (Plans refer to their planner, never
    /// the reverse, so an evicted entry is freed whole.)
    ///
    /// Bounded by count and by the bytes of their keys (document text and variables). An entry
    /// takes about 40 times its key: a 60 KB document's plan held 2.4 MB (about 1.8 KB per planned
    /// field), and the planner keeps its parsed document (about 20 times its text) alive after
    /// the document cache dropped it. So at most 256 KiB of keys are kept per session (about
    /// 10 MB), and a key over 16 KiB is planned per execution instead. (With a bound of 4 MiB of
    /// keys, distinct variables on one large document held 160 MB per worker.)
    private var planners: [ExactString: (planner: Planner, root: SelectionPlan)] = [:]
    static let maxCachedPlanners = 256
    static let maxPlannerKeyBytes = 256 << 10
    private var plannerKeyBytes = 0
    /// Plans kept and the bytes of their keys (tests).
    var plannerCacheUsage: (count: Int, keyBytes: Int) { (planners.count, plannerKeyBytes) }

    /// Opens the catalog (read-only unless `readOnly` is false); throws CatalogError naming the
    /// file and what is missing.
    /// `stopsWhen`: see the property; asked from the first read (opening waits for a writer's
    /// lock as queries do).
    public init(path: String, service: QueryService, readOnly: Bool = true, stopsWhen: (() -> Bool)? = nil) throws {
        self.path = path; self.service = service; self.readOnly = readOnly
        busyTimeoutMs = service.options.busyTimeoutMs
        self.stopsWhen = stopsWhen
        (file, db, schemaVersion, layout) = try Self.open(path: path, service: service, readOnly: readOnly, stopsWhen: stopsWhen)
        installStopCheck()
    }

    /// Asked while SQL runs or waits for a lock, in and out of `execute` (the watcher's own
    /// reads): true stops it. The subscription hub stops its watcher's waits with it.
    public var stopsWhen: (() -> Bool)? = nil

    /// The running query's limit (monotonic ns; 0: none) and its client's cancellation.
    private var stopDeadline: UInt64 = 0
    private var stopCancelled: (() -> Bool)? = nil

    /// Checked every 20,000 SQLite instructions (a few microseconds; a category page runs
    /// ~100,000): a query past --max-execution-ms, or whose client went away, stops there.
    private func installStopCheck() {
        db.stopWhen(everyInstructions: 20_000) { [unowned self] in
            guard let e = self.stopReason() else { return false }
            self.db.stopError = e
            return true
        }
    }

    /// Why the running query must stop now (its client cancelled it, or it passed
    /// --max-execution-ms), or nil.
    private func stopReason() -> GraphQLError? {
        if let stops = stopsWhen, stops() {
            return GraphQLError("The server is stopping.", extensions: ["code": .string("OPERATION_CANCELLED")])
        }
        if let cancelled = stopCancelled, cancelled() {
            return GraphQLError("The operation was cancelled (its client completed it or went away).",
                                extensions: ["code": .string("OPERATION_CANCELLED")])
        }
        if stopDeadline != 0 && monotonicNs() > stopDeadline {
            return GraphQLError("The query ran longer than the execution limit of \(service.options.maxExecutionMs) ms (--max-execution-ms) and was stopped.",
                                extensions: ["code": .string("EXECUTION_TIMEOUT")])
        }
        return nil
    }

    private static func open(path: String, service: QueryService, readOnly: Bool, stopsWhen: (() -> Bool)? = nil) throws
        -> (CatalogFileIdentity?, Database, Int64, CatalogLayout) {
        guard let file = CatalogFileIdentity(path: path) else {
            throw CatalogError(path: path, message: Database.missingFileReason(path) ?? "no such file")
        }
        let db: Database
        let schemaVersion: Int64
        do {
            db = try Database(path: path, readOnly: readOnly, busyTimeoutMs: service.options.busyTimeoutMs)
            if let stopsWhen { db.stopWhen(everyInstructions: 10_000, stopsWhen) }
            schemaVersion = try db.scalarInt("PRAGMA schema_version") ?? 0
            // SQLite's default page cache is 2 MB per connection: on a big catalog a search
            // that visits thousands of scattered product rows re-reads most pages from the OS
            // on every execution.
            try db.execute("PRAGMA cache_size = -\(service.options.pageCacheKiB)")
        } catch {
            throw CatalogError(path: path, message: error.message)
        }
        return (file, db, schemaVersion, try CatalogLayout(db: db, path: path))
    }

    /// Why the file now at `path` must not be opened in place of the open one, or nil. SQLite
    /// finds a WAL file by its name (`path-wal`), not by the file it belongs to: when the file
    /// this session has open is in WAL mode and a new one was renamed over it, the `-wal` beside
    /// the path still holds the old file's pages (this process's open connections keep a writer
    /// from removing it on close), and every connection to the new file — the gateway's, or a
    /// writer's, whose checkpoint then writes them in — would read them as the new file's. It is
    /// the old file's when this process has that very `-wal` open; a `-wal` made for the new file
    /// by a writer after the rename is not, and is no hazard. Ask before any connection of this
    /// process has opened the new file (the watcher does, before it reopens; workers follow it).
    public func replacementHazard() -> String? {
        guard db.fileIsWAL() == true else { return nil }
        // SQLite names the WAL after the file a symlink leads to, not after the link.
        let file = realpath(path, nil).map { p in defer { free(p) }; return String(cString: p) } ?? path
        var wal = stat()
        guard stat(file + "-wal", &wal) == 0, wal.st_size > 0 else { return nil }
        guard let dir = opendir("/proc/self/fd") else { return nil }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let fd = Int32(name) else { continue }
            var st = stat()
            if fstat(fd, &st) == 0 && st.st_dev == wal.st_dev && st.st_ino == wal.st_ino {
                return "\(file)-wal holds \(wal.st_size) bytes written for the catalog file this one replaced, "
                    + "which SQLite would read as this file's pages (and a writer's checkpoint would write into it). "
                    + "Run PRAGMA wal_checkpoint(TRUNCATE) on a WAL catalog "
                    + "right before renaming another over it; now, with every writer stopped, delete \(file)-wal and \(file)-shm."
            }
        }
        return nil
    }

    /// Reads the file now at `path` from here on (the catalog was replaced on disk). Throws, and
    /// keeps reading the file it had, when the new one is missing or not a catalog.
    public func reopen() throws {
        let (file, db, schemaVersion, layout) = try Self.open(path: path, service: service, readOnly: readOnly, stopsWhen: stopsWhen)
        self.db = db
        db.setBusyTimeout(busyTimeoutMs)
        installStopCheck()
        self.file = file
        self.schemaVersion = schemaVersion
        self.layout = layout
        hierarchy = nil
        hierarchyDataVersion = -1
        captureCheckedSchema = -1
        // The file before may be deleted, and its inode given to a later file.
        if let file { service.forgetSharedHierarchy(unlessOf: file) }
        templates.invalidate()
        logos.invalidate()
        answers.removeAll()
        answersBytes = 0
        answersDataVersion = -1
        answersChangeCounter = nil
    }

    /// Calls `callback` with each SQL statement's text as it runs (tests count statements).
    public func traceSQL(_ callback: ((String) -> Void)?) { db.trace(callback) }

    /// Executes a prepared query (or one event of a subscription: the subscription's
    /// selection set over the current snapshot) in one read transaction.
    ///
    /// `subscriptionSince`: for a catalogChanges subscription event, the version the subscriber
    /// last received; the event answers (subscriptionSince, current].
    ///
    /// `historyLost`: that version belongs to another catalog file (this one replaced it), so
    /// the event is CHANGES_EXPIRED.
    ///
    /// `cancelled`: asked while SQL runs; true stops the query (OPERATION_CANCELLED field errors).
    public func execute(_ operation: PreparedOperation, subscriptionSince: Int? = nil, historyLost: Bool = false,
                        cancelled: (() -> Bool)? = nil) -> ExecutionResult {
        metHotJournal = false
        let result = executeOnce(operation, subscriptionSince: subscriptionSince, historyLost: historyLost, cancelled: cancelled)
        guard metHotJournal, rollsBackHotJournals, rollBackHotJournal() else { return result }
        return executeOnce(operation, subscriptionSince: subscriptionSince, historyLost: historyLost, cancelled: cancelled)
    }

    /// Whether a hot journal met by a query (a writer stopped in the middle of a transaction on a
    /// rollback-journal catalog) is rolled back by opening the file read-write, and the query run
    /// again. This session's connection is read-only, and SQLite leaves such a journal to a
    /// connection that can write: until one came, every query failed with "attempt to write a
    /// readonly database" (an audit's writer killed mid-transaction). Off for `--read-only`.
    public var rollsBackHotJournals = false
    /// Called after this session rolled a hot journal back (the gateway logs it: another
    /// process's transaction was undone).
    public var rolledBackHotJournal: (@Sendable (String) -> Void)? = nil
    private var metHotJournal = false

    /// Opens the file read-write for one read, which rolls a hot journal back; true when that
    /// read succeeded.
    private func rollBackHotJournal() -> Bool {
        guard let rw = try? Database(path: path, readOnly: false, busyTimeoutMs: busyTimeoutMs),
              (try? rw.scalarInt("PRAGMA schema_version")) != nil else { return false }
        rolledBackHotJournal?(path)
        return true
    }

    private func executeOnce(_ operation: PreparedOperation, subscriptionSince: Int?, historyLost: Bool,
                             cancelled: (() -> Bool)?) -> ExecutionResult {
        let schema = service.schema
        if subscriptionSince == nil, let counter = answersChangeCounter, let hit = answers[ExactString(operation.cacheKey)],
           db.fileChangeCounter() == counter {
            return hit
        }
        // Queries only: a subscription event (a change set above all) must be whole.
        let limitMs = service.options.maxExecutionMs
        stopDeadline = operation.kind == .query && limitMs > 0 ? monotonicNs() + UInt64(limitMs) * 1_000_000 : 0
        stopCancelled = cancelled
        db.stopError = nil
        defer { stopDeadline = 0; stopCancelled = nil }
        do {
            try db.cachedStatement("BEGIN").run()
        } catch {
            return failure(error)
        }
        defer { _ = try? db.cachedStatement("COMMIT").run() }
        do {
            let dataVersion = try refresh()
            // Read under the transaction's shared lock: the counter of this very snapshot.
            answersChangeCounter = db.fileChangeCounter()
            if dataVersion != answersDataVersion {
                answers.removeAll(keepingCapacity: true)
                answersBytes = 0
                answersDataVersion = dataVersion
            } else if subscriptionSince == nil, let hit = answers[ExactString(operation.cacheKey)] {
                return hit
            }
            let resolver = CatalogResolver(db: db, layout: layout, hierarchy: { [unowned self] in try self.loadHierarchy(dataVersion) },
                                           schema: schema, subscriptionSince: subscriptionSince,
                                           subscriptionHistoryLost: historyLost,
                                           serializeLeafLists: service.options.serializeLeafLists,
                                           templateCache: templates.of(dataVersion, if: service.options.cacheSpecTemplates),
                                           logoCache: logos.of(dataVersion, if: service.options.cacheLogos))
            let root = operation.kind == .subscription ? (schema.subscriptionType ?? schema.queryType) : schema.queryType
            let cached: (planner: Planner, root: SelectionPlan)
            if let c = planners[ExactString(operation.cacheKey)] {
                cached = c
            } else {
                let planner = Planner(schema: schema, document: operation.document, variables: operation.variables)
                cached = (planner, planner.plan(typeName: root, selectionSets: [operation.operation.selectionSet]))
                // Bounded by count and by the bytes of their keys (`planners`).
                let keyBytes = operation.cacheKey.utf8.count
                if keyBytes <= Self.maxPlannerKeyBytes / 16 {
                    if planners.count >= Self.maxCachedPlanners || plannerKeyBytes + keyBytes > Self.maxPlannerKeyBytes {
                        planners.removeAll(keepingCapacity: true)
                        plannerKeyBytes = 0
                    }
                    planners[ExactString(operation.cacheKey)] = cached
                    plannerKeyBytes += keyBytes
                }
            }
            let executor = Executor(planner: cached.planner, resolver: resolver)
            // Queries are bounded in time, nodes and bytes. A subscription event is whole or not
            // at all: never cut, in time or nodes, but a change set past the byte limit is refused
            // as a whole (unbounded, one set could take gigabytes per subscriber group: a
            // one-row kit edit of a kit shared by 101 products made a 534 MB message).
            executor.maxBytes = service.options.maxResponseBytes
            if operation.kind == .query {
                executor.maxNodes = service.options.maxNodes
            } else if let since = subscriptionSince {
                executor.tooLargeMessage = "The change set since version \(since) would take more than \(service.options.maxResponseBytes) bytes (--max-response-bytes). Refetch the catalog and subscribe again from its version, or ask for fewer fields."
            }
            var result = executor.run(rootPlan: cached.root)
            result.changeSetVersion = resolver.lastChangeSetVersion
            // Keys count too: a query's key holds its variables, which can be far larger than
            // its answer (200 KB ids each answered by 25 bytes grew the cache without bound).
            let entryBytes = result.json.count + operation.cacheKey.utf8.count
            if subscriptionSince == nil && result.errors.isEmpty && entryBytes <= answerCacheLimit / 16 {
                if answersBytes + entryBytes > answerCacheLimit {
                    answers.removeAll(keepingCapacity: true)
                    answersBytes = 0
                }
                answers[ExactString(operation.cacheKey)] = result
                answersBytes += entryBytes
            }
            return result
        } catch {
            return failure(error)
        }
    }

    private func failure(_ error: Error) -> ExecutionResult {
        if (error as? SQLiteError)?.isHotJournal == true { metHotJournal = true }
        return .failedExecution([CatalogResolver.graphQLError(for: error, stopError: db.stopError)])
    }

    /// Inside the read transaction: re-reads the layout after a schema change; returns the
    /// snapshot's data version (the hierarchy and answers are kept per data version).
    private func refresh() throws -> Int64 {
        let sv = try db.scalarInt("PRAGMA schema_version") ?? 0
        if sv != schemaVersion {
            db.clearStatementCache()
            layout = try CatalogLayout(db: db, path: path)
            schemaVersion = sv
            hierarchy = nil
            templates.invalidate()
            logos.invalidate()
            answersDataVersion = -1
        }
        return try db.scalarInt("PRAGMA data_version") ?? 0
    }

    /// The change log's last seq, when change capture is intact (its triggers record every
    /// write to `hierarchy`, and compaction never removes the last row, so seq never goes back);
    /// nil otherwise. Inside the read transaction.
    private func captureSeq() throws -> Int64? {
        if captureCheckedSchema != schemaVersion {
            captureIntact = (try? ChangeCapture.isInstalled(db)) ?? false
            captureCheckedSchema = schemaVersion
        }
        guard captureIntact else { return nil }
        return try db.scalarInt("SELECT max(seq) FROM cg_changes") ?? 0
    }

    /// The whole hierarchy table, read only by operations that use categories, and again only
    /// when it may have changed: at each data version where change capture is missing, else
    /// once the change log holds a hierarchy row past the seq it was read at (the rows since
    /// are few). Every commit moves the data version, so reading at each made every query
    /// after a one-row product edit reload 225,000 categories on the 1M catalog (409 ms p50
    /// in an audit with a commit every 100 ms). What one session reads the others take
    /// (`QueryService.share`), under the same test.
    private func loadHierarchy(_ dv: Int64) throws -> Hierarchy {
        if let h = hierarchy, dv == hierarchyDataVersion { return h }
        guard let now = try captureSeq(), let file else { return try readHierarchy(dv, seq: nil) }
        if let h = hierarchy, let seq = hierarchySeq, try hierarchyUnchanged(since: seq, now: now) {
            return keep(h, dv: dv, seq: now)
        }
        // One session reads at a time, and those waiting take what it read when it is of their
        // snapshot too: workers asking at once each read the whole table and kept a copy (two
        // workers held 140 MB for the 1M catalog's 225,000 categories, one 83 MB).
        // The wait is bounded like the query's SQL: the reader may be a subscription event,
        // which runs without a time limit (a query waited 10 times --max-execution-ms).
        while true {
            let taken = try service.hierarchyReads.withLockIfAvailable { _ -> Hierarchy in
                if let shared = service.sharedHierarchy(file: file, schemaVersion: schemaVersion),
                   try hierarchyUnchanged(since: shared.seq, now: now) {
                    return keep(shared.hierarchy, dv: dv, seq: now)
                }
                let h = try readHierarchy(dv, seq: now)
                service.share(.init(file: file, schemaVersion: schemaVersion, seq: now, hierarchy: h))
                return h
            }
            if let taken { return taken }
            if let e = stopReason() {
                db.stopError = e
                throw e
            }
            usleep(1_000)
        }
    }

    private func keep(_ h: Hierarchy, dv: Int64, seq: Int64?) -> Hierarchy {
        hierarchy = h
        hierarchyDataVersion = dv
        hierarchySeq = seq
        return h
    }

    /// Reads the hierarchy table in this snapshot, whose change log ends at `seq` (nil: no
    /// intact change capture).
    private func readHierarchy(_ dv: Int64, seq: Int64?) throws -> Hierarchy {
        let s = try db.cachedStatement(
            "SELECT \"id\", \"menu_title\", \"menu_icon\", \(CatalogLayout.integerRule("\"level\"")), \"parent\" FROM \"hierarchy\"")
        defer { s.reset() }
        var rows: [CategoryNode] = []
        while try s.step() {
            guard s.type(0) == .integer else { continue }
            let parent: Int64?
            switch s.type(4) {
            case .integer: parent = s.int64(4)
            case .real:
                let d = s.double(4)
                parent = d == d.rounded() && abs(d) < 9e18 ? Int64(d) : nil
            case .text: parent = s.text(4)?.trimmedASCII.strictInteger
            default: parent = nil
            }
            rows.append(CategoryNode(id: s.int64(0), title: s.text(1) ?? "", icon: s.text(2),
                                     level: s.isNull(3) ? nil : Int(s.int64(3)), parent: parent))
        }
        return keep(Hierarchy(rows: rows), dv: dv, seq: seq)
    }

    /// Whether the hierarchy table in this snapshot, whose change log ends at `now`, is as it
    /// was in a snapshot whose log ended at `seq`: no hierarchy row logged after `seq`, and
    /// compaction (which deletes a prefix of the log, all but its last row) did not reach past
    /// it, deleting rows after it, hierarchy rows among them. False for a `seq` past `now` (a
    /// newer snapshot's, whose changes this one cannot see).
    private func hierarchyUnchanged(since seq: Int64, now: Int64) throws -> Bool {
        guard now >= seq else { return false }
        let changed = try db.cachedStatement("""
            SELECT EXISTS (SELECT 1 FROM cg_changes WHERE seq > ?1 AND tbl = 'H')
                OR coalesce((SELECT min(seq) FROM cg_changes), 0) > ?1 + 1
            """)
        defer { changed.reset() }
        changed.bind(seq, at: 1)
        return try changed.step() && changed.int64(0) == 0
    }

    /// The catalog file's change counter, read without a lock (nil for WAL catalogs):
    /// `Database.fileChangeCounter`.
    public func fileChangeCounter() -> UInt32? { db.fileChangeCounter() }

    /// `Database.writerHoldsLock`.
    public func writerHoldsLock() -> Bool? { db.writerHoldsLock() }

    /// `PRAGMA data_version`: changes whenever another connection commits.
    public func dataVersion() throws -> Int64 { try db.scalarInt("PRAGMA data_version") ?? 0 }

    /// The file's schema cookie: it moves with every CREATE, DROP or ALTER by anyone.
    public func schemaCookie() throws -> Int64 { try db.scalarInt("PRAGMA schema_version") ?? 0 }

    /// Whether change capture or the search index lost a trigger (another program dropped it,
    /// or rebuilt a catalog table, which drops the table's triggers): from then on the change
    /// log or the index misses writes. (The category counts check their own triggers before
    /// every use, and count with count(*) without them.) Not when a newer gateway made them
    /// (`GatewayFormat`): those are its own to keep, and replacing them made two gateways on
    /// one file replace each other's at every schema change.
    public func gatewayObjectsIncomplete() throws -> Bool {
        if try ChangeCapture.state(db) != nil, try !ChangeCapture.isInstalled(db), try !ChangeCapture.isNewer(db) { return true }
        if try SearchIndex.exists(db), try !SearchIndex.isInstalled(db), try !SearchIndex.isNewer(db) { return true }
        return false
    }

    /// The current CatalogVersion (greatest versionid row).
    public func catalogVersion() throws -> CatalogVersionValue { try CatalogResolver.catalogVersion(db) }
}
