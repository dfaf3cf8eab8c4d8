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
}
