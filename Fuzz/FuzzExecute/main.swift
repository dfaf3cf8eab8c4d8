// libFuzzer target: `query 0xFF variables-JSON [0xFF operationName]` prepared and executed
// against a 60-product demo catalog (written once to /tmp). Oracle: every response is a
// well-formed JSON object whose `errors` match the result.
import FuzzSupport
import Resolvers
import Schema
#if canImport(Glibc)
import Glibc
#endif

let catalogPath = "/tmp/cg-fuzz-demo-60.sqlite"
if access(catalogPath, R_OK) != 0 {
    do { try DemoCatalog(products: 60).write(to: catalogPath) } catch { fuzzFailure("cannot write \(catalogPath): \(error)") }
}
let service = QueryService()
nonisolated(unsafe) let session: CatalogSession = {
    do {
        let s = try CatalogSession(path: catalogPath, service: service)
        // No answer cache: repeats must execute again.
        s.answerCacheLimit = 0
        return s
    } catch {
        fuzzFailure("cannot open \(catalogPath): \(error)")
    }
}()

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
