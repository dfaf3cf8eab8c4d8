/// Text from outside (a client's id or header, an imported file's member names) on its way to a
/// log line or a terminal: the characters that could forge a line, steer a terminal or reorder
/// what is shown are written `\uXXXX` instead.
public enum DisplayText {
    /// C0 and C1 controls, DEL, the line and paragraph separators, the bidirectional marks,
    /// embeddings, overrides and isolates, and the byte-order mark. (U+0085, U+2028 and U+2029
    /// end lines for many readers; C1's U+009B is a terminal's CSI; U+202E reverses what follows.)
    public static func mustEscape(_ u: Unicode.Scalar) -> Bool {
        switch u.value {
        case 0..<0x20, 0x7F...0x9F, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069, 0xFEFF: return true
        default: return false
        }
    }

    /// `text` with every such character written `\uXXXX` (lowercase hex, four digits).
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: mustEscape) else { return text }
        var out = ""
        for u in text.unicodeScalars {
            if mustEscape(u) { appendEscape(u, to: &out) } else { out.unicodeScalars.append(u) }
        }
        return out
    }

    public static func appendEscape(_ u: Unicode.Scalar, to out: inout String) {
        let hex = String(u.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
