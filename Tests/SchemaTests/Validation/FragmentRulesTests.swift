import Testing
@testable import Schema

// KnownTypeNames, FragmentsOnCompositeTypes, UniqueFragmentNames, KnownFragmentNames, NoUnusedFragments, PossibleFragmentSpreads, NoFragmentCycles.

@Suite struct FragmentRulesTests {
    static let cases: [ValidationCase] = [
        ValidationCase("known type names: all known", #"query Q($id: ID!, $f: ProductFilter, $o: ProductOrder) { product(id: $id) { ... on Product { name } } products(filter: $f, orderBy: $o) { totalCount } }"#,
            []),
        ValidationCase("known type names: unknown with suggestions", #"""
            query Q($id: Id!, $f: ProductFiltr) {
              product(id: $id) { ... on Prodct { name } }
              products(filter: $f) { totalCount }
            }
            fragment F on Categry { id }
            """#,
            [
                #"Unknown type "Id". Did you mean "ID"? [1:14]"#,
                #"Unknown type "ProductFiltr". Did you mean "ProductFilter", "ProductOrder", "Product", or "ProductEdge"? [1:23]"#,
                #"Unknown type "Prodct". Did you mean "Product"? [2:29]"#,
                #"Unknown type "Categry". Did you mean "Category"? [5:15]"#,
                #"Fragment "F" is never used. [5:1]"#,
            ]),
        ValidationCase("known type names: unknown without suggestion", #"query Q($x: [Zebra]) { catalogVersion { version } }"#,
            [
                #"Unknown type "Zebra". [1:14]"#,
                #"Variable "$x" is never used in operation "Q". [1:9]"#,
            ]),
        ValidationCase("fragments on composite types: object", #"""
            { product(id: 1) { ...P ... on Product { sku } } }
            fragment P on Product { name }
            """#,
            []),
        ValidationCase("fragments on composite types: scalar, enum, input", #"""
            { product(id: 1) { ...S ... on String { x } } }
            fragment S on ProductOrder { x }
            fragment T on ProductFilter { x }
            """#,
            [
                #"Fragment cannot condition on non composite type "String". [1:32]"#,
                #"Fragment "S" cannot condition on non composite type "ProductOrder". [2:15]"#,
                #"Fragment "T" cannot condition on non composite type "ProductFilter". [3:15]"#,
                #"Fragment "T" is never used. [3:1]"#,
            ]),
        ValidationCase("unique fragment names: distinct", #"""
            { product(id: 1) { ...A ...B } }
            fragment A on Product { name }
            fragment B on Product { sku }
            """#,
            []),
        ValidationCase("unique fragment names: duplicate", #"""
            { product(id: 1) { ...A } }
            fragment A on Product { name }
            fragment A on Product { sku }
            """#,
            [
                #"There can be only one fragment named "A". [2:10 3:10]"#,
            ]),
        ValidationCase("known fragment names: known", #"""
            { product(id: 1) { ...A ... on Product { ...A } } }
            fragment A on Product { name }
            """#,
            []),
        ValidationCase("known fragment names: unknown", #"""
            {
              product(id: 1) {
                ...Missing
                ... on Product { ...AlsoMissing }
              }
            }
            """#,
            [
                #"Unknown fragment "Missing". [3:8]"#,
                #"Unknown fragment "AlsoMissing". [4:25]"#,
            ]),
        ValidationCase("no unused fragments: all used through fragments", #"""
            query Q { product(id: 1) { ...A } }
            fragment A on Product { ...B }
            fragment B on Product { name }
            """#,
            []),
        ValidationCase("no unused fragments: unused", #"""
            query Q { product(id: 1) { ...A } }
            fragment A on Product { name }
            fragment Unused on Product { sku }
            fragment AlsoUnused on Query { ...Unused2 }
            fragment Unused2 on Query { __typename }
            """#,
            [
                #"Fragment "Unused" is never used. [3:1]"#,
                #"Fragment "AlsoUnused" is never used. [4:1]"#,
                #"Fragment "Unused2" is never used. [5:1]"#,
            ]),
        ValidationCase("possible fragment spreads: same type", #"""
            { product(id: 1) { ...P ... on Product { sku } } }
            fragment P on Product { name }
            """#,
            []),
        ValidationCase("possible fragment spreads: different object types", #"""
            { product(id: 1) { ...C ... on Category { id } } }
            fragment C on Category { title }
            """#,
            [
                #"Fragment "C" cannot be spread here as objects of type "Product" can never be of type "Category". [1:20]"#,
                #"Fragment cannot be spread here as objects of type "Product" can never be of type "Category". [1:25]"#,
            ]),
        ValidationCase("possible fragment spreads: abstract overlaps", schema: .pets, #"""
            { pet { ... on Dog { barks } ... on Node { id } ...N } named { ... on Pet { __typename } } }
            fragment N on Named { name }
            """#,
            []),
        ValidationCase("possible fragment spreads: abstract no overlap", schema: .pets, #"""
            { dog { ... on Cat { meows } ...P } being { ... on Cat { meows } } cat { ... on Being { __typename } } }
            fragment P on Human { iq }
            """#,
            [
                #"Fragment cannot be spread here as objects of type "Dog" can never be of type "Cat". [1:9]"#,
                #"Fragment "P" cannot be spread here as objects of type "Dog" can never be of type "Human". [1:30]"#,
                #"Fragment cannot be spread here as objects of type "Being" can never be of type "Cat". [1:45]"#,
                #"Fragment cannot be spread here as objects of type "Cat" can never be of type "Being". [1:74]"#,
            ]),
        ValidationCase("possible fragment spreads: unions sharing a member", schema: .pets, #"""
            { being { ...PetFields } }
            fragment PetFields on Pet { __typename ... on Cat { meows } }
            """#,
            []),
        ValidationCase("no fragment cycles: chain without cycle", #"""
            { product(id: 1) { ...A } }
            fragment A on Product { ...B }
            fragment B on Product { ...C }
            fragment C on Product { name }
            """#,
            []),
        ValidationCase("no fragment cycles: self", #"""
            { product(id: 1) { ...A } }
            fragment A on Product { name ...A }
            """#,
            [
                #"Cannot spread fragment "A" within itself. [2:30]"#,
            ]),
        ValidationCase("no fragment cycles: through three", #"""
            { product(id: 1) { ...A } }
            fragment A on Product { ...B }
            fragment B on Product { ...C }
            fragment C on Product { ...A }
            """#,
            [
                #"Cannot spread fragment "A" within itself via "B", "C". [2:25 3:25 4:25]"#,
            ]),
        ValidationCase("no fragment cycles: several cycles", #"""
            { product(id: 1) { ...A } }
            fragment A on Product { ...B ...C }
            fragment B on Product { ...A }
            fragment C on Product { ... on Product { ...A } }
            """#,
            [
                #"Cannot spread fragment "A" within itself via "B". [2:25 3:25]"#,
                #"Cannot spread fragment "A" within itself via "C". [2:30 4:42]"#,
            ]),
        ValidationCase("no fragment cycles: inside nested field", #"""
            { product(id: 1) { ...A } }
            fragment A on Product { category { products { nodes { ...A } } } }
            """#,
            [
                #"Cannot spread fragment "A" within itself. [2:55]"#,
            ]),
    ]

    @Test(arguments: cases) func validates(_ c: ValidationCase) { c.check() }
}
