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

    /// Integers two digits at a time, into a buffer that has to grow meanwhile: the digits
    /// String(v) has, in quotes for an ID, at every length and sign and at both ends of Int64.
    @Test func scalarTextWritesIntegersAsStringDoes() {
        var values: [Int64] = [0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, .max, .min, .max - 1, .min + 1]
        var p: Int64 = 1
        for _ in 0..<18 { p *= 10; values += [p - 1, p, p + 1, -(p - 1), -p, -(p + 1)] }
        var rng = SystemRandomNumberGenerator()
        values += (0..<500).map { _ in Int64.random(in: .min ... .max, using: &rng) >> Int64.random(in: 0...62, using: &rng) }
        var w = ScalarText(capacity: 16)
        var expected: [UInt8] = []
        for v in values {
            w.int(v, quoted: false)
            expected += Array(String(v).utf8)
            w.byte(0x2C)
            w.int(v, quoted: true)
            expected += [0x2C] + Array("\"\(v)\"".utf8)
        }
        #expect(w.withWritten { Array($0) } == expected)
    }

    /// DistinctBytes against a Dictionary of byte arrays: numbers by first appearance, equal
    /// bytes (at other addresses) the same number, nil -1, "" a value of its own; values
    /// that share a prefix or differ only in length; far more values than the capacity given,
    /// so that the table grows several times.
    @Test func distinctBytesNumbersAsADictionaryWould() {
        var rng = SystemRandomNumberGenerator()
        for capacity in [0, 1, 7, 64] {
            let alphabet: [UInt8] = Array("ab ".utf8)
            let values: [[UInt8]?] = (0..<600).map { i in
                if i % 37 == 5 { return nil }
                let n = Int.random(in: 0...4, using: &rng)
                return (0..<n).map { _ in alphabet.randomElement(using: &rng)! }
            }
            // Each value in its own allocation, so equal values are at different addresses.
            let buffers = values.map { v in v.map { b -> UnsafeMutableRawBufferPointer in
                let p = UnsafeMutableRawBufferPointer.allocate(byteCount: b.count, alignment: 1)
                p.copyBytes(from: b)
                return p
            } }
            defer { buffers.forEach { $0?.deallocate() } }
            var d = DistinctBytes(capacity: capacity)
            var oracle: [[UInt8]: Int] = [:]
            var order: [[UInt8]] = []
            for (i, v) in values.enumerated() {
                let got = d.number(buffers[i].map { UnsafeRawBufferPointer($0) })
                guard let v else { #expect(got == -1); continue }
                let want = oracle[v] ?? { oracle[v] = order.count; order.append(v); return order.count - 1 }()
                #expect(got == want, "value \(i) \(v), capacity \(capacity)")
            }
            #expect(d.numbers.count == values.count)
            #expect(d.distinct.map { Array($0) } == order)
        }
    }
}
