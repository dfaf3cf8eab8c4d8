// Text-level readers for `catalog-gateway import`: CSV records with their line numbers, and the
// line on which each record of a JSON file starts (jansson parses the values but does not say
// where each one is).

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
/// commas, line breaks and "" for a quote), records ended by LF or CRLF. A UTF-8 byte order mark
/// is skipped; a blank line is no record.
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

        func finishField() {
            fields.append(String(decoding: field, as: UTF8.self))
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
                    if c == 0x0A { line += 1 }
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
            case 0x0A:
                finishField(); finishRecord(); line += 1; i += 1
            default:
                if quoted { throw CSVSyntaxError(line: line, message: "unexpected character after a closing quote") }
                field.append(b); i += 1
            }
        }
        if !atRecordStart { finishField(); finishRecord() }
        return out
    }
}

/// Where the records of a JSON import file start: for a top-level array, the line of each
/// element; for a top-level object, the line of each element of each array-valued member.
/// Runs over text jansson has already accepted, so it only tracks strings and nesting.
struct JSONRecordLines {
    var topLevel: [Int] = []
    var members: [String: [Int]] = [:]

    init(_ bytes: [UInt8]) {
        var line = 1
        var stack: [UInt8] = []          // '{' or '['
        var expectValue = false          // the next non-blank byte starts a value
        var expectKey = false            // in an object, the next string is a member name
        var currentKey = ""              // member name of the top-level object being read
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b == 0x0A { line += 1; i += 1; continue }
            if b == 0x20 || b == 0x09 || b == 0x0D { i += 1; continue }
            if expectValue && b != UInt8(ascii: "]") {
                expectValue = false
                if stack.count == 1 && stack[0] == UInt8(ascii: "[") {
                    topLevel.append(line)
                } else if stack.count == 2 && stack[0] == UInt8(ascii: "{") && stack[1] == UInt8(ascii: "[") {
                    members[currentKey, default: []].append(line)
                }
            }
            switch b {
            case UInt8(ascii: "\""):
                // A string: skip it (reading the name when it is a top-level member name).
                var j = i + 1
                var raw: [UInt8] = []
                while j < n && bytes[j] != UInt8(ascii: "\"") {
                    if bytes[j] == UInt8(ascii: "\\") { raw.append(bytes[j]); j += 1 }
                    if j < n { raw.append(bytes[j]) }
                    j += 1
                }
                if expectKey && stack.count == 1 { currentKey = String(decoding: raw, as: UTF8.self) }
                expectKey = false
                i = j + 1
                continue
            case UInt8(ascii: "{"):
                stack.append(b); expectKey = true
            case UInt8(ascii: "["):
                stack.append(b); expectValue = true
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !stack.isEmpty { stack.removeLast() }
                expectValue = false
            case UInt8(ascii: ":"):
                expectValue = true
            case UInt8(ascii: ","):
                if stack.last == UInt8(ascii: "[") { expectValue = true } else { expectKey = true }
            default:
                break
            }
            i += 1
        }
    }
}
