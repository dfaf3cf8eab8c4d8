// libFuzzer target: `query 0xFF variables-JSON [0xFF operationName]` through QueryService.prepare
// (parse, validation, operation selection, depth limit, variable coercion, node limit). Oracle:
// every failure is a well-formed error response.
import FuzzSupport
import Resolvers
import Schema

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let request = FuzzRequest(fuzzBytes(data, size)).request() else { return 0 }
    // A new service per input: the document cache would otherwise make repeats take another path.
    let service = QueryService()
    if case .failed(let result) = service.prepare(request) {
        if result.hasData || result.errors.isEmpty { fuzzFailure("a failed prepare must carry errors and no data") }
        checkResponse(result)
    }
    return 0
}

runFuzzer(fuzzOne)
