import Testing
@testable import Schema

/// Inputs the fuzz targets (Fuzz/) found crashing, minimized, with the exact errors they must
/// now give. graphql-js 16 (and graphql-core) recurse without end on the cyclic ones.
@Suite struct FuzzRegressionTests {
    static let cases: [ValidationCase] = [
        // FuzzParser crash 6ce338f7 (stack overflow), minimized by libFuzzer: a fragment that
        // spreads itself below a field of the same response name as a field next to its spread
        // sent the overlap search comparing the same two fields forever.
        ValidationCase("fuzz: self-spreading fragment under same-named fields (minimized crash)",
            "{Query{...B}...B}fragment B on Q{Query{Query{...B}}}",
            [#"Cannot query field "Query" on type "Query". [1:2]"#, #"Cannot spread fragment "B" within itself. [1:46]"#, #"Unknown type "Q". [1:32]"#]),
        ValidationCase("fuzz: the same on catalog types",
            "{ category(id: 1) { parent { ...B } ...B } } fragment B on Category { parent { parent { ...B } } }",
            [#"Cannot spread fragment "B" within itself. [1:89]"#]),
        ValidationCase("fuzz: a conflict beside the cycle is still reported",
            "{ category(id: 1) { parent { id ...B } ...B } } fragment B on Category { parent { id: title ...B } }",
            [
                #"Fields "parent" conflict because subfields "id" conflict because "id" and "title" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:21 1:30 1:74 1:83]"#,
                #"Cannot spread fragment "B" within itself. [1:93]"#,
            ]),
        ValidationCase("fuzz: two fragments spreading each other under same-named fields",
            "{ category(id: 1) { ...A ...B } } fragment A on Category { parent { ...B } } fragment B on Category { parent { ...A } }",
            [#"Cannot spread fragment "A" within itself via "B". [1:69 1:112]"#]),
    ]

    @Test(arguments: cases) func validates(_ c: ValidationCase) { c.check() }
}
