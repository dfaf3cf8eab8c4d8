#if canImport(Glibc)
import Glibc
#endif

/// A String compared and hashed by its UTF-8 bytes. Swift's `String` equality is canonical
/// equivalence ("Caf\u{E9}" == "Cafe\u{301}"), but the catalog compares stored text exactly
/// (SEMANTICS.md: names, skus, kit ids): two manufacturers that differ only by normalization are
/// two manufacturers. Every dictionary or set keyed by catalog text uses this (or `SQLValue`,
/// whose text compares the same way).
public struct ExactString: Hashable, Sendable {
    public let value: String

    public init(_ value: String) { self.value = value }

    public static func == (a: ExactString, b: ExactString) -> Bool {
        let x = a.value.utf8, y = b.value.utf8
        guard x.count == y.count else { return false }
        // Native strings are contiguous: one memcmp. `elementsEqual` steps byte by byte through
        // the generic view (about 19 instructions a byte, for every cached document looked up).
        let contiguous = x.withContiguousStorageIfAvailable { p in
            y.withContiguousStorageIfAvailable { q in p.count == 0 || memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0 }
        }
        if let contiguous, let equal = contiguous { return equal }
        return x.elementsEqual(y)
    }

    public func hash(into hasher: inout Hasher) { ExactString.hashUTF8(value, into: &hasher) }

    static func hashUTF8(_ s: String, into hasher: inout Hasher) {
        var s = s
        s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(s.utf8.count)
    }
}

extension Sequence where Element == String {
    /// Each string once, by its bytes, in first-seen order.
    func uniqueExactly() -> [String] {
        var seen = Set<ExactString>()
        return filter { seen.insert(ExactString($0)).inserted }
    }
}
