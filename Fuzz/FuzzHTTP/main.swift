// libFuzzer target: the HTTP request path as GatewayServer composes it (HTTPRouting: route,
// Accept negotiation, Content-Type check, GET parameters or POST body to a GraphQLRequest,
// execution against a 60-product demo catalog). The input is split on 0xFF:
// `method-byte 0xFF path 0xFF accept 0xFF content-type 0xFF body-or-query-string`, an empty
// header part meaning "absent"; the query string is `k=v&k=v` (already URL-decoded, as lws hands
// it over). Oracles: the status is one the gateway documents, JSON responses are JSON objects,
// and a 200 always carries `data` or `errors`.
import FuzzSupport
import Gateway
import Resolvers
import Schema
#if canImport(Glibc)
import Glibc
#endif

nonisolated(unsafe) let opened = fuzzCatalogSession()
let service = opened.0
nonisolated(unsafe) let session = opened.1
let methods: [HTTPMethod] = [.get, .post, .head, .options, .put, .patch, .delete, .other]
let statuses: Set<Int> = [200, 204, 400, 404, 405, 406, 411, 413, 415]

/// GatewayServer's HTTP path without the socket.
func handle(_ method: HTTPMethod, _ path: String, accept: String?, contentType: String?, payload: [UInt8]) -> HTTPResponse {
    switch HTTPRouting.route(method: method, path: path) {
    case .respond(let r): return r
    case .health: return HTTPRouting.health(version: CatalogVersionValue(version: 1, catalogRow: nil, assetRow: nil), error: nil)
    case .metrics: return Metrics.response(MetricsSnapshot())
    case .graphql:
        guard let format = HTTPRouting.negotiate(accept: accept) else { return HTTPRouting.notAcceptable }
        let request: Result<GraphQLRequest, HTTPResponse>
        if method == .get {
            let params = payload.split(separator: 0x26, omittingEmptySubsequences: false).map { pair -> (String, String) in
                let s = String(decoding: pair, as: UTF8.self)
                guard let eq = s.firstIndex(of: "=") else { return (s, "") }
                return (String(s[..<eq]), String(s[s.index(after: eq)...]))
            }
            request = HTTPRouting.request(fromQuery: params, format: format)
        } else {
            guard HTTPRouting.isJSONContentType(contentType) else {
                return HTTPRouting.plainError(415, "Unsupported Content-Type")
            }
            request = HTTPRouting.request(fromBody: payload, format: format)
        }
        switch request {
        case .failure(let r): return r
        case .success(let r):
            // A fresh service: its document cache would make repeated inputs take another path.
            return HTTPRouting.execute(r, method: method, format: format, service: QueryService(options: service.options),
                                       session: session).0
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let parts = fuzzParts(fuzzBytes(data, size), max: 5)
    func part(_ i: Int) -> [UInt8]? { i < parts.count ? parts[i] : nil }
    func header(_ i: Int) -> String? { part(i).flatMap { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) } }
    let method = methods[Int(part(0)?.first ?? 0) % methods.count]
    let path = part(1).map { String(decoding: $0, as: UTF8.self) } ?? "/graphql"
    let response = handle(method, path, accept: header(2), contentType: header(3), payload: part(4) ?? [])
    if !statuses.contains(response.status) { fuzzFailure("status \(response.status)") }
    if response.contentType.contains("json") {
        let body = checkJSONObject(response.body[...], "response body")
        if response.status == 200, body["data"] == nil, body["errors"] == nil, body["status"] == nil {
            fuzzFailure("200 without data or errors")
        }
    } else if !(method == .options && response.status == 200 && response.body.isEmpty) {
        // Only a CORS preflight is answered without JSON: 200, empty.
        fuzzFailure("non-JSON response \(response.status) \(response.contentType)")
    }
    return 0
}

runFuzzer(fuzzOne)
