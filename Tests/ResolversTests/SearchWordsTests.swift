import Testing
@testable import Resolvers

/// `cg_search_words`' substring test (SSE2 in C, sixteen positions at a time, then a byte-wise
/// tail) against the plain definition: ASCII letters folded, every other byte — NUL, bytes of
/// multibyte characters, the neighbours of 'A'/'Z'/'a'/'z' — compared as it is.
@Suite struct SearchWordsTests {
    /// Bytes chosen to catch a wrong fold or a wrong window: letters of both cases, the bytes
    /// just outside A-Z and a-z, NUL, a space and the halves of "é".
    static let alphabet: [UInt8] = Array("aAzZbB@[`{ ".utf8) + [0x00, 0xC3, 0xA9, 0xE3]

    static func fold(_ b: UInt8) -> UInt8 { (0x41...0x5A).contains(b) ? b + 0x20 : b }

    static func naiveContains(_ text: [UInt8], _ word: [UInt8]) -> Bool {
        guard !word.isEmpty else { return true }
        guard text.count >= word.count else { return false }
        return (0...(text.count - word.count)).contains { i in
            word.indices.allSatisfy { fold(text[i + $0]) == fold(word[$0]) }
        }
    }

    static func contains(_ text: [UInt8], _ word: [UInt8]) -> Bool {
        let folded = word.map(fold)
        return text.withUnsafeBytes { t in folded.withUnsafeBytes { w in SearchWords.contains(t, w) } }
    }

    @Test func agreesWithThePlainDefinition() {
        var rng = SplitMix64(seed: 20261127)
        var found = 0
        for _ in 0..<40_000 {
            let text = (0..<Int.random(in: 0...70, using: &rng)).map { _ in Self.alphabet.randomElement(using: &rng)! }
            var word = (0..<Int.random(in: 1...5, using: &rng)).map { _ in Self.alphabet.randomElement(using: &rng)! }
            if !text.isEmpty && Bool.random(using: &rng) {
                // A piece of the text itself, with its letters' case flipped at random.
                let start = Int.random(in: 0..<text.count, using: &rng)
                let end = Int.random(in: start..<min(text.count, start + 20), using: &rng)
                word = text[start...end].map { b in
                    (0x41...0x5A).contains(b & 0xDF) && Bool.random(using: &rng) ? b ^ 0x20 : b
                }
            }
            let expected = Self.naiveContains(text, word)
            if expected { found += 1 }
            #expect(Self.contains(text, word) == expected, "text \(text) word \(word)")
        }
        #expect(found > 10_000 && found < 35_000, "both outcomes are exercised: \(found) of 40,000 found")
    }

    @Test func matchesAtEveryPositionOfALongText() {
        // The word at each offset of a 100-byte text: every lane of every 16-byte block, the
        // blocks' seams and the tail.
        for n in [1, 2, 3, 16, 17] {
            let word = Array(String(repeating: "Q", count: n - 1).utf8) + [0x00]
            for offset in 0...(100 - n) {
                var text = [UInt8](repeating: UInt8(ascii: "q"), count: 100)
                text.replaceSubrange(offset..<(offset + n), with: word)
                #expect(Self.contains(text, word), "n \(n) offset \(offset)")
                text[offset + n - 1] = 0x01
                #expect(!Self.contains(text, word), "n \(n) offset \(offset)")
            }
        }
    }

    @Test func everyWordMustMatchSomeColumn() {
        func matches(_ columns: [String?], _ words: [String]) -> Bool {
            let encoded = SearchWords.encode(words)
            let texts = columns.map { $0.map { Array($0.utf8) } ?? [] }
            return texts[0].withUnsafeBytes { a in texts[1].withUnsafeBytes { b in texts[2].withUnsafeBytes { c in
                encoded.withUnsafeBytes { SearchWords.matches($0, SearchWords.Columns(texts: (a, b, c))) }
            } } }
        }
        let row: [String?] = ["Alexa Mini", "body\u{0}only LF", nil]
        #expect(matches(row, ["mini", "ONLY"]))          // one word per column, case folded
        #expect(matches(row, ["lf", "alexa", "body"]))
        #expect(!matches(row, ["mini", "zeiss"]))        // every word must match
        #expect(!matches(row, ["minibody"]))             // a word never spans two columns
        #expect(matches(row, ["y\u{0}o"]))               // NUL is a character like any other
        #expect(matches(["a%_\\b", nil, nil], ["%_\\"])) // no pattern characters
        // Damaged UTF-8 is compared as served: "\u{FFFD}" finds the repaired byte, only that way.
        let damaged = [UInt8(ascii: "x"), 0xFF, UInt8(ascii: "y")]
        let encoded = SearchWords.encode(["x\u{FFFD}y"])
        let empty: [UInt8] = []
        let found = damaged.withUnsafeBytes { a in empty.withUnsafeBytes { e in
            encoded.withUnsafeBytes { SearchWords.matches($0, SearchWords.Columns(texts: (a, e, e))) }
        } }
        #expect(found)
    }
}
