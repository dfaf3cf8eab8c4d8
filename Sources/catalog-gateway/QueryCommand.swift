import ArgumentParser
import Gateway
import Resolvers
import Schema
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `catalog-gateway query`: runs one GraphQL document against a catalog file and prints the
/// response. Never writes to the file.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run one GraphQL query against a catalog file and print the JSON response.",
        discussion: """
            Exit status: 0 when the response has no errors, 1 when it has GraphQL errors, \
            2 for usage or I/O errors (missing file, not a catalog). The file is opened read-only.

            Example:
              catalog-gateway query --db demo/catalog.sqlite '{ categories { id title } }'
              echo '{ alphabet { letter count } }' |
                catalog-gateway query --db demo/catalog.sqlite -
            """)

    @Option(name: .long, help: "Catalog SQLite file.")
    var db: String

    @Option(name: .long, help: "Variables as a JSON object.")
    var variables: String?

    @Option(name: .long, help: "Name of the operation to run when the document has several.")
    var operation: String?

    @OptionGroup var limits: LimitOptions

    @ArgumentParser.Argument(help: "The GraphQL document, or - to read it from standard input.")
    var query: String

    func run() throws {
        let text: String
        if query == "-" {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(0, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n < 0 { fail("cannot read the document from standard input: \(String(cString: strerror(errno)))") }
                if n == 0 { break }
                bytes.append(contentsOf: buffer[0..<n])
            }
            text = String(decoding: bytes, as: UTF8.self)
        } else {
            text = query
        }
        var vars: JSONValue?
        if let variables {
            do {
                vars = try JSONParser.parse(Array(variables.utf8))
            } catch {
                fail("--variables: invalid JSON at line \(error.line), column \(error.column): \(error.message)")
            }
            switch vars {
            case .object?, .null?: break
            default: fail("--variables: not a JSON object (give the variables as {\"name\": value, ...})")
            }
        }
        let service = QueryService(options: limits.engineOptions)
        let session: CatalogSession
        do {
            session = try CatalogSession(path: db, service: service, readOnly: true)
        } catch {
            fail("\(error)")
        }
        let result: ExecutionResult
        switch service.prepare(GraphQLRequest(query: text, variables: vars, operationName: operation)) {
        case .failed(let r): result = r
        case .ready(let op): result = session.execute(op)
        }
        var out = result.json
        out.append(0x0A)
        writeStandardOutput(out)
        if !result.errors.isEmpty { throw ExitCode(1) }
    }
}

/// Engine limits shared by `query`, `serve` and `bench-query`.
struct LimitOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Largest accepted document, in bytes.")
    var maxDocumentBytes: Int = EngineOptions().maxDocumentBytes
    @Option(parsing: .unconditional, help: "Deepest accepted selection nesting.")
    var maxDepth: Int = EngineOptions().maxDepth
    @Option(parsing: .unconditional, help: "Node limit: the products of `first` along nested connections, summed (GitHub-style), checked before execution; each connection is counted again as it runs, `first` for every object it runs on (lists multiply it).")
    var maxNodes: Int = EngineOptions().maxNodes
    @Option(parsing: .unconditional, help: "Milliseconds one query's SQL may run before it is stopped, its fields answered with EXECUTION_TIMEOUT errors (0: no limit). In serve, subscription events are never cut, and a query whose client completes it or goes away stops the same way.")
    var maxExecutionMs: Int = EngineOptions().maxExecutionMs
    @Option(parsing: .unconditional, help: "About how many bytes one answer may take — a query's, or a change set's in `serve` (refused whole: the client refetches); past it the answer is a RESPONSE_TOO_LARGE error. Bounds an answer's memory where lists (categories, children, path, manufacturers, kit) multiply what the node limit counts.")
    var maxResponseBytes: Int = EngineOptions().maxResponseBytes

    func validate() throws {
        // At most 1 TiB, as serve's byte limits: sums made of them cannot overflow.
        let tib = ServeCommand.maxByteLimit
        guard (1...tib).contains(maxDocumentBytes) else {
            throw ValidationError("--max-document-bytes must be between 1 and \(tib) (1 TiB; got \(maxDocumentBytes))")
        }
        guard maxDepth >= 1 else { throw ValidationError("--max-depth must be at least 1 (got \(maxDepth))") }
        guard maxNodes >= 0 else { throw ValidationError("--max-nodes must be at least 0 (got \(maxNodes))") }
        guard (1024...tib).contains(maxResponseBytes) else {
            throw ValidationError("--max-response-bytes must be between 1024 and \(tib) (1 TiB; got \(maxResponseBytes))")
        }
        guard (0...86_400_000).contains(maxExecutionMs) else {
            throw ValidationError("--max-execution-ms must be between 0 and 86400000 (got \(maxExecutionMs))")
        }
    }

    var engineOptions: EngineOptions {
        var o = EngineOptions()
        o.maxDocumentBytes = maxDocumentBytes
        o.maxDepth = maxDepth
        o.maxNodes = maxNodes
        o.maxExecutionMs = maxExecutionMs
        o.maxResponseBytes = maxResponseBytes
        return o
    }
}

/// Prints "catalog-gateway: message" to stderr and exits with status 2.
func fail(_ message: String) -> Never {
    Logger.flush()
    writeAll(2, Array("catalog-gateway: \(message)\n".utf8))
    exit(2)
}

/// Writes an answer to standard output, or fails (exit 2) naming why it could not: a full disk
/// or a closed pipe must not pass for success with the answer lost.
func writeStandardOutput(_ bytes: [UInt8]) {
    fflush(stdout)
    if let error = writeAll(1, bytes) { fail("cannot write to standard output: \(String(cString: strerror(error)))") }
}

/// Exits 2 with a message when what `print` wrote to standard output did not all get there;
/// called at exit (atexit) by every command but `serve`, whose output is its ready line.
func checkStandardOutputAtExit() {
    if fflush(stdout) != 0 || ferror(stdout) != 0 {
        let error = errno
        let message = "catalog-gateway: cannot write to standard output: \(String(cString: strerror(error == 0 ? EIO : error)))\n"
        _ = writeAll(2, Array(message.utf8))
        _exit(2)
    }
}

/// Writes every byte to a file descriptor (retrying short writes); the errno that stopped it, if any.
@discardableResult
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
    bytes.withUnsafeBytes { p -> Int32? in
        var done = 0
        while done < p.count {
            let n = write(fd, p.baseAddress! + done, p.count - done)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return n < 0 ? errno : EIO }
            done += n
        }
        return nil
    }
}
