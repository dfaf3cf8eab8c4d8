import Schema
import Synchronization

/// ASCII whitespace as C's isspace in the C locale: space, TAB, LF, VT, FF, CR.
@inline(__always) func isSpaceByte(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }

/// Bytes `from...` of `b` without their leading and trailing ASCII whitespace.
@inline(__always) func trimmedASCII(_ b: UnsafeRawBufferPointer, from: Int = 0) -> UnsafeRawBufferPointer {
    var start = min(from, b.count), end = b.count
    while start < end, isSpaceByte(b[start]) { start += 1 }
    while end > start, isSpaceByte(b[end - 1]) { end -= 1 }
    return UnsafeRawBufferPointer(rebasing: b[start..<end])
}

/// An optional sign and decimal digits only, within Int64 (SEMANTICS.md's integer text), else
/// nil: the bytes of a String, or a row's column without making one (`ProductRow.trimmedInteger`).
@inline(__always) func parseStrictInteger<C: Collection>(_ bytes: C) -> Int64? where C.Element == UInt8 {
    var u = bytes[...]
    var negative = false
    if let f = u.first, f == 0x2B || f == 0x2D { negative = f == 0x2D; u = u.dropFirst() }
    guard !u.isEmpty else { return nil }
    var v: Int64 = 0
    for b in u {
        guard b >= 0x30 && b <= 0x39 else { return nil }
        let (m, o1) = v.multipliedReportingOverflow(by: 10)
        let (a, o2) = m.addingReportingOverflow(Int64(b - 0x30) * (negative ? -1 : 1))
        if o1 || o2 { return nil }
        v = a
    }
    return v
}

extension String {
    /// Leading/trailing ASCII whitespace removed (SEMANTICS.md "trimmed"); other characters,
    /// U+00A0 included, are kept.
    var trimmedASCII: String {
        // Usually nothing to trim: native strings answer from their bytes in place.
        let untouched: Bool? = utf8.withContiguousStorageIfAvailable { b in
            guard let f = b.first, let l = b.last else { return true }
            return !isSpaceByte(f) && !isSpaceByte(l)
        }
        if untouched == true { return self }
        let u = utf8
        guard let f = u.first, let l = u.last else { return self }
        if !isSpaceByte(f) && !isSpaceByte(l) { return self }
        var start = u.startIndex
        var end = u.endIndex
        while start < end, isSpaceByte(u[start]) { start = u.index(after: start) }
        while end > start, isSpaceByte(u[u.index(before: end)]) { end = u.index(before: end) }
        return String(self[start..<end])
    }

    /// Integer with an optional sign and nothing else ("+26", "-3", "05"), else nil.
    var strictInteger: Int64? { parseStrictInteger(utf8) }

    /// Plain digits only (no sign), else nil.
    var plainDigits: Int64? {
        guard let f = utf8.first, f >= 0x30 && f <= 0x39 else { return nil }
        return strictInteger
    }
}

/// A nullable text rule: null when NULL or trims to "".
@inline(__always) func nullableText(_ s: String?) -> ResolvedValue {
    guard let s else { return .null }
    let t = s.trimmedASCII
    return t.isEmpty ? .null : .string(t)
}

/// One hierarchy row. Rows hold no references to each other (children are found through
/// `Hierarchy.childrenOf`): a parent cycle or a self-parent in the catalog would otherwise be
/// a reference cycle, leaked with every reload, and a 50,000-deep chain was freed by nested
/// deinits until the stack ran out.
final class CategoryNode: Sendable {
    let id: Int64
    let title: String
    let icon: String?
    let level: Int?
    /// The parent column as an integer (nil when it is not one).
    let parent: Int64?

    init(id: Int64, title: String, icon: String?, level: Int?, parent: Int64?) {
        self.id = id; self.title = title; self.icon = icon; self.level = level; self.parent = parent
    }
}

/// The whole hierarchy table, loaded again only when it may have changed (`CatalogSession`'s
/// loadHierarchy) and shared by the sessions reading the same file (`QueryService`): immutable
/// but for `descendantCounts`, made once under a lock.
final class Hierarchy: Sendable {
    let byID: [Int64: CategoryNode]
    /// Rows by parent value, each list ordered by id; includes parents that have no row.
    let childrenOf: [Int64: [CategoryNode]]
    let roots: [CategoryNode]

    init(rows: [CategoryNode]) {
        var byID: [Int64: CategoryNode] = [:]
        var childrenOf: [Int64: [CategoryNode]] = [:]
        let sorted = rows.sorted { $0.id < $1.id }
        for r in sorted {
            byID[r.id] = r
            if let p = r.parent { childrenOf[p, default: []].append(r) }
        }
        self.byID = byID
        self.childrenOf = childrenOf
        self.roots = childrenOf[0] ?? []
    }

    /// Rows whose parent is `node`'s id, ordered by id.
    func children(of node: CategoryNode) -> [CategoryNode] { childrenOf[node.id] ?? [] }

    func parent(of node: CategoryNode) -> CategoryNode? {
        guard let p = node.parent, p != 0 else { return nil }
        return byID[p]
    }

    /// Ancestors from the root down to and including `node`; stops at a missing parent or
    /// parent 0, and before a node would repeat (cycles).
    func path(of node: CategoryNode) -> [CategoryNode] {
        var chain: [CategoryNode] = [node]
        var seen: Set<Int64> = [node.id]
        var current = node
        while let p = parent(of: current), !seen.contains(p.id) {
            chain.append(p)
            seen.insert(p.id)
            current = p
        }
        return chain.reversed()
    }

    /// The size of `descendants(of:)` for every id, computed once per loaded hierarchy; nil when
    /// `descendantSums` cannot tell it.
    var descendantCounts: [Int64: Int]? {
        // Under the lock: a second session asking meanwhile waits for the one pass instead of
        // making its own.
        counts.withLock { counts in
            if let counts { return counts }
            let made = descendantSums { _ in 1 }
            counts = .some(made)
            return made
        }
    }
    private let counts = Mutex<[Int64: Int]??>(nil)

    /// For every id (rows and the parent values they name), the sum of `weight` over
    /// `descendants(of:)`, in one pass over the hierarchy — where summing each id's own list
    /// costs the sum of their sizes: quadratic along a deep chain (a 20,000-deep one asked for
    /// `path { productCount(includeDescendants: true) }` made 200 million pairs). Exact when
    /// every id hangs under one parent value at most, as in any hierarchy whose ids are
    /// unique: descendant sets then nest (a tree's, or a whole cycle's with what hangs from
    /// it). nil when some id is a child of two parents (duplicate ids), where shared parts
    /// would be counted twice.
    func descendantSums(_ weight: (Int64) -> Int) -> [Int64: Int]? {
        var parentOf: [Int64: Int64] = [:]
        var kids: [Int64: [Int64]] = [:]
        for (p, rows) in childrenOf {
            for r in rows {
                if let q = parentOf[r.id] {
                    if q != p { return nil }
                    continue  // a duplicate row under the same parent
                }
                parentOf[r.id] = p
                kids[p, default: []].append(r.id)
            }
        }
        var ids = Set(kids.keys)
        for c in parentOf.keys { ids.insert(c) }
        // Leaves first: an id is summed once all its children are. What is never reached is on
        // a cycle (an id with a cycle below it would be on that cycle: each id has one parent).
        var remaining: [Int64: Int] = [:]
        var ready: [Int64] = []
        for id in ids {
            let n = kids[id]?.count ?? 0
            remaining[id] = n
            if n == 0 { ready.append(id) }
        }
        var sums: [Int64: Int] = [:]
        sums.reserveCapacity(ids.count)
        var i = 0
        while i < ready.count {
            let id = ready[i]
            i += 1
            var s = weight(id)
            for k in kids[id] ?? [] { s += sums[k] ?? 0 }
            sums[id] = s
            if let p = parentOf[id], let r = remaining[p] {
                remaining[p] = r - 1
                if r == 1 { ready.append(p) }
            }
        }
        for id in ids where sums[id] == nil {
            // The cycle through `id`: every member reaches the same set.
            var cycle: [Int64] = []
            var onCycle = Set<Int64>()
            var v = id
            while onCycle.insert(v).inserted, let p = parentOf[v] {
                cycle.append(v)
                v = p
            }
            var total = 0
            for c in cycle {
                total += weight(c)
                for k in kids[c] ?? [] where !onCycle.contains(k) { total += sums[k] ?? 0 }
            }
            for c in cycle { sums[c] = total }
        }
        return sums
    }

    /// `id` and every id reachable by following parent links downward, each once.
    func descendants(of id: Int64) -> [Int64] {
        var out: [Int64] = [id]
        var seen: Set<Int64> = [id]
        var i = 0
        while i < out.count {
            for c in childrenOf[out[i]] ?? [] where !seen.contains(c.id) {
                seen.insert(c.id)
                out.append(c.id)
            }
            i += 1
        }
        return out
    }
}

/// One Product_Catalog row, read once per request: as text, the columns that the request's
/// Product fields read (CatalogLayout.select(for:)); the others read as NULL. The columns' bytes
/// are kept back to back (no String per column): fields are written as JSON from them
/// (`ResolvedValue.rowText`), and a String is made only where one is needed.
final class ProductRow {
    let keyid: Int64
    let cat: Int64?
    let displayOrder: Int?
    /// One allocation, owned by the row: the column bounds (2 × `total` Int32: column `i`'s
    /// bytes are `bounds[2i] ..< bounds[2i + 1]`, `bounds[2i]` is -1 for NULL), then every
    /// column's text back to back, always valid UTF-8 (a column that is not is stored as
    /// `String(decoding:as:)` repairs it, so the bytes are exactly the String's the column reads
    /// as). Two arrays cost two allocations more per row, and each array allocation looks up
    /// its storage class's metadata at run time.
    private let storage: UnsafeMutableRawPointer
    private let bounds: UnsafeMutablePointer<Int32>
    private let bytes: UnsafePointer<UInt8>

    /// Reads statement column `offset + at` of the current row as column `column`, for each of
    /// `columns` (of `total`; the others read as NULL): their bytes are found first,
    /// then copied after the bounds, into one allocation, and checked for ASCII in one pass over
    /// all of them (a pass per column cost a loop over each column's last bytes: most columns
    /// are short). Text that is not ASCII is copied again, repaired.
    init(_ s: Statement, offset: Int32, columns: [(at: Int32, column: Int)], of total: Int, keyid: Int64, cat: Int64?,
         displayOrder: Int?) {
        self.keyid = keyid; self.cat = cat; self.displayOrder = displayOrder
        let count = columns.count
        (storage, bounds, bytes) = withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: count) { cols in
            var size = 0
            for k in 0..<count {
                let b = s.textBytes(offset + columns[k].at)
                cols[k] = b
                size += b.count
            }
            var (storage, bounds, bytes) = Self.allocate(total: total, bytes: size)
            var at = 0
            for k in 0..<count {
                let b = cols[k]
                guard let base = b.baseAddress else { continue }
                let i = columns[k].column
                bounds[2 * i] = Int32(at)
                copyBytes(to: bytes + at, from: base, count: b.count)
                at += b.count
                bounds[2 * i + 1] = Int32(at)
            }
            if !Self.isASCII(UnsafeRawBufferPointer(start: bytes, count: size)) {
                let repaired = Self.repairing(cols)
                storage.deallocate()
                (storage, bounds, bytes) = Self.allocate(total: total, bytes: repaired.bytes.count)
                at = 0
                for k in 0..<count where cols[k].baseAddress != nil {
                    let i = columns[k].column
                    bounds[2 * i] = Int32(at)
                    at += repaired.sizes[k]
                    bounds[2 * i + 1] = Int32(at)
                }
                repaired.bytes.withUnsafeBytes { UnsafeMutableRawPointer(bytes).copyMemory(from: $0.baseAddress!, byteCount: at) }
            }
            return (storage, bounds, UnsafePointer(bytes))
        }
    }

    /// The row's one allocation: `2 × total` bounds, all -1 (NULL), then room for `size` bytes.
    private static func allocate(total: Int, bytes size: Int)
        -> (UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<UInt8>) {
        let boundsSize = 2 * total * MemoryLayout<Int32>.stride
        let storage = UnsafeMutableRawPointer.allocate(byteCount: boundsSize + Swift.max(size, 1), alignment: MemoryLayout<Int32>.alignment)
        let bounds = storage.bindMemory(to: Int32.self, capacity: 2 * total)
        bounds.initialize(repeating: -1, count: 2 * total)
        let bytes = (storage + boundsSize).bindMemory(to: UInt8.self, capacity: Swift.max(size, 1))
        return (storage, bounds, bytes)
    }

    deinit { storage.deallocate() }

    /// The columns' bytes back to back when some are not ASCII, each such column as
    /// `String(decoding:)` reads it, and each column's size there (0 for NULL).
    private static func repairing(_ cols: UnsafeMutableBufferPointer<UnsafeRawBufferPointer>) -> (bytes: [UInt8], sizes: [Int]) {
        var bytes: [UInt8] = []
        var sizes: [Int] = []
        sizes.reserveCapacity(cols.count)
        for b in cols {
            let start = bytes.count
            if isASCII(b) {
                bytes.append(contentsOf: b)  // nothing for NULL
            } else {
                bytes.append(contentsOf: String(decoding: b, as: UTF8.self).utf8)
            }
            sizes.append(bytes.count - start)
        }
        return (bytes, sizes)
    }

    @inline(__always) private static func isASCII(_ b: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        var acc: UInt64 = 0
        while i + 8 <= b.count { acc |= b.loadUnaligned(fromByteOffset: i, as: UInt64.self); i += 8 }
        while i < b.count { acc |= UInt64(b[i]); i += 1 }
        return acc & 0x8080_8080_8080_8080 == 0
    }

    /// The column's text, nil for NULL (the text SQLite gives; not trimmed).
    func text(_ i: Int) -> String? {
        let start = Int(bounds[2 * i])
        guard start >= 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes + start, count: Int(bounds[2 * i + 1]) - start), as: UTF8.self)
    }

    /// The column's bytes (not trimmed), nil for NULL; valid while the row lives.
    func textBytes(_ i: Int) -> UnsafeRawBufferPointer? {
        let start = Int(bounds[2 * i])
        guard start >= 0 else { return nil }
        return UnsafeRawBufferPointer(start: bytes + start, count: Int(bounds[2 * i + 1]) - start)
    }

    /// The column's trimmed bytes, nil when it is NULL, absent or trims to ""; valid while the
    /// row lives.
    func trimmedBytes(_ i: Int?) -> UnsafeRawBufferPointer? {
        let r = trimmedRange(i)
        return r.isEmpty ? nil : UnsafeRawBufferPointer(start: bytes + r.lowerBound, count: r.count)
    }

    /// The column's trimmed text as an integer (`parseStrictInteger`), without a String.
    func trimmedInteger(_ i: Int?) -> Int64? { trimmedBytes(i).flatMap(parseStrictInteger) }

    /// The column's trimmed byte range (SEMANTICS.md "trimmed"); empty for NULL or no column.
    @inline(__always) private func trimmedRange(_ i: Int?) -> Range<Int> {
        guard let i else { return 0..<0 }
        var start = Int(bounds[2 * i])
        guard start >= 0 else { return 0..<0 }
        var end = Int(bounds[2 * i + 1])
        while start < end, isSpaceByte(bytes[start]) { start += 1 }
        while end > start, isSpaceByte(bytes[end - 1]) { end -= 1 }
        return start..<end
    }

    /// The column's trimmed text as a String ("" for NULL or no column).
    func trimmed(_ i: Int?) -> String {
        let r = trimmedRange(i)
        if r.isEmpty { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes + r.lowerBound, count: r.count), as: UTF8.self)
    }

    /// True when the column is NULL, absent or trims to "".
    func trimsToEmpty(_ i: Int?) -> Bool { trimmedRange(i).isEmpty }

    /// Calls `body` with the column's trimmed bytes (valid UTF-8; empty for NULL).
    @inline(__always) func withTrimmed<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let r = trimmedRange(i)
        return body(UnsafeRawBufferPointer(start: bytes + r.lowerBound, count: r.count))
    }

    /// The nullable text rule on a column: null when NULL, absent or it trims to "", else its
    /// trimmed text.
    func nullableText(_ i: Int?) -> ResolvedValue {
        guard let i, !trimsToEmpty(i) else { return .null }
        return .rowText(self, column: i)
    }
}

final class ManufacturerRef {
    let name: String
    init(name: String) { self.name = name }
}

struct KitRow {
    let assetID: Int64
    let name: String
    let quantity: Int64
}
