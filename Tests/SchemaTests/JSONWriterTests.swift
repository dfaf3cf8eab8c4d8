import Testing
@testable import Schema

@Suite struct JSONWriterTests {
    @Test func escapesControlAndQuotes() {
        var w = JSONWriter()
        w.string("a\"b\\c\n\u{01}é")
        #expect(String(decoding: w.bytes, as: UTF8.self) == "\"a\\\"b\\\\c\\n\\u0001é\"")
    }

    @Test func replacesInvalidUTF8() {
        var w = JSONWriter()
        let bad: [UInt8] = [0x41, 0xC3, 0x28, 0xFF, 0x42]
        bad.withUnsafeBytes { w.string(utf8: $0) }
        #expect(w.bytes == [0x22, 0x41, 0xEF, 0xBF, 0xBD, 0x28, 0xEF, 0xBF, 0xBD, 0x42, 0x22])
    }

    /// The eight-byte scan finds a byte needing escape at every position of a long string, and
    /// copies long plain runs unchanged.
    @Test func escapesAtEveryPositionOfLongStrings() {
        for special in ["\"", "\\", "\n", "\u{1F}", "\u{7F}", "é", "\u{00A0}"] {
            for at in 0..<20 {
                let plain = String(repeating: "abcdefgh", count: 3)
                var chars = Array(plain)
                chars.insert(contentsOf: Array(special), at: at)
                let s = String(chars)
                var w = JSONWriter()
                w.string(s)
                var expected = "\""
                for ch in s.unicodeScalars {
                    switch ch {
                    case "\"": expected += "\\\""
                    case "\\": expected += "\\\\"
                    case "\n": expected += "\\n"
                    case "\u{1F}": expected += "\\u001f"
                    default: expected.unicodeScalars.append(ch)
                    }
                }
                expected += "\""
                #expect(String(decoding: w.bytes, as: UTF8.self) == expected, "\(special) at \(at)")
            }
        }
        var w = JSONWriter()
        w.string(String(repeating: "x", count: 1000))
        #expect(w.bytes.count == 1002)
    }

    @Test func writesIntegersInPlace() {
        var w = JSONWriter()
        for v in [0, 7, 10, -1, -10, 1234567890, Int.max, Int.min] {
            w.int(v); w.byte(0x2C)
        }
        w.int(Int64.min)
        #expect(String(decoding: w.bytes, as: UTF8.self)
                == "0,7,10,-1,-10,1234567890,\(Int.max),\(Int.min),\(Int64.min)")
    }
}
