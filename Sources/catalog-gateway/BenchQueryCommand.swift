import ArgumentParser
import Foundation
import Resolvers
import Schema
#if canImport(Glibc)
import Glibc
#endif

/// `catalog-gateway bench-query`: times one query in-process (parse and validation once,
/// execution repeated), to measure the engine without any transport.
struct BenchQueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-query",
        abstract: "Time a query in-process against a catalog file (median and p99 of executions).",
        discussion: """
            Without a QUERY it runs the category page: a category with its path and children and \
            50 products with manufacturer logo, specs and kit. Each iteration is a full execution \
            (read transaction, SQL, JSON) of the prepared operation. --json prints one JSON object (iterations, warm, bytes, median_ms, p99_ms, min_ms) for scripts.
            """)

    @Option(name: .long, help: "Catalog SQLite file.")
    var db: String

    @Option(name: .long, parsing: .unconditional, help: "Number of timed executions.")
    var iterations: Int = 2000

    @Flag(help: "Measure warm answers (served from the answer cache until the next commit) instead of full executions.")
    var warm = false

    @Option(name: .long, help: "Variables as a JSON object (default: for the category page, {\"id\": the category with the most products, as bench-rows picks it}; none for a QUERY given).")
    var variables: String?

    @Flag(name: .long, help: "Print one JSON object instead of text.")
    var json = false

    @Option(name: .long, parsing: .unconditional, help: "Milliseconds one execution's SQL may run before it is stopped, as in query and serve (0: no limit). Under valgrind the first execution on a large catalog, which reads the whole hierarchy, can take longer than the default.")
    var maxExecutionMs: Int = EngineOptions().maxExecutionMs

    @ArgumentParser.Argument(help: "The GraphQL document (default: the category page).")
    var query: String?

    func validate() throws {
        guard iterations >= 1 else { throw ValidationError("--iterations must be at least 1") }
        guard (0...86_400_000).contains(maxExecutionMs) else {
            throw ValidationError("--max-execution-ms must be between 0 and 86400000 (got \(maxExecutionMs))")
        }
    }

    static let categoryPage = """
        query CategoryPage($id: ID!) {
          category(id: $id) {
            id title icon level
            path { id title }
            children { id title icon }
            products(first: 50) {
              totalCount
              pageInfo { hasNextPage endCursor }
              nodes {
                id sku name displayOrder thumbnail images description
                manufacturer { name logo }
                specs { key label value }
                kit { id name quantity }
              }
            }
          }
        }
        """

    func run() throws {
        var options = EngineOptions()
        options.maxExecutionMs = maxExecutionMs
        let service = QueryService(options: options)
        let session: CatalogSession
        do { session = try CatalogSession(path: db, service: service) } catch { fail("\(error)") }
        if !warm { session.answerCacheLimit = 0 }
        var vars: JSONValue?
        if let variables {
            do { vars = try JSONParser.parse(Array(variables.utf8)) } catch { fail("--variables: invalid JSON at line \(error.line), column \(error.column): \(error.message)") }
        } else if query == nil {
            vars = .object([("id", .string(busiestCategory()))])
        }
        let op: PreparedOperation
        switch service.prepare(GraphQLRequest(query: query ?? Self.categoryPage, variables: vars)) {
        case .ready(let prepared): op = prepared
        case .failed(let result): fail("the query does not prepare: \(String(decoding: result.json, as: UTF8.self))")
        }
        let first = session.execute(op)
        if !first.errors.isEmpty { fail("the query fails: \(String(decoding: first.json, as: UTF8.self))") }
        for _ in 0..<min(100, iterations) { _ = session.execute(op) }
        var times: [Double] = []
        times.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let t0 = now()
            _ = session.execute(op)
            times.append(now() - t0)
        }
        times.sort()
        let median = times[times.count / 2]
        let p99 = times[min(times.count - 1, times.count * 99 / 100)]
        if json {
            print(String(format: "{\"iterations\":%d,\"warm\":\(warm),\"bytes\":%d,\"median_ms\":%.4f,\"p99_ms\":%.4f,\"min_ms\":%.4f}",
                         iterations, first.json.count, median * 1000, p99 * 1000, times[0] * 1000))
            return
        }
        print("bench-query: \(iterations) \(warm ? "warm (cached) answers" : "executions"), response \(first.json.count) bytes")
        print(String(format: "median %.3f ms   p99 %.3f ms   min %.3f ms", median * 1000, p99 * 1000, times[0] * 1000))
    }

    /// The category with the most products of its own, chosen as `bench-rows` chooses it (at any
    /// depth), so that both commands time the same page without --category / --variables.
    private func busiestCategory() -> String {
        let id: Int64
        do {
            id = try RowFloor.busiestCategory(try Database(path: db, readOnly: true))
        } catch {
            fail("\(db): \(error.message)")
        }
        return String(id)
    }
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
