import Testing
@testable import Schema

// KnownDirectives, UniqueDirectivesPerLocation.

@Suite struct DirectiveRulesTests {
    static let cases: [ValidationCase] = [
        ValidationCase("known directives: skip and include on fields and fragments", #"""
            query Q($b: Boolean!) { catalogVersion @skip(if: $b) { version } product(id: 1) { ...P @include(if: $b) ... on Product @skip(if: false) { sku } } }
            fragment P on Product { name }
            """#,
            []),
        ValidationCase("known directives: unknown", #"{ catalogVersion @unknown { version } categories @cached(ttl: 3) { id } }"#,
            [
                #"Unknown directive "@unknown". [1:18]"#,
                #"Unknown directive "@cached". [1:50]"#,
            ]),
        ValidationCase("known directives: misplaced", #"""
            query Q @skip(if: true) { catalogVersion { version } }
            fragment F on Query @include(if: true) { categories { id } }
            """#,
            [
                #"Directive "@skip" may not be used on QUERY. [1:9]"#,
                #"Directive "@include" may not be used on FRAGMENT_DEFINITION. [2:21]"#,
                #"Fragment "F" is never used. [2:1]"#,
            ]),
        ValidationCase("known directives: deprecated not executable", #"query Q($v: Int @deprecated) { catalogVersion @deprecated { version } }"#,
            [
                #"Directive "@deprecated" may not be used on VARIABLE_DEFINITION. [1:17]"#,
                #"Directive "@deprecated" may not be used on FIELD. [1:47]"#,
                #"Variable "$v" is never used in operation "Q". [1:9]"#,
            ]),
        ValidationCase("known directives: on variable definition", #"query Q($a: Boolean @skip(if: true)) { catalogVersion @include(if: $a) { version } }"#,
            [
                #"Directive "@skip" may not be used on VARIABLE_DEFINITION. [1:21]"#,
                #"Variable "$a" of type "Boolean" used in position expecting type "Boolean!". [1:9 1:68]"#,
            ]),
        ValidationCase("known directives: subscription location", #"subscription S @include(if: true) { catalogVersion { version } }"#,
            [
                #"Directive "@include" may not be used on SUBSCRIPTION. [1:16]"#,
            ]),
        ValidationCase("unique directives per location: once each", #"{ catalogVersion @skip(if: false) @include(if: true) { version } }"#,
            []),
        ValidationCase("unique directives per location: repeated on field", #"{ catalogVersion @skip(if: false) @skip(if: true) { version } }"#,
            [
                #"The directive "@skip" can only be used once at this location. [1:18 1:35]"#,
            ]),
        ValidationCase("unique directives per location: repeated on spread, inline fragment and fragment", #"""
            { product(id: 1) { ...P @include(if: true) @include(if: false) ... @skip(if: true) @skip(if: false) { sku } } }
            fragment P on Product @skip(if: true) @skip(if: true) { name }
            """#,
            [
                #"The directive "@include" can only be used once at this location. [1:25 1:44]"#,
                #"The directive "@skip" can only be used once at this location. [1:68 1:84]"#,
                #"The directive "@skip" can only be used once at this location. [2:23 2:39]"#,
                #"Directive "@skip" may not be used on FRAGMENT_DEFINITION. [2:23]"#,
                #"Directive "@skip" may not be used on FRAGMENT_DEFINITION. [2:39]"#,
            ]),
        ValidationCase("unique directives per location: same directive on different fields", #"{ a: catalogVersion @skip(if: true) { version } b: catalogVersion @skip(if: true) { version } }"#,
            []),
        ValidationCase("unique directives per location: three times", #"{ catalogVersion @skip(if: true) @skip(if: true) @skip(if: true) { version } }"#,
            [
                #"The directive "@skip" can only be used once at this location. [1:18 1:34]"#,
                #"The directive "@skip" can only be used once at this location. [1:18 1:50]"#,
            ]),
    ]

    @Test(arguments: cases) func validates(_ c: ValidationCase) { c.check() }
}
