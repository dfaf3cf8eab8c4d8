/// A GraphQL document's text, held as UTF-8 bytes; positions are byte offsets into `body`.
public struct Source: Sendable {
    public let body: [UInt8]
    public let name: String

    public init(_ text: String, name: String = "GraphQL request") {
        self.body = Array(text.utf8)
        self.name = name
    }

    public init(bytes: [UInt8], name: String = "GraphQL request") {
        self.body = bytes
        self.name = name
    }

    /// Line and column (both 1-based, column counted in Unicode scalars) of a byte offset.
    public func location(of offset: Int) -> SourceLocation {
        var line = 1
        var column = 1
        var i = 0
        let end = min(offset, body.count)
        while i < end {
            let b = body[i]
            if b == 0x0A {
                line += 1; column = 1
            } else if b == 0x0D {
                if i + 1 < end, body[i + 1] == 0x0A { i += 1 }
                line += 1; column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return SourceLocation(line: line, column: column)
    }
}

public struct SourceLocation: Hashable, Sendable {
    public let line: Int
    public let column: Int
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
}

/// Byte range of a token or node in its Source.
public struct Location: Hashable, Sendable {
    public let start: Int
    public let end: Int
    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }
}
