// Text of runtime (JSON) values inside error messages, as graphql-js's `jsutils/inspect.ts`
// prints them (AST literals are printed by `Printer`, as `language/printer.ts` does).

enum MessageFormat {
    private static func hex4(_ v: UInt32) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(v >> 12 & 0xF)], digits[Int(v >> 8 & 0xF)],
                       digits[Int(v >> 4 & 0xF)], digits[Int(v & 0xF)]])
    }

    // MARK: Runtime values (graphql-js `inspect`)

    static func inspect(_ value: JSONValue) -> String { inspect(value, depth: 0) }

    private static func inspect(_ value: JSONValue, depth: Int) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return number(d)
        case .string(let s): return jsonString(s)
        case .array(let items):
            if items.isEmpty { return "[]" }
            if depth >= 2 { return "[Array]" }
            var parts = items.prefix(10).map { inspect($0, depth: depth + 1) }
            let remaining = items.count - 10
            if remaining == 1 { parts.append("... 1 more item") } else if remaining > 1 { parts.append("... \(remaining) more items") }
            return "[" + parts.joined(separator: ", ") + "]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            if depth >= 2 { return "[Object]" }
            var seen: Set<String> = []
            var parts: [String] = []
            // A JS object keeps one value per key (the last one parsed) in first-seen order.
            for (key, _) in members where seen.insert(key).inserted {
                guard let v = members.last(where: { $0.0 == key })?.1 else { continue }
                parts.append(key + ": " + inspect(v, depth: depth + 1))
            }
            return "{ " + parts.joined(separator: ", ") + " }"
        }
    }

    /// `JSON.stringify` of a string.
    static func jsonString(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar.value {
            case 0x08: out += "\\b"
            case 0x09: out += "\\t"
            case 0x0A: out += "\\n"
            case 0x0C: out += "\\f"
            case 0x0D: out += "\\r"
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x00...0x1F: out += "\\u" + hex4(scalar.value).lowercased()
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A double as JavaScript's `String(number)` writes it (1 not 1.0, 1e+21, 1.5e-7).
    static func number(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        if d == 0 { return "0" }
        // Shortest round-trip digits and decimal exponent from Swift's description.
        let negative = d < 0
        let text = String(describing: abs(d))
        var mantissa = text
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = String(text[..<e])
            exponent = Int(text[text.index(after: e)...]) ?? 0
        }
        var intPart = mantissa
        var fracPart = ""
        if let dot = mantissa.firstIndex(of: ".") {
            intPart = String(mantissa[..<dot])
            fracPart = String(mantissa[mantissa.index(after: dot)...])
        }
        var digits = intPart + fracPart
        var pointPos = intPart.count + exponent  // digits before the decimal point
        while digits.hasPrefix("0") && digits.count > 1 { digits.removeFirst(); pointPos -= 1 }
        while digits.hasSuffix("0") && digits.count > 1 { digits.removeLast() }
        let k = digits.count
        let n = pointPos
        var out: String
        if k <= n && n <= 21 {
            out = digits + String(repeating: "0", count: n - k)
        } else if 0 < n && n <= 21 {
            let idx = digits.index(digits.startIndex, offsetBy: n)
            out = digits[..<idx] + "." + digits[idx...]
        } else if -6 < n && n <= 0 {
            out = "0." + String(repeating: "0", count: -n) + digits
        } else {
            let e = n - 1
            let expText = e >= 0 ? "+\(e)" : "\(e)"
            if k == 1 {
                out = digits + "e" + expText
            } else {
                out = String(digits.prefix(1)) + "." + String(digits.dropFirst()) + "e" + expText
            }
        }
        return negative ? "-" + out : out
    }
}
