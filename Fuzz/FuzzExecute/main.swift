// libFuzzer target: `query 0xFF variables-JSON [0xFF operationName]` prepared and executed
// against a 60-product demo catalog (written once to /tmp). Oracles: every response is a
// well-formed JSON object whose `errors` match the result, and it is byte for byte the response
// of the general path (no JSON written by the resolver, no per-snapshot template or logo cache).
import FuzzSupport
import Resolvers
import Schema
#if canImport(Glibc)
import Glibc
#endif

nonisolated(unsafe) let opened = fuzzCatalogSession()
let service = opened.0
nonisolated(unsafe) let session = opened.1
nonisolated(unsafe) let general = fuzzCatalogSession {
    $0.serializeLeafLists = false
    $0.cacheSpecTemplates = false
    $0.cacheLogos = false
}.1

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let request = FuzzRequest(fuzzBytes(data, size)).request() else { return 0 }
    switch QueryService(options: service.options).prepare(request) {
    case .failed(let result): checkResponse(result)
    case .ready(let operation):
        let result = session.execute(operation)
        checkResponse(result)
        let expected = general.execute(operation)
        if result.json != expected.json {
            fuzzFailure("""
                the answer differs from the general path's:
                \(String(decoding: result.json.prefix(2000), as: UTF8.self))
                \(String(decoding: expected.json.prefix(2000), as: UTF8.self))
                """)
        }
    }
    return 0
}

runFuzzer(fuzzOne)
