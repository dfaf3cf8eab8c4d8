/// Spec template labels by DetailsKey, kept by one session for one snapshot of the catalog
/// (PRAGMA data_version, as the hierarchy is): the labels a page needs are read from
/// DetailsKeyValues once per committed change instead of once per execution. A catalog has few
/// templates shared by many products (42 for the demo's 560), so a category page of 50 products
/// finds nearly all of its templates here after the first page.
///
/// Keys with no template row are remembered too, so a referenced-but-missing template costs a
/// lookup once. Bounded: past `maxEntries` keys it starts over.
final class SpecTemplateCache {
    /// The snapshot the entries describe; -1 before the first use and after a schema change.
    private(set) var dataVersion: Int64 = -1
    /// Labels per key, in `CatalogLayout.specs` order (already without their first character
    /// and trimmed).
    private(set) var labels: [Int64: JSONStrings] = [:]
    /// Keys that have no template row in this snapshot.
    private(set) var missing: Set<Int64> = []
    let maxEntries: Int

    init(maxEntries: Int = 4096) {
        self.maxEntries = max(1, maxEntries)
    }

    /// Keeps the entries when `dataVersion` is the one they describe, drops them otherwise.
    func use(dataVersion: Int64) {
        guard dataVersion != self.dataVersion else { return }
        removeAll()
        self.dataVersion = dataVersion
    }

    /// Drops every entry (a schema change: the spec columns may differ).
    func invalidate() {
        removeAll()
        dataVersion = -1
    }

    func store(_ key: Int64, _ value: JSONStrings?) {
        if labels.count + missing.count >= maxEntries { removeAll() }
        if let value { labels[key] = value } else { missing.insert(key) }
    }

    var count: Int { labels.count + missing.count }

    private func removeAll() {
        labels.removeAll(keepingCapacity: true)
        missing.removeAll(keepingCapacity: true)
    }
}

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

    /// Appends string `i` as JSON.
    @inline(__always) func write(_ i: Int, to w: inout ScalarText) {
        w.append(json.buffer, (i == 0 ? 0 : ends[i - 1]) ..< ends[i])
    }
}
