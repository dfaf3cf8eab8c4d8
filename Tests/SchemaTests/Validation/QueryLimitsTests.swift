import Testing
@testable import Schema

/// The depth limit and the GitHub-style node limit.
@Suite struct QueryLimitsTests {
    let schema = TestSchemas.catalog

    func operation(_ text: String) -> (Document, OperationDefinition)? {
        guard let doc = parseDocument(text), let op = doc.operations.first else { return nil }
        return (doc, op)
    }

    func depth(_ text: String) -> Int {
        guard let (doc, op) = operation(text) else { return -1 }
        return queryDepth(document: doc, operation: op)
    }

    func depthError(_ text: String, max: Int) -> String? {
        guard let (doc, op) = operation(text) else { return "<syntax error>" }
        guard let error = checkDepth(document: doc, operation: op, maxDepth: max) else { return nil }
        #expect(error.code == "DEPTH_LIMIT_EXCEEDED")
        return formatted([error])[0]
    }

    func nodes(_ text: String, _ variables: [String: JSONValue] = [:]) -> Int {
        guard let (doc, op) = operation(text) else { return -1 }
        return estimateNodes(schema: schema, document: doc, operation: op, variables: variables)
    }

    // MARK: Depth

    struct DepthCase: Sendable, CustomTestStringConvertible {
        let name: String
        let query: String
        let depth: Int
        var testDescription: String { name }
    }

    static let depthCases: [DepthCase] = [
        DepthCase(name: "leaf at the root", query: "{ __typename }", depth: 1),
        DepthCase(name: "one level", query: "{ catalogVersion { version } }", depth: 2),
        DepthCase(name: "deepest branch counts",
                  query: "{ categories { id } category(id: 1) { parent { parent { parent { id } } } } }", depth: 5),
        DepthCase(name: "inline fragments add no depth",
                  query: "{ product(id: 1) { ... on Product { ... { category { id } } } } }", depth: 3),
        DepthCase(name: "through fragments",
                  query: "{ category(id: 1) { ...P } }\nfragment P on Category { parent { ...Q } }\nfragment Q on Category { parent { id } }",
                  depth: 4),
        DepthCase(name: "fragment used at several depths",
                  query: "{ category(id: 1) { ...P children { children { ...P } } } }\nfragment P on Category { parent { id } }",
                  depth: 5),
        DepthCase(name: "cycle terminates", query: "{ ...A }\nfragment A on Query { categories { ...A } }", depth: 1),
        DepthCase(name: "unknown fragment ignored", query: "{ categories { ...Nope } }", depth: 1),
    ]

    @Test(arguments: depthCases) func measuresDepth(_ c: DepthCase) {
        #expect(depth(c.query) == c.depth, "\(c.name)")
    }

    @Test func depthErrorAtTheDeepestField() {
        let query = """
            query Deep {
              category(id: 1) {
                parent { parent { id } }
                children { children { children { title } } }
              }
            }
            """
        #expect(depthError(query, max: 5) == nil)
        #expect(depthError(query, max: 4) == "Query depth 5 exceeds the limit of 4. [4:38]")
        #expect(depthError(query, max: 2) == "Query depth 5 exceeds the limit of 2. [4:38]")
    }

    @Test func depthErrorInsideAFragment() {
        let query = "{ category(id: 1) { ...P } }\nfragment P on Category { parent { parent { title } } }"
        #expect(depthError(query, max: 3) == "Query depth 4 exceeds the limit of 3. [2:44]")
    }

    @Test func introspectionQueryFitsTheDefaultLimit() {
        #expect(depth(ValidateTests.introspectionQuery) <= 15)
        #expect(depthError(ValidateTests.introspectionQuery, max: 15) == nil)
    }

    @Test func exponentialFragmentsAreMeasuredQuickly() {
        var query = "{ ...F0 }\n"
        query += (0..<40).map { "fragment F\($0) on Query { categories { id } a: categories { ...F\($0 + 1) } b: categories { ...F\($0 + 1) } }\n" }.joined()
        query += "fragment F40 on Query { catalogVersion { version } }\n"
        let start = ContinuousClock.now
        #expect(depth(query) == 42)
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    // MARK: Nodes

    @Test func defaultFirstIsFifty() {
        #expect(nodes("{ products { totalCount } }") == 50)
        #expect(nodes(#"{ search(text: "x") { totalCount } }"#) == 50)
    }

    @Test func nestedConnectionsMultiply() {
        #expect(nodes("""
            {
              products(first: 10) { nodes { manufacturer { products(first: 20) { nodes { category { products(first: 3) { totalCount } } } } } } }
            }
            """) == 10 + 10 * 20 + 10 * 20 * 3)
        #expect(nodes("""
            { category(id: 1) { products(first: 5) { edges { node { category { products { totalCount } } } } } } }
            """) == 5 + 5 * 50)
    }

    @Test func siblingConnectionsAdd() {
        #expect(nodes(#"{ a: products(first: 10) { totalCount } b: search(text: "x", first: 30) { totalCount } categories { products(first: 2) { totalCount } } }"#)
            == 10 + 30 + 2)
    }

    @Test func firstFromVariables() {
        let q = "query Q($n: Int) { products(first: $n) { totalCount } }"
        #expect(nodes(q, ["n": .int(7)]) == 7)
        #expect(nodes(q) == 50)
        #expect(nodes(q, ["n": .null]) == 50)
        #expect(nodes("query Q($n: Int = 9) { products(first: $n) { totalCount } }", ["n": .int(9)]) == 9)
    }

    @Test func nullNegativeAndOutOfRangeFirst() {
        #expect(nodes("{ products(first: null) { totalCount } }") == 50)
        #expect(nodes("{ products(first: -5) { totalCount } }") == 0)
        #expect(nodes("{ products(first: 500) { nodes { category { products(first: 100) { totalCount } } } } }") == 0)
        #expect(nodes("{ products(first: 100) { totalCount } }") == 100)
        #expect(nodes(#"{ products(first: "x") { totalCount } }"#) == 0)
    }

    @Test func fragmentsAreFollowedAndCountedPerUse() {
        #expect(nodes("""
            { ...A category(id: 1) { products(first: 2) { nodes { ...M } } } }
            fragment A on Query { products(first: 10) { nodes { ...M } } }
            fragment M on Product { manufacturer { products(first: 3) { totalCount } } }
            """) == (10 + 10 * 3) + (2 + 2 * 3))
    }

    @Test func skippedFieldsAreNotCounted() {
        let q = "query Q($b: Boolean!) { products(first: 10) @include(if: $b) { totalCount } search(text: \"x\", first: 5) @skip(if: true) { totalCount } }"
        #expect(nodes(q, ["b": .bool(false)]) == 0)
        #expect(nodes(q, ["b": .bool(true)]) == 10)
    }

    @Test func cyclesTerminateAndHugeEstimatesSaturate() {
        #expect(nodes("{ ...A }\nfragment A on Query { products(first: 1) { totalCount } ...A }") == 1)
        var query = "{ category(id: 1) { ...F0 } }\n"
        query += (0..<30).map { "fragment F\($0) on Category { products(first: 100) { nodes { category { ...F\($0 + 1) } } } }\n" }.joined()
        query += "fragment F30 on Category { id }\n"
        #expect(nodes(query) == Int.max)
    }

    @Test func nodeLimitError() {
        let q = """
            query Big {
              products(first: 100) { nodes { manufacturer { products(first: 100) { nodes { category { products(first: 100) { totalCount } } } } } } }
            }
            """
        guard let (doc, op) = operation(q) else { return }
        #expect(checkNodeLimit(schema: schema, document: doc, operation: op, variables: [:], maxNodes: 2_000_000) == nil)
        let error = checkNodeLimit(schema: schema, document: doc, operation: op, variables: [:], maxNodes: 100_000)
        #expect(error.map { formatted([$0])[0] } == "Query requests up to 1010100 nodes, over the limit of 100000. [1:1]")
        #expect(error?.code == "NODE_LIMIT_EXCEEDED")
    }

    // MARK: What the estimate depends on

    func estimateVariables(_ text: String) -> [String] {
        guard let doc = parseDocument(text) else { return ["<syntax error>"] }
        return nodeEstimateVariables(doc).sorted()
    }

    @Test func estimateVariablesAreThoseInFirstAndDirectives() {
        // Literals only, and variables the estimate never reads (an id, `after`, a search text).
        #expect(estimateVariables("""
            query($id: ID!, $after: String, $t: String!) {
              category(id: $id) { products(first: 50, after: $after) { nodes { id } } }
              search(text: $t, first: 5) { totalCount }
            }
            """) == [])
        #expect(estimateVariables("query($n: Int) { products(first: $n) { totalCount } }") == ["n"])
        // Inside a list or object value, in a fragment, on spreads and inline fragments.
        #expect(estimateVariables("""
            query($a: Boolean!, $b: Boolean!, $c: Boolean!, $n: Int, $m: Int) {
              categories { ...F @include(if: $a) }
              ... on Query @skip(if: $b) { products(first: 1) { nodes { id @include(if: $c) } } }
            }
            fragment F on Category { products(first: $n) { nodes { manufacturer { products(first: $m) { totalCount } } } } }
            """) == ["a", "b", "c", "m", "n"])
        #expect(estimateVariables("query($x: Boolean!) { products(first: 1) @deprecatedLike(if: [$x]) { totalCount } }") == ["x"])
    }

    /// Where nothing depends on the variables, any variables give the estimate of none (what
    /// QueryService relies on to make it once per document).
    @Test func anEstimateWithoutVariablesIgnoresThem() {
        let texts = [
            "query($id: ID!) { category(id: $id) { products(first: 50) { nodes { kit { id } manufacturer { products(first: 20) { totalCount } } } } } }",
            "query($n: Int = 7) { products(first: 30) @include(if: true) { nodes { id } } more: products { totalCount } }",
        ]
        let variableSets: [[String: JSONValue]] = [[:], ["id": .string("3"), "n": .int(100)], ["n": .int(1), "first": .int(99)]]
        for text in texts {
            #expect(estimateVariables(text) == [])
            let fixed = nodes(text)
            #expect(fixed > 0)
            for v in variableSets { #expect(nodes(text, v) == fixed) }
        }
        // And where something does, the variables change it.
        let dependent = "query($n: Int) { products(first: $n) { nodes { manufacturer { products(first: 10) { totalCount } } } } }"
        #expect(nodes(dependent, ["n": .int(2)]) == 22)
        #expect(nodes(dependent, ["n": .int(5)]) == 55)
    }
}
