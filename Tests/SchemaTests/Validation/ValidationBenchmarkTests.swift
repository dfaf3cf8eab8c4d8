import Testing
@testable import Schema

/// Timing of validation on real documents (printed; asserted only loosely, as machines vary).
@Suite struct ValidationBenchmarkTests {
    func median(_ text: String, runs: Int = 1000) -> Double {
        guard let doc = parseDocument(text) else { return .infinity }
        let schema = TestSchemas.catalog
        var times: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<runs {
            let d = clock.measure { _ = validate(schema: schema, document: doc) }
            times.append(Double(d.components.attoseconds) / 1e12 + Double(d.components.seconds) * 1e6)
        }
        return times.sorted()[runs / 2]
    }

    @Test func validationIsFastOnRealDocuments() {
        let intro = median(ValidateTests.introspectionQuery)
        let page = median("""
            query CategoryPage($id: ID!, $first: Int = 50) {
              category(id: $id) {
                id title path { id title } children { id title }
                products(first: $first, includeDescendants: true) {
                  totalCount pageInfo { hasNextPage endCursor }
                  nodes { id sku name thumbnail manufacturer { name logo } specs { key label value } kit { id name quantity } }
                }
              }
            }
            """)
        print("validate: introspection query \(intro) µs, category page \(page) µs (median)")
        #expect(intro < 50_000)
        #expect(page < 50_000)
    }
}
