import Testing
@testable import Resolvers

/// `ExactString` equality and hashing by UTF-8 bytes, against comparing the byte arrays: strings
/// Swift calls equal (canonically equivalent) stay apart, and every length — small strings kept
/// inline, long ones in storage — takes the same answer.
@Suite struct ExactStringTests {
    @Test func canonicallyEquivalentTextIsDifferentText() {
        let nfc = "Caf\u{E9}", nfd = "Cafe\u{301}"
        #expect(nfc == nfd)  // Swift's own equality: canonical equivalence
        #expect(ExactString(nfc) != ExactString(nfd))
        #expect(ExactString("K") != ExactString("\u{212A}"))
        #expect(Set([ExactString(nfc), ExactString(nfd), ExactString(nfc)]).count == 2)
    }

    @Test func agreesWithComparingTheBytes() {
        var rng = SplitMix64(seed: 20261128)
        // Pieces that make near-equal strings: one-byte and multibyte characters, a combining
        // accent, a NUL; lengths from empty past the 15 bytes Swift keeps inline.
        let pieces = ["a", "b", "\u{E9}", "e\u{301}", "\u{0}", "\u{212A}", "K", " "]
        for _ in 0..<20_000 {
            func text() -> String {
                (0..<Int(rng.next() % 24)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
            }
            let a = text()
            // Half the pairs share a prefix and differ late, where a length check cannot tell.
            let b = rng.next() % 2 == 0 ? text() : String(a.dropLast()) + text()
            let bytesEqual = Array(a.utf8) == Array(b.utf8)
            #expect((ExactString(a) == ExactString(b)) == bytesEqual, "\(Array(a.utf8)) vs \(Array(b.utf8))")
            if bytesEqual { #expect(ExactString(a).hashValue == ExactString(b).hashValue) }
        }
    }

    @Test func substringsAndBuiltStringsCompareByTheirBytes() {
        let long = String(repeating: "lens ", count: 40)
        let built = long.dropFirst(5) + "lens "
        #expect(ExactString(String(built)) == ExactString(long))
        #expect(ExactString(String(built.dropLast())) != ExactString(long))
    }
}
