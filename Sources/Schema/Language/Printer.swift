// Printing value literals and type references back to GraphQL text, as graphql-js 16
// `print` does (`src/language/printer.ts`, `printString.ts`) — e.g. for messages and for
// `__InputValue.defaultValue`.

public enum Printer {
    /// A value literal as graphql-js prints it: `"a\nb"`, `[1, 2]`, `{a: ENUM, b: $v}`;
    /// block strings stay block strings.
    public static func print(_ value: Value) -> String {
        var out = ""
        write(value, to: &out)
        return out
    }

    /// A type reference: `[Int!]!`.
    public static func print(_ type: TypeNode) -> String {
        switch type {
        case .named(let n): return n.name.value
        case .list(let t, _): return "[" + print(t) + "]"
        case .nonNull(let t, _): return print(t) + "!"
        }
    }

    /// A string literal with graphql-js's escapes: `"`, `\`, C0 and C1 control characters.
    public static func printString(_ s: String) -> String {
        var out = ""
        writeString(s, to: &out)
        return out
    }

    /// A block string literal for `value`, as graphql-js 16 `printBlockString` (not minimized).
    public static func printBlockString(_ value: String) -> String {
        let escaped = value.escapingTripleQuotes()
        let lines = escaped.splitLines()
        let isSingleLine = lines.count == 1
        func isWhiteSpace(_ c: Unicode.Scalar?) -> Bool { c == " " || c == "\t" }
        let forceLeadingNewLine = lines.count > 1
            && lines.dropFirst().allSatisfy { $0.isEmpty || isWhiteSpace($0.unicodeScalars.first) }
        let hasTrailingTripleQuotes = escaped.hasSuffix("\\\"\"\"")
        let hasTrailingQuote = value.hasSuffix("\"") && !hasTrailingTripleQuotes
        let hasTrailingSlash = value.hasSuffix("\\")
        let forceTrailingNewline = hasTrailingQuote || hasTrailingSlash
        // JavaScript's length: UTF-16 code units.
        let printAsMultipleLines = !isSingleLine || value.utf16.count > 70 || forceTrailingNewline
            || forceLeadingNewLine || hasTrailingTripleQuotes
        var result = ""
        let skipLeadingNewLine = isSingleLine && isWhiteSpace(value.unicodeScalars.first)
        if (printAsMultipleLines && !skipLeadingNewLine) || forceLeadingNewLine { result += "\n" }
        result += escaped
        if printAsMultipleLines || forceTrailingNewline { result += "\n" }
        return "\"\"\"" + result + "\"\"\""
    }

    private static func write(_ value: Value, to out: inout String) {
        switch value {
        case .variable(let v): out += "$" + v.name.value
        case .int(let s, _), .float(let s, _): out += s
        case .string(let s, let block, _): if block { out += printBlockString(s) } else { writeString(s, to: &out) }
        case .boolean(let b, _): out += b ? "true" : "false"
        case .null: out += "null"
        case .enumValue(let e, _): out += e
        case .list(let items, _):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += ", " }
                write(item, to: &out)
            }
            out += "]"
        case .object(let fields, _):
            out += "{"
            for (i, field) in fields.enumerated() {
                if i > 0 { out += ", " }
                out += field.name.value + ": "
                write(field.value, to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar.value {
            case 0x08: out += "\\b"
            case 0x09: out += "\\t"
            case 0x0A: out += "\\n"
            case 0x0C: out += "\\f"
            case 0x0D: out += "\\r"
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x00...0x1F, 0x7F...0x9F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

private extension String {
    /// `"""` replaced by `\"""`, left to right, as JavaScript's replaceAll.
    func escapingTripleQuotes() -> String {
        var out = String.UnicodeScalarView()
        var quotes = 0
        for c in unicodeScalars {
            if c == "\"" {
                quotes += 1
                if quotes == 3 {
                    out.append(contentsOf: "\\\"\"\"".unicodeScalars)
                    quotes = 0
                }
            } else {
                for _ in 0..<quotes { out.append("\"") }
                quotes = 0
                out.append(c)
            }
        }
        for _ in 0..<quotes { out.append("\"") }
        return String(out)
    }

    /// Lines split on \r\n, \n or \r.
    func splitLines() -> [Substring] {
        var lines: [Substring] = []
        var start = startIndex
        var i = startIndex
        while i < endIndex {
            let c = self[i]
            if c == "\n" || c == "\r" || c == "\r\n" {
                lines.append(self[start..<i])
                i = index(after: i)
                start = i
            } else {
                i = index(after: i)
            }
        }
        lines.append(self[start..<endIndex])
        return lines
    }
}
