import Testing
@testable import Schema

// VariablesAreInputTypes, UniqueVariableNames, NoUndefinedVariables, NoUnusedVariables, VariablesInAllowedPosition.

@Suite struct VariableRulesTests {
    static let cases: [ValidationCase] = [
        ValidationCase("variables are input types: scalars, enums, inputs, lists", #"query Q($a: ID!, $b: ProductOrder, $c: ProductFilter, $d: String = "x") { product(id: $a) { name } products(filter: $c) { nodes { name } } search(text: $d) { totalCount } x: products(orderBy: $b) { totalCount } __typename @skip(if: false) }"#,
            []),
        ValidationCase("variables are input types: object types", #"query Q($a: Product, $b: [Category!]!, $c: ProductConnection!) { catalogVersion { version } }"#,
            [
                #"Variable "$a" cannot be non-input type "Product". [1:13]"#,
                #"Variable "$b" cannot be non-input type "[Category!]!". [1:26]"#,
                #"Variable "$c" cannot be non-input type "ProductConnection!". [1:44]"#,
                #"Variable "$a" is never used in operation "Q". [1:9]"#,
                #"Variable "$b" is never used in operation "Q". [1:22]"#,
                #"Variable "$c" is never used in operation "Q". [1:40]"#,
            ]),
        ValidationCase("unique variable names: distinct", #"query Q($a: ID!, $b: ID!) { a: product(id: $a) { name } b: product(id: $b) { name } }"#,
            []),
        ValidationCase("unique variable names: duplicates", #"query Q($a: ID!, $b: Int, $a: ID!, $b: Int, $a: String) { product(id: $a) { name } products(first: $b) { totalCount } }"#,
            [
                #"There can be only one variable named "$a". [1:10 1:28 1:46]"#,
                #"There can be only one variable named "$b". [1:19 1:37]"#,
                #"Variable "$a" of type "String" used in position expecting type "ID!". [1:45 1:71]"#,
            ]),
        ValidationCase("no undefined variables: all defined, used in fragment", #"""
            query Q($id: ID!, $n: Int) { product(id: $id) { ...P } }
            fragment P on Product { category { products(first: $n) { totalCount } } }
            """#,
            []),
        ValidationCase("no undefined variables: undefined in named operation", #"""
            query Q($id: ID!) {
              product(id: $id) { name }
              products(first: $n) { totalCount }
            }
            """#,
            [
                #"Variable "$n" is not defined by operation "Q". [3:19 1:1]"#,
            ]),
        ValidationCase("no undefined variables: anonymous operation", #"{ product(id: $id) { name } }"#,
            [
                #"Variable "$id" is not defined. [1:15 1:1]"#,
            ]),
        ValidationCase("no undefined variables: through fragment, per operation", #"""
            query A($id: ID!) { product(id: $id) { ...P } }
            query B { product(id: 2) { ...P } }
            fragment P on Product { category { products(first: $n) { totalCount } } }
            """#,
            [
                #"Variable "$n" is not defined by operation "A". [3:52 1:1]"#,
                #"Variable "$n" is not defined by operation "B". [3:52 2:1]"#,
            ]),
        ValidationCase("no undefined variables: in directive and nested input", #"query Q { catalogVersion @include(if: $show) { version } products(filter: {categoryId: $cat, sku: "x"}) { totalCount } }"#,
            [
                #"Variable "$show" is not defined by operation "Q". [1:39 1:1]"#,
                #"Variable "$cat" is not defined by operation "Q". [1:88 1:1]"#,
            ]),
        ValidationCase("no unused variables: used in fragments and directives", #"""
            query Q($a: ID!, $b: Boolean!, $c: String) { product(id: $a) @include(if: $b) { ...P } }
            fragment P on Product { category { products(after: $c) { totalCount } } }
            """#,
            []),
        ValidationCase("no unused variables: unused in named operation", #"query Q($a: ID!, $unused: Int) { product(id: $a) { name } }"#,
            [
                #"Variable "$unused" is never used in operation "Q". [1:18]"#,
            ]),
        ValidationCase("no unused variables: unused in anonymous operation", #"query ($a: ID!, $b: String) { product(id: $a) { name } }"#,
            [
                #"Variable "$b" is never used. [1:17]"#,
            ]),
        ValidationCase("no unused variables: fragment used by other operation only", #"""
            query A($n: Int) { products { totalCount } }
            query B($n: Int) { ...F }
            fragment F on Query { products(first: $n) { totalCount } }
            """#,
            [
                #"Variable "$n" is never used in operation "A". [1:9]"#,
            ]),
        ValidationCase("variables in allowed position: exact and stricter types", #"query Q($id: ID!, $n: Int!, $o: ProductOrder, $f: ProductFilter!) { product(id: $id) { name } products(first: $n, orderBy: $o, filter: $f) { totalCount } }"#,
            []),
        ValidationCase("variables in allowed position: nullable into non-null", #"""
            query Q($id: ID, $t: String) {
              product(id: $id) { name }
              search(text: $t) { totalCount }
            }
            """#,
            [
                #"Variable "$id" of type "ID" used in position expecting type "ID!". [1:9 2:15]"#,
                #"Variable "$t" of type "String" used in position expecting type "String!". [1:18 3:16]"#,
            ]),
        ValidationCase("variables in allowed position: nullable with default into non-null", #"query Q($id: ID = 1, $b: Boolean = true) { product(id: $id) { name } catalogVersion @include(if: $b) { version } }"#,
            []),
        ValidationCase("variables in allowed position: null default does not count", #"query Q($id: ID = null) { product(id: $id) { name } }"#,
            [
                #"Variable "$id" of type "ID" used in position expecting type "ID!". [1:9 1:39]"#,
            ]),
        ValidationCase("variables in allowed position: position with default accepts nullable", #"query Q($n: Int, $o: ProductOrder) { products(first: $n, orderBy: $o) { totalCount } }"#,
            []),
        ValidationCase("variables in allowed position: wrong scalar", #"query Q($n: String, $id: Int!, $b: Boolean) { products(first: $n) { totalCount } product(id: $id) { name } catalogVersion @skip(if: $b) { version } }"#,
            [
                #"Variable "$n" of type "String" used in position expecting type "Int". [1:9 1:63]"#,
                #"Variable "$id" of type "Int!" used in position expecting type "ID!". [1:21 1:94]"#,
                #"Variable "$b" of type "Boolean" used in position expecting type "Boolean!". [1:32 1:133]"#,
            ]),
        ValidationCase("variables in allowed position: list and item", #"query Q($l: [ID!], $s: ID) { products(filter: {categoryId: $l}) { totalCount } x: products(filter: {categoryId: $s, includeDescendants: $s}) { totalCount } }"#,
            [
                #"Variable "$l" of type "[ID!]" used in position expecting type "ID". [1:9 1:60]"#,
                #"Variable "$s" of type "ID" used in position expecting type "Boolean". [1:20 1:137]"#,
            ]),
        ValidationCase("variables in allowed position: in fragment, each operation", #"""
            query A($n: Int) { ...F }
            query B($n: String) { ...F }
            fragment F on Query { products(first: $n) { totalCount } }
            """#,
            [
                #"Variable "$n" of type "String" used in position expecting type "Int". [2:9 3:39]"#,
            ]),
        ValidationCase("variables in allowed position: input field with default", #"query Q($b: Boolean) { products(filter: {includeDescendants: $b}) { totalCount } }"#,
            []),
        ValidationCase("variables in allowed position: list items", schema: .pets, #"query Q($a: Int, $b: Int!) { x: __type(name: "Q") { name } complex(arg: {requiredField: true, stringListField: [$a]}) }"#,
            [
                #"Variable "$b" is never used in operation "Q". [1:18]"#,
                #"Variable "$a" of type "Int" used in position expecting type "String". [1:9 1:113]"#,
            ]),
    ]

    @Test(arguments: cases) func validates(_ c: ValidationCase) { c.check() }
}
