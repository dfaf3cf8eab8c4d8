import Testing
@testable import Schema

// ExecutableDefinitions, UniqueOperationNames, LoneAnonymousOperation, SingleFieldSubscriptions.

@Suite struct DocumentRulesTests {
    static let cases: [ValidationCase] = [
        ValidationCase("executable: operations and fragments only", #"""
            query Q { ...F }
            fragment F on Query { catalogVersion { version } }
            """#,
            []),
        ValidationCase("executable: type definition rejected", #"""
            query Q { catalogVersion { version } }

            type Foo {
              bar: String
            }

            """#,
            [
                #"The "Foo" definition is not executable. [3:1]"#,
            ]),
        ValidationCase("executable: schema and extension rejected", #"""
            { catalogVersion { version } }
            schema { query: Query }
            extend type Query { x: Int }
            directive @d on FIELD
            """#,
            [
                #"The schema definition is not executable. [2:1]"#,
                #"The "Query" definition is not executable. [3:1]"#,
                #"The "d" definition is not executable. [4:1]"#,
            ]),
        ValidationCase("unique operation names: distinct", #"""
            query A { catalogVersion { version } }
            query B { catalogVersion { version } }
            """#,
            []),
        ValidationCase("unique operation names: duplicate", #"""
            query A { catalogVersion { version } }
            query A { categories { id } }
            subscription A { catalogVersion { version } }
            """#,
            [
                #"There can be only one operation named "A". [1:7 2:7]"#,
                #"There can be only one operation named "A". [1:7 3:14]"#,
            ]),
        ValidationCase("unique operation names: query and subscription share name", #"""
            query A { catalogVersion { version } }
            subscription A { catalogVersion { version } }
            """#,
            [
                #"There can be only one operation named "A". [1:7 2:14]"#,
            ]),
        ValidationCase("lone anonymous: single anonymous", #"{ catalogVersion { version } }"#,
            []),
        ValidationCase("lone anonymous: with named operation", #"""
            { catalogVersion { version } }
            query Other { categories { id } }
            """#,
            [
                #"This anonymous operation must be the only defined operation. [1:1]"#,
            ]),
        ValidationCase("lone anonymous: two anonymous", #"""
            { catalogVersion { version } }
            { categories { id } }
            """#,
            [
                #"This anonymous operation must be the only defined operation. [1:1]"#,
                #"This anonymous operation must be the only defined operation. [2:1]"#,
            ]),
        ValidationCase("single field subscription: one field", #"subscription S { catalogVersion { version } }"#,
            []),
        ValidationCase("single field subscription: two fields", #"""
            subscription S {
              catalogVersion { version }
              v2: catalogVersion { catalogRow }
            }
            """#,
            [
                #"Subscription "S" must select only one top level field. [3:3]"#,
            ]),
        ValidationCase("single field subscription: anonymous, via fragment", #"""
            subscription { ...F }
            fragment F on Subscription { catalogVersion { version } other: catalogVersion { assetRow } }
            """#,
            [
                #"Anonymous Subscription must select only one top level field. [2:57]"#,
            ]),
        ValidationCase("single field subscription: __typename", #"subscription S { __typename }"#,
            [
                #"Subscription "S" must not select an introspection top level field. [1:18]"#,
            ]),
        ValidationCase("single field subscription: introspection plus field", #"subscription { catalogVersion { version } __typename }"#,
            [
                #"Anonymous Subscription must select only one top level field. [1:43]"#,
                #"Anonymous Subscription must not select an introspection top level field. [1:43]"#,
            ]),
        ValidationCase("single field subscription: skip literal excludes", #"subscription S { catalogVersion { version } b: catalogVersion @skip(if: true) { version } }"#,
            []),
        ValidationCase("single field subscription: same key twice is one field", #"subscription S { catalogVersion { version } catalogVersion { assetRow } }"#,
            []),
    ]

    @Test(arguments: cases) func validates(_ c: ValidationCase) { c.check() }
}
