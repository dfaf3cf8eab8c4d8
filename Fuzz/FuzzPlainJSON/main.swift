// libFuzzer target: JSON text through `PlainJSON` (JSONParser's Swift fast path) and through
// jansson alone. Oracle: a text the fast path reads, jansson reads to the identical value (same
// cases, same member order, same bytes); jansson may read more (the fast path leaves it the rest).
import FuzzSupport
import Resolvers
import Schema

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    bytes.withUnsafeBytes { b in
        guard let fast = PlainJSON.parse(b) else { return }
        guard let reference = try? JSONParser.parseWithJansson(b) else {
            fuzzFailure("the fast path read a text jansson refuses: \(fast)")
        }
        if !fast.isIdentical(to: reference) { fuzzFailure("fast path \(fast), jansson \(reference)") }
    }
    return 0
}

runFuzzer(fuzzOne)
