/// Lookups a session keeps for one snapshot of the catalog (PRAGMA data_version, as the
/// hierarchy is), so that a page reads them once per committed change instead of once per
/// execution: found values by key, and the keys found to have none (so a referenced-but-missing
/// row costs a lookup once). Bounded: past `maxEntries` keys or `maxBytes` of values (as
/// `cost` counts them) it starts over, and a value over a quarter of `maxBytes` is not kept.
/// By count alone, 3,000 templates of twenty 10 KB labels held 1.69 GB in two workers.
final class SnapshotCache<Key: Hashable, Value> {
    /// The snapshot the entries describe; -1 before the first use and after a schema change.
    private(set) var dataVersion: Int64 = -1
    private(set) var entries: [Key: Value] = [:]
    /// Keys that have no row in this snapshot.
    private(set) var missing: Set<Key> = []
    let maxEntries: Int
    let maxBytes: Int
    private let cost: (Key, Value) -> Int
    private(set) var bytes = 0

    init(maxEntries: Int = 4096, maxBytes: Int = 8 << 20, cost: @escaping (Key, Value) -> Int = { _, _ in 0 }) {
        self.maxEntries = max(1, maxEntries)
        self.maxBytes = max(1, maxBytes)
        self.cost = cost
    }

    /// Keeps the entries when `dataVersion` is the one they describe, drops them otherwise.
    func use(dataVersion: Int64) {
        guard dataVersion != self.dataVersion else { return }
        removeAll()
        self.dataVersion = dataVersion
    }

    /// The cache for snapshot `dataVersion` (see `use`) when `enabled`; nil otherwise.
    func of(_ dataVersion: Int64, if enabled: Bool) -> SnapshotCache? {
        guard enabled else { return nil }
        use(dataVersion: dataVersion)
        return self
    }

    /// Drops every entry (a schema change: the columns may differ).
    func invalidate() {
        removeAll()
        dataVersion = -1
    }

    /// Remembers `key`'s value, or (nil) that it has none.
    func store(_ key: Key, _ value: Value?) {
        let size = value.map { cost(key, $0) } ?? 0
        if size > maxBytes / 4 { return }
        if entries.count + missing.count >= maxEntries || bytes + size > maxBytes { removeAll() }
        if let value { entries[key] = value } else { missing.insert(key) }
        bytes += size
    }

    /// Copies the values of the keys this snapshot knows into `found`; returns the keys it has
    /// not looked up yet (a key known to have no row is neither).
    func lookUp(_ keys: some Sequence<Key>, into found: inout [Key: Value]) -> [Key] {
        var unknown: [Key] = []
        for key in keys {
            if let value = entries[key] { found[key] = value } else if !missing.contains(key) { unknown.append(key) }
        }
        return unknown
    }

    /// Remembers a complete read of `keys`: each one's value in `found`, or that it has none.
    func storeAll(_ keys: [Key], from found: [Key: Value]) {
        for key in keys { store(key, found[key]) }
    }

    var count: Int { entries.count + missing.count }

    private func removeAll() {
        entries.removeAll(keepingCapacity: true)
        missing.removeAll(keepingCapacity: true)
        bytes = 0
    }
}

/// Spec template labels by DetailsKey, in `CatalogLayout.specs` order (already without their
/// first character and trimmed). A catalog has few templates shared by many products (42 for
/// the demo's 560), so a category page of 50 products finds nearly all of its templates here
/// after the first page.
typealias SpecTemplateCache = SnapshotCache<Int64, JSONStrings>

/// Manufacturer logos by trimmed name: the logo column of the name's first mfg row (nil for
/// NULL); a name with no mfg row is `missing`. The demo's 560 products name 14 manufacturers.
typealias LogoCache = SnapshotCache<ExactString, String?>

/// Strings that are written as JSON many times (spec labels and letters): each one's JSON string
/// (quotes and escapes included) is made once, and writing it is a copy.
final class JSONStrings {
    let strings: [String]
    private let json: ScalarText
    /// String `i`'s JSON is bytes `ends[i - 1] ..< ends[i]` of `json` (from 0 for the first).
    private let ends: [Int]

    init(_ strings: [String]) {
        self.strings = strings
        var w = ScalarText(capacity: strings.reduce(16) { $0 + $1.utf8.count + 2 })
        var ends: [Int] = []
        ends.reserveCapacity(strings.count)
        for s in strings {
            w.string(s)
            ends.append(w.count)
        }
        json = w
        self.ends = ends
    }

    subscript(i: Int) -> String { strings[i] }

    /// About the memory it holds: each string twice (as a String and as JSON).
    var byteCount: Int { 2 * json.count + 16 * strings.count + 64 }

    /// Whether string `i` is empty (its JSON is `""`), without a copy of the String.
    @inline(__always) func isEmpty(_ i: Int) -> Bool { ends[i] - (i == 0 ? 0 : ends[i - 1]) == 2 }

    /// Appends string `i` as JSON.
    @inline(__always) func write(_ i: Int, to w: inout ScalarText) {
        w.append(json.buffer, (i == 0 ? 0 : ends[i - 1]) ..< ends[i])
    }
}
