import Testing
@testable import Schema

/// The whole of `validate`: real documents that must pass, the error cap, and hostile documents
/// that must be answered quickly and without exhausting the stack. (Time bounds are loose: they
/// catch quadratic or exponential blow-ups, which take minutes, on a shared debug build.)
@Suite struct ValidateTests {
    let schema = TestSchemas.catalog

    func errors(_ text: String, maxErrors: Int = 100) -> [String] {
        guard let doc = parseDocument(text) else { return ["<syntax error>"] }
        return formatted(validate(schema: schema, document: doc, maxErrors: maxErrors))
    }

    /// Validates and returns the errors with the time taken, in seconds.
    func timed(_ text: String) -> ([String], Double) {
        guard let doc = try? Parser.parse(Source(text), maxDepth: 200, maxTokens: 1_000_000) else { return (["<syntax error>"], 0) }
        let clock = ContinuousClock()
        var result: [GraphQLError] = []
        let elapsed = clock.measure { result = validate(schema: schema, document: doc) }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (formatted(result), seconds)
    }

    static let introspectionQuery = #"""
        query IntrospectionQuery {
          __schema {
            description
            queryType { name }
            mutationType { name }
            subscriptionType { name }
            types {
              ...FullType
            }
            directives {
              name
              description
              isRepeatable
              locations
              args(includeDeprecated: true) {
                ...InputValue
              }
            }
          }
        }

        fragment FullType on __Type {
          kind
          name
          description
          specifiedByURL
          fields(includeDeprecated: true) {
            name
            description
            args(includeDeprecated: true) {
              ...InputValue
            }
            type {
              ...TypeRef
            }
            isDeprecated
            deprecationReason
          }
          inputFields(includeDeprecated: true) {
            ...InputValue
          }
          interfaces {
            ...TypeRef
          }
          enumValues(includeDeprecated: true) {
            name
            description
            isDeprecated
            deprecationReason
          }
          possibleTypes {
            ...TypeRef
          }
        }

        fragment InputValue on __InputValue {
          name
          description
          type { ...TypeRef }
          defaultValue
          isDeprecated
          deprecationReason
        }

        fragment TypeRef on __Type {
          kind
          name
          ofType {
            kind
            name
            ofType {
              kind
              name
              ofType {
                kind
                name
                ofType {
                  kind
                  name
                  ofType {
                    kind
                    name
                    ofType {
                      kind
                      name
                      ofType {
                        kind
                        name
                        ofType {
                          kind
                          name
                          ofType {
                            kind
                            name
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
        """#

    @Test func graphiqlIntrospectionQueryIsValid() {
        #expect(errors(Self.introspectionQuery) == [])
    }

    @Test func categoryPageQueryIsValid() {
        let query = #"""
            query CategoryPage($id: ID!, $first: Int = 50, $after: String, $order: ProductOrder = CATALOG) {
              catalogVersion { version }
              category(id: $id) {
                id title icon level
                parent { id title }
                path { id title }
                children { id title productCount(includeDescendants: true) }
                products(first: $first, after: $after, orderBy: $order, includeDescendants: true) {
                  totalCount
                  pageInfo { hasNextPage endCursor }
                  edges { cursor node { ...ProductCard } }
                }
              }
            }
            fragment ProductCard on Product {
              id sku name thumbnail
              manufacturer { name logo }
              specs { key label value }
              kit { id name quantity }
              videos { kind url }
              ... on Product { images __typename }
            }
            """#
        #expect(errors(query) == [])
    }

    @Test func stopsAtTheErrorCap() {
        let fields = (0..<150).map { "f\($0)" }.joined(separator: " ")
        let all = errors("{ \(fields) }")
        #expect(all.count == 101)
        #expect(all.first == #"Cannot query field "f0" on type "Query". [1:3]"#)
        #expect(all.last == "Too many validation errors, error limit reached. Validation aborted. []")

        let three = errors("{ \(fields) }", maxErrors: 3)
        #expect(three.count == 4)
        #expect(three.last == "Too many validation errors, error limit reached. Validation aborted. []")
    }

    @Test func errorsFromSeveralRulesComeInRuleOrderPerNode() {
        // Arguments are visited before the sub-selection; operation-level checks run on leave.
        #expect(errors(#"query Q($v: Int) { product(id: 1, x: 1) { nam } }"#) == [
            #"Unknown argument "x" on field "Query.product". [1:35]"#,
            #"Cannot query field "nam" on type "Product". Did you mean "name"? [1:43]"#,
            #"Variable "$v" is never used in operation "Q". [1:9]"#,
        ])
    }

    // MARK: Hostile documents

    @Test func thousandsOfIdenticalFieldsAreFast() {
        let query = "{ " + String(repeating: "product(id: 1) { name category { id } } ", count: 5000) + "}"
        let (result, seconds) = timed(query)
        #expect(result == [])
        #expect(seconds < 10)
    }

    @Test func thousandsOfAliasesAreFast() {
        let query = "{ " + (0..<5000).map { "a\($0): product(id: \($0)) { name } " }.joined() + "}"
        let (result, seconds) = timed(query)
        #expect(result == [])
        #expect(seconds < 10)
    }

    @Test func thousandsOfDistinctSameNamedFieldsAreBounded() {
        // Same response name, same field and arguments, each with a different sub-selection:
        // a quadratic number of comparisons that the work bound cuts short.
        let query = "{ " + (0..<3000).map { "product(id: 1) { a\($0): name } " }.joined() + "}"
        let (result, seconds) = timed(query)
        #expect(seconds < 10)
        #expect(result == [] || result == [
            "The document is too complex to check that fields with the same name can be merged. [1:1]",
        ])
    }

    @Test func thousandsOfConflictingFieldsStopAtTheCap() {
        let query = "{ " + (0..<3000).map { "product(id: \($0)) { name } " }.joined() + "}"
        let (result, seconds) = timed(query)
        #expect(seconds < 10)
        #expect(result.count == 101)
        #expect(result.first == #"Fields "product" conflict because they have differing arguments. Use different aliases on the fields to fetch both if this was intentional. [1:3 1:27]"#)
    }

    @Test func thousandsOfFragmentSpreadsAreFast() {
        var query = "{ product(id: 1) { " + (0..<1500).map { "...F\($0) " }.joined() + "} }\n"
        query += (0..<1500).map { "fragment F\($0) on Product { name id x\($0): sku }\n" }.joined()
        let (result, seconds) = timed(query)
        #expect(result == [])
        #expect(seconds < 10)
    }

    @Test func longFragmentChainDoesNotExhaustTheStack() {
        let n = 3000
        var query = "{ ...F0 }\n"
        query += (0..<n).map { "fragment F\($0) on Query { categories { id } ...F\($0 + 1) }\n" }.joined()
        query += "fragment F\(n) on Query { catalogVersion { version } }\n"
        let (result, seconds) = timed(query)
        #expect(result == [])
        #expect(seconds < 10)
    }

    @Test func longFragmentCycleIsReportedOnce() {
        let n = 2000
        var query = "{ ...F0 }\n"
        query += (0..<n).map { "fragment F\($0) on Query { ...F\(($0 + 1) % n) }\n" }.joined()
        let (result, _) = timed(query)
        #expect(result.count == 1)
        #expect(result.first?.hasPrefix(#"Cannot spread fragment "F0" within itself via "F1", "F2","#) == true)
    }

    @Test func exponentialFragmentFanOutIsFast() {
        // F0 spreads F1 twice, F1 spreads F2 twice, ...: 2^40 paths, 41 fragments.
        let n = 40
        var query = "{ ...F0 }\n"
        query += (0..<n).map { "fragment F\($0) on Query { categories { id } ...F\($0 + 1) ...F\($0 + 1) }\n" }.joined()
        query += "fragment F\(n) on Query { catalogVersion { version } }\n"
        let (result, seconds) = timed(query)
        #expect(result == [])
        #expect(seconds < 10)
    }
}
