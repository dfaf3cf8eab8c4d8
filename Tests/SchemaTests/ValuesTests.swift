import Testing
@testable import Schema

/// Input coercion: variables (spec 6.1.2), field arguments (6.4.1), literals, @skip/@include,
/// with graphql-js 16's messages.
@Suite struct ValuesTests {
    // MARK: Helpers

    enum Outcome: Equatable, Sendable {
        case ok([String: JSONValue])
        case errors([String])
    }

    static func operation(_ query: String, _ schema: GraphQLSchema) -> (Document, OperationDefinition)? {
        guard let doc = parseDocument(query), let op = doc.operations.first else { return nil }
        return (doc, op)
    }

    /// Coerces `inputs` for the first operation of `query`; errors as `message [line:column]`.
    static func coerce(_ query: String, _ inputs: [String: JSONValue], schema: GraphQLSchema = TestSchemas.catalog)
        -> Outcome
    {
        guard let (doc, op) = operation(query, schema) else { return .errors(["<syntax error>"]) }
        switch coerceVariableValues(schema: schema, operation: op, inputs: inputs, document: doc) {
        case .success(let values): return .ok(values)
        case .failure(let errors): return .errors(formatted(errors.errors))
        }
    }

    struct VariableCase: Sendable, CustomTestStringConvertible {
        let name: String
        let query: String
        let inputs: [String: JSONValue]
        let expected: Outcome
        let pets: Bool
        var testDescription: String { name }

        init(_ name: String, _ query: String, _ inputs: [String: JSONValue], ok: [String: JSONValue], pets: Bool = false) {
            self.name = name; self.query = query; self.inputs = inputs; self.expected = .ok(ok); self.pets = pets
        }
        init(_ name: String, _ query: String, _ inputs: [String: JSONValue], errors: [String], pets: Bool = false) {
            self.name = name; self.query = query; self.inputs = inputs; self.expected = .errors(errors); self.pets = pets
        }
    }

    static let id = "query Q($id: ID!) { product(id: $id) { name } }"
    static let first = "query Q($first: Int) { products(first: $first) { totalCount } }"
    static let text = "query Q($t: String!) { search(text: $t) { totalCount } }"
    static let flag = "query Q($b: Boolean!) { catalogVersion @skip(if: $b) { version } }"
    static let order = "query Q($o: ProductOrder) { products(orderBy: $o) { totalCount } }"
    static let filter = "query Q($f: ProductFilter) { products(filter: $f) { totalCount } }"
    static let complex = "query Q($c: Complex) { complex(arg: $c) }"

    static let variableCases: [VariableCase] = [
        // ID: strings, and integers as decimal strings.
        VariableCase("ID from string", id, ["id": .string("K1")], ok: ["id": .string("K1")]),
        VariableCase("ID from integer", id, ["id": .int(5)], ok: ["id": .string("5")]),
        VariableCase("ID from integral double", id, ["id": .double(1.0)], ok: ["id": .string("1")]),
        VariableCase("ID from fraction", id, ["id": .double(1.5)],
                     errors: [#"Variable "$id" got invalid value 1.5; ID cannot represent value: 1.5 [1:9]"#]),
        VariableCase("ID from boolean", id, ["id": .bool(true)],
                     errors: [#"Variable "$id" got invalid value true; ID cannot represent value: true [1:9]"#]),
        VariableCase("ID from list", id, ["id": .array([.string("a")])],
                     errors: [#"Variable "$id" got invalid value ["a"]; ID cannot represent value: ["a"] [1:9]"#]),
        VariableCase("ID from object", id, ["id": .object([("a", .int(1))])],
                     errors: [#"Variable "$id" got invalid value { a: 1 }; ID cannot represent value: { a: 1 } [1:9]"#]),
        // Required and null.
        VariableCase("required not provided", id, [:],
                     errors: [#"Variable "$id" of required type "ID!" was not provided. [1:9]"#]),
        VariableCase("required given null", id, ["id": .null],
                     errors: [#"Variable "$id" of non-null type "ID!" must not be null. [1:9]"#]),
        VariableCase("nullable given null", first, ["first": .null], ok: ["first": .null]),
        VariableCase("nullable not provided is absent", first, [:], ok: [:]),
        VariableCase("default applied when not provided", "query Q($first: Int = 10) { products(first: $first) { totalCount } }",
                     [:], ok: ["first": .int(10)]),
        VariableCase("explicit null overrides default", "query Q($first: Int = 10) { products(first: $first) { totalCount } }",
                     ["first": .null], ok: ["first": .null]),
        VariableCase("unknown inputs are ignored", first, ["first": .int(3), "other": .string("x")], ok: ["first": .int(3)]),
        // Int: 32-bit integers, integral doubles accepted.
        VariableCase("Int from integer", first, ["first": .int(7)], ok: ["first": .int(7)]),
        VariableCase("Int from integral double", first, ["first": .double(2.0)], ok: ["first": .int(2)]),
        VariableCase("Int from string", first, ["first": .string("x")],
                     errors: [#"Variable "$first" got invalid value "x"; Int cannot represent non-integer value: "x" [1:9]"#]),
        VariableCase("Int from fraction", first, ["first": .double(1.5)],
                     errors: [#"Variable "$first" got invalid value 1.5; Int cannot represent non-integer value: 1.5 [1:9]"#]),
        VariableCase("Int above 32 bits", first, ["first": .int(3_000_000_000)],
                     errors: [#"Variable "$first" got invalid value 3000000000; Int cannot represent non 32-bit signed integer value: 3000000000 [1:9]"#]),
        VariableCase("Int below 32 bits", first, ["first": .int(-2_147_483_649)],
                     errors: [#"Variable "$first" got invalid value -2147483649; Int cannot represent non 32-bit signed integer value: -2147483649 [1:9]"#]),
        VariableCase("Int limits", "query Q($a: Int, $b: Int) { a: products(first: $a) { totalCount } b: products(first: $b) { totalCount } }",
                     ["a": .int(2_147_483_647), "b": .int(-2_147_483_648)], ok: ["a": .int(2_147_483_647), "b": .int(-2_147_483_648)]),
        VariableCase("Int from huge double", first, ["first": .double(1e20)],
                     errors: [#"Variable "$first" got invalid value 100000000000000000000; Int cannot represent non 32-bit signed integer value: 100000000000000000000 [1:9]"#]),
        VariableCase("Int from list", first, ["first": .array([.int(1), .int(2)])],
                     errors: [#"Variable "$first" got invalid value [1, 2]; Int cannot represent non-integer value: [1, 2] [1:9]"#]),
        // Float.
        VariableCase("Float from integer", "query Q($f: Float) { __typename }", ["f": .int(3)], ok: ["f": .double(3)], pets: true),
        VariableCase("Float from double", "query Q($f: Float) { __typename }", ["f": .double(0.25)], ok: ["f": .double(0.25)], pets: true),
        VariableCase("Float from string", "query Q($f: Float) { __typename }", ["f": .string("1.5")],
                     errors: [#"Variable "$f" got invalid value "1.5"; Float cannot represent non numeric value: "1.5" [1:9]"#], pets: true),
        // String and Boolean: exact JSON types only.
        VariableCase("String from string", text, ["t": .string("ok")], ok: ["t": .string("ok")]),
        VariableCase("String from number", text, ["t": .int(5)],
                     errors: [#"Variable "$t" got invalid value 5; String cannot represent a non string value: 5 [1:9]"#]),
        VariableCase("String from boolean", text, ["t": .bool(true)],
                     errors: [#"Variable "$t" got invalid value true; String cannot represent a non string value: true [1:9]"#]),
        VariableCase("Boolean from boolean", flag, ["b": .bool(false)], ok: ["b": .bool(false)]),
        VariableCase("Boolean from string", flag, ["b": .string("true")],
                     errors: [#"Variable "$b" got invalid value "true"; Boolean cannot represent a non boolean value: "true" [1:9]"#]),
        VariableCase("Boolean from number", flag, ["b": .int(0)],
                     errors: [#"Variable "$b" got invalid value 0; Boolean cannot represent a non boolean value: 0 [1:9]"#]),
        // Enums: a string naming a value.
        VariableCase("enum value", order, ["o": .string("NAME")], ok: ["o": .string("NAME")]),
        VariableCase("enum wrong case", order, ["o": .string("name")],
                     errors: [#"Variable "$o" got invalid value "name"; Value "name" does not exist in "ProductOrder" enum. Did you mean the enum value "NAME"? [1:9]"#]),
        VariableCase("enum unknown value", order, ["o": .string("OLDEST")],
                     errors: [#"Variable "$o" got invalid value "OLDEST"; Value "OLDEST" does not exist in "ProductOrder" enum. Did you mean the enum value "NEWEST"? [1:9]"#]),
        VariableCase("enum from number", order, ["o": .int(1)],
                     errors: [#"Variable "$o" got invalid value 1; Enum "ProductOrder" cannot represent non-string value: 1. [1:9]"#]),
        VariableCase("enum default literal", "query Q($o: ProductOrder = NEWEST) { products(orderBy: $o) { totalCount } }",
                     [:], ok: ["o": .string("NEWEST")]),
        // Input objects.
        VariableCase("input object with defaults in definition order", filter,
                     ["f": .object([("sku", .string("A")), ("categoryId", .int(3))])],
                     ok: ["f": .object([("categoryId", .string("3")), ("includeDescendants", .bool(false)), ("sku", .string("A"))])]),
        VariableCase("input object explicit null field", filter, ["f": .object([("letter", .null)])],
                     ok: ["f": .object([("includeDescendants", .bool(false)), ("letter", .null)])]),
        VariableCase("input object unknown fields", filter,
                     ["f": .object([("skuu", .string("A")), ("category", .int(3)), ("zzz", .int(1))])],
                     errors: [
                        #"Variable "$f" got invalid value { skuu: "A", category: 3, zzz: 1 }; Field "skuu" is not defined by type "ProductFilter". Did you mean "sku"? [1:9]"#,
                        #"Variable "$f" got invalid value { skuu: "A", category: 3, zzz: 1 }; Field "category" is not defined by type "ProductFilter". Did you mean "categoryId"? [1:9]"#,
                        #"Variable "$f" got invalid value { skuu: "A", category: 3, zzz: 1 }; Field "zzz" is not defined by type "ProductFilter". [1:9]"#,
                     ]),
        VariableCase("input object field errors with paths", filter,
                     ["f": .object([("categoryId", .double(1.5)), ("includeDescendants", .string("yes"))])],
                     errors: [
                        #"Variable "$f" got invalid value 1.5 at "f.categoryId"; ID cannot represent value: 1.5 [1:9]"#,
                        #"Variable "$f" got invalid value "yes" at "f.includeDescendants"; Boolean cannot represent a non boolean value: "yes" [1:9]"#,
                     ]),
        VariableCase("input object from string", filter, ["f": .string("x")],
                     errors: [#"Variable "$f" got invalid value "x"; Expected type "ProductFilter" to be an object. [1:9]"#]),
        VariableCase("input object from list", filter, ["f": .array([.object([("sku", .string("a"))])])],
                     errors: [#"Variable "$f" got invalid value [{ sku: "a" }]; Expected type "ProductFilter" to be an object. [1:9]"#]),
        VariableCase("input object missing required field", complex, ["c": .object([("intField", .int(1))])],
                     errors: [#"Variable "$c" got invalid value { intField: 1 }; Field "requiredField" of required type "Boolean!" was not provided. [1:9]"#],
                     pets: true),
        VariableCase("input object required field null", complex, ["c": .object([("requiredField", .null)])],
                     errors: [#"Variable "$c" got invalid value null at "c.requiredField"; Expected non-nullable type "Boolean!" not to be null. [1:9]"#],
                     pets: true),
        VariableCase("nested input object errors", complex,
                     ["c": .object([("requiredField", .bool(true)),
                                    ("nested", .object([("requiredField", .string("no")), ("nested", .object([]))]))])],
                     errors: [
                        #"Variable "$c" got invalid value "no" at "c.nested.requiredField"; Boolean cannot represent a non boolean value: "no" [1:9]"#,
                        #"Variable "$c" got invalid value {} at "c.nested.nested"; Field "requiredField" of required type "Boolean!" was not provided. [1:9]"#,
                     ], pets: true),
        VariableCase("deep value shown to depth two", complex,
                     ["c": .object([("nested", .object([("nested", .object([("x", .int(1))]))]))])],
                     errors: [
                        #"Variable "$c" got invalid value { nested: { nested: [Object] } }; Field "requiredField" of required type "Boolean!" was not provided. [1:9]"#,
                        #"Variable "$c" got invalid value { nested: { x: 1 } } at "c.nested"; Field "requiredField" of required type "Boolean!" was not provided. [1:9]"#,
                        #"Variable "$c" got invalid value { x: 1 } at "c.nested.nested"; Field "requiredField" of required type "Boolean!" was not provided. [1:9]"#,
                        #"Variable "$c" got invalid value { x: 1 } at "c.nested.nested"; Field "x" is not defined by type "Complex". [1:9]"#,
                     ], pets: true),
        // Lists: a single value is a list of one.
        VariableCase("list from single value", complex,
                     ["c": .object([("requiredField", .bool(true)), ("stringListField", .string("one"))])],
                     ok: ["c": .object([("requiredField", .bool(true)), ("nonNullField", .bool(false)),
                                        ("stringListField", .array([.string("one")]))])], pets: true),
        VariableCase("list item errors with indexes", complex,
                     ["c": .object([("requiredField", .bool(true)),
                                    ("stringListField", .array([.string("a"), .int(1), .null, .bool(false)]))])],
                     errors: [
                        #"Variable "$c" got invalid value 1 at "c.stringListField[1]"; String cannot represent a non string value: 1 [1:9]"#,
                        #"Variable "$c" got invalid value false at "c.stringListField[3]"; String cannot represent a non string value: false [1:9]"#,
                     ], pets: true),
        VariableCase("list of non-null with null item", "query Q($l: [ID!]) { __typename }", ["l": .array([.int(1), .null, .string("x")])],
                     errors: [#"Variable "$l" got invalid value null at "l[1]"; Expected non-nullable type "ID!" not to be null. [1:9]"#]),
        VariableCase("list of IDs", "query Q($l: [ID!]) { __typename }", ["l": .array([.int(1), .string("x")])],
                     ok: ["l": .array([.string("1"), .string("x")])]),
        VariableCase("nested list from scalar", "query Q($l: [[Int]]) { __typename }", ["l": .int(1)],
                     ok: ["l": .array([.array([.int(1)])])]),
        VariableCase("nested list item error", "query Q($l: [[Int]]) { __typename }",
                     ["l": .array([.array([.int(1)]), .int(2), .array([.double(3.5)])])],
                     errors: [#"Variable "$l" got invalid value 3.5 at "l[2][0]"; Int cannot represent non-integer value: 3.5 [1:9]"#]),
        // Definitions that are not input types, several errors in order.
        VariableCase("not an input type", "query Q($p: Product) { __typename }", ["p": .object([])],
                     errors: [#"Variable "$p" expected value of type "Product" which cannot be used as an input type. [1:13]"#]),
        VariableCase("several errors in definition order", "query Q($a: Int!, $b: String!, $c: ID) { __typename }",
                     ["c": .bool(false)],
                     errors: [
                        #"Variable "$a" of required type "Int!" was not provided. [1:9]"#,
                        #"Variable "$b" of required type "String!" was not provided. [1:19]"#,
                        #"Variable "$c" got invalid value false; ID cannot represent value: false [1:32]"#,
                     ]),
    ]

    @Test(arguments: variableCases) func coercesVariables(_ c: VariableCase) {
        let actual = Self.coerce(c.query, c.inputs, schema: c.pets ? TestSchemas.pets : TestSchemas.catalog)
        switch (actual, c.expected) {
        case (.ok(let a), .ok(let e)):
            #expect(a == e, "\(c.name)")
            // Input object fields in definition order.
            for (key, value) in e {
                if case .object(let expectedMembers) = value, case .object(let actualMembers)? = a[key] {
                    #expect(actualMembers.map(\.0) == expectedMembers.map(\.0), "\(c.name): field order")
                }
            }
        case (.errors(let a), .errors(let e)):
            #expect(a == e, "\(c.name)")
        default:
            Issue.record("\(c.name): got \(actual), expected \(c.expected)")
        }
    }

    @Test func variableErrorsAreCapped() {
        let defs = (0..<60).map { "$v\($0): Int!" }.joined(separator: ", ")
        let result = Self.coerce("query Q(\(defs)) { __typename }", [:])
        guard case .errors(let errors) = result else { Issue.record("expected errors"); return }
        #expect(errors.count == 51)
        #expect(errors.last == "Too many errors processing variables, error limit reached. Execution aborted. []")
    }

    @Test func inspectFormatsLikeJavaScript() {
        #expect(MessageFormat.number(1) == "1")
        #expect(MessageFormat.number(-0.5) == "-0.5")
        #expect(MessageFormat.number(1e21) == "1e+21")
        #expect(MessageFormat.number(1.5e-7) == "1.5e-7")
        #expect(MessageFormat.number(123456.789) == "123456.789")
        #expect(MessageFormat.number(0.000001) == "0.000001")
        #expect(MessageFormat.inspect(.array((0..<12).map { .int(Int64($0)) })) == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... 2 more items]")
        #expect(MessageFormat.inspect(.array([.array([.array([.int(1)])])])) == "[[[Array]]]")
        #expect(MessageFormat.inspect(.string("a\"b\n")) == #""a\"b\n""#)
        #expect(MessageFormat.inspect(.object([])) == "{}")
    }

    // MARK: Arguments

    /// Coerces the arguments of the first root field of `query`, with variables already coerced.
    static func arguments(_ query: String, variables: [String: JSONValue] = [:], schema: GraphQLSchema = TestSchemas.catalog)
        -> Outcome
    {
        guard let (doc, op) = operation(query, schema), case .field(let field)? = op.selectionSet.selections.first,
              let def = schema.fieldDef(parent: schema.queryType, name: field.name.value)
        else { return .errors(["<bad test query>"]) }
        do {
            return .ok(try coerceArgumentValues(schema: schema, field: def, node: field, variables: variables, document: doc))
        } catch {
            return .errors(formatted([error]))
        }
    }

    @Test func argumentDefaultsApplied() {
        #expect(Self.arguments("{ products { totalCount } }") == .ok(["orderBy": .string("CATALOG"), "first": .int(50)]))
    }

    @Test func argumentLiterals() {
        #expect(Self.arguments(#"{ products(filter: {categoryId: 7, sku: "X"}, orderBy: NAME, first: 3, after: "c") { totalCount } }"#)
            == .ok([
                "filter": .object([("categoryId", .string("7")), ("includeDescendants", .bool(false)), ("sku", .string("X"))]),
                "orderBy": .string("NAME"), "first": .int(3), "after": .string("c"),
            ]))
        #expect(Self.arguments(#"{ product(id: 12) { name } }"#) == .ok(["id": .string("12")]))
        #expect(Self.arguments(#"{ product(id: "K1") { name } }"#) == .ok(["id": .string("K1")]))
    }

    @Test func explicitNullStaysNull() {
        #expect(Self.arguments("{ products(first: null, orderBy: null) { totalCount } }")
            == .ok(["orderBy": .null, "first": .null]))
    }

    @Test func variablesInArguments() {
        let q = "query Q($n: Int, $o: ProductOrder, $c: ID) { products(first: $n, orderBy: $o, filter: {categoryId: $c}) { totalCount } }"
        // Not provided: the argument default (or the input field's default) applies.
        #expect(Self.arguments(q) == .ok([
            "filter": .object([("includeDescendants", .bool(false))]), "orderBy": .string("CATALOG"), "first": .int(50),
        ]))
        #expect(Self.arguments(q, variables: ["n": .int(5), "o": .string("NEWEST"), "c": .string("9")]) == .ok([
            "filter": .object([("categoryId", .string("9")), ("includeDescendants", .bool(false))]),
            "orderBy": .string("NEWEST"), "first": .int(5),
        ]))
        // Provided as null: null.
        #expect(Self.arguments(q, variables: ["n": .null]) == .ok([
            "filter": .object([("includeDescendants", .bool(false))]), "orderBy": .string("CATALOG"), "first": .null,
        ]))
    }

    @Test func argumentErrors() {
        #expect(Self.arguments("{\n  product { name } }")
            == .errors([#"Argument "id" of required type "ID!" was not provided. [2:3]"#]))
        #expect(Self.arguments("query Q($id: ID) { product(id: $id) { name } }")
            == .errors([#"Argument "id" of required type "ID!" was provided the variable "$id" which was not provided a runtime value. [1:32]"#]))
        #expect(Self.arguments("query Q($id: ID) { product(id: $id) { name } }", variables: ["id": .null])
            == .errors([#"Argument "id" of non-null type "ID!" must not be null. [1:32]"#]))
        #expect(Self.arguments("{ product(id: null) { name } }")
            == .errors([#"Argument "id" of non-null type "ID!" must not be null. [1:15]"#]))
        #expect(Self.arguments(#"{ products(first: "x") { totalCount } }"#)
            == .errors([#"Argument "first" has invalid value "x". [1:19]"#]))
        #expect(Self.arguments(#"{ products(filter: {nope: 1}) { totalCount } }"#)
            == .ok(["filter": .object([("includeDescendants", .bool(false))]), "orderBy": .string("CATALOG"), "first": .int(50)]))
    }

    // MARK: Literals

    static func literal(_ text: String, _ type: TypeRef, _ variables: [String: JSONValue] = [:],
                        schema: GraphQLSchema = TestSchemas.catalog) -> JSONValue? {
        guard let doc = parseDocument("{ f(a: \(text)) }"), let op = doc.operations.first,
              case .field(let field)? = op.selectionSet.selections.first, let arg = field.arguments.first
        else { return nil }
        return valueFromAST(arg.value, type: type, schema: schema, variables: variables)
    }

    @Test func literalsOfScalars() {
        #expect(Self.literal("12", .named("Int")) == .int(12))
        #expect(Self.literal("2147483648", .named("Int")) == nil)
        #expect(Self.literal("1.0", .named("Int")) == nil)
        #expect(Self.literal("12", .named("Float"), schema: TestSchemas.pets) == .double(12))
        #expect(Self.literal("1.5e3", .named("Float"), schema: TestSchemas.pets) == .double(1500))
        #expect(Self.literal("12", .named("ID")) == .string("12"))
        #expect(Self.literal(#""12""#, .named("ID")) == .string("12"))
        #expect(Self.literal("1.5", .named("ID")) == nil)
        #expect(Self.literal(#""""  block  """"#, .named("String")) == .string("  block  "))
        #expect(Self.literal("true", .named("String")) == nil)
        #expect(Self.literal("false", .named("Boolean")) == .bool(false))
        #expect(Self.literal("NAME", .named("ProductOrder")) == .string("NAME"))
        #expect(Self.literal(#""NAME""#, .named("ProductOrder")) == nil)
        #expect(Self.literal("OLDEST", .named("ProductOrder")) == nil)
    }

    @Test func literalsWithNullsListsAndObjects() {
        #expect(Self.literal("null", .named("Int")) == .null)
        #expect(Self.literal("null", .nonNull(.named("Int"))) == nil)
        #expect(Self.literal("3", .list(.named("Int"))) == .array([.int(3)]))
        #expect(Self.literal("[1, null]", .list(.named("Int"))) == .array([.int(1), .null]))
        #expect(Self.literal("[1, null]", .list(.nonNull(.named("Int")))) == nil)
        #expect(Self.literal("[1, $x]", .list(.named("Int"))) == .array([.int(1), .null]))
        #expect(Self.literal("[1, $x]", .list(.nonNull(.named("Int")))) == nil)
        #expect(Self.literal("[1, $x]", .list(.named("Int")), ["x": .int(4)]) == .array([.int(1), .int(4)]))
        #expect(Self.literal("{sku: \"a\", letter: $l}", .named("ProductFilter"))
            == .object([("includeDescendants", .bool(false)), ("sku", .string("a"))]))
        #expect(Self.literal("{sku: 1}", .named("ProductFilter")) == nil)
        #expect(Self.literal("\"x\"", .named("ProductFilter")) == nil)
        #expect(Self.literal("$v", .nonNull(.named("Int")), ["v": .null]) == nil)
        #expect(Self.literal("$v", .named("Int"), ["v": .null]) == .null)
        #expect(Self.literal("$v", .named("Int")) == nil)
        #expect(Self.literal("{intField: 1}", .named("Complex"), schema: TestSchemas.pets) == nil)
        #expect(Self.literal("{requiredField: true}", .named("Complex"), schema: TestSchemas.pets)
            == .object([("requiredField", .bool(true)), ("nonNullField", .bool(false))]))
    }

    // MARK: @skip / @include

    static func include(_ directives: String, _ variables: [String: JSONValue] = [:]) -> Bool? {
        guard let doc = parseDocument("{ a \(directives) }"), let op = doc.operations.first,
              case .field(let field)? = op.selectionSet.selections.first else { return nil }
        return shouldInclude(directives: field.directives, variables: variables)
    }

    @Test func skipAndInclude() {
        #expect(Self.include("") == true)
        #expect(Self.include("@skip(if: true)") == false)
        #expect(Self.include("@skip(if: false)") == true)
        #expect(Self.include("@include(if: false)") == false)
        #expect(Self.include("@include(if: true)") == true)
        #expect(Self.include("@include(if: true) @skip(if: true)") == false)
        #expect(Self.include("@include(if: false) @skip(if: false)") == false)
        #expect(Self.include("@skip(if: $s)", ["s": .bool(true)]) == false)
        #expect(Self.include("@include(if: $i)", ["i": .bool(false)]) == false)
        #expect(Self.include("@include(if: $i)", ["i": .bool(true)]) == true)
        #expect(Self.include("@deprecated") == true)
    }
}
