import Testing
@testable import Schema

// Cases across rules: TypeInfo quirks, type-system definitions in a request, message printing.

@Suite struct EdgeCaseTests {
    static let cases: [ValidationCase] = [
        ValidationCase("unknown directive args resolve against field", #"{ product(id: 1) @foo(id: 1.5) { name } }"#,
            [
                #"Unknown directive "@foo". [1:18]"#,
                #"ID cannot represent a non-string and non-integer value: 1.5 [1:27]"#,
            ]),
        ValidationCase("sdl mixed", #"""
            { catalogVersion { version } }
            type Foo { a: Bar @foo b(x: Int = "s"): Int }
            extend type Query { z: Int @deprecated(reason: 1) }
            """#,
            [
                #"The "Foo" definition is not executable. [2:1]"#,
                #"The "Query" definition is not executable. [3:1]"#,
                #"Unknown type "Bar". [2:15]"#,
                #"Unknown directive "@foo". [2:19]"#,
                #"String cannot represent a non string value: 1 [3:48]"#,
            ]),
        ValidationCase("variable default in directive", #"query Q($a: Boolean = "x" @skip(if: 1)) { catalogVersion @include(if: $a) { version } }"#,
            [
                #"Boolean cannot represent a non boolean value: "x" [1:23]"#,
                #"Directive "@skip" may not be used on VARIABLE_DEFINITION. [1:27]"#,
                #"Boolean cannot represent a non boolean value: 1 [1:37]"#,
            ]),
        ValidationCase("field on scalar parent", #"{ catalogVersion { version { a(b: 1) } } }"#,
            [
                #"Field "version" must not have a selection since type "Int!" has no subfields. [1:28]"#,
            ]),
        ValidationCase("enum value in list position", #"{ products(orderBy: [NAME]) { totalCount } }"#,
            [
                #"Enum "ProductOrder" cannot represent non-enum value: [NAME]. Did you mean the enum value "NAME"? [1:21]"#,
            ]),
        ValidationCase("nested list into list", #"query Q($a: [[String]]) { search(text: "a") { totalCount } products(filter: {sku: $a}) { totalCount } }"#,
            [
                #"Variable "$a" of type "[[String]]" used in position expecting type "String". [1:9 1:83]"#,
            ]),
        ValidationCase("object in list position for ID", #"{ product(id: [{a: 1}]) { name } }"#,
            [
                #"ID cannot represent a non-string and non-integer value: [{a: 1}] [1:15]"#,
            ]),
        ValidationCase("fragment on unknown type", #"""
            { ...F }
            fragment F on Nope { a }
            """#,
            [
                #"Unknown type "Nope". [2:15]"#,
            ]),
        ValidationCase("inline fragment on unknown type", #"{ ... on Nope { a } }"#,
            [
                #"Unknown type "Nope". [1:10]"#,
            ]),
        ValidationCase("spread of fragment on scalar", #"""
            { ...F }
            fragment F on String { a }
            """#,
            [
                #"Fragment "F" cannot condition on non composite type "String". [2:15]"#,
            ]),
        ValidationCase("mutation without type", #"mutation M { a }"#,
            []),
        ValidationCase("subscription unknown field", #"subscription S { nope }"#,
            [
                #"Cannot query field "nope" on type "Subscription". [1:18]"#,
            ]),
        ValidationCase("duplicate fragment, both spread", #"""
            { ...A }
            fragment A on Query { categories { id } }
            fragment A on Query { x: categories { id } }
            """#,
            [
                #"There can be only one fragment named "A". [2:10 3:10]"#,
            ]),
        ValidationCase("alias conflicts across inline fragment types", #"{ product(id: 1) { ... on Product { a: name } a: id } }"#,
            [
                #"Fields "a" conflict because "name" and "id" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:37 1:47]"#,
            ]),
        ValidationCase("interface field via fragment on object", schema: .pets, #"{ node(id: 1) { ... on Dog { name } ... on Cat { name: meows } } }"#,
            [
                #"Fields "name" conflict because they return conflicting types "String" and "Boolean". Use different aliases on the fields to fetch both if this was intentional. [1:30 1:50]"#,
            ]),
        ValidationCase("overlap: mutually exclusive parents, different types", schema: .pets, #"{ node(id: 1) { ... on Dog { x: name } ... on Cat { x: meows } } }"#,
            [
                #"Fields "x" conflict because they return conflicting types "String" and "Boolean". Use different aliases on the fields to fetch both if this was intentional. [1:30 1:53]"#,
            ]),
        ValidationCase("overlap: mutex nested", schema: .pets, #"{ node(id: 1) { ... on Dog { owner { x: name } } ... on Human { owner: pets { x: __typename } } } }"#,
            [
                #"Fields "owner" conflict because they return conflicting types "Human" and "[Pet]". Use different aliases on the fields to fetch both if this was intentional. [1:30 1:65]"#,
            ]),
        ValidationCase("deep overlap through fragments in subselections", schema: .pets, #"""
            { dog { ...A } dog { ...B } }
            fragment A on Dog { owner { n: name } }
            fragment B on Dog { owner { n: iq } }
            """#,
            [
                #"Fields "dog" conflict because subfields "owner" conflict because subfields "n" conflict because "name" and "iq" are different fields. Use different aliases on the fields to fetch both if this was intentional. [1:3 2:21 2:29 1:16 3:21 3:29]"#,
            ]),
        ValidationCase("variables: list variable into item position with default", #"query Q($a: [String] = ["x"]) { products(filter: {sku: $a}) { totalCount } }"#,
            [
                #"Variable "$a" of type "[String]" used in position expecting type "String". [1:9 1:56]"#,
            ]),
        ValidationCase("variables: __type name variable", #"query Q($n: String) { __type(name: $n) { name } }"#,
            [
                #"Variable "$n" of type "String" used in position expecting type "String!". [1:9 1:36]"#,
            ]),
        ValidationCase("input object required via variable", schema: .pets, #"query Q($b: Boolean) { complex(arg: {requiredField: $b}) }"#,
            [
                #"Variable "$b" of type "Boolean" used in position expecting type "Boolean!". [1:9 1:53]"#,
            ]),
        ValidationCase("null in list of non-null", schema: .pets, #"query { complex(arg: {requiredField: true, stringListField: [null]}) }"#,
            []),
        ValidationCase("string block printing in message", #"{ products(first: """a """ ) { totalCount } }"#,
            [
                #"Int cannot represent non-integer value: """a """ [1:19]"#,
            ]),
        ValidationCase("string escapes printing", #"{ products(first: "tab\there \u00e9 \\ \" ") { totalCount } }"#,
            [
                #"Int cannot represent non-integer value: "tab\there é \\ \" " [1:19]"#,
            ]),
        ValidationCase("float exponent printing", #"{ products(first: 1e3) { totalCount } product(id: -0.0) { name } }"#,
            [
                #"Int cannot represent non-integer value: 1e3 [1:19]"#,
                #"ID cannot represent a non-string and non-integer value: -0.0 [1:51]"#,
            ]),
        ValidationCase("many suggestions capped at five", #"{ product(id: 1) { i } }"#,
            [
                #"Cannot query field "i" on type "Product". Did you mean "id"? [1:20]"#,
            ]),
        ValidationCase("typename on union and introspection args", schema: .pets, #"{ pet { __typename } __type(name: 1) { name } }"#,
            [
                #"String cannot represent a non string value: 1 [1:35]"#,
            ]),
        ValidationCase("sdl: standard types known, unknown suggested", #"""
            type A { a: String b: __Type c: Strin d: Nope }
            scalar S @specifiedBy(url: 1)
            """#,
            [
                #"The "A" definition is not executable. [1:1]"#,
                #"The "S" definition is not executable. [2:1]"#,
                #"Unknown type "Strin". Did you mean "String"? [1:33]"#,
                #"Unknown type "Nope". [1:42]"#,
                #"String cannot represent a non string value: 1 [2:28]"#,
            ]),
        ValidationCase("sdl: directive locations and uniqueness across extensions", #"""
            type T @deprecated { f(a: Int @deprecated @deprecated): Int @skip(if: true) }
            extend type T @deprecated
            enum E { A @deprecated(reason: "x", why: 1) }
            input I { x: Int @deprecated }
            extend input I { y: Int @deprecated }
            schema @include { query: Query }
            extend schema @include(if: true)
            """#,
            [
                #"The "T" definition is not executable. [1:1]"#,
                #"The "T" definition is not executable. [2:1]"#,
                #"The "E" definition is not executable. [3:1]"#,
                #"The "I" definition is not executable. [4:1]"#,
                #"The "I" definition is not executable. [5:1]"#,
                #"The schema definition is not executable. [6:1]"#,
                #"The schema definition is not executable. [7:1]"#,
                #"Directive "@deprecated" may not be used on OBJECT. [1:8]"#,
                #"The directive "@deprecated" can only be used once at this location. [1:31 1:43]"#,
                #"Directive "@skip" may not be used on FIELD_DEFINITION. [1:61]"#,
                #"The directive "@deprecated" can only be used once at this location. [1:8 2:15]"#,
                #"Directive "@deprecated" may not be used on OBJECT. [2:15]"#,
                #"Unknown argument "why" on directive "@deprecated". [3:37]"#,
                #"Directive "@include" may not be used on SCHEMA. [6:8]"#,
                #"Directive "@include" argument "if" of type "Boolean!" is required, but it was not provided. [6:8]"#,
                #"The directive "@include" can only be used once at this location. [6:8 7:15]"#,
                #"Directive "@include" may not be used on SCHEMA. [7:15]"#,
            ]),
        ValidationCase("sdl: directive definitions used in the request", #"""
            directive @cache(ttl: Int!) repeatable on FIELD
            directive @once on FIELD | QUERY
            query Q @once { catalogVersion @cache(ttl: 1) @cache @once @once(x: 1) { version } }
            """#,
            [
                #"The "cache" definition is not executable. [1:1]"#,
                #"The "once" definition is not executable. [2:1]"#,
                #"The directive "@once" can only be used once at this location. [3:54 3:60]"#,
                #"Directive "@cache" argument "ttl" of type "Int!" is required, but it was not provided. [3:47]"#,
                #"Unknown argument "x" on directive "@once". [3:66]"#,
            ]),
        ValidationCase("directive unknown on variable definition", #"query Q($a: Int @unknown) { products(first: $a) { totalCount } }"#,
            [
                #"Unknown directive "@unknown". [1:17]"#,
            ]),
    ]

    @Test(arguments: cases) func validates(_ c: ValidationCase) { c.check() }
}
