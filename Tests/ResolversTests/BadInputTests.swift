import Foundation
import Testing
@testable import Resolvers
import Schema

/// One hostile or malformed request and the exact response it must get.
struct BadInput: Sendable, CustomTestStringConvertible {
    enum Document: Sendable {
        /// Text, as a transport hands it to the engine.
        case text(String)
        /// Bytes decoded as a transport decodes them (invalid UTF-8 becomes U+FFFD).
        case bytes([UInt8])
    }
    let name: String
    let document: Document
    /// The variables as JSON text (bytes), parsed with JSONParser, as the transports parse them; nil: none.
    let variables: [UInt8]?
    let operationName: String?
    /// The exact response, or for variables that are not JSON, "JSON: " and the parse error.
    let expected: String

    init(_ name: String, _ query: String, variables: String? = nil, operationName: String? = nil, _ expected: String) {
        self.name = name; document = .text(query); self.variables = variables.map { Array($0.utf8) }
        self.operationName = operationName; self.expected = expected
    }

    init(_ name: String, bytes: [UInt8], variables: [UInt8]? = nil, _ expected: String) {
        self.name = name; document = .bytes(bytes); self.variables = variables
        operationName = nil; self.expected = expected
    }

    var testDescription: String { name }

    var query: String {
        switch document {
        case .text(let s): return s
        case .bytes(let b): return String(decoding: b, as: UTF8.self)
        }
    }
}

/// The bad-input suite over the engine's entry points (JSONParser for variables,
/// QueryService.prepare, CatalogSession.execute): every case gets its exact answer, and the same
/// session then still answers a normal query.
@Suite struct BadInputTests {
    let engine: TestEngine

    init() throws {
        engine = try TestEngine(path: try Fixture.make())
    }

    static let normalQuery = "{ categories { id } products(first: 2) { nodes { id } } }"
    static let normalAnswer = ##"{"data":{"categories":[{"id":"1"},{"id":"2"}],"products":{"nodes":[{"id":"4"},{"id":"2"}]}}}"##

    static func outcome(_ c: BadInput, _ engine: TestEngine) -> String {
        var variables: JSONValue?
        if let bytes = c.variables {
            do { variables = try JSONParser.parse(bytes) } catch { return "JSON: \(error)" }
        }
        return engine.run(c.query, variables: variables, operationName: c.operationName)
    }

    @Test(arguments: BadInputCases.all)
    func answersExactlyAndKeepsServing(_ c: BadInput) {
        let got = Self.outcome(c, engine)
        if ProcessInfo.processInfo.environment["CG_DUMP_BAD_INPUT"] != nil {
            print("CASE\t\(c.name)\t\(got)")
        }
        #expect(got == c.expected)
        #expect(engine.run(Self.normalQuery) == Self.normalAnswer)
    }

    @Test func casesAreManyAndNamedUniquely() {
        #expect(BadInputCases.all.count >= 100)
        #expect(Set(BadInputCases.all.map(\.name)).count == BadInputCases.all.count)
    }
}

/// The table. Generated inputs (long, deep, many) are built here so the expectations stay exact.
enum BadInputCases {
    static let q = "{ categories { id } }"
    static let ok = ##"{"data":{"categories":[{"id":"1"},{"id":"2"}]}}"##

    static func repeated(_ s: String, _ n: Int) -> String { String(repeating: s, count: n) }
    /// `{ category(id: 1) { parent { parent { ... { id } } } } }` with `depth` fields in the chain.
    static func categoryChain(_ depth: Int) -> String {
        "{ category(id: 1) { " + repeated("parent { ", depth - 2) + "id" + repeated(" }", depth - 2) + " } }"
    }
    /// 1-based column of the first occurrence of `needle` in a one-line ASCII document.
    static func column(_ document: String, _ needle: String) -> Int {
        guard let r = document.range(of: needle) else { return 0 }
        return document.utf8.distance(from: document.startIndex, to: r.lowerBound) + 1
    }
    /// A validation response with these errors (each without its closing brace, code added) and
    /// the error saying validation stopped at the cap of 100.
    static func cappedErrors(_ errors: [String]) -> String {
        let code = ##","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}"##
        return ##"{"errors":["## + errors.map { $0 + code }.joined(separator: ",")
            + ##",{"message":"Too many validation errors, error limit reached. Validation aborted.","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##
    }
    static let conflictingAliases = "{ " + (0..<500).map { "a: product(id: \($0)) { id }" }.joined(separator: " ") + " }"
    static let manyArguments = "{ categories(" + (0..<1000).map { "a\($0): 1" }.joined(separator: " ") + ") { id } }"
    static let manyVariables = "query (" + (0..<1000).map { "$v\($0): Int" }.joined(separator: " ") + ") { categories { id } }"
    static func aliases(_ n: Int) -> String {
        "{ " + (0..<n).map { "a\($0): __typename" }.joined(separator: " ") + " }"
    }
    static func aliasesAnswer(_ n: Int) -> String {
        ##"{"data":{"## + (0..<n).map { ##""a\##($0)":"Query""## }.joined(separator: ",") + "}}"
    }

    static let documents: [BadInput] = [
        BadInput("empty document", "", ##"{"errors":[{"message":"Syntax Error: Unexpected <EOF>.","locations":[{"line":1,"column":1}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("only whitespace and commas", " \t\n,,, \r\n", ##"{"errors":[{"message":"Syntax Error: Unexpected <EOF>.","locations":[{"line":3,"column":1}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("only a comment", "# nothing here", ##"{"errors":[{"message":"Syntax Error: Unexpected <EOF>.","locations":[{"line":1,"column":15}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("NUL byte after the document", "{ categories { id } }\u{0}", ##"{"errors":[{"message":"Syntax Error: Unexpected character: U+0000.","locations":[{"line":1,"column":22}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("NUL byte inside a name", "{ categ\u{0}ories { id } }", ##"{"errors":[{"message":"Syntax Error: Unexpected character: U+0000.","locations":[{"line":1,"column":8}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        // The word is "a", NUL, "b": no product holds it (LIKE used to stop at the NUL and find "a").
        BadInput("NUL byte inside a string literal", "{ search(text: \"a\u{0}b\") { totalCount } }", ##"{"data":{"search":{"totalCount":0}}}"##),
        BadInput("escaped NUL in a string literal", #"{ search(text: "a\u0000b") { totalCount } }"#, ##"{"data":{"search":{"totalCount":0}}}"##),
        BadInput("invalid UTF-8 byte in a name", bytes: Array("{ categ".utf8) + [0xFF] + Array("ories { id } }".utf8), ##"{"errors":[{"message":"Syntax Error: Unexpected character: U+FFFD.","locations":[{"line":1,"column":8}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("invalid UTF-8 in a string literal", bytes: Array("{ search(text: \"a".utf8) + [0xC3, 0x28] + Array("\") { totalCount } }".utf8), ##"{"data":{"search":{"totalCount":0}}}"##),
        BadInput("truncated UTF-8 sequence at the end", bytes: Array(q.utf8) + [0xE2, 0x82], ##"{"errors":[{"message":"Syntax Error: Unexpected character: U+FFFD.","locations":[{"line":1,"column":22}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("overlong UTF-8 encoding of a brace", bytes: [0xC0, 0xFB] + Array(" categories { id } }".utf8), ##"{"errors":[{"message":"Syntax Error: Unexpected character: U+FFFD.","locations":[{"line":1,"column":1}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("UTF-16 byte order mark bytes", bytes: [0xFE, 0xFF] + Array(q.utf8), ##"{"errors":[{"message":"Syntax Error: Unexpected character: U+FFFD.","locations":[{"line":1,"column":1}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("UTF-8 byte order mark is ignored", "\u{FEFF}" + q, ok),
        BadInput("non-breaking space between tokens", "{\u{00A0}categories { id } }", ##"{"errors":[{"message":"Syntax Error: Unexpected character: U+00A0.","locations":[{"line":1,"column":2}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("emoji as a name", "{ 😀 }", ##"{"errors":[{"message":"Syntax Error: Unexpected character: U+1F600.","locations":[{"line":1,"column":3}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("lone surrogate escape", #"{ search(text: "\uD800") { totalCount } }"#, ##"{"errors":[{"message":"Syntax Error: Invalid Unicode escape sequence: \"\\uD800\".","locations":[{"line":1,"column":17}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("escape beyond Unicode", #"{ search(text: "\u{110000}") { totalCount } }"#, ##"{"errors":[{"message":"Syntax Error: Invalid Unicode escape sequence: \"\\u{110000}\".","locations":[{"line":1,"column":17}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("bad escape letter", #"{ search(text: "\x41") { totalCount } }"#, ##"{"errors":[{"message":"Syntax Error: Invalid character escape sequence: \"\\x\".","locations":[{"line":1,"column":17}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("unterminated string", #"{ search(text: "abc) { totalCount } }"#, ##"{"errors":[{"message":"Syntax Error: Unterminated string.","locations":[{"line":1,"column":38}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("line break inside a string", "{ search(text: \"a\nb\") { totalCount } }", ##"{"errors":[{"message":"Syntax Error: Unterminated string.","locations":[{"line":1,"column":18}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("unterminated block string", #"{ search(text: """abc) { totalCount } }"#, ##"{"errors":[{"message":"Syntax Error: Unterminated string.","locations":[{"line":1,"column":40}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("unclosed selection set", "{ categories { id }", ##"{"errors":[{"message":"Syntax Error: Expected Name, found <EOF>.","locations":[{"line":1,"column":20}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("extra closing brace", "{ categories { id } } }", ##"{"errors":[{"message":"Syntax Error: Unexpected \"}\".","locations":[{"line":1,"column":23}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("number with leading zero", "{ products(first: 01) { totalCount } }", ##"{"errors":[{"message":"Syntax Error: Invalid number, unexpected digit after 0: \"1\".","locations":[{"line":1,"column":20}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("number followed by a name", "{ products(first: 1x) { totalCount } }", ##"{"errors":[{"message":"Syntax Error: Invalid number, expected digit but got: \"x\".","locations":[{"line":1,"column":20}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("float with trailing dot", "{ products(first: 1.) { totalCount } }", ##"{"errors":[{"message":"Syntax Error: Invalid number, expected digit but got: \")\".","locations":[{"line":1,"column":21}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("lone dollar", "{ products(first: $) { totalCount } }", ##"{"errors":[{"message":"Syntax Error: Expected Name, found \")\".","locations":[{"line":1,"column":20}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("two dots", "{ ..F }", ##"{"errors":[{"message":"Syntax Error: Unexpected character: \".\".","locations":[{"line":1,"column":3}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("variable in a default value", "query ($a: Int = $b) { products(first: $a) { totalCount } }", ##"{"errors":[{"message":"Syntax Error: Unexpected variable \"$b\" in constant value.","locations":[{"line":1,"column":18}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("type-system definition", "type T { f: Int }", ##"{"errors":[{"message":"The \"T\" definition is not executable.","locations":[{"line":1,"column":1}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("schema extension", "extend type Query { x: Int }", ##"{"errors":[{"message":"The \"Query\" definition is not executable.","locations":[{"line":1,"column":1}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
    ]

    static let limits: [BadInput] = [
        BadInput("64 KiB of opening braces", repeated("{", 64 * 1024), ##"{"errors":[{"message":"Syntax Error: Expected Name, found \"{\".","locations":[{"line":1,"column":2}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("64 KiB plus one of opening braces", repeated("{", 64 * 1024 + 1), ##"{"errors":[{"message":"Document of 65537 bytes exceeds the limit of 65536 bytes.","extensions":{"code":"DOCUMENT_TOO_LARGE"}}]}"##),
        BadInput("1 MB string literal", "{ search(text: \"" + repeated("a", 1 << 20) + "\") { totalCount } }", ##"{"errors":[{"message":"Document of 1048611 bytes exceeds the limit of 65536 bytes.","extensions":{"code":"DOCUMENT_TOO_LARGE"}}]}"##),
        // A search word over SQLite's LIKE pattern limit (50,000 bytes) is matched with instr().
        BadInput("60 KB string literal under the size limit", "{ search(text: \"" + repeated("a", 60_000) + "\") { totalCount } }", ##"{"data":{"search":{"totalCount":0}}}"##),
        BadInput("selection depth at the limit", categoryChain(15), ##"{"data":{"category":{"parent":null}}}"##),
        BadInput("selection depth one over the limit", categoryChain(16), ##"{"errors":[{"message":"Query depth 16 exceeds the limit of 15.","locations":[{"line":1,"column":147}],"extensions":{"code":"DEPTH_LIMIT_EXCEEDED"}}]}"##),
        BadInput("selection sets nested 300 deep", repeated("{ a ", 300) + repeated("}", 300), ##"{"errors":[{"message":"Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.","locations":[{"line":1,"column":801}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("list literal nested 300 deep", "{ search(text: " + repeated("[", 300) + repeated("]", 300) + ") { totalCount } }", ##"{"errors":[{"message":"Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.","locations":[{"line":1,"column":215}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("object literal nested 300 deep", "{ products(filter: " + repeated("{a: ", 300) + "1" + repeated("}", 300) + ") { totalCount } }", ##"{"errors":[{"message":"Syntax Error: Document nesting exceeds the maximum depth of 200. Parsing aborted.","locations":[{"line":1,"column":816}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("list literal nested 20 deep for a scalar", "{ search(text: " + repeated("[", 20) + "\"a\"" + repeated("]", 20) + ") { totalCount } }", ##"{"errors":[{"message":"String cannot represent a non string value: [[[[[[[[[[[[[[[[[[[[\"a\"]]]]]]]]]]]]]]]]]]]]","locations":[{"line":1,"column":16}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("inline fragments nested 100 deep", "{ " + repeated("... on Query { ", 100) + "__typename" + repeated(" }", 100) + " }", ##"{"data":{"__typename":"Query"}}"##),
        BadInput("3000 aliases", aliases(3000), aliasesAnswer(3000)),
        BadInput("60000 tokens", repeated("{a}", 20_000), ##"{"errors":[{"message":"Syntax Error: Document contains more than 50000 tokens. Parsing aborted.","locations":[{"line":1,"column":50001}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}"##),
        BadInput("1000 fragments spread once each",
                 "{ " + (0..<1000).map { "...F\($0)" }.joined(separator: " ") + " } "
                 + (0..<1000).map { "fragment F\($0) on Query { a\($0): __typename }" }.joined(separator: " "),
                 aliasesAnswer(1000)),
        BadInput("2000 fragments over the size limit",
                 "{ " + (0..<2000).map { "...F\($0)" }.joined(separator: " ") + " } "
                 + (0..<2000).map { "fragment F\($0) on Query { __typename }" }.joined(separator: " "), ##"{"errors":[{"message":"Document of 93783 bytes exceeds the limit of 65536 bytes.","extensions":{"code":"DOCUMENT_TOO_LARGE"}}]}"##),
        BadInput("fragment chain 20 deep past the depth limit",
                 "{ ...F0 } " + (0..<20).map { "fragment F\($0) on Query { category(id: 1) { ...G\($0) } } fragment G\($0) on Category { parent { ...G\($0 + 1) } }" }.prefix(1).joined()
                 + (1..<20).map { "fragment G\($0) on Category { parent { ...G\($0 + 1) } }" }.joined(separator: " ")
                 + " fragment G20 on Category { id }", ##"{"errors":[{"message":"Query depth 22 exceeds the limit of 15.","locations":[{"line":1,"column":1009}],"extensions":{"code":"DEPTH_LIMIT_EXCEEDED"}}]}"##),
        BadInput("1000 identical fields with selections", "{ " + repeated("categories { id children { id } } ", 1000) + "}", ##"{"data":{"categories":[{"id":"1","children":[{"id":"10"},{"id":"11"}]},{"id":"2","children":[{"id":"20"}]}]}}"##),
        BadInput("500 conflicting aliases", conflictingAliases,
                 cappedErrors((1...100).map { k in
                     ##"{"message":"Fields \"a\" conflict because they have differing arguments. Use different aliases on the fields to fetch both if this was intentional.","locations":[{"line":1,"column":3},{"line":1,"column":\##(column(conflictingAliases, "a: product(id: \(k))"))}]"##
                 })),
        BadInput("fragment spread 5000 times", "{ " + repeated("...F ", 5000) + "} fragment F on Query { __typename }", ##"{"data":{"__typename":"Query"}}"##),
        BadInput("fragments doubling 20 levels",
                 "{ ...F0 } " + (0..<20).map { "fragment F\($0) on Query { ...F\($0 + 1) a\($0): __typename ...F\($0 + 1) }" }.joined(separator: " ")
                 + " fragment F20 on Query { __typename }", ##"{"data":{"__typename":"Query","a19":"Query","a18":"Query","a17":"Query","a16":"Query","a15":"Query","a14":"Query","a13":"Query","a12":"Query","a11":"Query","a10":"Query","a9":"Query","a8":"Query","a7":"Query","a6":"Query","a5":"Query","a4":"Query","a3":"Query","a2":"Query","a1":"Query","a0":"Query"}}"##),
        BadInput("node limit exceeded by nested connections",
                 "{ products(first: 100) { nodes { manufacturer { products(first: 100) { nodes { manufacturer { products(first: 100) { totalCount } } } } } } } }", ##"{"errors":[{"message":"Query requests up to 1010100 nodes, over the limit of 100000.","locations":[{"line":1,"column":1}],"extensions":{"code":"NODE_LIMIT_EXCEEDED"}}]}"##),
        BadInput("node limit exceeded by aliases",
                 "{ " + (0..<1001).map { "p\($0): products(first: 100) { totalCount }" }.joined(separator: " ") + " }", ##"{"errors":[{"message":"Query requests up to 100100 nodes, over the limit of 100000.","locations":[{"line":1,"column":1}],"extensions":{"code":"NODE_LIMIT_EXCEEDED"}}]}"##),
        BadInput("1000 arguments on one field", manyArguments,
                 cappedErrors((0..<100).map { k in
                     ##"{"message":"Unknown argument \"a\##(k)\" on field \"Query.categories\".","locations":[{"line":1,"column":\##(column(manyArguments, "a\(k):"))}]"##
                 })),
        BadInput("1000 directives on one field", "{ categories " + repeated("@include(if: true) ", 1000) + "{ id } }",
                 cappedErrors((1...100).map { k in
                     ##"{"message":"The directive \"@include\" can only be used once at this location.","locations":[{"line":1,"column":14},{"line":1,"column":\##(14 + 19 * k)}]"##
                 })),
        BadInput("1000 variables defined", manyVariables,
                 cappedErrors((0..<100).map { k in
                     ##"{"message":"Variable \"$v\##(k)\" is never used.","locations":[{"line":1,"column":\##(column(manyVariables, "$v\(k):"))}]"##
                 })),
        BadInput("introspection nested past the depth limit",
                 "{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } } } } }", ##"{"errors":[{"message":"Query depth 16 exceeds the limit of 15.","locations":[{"line":1,"column":137}],"extensions":{"code":"DEPTH_LIMIT_EXCEEDED"}}]}"##),
    ]

    static let operations: [BadInput] = [
        BadInput("unknown operation name", "query A { categories { id } }", operationName: "B", ##"{"errors":[{"message":"Unknown operation named \"B\".","extensions":{"code":"OPERATION_NOT_FOUND"}}]}"##),
        BadInput("operation name for an anonymous operation", q, operationName: "A", ##"{"errors":[{"message":"Unknown operation named \"A\".","extensions":{"code":"OPERATION_NOT_FOUND"}}]}"##),
        BadInput("empty operation name", "query A { categories { id } }", operationName: "", ##"{"errors":[{"message":"Unknown operation named \"\".","extensions":{"code":"OPERATION_NOT_FOUND"}}]}"##),
        BadInput("two operations without a name", "query A { categories { id } } query B { alphabet { letter } }", ##"{"errors":[{"message":"Must provide operation name if query contains multiple operations.","extensions":{"code":"OPERATION_NOT_FOUND"}}]}"##),
        BadInput("two operations, one chosen", "query A { categories { id } } query B { alphabet { letter } }", operationName: "A", ok),
        BadInput("duplicate operation names", "query A { categories { id } } query A { alphabet { letter } }", operationName: "A", ##"{"errors":[{"message":"There can be only one operation named \"A\".","locations":[{"line":1,"column":7},{"line":1,"column":37}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("anonymous operation among others", "{ categories { id } } query B { alphabet { letter } }", ##"{"errors":[{"message":"This anonymous operation must be the only defined operation.","locations":[{"line":1,"column":1}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("only fragments", "fragment F on Query { categories { id } }", ##"{"errors":[{"message":"Fragment \"F\" is never used.","locations":[{"line":1,"column":1}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("mutation", "mutation { categories { id } }", ##"{"errors":[{"message":"Schema is not configured to execute mutation operation.","locations":[{"line":1,"column":1}],"extensions":{"code":"OPERATION_NOT_SUPPORTED"}}]}"##),
        BadInput("subscription with two root fields", "subscription { catalogVersion { version } v: catalogVersion { version } }", ##"{"errors":[{"message":"Anonymous Subscription must select only one top level field.","locations":[{"line":1,"column":43}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("subscription whose only root field a literal @skip removes", "subscription { catalogVersion @skip(if: true) { version } }", ##"{"errors":[{"message":"Subscription operation must select exactly one root field; its @skip and @include directives leave 0.","locations":[{"line":1,"column":1}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("subscription whose only root field a variable's @include removes", "subscription ($on: Boolean!) { ... on Subscription { catalogChanges(sinceVersion: 0) @include(if: $on) { version } } }", variables: #"{"on": false}"#, ##"{"errors":[{"message":"Subscription operation must select exactly one root field; its @skip and @include directives leave 0.","locations":[{"line":1,"column":1}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("subscription to an unknown field", "subscription { categories { id } }", ##"{"errors":[{"message":"Cannot query field \"categories\" on type \"Subscription\".","locations":[{"line":1,"column":16}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
    ]

    static let validation: [BadInput] = [
        BadInput("unknown field", "{ categories { id nope } }", ##"{"errors":[{"message":"Cannot query field \"nope\" on type \"Category\".","locations":[{"line":1,"column":19}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("unknown root field", "{ nope }", ##"{"errors":[{"message":"Cannot query field \"nope\" on type \"Query\".","locations":[{"line":1,"column":3}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("unknown argument", "{ categories(first: 1) { id } }", ##"{"errors":[{"message":"Unknown argument \"first\" on field \"Query.categories\".","locations":[{"line":1,"column":14}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("missing required argument", "{ product { id } }", ##"{"errors":[{"message":"Field \"product\" argument \"id\" of type \"ID!\" is required, but it was not provided.","locations":[{"line":1,"column":3}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("null for a required argument", "{ product(id: null) { id } }", ##"{"errors":[{"message":"Expected value of type \"ID!\", found null.","locations":[{"line":1,"column":15}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("duplicate argument", "{ product(id: 1, id: 2) { id } }", ##"{"errors":[{"message":"There can be only one argument named \"id\".","locations":[{"line":1,"column":11},{"line":1,"column":18}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("object field without selection", "{ categories }", ##"{"errors":[{"message":"Field \"categories\" of type \"[Category!]!\" must have a selection of subfields. Did you mean \"categories { ... }\"?","locations":[{"line":1,"column":3}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("selection on a scalar", "{ categories { id { x } } }", ##"{"errors":[{"message":"Field \"id\" must not have a selection since type \"ID!\" has no subfields.","locations":[{"line":1,"column":19}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("conflicting aliases", "{ a: categories { id } a: alphabet { letter } }", ##"{"errors":[{"message":"Fields \"a\" conflict because \"categories\" and \"alphabet\" are different fields. Use different aliases on the fields to fetch both if this was intentional.","locations":[{"line":1,"column":3},{"line":1,"column":24}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("cyclic fragments", "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }", ##"{"errors":[{"message":"Cannot spread fragment \"A\" within itself via \"B\".","locations":[{"line":1,"column":32},{"line":1,"column":61}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        // Found by FuzzParser: a stack overflow in the overlap search before the fix.
        BadInput("fragment spreading itself below a same-named field",
                 "{ category(id: 1) { parent { ...B } ...B } } fragment B on Category { parent { parent { ...B } } }",
                 ##"{"errors":[{"message":"Cannot spread fragment \"B\" within itself.","locations":[{"line":1,"column":89}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("fragment spreading itself", "{ ...A } fragment A on Query { categories { id } ...A }", ##"{"errors":[{"message":"Cannot spread fragment \"A\" within itself.","locations":[{"line":1,"column":50}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("unknown fragment", "{ ...Nope }", ##"{"errors":[{"message":"Unknown fragment \"Nope\".","locations":[{"line":1,"column":6}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("unused fragment", "{ categories { id } } fragment F on Query { alphabet { letter } }", ##"{"errors":[{"message":"Fragment \"F\" is never used.","locations":[{"line":1,"column":23}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("duplicate fragment names", "{ ...F } fragment F on Query { __typename } fragment F on Query { __typename }", ##"{"errors":[{"message":"There can be only one fragment named \"F\".","locations":[{"line":1,"column":19},{"line":1,"column":54}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("fragment on an unknown type", "{ ...F } fragment F on Nope { id }", ##"{"errors":[{"message":"Unknown type \"Nope\".","locations":[{"line":1,"column":24}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("fragment on a scalar", "{ ...F } fragment F on String { id }", ##"{"errors":[{"message":"Fragment \"F\" cannot condition on non composite type \"String\".","locations":[{"line":1,"column":24}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("impossible inline fragment", "{ categories { ... on Product { id } } }", ##"{"errors":[{"message":"Fragment cannot be spread here as objects of type \"Category\" can never be of type \"Product\".","locations":[{"line":1,"column":16}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("unknown directive", "{ categories @nope { id } }", ##"{"errors":[{"message":"Unknown directive \"@nope\".","locations":[{"line":1,"column":14}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("skip without if", "{ categories @skip { id } }", ##"{"errors":[{"message":"Directive \"@skip\" argument \"if\" of type \"Boolean!\" is required, but it was not provided.","locations":[{"line":1,"column":14}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("skip with a string", #"{ categories @skip(if: "yes") { id } }"#, ##"{"errors":[{"message":"Boolean cannot represent a non boolean value: \"yes\"","locations":[{"line":1,"column":24}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("duplicate include", "{ categories @include(if: true) @include(if: true) { id } }", ##"{"errors":[{"message":"The directive \"@include\" can only be used once at this location.","locations":[{"line":1,"column":14},{"line":1,"column":33}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("directive in the wrong place", "query @skip(if: true) { categories { id } }", ##"{"errors":[{"message":"Directive \"@skip\" may not be used on QUERY.","locations":[{"line":1,"column":7}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("undefined variable", "{ products(first: $n) { totalCount } }", ##"{"errors":[{"message":"Variable \"$n\" is not defined.","locations":[{"line":1,"column":19},{"line":1,"column":1}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("unused variable", "query ($n: Int) { categories { id } }", ##"{"errors":[{"message":"Variable \"$n\" is never used.","locations":[{"line":1,"column":8}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("variable defined twice", "query ($n: Int, $n: Int) { products(first: $n) { totalCount } }", ##"{"errors":[{"message":"There can be only one variable named \"$n\".","locations":[{"line":1,"column":9},{"line":1,"column":18}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("variable of an output type", "query ($c: Category) { categories { id } }", ##"{"errors":[{"message":"Variable \"$c\" cannot be non-input type \"Category\".","locations":[{"line":1,"column":12}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}},{"message":"Variable \"$c\" is never used.","locations":[{"line":1,"column":8}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("variable of an unknown type", "query ($c: Nope) { categories { id } }", ##"{"errors":[{"message":"Unknown type \"Nope\".","locations":[{"line":1,"column":12}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}},{"message":"Variable \"$c\" is never used.","locations":[{"line":1,"column":8}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("variable in a wrong position", "query ($t: String) { products(first: $t) { totalCount } }", ##"{"errors":[{"message":"Variable \"$t\" of type \"String\" used in position expecting type \"Int\".","locations":[{"line":1,"column":8},{"line":1,"column":38}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("nullable variable for a non-null argument", "query ($t: String) { search(text: $t) { totalCount } }", ##"{"errors":[{"message":"Variable \"$t\" of type \"String\" used in position expecting type \"String!\".","locations":[{"line":1,"column":8},{"line":1,"column":35}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("unknown enum value", "{ products(orderBy: PRICE) { totalCount } }", ##"{"errors":[{"message":"Value \"PRICE\" does not exist in \"ProductOrder\" enum.","locations":[{"line":1,"column":21}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("enum value as a string", #"{ products(orderBy: "NAME") { totalCount } }"#, ##"{"errors":[{"message":"Enum \"ProductOrder\" cannot represent non-enum value: \"NAME\". Did you mean the enum value \"NAME\"?","locations":[{"line":1,"column":21}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("unknown input field", #"{ products(filter: {nope: 1}) { totalCount } }"#, ##"{"errors":[{"message":"Field \"nope\" is not defined by type \"ProductFilter\".","locations":[{"line":1,"column":21}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("duplicate input field", #"{ products(filter: {sku: "a", sku: "b"}) { totalCount } }"#, ##"{"errors":[{"message":"There can be only one input field named \"sku\".","locations":[{"line":1,"column":21},{"line":1,"column":31}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("list for an input object", "{ products(filter: [1]) { totalCount } }", ##"{"errors":[{"message":"Expected value of type \"ProductFilter\", found [1].","locations":[{"line":1,"column":20}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("object for an ID", "{ product(id: {a: 1}) { id } }", ##"{"errors":[{"message":"ID cannot represent a non-string and non-integer value: {a: 1}","locations":[{"line":1,"column":15}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("boolean for an ID", "{ product(id: true) { id } }", ##"{"errors":[{"message":"ID cannot represent a non-string and non-integer value: true","locations":[{"line":1,"column":15}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("float for an ID", "{ product(id: 1.5) { id } }", ##"{"errors":[{"message":"ID cannot represent a non-string and non-integer value: 1.5","locations":[{"line":1,"column":15}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
    ]

    static let first: [BadInput] = [
        BadInput("first 101", "{ products(first: 101) { totalCount } }", ##"{"errors":[{"message":"Argument \"first\" must be between 0 and 100, got 101.","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("first -1", "{ products(first: -1) { totalCount } }", ##"{"errors":[{"message":"Argument \"first\" must be between 0 and 100, got -1.","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("first -0", "{ products(first: -0) { nodes { id } } }", ##"{"data":{"products":{"nodes":[]}}}"##),
        BadInput("first beyond Int32", "{ products(first: 2147483648) { totalCount } }", ##"{"errors":[{"message":"Int cannot represent non 32-bit signed integer value: 2147483648","locations":[{"line":1,"column":19}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("first beyond Int64", "{ products(first: 99999999999999999999) { totalCount } }", ##"{"errors":[{"message":"Int cannot represent non 32-bit signed integer value: 99999999999999999999","locations":[{"line":1,"column":19}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("first as a float", "{ products(first: 1.5) { totalCount } }", ##"{"errors":[{"message":"Int cannot represent non-integer value: 1.5","locations":[{"line":1,"column":19}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("first as an integral float", "{ products(first: 2.0) { totalCount } }", ##"{"errors":[{"message":"Int cannot represent non-integer value: 2.0","locations":[{"line":1,"column":19}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("first as an exponent", "{ products(first: 1e2) { totalCount } }", ##"{"errors":[{"message":"Int cannot represent non-integer value: 1e2","locations":[{"line":1,"column":19}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("first as a string", #"{ products(first: "2") { totalCount } }"#, ##"{"errors":[{"message":"Int cannot represent non-integer value: \"2\"","locations":[{"line":1,"column":19}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("first null takes the default", "{ products(first: null) { totalCount nodes { id } } }", ##"{"data":{"products":{"totalCount":7,"nodes":[{"id":"4"},{"id":"2"},{"id":"1"},{"id":"5"},{"id":"6"},{"id":"3"},{"id":"7"}]}}}"##),
        BadInput("first as a list", "{ products(first: [2]) { totalCount } }", ##"{"errors":[{"message":"Int cannot represent non-integer value: [2]","locations":[{"line":1,"column":19}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("first variable 101", "query ($n: Int) { products(first: $n) { totalCount } }", variables: #"{"n": 101}"#, ##"{"errors":[{"message":"Argument \"first\" must be between 0 and 100, got 101.","locations":[{"line":1,"column":19}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("first variable -5", "query ($n: Int) { search(text: \"a\", first: $n) { totalCount } }", variables: #"{"n": -5}"#, ##"{"errors":[{"message":"Argument \"first\" must be between 0 and 100, got -5.","locations":[{"line":1,"column":19}],"path":["search"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("first variable beyond Int32", "query ($n: Int) { products(first: $n) { totalCount } }", variables: #"{"n": 4294967296}"#, ##"{"errors":[{"message":"Variable \"$n\" got invalid value 4294967296; Int cannot represent non 32-bit signed integer value: 4294967296","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("first variable beyond Int64", "query ($n: Int) { products(first: $n) { totalCount } }", variables: #"{"n": 18446744073709551616}"#, ##"{"errors":[{"message":"Variable \"$n\" got invalid value 18446744073709552000; Int cannot represent non 32-bit signed integer value: 18446744073709552000","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("first variable as a float", "query ($n: Int) { products(first: $n) { totalCount } }", variables: #"{"n": 2.5}"#, ##"{"errors":[{"message":"Variable \"$n\" got invalid value 2.5; Int cannot represent non-integer value: 2.5","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("first variable as an integral float", "query ($n: Int) { products(first: $n) { nodes { id } } }", variables: #"{"n": 2.0}"#, ##"{"data":{"products":{"nodes":[{"id":"4"},{"id":"2"}]}}}"##),
        BadInput("first variable as a string", "query ($n: Int) { products(first: $n) { totalCount } }", variables: #"{"n": "2"}"#, ##"{"errors":[{"message":"Variable \"$n\" got invalid value \"2\"; Int cannot represent non-integer value: \"2\"","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("first variable as a boolean", "query ($n: Int) { products(first: $n) { totalCount } }", variables: #"{"n": true}"#, ##"{"errors":[{"message":"Variable \"$n\" got invalid value true; Int cannot represent non-integer value: true","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("first variable 1e400", "query ($n: Int) { products(first: $n) { totalCount } }", variables: #"{"n": 1e400}"#, ##"JSON: real number overflow near '1e400' (line 1, column 11)"##),
        BadInput("first on a nested connection", "{ manufacturers { products(first: 1000) { totalCount } } }", ##"{"errors":[{"message":"Argument \"first\" must be between 0 and 100, got 1000.","locations":[{"line":1,"column":19}],"path":["manufacturers",0,"products"],"extensions":{"code":"BAD_USER_INPUT"}},{"message":"Argument \"first\" must be between 0 and 100, got 1000.","locations":[{"line":1,"column":19}],"path":["manufacturers",1,"products"],"extensions":{"code":"BAD_USER_INPUT"}},{"message":"Argument \"first\" must be between 0 and 100, got 1000.","locations":[{"line":1,"column":19}],"path":["manufacturers",2,"products"],"extensions":{"code":"BAD_USER_INPUT"}},{"message":"Argument \"first\" must be between 0 and 100, got 1000.","locations":[{"line":1,"column":19}],"path":["manufacturers",3,"products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
    ]

    static let cursors: [BadInput] = [
        BadInput("empty cursor", #"{ products(after: "") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor that is not base64", #"{ products(after: "!!!!") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"!!!!\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor whose key lacks its keyid", #"{ products(after: "SzFDbm5u") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"SzFDbm5u\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor whose keyid is a text", #"{ products(orderBy: NEWEST, after: "SzFXdAA=") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"SzFXdAA=\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor without padding", #"{ products(orderBy: NEWEST, after: "SzFXdAA") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"SzFXdAA\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor of another prefix", #"{ products(after: "b2Zmc2V0OjE=") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"b2Zmc2V0OjE=\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor past the end", #"{ products(first: 2, after: "SzFDYgH/bm5pAAAAAAAAAAE=") { nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }"#, ##"{"data":{"products":{"nodes":[],"pageInfo":{"hasNextPage":false,"hasPreviousPage":true,"startCursor":null,"endCursor":null}}}}"##),
        BadInput("cursor of another order", #"{ products(orderBy: CATALOG, after: "SzFXaQAAAAAAAAAB") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"SzFXaQAAAAAAAAAB\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor of the old offset form", #"{ products(after: "Y3Vyc29yOjE=") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"Y3Vyc29yOjE=\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor at the last row", #"{ products(first: 2, orderBy: NEWEST, after: "SzFXaQAAAAAAAAAB") { nodes { id } pageInfo { hasNextPage endCursor } } }"#, ##"{"data":{"products":{"nodes":[],"pageInfo":{"hasNextPage":false,"endCursor":null}}}}"##),
        BadInput("cursor with a length not in its shortest form", #"{ products(orderBy: NAME, after: "SzFOdIAAaQAAAAAAAAAB") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"SzFOdIAAaQAAAAAAAAAB\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor with bytes after its key", #"{ products(orderBy: NEWEST, after: "SzFXaQAAAAAAAAABeA==") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"SzFXaQAAAAAAAAABeA==\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        // 40 KB: refused unread, and the message repeats only its start.
        BadInput("cursor 40 KB long", "{ products(after: \"" + repeated("QUFB", 10_000) + "\") { totalCount } }",
                 ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"\##(repeated("QUFB", 25))… (40000 bytes)\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor with NUL", #"{ products(after: "Y3Vy\u0000c29yOjE=") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"Y3Vy\u0000c29yOjE=\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor of invalid UTF-8", #"{ search(text: "a", after: "/w==") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"after\" is not a valid cursor: \"/w==\".","locations":[{"line":1,"column":3}],"path":["search"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("cursor variable as a number", "query ($a: String) { products(after: $a) { totalCount } }", variables: #"{"a": 1}"#, ##"{"errors":[{"message":"Variable \"$a\" got invalid value 1; String cannot represent a non string value: 1","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("cursor variable as an object", "query ($a: String) { products(after: $a) { totalCount } }", variables: #"{"a": {"i": 1}}"#, ##"{"errors":[{"message":"Variable \"$a\" got invalid value { i: 1 }; String cannot represent a non string value: { i: 1 }","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
    ]

    static let arguments: [BadInput] = [
        BadInput("letter lowercase", #"{ products(filter: {letter: "a"}) { totalCount } }"#, ##"{"errors":[{"message":"Argument \"filter.letter\" must be a capital letter \"A\"..\"Z\" or \"#\", got \"a\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("letter empty", #"{ products(filter: {letter: ""}) { totalCount } }"#, ##"{"errors":[{"message":"Argument \"filter.letter\" must be a capital letter \"A\"..\"Z\" or \"#\", got \"\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("letter two characters", #"{ products(filter: {letter: "AB"}) { totalCount } }"#, ##"{"errors":[{"message":"Argument \"filter.letter\" must be a capital letter \"A\"..\"Z\" or \"#\", got \"AB\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("letter non-ASCII", #"{ products(filter: {letter: "É"}) { totalCount } }"#, ##"{"errors":[{"message":"Argument \"filter.letter\" must be a capital letter \"A\"..\"Z\" or \"#\", got \"É\".","locations":[{"line":1,"column":3}],"path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("search empty text", #"{ search(text: "") { totalCount } }"#, ##"{"errors":[{"message":"Argument \"text\" must contain at least one word.","locations":[{"line":1,"column":3}],"path":["search"],"extensions":{"code":"BAD_USER_INPUT"}}],"data":null}"##),
        BadInput("search LIKE wildcards only", #"{ search(text: "% _") { totalCount } }"#, ##"{"data":{"search":{"totalCount":1}}}"##),
        // U+0000 in a search word: SQLite's LIKE stops at the NUL (reported, Resolvers/Catalog).
        BadInput("search with NUL", #"{ search(text: "al\u0000exa") { totalCount } }"#, ##"{"data":{"search":{"totalCount":0}}}"##),
        BadInput("search with 2000 words", "{ search(text: \"" + repeated("alexa ", 2000) + "\") { totalCount } }", ##"{"data":{"search":{"totalCount":2}}}"##),
        BadInput("search with U+FFFD", "{ search(text: \"\u{FFFD}\") { totalCount } }", ##"{"data":{"search":{"totalCount":0}}}"##),
        BadInput("category id not a number", #"{ category(id: "abc") { id } }"#, ##"{"data":{"category":null}}"##),
        BadInput("category id beyond Int64", #"{ category(id: "99999999999999999999") { id } }"#, ##"{"data":{"category":null}}"##),
        BadInput("category id negative", #"{ category(id: "-1") { id } }"#, ##"{"data":{"category":null}}"##),
        BadInput("category id with spaces", #"{ category(id: " 1 ") { id } }"#, ##"{"data":{"category":null}}"##),
        BadInput("product id empty", #"{ product(id: "") { id } }"#, ##"{"data":{"product":null}}"##),
        BadInput("product id as a huge integer literal", "{ product(id: 99999999999999999999) { id } }", ##"{"data":{"product":null}}"##),
        BadInput("filter categoryId not a number", #"{ products(filter: {categoryId: "x", includeDescendants: true}) { totalCount } }"#, ##"{"data":{"products":{"totalCount":0}}}"##),
    ]

    static let variables: [BadInput] = [
        BadInput("variables an array", q, variables: "[]", ##"{"errors":[{"message":"Variables must be provided as an Object where each property is a variable value.","extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("variables a string", q, variables: #""x""#, ##"{"errors":[{"message":"Variables must be provided as an Object where each property is a variable value.","extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("variables a number", q, variables: "1", ##"{"errors":[{"message":"Variables must be provided as an Object where each property is a variable value.","extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("variables true", q, variables: "true", ##"{"errors":[{"message":"Variables must be provided as an Object where each property is a variable value.","extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("variables null", q, variables: "null", ok),
        BadInput("variables an empty object", q, variables: "{}", ok),
        BadInput("unknown variables are ignored", q, variables: #"{"x": 1}"#, ok),
        BadInput("required variable missing", "query ($id: ID!) { product(id: $id) { id } }", variables: "{}", ##"{"errors":[{"message":"Variable \"$id\" of required type \"ID!\" was not provided.","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("required variable null", "query ($id: ID!) { product(id: $id) { id } }", variables: #"{"id": null}"#, ##"{"errors":[{"message":"Variable \"$id\" of non-null type \"ID!\" must not be null.","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("ID variable as a float", "query ($id: ID!) { product(id: $id) { id } }", variables: #"{"id": 1.5}"#, ##"{"errors":[{"message":"Variable \"$id\" got invalid value 1.5; ID cannot represent value: 1.5","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("ID variable as a boolean", "query ($id: ID!) { product(id: $id) { id } }", variables: #"{"id": true}"#, ##"{"errors":[{"message":"Variable \"$id\" got invalid value true; ID cannot represent value: true","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("ID variable as a list", "query ($id: ID!) { product(id: $id) { id } }", variables: #"{"id": ["1"]}"#, ##"{"errors":[{"message":"Variable \"$id\" got invalid value [\"1\"]; ID cannot represent value: [\"1\"]","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("String variable as an object", "query ($t: String!) { search(text: $t) { totalCount } }", variables: #"{"t": {}}"#, ##"{"errors":[{"message":"Variable \"$t\" got invalid value {}; String cannot represent a non string value: {}","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("Boolean variable as a string", "query ($b: Boolean!) { categories @include(if: $b) { id } }", variables: #"{"b": "true"}"#, ##"{"errors":[{"message":"Variable \"$b\" got invalid value \"true\"; Boolean cannot represent a non boolean value: \"true\"","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("Boolean variable as a number", "query ($b: Boolean!) { categories @include(if: $b) { id } }", variables: #"{"b": 1}"#, ##"{"errors":[{"message":"Variable \"$b\" got invalid value 1; Boolean cannot represent a non boolean value: 1","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("enum variable wrong case", "query ($o: ProductOrder) { products(orderBy: $o) { totalCount } }", variables: #"{"o": "name"}"#, ##"{"errors":[{"message":"Variable \"$o\" got invalid value \"name\"; Value \"name\" does not exist in \"ProductOrder\" enum. Did you mean the enum value \"NAME\"?","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("enum variable a number", "query ($o: ProductOrder) { products(orderBy: $o) { totalCount } }", variables: #"{"o": 1}"#, ##"{"errors":[{"message":"Variable \"$o\" got invalid value 1; Enum \"ProductOrder\" cannot represent non-string value: 1.","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("input variable with an unknown field", "query ($f: ProductFilter) { products(filter: $f) { totalCount } }", variables: #"{"f": {"nope": 1}}"#, ##"{"errors":[{"message":"Variable \"$f\" got invalid value { nope: 1 }; Field \"nope\" is not defined by type \"ProductFilter\".","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("input variable a string", "query ($f: ProductFilter) { products(filter: $f) { totalCount } }", variables: #"{"f": "sku"}"#, ##"{"errors":[{"message":"Variable \"$f\" got invalid value \"sku\"; Expected type \"ProductFilter\" to be an object.","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("input variable field of the wrong type", "query ($f: ProductFilter) { products(filter: $f) { totalCount } }", variables: #"{"f": {"includeDescendants": "yes"}}"#, ##"{"errors":[{"message":"Variable \"$f\" got invalid value \"yes\" at \"f.includeDescendants\"; Boolean cannot represent a non boolean value: \"yes\"","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("input variable nested 1000 deep", "query ($f: ProductFilter) { products(filter: $f) { totalCount } }",
                 variables: #"{"f": {"sku": "# + repeated("[", 1000) + repeated("]", 1000) + "}}", ##"JSON: JSON nesting too deep (more than 512 levels of arrays and objects)"##),
        BadInput("input variable nested 500 deep", "query ($f: ProductFilter) { products(filter: $f) { totalCount } }",
                 variables: #"{"f": {"sku": "# + repeated("[", 500) + repeated("]", 500) + "}}", ##"{"errors":[{"message":"Variable \"$f\" got invalid value [[[Array]]] at \"f.sku\"; String cannot represent a non string value: [[[Array]]]","locations":[{"line":1,"column":8}],"extensions":{"code":"BAD_USER_INPUT"}}]}"##),
        BadInput("Int variable in an ID position", "query ($id: Int!) { product(id: $id) { id } }", variables: #"{"id": 1}"#, ##"{"errors":[{"message":"Variable \"$id\" of type \"Int!\" used in position expecting type \"ID!\".","locations":[{"line":1,"column":8},{"line":1,"column":33}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("non-null variable with a null default", "query ($n: Int! = null) { products(first: $n) { totalCount } }", ##"{"errors":[{"message":"Expected value of type \"Int!\", found null.","locations":[{"line":1,"column":19}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("list variable unusable in this schema", "query ($l: [Int!]) { categories { id } }", variables: #"{"l": 3}"#, ##"{"errors":[{"message":"Variable \"$l\" is never used.","locations":[{"line":1,"column":8}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("variable default of the wrong type", #"query ($n: Int = "x") { products(first: $n) { totalCount } }"#, ##"{"errors":[{"message":"Int cannot represent non-integer value: \"x\"","locations":[{"line":1,"column":18}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"##),
        BadInput("variable with duplicate JSON keys", "query ($n: Int) { products(first: $n) { nodes { id } } }", variables: #"{"n": 500, "n": 1}"#, ##"{"data":{"products":{"nodes":[{"id":"4"}]}}}"##),
        BadInput("variable name with NUL", q, variables: #"{"a\u0000b": 1}"#, ##"JSON: NUL byte in object key not supported near '"a\u0000b"' (line 1, column 11)"##),
        BadInput("string variable with NUL", "query ($t: String!) { search(text: $t) { totalCount } }", variables: #"{"t": "zz\u0000"}"#, ##"{"data":{"search":{"totalCount":0}}}"##),
        BadInput("string variable 1 MB long", "query ($t: String!) { search(text: $t) { totalCount } }", variables: "{\"t\": \"" + repeated("ab ", 350_000) + "\"}", ##"{"data":{"search":{"totalCount":0}}}"##),
        BadInput("100000 variables", q, variables: "{" + (0..<100_000).map { "\"v\($0)\": \($0)" }.joined(separator: ",") + "}", ok),
    ]

    static let json: [BadInput] = [
        BadInput("variables JSON empty", q, variables: "", ##"JSON: empty input, a JSON value was expected (line 1, column 0)"##),
        BadInput("variables JSON truncated", q, variables: #"{"n": "#, ##"JSON: unexpected token near end of file (line 1, column 6)"##),
        BadInput("variables JSON with trailing garbage", q, variables: "{} x", ##"JSON: end of file expected near 'x' (line 1, column 4)"##),
        BadInput("variables JSON with a trailing comma", q, variables: #"{"n": 1,}"#, ##"JSON: string or '}' expected near '}' (line 1, column 9)"##),
        BadInput("variables JSON single quotes", q, variables: "{'n': 1}", ##"JSON: string or '}' expected near ''' (line 1, column 2)"##),
        BadInput("variables JSON NaN", q, variables: #"{"n": NaN}"#, ##"JSON: invalid token near 'NaN' (line 1, column 9)"##),
        BadInput("variables JSON invalid UTF-8", bytes: Array(q.utf8), variables: Array(#"{"t": ""#.utf8) + [0xFF] + Array(#""}"#.utf8), ##"JSON: unable to decode byte 0xff near '"' (line 1, column 7)"##),
        BadInput("variables JSON lone surrogate", q, variables: #"{"t": "\ud800"}"#, ##"JSON: invalid Unicode '\uD800' near '"\ud800"' (line 1, column 14)"##),
        BadInput("variables JSON nested 3000 deep", q, variables: repeated("[", 3000) + repeated("]", 3000), ##"JSON: maximum parsing depth reached near '[' (line 1, column 2049)"##),
        BadInput("variables JSON 64 KiB of braces", q, variables: repeated("{", 64 * 1024), ##"JSON: string or '}' expected near '{' (line 1, column 2)"##),
        BadInput("variables JSON NUL byte outside a string", bytes: Array(q.utf8), variables: Array("{}".utf8) + [0], ##"JSON: end of file expected near end of file (line 1, column 3)"##),
    ]

    static let all: [BadInput] = documents + limits + operations + validation + first + cursors + arguments + variables + json
}
