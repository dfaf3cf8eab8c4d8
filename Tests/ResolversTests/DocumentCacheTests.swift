import Testing
import Schema
@testable import Resolvers

/// QueryService keeps each parsed and validated document, and its node estimate when no
/// variable can change it: requests that repeat a document must still be limited by their own
/// variables.
@Suite struct DocumentCacheTests {
    /// The request's outcome: "ready" or the first error's code and message.
    func outcome(_ service: QueryService, _ query: String, _ variables: JSONValue? = nil) -> String {
        switch service.prepare(GraphQLRequest(query: query, variables: variables)) {
        case .ready: return "ready"
        case .failed(let r): return r.errors.first.map { "\($0.extensions["code"].map { "\($0)" } ?? "") \($0.message)" } ?? "failed"
        }
    }

    // n + n·100 + n·100·100 nodes.
    static let byFirst = """
        query($n: Int) { products(first: $n) { nodes { manufacturer { products(first: 100) { nodes { category {
          products(first: 100) { totalCount } } } } } } } }
        """
    static let byInclude = """
        query($big: Boolean!) { products(first: 100) @include(if: $big) { nodes { manufacturer { products(first: 100) {
          nodes { category { products(first: 100) { totalCount } } } } } } } categories { id } }
        """
    static let fixed = """
        { products(first: 100) { nodes { manufacturer { products(first: 100) { nodes { category {
          products(first: 100) { totalCount } } } } } } } }
        """

    @Test func repeatedDocumentsAreLimitedByTheirOwnVariables() {
        let service = QueryService()
        let over = { (n: Int) in "string(\"NODE_LIMIT_EXCEEDED\") Query requests up to \(n) nodes, over the limit of 100000." }
        // Each sequence goes under, over, under again: the second and third find the document cached.
        #expect(outcome(service, Self.byFirst, .object([("n", .int(1))])) == "ready")
        #expect(outcome(service, Self.byFirst, .object([("n", .int(10))])) == over(101_010))
        #expect(outcome(service, Self.byFirst, .object([("n", .int(9))])) == "ready")
        #expect(outcome(service, Self.byInclude, .object([("big", .bool(false))])) == "ready")
        #expect(outcome(service, Self.byInclude, .object([("big", .bool(true))])) == over(1_010_100))
        #expect(outcome(service, Self.byInclude, .object([("big", .bool(false))])) == "ready")
        // The other order: over first.
        let other = QueryService()
        #expect(outcome(other, Self.byFirst, .object([("n", .int(10))])) == over(101_010))
        #expect(outcome(other, Self.byFirst, .object([("n", .int(1))])) == "ready")
        // A document over the limit whatever its variables fails every time, from the cache too.
        for _ in 0..<3 { #expect(outcome(service, Self.fixed) == over(1_010_100)) }
    }

    @Test func theFixedEstimateFollowsTheServicesLimit() {
        var options = EngineOptions()
        options.maxNodes = 1_010_100
        let service = QueryService(options: options)
        for _ in 0..<2 { #expect(outcome(service, Self.fixed) == "ready") }
        options.maxNodes = 1_010_099
        let tighter = QueryService(options: options)
        for _ in 0..<2 {
            #expect(outcome(tighter, Self.fixed) == "string(\"NODE_LIMIT_EXCEEDED\") Query requests up to 1010100 nodes, over the limit of 1010099.")
        }
    }

    /// The cache is bounded by its documents' text as well as their number: distinct 56 KB
    /// documents (each ~1 MB parsed) never hold more than 2 MiB of text.
    @Test func largeDistinctDocumentsAreBoundedByTheirText() {
        let service = QueryService()
        let padding = String(repeating: " ", count: 56_000)
        var highest = 0
        for i in 0..<120 {
            #expect(outcome(service, "{ a\(i): catalogVersion { version } }" + padding) == "ready")
            let usage = service.documentCacheUsage
            highest = max(highest, usage.bytes)
            #expect(usage.count <= 40)
        }
        #expect(highest <= 2 << 20 && highest > 1 << 20)
        // A repeated document is a hit, not a second entry.
        let before = service.documentCacheUsage
        #expect(outcome(service, "{ a119: catalogVersion { version } }" + padding) == "ready")
        #expect(service.documentCacheUsage == before)
    }

    /// Each session's plans are bounded by the bytes of their keys (document and variables):
    /// distinct variables on one large document fill it to the bound and no further, and a
    /// document over the per-entry limit is answered without being kept.
    @Test func plansAreBoundedByTheirKeysBytes() throws {
        let engine = try TestEngine(path: try Fixture.make())
        // About 6 KB: 150 aliased fields, each with the variable.
        let large = "query($id: ID!) { " + (0..<150).map { "a\($0): product(id: $id) { id name sku }" }.joined(separator: " ") + " }"
        #expect(large.utf8.count > 5_000 && large.utf8.count < CatalogSession.maxPlannerKeyBytes / 16)
        var highest = 0
        for i in 0..<80 {
            let text = engine.run(large, variables: .object([("id", .string("\(i)"))]))
            #expect(!text.contains("\"errors\""), "\(text.prefix(300))")
            let usage = engine.session.plannerCacheUsage
            highest = max(highest, usage.keyBytes)
            #expect(usage.keyBytes <= CatalogSession.maxPlannerKeyBytes && usage.count <= CatalogSession.maxCachedPlanners)
        }
        // 80 keys of 6 KB are over the bound: it was reached, and the cache started again.
        #expect(highest > CatalogSession.maxPlannerKeyBytes / 2)
        let before = engine.session.plannerCacheUsage
        let huge = "query($id: ID!) { " + (0..<600).map { "a\($0): product(id: $id) { id name sku }" }.joined(separator: " ") + " }"
        #expect(huge.utf8.count > CatalogSession.maxPlannerKeyBytes / 16)
        #expect(!engine.run(huge, variables: .object([("id", .string("1"))])).contains("\"errors\""))
        #expect(engine.session.plannerCacheUsage == before)
    }
}
