#if canImport(Glibc)
import Glibc
#endif

/// `dst.copyMemory(from: src, byteCount: n)`, with short copies (a key's `,"name":`, an id's
/// digits, a short name) done inline by two overlapping loads and stores instead of a call into
/// memmove and its dispatch on the size: the demo category page's memmove calls went from 5,170
/// to 2,279 (callgrind). The ranges must not overlap.
@inline(__always) func copyBytes(to dst: UnsafeMutableRawPointer, from src: UnsafeRawPointer, count n: Int) {
    // Comparisons, not `switch n` over ranges: the ranges' `contains` took about 9 instructions
    // a copy more.
    if n >= 8 {
        if n > 16 { return dst.copyMemory(from: src, byteCount: n) }
        let head = src.loadUnaligned(as: UInt64.self), tail = src.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        dst.storeBytes(of: head, as: UInt64.self)
        dst.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
    } else if n >= 4 {
        let head = src.loadUnaligned(as: UInt32.self), tail = src.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
        dst.storeBytes(of: head, as: UInt32.self)
        dst.storeBytes(of: tail, toByteOffset: n - 4, as: UInt32.self)
    } else if n > 0 {
        // First, middle and last byte (the same byte twice or thrice when n < 3).
        dst.storeBytes(of: src.load(as: UInt8.self), as: UInt8.self)
        dst.storeBytes(of: src.load(fromByteOffset: n >> 1, as: UInt8.self), toByteOffset: n >> 1, as: UInt8.self)
        dst.storeBytes(of: src.load(fromByteOffset: n - 1, as: UInt8.self), toByteOffset: n - 1, as: UInt8.self)
    }
}

/// Whether `b` holds U+FFFD's UTF-8 (EF BF BD): text served for a damaged value, or stored so.
func containsReplacementCharacter(_ b: UnsafeRawBufferPointer) -> Bool {
    guard b.count >= 3 else { return false }
    for i in 0...(b.count - 3) where b[i] == 0xEF && b[i + 1] == 0xBF && b[i + 2] == 0xBD { return true }
    return false
}

/// Numbers byte strings by first appearance — equal bytes get the same number — without a String
/// per value: a page's kit ids and manufacturer names (CatalogResolver) were each made a String,
/// hashed with SipHash into a Dictionary and released again, 25 times a demo page for each.
/// Open addressing on FNV-1a, compared with memcmp. The bytes must stay valid while in use.
struct DistinctBytes {
    /// For each value passed to `number`, in order: its number (nil values: -1).
    private(set) var numbers: [Int] = []
    /// Each number's bytes (its first appearance).
    private(set) var distinct: [UnsafeRawBufferPointer] = []
    /// Number + 1 per slot, 0 for empty; the size is a power of two at least twice `capacity`.
    private var slots: [Int32]
    private var hashes: [UInt64] = []

    init(capacity: Int) {
        var size = 8
        while size < 2 * capacity { size <<= 1 }
        slots = [Int32](repeating: 0, count: size)
        numbers.reserveCapacity(capacity)
        distinct.reserveCapacity(capacity)
        hashes.reserveCapacity(capacity)
    }

    @inline(__always) private static func hash(_ b: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in b { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return h
    }

    /// Numbers `bytes` (nil: -1, not stored) and appends its number to `numbers`.
    @discardableResult
    mutating func number(_ bytes: UnsafeRawBufferPointer?) -> Int {
        guard let bytes else { numbers.append(-1); return -1 }
        if 2 * (distinct.count + 1) > slots.count { grow() }
        let h = Self.hash(bytes)
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while slots[i] != 0 {
            let k = Int(slots[i]) - 1
            if hashes[k] == h, Self.equal(distinct[k], bytes) { numbers.append(k); return k }
            i = (i + 1) & mask
        }
        let k = distinct.count
        slots[i] = Int32(k + 1)
        distinct.append(bytes)
        hashes.append(h)
        numbers.append(k)
        return k
    }

    @inline(__always) private static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let x = a.baseAddress, let y = b.baseAddress, a.count > 0 else { return true }
        return memcmp(x, y, a.count) == 0
    }

    private mutating func grow() {
        slots = [Int32](repeating: 0, count: 2 * slots.count)
        let mask = slots.count - 1
        for k in distinct.indices {
            var i = Int(truncatingIfNeeded: hashes[k]) & mask
            while slots[i] != 0 { i = (i + 1) & mask }
            slots[i] = Int32(k + 1)
        }
    }
}
