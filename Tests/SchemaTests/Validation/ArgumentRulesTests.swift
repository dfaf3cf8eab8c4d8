import Testing
@testable import Schema

// KnownArgumentNames, UniqueArgumentNames, ProvidedRequiredArguments.

@Suite struct ArgumentRulesTests {
    static let cases: [ValidationCase] = [
        ValidationCase("known argument names: known", #"{ products(filter: {sku: "A"}, orderBy: NAME, first: 3, after: "x") { totalCount } category(id: "1") { products(includeDescendants: true) { totalCount } } }"#,
            []),
        ValidationCase("known argument names: unknown on field", #"{ product(id: 1, x: 2) { name } }"#,
            [
                #"Unknown argument "x" on field "Query.product". [1:18]"#,
            ]),
        ValidationCase("known argument names: suggestion", #"{ products(frist: 3, ordrBy: NAME) { totalCount } }"#,
            [
                #"Unknown argument "frist" on field "Query.products". Did you mean "first"? [1:12]"#,
                #"Unknown argument "ordrBy" on field "Query.products". Did you mean "orderBy"? [1:22]"#,
            ]),
        ValidationCase("known argument names: unknown on directive", #"{ catalogVersion @skip(if: true, unless: false) { version } }"#,
            [
                #"Unknown argument "unless" on directive "@skip". [1:34]"#,
            ]),
        ValidationCase("known argument names: directive suggestion", #"{ catalogVersion @include(iff: true, if: true) { version } }"#,
            [
                #"Unknown argument "iff" on directive "@include". Did you mean "if"? [1:27]"#,
            ]),
        ValidationCase("known argument names: meta-field __type", #"{ __type(name: "Query", nam: "x") { name } }"#,
            [
                #"Unknown argument "nam" on field "Query.__type". Did you mean "name"? [1:25]"#,
            ]),
        ValidationCase("known argument names: field without arguments", #"{ catalogVersion(version: 1) { version } }"#,
            [
                #"Unknown argument "version" on field "Query.catalogVersion". [1:18]"#,
            ]),
        ValidationCase("unique argument names: distinct", #"{ products(first: 1, after: "a") { totalCount } }"#,
            []),
        ValidationCase("unique argument names: duplicate", #"{ products(first: 1, first: 2, after: "a", first: 3) { totalCount } }"#,
            [
                #"There can be only one argument named "first". [1:12 1:22 1:44]"#,
            ]),
        ValidationCase("unique argument names: duplicate on directive", #"{ catalogVersion @skip(if: true, if: false) { version } }"#,
            [
                #"There can be only one argument named "if". [1:24 1:34]"#,
            ]),
        ValidationCase("provided required arguments: given", #"{ product(id: 1) { name } search(text: "x") { totalCount } __type(name: "Query") { name } }"#,
            []),
        ValidationCase("provided required arguments: missing", #"""
            {
              product { name }
              search(first: 3) { totalCount }
            }
            """#,
            [
                #"Field "product" argument "id" of type "ID!" is required, but it was not provided. [2:3]"#,
                #"Field "search" argument "text" of type "String!" is required, but it was not provided. [3:3]"#,
            ]),
        ValidationCase("provided required arguments: optional and defaulted may be omitted", #"{ products { totalCount } category(id: 1) { productCount } }"#,
            []),
        ValidationCase("provided required arguments: null literal counts as provided", #"{ product(id: null) { name } }"#,
            [
                #"Expected value of type "ID!", found null. [1:15]"#,
            ]),
        ValidationCase("provided required arguments: directive", #"{ catalogVersion @include { version } categories @skip { id } }"#,
            [
                #"Directive "@include" argument "if" of type "Boolean!" is required, but it was not provided. [1:18]"#,
                #"Directive "@skip" argument "if" of type "Boolean!" is required, but it was not provided. [1:50]"#,
            ]),
        ValidationCase("provided required arguments: meta field", #"{ __type { name } }"#,
            [
                #"Field "__type" argument "name" of type "String!" is required, but it was not provided. [1:3]"#,
            ]),
        ValidationCase("provided required arguments: unknown field not checked", #"{ unknown { x } }"#,
            [
                #"Cannot query field "unknown" on type "Query". [1:3]"#,
            ]),
    ]

    @Test(arguments: cases) func validates(_ c: ValidationCase) { c.check() }
}
