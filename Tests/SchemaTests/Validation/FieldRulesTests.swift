import Testing
@testable import Schema

// FieldsOnCorrectType, ScalarLeafs.

@Suite struct FieldRulesTests {
    static let cases: [ValidationCase] = [
        ValidationCase("fields on correct type: known fields and meta-fields", #"{ __typename catalogVersion { __typename version } product(id: 1) { name } __schema { queryType { name } } __type(name: "Product") { name } }"#,
            []),
        ValidationCase("fields on correct type: unknown root field", #"{ foo }"#,
            [
                #"Cannot query field "foo" on type "Query". [1:3]"#,
            ]),
        ValidationCase("fields on correct type: suggestion", #"""
            { product(id: 1) {
              nmae
              skus
              Name
            } }
            """#,
            [
                #"Cannot query field "nmae" on type "Product". Did you mean "name"? [2:3]"#,
                #"Cannot query field "skus" on type "Product". Did you mean "sku"? [3:3]"#,
                #"Cannot query field "Name" on type "Product". Did you mean "name"? [4:3]"#,
            ]),
        ValidationCase("fields on correct type: several suggestions", #"{ catalogVersion { versoin catalog row } }"#,
            [
                #"Cannot query field "versoin" on type "CatalogVersion". Did you mean "version"? [1:20]"#,
                #"Cannot query field "catalog" on type "CatalogVersion". Did you mean "catalogRow"? [1:28]"#,
                #"Cannot query field "row" on type "CatalogVersion". [1:36]"#,
            ]),
        ValidationCase("fields on correct type: __schema not on nested type", #"{ product(id: 1) { __schema { queryType { name } } } }"#,
            [
                #"Cannot query field "__schema" on type "Product". [1:20]"#,
            ]),
        ValidationCase("fields on correct type: alias still checked", #"{ p: prodct(id: 1) { name } }"#,
            [
                #"Cannot query field "prodct" on type "Query". Did you mean "product" or "products"? [1:3]"#,
            ]),
        ValidationCase("fields on correct type: union only __typename", schema: .pets, #"{ pet { __typename name } }"#,
            [
                #"Cannot query field "name" on type "Pet". Did you mean to use an inline fragment on "Named", "Cat", or "Dog"? [1:20]"#,
            ]),
        ValidationCase("fields on correct type: suggests fragment types on interface", schema: .pets, #"{ node(id: 1) { name barks } }"#,
            [
                #"Cannot query field "name" on type "Node". Did you mean to use an inline fragment on "Named", "Cat", "Dog", or "Human"? [1:17]"#,
                #"Cannot query field "barks" on type "Node". Did you mean to use an inline fragment on "Dog"? [1:22]"#,
            ]),
        ValidationCase("fields on correct type: suggests fragment types on union", schema: .pets, #"{ pet { nickname meows } being { iq } }"#,
            [
                #"Cannot query field "nickname" on type "Pet". Did you mean to use an inline fragment on "Cat" or "Dog"? [1:9]"#,
                #"Cannot query field "meows" on type "Pet". Did you mean to use an inline fragment on "Cat"? [1:18]"#,
                #"Cannot query field "iq" on type "Being". Did you mean to use an inline fragment on "Human"? [1:34]"#,
            ]),
        ValidationCase("scalar leafs: leaves and objects", #"{ catalogVersion { version } categories { id path { title } } }"#,
            []),
        ValidationCase("scalar leafs: object without selection", #"{ catalogVersion product(id: 1) }"#,
            [
                #"Field "catalogVersion" of type "CatalogVersion!" must have a selection of subfields. Did you mean "catalogVersion { ... }"? [1:3]"#,
                #"Field "product" of type "Product" must have a selection of subfields. Did you mean "product { ... }"? [1:18]"#,
            ]),
        ValidationCase("scalar leafs: list of objects without selection", #"""
            {
              categories
            }
            """#,
            [
                #"Field "categories" of type "[Category!]!" must have a selection of subfields. Did you mean "categories { ... }"? [2:3]"#,
            ]),
        ValidationCase("scalar leafs: selection on scalar", #"{ catalogVersion { version { x } } product(id: 1) { images { url } } }"#,
            [
                #"Field "version" must not have a selection since type "Int!" has no subfields. [1:28]"#,
                #"Field "images" must not have a selection since type "[String!]!" has no subfields. [1:60]"#,
            ]),
        ValidationCase("scalar leafs: selection on enum", #"{ product(id: 1) { videos { kind { name } } } }"#,
            [
                #"Field "kind" must not have a selection since type "VideoKind!" has no subfields. [1:34]"#,
            ]),
        ValidationCase("scalar leafs: introspection types", #"{ __schema { types } __type(name: "Query") { name { x } } }"#,
            [
                #"Field "types" of type "[__Type!]!" must have a selection of subfields. Did you mean "types { ... }"? [1:14]"#,
                #"Field "name" must not have a selection since type "String" has no subfields. [1:51]"#,
            ]),
    ]

    @Test(arguments: cases) func validates(_ c: ValidationCase) { c.check() }
}
