/// Opaque connection cursors: base64 of "cursor:<absolute index>". Offsets are stable within one
/// snapshot, which is what "following endCursor visits every row once" needs.
enum Cursor {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let prefix = "cursor:"

    static func encode(_ index: Int) -> String {
        let bytes = Array((prefix + String(index)).utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i]
            let b1 = i + 1 < bytes.count ? bytes[i + 1] : 0
            let b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : 0x3D)
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : 0x3D)
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The index a cursor points at, or nil when it is not one of ours.
    static func decode(_ cursor: String) -> Int? {
        let chars = Array(cursor.utf8)
        guard !chars.isEmpty, chars.count % 4 == 0, chars.count <= 64 else { return nil }
        var values: [UInt8] = []
        for c in chars {
            switch c {
            case 0x41...0x5A: values.append(c - 0x41)
            case 0x61...0x7A: values.append(c - 0x61 + 26)
            case 0x30...0x39: values.append(c - 0x30 + 52)
            case 0x2B: values.append(62)
            case 0x2F: values.append(63)
            case 0x3D: values.append(64)
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        var i = 0
        while i < values.count {
            let v = values[i..<i + 4]
            let a = v[v.startIndex], b = v[v.startIndex + 1], c = v[v.startIndex + 2], d = v[v.startIndex + 3]
            guard a < 64, b < 64 else { return nil }
            bytes.append(a << 2 | b >> 4)
            if c < 64 { bytes.append((b & 0x0F) << 4 | c >> 2) } else if d < 64 || i + 4 != values.count { return nil }
            if d < 64 { guard c < 64 else { return nil }; bytes.append((c & 0x03) << 6 | d) }
            else if i + 4 != values.count { return nil }
            i += 4
        }
        guard let s = String(validating: bytes, as: UTF8.self), s.hasPrefix(prefix) else { return nil }
        let digits = s.dropFirst(prefix.count)
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let n = Int(digits), String(n) == digits else { return nil }
        guard encode(n) == cursor else { return nil }
        return n
    }
}
