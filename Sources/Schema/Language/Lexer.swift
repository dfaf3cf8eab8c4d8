// The lexer, after graphql-js 16 `src/language/lexer.ts`, over the Source's UTF-8 bytes.
// Tokens are produced on demand: `advance()` moves to the next significant token (ignored
// tokens — BOM, white space, line terminators, commas, comments — are skipped), and
// `lookahead()` peeks one token further without consuming it.
//
// Messages and error positions follow graphql-js exactly; columns are counted in Unicode
// scalars. Bytes that are not well-formed UTF-8 are rejected with "Invalid character: 0xNN.".

public struct Lexer: Sendable {
    public let source: Source
    private let body: [UInt8]
    /// The current token (`<SOF>` before the first `advance()`).
    public private(set) var token: Token
    /// The token before `token`, used for node locations.
    public private(set) var lastToken: Token
    private var peeked: Token?

    public init(_ source: Source) {
        self.source = source
        self.body = source.body
        let sof = Token(kind: .sof, start: 0, end: 0)
        self.token = sof
        self.lastToken = sof
    }

    /// Moves to the next token and returns it. At `<EOF>` it stays there.
    @discardableResult
    public mutating func advance() throws(GraphQLSyntaxError) -> Token {
        let next: Token
        if let p = peeked {
            next = p
            peeked = nil
        } else if token.kind == .eof {
            next = token
        } else {
            next = try readToken(from: token.end)
        }
        lastToken = token
        token = next
        return next
    }

    /// The token after `token`, without consuming it.
    public mutating func lookahead() throws(GraphQLSyntaxError) -> Token {
        if token.kind == .eof { return token }
        if let peeked { return peeked }
        let next = try readToken(from: token.end)
        peeked = next
        return next
    }

    /// All tokens of a source up to and excluding `<EOF>` (for tests and tools).
    public static func tokens(_ source: Source) throws(GraphQLSyntaxError) -> [Token] {
        var lexer = Lexer(source)
        var out: [Token] = []
        while true {
            let t = try lexer.advance()
            if t.kind == .eof { return out }
            out.append(t)
        }
    }

    // MARK: Reading tokens

    /// The byte at `i`, or -1 past the end (graphql-js's `charCodeAt` NaN).
    @inline(__always)
    private func byte(_ i: Int) -> Int { i < body.count ? Int(body[i]) : -1 }

    private func syntaxError(_ position: Int, _ description: String) -> GraphQLSyntaxError {
        GraphQLSyntaxError(GraphQLError("Syntax Error: " + description, source: source, offsets: [position]))
    }

    // Token :: Punctuator | Name | IntValue | FloatValue | StringValue
    // Ignored :: UnicodeBOM | WhiteSpace | LineTerminator | Comment | Comma
    private func readToken(from start: Int) throws(GraphQLSyntaxError) -> Token {
        let count = body.count
        var position = start
        while position < count {
            let code = body[position]
            switch code {
            case 0x09, 0x20, 0x2C, 0x0A, 0x0D: // \t, space, comma, \n, \r
                position += 1
                continue
            case 0xEF where byte(position + 1) == 0xBB && byte(position + 2) == 0xBF: // U+FEFF
                position += 3
                continue
            case 0x23: // #
                position = skipComment(position)
                continue
            case 0x21: return Token(kind: .bang, start: position, end: position + 1)
            case 0x24: return Token(kind: .dollar, start: position, end: position + 1)
            case 0x26: return Token(kind: .amp, start: position, end: position + 1)
            case 0x28: return Token(kind: .parenL, start: position, end: position + 1)
            case 0x29: return Token(kind: .parenR, start: position, end: position + 1)
            case 0x2E: // .
                if byte(position + 1) == 0x2E && byte(position + 2) == 0x2E {
                    return Token(kind: .spread, start: position, end: position + 3)
                }
            case 0x3A: return Token(kind: .colon, start: position, end: position + 1)
            case 0x3D: return Token(kind: .equals, start: position, end: position + 1)
            case 0x40: return Token(kind: .at, start: position, end: position + 1)
            case 0x5B: return Token(kind: .bracketL, start: position, end: position + 1)
            case 0x5D: return Token(kind: .bracketR, start: position, end: position + 1)
            case 0x7B: return Token(kind: .braceL, start: position, end: position + 1)
            case 0x7C: return Token(kind: .pipe, start: position, end: position + 1)
            case 0x7D: return Token(kind: .braceR, start: position, end: position + 1)
            case 0x22: // "
                if byte(position + 1) == 0x22 && byte(position + 2) == 0x22 {
                    return try readBlockString(position)
                }
                return try readString(position)
            case 0x2D, 0x30...0x39: // - 0-9
                return try readNumber(position)
            case 0x41...0x5A, 0x5F, 0x61...0x7A: // A-Z _ a-z
                return readName(position)
            default:
                break
            }
            if code == 0x27 {
                throw syntaxError(position, "Unexpected single quote character ('), did you mean to use a double quote (\")?")
            }
            if code >= 0x80 && decodeScalar(at: position) == nil {
                throw syntaxError(position, "Invalid character: \(printCodePoint(at: position)).")
            }
            throw syntaxError(position, "Unexpected character: \(printCodePoint(at: position)).")
        }
        return Token(kind: .eof, start: count, end: count)
    }

    // Comment :: # CommentChar* ; CommentChar :: SourceCharacter but not LineTerminator
    /// Returns the position just past the comment. Malformed UTF-8 ends the comment, so that
    /// the next token reports it.
    private func skipComment(_ start: Int) -> Int {
        var position = start + 1
        let count = body.count
        while position < count {
            let code = body[position]
            if code == 0x0A || code == 0x0D { break }
            if code < 0x80 {
                position += 1
            } else if let (_, length) = decodeScalar(at: position) {
                position += length
            } else {
                break
            }
        }
        return position
    }

    // Name :: NameStart NameContinue* [lookahead != NameContinue]
    private func readName(_ start: Int) -> Token {
        var position = start + 1
        let count = body.count
        while position < count, isNameContinue(Int(body[position])) { position += 1 }
        return Token(kind: .name, start: start, end: position,
                     value: String(decoding: body[start..<position], as: UTF8.self))
    }

    // IntValue :: IntegerPart [lookahead != {Digit, ., NameStart}]
    // FloatValue ::
    //   - IntegerPart FractionalPart ExponentPart [lookahead != {Digit, ., NameStart}]
    //   - IntegerPart FractionalPart [lookahead != {Digit, ., NameStart}]
    //   - IntegerPart ExponentPart [lookahead != {Digit, ., NameStart}]
    // IntegerPart :: NegativeSign? 0 | NegativeSign? NonZeroDigit Digit*
    // FractionalPart :: . Digit+
    // ExponentPart :: ExponentIndicator Sign? Digit+
    private func readNumber(_ start: Int) throws(GraphQLSyntaxError) -> Token {
        var position = start
        var code = byte(position)
        var isFloat = false

        if code == 0x2D { // -
            position += 1
            code = byte(position)
        }
        if code == 0x30 { // 0
            position += 1
            code = byte(position)
            if isDigit(code) {
                throw syntaxError(position, "Invalid number, unexpected digit after 0: \(printCodePoint(at: position)).")
            }
        } else {
            position = try readDigits(position)
            code = byte(position)
        }
        if code == 0x2E { // .
            isFloat = true
            position = try readDigits(position + 1)
            code = byte(position)
        }
        if code == 0x45 || code == 0x65 { // E e
            isFloat = true
            position += 1
            code = byte(position)
            if code == 0x2B || code == 0x2D { // + -
                position += 1
            }
            position = try readDigits(position)
            code = byte(position)
        }
        // Numbers cannot be followed by . or NameStart.
        if code == 0x2E || isNameStart(code) {
            throw syntaxError(position, "Invalid number, expected digit but got: \(printCodePoint(at: position)).")
        }
        return Token(kind: isFloat ? .float : .int, start: start, end: position,
                     value: String(decoding: body[start..<position], as: UTF8.self))
    }

    /// Reads Digit+ starting at `start`; returns the position after the last digit.
    private func readDigits(_ start: Int) throws(GraphQLSyntaxError) -> Int {
        guard isDigit(byte(start)) else {
            throw syntaxError(start, "Invalid number, expected digit but got: \(printCodePoint(at: start)).")
        }
        var position = start + 1
        while isDigit(byte(position)) { position += 1 }
        return position
    }

    // StringValue :: "" [lookahead != "] | " StringCharacter+ "
    // StringCharacter :: SourceCharacter but not " or \ or LineTerminator | \u EscapedUnicode
    //                  | \ EscapedCharacter
    private func readString(_ start: Int) throws(GraphQLSyntaxError) -> Token {
        let count = body.count
        var position = start + 1
        var chunkStart = position
        // Only allocated once an escape sequence is met; otherwise the value is one slice.
        var value: [UInt8] = []
        var hasEscape = false

        while position < count {
            let code = body[position]
            if code == 0x22 { // closing "
                let text: String
                if hasEscape {
                    value.append(contentsOf: body[chunkStart..<position])
                    text = String(decoding: value, as: UTF8.self)
                } else {
                    text = String(decoding: body[chunkStart..<position], as: UTF8.self)
                }
                return Token(kind: .string, start: start, end: position + 1, value: text)
            }
            if code == 0x5C { // \
                if !hasEscape {
                    hasEscape = true
                    value.reserveCapacity(position - chunkStart + 16)
                }
                value.append(contentsOf: body[chunkStart..<position])
                let size: Int
                if byte(position + 1) == 0x75 { // u
                    let scalar: UInt32
                    if byte(position + 2) == 0x7B { // {
                        (scalar, size) = try readEscapedUnicodeVariableWidth(position)
                    } else {
                        (scalar, size) = try readEscapedUnicodeFixedWidth(position)
                    }
                    appendUTF8(scalar, to: &value)
                } else {
                    value.append(try readEscapedCharacter(position))
                    size = 2
                }
                position += size
                chunkStart = position
                continue
            }
            if code == 0x0A || code == 0x0D { break } // LineTerminator
            if code < 0x80 {
                position += 1
            } else if let (_, length) = decodeScalar(at: position) {
                position += length
            } else {
                throw syntaxError(position, "Invalid character within String: \(printCodePoint(at: position)).")
            }
        }
        throw syntaxError(position, "Unterminated string.")
    }

    // EscapedUnicode :: { HexDigit+ } | HexDigit HexDigit HexDigit HexDigit
    /// `\u{...}`: at most 12 characters in all, at least one digit, a Unicode scalar value.
    private func readEscapedUnicodeVariableWidth(_ position: Int) throws(GraphQLSyntaxError) -> (UInt32, Int) {
        var point: Int32 = 0
        var size = 3
        while size < 12 {
            let code = byte(position + size)
            size += 1
            if code == 0x7D { // }
                if size < 5 || !isUnicodeScalarValue(Int(point)) { break }
                return (UInt32(point), size)
            }
            // Mirrors graphql-js's 32-bit arithmetic: a non-hex digit (-1) makes it negative.
            point = (point &<< 4) | Int32(readHexDigit(code))
            if point < 0 { break }
        }
        throw syntaxError(position, "Invalid Unicode escape sequence: \"\(text(position, position + size))\".")
    }

    /// `\uXXXX`, where a leading surrogate must be followed by `\uXXXX` with a trailing one.
    private func readEscapedUnicodeFixedWidth(_ position: Int) throws(GraphQLSyntaxError) -> (UInt32, Int) {
        let code = read16BitHexCode(position + 2)
        if isUnicodeScalarValue(code) { return (UInt32(code), 6) }
        if (0xD800...0xDBFF).contains(code), byte(position + 6) == 0x5C, byte(position + 7) == 0x75 {
            let trailing = read16BitHexCode(position + 8)
            if (0xDC00...0xDFFF).contains(trailing) {
                let scalar = 0x10000 + ((code - 0xD800) << 10) + (trailing - 0xDC00)
                return (UInt32(scalar), 12)
            }
        }
        throw syntaxError(position, "Invalid Unicode escape sequence: \"\(text(position, position + 6))\".")
    }

    private func read16BitHexCode(_ position: Int) -> Int {
        (readHexDigit(byte(position)) << 12) | (readHexDigit(byte(position + 1)) << 8)
            | (readHexDigit(byte(position + 2)) << 4) | readHexDigit(byte(position + 3))
    }

    // EscapedCharacter :: one of " \ / b f n r t
    private func readEscapedCharacter(_ position: Int) throws(GraphQLSyntaxError) -> UInt8 {
        switch byte(position + 1) {
        case 0x22: return 0x22
        case 0x5C: return 0x5C
        case 0x2F: return 0x2F
        case 0x62: return 0x08 // b
        case 0x66: return 0x0C // f
        case 0x6E: return 0x0A // n
        case 0x72: return 0x0D // r
        case 0x74: return 0x09 // t
        default:
            throw syntaxError(position, "Invalid character escape sequence: \"\(text(position, position + 2))\".")
        }
    }

    // StringValue :: """ BlockStringCharacter* """
    // BlockStringCharacter :: SourceCharacter but not """ or \""" | \"""
    private func readBlockString(_ start: Int) throws(GraphQLSyntaxError) -> Token {
        let count = body.count
        var position = start + 3
        var chunkStart = position
        var currentLine: [UInt8] = []
        var lines: [[UInt8]] = []

        while position < count {
            let code = body[position]
            if code == 0x22 && byte(position + 1) == 0x22 && byte(position + 2) == 0x22 { // """
                currentLine.append(contentsOf: body[chunkStart..<position])
                lines.append(currentLine)
                let value = BlockString.dedentLines(lines)
                var joined: [UInt8] = []
                joined.reserveCapacity(position - start)
                for (i, line) in value.enumerated() {
                    if i > 0 { joined.append(0x0A) }
                    joined.append(contentsOf: line)
                }
                return Token(kind: .blockString, start: start, end: position + 3,
                             value: String(decoding: joined, as: UTF8.self))
            }
            if code == 0x5C && byte(position + 1) == 0x22 && byte(position + 2) == 0x22
                && byte(position + 3) == 0x22 { // \"""
                currentLine.append(contentsOf: body[chunkStart..<position])
                chunkStart = position + 1 // keep the quotes, drop the backslash
                position += 4
                continue
            }
            if code == 0x0A || code == 0x0D {
                currentLine.append(contentsOf: body[chunkStart..<position])
                lines.append(currentLine)
                position += (code == 0x0D && byte(position + 1) == 0x0A) ? 2 : 1
                currentLine = []
                chunkStart = position
                continue
            }
            if code < 0x80 {
                position += 1
            } else if let (_, length) = decodeScalar(at: position) {
                position += length
            } else {
                throw syntaxError(position, "Invalid character within String: \(printCodePoint(at: position)).")
            }
        }
        throw syntaxError(position, "Unterminated string.")
    }

    // MARK: Characters

    /// The well-formed UTF-8 scalar at `i` and its length in bytes, or nil.
    private func decodeScalar(at i: Int) -> (UInt32, Int)? {
        let b0 = byte(i)
        if b0 < 0 { return nil }
        if b0 < 0x80 { return (UInt32(b0), 1) }
        func cont(_ j: Int, _ lo: Int = 0x80, _ hi: Int = 0xBF) -> Int? {
            let b = byte(j)
            return b >= lo && b <= hi ? b & 0x3F : nil
        }
        switch b0 {
        case 0xC2...0xDF:
            guard let c1 = cont(i + 1) else { return nil }
            return (UInt32((b0 & 0x1F) << 6 | c1), 2)
        case 0xE0...0xEF:
            let lo = b0 == 0xE0 ? 0xA0 : 0x80
            let hi = b0 == 0xED ? 0x9F : 0xBF
            guard let c1 = cont(i + 1, lo, hi), let c2 = cont(i + 2) else { return nil }
            return (UInt32((b0 & 0x0F) << 12 | c1 << 6 | c2), 3)
        case 0xF0...0xF4:
            let lo = b0 == 0xF0 ? 0x90 : 0x80
            let hi = b0 == 0xF4 ? 0x8F : 0xBF
            guard let c1 = cont(i + 1, lo, hi), let c2 = cont(i + 2), let c3 = cont(i + 3) else { return nil }
            return (UInt32((b0 & 0x07) << 18 | c1 << 12 | c2 << 6 | c3), 4)
        default:
            return nil
        }
    }

    /// A character as graphql-js prints it in messages: `"a"`, `'"'`, `U+00A0`, `<EOF>`;
    /// a byte that starts no well-formed UTF-8 sequence prints as `0xFF`.
    private func printCodePoint(at i: Int) -> String {
        guard i < body.count else { return "<EOF>" }
        guard let (scalar, _) = decodeScalar(at: i) else {
            return "0x" + hex(Int(body[i]), width: 2)
        }
        if scalar >= 0x20 && scalar <= 0x7E {
            return scalar == 0x22 ? "'\"'" : "\"\(Character(Unicode.Scalar(UInt8(scalar))))\""
        }
        return "U+" + hex(Int(scalar), width: 4)
    }

    /// Source text from `from` to `to` (clamped, extended to a whole scalar) for messages.
    private func text(_ from: Int, _ to: Int) -> String {
        var end = min(to, body.count)
        while end < body.count, body[end] & 0xC0 == 0x80 { end += 1 }
        return String(decoding: body[from..<end], as: UTF8.self)
    }
}

private func hex(_ value: Int, width: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

@inline(__always) private func isDigit(_ code: Int) -> Bool { code >= 0x30 && code <= 0x39 }

@inline(__always) private func isNameStart(_ code: Int) -> Bool {
    (code >= 0x61 && code <= 0x7A) || (code >= 0x41 && code <= 0x5A) || code == 0x5F
}

@inline(__always) private func isNameContinue(_ code: Int) -> Bool { isNameStart(code) || isDigit(code) }

@inline(__always) private func isUnicodeScalarValue(_ code: Int) -> Bool {
    (code >= 0 && code <= 0xD7FF) || (code >= 0xE000 && code <= 0x10FFFF)
}

/// The value of a hex digit, or -1.
@inline(__always) private func readHexDigit(_ code: Int) -> Int {
    switch code {
    case 0x30...0x39: return code - 0x30
    case 0x41...0x46: return code - 0x37
    case 0x61...0x66: return code - 0x57
    default: return -1
    }
}

@inline(__always) private func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
    switch scalar {
    case 0..<0x80:
        out.append(UInt8(scalar))
    case 0x80..<0x800:
        out.append(UInt8(0xC0 | scalar >> 6))
        out.append(UInt8(0x80 | scalar & 0x3F))
    case 0x800..<0x10000:
        out.append(UInt8(0xE0 | scalar >> 12))
        out.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
        out.append(UInt8(0x80 | scalar & 0x3F))
    default:
        out.append(UInt8(0xF0 | scalar >> 18))
        out.append(UInt8(0x80 | (scalar >> 12) & 0x3F))
        out.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
        out.append(UInt8(0x80 | scalar & 0x3F))
    }
}

// MARK: Block strings

/// The spec's BlockStringValue algorithm (graphql-js `src/language/blockString.ts`).
public enum BlockString {
    /// Removes the common indentation of all lines but the first, then leading and trailing
    /// blank lines (lines of only spaces and tabs).
    public static func dedentLines(_ lines: [[UInt8]]) -> ArraySlice<[UInt8]> {
        var commonIndent = Int.max
        var firstNonEmptyLine: Int?
        var lastNonEmptyLine = -1
        for (i, line) in lines.enumerated() {
            let indent = leadingWhitespace(line)
            if indent == line.count { continue } // blank line
            if firstNonEmptyLine == nil { firstNonEmptyLine = i }
            lastNonEmptyLine = i
            if i != 0 && indent < commonIndent { commonIndent = indent }
        }
        guard let first = firstNonEmptyLine else { return [] }
        var out = lines[first...lastNonEmptyLine]
        if commonIndent != Int.max {
            for i in out.indices where i != 0 {
                out[i] = Array(out[i].dropFirst(commonIndent))
            }
        }
        return out
    }

    /// The spec's BlockStringValue of a raw block string (the text between the quotes, with
    /// `\"""` already unescaped), lines joined with U+000A.
    public static func value(_ raw: String) -> String {
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        let bytes = Array(raw.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x0A || b == 0x0D {
                lines.append(current)
                current = []
                if b == 0x0D && i + 1 < bytes.count && bytes[i + 1] == 0x0A { i += 1 }
            } else {
                current.append(b)
            }
            i += 1
        }
        lines.append(current)
        var joined: [UInt8] = []
        for (n, line) in dedentLines(lines).enumerated() {
            if n > 0 { joined.append(0x0A) }
            joined.append(contentsOf: line)
        }
        return String(decoding: joined, as: UTF8.self)
    }

    private static func leadingWhitespace(_ line: [UInt8]) -> Int {
        var i = 0
        while i < line.count && (line[i] == 0x20 || line[i] == 0x09) { i += 1 }
        return i
    }
}
