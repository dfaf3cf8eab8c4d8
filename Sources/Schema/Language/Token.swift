// Lexical tokens, after graphql-js `src/language/tokenKind.ts` and `ast.ts` (Token).

/// The kinds of token the lexer produces. Comments are ignored tokens and never surface.
public enum TokenKind: UInt8, Sendable, CustomStringConvertible {
    case sof
    case eof
    case bang
    case dollar
    case amp
    case parenL
    case parenR
    case spread
    case colon
    case equals
    case at
    case bracketL
    case bracketR
    case braceL
    case pipe
    case braceR
    case name
    case int
    case float
    case string
    case blockString

    /// The kind's name as graphql-js prints it in messages (`<EOF>`, `!`, `Name`, `BlockString`).
    public var description: String {
        switch self {
        case .sof: return "<SOF>"
        case .eof: return "<EOF>"
        case .bang: return "!"
        case .dollar: return "$"
        case .amp: return "&"
        case .parenL: return "("
        case .parenR: return ")"
        case .spread: return "..."
        case .colon: return ":"
        case .equals: return "="
        case .at: return "@"
        case .bracketL: return "["
        case .bracketR: return "]"
        case .braceL: return "{"
        case .pipe: return "|"
        case .braceR: return "}"
        case .name: return "Name"
        case .int: return "Int"
        case .float: return "Float"
        case .string: return "String"
        case .blockString: return "BlockString"
        }
    }

    public var isPunctuator: Bool {
        switch self {
        case .bang, .dollar, .amp, .parenL, .parenR, .spread, .colon, .equals, .at,
             .bracketL, .bracketR, .braceL, .pipe, .braceR:
            return true
        default:
            return false
        }
    }

    /// How an expected kind is named in "Expected X, found Y." (punctuators quoted).
    public var kindDescription: String { isPunctuator ? "\"\(description)\"" : description }
}

/// One token: its kind, its byte range in the Source, and for names, numbers and strings its
/// value (the name, the number's source text, or the decoded string).
public struct Token: Sendable, CustomStringConvertible {
    public let kind: TokenKind
    /// Byte offset of the token's first byte.
    public let start: Int
    /// Byte offset just past the token's last byte.
    public let end: Int
    public let value: String?

    public init(kind: TokenKind, start: Int, end: Int, value: String? = nil) {
        self.kind = kind; self.start = start; self.end = end; self.value = value
    }

    public var loc: Location { Location(start: start, end: end) }

    /// Line and column (1-based, column in Unicode scalars) of the token's start.
    public func location(in source: Source) -> SourceLocation { source.location(of: start) }

    /// The token as graphql-js describes it in messages: `<EOF>`, `"}"`, `Name "foo"`.
    public var description: String {
        if let value { return "\(kind.kindDescription) \"\(value)\"" }
        return kind.kindDescription
    }
}
