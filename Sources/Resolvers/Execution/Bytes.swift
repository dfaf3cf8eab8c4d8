/// `dst.copyMemory(from: src, byteCount: n)`, with short copies (a key's `,"name":`, an id's
/// digits, a short name) done inline by two overlapping loads and stores instead of a call into
/// memmove and its dispatch on the size: the demo category page's memmove calls went from 5,170
/// to 2,279 (callgrind). The ranges must not overlap.
@inline(__always) func copyBytes(to dst: UnsafeMutableRawPointer, from src: UnsafeRawPointer, count n: Int) {
    switch n {
    case 8...16:
        let head = src.loadUnaligned(as: UInt64.self), tail = src.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        dst.storeBytes(of: head, as: UInt64.self)
        dst.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
    case 4..<8:
        let head = src.loadUnaligned(as: UInt32.self), tail = src.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
        dst.storeBytes(of: head, as: UInt32.self)
        dst.storeBytes(of: tail, toByteOffset: n - 4, as: UInt32.self)
    case 1..<4:
        // First, middle and last byte (the same byte twice or thrice when n < 3).
        dst.storeBytes(of: src.load(as: UInt8.self), as: UInt8.self)
        dst.storeBytes(of: src.load(fromByteOffset: n >> 1, as: UInt8.self), toByteOffset: n >> 1, as: UInt8.self)
        dst.storeBytes(of: src.load(fromByteOffset: n - 1, as: UInt8.self), toByteOffset: n - 1, as: UInt8.self)
    case 0:
        break
    default:
        dst.copyMemory(from: src, byteCount: n)
    }
}
