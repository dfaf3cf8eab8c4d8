// "Did you mean" suggestions, as graphql-js `jsutils/suggestionList.ts`, `didYouMean.ts` and
// `naturalCompare.ts`, so that messages match graphql-js word for word.

enum Suggestions {
    private static let maxSuggestions = 5

    /// " Did you mean "a", "b", or "c"?" — empty when there is nothing to suggest.
    static func didYouMean(_ suggestions: [String]) -> String { didYouMean(nil, suggestions) }

    /// " Did you mean <subMessage> "a" or "b"?"
    static func didYouMean(_ subMessage: String?, _ suggestions: [String]) -> String {
        guard !suggestions.isEmpty else { return "" }
        var message = " Did you mean "
        if let subMessage { message += subMessage + " " }
        let quoted = suggestions.map { "\"\($0)\"" }
        switch quoted.count {
        case 1: return message + quoted[0] + "?"
        case 2: return message + quoted[0] + " or " + quoted[1] + "?"
        default:
            var selected = Array(quoted.prefix(maxSuggestions))
            let last = selected.removeLast()
            return message + selected.joined(separator: ", ") + ", or " + last + "?"
        }
    }

    /// The options close to `input` (edit distance at most 40% of its length, case changes
    /// counting one edit), closest first, ties in natural order.
    static func list(_ input: String, _ options: [String]) -> [String] {
        let distance = LexicalDistance(input)
        let threshold = input.utf16.count * 4 / 10 + 1
        var scored: [(String, Int)] = []
        var seen: Set<String> = []
        for option in options where seen.insert(option).inserted {
            if let d = distance.measure(option, threshold: threshold) { scored.append((option, d)) }
        }
        scored.sort { a, b in
            if a.1 != b.1 { return a.1 < b.1 }
            return naturalCompare(a.0, b.0) < 0
        }
        return scored.map(\.0)
    }

    /// Natural sort order: runs of digits compare by value.
    static func naturalCompare(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf16), y = Array(b.utf16)
        var i = 0, j = 0
        func isDigit(_ c: UInt16) -> Bool { c >= 48 && c <= 57 }
        while i < x.count && j < y.count {
            var ca = x[i], cb = y[j]
            if isDigit(ca) && isDigit(cb) {
                var na = 0
                repeat {
                    i += 1
                    na = na &* 10 &+ Int(ca - 48)
                    ca = i < x.count ? x[i] : 0
                } while isDigit(ca) && na > 0
                var nb = 0
                repeat {
                    j += 1
                    nb = nb &* 10 &+ Int(cb - 48)
                    cb = j < y.count ? y[j] : 0
                } while isDigit(cb) && nb > 0
                if na < nb { return -1 }
                if na > nb { return 1 }
            } else {
                if ca < cb { return -1 }
                if ca > cb { return 1 }
                i += 1; j += 1
            }
        }
        return x.count - y.count
    }
}

/// Damerau-Levenshtein distance (optimal string alignment) over UTF-16 code units of the
/// lowercased strings, with a pure case change counting as one edit.
private struct LexicalDistance {
    let input: String
    let inputLower: String
    let inputArray: [UInt16]

    init(_ input: String) {
        self.input = input
        self.inputLower = input.lowercased()
        self.inputArray = Array(inputLower.utf16)
    }

    func measure(_ option: String, threshold: Int) -> Int? {
        if input == option { return 0 }
        let optionLower = option.lowercased()
        if inputLower == optionLower { return 1 }
        var a = Array(optionLower.utf16)
        var b = inputArray
        if a.count < b.count { swap(&a, &b) }
        let aLength = a.count, bLength = b.count
        if aLength - bLength > threshold { return nil }

        var rows = [[Int]](repeating: [Int](repeating: 0, count: bLength + 1), count: 3)
        for j in 0...bLength { rows[0][j] = j }
        if aLength == 0 { return rows[0][bLength] <= threshold ? rows[0][bLength] : nil }
        for i in 1...aLength {
            let up = (i - 1) % 3, cur = i % 3
            rows[cur][0] = i
            var smallest = i
            if bLength > 0 {
                for j in 1...bLength {
                    let cost = a[i - 1] == b[j - 1] ? 0 : 1
                    var cell = min(rows[up][j] + 1, rows[cur][j - 1] + 1, rows[up][j - 1] + cost)
                    if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                        cell = min(cell, rows[(i - 2) % 3][j - 2] + 1)
                    }
                    if cell < smallest { smallest = cell }
                    rows[cur][j] = cell
                }
            }
            if smallest > threshold { return nil }
        }
        let d = rows[aLength % 3][bLength]
        return d <= threshold ? d : nil
    }
}
