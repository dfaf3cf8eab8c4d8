// libFuzzer target: JSON text through `PlainJSON` (JSONParser's Swift fast path) and through
// jansson alone. Oracle: a text the fast path reads, jansson reads to the identical value (same
// cases, same member order, same bytes); jansson may read more (the fast path leaves it the rest).
import FuzzSupport
import Resolvers
import Schema

func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.int(let x), .int(let y)): return x == y
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.string(let x), .string(let y)): return Array(x.utf8) == Array(y.utf8)
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
    case (.object(let x), .object(let y)):
        return x.count == y.count && zip(x, y).allSatisfy { Array($0.0.utf8) == Array($1.0.utf8) && identical($0.1, $1.1) }
    default: return false
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    bytes.withUnsafeBytes { b in
        guard let fast = PlainJSON.parse(b) else { return }
        guard let reference = try? JSONParser.parseWithJansson(b) else {
            fuzzFailure("the fast path read a text jansson refuses: \(fast)")
        }
        if !identical(fast, reference) { fuzzFailure("fast path \(fast), jansson \(reference)") }
    }
    return 0
}

runFuzzer(fuzzOne)
