// libFuzzer target: `query 0xFF variables-JSON [0xFF operationName]` prepared and executed
// against a 60-product demo catalog (written once to /tmp). Oracle: every response is a
// well-formed JSON object whose `errors` match the result.
import FuzzSupport
import Resolvers
import Schema
#if canImport(Glibc)
import Glibc
#endif

nonisolated(unsafe) let (service, session) = fuzzCatalogSession()

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let request = FuzzRequest(fuzzBytes(data, size)).request() else { return 0 }
    switch QueryService(options: service.options).prepare(request) {
    case .failed(let result): checkResponse(result)
    case .ready(let operation): checkResponse(session.execute(operation))
    }
    return 0
}

runFuzzer(fuzzOne)
