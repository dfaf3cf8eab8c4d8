import CJansson
import Schema

// Text-level readers for `catalog-gateway import`: CSV records and JSON records, each with the
// line it starts on.

/// A line ends at LF, or at a CR that no LF follows (classic Mac line ends, "CSV (Macintosh)");
/// CRLF ends one line.
@inline(__always)
private func endsLine(_ bytes: [UInt8], _ i: Int) -> Bool {
    let b = bytes[i]
    return b == 0x0A || (b == 0x0D && (i + 1 >= bytes.count || bytes[i + 1] != 0x0A))
}

/// One CSV record: its fields and the line it starts on (1-based).
struct CSVRecord {
    let line: Int
    let fields: [String]
}

/// A CSV file that cannot be read as records (an unterminated quote).
struct CSVSyntaxError: Error {
    let line: Int
    let message: String
}

/// RFC 4180 CSV: comma-separated, fields optionally in double quotes (a quoted field may hold
/// commas, line breaks and "" for a quote), records ended by LF, CRLF or CR. A UTF-8 byte order mark
/// is skipped; a blank line is no record. The text must be UTF-8.
enum CSVReader {
    static func records(_ bytes: [UInt8]) throws(CSVSyntaxError) -> [CSVRecord] {
        var out: [CSVRecord] = []
        let n = bytes.count
        var i = (n >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF) ? 3 : 0
        var line = 1
        var recordLine = 1
        var atRecordStart = true
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false          // the current field was quoted (and its quote is closed)
        var anyQuoted = false       // some field of the current record was quoted
        var notUTF8: (line: Int, field: Int)? = nil  // the first field that is not UTF-8

        func finishField() {
            if let text = String(validating: field, as: UTF8.self) {
                fields.append(text)
            } else {
                if notUTF8 == nil { notUTF8 = (recordLine, fields.count + 1) }
                fields.append("")
            }
            field.removeAll(keepingCapacity: true)
            anyQuoted = anyQuoted || quoted
            quoted = false
        }
        func finishRecord() {
            if !(fields.count == 1 && fields[0].isEmpty && !anyQuoted) {
                out.append(CSVRecord(line: recordLine, fields: fields))
            }
            fields.removeAll(keepingCapacity: true)
            anyQuoted = false
            atRecordStart = true
        }

        while i < n {
            if atRecordStart { recordLine = line; atRecordStart = false }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") && field.isEmpty && !quoted {
                let quoteLine = line
                i += 1
                var closed = false
                while i < n {
                    let c = bytes[i]
                    if c == UInt8(ascii: "\"") {
                        if i + 1 < n && bytes[i + 1] == UInt8(ascii: "\"") { field.append(c); i += 2; continue }
                        i += 1; closed = true; break
                    }
                    if endsLine(bytes, i) { line += 1 }
                    field.append(c); i += 1
                }
                if !closed { throw CSVSyntaxError(line: quoteLine, message: "unterminated quoted field") }
                quoted = true
                continue
            }
            switch b {
            case UInt8(ascii: ","):
                finishField(); i += 1
            case 0x0D where i + 1 < n && bytes[i + 1] == 0x0A:
                i += 1
            case 0x0A, 0x0D:
                finishField(); finishRecord(); line += 1; i += 1
            default:
                if quoted { throw CSVSyntaxError(line: line, message: "unexpected character after a closing quote") }
                field.append(b); i += 1
            }
        }
        if !atRecordStart { finishField(); finishRecord() }
        // Stored as given means as UTF-8 text: a Latin-1 export would be stored with U+FFFD in
        // place of its accented letters, and the JSON reader refuses such bytes too.
        if let notUTF8 {
            throw CSVSyntaxError(line: notUTF8.line, message: "field \(notUTF8.field) is not valid UTF-8 (save the file as UTF-8)")
        }
        return out
    }
}

/// A JSON import file read one record at a time: the top-level array (or each array member of
/// a top-level object) is split by a light scanner, and each record is parsed by jansson on its
/// own, so memory stays proportional to one record and every record knows its line.
struct JSONRecordStream {
    /// A syntax error: its line (1-based) and message.
    struct SyntaxError: Error {
        let line: Int
        let message: String
    }

    let bytes: [UInt8]
    private var pos = 0
    private var line = 1

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { pos = 3 }
    }

    /// Calls `record(value, line, member, index)` for each record: `member` is nil for a
    /// top-level array, else the name of the top-level member holding the array; `index` is
    /// 0-based. For a top-level object, `member(name, line, isArray)` is called first for each
    /// member.
    mutating func read(member: (String, Int, Bool) -> Void = { _, _, _ in },
                       _ record: (JSONValue, Int, String?, Int) -> Void) throws(SyntaxError) {
        skipBlank()
        guard pos < bytes.count else { throw SyntaxError(line: line, message: "empty file") }
        switch bytes[pos] {
        case UInt8(ascii: "["):
            try readArray(member: nil, record)
        case UInt8(ascii: "{"):
            pos += 1
            skipBlank()
            if peek == UInt8(ascii: "}") { pos += 1; break }
            while true {
                skipBlank()
                guard peek == UInt8(ascii: "\"") else { throw SyntaxError(line: line, message: "expected a member name") }
                let keyLine = line
                let key = try parseValue()
                guard case .string(let name) = key else { throw SyntaxError(line: keyLine, message: "expected a member name") }
                skipBlank()
                guard peek == UInt8(ascii: ":") else { throw SyntaxError(line: line, message: "expected ':' after \"\(name)\"") }
                pos += 1
                skipBlank()
                member(name, line, peek == UInt8(ascii: "["))
                if peek == UInt8(ascii: "[") {
                    try readArray(member: name, record)
                } else {
                    _ = try parseValue()
                }
                skipBlank()
                if peek == UInt8(ascii: ",") { pos += 1; continue }
                if peek == UInt8(ascii: "}") { pos += 1; break }
                throw SyntaxError(line: line, message: "expected ',' or '}'")
            }
        default:
            throw SyntaxError(line: line, message:
                "expected an array of records, or an object with arrays products, categories, templates, manufacturers")
        }
        skipBlank()
        if pos < bytes.count { throw SyntaxError(line: line, message: "unexpected text after the end of the JSON value") }
    }

    private var peek: UInt8? { pos < bytes.count ? bytes[pos] : nil }

    private mutating func skipBlank() {
        while pos < bytes.count {
            let b = bytes[pos]
            if endsLine(bytes, pos) { line += 1 } else if b != 0x20 && b != 0x09 && b != 0x0D { return }
            pos += 1
        }
    }

    private mutating func readArray(member: String?, _ record: (JSONValue, Int, String?, Int) -> Void) throws(SyntaxError) {
        pos += 1 // [
        skipBlank()
        if peek == UInt8(ascii: "]") { pos += 1; return }
        var index = 0
        while true {
            skipBlank()
            let start = line
            let value = try parseValue()
            record(value, start, member, index)
            index += 1
            skipBlank()
            if peek == UInt8(ascii: ",") { pos += 1; continue }
            if peek == UInt8(ascii: "]") { pos += 1; return }
            throw SyntaxError(line: line, message: pos < bytes.count ? "expected ',' or ']'" : "unexpected end of file")
        }
    }

    /// Finds the extent of the value at `pos` (strings and nesting only), parses exactly that
    /// slice with jansson, and moves past it.
    private mutating func parseValue() throws(SyntaxError) -> JSONValue {
        let start = pos, startLine = line
        var depth = 0
        var i = pos
        var newlines = 0
        let n = bytes.count
        scan: while i < n {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "\""):
                i += 1
                while i < n && bytes[i] != UInt8(ascii: "\"") {
                    if bytes[i] == UInt8(ascii: "\\") { i += 1 }
                    if i < n && endsLine(bytes, i) { newlines += 1 }
                    i += 1
                }
                i += 1
                if depth == 0 { break scan }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1; i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { break scan }
                depth -= 1; i += 1
                if depth == 0 { break scan }
            case UInt8(ascii: ","), 0x20, 0x09, 0x0D, 0x0A:
                if depth == 0 { break scan }
                if endsLine(bytes, i) { newlines += 1 }
                i += 1
            default:
                i += 1
            }
        }
        let end = min(i, n)
        if depth > 0 || end == start {
            throw SyntaxError(line: startLine, message: end == start ? "expected a value" : "unexpected end of file inside the value starting here")
        }
        // A member given twice is an error, as a CSV column given twice is: jansson would keep
        // the last one without a word.
        let parsed = bytes.withUnsafeBytes { all -> Result<JSONValue, JSONParseError> in
            let record = UnsafeRawBufferPointer(rebasing: all[start..<end])
            do throws(JSONParseError) {
                return .success(try JanssonValue(parsing: record, extraFlags: JSON_REJECT_DUPLICATES, bigIntegersAsReals: false).value())
            } catch {
                return .failure(error)
            }
        }
        let value: JSONValue
        switch parsed {
        case .success(let v): value = v
        case .failure(let error):
            throw SyntaxError(line: startLine + max(0, error.line - 1), message: "invalid JSON: \(error.message)")
        }
        pos = end
        line += newlines
        return value
    }
}
