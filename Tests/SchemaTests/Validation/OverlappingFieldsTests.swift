import Testing
@testable import Schema

// OverlappingFieldsCanBeMerged.

@Suite struct OverlappingFieldsTests {
    static let cases: [ValidationCase] = [
        ValidationCase("overlapping: identical fields", #"{ catalogVersion { version } catalogVersion { version } }"#,
            []),
        ValidationCase("overlapping: identical with arguments", #"{ product(id: 1) { name } product(id: 1) { sku } }"#,
            []),
        ValidationCase("overlapping: different aliases", #"{ a: product(id: 1) { name } b: product(id: 2) { name } }"#,
            []),
        ValidationCase("overlapping: alias masks different fields", #"{ product(id: 1) { name: sku name } }"#,
            [
                #"Fields "name" conflict because "sku" and "name" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:20 1:30]"#,
            ]),
        ValidationCase("overlapping: different arguments", #"""
            {
              product(id: 1) { name }
              product(id: 2) { name }
            }
            """#,
            [
                #"Fields "product" conflict because they have differing arguments. Use different aliases on the fields to fetch both if this was intentional. [2:3 3:3]"#,
            ]),
        ValidationCase("overlapping: argument vs none", #"{ products { totalCount } products(first: 3) { totalCount } }"#,
            [
                #"Fields "products" conflict because they have differing arguments. Use different aliases on the fields to fetch both if this was intentional. [1:3 1:27]"#,
            ]),
        ValidationCase("overlapping: same arguments different order", #"{ products(first: 3, orderBy: NAME) { totalCount } products(orderBy: NAME, first: 3) { totalCount } }"#,
            []),
        ValidationCase("overlapping: input object fields in any order", #"{ products(filter: {sku: "a", letter: "B"}) { totalCount } products(filter: {letter: "B", sku: "a"}) { totalCount } }"#,
            []),
        ValidationCase("overlapping: variable vs literal", #"query Q($n: Int) { products(first: $n) { totalCount } products(first: 3) { totalCount } }"#,
            [
                #"Fields "products" conflict because they have differing arguments. Use different aliases on the fields to fetch both if this was intentional. [1:20 1:55]"#,
            ]),
        ValidationCase("overlapping: via fragments", #"""
            { product(id: 1) { ...A ...B } }
            fragment A on Product { x: name }
            fragment B on Product { x: sku }
            """#,
            [
                #"Fields "x" conflict because "name" and "sku" are different fields. Use different aliases on the fields to fetch both if this was intentional. [2:25 3:25]"#,
            ]),
        ValidationCase("overlapping: fragment against field", #"""
            { product(id: 1) { x: name ...B } }
            fragment B on Product { x: sku }
            """#,
            [
                #"Fields "x" conflict because "name" and "sku" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:20 2:25]"#,
            ]),
        ValidationCase("overlapping: nested subfields", #"""
            {
              product(id: 1) { category { t: title } }
              product(id: 1) { category { t: icon } }
            }
            """#,
            [
                #"Fields "product" conflict because subfields "category" conflict because subfields "t" conflict because "title" and "icon" are different fields. Use different aliases on the fields to fetch both if this was intentional. [2:3 2:20 2:31 3:3 3:20 3:31]"#,
            ]),
        ValidationCase("overlapping: deep nesting reports all subfields", #"{ product(id: 1) { category { t: title i: id } } product(id: 1) { category { t: icon i: level } } }"#,
            [
                #"Fields "product" conflict because subfields "category" conflict because subfields "t" conflict because "title" and "icon" are different fields and subfields "i" conflict because "id" and "level" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:3 1:20 1:31 1:40 1:50 1:67 1:78 1:86]"#,
            ]),
        ValidationCase("overlapping: conflicting types", schema: .pets, #"{ pet { ... on Dog { x: name } ... on Cat { x: meows } } }"#,
            [
                #"Fields "x" conflict because they return conflicting types "String" and "Boolean". Use different aliases on the fields to fetch both if this was intentional. [1:22 1:45]"#,
            ]),
        ValidationCase("overlapping: different object parents may differ", schema: .pets, #"{ pet { ... on Dog { name: nickname } ... on Cat { name } } }"#,
            []),
        ValidationCase("overlapping: interface parent must agree", schema: .pets, #"{ named { name ... on Dog { name: nickname } } }"#,
            [
                #"Fields "name" conflict because "name" and "nickname" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:11 1:29]"#,
            ]),
        ValidationCase("overlapping: list vs non-list", schema: .pets, #"{ human { pets { __typename } } human { pets: name } }"#,
            [
                #"Fields "human" conflict because subfields "pets" conflict because "pets" and "name" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:3 1:11 1:33 1:41]"#,
            ]),
        ValidationCase("overlapping: inline fragments without type condition", #"{ product(id: 1) { ... { x: name } ... { x: sku } } }"#,
            [
                #"Fields "x" conflict because "name" and "sku" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:26 1:42]"#,
            ]),
        ValidationCase("overlapping: repeated fragment spread is fine", #"""
            { product(id: 1) { ...A ...A } }
            fragment A on Product { name }
            """#,
            []),
        ValidationCase("overlapping: conflict inside a fragment reported once", #"""
            { product(id: 1) { ...A } }
            fragment A on Product { x: name x: sku }
            """#,
            [
                #"Fields "x" conflict because "name" and "sku" are different fields. Use different aliases on the fields to fetch both if this was intentional. [2:25 2:33]"#,
            ]),
        ValidationCase("overlapping: mutually recursive fragments terminate", #"""
            { product(id: 1) { ...A } }
            fragment A on Product { name ...B }
            fragment B on Product { sku ...A }
            """#,
            [
                #"Cannot spread fragment "A" within itself via "B". [2:30 3:29]"#,
            ]),
        ValidationCase("overlapping: __typename aliases", #"{ product(id: 1) { x: __typename x: name } }"#,
            [
                #"Fields "x" conflict because "__typename" and "name" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:20 1:34]"#,
            ]),
        ValidationCase("overlapping: subscription fields", #"subscription { catalogVersion { v: version v: catalogRow } }"#,
            [
                #"Fields "v" conflict because "version" and "catalogRow" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:33 1:44]"#,
            ]),
    ]

    @Test(arguments: cases) func validates(_ c: ValidationCase) { c.check() }
}
