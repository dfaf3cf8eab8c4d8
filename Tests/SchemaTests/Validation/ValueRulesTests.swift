import Testing
@testable import Schema

// ValuesOfCorrectType, UniqueInputFieldNames.

@Suite struct ValueRulesTests {
    static let cases: [ValidationCase] = [
        ValidationCase("values: every valid literal", #"{ product(id: "K1478") { name } p2: product(id: 12) { name } products(filter: {categoryId: 3, includeDescendants: true, manufacturer: "ARRI", sku: """A""", letter: null}, orderBy: NEWEST, first: 0, after: null) { totalCount } }"#,
            []),
        ValidationCase("values: Int", #"{ a: products(first: 1.5) { totalCount } b: products(first: "3") { totalCount } c: products(first: 2147483648) { totalCount } d: products(first: -2147483648) { totalCount } e: products(first: true) { totalCount } f: products(first: NAME) { totalCount } }"#,
            [
                #"Int cannot represent non-integer value: 1.5 [1:22]"#,
                #"Int cannot represent non-integer value: "3" [1:61]"#,
                #"Int cannot represent non 32-bit signed integer value: 2147483648 [1:100]"#,
                #"Int cannot represent non-integer value: true [1:193]"#,
                #"Int cannot represent non-integer value: NAME [1:233]"#,
            ]),
        ValidationCase("values: ID", #"{ a: product(id: 1.0) { name } b: product(id: true) { name } c: product(id: ABC) { name } d: product(id: [1]) { name } e: product(id: {id: 1}) { name } }"#,
            [
                #"ID cannot represent a non-string and non-integer value: 1.0 [1:18]"#,
                #"ID cannot represent a non-string and non-integer value: true [1:47]"#,
                #"ID cannot represent a non-string and non-integer value: ABC [1:77]"#,
                #"ID cannot represent a non-string and non-integer value: [1] [1:106]"#,
                #"ID cannot represent a non-string and non-integer value: {id: 1} [1:135]"#,
            ]),
        ValidationCase("values: String and Boolean", #"{ a: search(text: 5) { totalCount } b: search(text: "x", after: FOO) { totalCount } c: category(id: 1) { productCount(includeDescendants: "yes") } d: category(id: 1) { productCount(includeDescendants: 1) } }"#,
            [
                #"String cannot represent a non string value: 5 [1:19]"#,
                #"String cannot represent a non string value: FOO [1:65]"#,
                #"Boolean cannot represent a non boolean value: "yes" [1:139]"#,
                #"Boolean cannot represent a non boolean value: 1 [1:202]"#,
            ]),
        ValidationCase("values: enum", #"{ a: products(orderBy: "NAME") { totalCount } b: products(orderBy: name) { totalCount } c: products(orderBy: OLDEST) { totalCount } d: products(orderBy: 1) { totalCount } e: products(orderBy: NAME) { totalCount } }"#,
            [
                #"Enum "ProductOrder" cannot represent non-enum value: "NAME". Did you mean the enum value "NAME"? [1:24]"#,
                #"Value "name" does not exist in "ProductOrder" enum. Did you mean the enum value "NAME"? [1:68]"#,
                #"Value "OLDEST" does not exist in "ProductOrder" enum. Did you mean the enum value "NEWEST"? [1:110]"#,
                #"Enum "ProductOrder" cannot represent non-enum value: 1. [1:154]"#,
            ]),
        ValidationCase("values: null into non-null", #"{ product(id: null) { name } search(text: null) { totalCount } }"#,
            [
                #"Expected value of type "ID!", found null. [1:15]"#,
                #"Expected value of type "String!", found null. [1:43]"#,
            ]),
        ValidationCase("values: input object unknown field", #"{ products(filter: {category: 1, skuu: "x", foo: 1}) { totalCount } }"#,
            [
                #"Field "category" is not defined by type "ProductFilter". Did you mean "categoryId"? [1:21]"#,
                #"Field "skuu" is not defined by type "ProductFilter". Did you mean "sku"? [1:34]"#,
                #"Field "foo" is not defined by type "ProductFilter". [1:45]"#,
            ]),
        ValidationCase("values: input object not an object", #"{ products(filter: "x") { totalCount } b: products(filter: [{sku: "x"}]) { totalCount } c: products(filter: true) { totalCount } }"#,
            [
                #"Expected value of type "ProductFilter", found "x". [1:20]"#,
                #"Expected value of type "ProductFilter", found [{sku: "x"}]. [1:60]"#,
                #"Expected value of type "ProductFilter", found true. [1:109]"#,
            ]),
        ValidationCase("values: input object field types", #"{ products(filter: {categoryId: 1.5, includeDescendants: "no", manufacturer: 3, letter: ["A"]}) { totalCount } }"#,
            [
                #"ID cannot represent a non-string and non-integer value: 1.5 [1:33]"#,
                #"Boolean cannot represent a non boolean value: "no" [1:58]"#,
                #"String cannot represent a non string value: 3 [1:78]"#,
                #"String cannot represent a non string value: ["A"] [1:89]"#,
            ]),
        ValidationCase("values: list coercion", schema: .pets, #"{ complex(arg: {requiredField: true, stringListField: "one"}) c2: complex(arg: {requiredField: true, stringListField: ["a", null, 3]}) }"#,
            [
                #"String cannot represent a non string value: 3 [1:131]"#,
            ]),
        ValidationCase("values: required input fields", schema: .pets, #"{ a: complex(arg: {intField: 1}) b: complex(arg: {requiredField: null}) c: complex(arg: {requiredField: false, nonNullField: null}) }"#,
            [
                #"Field "Complex.requiredField" of required type "Boolean!" was not provided. [1:19]"#,
                #"Expected value of type "Boolean!", found null. [1:66]"#,
                #"Expected value of type "Boolean!", found null. [1:126]"#,
            ]),
        ValidationCase("values: list into scalar", #"{ a: products(first: [1]) { totalCount } b: products(first: [1, 2]) { totalCount } }"#,
            [
                #"Int cannot represent non-integer value: [1] [1:22]"#,
                #"Int cannot represent non-integer value: [1, 2] [1:61]"#,
            ]),
        ValidationCase("values: object into enum", #"{ products(orderBy: {a: 1}) { totalCount } }"#,
            [
                #"Enum "ProductOrder" cannot represent non-enum value: {a: 1}. [1:21]"#,
            ]),
        ValidationCase("values: variable default values checked", #"query Q($a: Int = "x", $b: ProductFilter = {sku: 1, bad: true}, $c: ProductOrder = NAME, $d: ID! = null) { products(first: $a, filter: $b, orderBy: $c) { totalCount } product(id: $d) { name } }"#,
            [
                #"Int cannot represent non-integer value: "x" [1:19]"#,
                #"String cannot represent a non string value: 1 [1:50]"#,
                #"Field "bad" is not defined by type "ProductFilter". [1:53]"#,
                #"Expected value of type "ID!", found null. [1:100]"#,
            ]),
        ValidationCase("values: unknown argument values not checked", #"{ products(nope: {a: 1}, first: 1) { totalCount } }"#,
            [
                #"Unknown argument "nope" on field "Query.products". [1:12]"#,
            ]),
        ValidationCase("values: directive argument", #"{ catalogVersion @skip(if: "true") { version } categories @include(if: 1) { id } }"#,
            [
                #"Boolean cannot represent a non boolean value: "true" [1:28]"#,
                #"Boolean cannot represent a non boolean value: 1 [1:72]"#,
            ]),
        ValidationCase("values: block string", #"""
            { search(text: """
              multi
              line
            """) { totalCount } products(first: """ten""") { totalCount } }
            """#,
            [
                #"Int cannot represent non-integer value: """ten""" [4:37]"#,
            ]),
        ValidationCase("unique input field names: distinct", #"{ products(filter: {sku: "a", manufacturer: "b"}) { totalCount } }"#,
            []),
        ValidationCase("unique input field names: duplicate", #"{ products(filter: {sku: "a", manufacturer: "b", sku: "c"}) { totalCount } }"#,
            [
                #"There can be only one input field named "sku". [1:21 1:50]"#,
            ]),
        ValidationCase("unique input field names: nested objects scoped separately", schema: .pets, #"{ complex(arg: {requiredField: true, intField: 1}) b: complex(arg: {requiredField: true, requiredField: false, intField: 1, intField: 2}) }"#,
            [
                #"There can be only one input field named "requiredField". [1:69 1:90]"#,
                #"There can be only one input field named "intField". [1:112 1:125]"#,
            ]),
    ]

    @Test(arguments: cases) func validates(_ c: ValidationCase) { c.check() }
}
