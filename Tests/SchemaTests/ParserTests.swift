import Testing
@testable import Schema

/// One parser error case: input, expected message (without "Syntax Error: "), line, column.
struct ParseErrorCase: Sendable, CustomTestStringConvertible {
    let input: String
    let message: String
    let line: Int
    let column: Int
    init(_ input: String, _ message: String, _ line: Int, _ column: Int) {
        self.input = input; self.message = message; self.line = line; self.column = column
    }
    var testDescription: String { input.debugDescription }
}

private func syntaxError(_ text: String, maxDepth: Int = 200, maxTokens: Int = 50_000) -> GraphQLError? {
    do {
        _ = try Parser.parse(Source(text), maxDepth: maxDepth, maxTokens: maxTokens)
        return nil
    } catch {
        return error.error
    }
}

private func text(_ doc: Document, _ loc: Location) -> String {
    String(decoding: doc.source.body[loc.start..<loc.end], as: UTF8.self)
}

@Suite struct ParserTests {
    static let errorCases: [ParseErrorCase] = [
        // Documents and operations.
        ParseErrorCase("", "Unexpected <EOF>.", 1, 1),
        ParseErrorCase("   # only a comment", "Unexpected <EOF>.", 1, 20),
        ParseErrorCase("{", "Expected Name, found <EOF>.", 1, 2),
        ParseErrorCase("{ }", "Expected Name, found \"}\".", 1, 3),
        ParseErrorCase("{ a } }", "Unexpected \"}\".", 1, 7),
        ParseErrorCase("notAnOperation Foo { field }", "Unexpected Name \"notAnOperation\".", 1, 1),
        ParseErrorCase("...", "Unexpected \"...\".", 1, 1),
        ParseErrorCase("{ \"\"", "Expected Name, found String \"\".", 1, 3),
        ParseErrorCase("query", "Expected \"{\", found <EOF>.", 1, 6),
        ParseErrorCase("query Foo Bar { a }", "Expected \"{\", found Name \"Bar\".", 1, 11),
        ParseErrorCase("subscription { a } mutation", "Expected \"{\", found <EOF>.", 1, 28),
        ParseErrorCase("\"Description\" query { a }",
                       "Unexpected description, descriptions are supported only on type definitions.", 1, 1),
        ParseErrorCase("\"\"\"Description\"\"\" fragment F on T { a }",
                       "Unexpected description, descriptions are supported only on type definitions.", 1, 1),
        ParseErrorCase("\"Description\" { a }", "Unexpected \"{\".", 1, 15),
        ParseErrorCase("query {\n  a(\n}", "Expected Name, found \"}\".", 3, 1),
        // Fields and arguments.
        ParseErrorCase("{ field: {} }", "Expected Name, found \"{\".", 1, 10),
        ParseErrorCase("{ f() }", "Expected Name, found \")\".", 1, 5),
        ParseErrorCase("{ f(a) }", "Expected \":\", found \")\".", 1, 6),
        ParseErrorCase("{ f(a: ) }", "Unexpected \")\".", 1, 8),
        ParseErrorCase("{ f(a: $) }", "Expected Name, found \")\".", 1, 9),
        ParseErrorCase("{ f(a: 1 }", "Expected Name, found \"}\".", 1, 10),
        ParseErrorCase("{ f(a: [1, 2) }", "Unexpected \")\".", 1, 13),
        ParseErrorCase("{ f(a: {b 1}) }", "Expected \":\", found Int \"1\".", 1, 11),
        ParseErrorCase("{ f(a: {1: 2}) }", "Expected Name, found Int \"1\".", 1, 9),
        ParseErrorCase("{ f(a: 1.5e) }", "Invalid number, expected digit but got: \")\".", 1, 12),
        ParseErrorCase("query { f(a: \"unterminated) }", "Unterminated string.", 1, 30),
        ParseErrorCase("{ f @ }", "Expected Name, found \"}\".", 1, 7),
        ParseErrorCase("{ f @skip(if: ) }", "Unexpected \")\".", 1, 15),
        ParseErrorCase("{ a: b: c }", "Expected Name, found \":\".", 1, 7),
        ParseErrorCase("{ f(a: \"x\" b: 1 2) }", "Expected Name, found Int \"2\".", 1, 17),
        // Fragments.
        ParseErrorCase("{ ...MissingOn }\nfragment MissingOn Type", "Expected \"on\", found Name \"Type\".", 2, 20),
        ParseErrorCase("fragment on on on { on }", "Unexpected Name \"on\".", 1, 10),
        ParseErrorCase("{ ...on }", "Expected Name, found \"}\".", 1, 9),
        ParseErrorCase("{ ...on T }", "Expected \"{\", found \"}\".", 1, 11),
        ParseErrorCase("{ ... @skip(if: true) }", "Expected \"{\", found \"}\".", 1, 23),
        ParseErrorCase("fragment F { a }", "Expected \"on\", found \"{\".", 1, 12),
        ParseErrorCase("fragment F on { a }", "Expected Name, found \"{\".", 1, 15),
        ParseErrorCase("fragment F on T", "Expected \"{\", found <EOF>.", 1, 16),
        ParseErrorCase("fragment F($v: Int) on T { a }", "Expected \"on\", found \"(\".", 1, 11),
        // Variables and constant values.
        ParseErrorCase("query Foo($a) { x }", "Expected \":\", found \")\".", 1, 13),
        ParseErrorCase("query Foo($a: ) { x }", "Expected Name, found \")\".", 1, 15),
        ParseErrorCase("query Foo($a: [Int) { x }", "Expected \"]\", found \")\".", 1, 19),
        ParseErrorCase("query Foo($a: Int!!) { x }", "Expected \"$\", found \"!\".", 1, 19),
        ParseErrorCase("query Foo($a: Int = $b) { x }", "Unexpected variable \"$b\" in constant value.", 1, 21),
        ParseErrorCase("query Foo($a: Int = $) { x }", "Unexpected \"$\".", 1, 21),
        ParseErrorCase("query Foo($x: Complex = { a: { b: [ $var ] } }) { field }",
                       "Unexpected variable \"$var\" in constant value.", 1, 37),
        ParseErrorCase("query($a: Int @deprecated(reason: $x)) { a }",
                       "Unexpected variable \"$x\" in constant value.", 1, 35),
        ParseErrorCase("query Foo(a: Int) { x }", "Expected \"$\", found Name \"a\".", 1, 11),
        ParseErrorCase("query Foo() { x }", "Expected \"$\", found \")\".", 1, 11),
        // Type-system definitions.
        ParseErrorCase("type Foo {}", "Expected Name, found \"}\".", 1, 11),
        ParseErrorCase("type Foo { a }", "Expected \":\", found \"}\".", 1, 14),
        ParseErrorCase("type Foo { a: }", "Expected Name, found \"}\".", 1, 15),
        ParseErrorCase("type Foo { a(): Int }", "Expected Name, found \")\".", 1, 14),
        ParseErrorCase("type Foo { a(b): Int }", "Expected \":\", found \")\".", 1, 15),
        ParseErrorCase("type T { f(a: Int = [1, {b: $c}]): Int }", "Unexpected variable \"$c\" in constant value.", 1, 29),
        ParseErrorCase("type A implements & ", "Expected Name, found <EOF>.", 1, 21),
        ParseErrorCase("type A implements B & { a: Int }", "Expected Name, found \"{\".", 1, 23),
        ParseErrorCase("enum E { true }", "Name \"true\" is reserved and cannot be used for an enum value.", 1, 10),
        ParseErrorCase("enum E { A, null }", "Name \"null\" is reserved and cannot be used for an enum value.", 1, 13),
        ParseErrorCase("enum E { A B \"c\" }", "Expected Name, found \"}\".", 1, 18),
        ParseErrorCase("union U = | ", "Expected Name, found <EOF>.", 1, 13),
        ParseErrorCase("union U = A | | B", "Expected Name, found \"|\".", 1, 15),
        ParseErrorCase("input I { a: Int = $v }", "Unexpected variable \"$v\" in constant value.", 1, 20),
        ParseErrorCase("input I { a }", "Expected \":\", found \"}\".", 1, 13),
        ParseErrorCase("scalar", "Expected Name, found <EOF>.", 1, 7),
        ParseErrorCase("schema { query }", "Expected \":\", found \"}\".", 1, 16),
        ParseErrorCase("schema { foo: Query }", "Unexpected Name \"foo\".", 1, 10),
        ParseErrorCase("schema {}", "Expected Name, found \"}\".", 1, 9),
        ParseErrorCase("schema", "Expected \"{\", found <EOF>.", 1, 7),
        ParseErrorCase("directive @foo on UNKNOWN", "Unexpected Name \"UNKNOWN\".", 1, 19),
        ParseErrorCase("directive @foo(a: Int) FIELD", "Expected \"on\", found Name \"FIELD\".", 1, 24),
        ParseErrorCase("directive foo on FIELD", "Expected \"@\", found Name \"foo\".", 1, 11),
        ParseErrorCase("directive @foo on FIELD | ", "Expected Name, found <EOF>.", 1, 27),
        ParseErrorCase("\"d\" type T { \"d\" \"e\" f: Int }", "Expected Name, found String \"e\".", 1, 18),
        // Type-system extensions.
        ParseErrorCase("extend type Foo", "Unexpected <EOF>.", 1, 16),
        ParseErrorCase("extend interface I", "Unexpected <EOF>.", 1, 19),
        ParseErrorCase("extend union U", "Unexpected <EOF>.", 1, 15),
        ParseErrorCase("extend enum E", "Unexpected <EOF>.", 1, 14),
        ParseErrorCase("extend input I", "Unexpected <EOF>.", 1, 15),
        ParseErrorCase("extend scalar S", "Unexpected <EOF>.", 1, 16),
        ParseErrorCase("extend schema", "Unexpected <EOF>.", 1, 14),
        ParseErrorCase("extend foo Bar", "Unexpected Name \"foo\".", 1, 8),
        ParseErrorCase("extend \"desc\" type Foo", "Unexpected String \"desc\".", 1, 8),
        ParseErrorCase("extend", "Unexpected <EOF>.", 1, 7),
        ParseErrorCase("extend directive @d on FIELD", "Unexpected Name \"directive\".", 1, 8),
        ParseErrorCase("\"desc\" extend type Foo { a: Int }",
                       "Unexpected description, descriptions are supported only on type definitions.", 1, 1),
        ParseErrorCase("extend type Foo { a: Int } extend type", "Expected Name, found <EOF>.", 1, 39),
        // Lexical errors surface through the parser with their own positions.
        ParseErrorCase("{ a(x: 01) }", "Invalid number, unexpected digit after 0: \"1\".", 1, 9),
        ParseErrorCase("{ a(x: \"\\q\") }", "Invalid character escape sequence: \"\\q\".", 1, 9),
        ParseErrorCase("{\n  é\n}", "Unexpected character: U+00E9.", 2, 3),
        ParseErrorCase("\"desc\" %", "Unexpected character: \"%\".", 1, 8),
    ]

    @Test(arguments: errorCases)
    func parseError(_ c: ParseErrorCase) {
        let error = syntaxError(c.input)
        #expect(error?.message == "Syntax Error: " + c.message)
        #expect(error?.locations == [SourceLocation(line: c.line, column: c.column)])
    }

    /// Documents that must parse, covering every production.
    static let validDocuments: [String] = [
        "{ a }",
        "{ a, b, c }",
        "query { a }",
        "query Q { a }",
        "mutation M { a }",
        "subscription S { a }",
        "query Q($a: Int, $b: [String!]! = [\"x\"], $c: In = {a: 1, b: [1.5, null, ENUM, true, false]}) { a }",
        "query Q($a: Int @dir, $b: Int = 1 @dir(x: 1)) @op(a: 1) { a }",
        "query @dir { a }",
        "{ alias: field(a: 1, b: \"s\", c: \"\"\"block\"\"\", d: $v, e: [], f: {}, g: -1.5e-3) @skip(if: $x) @include(if: true) { sub } }",
        "{ ... on T @dir { a } ... @dir { b } ... { c } ...Frag @dir }",
        "fragment Frag on T @dir { a ...Other }",
        "{ on: on(on: on) { on } }",
        "query query($query: query) { query }",
        "{ fragment: a subscription: b mutation: c extend: d type: e }",
        "{ a(x: {on: on, null: null, true: true}) }",
        "schema { query: Q mutation: M subscription: S }",
        "\"desc\" schema @d { query: Q }",
        "scalar S",
        "\"\"\"desc\"\"\" scalar S @specifiedBy(url: \"https://x\")",
        "type T",
        "type T implements I & J @d { a: Int }",
        "type T implements & I { a: Int }",
        "type T { \"d\" a(\"d\" x: Int = 1 @d, y: [T!]): [T!]! @deprecated(reason: \"r\") }",
        "interface I implements J { a: Int }",
        "union U = A | B",
        "union U = | A | B",
        "union U @d",
        "enum E { A \"d\" B @deprecated C }",
        "input I { a: Int = 1 @d, \"d\" b: [I] }",
        "directive @d(a: Int = 1) repeatable on FIELD | QUERY",
        "directive @d on | FIELD_DEFINITION | ARGUMENT_DEFINITION | ENUM_VALUE | INPUT_FIELD_DEFINITION",
        "directive @d on SCHEMA | SCALAR | OBJECT | INTERFACE | UNION | ENUM | INPUT_OBJECT | VARIABLE_DEFINITION",
        "directive @d on MUTATION | SUBSCRIPTION | FRAGMENT_DEFINITION | FRAGMENT_SPREAD | INLINE_FRAGMENT",
        "extend schema @d",
        "extend schema { mutation: M }",
        "extend scalar S @d",
        "extend type T implements I",
        "extend type T @d",
        "extend type T { b: Int }",
        "extend interface I { b: Int }",
        "extend union U = C",
        "extend union U @d",
        "extend enum E { D }",
        "extend input I { c: Int }",
        "type Query { a: Int } extend type Query { b: Int } { a b }",
        "\u{FEFF}# comment\n{ a # trailing\n}",
    ]

    @Test(arguments: validDocuments)
    func parsesValidDocument(_ text: String) throws {
        let doc = try Parser.parse(Source(text))
        #expect(!doc.definitions.isEmpty)
    }

    @Test func kitchenSinkQuery() throws {
        let text = """
            query queryName($foo: ComplexType, $site: Site = MOBILE) @onQuery {
              whoever123is: node(id: [123, 456]) {
                id ,
                ... on User @onInlineFragment {
                  field2 {
                    id ,
                    alias: field1(first:10, after:$foo,) @include(if: $foo) {
                      id,
                      ...frag @onFragmentSpread
                    }
                  }
                }
                ... @skip(unless: $foo) {
                  id
                }
                ... {
                  id
                }
              }
            }

            subscription StoryLikeSubscription($input: StoryLikeSubscribeInput @onVariableDefinition) {
              storyLikeSubscribe(input: $input) {
                story { likers { count } }
              }
            }

            fragment frag on Friend @onFragmentDefinition {
              foo(size: $size, bar: $b, obj: {key: "value", block: \"""
                  block string uses \\\"""
              \"""})
            }

            {
              unnamed(truthy: true, falsy: false, nullish: null),
              query
            }
            """
        let doc = try Parser.parse(Source(text))
        #expect(doc.definitions.count == 4)
        #expect(doc.operations.map(\.operation) == [.query, .subscription, .query])
        #expect(doc.operations.map { $0.name?.value } == ["queryName", "StoryLikeSubscription", nil])
        #expect(doc.fragments.map(\.name.value) == ["frag"])

        let q = doc.operations[0]
        #expect(q.variableDefinitions.map(\.variable.name.value) == ["foo", "site"])
        #expect(TypeRef(q.variableDefinitions[0].type) == .named("ComplexType"))
        guard case .enumValue("MOBILE", _)? = q.variableDefinitions[1].defaultValue else {
            Issue.record("default MOBILE"); return
        }
        #expect(q.directives.map(\.name.value) == ["onQuery"])
        guard case .field(let node) = q.selectionSet.selections[0] else { Issue.record("field"); return }
        #expect(node.alias?.value == "whoever123is")
        #expect(node.name.value == "node")
        #expect(node.responseKey == "whoever123is")
        guard case .list(let ids, _) = node.arguments[0].value else { Issue.record("list"); return }
        #expect(ids.count == 2)
        let kinds = node.selectionSet?.selections.map { sel -> String in
            switch sel {
            case .field: return "field"
            case .fragmentSpread: return "spread"
            case .inlineFragment(let i): return "inline:\(i.typeCondition?.name.value ?? "-")"
            }
        }
        #expect(kinds == ["field", "inline:User", "inline:-", "inline:-"])

        let frag = doc.fragments[0]
        #expect(frag.typeCondition.name.value == "Friend")
        guard case .field(let foo) = frag.selectionSet.selections[0],
              case .object(let fields, _) = foo.arguments[2].value,
              case .string(let block, block: true, _) = fields[1].value
        else { Issue.record("block string argument"); return }
        #expect(block == "block string uses \"\"\"")

        guard case .field(let unnamed) = doc.operations[2].selectionSet.selections[0] else { return }
        guard case .boolean(true, _) = unnamed.arguments[0].value,
              case .boolean(false, _) = unnamed.arguments[1].value,
              case .null = unnamed.arguments[2].value
        else { Issue.record("literals"); return }
    }

    @Test func kitchenSinkSchema() throws {
        let text = """
            \"""This is a description of the schema as a whole.\"""
            schema {
              query: QueryType
              mutation: MutationType
            }

            \"""
            This is a description
            of the `Foo` type.
            \"""
            type Foo implements Bar & Baz & Two {
              "Description of the `one` field."
              one: Type
              \"""This is a description of the `two` field.\"""
              two(
                \"""This is a description of the `argument` argument.\"""
                argument: InputType!
              ): Type
              three(argument: InputType, other: String): Int
              four(argument: String = "string"): String
              five(argument: [String] = ["string", "string"]): String
              six(argument: InputType = {key: "value"}): Type
              seven(argument: Int = null): Type
              eight: Int @deprecated(reason: "gone")
            }

            extend type Foo @onType
            interface Bar { one: Type }
            union Feed = | Story | Article | Advert
            scalar CustomScalar @specifiedBy(url: "https://example.com")
            enum Site { DESKTOP MOBILE "described" WEB @deprecated }
            input InputType { key: String! answer: Int = 42 }
            extend input InputType { other: Float = 12.3e-4 }
            directive @include2(if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
            directive @myRepeatableDir(name: String!) repeatable on OBJECT | INTERFACE
            extend schema @onSchema { subscription: SubscriptionType }
            """
        let doc = try Parser.parse(Source(text))
        let defs = doc.definitions.compactMap { d -> TypeSystemDefinition? in
            if case .typeSystem(let t) = d { return t } else { return nil }
        }
        #expect(defs.count == 12)

        guard case .schema(let sd, _, let ops, false, _) = defs[0] else { Issue.record("schema"); return }
        #expect(sd == "This is a description of the schema as a whole.")
        #expect(ops.map(\.operation) == [.query, .mutation])
        #expect(ops.map(\.type.name.value) == ["QueryType", "MutationType"])

        guard case .object(let d, let name, let ifaces, _, let fields, false, _) = defs[1] else {
            Issue.record("object"); return
        }
        #expect(d == "This is a description\nof the `Foo` type.")
        #expect(name.value == "Foo")
        #expect(ifaces.map(\.name.value) == ["Bar", "Baz", "Two"])
        #expect(fields.map(\.name.value) == ["one", "two", "three", "four", "five", "six", "seven", "eight"])
        #expect(fields[0].description == "Description of the `one` field.")
        #expect(fields[1].arguments[0].description == "This is a description of the `argument` argument.")
        #expect(TypeRef(fields[1].arguments[0].type) == .nonNull(.named("InputType")))
        #expect(fields[2].arguments.map(\.name.value) == ["argument", "other"])
        guard case .string("string", block: false, _)? = fields[3].arguments[0].defaultValue,
              case .list(let l, _)? = fields[4].arguments[0].defaultValue, l.count == 2,
              case .object(let o, _)? = fields[5].arguments[0].defaultValue, o[0].name.value == "key",
              case .null? = fields[6].arguments[0].defaultValue
        else { Issue.record("defaults"); return }
        #expect(fields[7].directives.map(\.name.value) == ["deprecated"])

        guard case .object(nil, let extName, let extIfaces, let extDirs, let extFields, true, _) = defs[2] else {
            Issue.record("extension"); return
        }
        #expect(extIfaces.isEmpty && extFields.isEmpty)
        #expect(extName.value == "Foo")
        #expect(extDirs.map(\.name.value) == ["onType"])

        guard case .interface(_, let iname, _, _, let ifields, false, _) = defs[3] else { Issue.record("interface"); return }
        #expect(iname.value == "Bar" && ifields.count == 1)
        guard case .union(_, _, _, let members, false, _) = defs[4] else { Issue.record("union"); return }
        #expect(members.map(\.name.value) == ["Story", "Article", "Advert"])
        guard case .scalar(_, let sname, let sdirs, false, _) = defs[5] else { Issue.record("scalar"); return }
        #expect(sname.value == "CustomScalar" && sdirs[0].name.value == "specifiedBy")
        guard case .enumType(_, _, _, let values, false, _) = defs[6] else { Issue.record("enum"); return }
        #expect(values.map(\.name.value) == ["DESKTOP", "MOBILE", "WEB"])
        #expect(values.map(\.description) == [nil, nil, "described"])
        #expect(values[2].directives.map(\.name.value) == ["deprecated"])
        guard case .inputObject(_, _, _, let inputs, false, _) = defs[7] else { Issue.record("input"); return }
        #expect(inputs.map(\.name.value) == ["key", "answer"])
        guard case .inputObject(_, _, _, let moreInputs, true, _) = defs[8] else { Issue.record("extend input"); return }
        guard case .float("12.3e-4", _)? = moreInputs[0].defaultValue else { Issue.record("float default"); return }
        guard case .directive(_, let dname, let dargs, false, let locs, _) = defs[9] else { Issue.record("directive"); return }
        #expect(dname.value == "include2" && dargs.count == 1)
        #expect(locs.map(\.value) == ["FIELD", "FRAGMENT_SPREAD", "INLINE_FRAGMENT"])
        guard case .directive(_, _, _, true, let rlocs, _) = defs[10] else { Issue.record("repeatable"); return }
        #expect(rlocs.map(\.value) == ["OBJECT", "INTERFACE"])
        guard case .schema(nil, let sdirs2, let sops, true, _) = defs[11] else { Issue.record("extend schema"); return }
        #expect(sdirs2.map(\.name.value) == ["onSchema"])
        #expect(sops.map(\.operation) == [.subscription])
    }

    @Test func nodeLocations() throws {
        let doc = try Parser.parse(Source("query Q($v: [Int!]! = [1]) {\n  a: f(x: {y: $v}) @d { ...F }\n}\nfragment F on T { b }"))
        let op = doc.operations[0]
        #expect(doc.loc == Location(start: 0, end: doc.source.body.count))
        #expect(text(doc, op.loc).hasPrefix("query Q("))
        #expect(text(doc, op.loc).hasSuffix("}\n}"))
        #expect(text(doc, op.variableDefinitions[0].loc) == "$v: [Int!]! = [1]")
        #expect(text(doc, op.variableDefinitions[0].type.loc) == "[Int!]!")
        guard case .nonNull(.list(let inner, let listLoc), _) = op.variableDefinitions[0].type else {
            Issue.record("type"); return
        }
        #expect(text(doc, listLoc) == "[Int!]")
        #expect(text(doc, inner.loc) == "Int!")
        guard case .field(let f) = op.selectionSet.selections[0] else { return }
        #expect(text(doc, f.loc) == "a: f(x: {y: $v}) @d { ...F }")
        #expect(doc.location(f.loc) == SourceLocation(line: 2, column: 3))
        #expect(text(doc, f.arguments[0].loc) == "x: {y: $v}")
        #expect(text(doc, f.arguments[0].value.loc) == "{y: $v}")
        #expect(text(doc, f.directives[0].loc) == "@d")
        #expect(text(doc, f.selectionSet!.loc) == "{ ...F }")
        #expect(text(doc, f.selectionSet!.selections[0].loc) == "...F")
        #expect(text(doc, doc.fragments[0].loc) == "fragment F on T { b }")
        #expect(doc.location(doc.fragments[0].loc) == SourceLocation(line: 4, column: 1))
    }

    @Test func stringValuesAreDecoded() throws {
        let doc = try Parser.parse(Source("{ f(a: \"x\\u00e9\\n\", b: \"\"\"\n    one\n      two\n  \"\"\") }"))
        guard case .field(let f) = doc.operations[0].selectionSet.selections[0],
              case .string(let a, block: false, _) = f.arguments[0].value,
              case .string(let b, block: true, _) = f.arguments[1].value
        else { Issue.record("strings"); return }
        #expect(a == "xé\n")
        #expect(b == "one\n  two")
    }

    // MARK: Limits

    @Test func selectionDepthLimit() {
        let ok = String(repeating: "{a", count: 200) + String(repeating: "}", count: 200)
        #expect(syntaxError(ok) == nil)
        let deep = String(repeating: "{a", count: 201) + String(repeating: "}", count: 201)
        let error = syntaxError(deep)
        #expect(error?.message == "Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.")
        #expect(error?.locations == [SourceLocation(line: 1, column: 401)])
        #expect(syntaxError(String(repeating: "{a", count: 11), maxDepth: 10)?.locations
                == [SourceLocation(line: 1, column: 21)])
    }

    @Test func listAndObjectValueDepthLimit() {
        // The selection set is level 1, so 199 nested lists still fit.
        let ok = "{ f(a: " + String(repeating: "[", count: 199) + String(repeating: "]", count: 199) + ") }"
        #expect(syntaxError(ok) == nil)
        let lists = "{ f(a: " + String(repeating: "[", count: 200) + String(repeating: "]", count: 200) + ") }"
        #expect(syntaxError(lists)?.message == "Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.")
        #expect(syntaxError(lists)?.locations == [SourceLocation(line: 1, column: 207)])
        let objects = "{ f(a: " + String(repeating: "{b: ", count: 300) + "1" + String(repeating: "}", count: 300) + ") }"
        #expect(syntaxError(objects)?.message == "Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.")
        let types = "query($v: " + String(repeating: "[", count: 201) + "Int" + String(repeating: "]", count: 201) + ") { a }"
        #expect(syntaxError(types)?.message == "Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.")
        #expect(syntaxError(types)?.locations == [SourceLocation(line: 1, column: 211)])
    }

    @Test func hugeNestingFailsCleanly() {
        let size = 64 * 1024
        #expect(syntaxError(String(repeating: "{", count: size))?.message == "Syntax Error: Expected Name, found \"{\".")
        #expect(syntaxError(String(repeating: "[", count: size))?.message == "Syntax Error: Unexpected \"[\".")
        #expect(syntaxError(String(repeating: "{a", count: size / 2))?.message
                == "Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.")
        #expect(syntaxError("{ f(a: " + String(repeating: "[", count: size))?.message
                == "Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.")
        #expect(syntaxError("{ f(a: " + String(repeating: "{a:", count: size / 3))?.message
                == "Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.")
        #expect(syntaxError("query($a: " + String(repeating: "[", count: size))?.message
                == "Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.")
        #expect(throws: GraphQLSyntaxError.self) { try Parser.parseValue(Source(String(repeating: "[", count: size))) }
        #expect(throws: GraphQLSyntaxError.self) { try Parser.parseType(Source(String(repeating: "[", count: size))) }
    }

    @Test func tokenLimit() {
        #expect(syntaxError("{ a b c }", maxTokens: 5) == nil)
        let error = syntaxError("{ a b c }", maxTokens: 4)
        #expect(error?.message == "Syntax Error: Document contains more than 4 tokens. Parsing aborted.")
        #expect(error?.locations == [SourceLocation(line: 1, column: 9)])

        let many = "{" + String(repeating: " a", count: 50_000) + " }"
        let big = syntaxError(many)
        #expect(big?.message == "Syntax Error: Document contains more than 50000 tokens. Parsing aborted.")
        #expect(big?.locations == [SourceLocation(line: 1, column: 100_001)])
        #expect(syntaxError("{" + String(repeating: " a", count: 49_998) + " }") == nil)
    }

    // MARK: parseValue / parseType

    @Test func parseValueAndType() throws {
        guard case .list(let items, _) = try Parser.parseValue(Source("[123 \"abc\" $v {a: [ENUM]}]")) else {
            Issue.record("list"); return
        }
        #expect(items.count == 4)
        guard case .int("123", _) = items[0], case .string("abc", block: false, _) = items[1],
              case .variable(let v) = items[2], case .object(let o, _) = items[3]
        else { Issue.record("items"); return }
        #expect(v.name.value == "v")
        #expect(o[0].name.value == "a")

        #expect(TypeRef(try Parser.parseType(Source("[[Int!]]!"))) == .nonNull(.list(.list(.nonNull(.named("Int"))))))
        #expect(throws: GraphQLSyntaxError.self) { try Parser.parseValue(Source("1 2")) }
        do {
            _ = try Parser.parseType(Source("Int!!"))
            Issue.record("expected an error")
        } catch {
            #expect(error.error.message == "Syntax Error: Expected <EOF>, found \"!\".")
            #expect(error.error.locations == [SourceLocation(line: 1, column: 5)])
        }
    }
}
