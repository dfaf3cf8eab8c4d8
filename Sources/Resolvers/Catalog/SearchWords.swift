import CFoldedSearch
import CSQLite

/// The exact test of `search` (SEMANTICS.md): a product matches when every word is an ASCII
/// case-insensitive substring of its Product, description or Manufacturer. One SQL function,
/// `cg_search_words(product, description, manufacturer, words)`, applies all words to a row in
/// one call; `words` is one BLOB (`encode`), so the statement's text is the same for any number
/// of words and nothing in a word — `%`, `_`, `\`, U+0000, a megabyte of text — needs escaping or
/// falls under LIKE's pattern limit.
///
/// It compares the stored bytes, where LIKE would stop at a NUL in the stored text. Columns need
/// no trimming: a word holds no whitespace, so it is a substring of a value exactly when it is one
/// of the trimmed value. A word holding U+FFFD is compared with the text as served
/// (`cg_served_text`: damaged UTF-8 repaired), any other with the stored bytes; for a word of
/// valid UTF-8 the two agree (`ProductSQL.needsServedText`).
enum SearchWords {
    static let sqlFunction = "cg_search_words"

    /// The words ASCII-lowercased (as LIKE folds: letters A-Z only), each as a 4-byte little-endian length, a flag byte (1: compare
    /// with the served text) and its UTF-8 bytes.
    static func encode(_ words: [String]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(words.reduce(0) { $0 + $1.utf8.count + 5 })
        for word in words {
            let n = UInt32(word.utf8.count)
            out.append(contentsOf: [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)])
            out.append(ProductSQL.needsServedText(word) ? 1 : 0)
            out.append(contentsOf: word.utf8.map(cg_fold_ascii))  // the C test's folding (cg_contains_folded.h)
        }
        return out
    }

    /// Whether `word` (already folded) occurs in `text`, ASCII letters compared case-insensitively
    /// (`cg_contains_folded`, in C for SSE2: Swift's SIMD types did not compile to it).
    @inline(__always)
    static func contains(_ text: UnsafeRawBufferPointer, _ word: UnsafeRawBufferPointer) -> Bool {
        guard let w = word.baseAddress else { return true }
        guard let t = text.baseAddress else { return false }
        return cg_contains_folded(t.assumingMemoryBound(to: UInt8.self), text.count,
                                  w.assumingMemoryBound(to: UInt8.self), word.count) != 0
    }

    /// A row's three searched columns as stored (empty for NULL).
    struct Columns {
        var texts: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer)

        func contain(_ word: UnsafeRawBufferPointer) -> Bool {
            SearchWords.contains(texts.0, word) || SearchWords.contains(texts.1, word) || SearchWords.contains(texts.2, word)
        }

        /// The columns' texts as served (damaged UTF-8 repaired).
        var served: [[UInt8]] {
            [texts.0, texts.1, texts.2].map { Array(String(decoding: $0, as: UTF8.self).utf8) }
        }
    }

    /// Whether every word of `words` (`encode`) occurs in one of `columns`; the served texts are
    /// made at most once, for the words holding U+FFFD.
    static func matches(_ words: UnsafeRawBufferPointer, _ columns: Columns) -> Bool {
        var served: [[UInt8]]?
        var at = 0
        while at + 5 <= words.count {
            let n = Int(words[at]) | Int(words[at + 1]) << 8 | Int(words[at + 2]) << 16 | Int(words[at + 3]) << 24
            let useServed = words[at + 4] == 1
            at += 5
            guard at + n <= words.count else { return false }
            let word = UnsafeRawBufferPointer(rebasing: words[at..<(at + n)])
            at += n
            let found: Bool
            if useServed {
                if served == nil { served = columns.served }
                found = served!.contains { $0.withUnsafeBytes { contains($0, word) } }
            } else {
                found = columns.contain(word)
            }
            if !found { return false }
        }
        return true
    }
}

/// `cg_search_words(product, description, manufacturer, words)`: 1 when the row matches every
/// word (`SearchWords.matches`), else 0. NULL columns match nothing; other values are compared as
/// their text (SQLite's, as `CAST(x AS TEXT)` gives it).
let searchWordsFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { ctx, argc, argv in
    guard let argv, argc == 4, let wordsValue = argv[3] else {
        sqlite3_result_int(ctx, 0)
        return
    }
    let start = sqlite3_value_blob(wordsValue)
    let count = Int(sqlite3_value_bytes(wordsValue))
    let words = UnsafeRawBufferPointer(start: count > 0 ? start : nil, count: count > 0 ? count : 0)
    // Each column's text (sqlite3_value_text converts a number in place, as CAST does).
    func text(_ v: OpaquePointer?) -> UnsafeRawBufferPointer {
        guard let v, sqlite3_value_type(v) != SQLITE_NULL, let p = sqlite3_value_text(v) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: p, count: Int(sqlite3_value_bytes(v)))
    }
    let columns = SearchWords.Columns(texts: (text(argv[0]), text(argv[1]), text(argv[2])))
    sqlite3_result_int(ctx, SearchWords.matches(words, columns) ? 1 : 0)
}
