import Testing
@testable import Schema

@Suite struct PrinterTests {
    /// (GraphQL value literal, graphql-js `print` of it) — expectations produced by graphql-core 3.2
    /// (the Python port of graphql-js 16).
    static let valueCases: [(String, String)] = [
        ("\"a\\nb\\u0007\\u0080\\\"\\\\/é\\u{1F600}\\t\\b\\f\\r\\u007F\"", "\"a\\nb\\u0007\\u0080\\\"\\\\/é😀\\t\\b\\f\\r\\u007F\""),
        ("[1, 2.5e3, ENUM, null, true, $v]", "[1, 2.5e3, ENUM, null, true, $v]"),
        ("{a: {b: [\"\"\"  block\n  x\"\"\"]}, c: false}", "{a: {b: [\"\"\"\n  block\nx\n\"\"\"]}, c: false}"),
        ("[]", "[]"),
        ("{}", "{}"),
        ("\"\"\"simple\"\"\"", "\"\"\"simple\"\"\""),
        ("\"\"\"  leading space\"\"\"", "\"\"\"  leading space\"\"\""),
        ("\"\"\"quote\"\n\"\"\"", "\"\"\"\nquote\"\n\"\"\""),
        ("\"\"\"has \\\"\"\" inside\"\"\"", "\"\"\"has \\\"\"\" inside\"\"\""),
        ("\"\"\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\"\"", "\"\"\"\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n\"\"\""),
        ("\"\"\"line1\n  line2\"\"\"", "\"\"\"\nline1\nline2\n\"\"\""),
        ("\"\"\"\n  indented\n  all\"\"\"", "\"\"\"\nindented\nall\n\"\"\""),
        ("\"\"\"ends with \\\n\"\"\"", "\"\"\"\nends with \\\n\"\"\""),
    ]

    @Test func printsValuesLikeGraphQLJS() throws {
        for (input, expected) in Self.valueCases {
            let value = try Parser.parseValue(Source(input))
            #expect(Printer.print(value) == expected, "\(input.debugDescription)")
        }
    }

    /// graphql-js measures a block string against its 70-character line with JavaScript's
    /// `length`, in UTF-16 code units: 36 emoji are 72 (graphql-core counts code points, 36, and
    /// prints one line; error messages used the UTF-16 count, this printer the code points).
    @Test func blockStringLengthIsCountedInUTF16() throws {
        let emoji = String(repeating: "\u{1F600}", count: 36)
        let value = try Parser.parseValue(Source("\"\"\"" + emoji + "\"\"\""))
        #expect(Printer.print(value) == "\"\"\"\n" + emoji + "\n\"\"\"")
        let shorter = String(repeating: "\u{1F600}", count: 35)
        #expect(Printer.print(try Parser.parseValue(Source("\"\"\"" + shorter + "\"\"\""))) == "\"\"\"" + shorter + "\"\"\"")
    }

    @Test func printsStringsAndTypes() throws {
        #expect(Printer.printString("No longer supported") == "\"No longer supported\"")
        #expect(Printer.printString("tab\there \u{0} \u{1F} \u{7F} \u{9F} \u{A0}") == "\"tab\\there \\u0000 \\u001F \\u007F \\u009F \u{A0}\"")
        #expect(Printer.print(try Parser.parseType(Source("[[Int!]]!"))) == "[[Int!]]!")
        #expect(Printer.print(try Parser.parseType(Source("ID"))) == "ID")
        // Printing and re-parsing gives the same value.
        let text = "{a: [1, -2.5e-3, \"x\\u00e9\\n\", \"\"\"b\\\"\"\"\"\"\", null], b: {c: ENUM}}"
        let once = Printer.print(try Parser.parseValue(Source(text)))
        #expect(Printer.print(try Parser.parseValue(Source(once))) == once)
    }
}
