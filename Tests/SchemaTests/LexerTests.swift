import Testing
@testable import Schema

/// One lexer error case: input, expected message (without "Syntax Error: "), line, column.
struct LexErrorCase: Sendable, CustomTestStringConvertible {
    let input: String
    let message: String
    let line: Int
    let column: Int
    init(_ input: String, _ message: String, _ line: Int, _ column: Int) {
        self.input = input; self.message = message; self.line = line; self.column = column
    }
    var testDescription: String { input.debugDescription }
}

/// One lexer success case: input, expected kind and value of its single token.
struct LexCase: Sendable, CustomTestStringConvertible {
    let input: String
    let kind: TokenKind
    let value: String?
    init(_ input: String, _ kind: TokenKind, _ value: String?) {
        self.input = input; self.kind = kind; self.value = value
    }
    var testDescription: String { input.debugDescription }
}

/// Lexes `input` and returns the first token after SOF.
private func lexOne(_ input: String) throws(GraphQLSyntaxError) -> Token {
    var lexer = Lexer(Source(input))
    return try lexer.advance()
}

private func firstLexError(_ source: Source) -> GraphQLError? {
    do {
        _ = try Lexer.tokens(source)
        return nil
    } catch {
        return error.error
    }
}

@Suite struct LexerTests {
    static let errorCases: [LexErrorCase] = [
        // Characters outside tokens.
        LexErrorCase("?", "Unexpected character: \"?\".", 1, 1),
        LexErrorCase("%", "Unexpected character: \"%\".", 1, 1),
        LexErrorCase("  \n  ~", "Unexpected character: \"~\".", 2, 3),
        LexErrorCase("\u{0007}", "Unexpected character: U+0007.", 1, 1),
        LexErrorCase("\u{0000}", "Unexpected character: U+0000.", 1, 1),
        LexErrorCase("\u{00A0}", "Unexpected character: U+00A0.", 1, 1),
        LexErrorCase("\u{203B}", "Unexpected character: U+203B.", 1, 1),
        LexErrorCase("\u{1F600}", "Unexpected character: U+1F600.", 1, 1),
        LexErrorCase("é x", "Unexpected character: U+00E9.", 1, 1),
        LexErrorCase("ab é", "Unexpected character: U+00E9.", 1, 4),
        LexErrorCase("'single quotes'", "Unexpected single quote character ('), did you mean to use a double quote (\")?", 1, 1),
        LexErrorCase(".", "Unexpected character: \".\".", 1, 1),
        LexErrorCase("..", "Unexpected character: \".\".", 1, 1),
        LexErrorCase(".123", "Unexpected character: \".\".", 1, 1),
        LexErrorCase("+1", "Unexpected character: \"+\".", 1, 1),
        LexErrorCase("# comment é\n  \u{0001}", "Unexpected character: U+0001.", 2, 3),
        LexErrorCase("\r\n\r\n?", "Unexpected character: \"?\".", 3, 1),
        LexErrorCase("\r\r?", "Unexpected character: \"?\".", 3, 1),
        // Strings.
        LexErrorCase("\"", "Unterminated string.", 1, 2),
        LexErrorCase("\"\"\"", "Unterminated string.", 1, 4),
        LexErrorCase("\"\"\"\"", "Unterminated string.", 1, 5),
        LexErrorCase("\"no end quote", "Unterminated string.", 1, 14),
        LexErrorCase("\"multi\nline\"", "Unterminated string.", 1, 7),
        LexErrorCase("\"multi\rline\"", "Unterminated string.", 1, 7),
        LexErrorCase("\"é\n\"", "Unterminated string.", 1, 3),
        LexErrorCase("\"bad \\z esc\"", "Invalid character escape sequence: \"\\z\".", 1, 6),
        LexErrorCase("\"bad \\x esc\"", "Invalid character escape sequence: \"\\x\".", 1, 6),
        LexErrorCase("\"bad \\é esc\"", "Invalid character escape sequence: \"\\é\".", 1, 6),
        LexErrorCase("\"bad \\", "Invalid character escape sequence: \"\\\".", 1, 6),
        LexErrorCase("\"bad \\u1 esc\"", "Invalid Unicode escape sequence: \"\\u1 es\".", 1, 6),
        LexErrorCase("\"bad \\u0XX1 esc\"", "Invalid Unicode escape sequence: \"\\u0XX1\".", 1, 6),
        LexErrorCase("\"bad \\uXXXX esc\"", "Invalid Unicode escape sequence: \"\\uXXXX\".", 1, 6),
        LexErrorCase("\"bad \\uFXXX esc\"", "Invalid Unicode escape sequence: \"\\uFXXX\".", 1, 6),
        LexErrorCase("\"bad \\uXXXF esc\"", "Invalid Unicode escape sequence: \"\\uXXXF\".", 1, 6),
        LexErrorCase("\"bad \\u{} esc\"", "Invalid Unicode escape sequence: \"\\u{}\".", 1, 6),
        LexErrorCase("\"bad \\u{FXXX} esc\"", "Invalid Unicode escape sequence: \"\\u{FX\".", 1, 6),
        LexErrorCase("\"bad \\u{FFFF esc\"", "Invalid Unicode escape sequence: \"\\u{FFFF \".", 1, 6),
        LexErrorCase("\"bad \\u{FFFF\"", "Invalid Unicode escape sequence: \"\\u{FFFF\"\".", 1, 6),
        LexErrorCase("\"too high \\u{110000} esc\"", "Invalid Unicode escape sequence: \"\\u{110000}\".", 1, 11),
        LexErrorCase("\"way too high \\u{12345678} esc\"", "Invalid Unicode escape sequence: \"\\u{12345678}\".", 1, 15),
        LexErrorCase("\"too long \\u{000000000} esc\"", "Invalid Unicode escape sequence: \"\\u{000000000\".", 1, 11),
        LexErrorCase("\"bad surrogate \\uDEAD esc\"", "Invalid Unicode escape sequence: \"\\uDEAD\".", 1, 16),
        LexErrorCase("\"bad surrogate \\u{DEAD} esc\"", "Invalid Unicode escape sequence: \"\\u{DEAD}\".", 1, 16),
        LexErrorCase("\"cannot use braces for surrogate pair \\u{D83D}\\u{DE00} esc\"",
                     "Invalid Unicode escape sequence: \"\\u{D83D}\".", 1, 39),
        LexErrorCase("\"bad high surrogate pair \\uDEAD\\uDEAD esc\"", "Invalid Unicode escape sequence: \"\\uDEAD\".", 1, 26),
        LexErrorCase("\"bad low surrogate pair \\uD800\\uD800 esc\"", "Invalid Unicode escape sequence: \"\\uD800\".", 1, 25),
        LexErrorCase("\"bad \\uD83D\\not an escape\"", "Invalid Unicode escape sequence: \"\\uD83D\".", 1, 6),
        LexErrorCase("\"é \\q\"", "Invalid character escape sequence: \"\\q\".", 1, 4),
        // Block strings.
        LexErrorCase("\"\"\"no end quote", "Unterminated string.", 1, 16),
        LexErrorCase("\"\"\"a\nb\nc", "Unterminated string.", 3, 2),
        LexErrorCase("\"\"\"escaped \\\"\"\"", "Unterminated string.", 1, 16),
        // Numbers.
        LexErrorCase("00", "Invalid number, unexpected digit after 0: \"0\".", 1, 2),
        LexErrorCase("01", "Invalid number, unexpected digit after 0: \"1\".", 1, 2),
        LexErrorCase("01.23", "Invalid number, unexpected digit after 0: \"1\".", 1, 2),
        LexErrorCase("-01", "Invalid number, unexpected digit after 0: \"1\".", 1, 3),
        LexErrorCase("1.", "Invalid number, expected digit but got: <EOF>.", 1, 3),
        LexErrorCase("1e", "Invalid number, expected digit but got: <EOF>.", 1, 3),
        LexErrorCase("1.e1", "Invalid number, expected digit but got: \"e\".", 1, 3),
        LexErrorCase("1.A", "Invalid number, expected digit but got: \"A\".", 1, 3),
        LexErrorCase("-A", "Invalid number, expected digit but got: \"A\".", 1, 2),
        LexErrorCase("-", "Invalid number, expected digit but got: <EOF>.", 1, 2),
        LexErrorCase("1.0e", "Invalid number, expected digit but got: <EOF>.", 1, 5),
        LexErrorCase("1.0eA", "Invalid number, expected digit but got: \"A\".", 1, 5),
        LexErrorCase("1.0e\"", "Invalid number, expected digit but got: '\"'.", 1, 5),
        LexErrorCase("1.2e3e", "Invalid number, expected digit but got: \"e\".", 1, 6),
        LexErrorCase("1.2e3.4", "Invalid number, expected digit but got: \".\".", 1, 6),
        LexErrorCase("1.23.4", "Invalid number, expected digit but got: \".\".", 1, 5),
        LexErrorCase("0xF1", "Invalid number, expected digit but got: \"x\".", 1, 2),
        LexErrorCase("0b10", "Invalid number, expected digit but got: \"b\".", 1, 2),
        LexErrorCase("123abc", "Invalid number, expected digit but got: \"a\".", 1, 4),
        LexErrorCase("1_234", "Invalid number, expected digit but got: \"_\".", 1, 2),
        LexErrorCase("1\u{00DF}", "Unexpected character: U+00DF.", 1, 2),
        LexErrorCase("1.23f", "Invalid number, expected digit but got: \"f\".", 1, 5),
        LexErrorCase("1.234_5", "Invalid number, expected digit but got: \"_\".", 1, 6),
        LexErrorCase("1e+", "Invalid number, expected digit but got: <EOF>.", 1, 4),
        LexErrorCase("1e-x", "Invalid number, expected digit but got: \"x\".", 1, 4),
        LexErrorCase("1..", "Invalid number, expected digit but got: \".\".", 1, 3),
        LexErrorCase("1...", "Invalid number, expected digit but got: \".\".", 1, 3),
        LexErrorCase("0.", "Invalid number, expected digit but got: <EOF>.", 1, 3),
        LexErrorCase("é 1.", "Unexpected character: U+00E9.", 1, 1),
        LexErrorCase("\"é\" 1.", "Invalid number, expected digit but got: <EOF>.", 1, 7),
    ]

    @Test(arguments: errorCases)
    func lexError(_ c: LexErrorCase) {
        let error = firstLexError(Source(c.input))
        #expect(error?.message == "Syntax Error: " + c.message)
        #expect(error?.locations == [SourceLocation(line: c.line, column: c.column)])
    }

    static let tokenCases: [LexCase] = [
        // Names and punctuators.
        LexCase("foo", .name, "foo"),
        LexCase("_Foo_9", .name, "_Foo_9"),
        LexCase("!", .bang, nil), LexCase("$", .dollar, nil), LexCase("&", .amp, nil),
        LexCase("(", .parenL, nil), LexCase(")", .parenR, nil), LexCase("...", .spread, nil),
        LexCase(":", .colon, nil), LexCase("=", .equals, nil), LexCase("@", .at, nil),
        LexCase("[", .bracketL, nil), LexCase("]", .bracketR, nil), LexCase("{", .braceL, nil),
        LexCase("|", .pipe, nil), LexCase("}", .braceR, nil),
        // Ignored tokens before the token.
        LexCase("\u{FEFF} foo", .name, "foo"),
        LexCase("\t,,\r\n  #comment\n foo # trailing", .name, "foo"),
        LexCase("#only comment", .eof, nil),
        LexCase("", .eof, nil),
        // Numbers.
        LexCase("4", .int, "4"), LexCase("0", .int, "0"), LexCase("-0", .int, "-0"),
        LexCase("-4", .int, "-4"), LexCase("9876543210", .int, "9876543210"),
        LexCase("4.123", .float, "4.123"), LexCase("-4.123", .float, "-4.123"),
        LexCase("0.123", .float, "0.123"), LexCase("123e4", .float, "123e4"),
        LexCase("123E4", .float, "123E4"), LexCase("123e-4", .float, "123e-4"),
        LexCase("123e+4", .float, "123e+4"), LexCase("-1.123e4", .float, "-1.123e4"),
        LexCase("-1.123E-4", .float, "-1.123E-4"), LexCase("-1.123e4567", .float, "-1.123e4567"),
        LexCase("0e1", .float, "0e1"),
        // Strings.
        LexCase("\"\"", .string, ""),
        LexCase("\"simple\"", .string, "simple"),
        LexCase("\" white space \"", .string, " white space "),
        LexCase("\"quote \\\"\"", .string, "quote \""),
        LexCase("\"escaped \\n\\r\\b\\t\\f\"", .string, "escaped \n\r\u{08}\t\u{0C}"),
        LexCase("\"slashes \\\\ \\/\"", .string, "slashes \\ /"),
        LexCase("\"unescaped unicode outside BMP \u{1F600}\"", .string, "unescaped unicode outside BMP \u{1F600}"),
        LexCase("\"unescaped maximal unicode outside BMP \u{10FFFF}\"", .string, "unescaped maximal unicode outside BMP \u{10FFFF}"),
        LexCase("\"unicode \\u1234\\u5678\\u90AB\\uCDEF\"", .string, "unicode \u{1234}\u{5678}\u{90AB}\u{CDEF}"),
        LexCase("\"unicode \\u{1234}\\u{5678}\\u{90AB}\\u{CDEF}\"", .string, "unicode \u{1234}\u{5678}\u{90AB}\u{CDEF}"),
        LexCase("\"string with unicode escape outside BMP \\u{1F600}\"", .string, "string with unicode escape outside BMP \u{1F600}"),
        LexCase("\"string with minimal unicode escape \\u{0}\"", .string, "string with minimal unicode escape \u{0}"),
        LexCase("\"string with maximal unicode escape \\u{10FFFF}\"", .string, "string with maximal unicode escape \u{10FFFF}"),
        LexCase("\"string with maximal minimal unicode escape \\u{00000000}\"", .string, "string with maximal minimal unicode escape \u{0}"),
        LexCase("\"string with unicode surrogate pair escape \\uD83D\\uDE00\"", .string, "string with unicode surrogate pair escape \u{1F600}"),
        LexCase("\"string with minimal surrogate pair escape \\uD800\\uDC00\"", .string, "string with minimal surrogate pair escape \u{10000}"),
        LexCase("\"string with maximal surrogate pair escape \\uDBFF\\uDFFF\"", .string, "string with maximal surrogate pair escape \u{10FFFF}"),
        LexCase("\"lower hex \\u00e9\\u{e9}\"", .string, "lower hex éé"),
        LexCase("\"control \u{0001}\u{0007} allowed\"", .string, "control \u{0001}\u{0007} allowed"),
        LexCase("\"é\\\"é\"", .string, "é\"é"),
        // Block strings.
        LexCase("\"\"\"\"\"\"", .blockString, ""),
        LexCase("\"\"\"simple\"\"\"", .blockString, "simple"),
        LexCase("\"\"\" white space \"\"\"", .blockString, " white space "),
        LexCase("\"\"\"contains \" quote\"\"\"", .blockString, "contains \" quote"),
        LexCase("\"\"\"contains \\\"\"\" triple quote\"\"\"", .blockString, "contains \"\"\" triple quote"),
        LexCase("\"\"\"multi\nline\"\"\"", .blockString, "multi\nline"),
        LexCase("\"\"\"multi\rline\r\nnormalized\"\"\"", .blockString, "multi\nline\nnormalized"),
        LexCase("\"\"\"unescaped \\n\\r\\b\\t\\f\\u1234\"\"\"", .blockString, "unescaped \\n\\r\\b\\t\\f\\u1234"),
        LexCase("\"\"\"unescaped unicode outside BMP \u{1F600}\"\"\"", .blockString, "unescaped unicode outside BMP \u{1F600}"),
        LexCase("\"\"\"slashes \\\\ \\/\"\"\"", .blockString, "slashes \\\\ \\/"),
        LexCase("\"\"\"\n\n        spans\n          multiple\n            lines\n\n        \"\"\"", .blockString,
                "spans\n  multiple\n    lines"),
        // BlockStringValue: common indent ignores the first line and blank lines.
        LexCase("\"\"\"  first\n    second\n      third\"\"\"", .blockString, "  first\nsecond\n  third"),
        LexCase("\"\"\"\n    a\n\n    b\n  \"\"\"", .blockString, "a\n\nb"),
        LexCase("\"\"\"\n\t\ta\n\t\t  b\n\t\"\"\"", .blockString, "a\n  b"),
        LexCase("\"\"\"\n   \n  \t \n\"\"\"", .blockString, ""),
        LexCase("\"\"\"   \"\"\"", .blockString, ""),
        LexCase("\"\"\"\n  é\n   ü\n\"\"\"", .blockString, "é\n ü"),
        LexCase("\"\"\"\n  a\n b\"\"\"", .blockString, " a\nb"),
        LexCase("\"\"\"x\\\"\"\"\"\"\"", .blockString, "x\"\"\""),
        LexCase("\"\"\"x\\\"\"y\"\"\"", .blockString, "x\\\"\"y"),
    ]

    @Test(arguments: tokenCases)
    func lexToken(_ c: LexCase) throws {
        let token = try lexOne(c.input)
        #expect(token.kind == c.kind)
        #expect(token.value == c.value)
    }

    @Test func tokenPositionsAndLocations() throws {
        let source = Source("\u{FEFF}{\n  a: \"é\" # c\n  ...on\r\n}")
        let tokens = try Lexer.tokens(source)
        #expect(tokens.map(\.kind) == [.braceL, .name, .colon, .string, .spread, .name, .braceR])
        #expect(tokens.map(\.start) == [3, 7, 8, 10, 21, 24, 28])
        #expect(tokens.map(\.end) == [4, 8, 9, 14, 24, 26, 29])
        #expect(tokens.map { $0.location(in: source) } == [
            SourceLocation(line: 1, column: 2), SourceLocation(line: 2, column: 3),
            SourceLocation(line: 2, column: 4), SourceLocation(line: 2, column: 6),
            SourceLocation(line: 3, column: 3), SourceLocation(line: 3, column: 6),
            SourceLocation(line: 4, column: 1),
        ])
        #expect(tokens[3].value == "é")
        #expect(tokens[3].description == "String \"é\"")
        #expect(tokens[4].description == "\"...\"")
    }

    @Test func lookaheadDoesNotConsume() throws {
        var lexer = Lexer(Source("a # x\n b c"))
        #expect(try lexer.advance().value == "a")
        #expect(try lexer.lookahead().value == "b")
        #expect(try lexer.lookahead().value == "b")
        #expect(lexer.token.value == "a")
        #expect(try lexer.advance().value == "b")
        #expect(lexer.lastToken.value == "a")
        #expect(try lexer.advance().value == "c")
        #expect(try lexer.advance().kind == .eof)
        #expect(try lexer.advance().kind == .eof)
    }

    @Test func blockStringAfterLinesKeepsLocations() throws {
        let source = Source("\"\"\"\n a\n b\n\"\"\" ?")
        let error = firstLexError(source)
        #expect(error?.message == "Syntax Error: Unexpected character: \"?\".")
        #expect(error?.locations == [SourceLocation(line: 4, column: 5)])
    }

    @Test func invalidUTF8IsRejected() {
        let outside = firstLexError(Source(bytes: [0x7B, 0x20, 0xFF]))
        #expect(outside?.message == "Syntax Error: Invalid character: 0xFF.")
        #expect(outside?.locations == [SourceLocation(line: 1, column: 3)])

        let inString = firstLexError(Source(bytes: [0x22, 0x61, 0xC3, 0x28, 0x22]))
        #expect(inString?.message == "Syntax Error: Invalid character within String: 0xC3.")
        #expect(inString?.locations == [SourceLocation(line: 1, column: 3)])

        // An encoded surrogate (ED A0 80) is not a Unicode scalar value.
        let surrogate = firstLexError(Source(bytes: [0x22, 0x22, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x22, 0x22]))
        #expect(surrogate?.message == "Syntax Error: Invalid character within String: 0xED.")

        // A malformed byte ends a comment; the next token reports it.
        let inComment = firstLexError(Source(bytes: [0x23, 0x61, 0xF8, 0x0A]))
        #expect(inComment?.message == "Syntax Error: Invalid character: 0xF8.")
        #expect(inComment?.locations == [SourceLocation(line: 1, column: 3)])

        // Overlong encoding of "/".
        let overlong = firstLexError(Source(bytes: [0xC0, 0xAF]))
        #expect(overlong?.message == "Syntax Error: Invalid character: 0xC0.")
    }

    @Test func blockStringValueHelper() {
        #expect(BlockString.value("\n    Hello,\n      World!\n\n    Yours,\n      GraphQL.\n  ")
                == "Hello,\n  World!\n\nYours,\n  GraphQL.")
        #expect(BlockString.value("    \n  \n") == "")
        #expect(BlockString.value("single") == "single")
    }

    @Test func longInputsLexLinearly() throws {
        let name = String(repeating: "a", count: 100_000)
        #expect(try lexOne(name).value?.utf8.count == 100_000)
        let string = "\"" + String(repeating: "é\\n", count: 20_000) + "\""
        #expect(try lexOne(string).value?.unicodeScalars.count == 40_000)
        let tokens = try Lexer.tokens(Source(String(repeating: "{a}", count: 10_000)))
        #expect(tokens.count == 30_000)
    }
}
