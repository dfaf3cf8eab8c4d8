import Testing
@testable import Gateway

/// A connection's bytes in a direct write: the arena slice before a large text, the text from its
/// own buffer, the slice after it. Whatever a short write left must be exactly the rest of those
/// bytes in that order, wherever the write stopped (lws then sends it as raw bytes).
@Suite struct DirectSpanTests {
    /// The arena holds another connection's bytes on either side of this span's slice.
    static let other: [UInt8] = Array("OTHER".utf8)

    /// The span over `before` + `big[bigFrom...]` + `after`, and those bytes as the wire gets them.
    func layout(before: String, big: [UInt8]?, bigFrom: Int, after: String) -> (span: DirectSpan, arena: [UInt8], wire: [UInt8]) {
        let b = Array(before.utf8), a = Array(after.utf8)
        let arena = Self.other + b + a + Self.other
        let span = DirectSpan(start: Self.other.count, count: b.count, big: big, bigFrom: bigFrom, after: big == nil ? 0 : a.count)
        let wire = b + (big.map { Array($0[bigFrom...]) } ?? []) + (big == nil ? [] : a)
        return (span, arena, wire)
    }

    @Test(arguments: [0, 16])
    func aShortWriteLeavesTheRestInOrderWhereverItStopped(bigFrom: Int) {
        // A page's answer after its frame header (bigFrom: the frame's headroom), or a shared
        // `next` payload after its prefix (bigFrom 0), then the closing brace and a `complete`.
        let big = [UInt8](repeating: 0x2E, count: bigFrom) + Array("{\"data\":{\"page\":[1,2,3]}}".utf8)
        let (span, arena, wire) = layout(before: "\u{81}~prefix:", big: big, bigFrom: bigFrom, after: "}\u{81}\u{12}complete")
        #expect(span.total == wire.count)
        for sent in 0..<span.total {
            #expect(span.unsent(arena, sent: sent) == Array(wire[sent...]), "sent \(sent)")
        }
    }

    @Test func nothingAfterTheLargeText() {
        let big = [UInt8](repeating: 0x2E, count: 16) + Array("[\"a page\"]".utf8)
        let (span, arena, wire) = layout(before: "\u{81}\u{0A}", big: big, bigFrom: 16, after: "")
        #expect(span.after == 0 && span.total == wire.count)
        for sent in 0..<span.total {
            #expect(span.unsent(arena, sent: sent) == Array(wire[sent...]), "sent \(sent)")
        }
    }

    @Test func noLargeTextIsTheSliceAlone() {
        let (span, arena, wire) = layout(before: "\u{81}\u{05}hello\u{81}\u{03}bye", big: nil, bigFrom: 0, after: "ignored")
        #expect(span.total == wire.count && wire == Array("\u{81}\u{05}hello\u{81}\u{03}bye".utf8))
        for sent in 0..<span.total {
            #expect(span.unsent(arena, sent: sent) == Array(wire[sent...]), "sent \(sent)")
        }
    }
}
