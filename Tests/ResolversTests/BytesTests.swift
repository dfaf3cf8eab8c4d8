import Testing
@testable import Resolvers

/// `copyBytes` (the engine's short copies, inline) and the ScalarText writes built on it.
@Suite struct BytesTests {
    /// Every size from 0 to past the inline cases, at every offset of a source and a
    /// destination that are not aligned: exactly `count` bytes land, and nothing around them moves.
    @Test func copyBytesCopiesExactlyCountBytesAtAnyAlignment() {
        let source: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for count in 0...40 {
            for from in 0..<8 {
                for to in 0..<8 {
                    var target = [UInt8](repeating: 0xEE, count: 64)
                    source.withUnsafeBytes { s in
                        target.withUnsafeMutableBytes { t in
                            copyBytes(to: t.baseAddress! + to, from: s.baseAddress! + from, count: count)
                        }
                    }
                    var expected = [UInt8](repeating: 0xEE, count: 64)
                    expected.replaceSubrange(to..<(to + count), with: source[from..<(from + count)])
                    #expect(target == expected, "count \(count), from \(from), to \(to)")
                }
            }
        }
    }

    /// Appends and plain strings of each size, into a buffer that has to grow meanwhile, read
    /// back as the same bytes an Array collects.
    @Test func scalarTextWritesEverySizeAsArrayAppendsIt() {
        var w = ScalarText(capacity: 16)
        var expected: [UInt8] = []
        for n in 0...33 {
            let piece = (0..<n).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            piece.withUnsafeBytes { w.append($0) }
            expected += piece
            piece.withUnsafeBytes { w.plainString($0) }
            expected += [0x22] + piece + [0x22]
        }
        #expect(w.withWritten { Array($0) } == expected)
    }
}
