import Testing
@testable import Gateway
import Schema

/// GraphQL-over-HTTP rules as pure functions: routes, status codes, media types, request parsing.
@Suite struct HTTPRoutingTests {
    static let routes: [(HTTPMethod, String, Int?, String?)] = [
        (.get, "/graphql", nil, nil),
        (.post, "/graphql", nil, nil),
        (.get, "/graphql/", nil, nil),
        (.options, "/graphql", 200, "GET, HEAD, POST, OPTIONS"),
        (.put, "/graphql", 405, "GET, HEAD, POST, OPTIONS"),
        (.delete, "/graphql", 405, "GET, HEAD, POST, OPTIONS"),
        (.head, "/graphql", nil, nil),
        (.get, "/healthz", nil, nil),
        (.head, "/healthz", nil, nil),
        (.post, "/healthz", 405, "GET, HEAD"),
        (.get, "/metrics", nil, nil),
        (.head, "/metrics", nil, nil),
        (.post, "/metrics", 405, "GET, HEAD"),
        (.get, "/metrics/", 404, nil),
        (.get, "/", 404, nil),
        (.get, "/graphiql", 404, nil),
        (.post, "/nope", 404, nil),
    ]

    @Test(arguments: routes)
    func routing(_ method: HTTPMethod, _ path: String, _ status: Int?, _ allow: String?) {
        switch HTTPRouting.route(method: method, path: path) {
        case .graphql: #expect(status == nil && path.hasPrefix("/graphql"))
        case .health: #expect(status == nil && path == "/healthz")
        case .metrics: #expect(status == nil && path == "/metrics")
        case .respond(let r):
            #expect(r.status == status)
            #expect(r.headers.first { $0.0 == "allow" }?.1 == allow)
        }
    }

    @Test func methodNotAllowedBody() {
        let r = HTTPRouting.methodNotAllowed(.put, allow: "GET, POST, OPTIONS")
        #expect(r.text == #"{"errors":[{"message":"Method PUT is not allowed here; allowed: GET, POST, OPTIONS","extensions":{"code":"METHOD_NOT_ALLOWED"}}]}"#)
        #expect(r.contentType == "application/json; charset=utf-8")
    }

    static let accepts: [(String?, ResponseFormat?)] = [
        (nil, .json),
        ("", .json),
        ("application/json", .json),
        ("application/graphql-response+json", .graphqlResponse),
        ("application/graphql-response+json, application/json;q=0.9", .graphqlResponse),
        ("application/json, application/graphql-response+json;q=0.5", .json),
        ("application/graphql-response+json;q=0, application/json", .json),
        ("*/*", .json),
        ("text/html, application/*;q=0.8", .json),
        ("application/graphql-response+json; charset=utf-8", .graphqlResponse),
        ("text/html", nil),
        ("application/json;q=0", nil),
        // The most specific range decides a type's quality (RFC 9110 12.5.1).
        ("application/json;q=0, */*", .graphqlResponse),
        ("application/json;q=0, application/*", .graphqlResponse),
        ("application/graphql-response+json;q=0, */*", .json),
        ("*/*;q=0.5, application/json;q=0.4", .graphqlResponse),
        ("application/*;q=0.2, application/json", .json),
        ("*/*, application/graphql-response+json;q=0.9", .json),
    ]

    @Test(arguments: accepts)
    func acceptNegotiation(_ accept: String?, _ expected: ResponseFormat?) {
        #expect(HTTPRouting.negotiate(accept: accept) == expected)
    }

    @Test func contentTypes() {
        #expect(HTTPRouting.isJSONContentType("application/json"))
        #expect(HTTPRouting.isJSONContentType("Application/JSON; charset=utf-8"))
        #expect(!HTTPRouting.isJSONContentType("text/plain"))
        #expect(!HTTPRouting.isJSONContentType("application/graphql"))
        #expect(!HTTPRouting.isJSONContentType(nil))
    }

    @Test func bodyRequest() throws {
        let r = try HTTPRouting.request(fromBody: Array(#"{"query":"query Q { a }","variables":{"x":[1,2]},"operationName":"Q","extensions":{}}"#.utf8), format: .json).get()
        #expect(r.query == "query Q { a }")
        #expect(r.variables == .object([("x", .array([.int(1), .int(2)]))]))
        #expect(r.operationName == "Q")
    }

    static let badBodies: [(String, String)] = [
        ("", "The request body is not valid JSON: empty input, a JSON value was expected (line 1, column 0)"),
        ("[1]", "Batched requests (a JSON array of operations) are not supported: send one operation per request"),
        ("{}", "The request body has no 'query' member"),
        (#"{"query":1}"#, "The 'query' member must be a string, but got number"),
        (#"{"query":"{a}","variables":"x"}"#, "The 'variables' member must be an object or null, but got string"),
        (#"{"query":"{a}","operationName":[]}"#, "The 'operationName' member must be a string or null, but got array"),
        (#"{"query":"{a}","extensions":1}"#, "The 'extensions' member must be an object or null, but got number"),
    ]

    @Test(arguments: badBodies)
    func badBodyIs400(_ body: String, _ message: String) {
        for format in [ResponseFormat.json, .graphqlResponse] {
            switch HTTPRouting.request(fromBody: Array(body.utf8), format: format) {
            case .success: Issue.record("expected a failure")
            case .failure(let r):
                #expect(r.status == 400)
                #expect(r.contentType == format.contentType)
                #expect(r.text == #"{"errors":[{"message":"\#(message)","extensions":{"code":"BAD_REQUEST"}}]}"#)
            }
        }
    }

    @Test func invalidJSONBodyNamesThePosition() {
        guard case .failure(let r) = HTTPRouting.request(fromBody: Array("{\"query\": }".utf8), format: .json) else {
            Issue.record("expected a failure"); return
        }
        #expect(r.text.contains("The request body is not valid JSON: unexpected token near '}' (line 1, column 11)"))
    }

    @Test func queryParameters() throws {
        let r = try HTTPRouting.request(fromQuery: [("query", "{ a }"), ("variables", #"{"v":"x y"}"#), ("operationName", "")], format: .json).get()
        #expect(r.query == "{ a }")
        #expect(r.variables == .object([("v", .string("x y"))]))
        #expect(r.operationName == nil)
        guard case .failure(let missing) = HTTPRouting.request(fromQuery: [("operationName", "x")], format: .graphqlResponse) else {
            Issue.record("expected a failure"); return
        }
        #expect(missing.status == 400)
        #expect(missing.text == #"{"errors":[{"message":"Missing the 'query' parameter: GET /graphql?query={...}","extensions":{"code":"BAD_REQUEST"}}]}"#)
        guard case .failure(let badVars) = HTTPRouting.request(fromQuery: [("query", "{a}"), ("variables", "[1]")], format: .json) else {
            Issue.record("expected a failure"); return
        }
        #expect(badVars.text.contains("The 'variables' parameter must be a JSON object, but got array"))
    }

    @Test func health() {
        let ok = HTTPRouting.health(version: .init(version: 42, catalogRow: 1, assetRow: 2), error: nil)
        #expect(ok.status == 200)
        #expect(ok.text == #"{"status":"ok","version":42}"#)
        let bad = HTTPRouting.health(version: nil, error: "database is locked")
        #expect(bad.status == 503)
        #expect(bad.text == #"{"status":"error","message":"database is locked"}"#)
    }

    @Test func metricsAreEachFamilyOnceWithItsTypeAndEscapedLabels() {
        var m = MetricsSnapshot()
        m.catalogVersion = 7
        m.catalogReadable = true
        m.webSockets = [.legacy: 3]
        m.httpResponses = [503: 2, 200: 5]
        m.operationsRefused = 9
        m.startTime = 1_796_596_987.25
        let h = LatencyHistogram()
        for ns: UInt64 in [400_000, 500_000, 700_000, 3_000_000, 20_000_000_000] { h.observe(ns: ns) }
        m.durations = [("websocket", h.counts)]
        let text = Metrics.render(m)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(text.hasSuffix("\n"))
        // Each sample follows its family's HELP and TYPE; counters' names end in _total.
        var family = ""
        var type = ""
        var families: [String] = []
        for line in lines {
            if line.hasPrefix("# HELP ") {
                family = String(line.dropFirst(7).prefix { $0 != " " })
                families.append(family)
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                #expect(parts.count == 4 && String(parts[2]) == family)
                type = String(parts[3])
                #expect((type == "counter") == family.hasSuffix("_total"), "\(line)")
            } else {
                let names = type == "histogram" ? ["_bucket", "_sum", "_count"].map { family + $0 } : [family]
                #expect(names.contains { line.hasPrefix($0 + "{") || line.hasPrefix($0 + " ") }, "\(line) outside \(family)")
            }
        }
        #expect(Set(families).count == families.count)
        #expect(families.allSatisfy { $0.hasPrefix("catalog_gateway_") })
        #expect(lines.contains("catalog_gateway_catalog_version 7"))
        #expect(lines.contains("catalog_gateway_catalog_readable 1"))
        #expect(lines.contains(#"catalog_gateway_websocket_connections{subprotocol="graphql-ws"} 3"#))
        #expect(lines.contains(#"catalog_gateway_websocket_connections{subprotocol="graphql-transport-ws"} 0"#))
        #expect(lines.contains("catalog_gateway_operations_refused_total 9"))
        #expect(lines.contains("catalog_gateway_start_time_seconds 1796596987.250"))
        let codes = lines.filter { $0.hasPrefix("catalog_gateway_http_responses_total{") }
        #expect(codes == [#"catalog_gateway_http_responses_total{code="200"} 5"#, #"catalog_gateway_http_responses_total{code="503"} 2"#])
        #expect(lines.contains { $0.hasPrefix(#"catalog_gateway_build_info{version="\#(BuildInfo.version)","#) && $0.hasSuffix("} 1") })
        // Cumulative buckets; past the last bound only in +Inf and the count.
        let ws = #"transport="websocket""#
        #expect(lines.contains("catalog_gateway_operation_duration_seconds_bucket{\(ws),le=\"0.0005\"} 2"))
        #expect(lines.contains("catalog_gateway_operation_duration_seconds_bucket{\(ws),le=\"0.001\"} 3"))
        #expect(lines.contains("catalog_gateway_operation_duration_seconds_bucket{\(ws),le=\"0.005\"} 4"))
        #expect(lines.contains("catalog_gateway_operation_duration_seconds_bucket{\(ws),le=\"10\"} 4"))
        #expect(lines.contains("catalog_gateway_operation_duration_seconds_bucket{\(ws),le=\"+Inf\"} 5"))
        #expect(lines.contains("catalog_gateway_operation_duration_seconds_sum{\(ws)} 20.004600"))
        #expect(lines.contains("catalog_gateway_operation_duration_seconds_count{\(ws)} 5"))
        #expect(lines.contains(#"catalog_gateway_operation_wait_seconds_bucket{le="+Inf"} 0"#))
        // No version read yet: no sample rather than a made-up 0.
        #expect(!Metrics.render(MetricsSnapshot()).contains("catalog_gateway_catalog_version "))
        #expect(Metrics.escaped("a\\b\"c\nd") == #"a\\b\"c\nd"#)
    }

    static let contentLengths: [(String?, HTTPRouting.ContentLength)] = [
        (nil, .absent),
        ("0", .length(0)),
        (" 42\t", .length(42)),
        ("9223372036854775807", .length(Int.max)),
        ("9223372036854775808", .invalid("9223372036854775808")),
        ("99999999999999999999999", .invalid("99999999999999999999999")),
        ("-5", .invalid("-5")),
        ("+5", .invalid("+5")),
        ("1.5", .invalid("1.5")),
        ("5, 5", .invalid("5, 5")),
        ("", .invalid("")),
    ]

    @Test(arguments: contentLengths)
    func contentLength(header: String?, expected: HTTPRouting.ContentLength) {
        #expect(HTTPRouting.contentLength(header) == expected)
    }

    @Test func invalidContentLengthAnswer() {
        let r = HTTPRouting.invalidContentLength("-5")
        #expect(r.status == 400)
        #expect(r.closeConnection)
        #expect(r.text == #"{"errors":[{"message":"Invalid Content-Length \"-5\": it must be a decimal number of bytes, 0 to 9223372036854775807","extensions":{"code":"BAD_REQUEST"}}]}"#)
    }

    static let unparsable: [(String, Int, String)] = [
        ("GARBAGE\r\n\r\n", 400, "Bad Request: not an HTTP/1.1 request line"),
        ("\u{0}\u{1}\u{2}", 400, "Bad Request: not an HTTP/1.1 request line"),
        ("PROPFIND /graphql HTTP/1.1\r\nHost: x\r\n\r\n", 501, "Method PROPFIND is not implemented; use GET or POST (OPTIONS for CORS)"),
        ("TRACE * HTTP/1.0\n", 501, "Method TRACE is not implemented; use GET or POST (OPTIONS for CORS)"),
        ("BREW /pot HTCPCP/1.0\r\n", 400, "Bad Request: not an HTTP/1.1 request line"),
        ("lower /x HTTP/1.1\r\n", 400, "Bad Request: not an HTTP/1.1 request line"),
    ]

    @Test(arguments: unparsable)
    func unparsableRequest(input: String, status: Int, message: String) {
        let r = Array(input.utf8).withUnsafeBytes { HTTPRouting.unparsableRequest($0) }
        #expect(r.status == status)
        #expect(r.closeConnection)
        let code = status == 501 ? "NOT_IMPLEMENTED" : "BAD_REQUEST"
        #expect(r.text == #"{"errors":[{"message":"\#(message)","extensions":{"code":"\#(code)"}}]}"#)
    }

    @Test func rawResponse() {
        let r = HTTPRouting.bodyTimeout(seconds: 2, received: 2, announced: 100)
        let date = "Sun, 06 Dec 2026 07:30:00 GMT"
        let text = String(decoding: HTTPRouting.rawResponse(r, date: date, anyOrigin: true), as: UTF8.self)
        let body = #"{"errors":[{"message":"Request body timeout: 2 of 100 bytes arrived in 2 s","extensions":{"code":"REQUEST_TIMEOUT"}}]}"#
        #expect(text == "HTTP/1.1 408 Request Timeout\r\nserver: catalog-gateway\r\ndate: \(date)\r\ncontent-type: application/json; charset=utf-8\r\n"
            + "content-length: 118\r\naccess-control-allow-origin: *\r\nconnection: close\r\n\r\n" + body)
        // With a --cors-origin list, these answers (given before any origin is checked) name none.
        let listed = String(decoding: HTTPRouting.rawResponse(r, date: date, anyOrigin: false), as: UTF8.self)
        #expect(listed == "HTTP/1.1 408 Request Timeout\r\nserver: catalog-gateway\r\ndate: \(date)\r\ncontent-type: application/json; charset=utf-8\r\n"
            + "content-length: 118\r\nconnection: close\r\n\r\n" + body)
    }

    @Test func originsMatchWithoutASCIICaseOnly() {
        let allowed = ["https://kite.example", "http://app.example:8080/", "https://caf\u{E9}.example"]
        for origin in ["https://kite.example", "HTTPS://Kite.EXAMPLE", "https://kite.example/", "https://kite.example:443",
                       "http://APP.example:8080", "https://CAF\u{E9}.example"] {
            #expect(HTTPRouting.originAllowed(origin, allowed), "\(origin)")
        }
        // Unicode would match these: a Kelvin sign (U+212A) lowercases to `k`, and e + U+0301 is
        // canonically equivalent to U+00E9. As bytes they are other origins.
        for origin in ["https://\u{212A}ite.example", "https://\u{212A}ITE.EXAMPLE", "https://cafe\u{301}.example",
                       "https://kite.example:8443", "http://kite.example", "https://kite.example.evil", "https://app.example:8080"] {
            #expect(!HTTPRouting.originAllowed(origin, allowed), "\(origin)")
        }
        #expect(HTTPRouting.corsHeaders(origin: "https://\u{212A}ite.example", allowed: allowed).map { $0.0 } == ["vary"])
        #expect(HTTPRouting.corsHeaders(origin: "https://Kite.example", allowed: allowed).first?.1 == "https://Kite.example")
    }

    @Test func entityTagsAreStableAndFollowEveryByte() {
        let body = Array(#"{"data":{"product":{"id":"1","name":"ALEXA Mini"}}}"#.utf8)
        let tag = HTTPRouting.entityTag(body)
        #expect(tag.count == 18 && tag.hasPrefix("\"") && tag.hasSuffix("\""))
        #expect(HTTPRouting.entityTag(body) == tag)
        // Every single-byte change, in the 8-byte steps and in the tail, and every length.
        var seen: Set<String> = [tag]
        for i in body.indices {
            var b = body
            b[i] ^= 1
            #expect(seen.insert(HTTPRouting.entityTag(b)).inserted, "byte \(i)")
        }
        for n in 0..<body.count { #expect(seen.insert(HTTPRouting.entityTag(Array(body.prefix(n)))).inserted, "prefix \(n)") }
        #expect(!seen.contains(HTTPRouting.entityTag(body + [0])))
    }

    @Test func ifNoneMatchUsesTheWeakComparison() {
        let tag = "\"0123456789abcdef\""
        for header in [tag, "W/" + tag, "*", " \"x\" ,\t" + tag, "\"x\", W/" + tag] {
            #expect(HTTPRouting.matches(ifNoneMatch: header, tag: tag), "\(header)")
        }
        for header in ["", "\"x\"", "0123456789abcdef", "\"0123456789ABCDEF\"", "W/\"x\"", tag + "x"] {
            #expect(!HTTPRouting.matches(ifNoneMatch: header, tag: tag), "\(header)")
        }
    }

    @Test func onlyA200IsTaggedAndMayBecome304() {
        let ok = HTTPResponse(status: 200, contentType: ResponseFormat.json.contentType, body: Array("{}".utf8))
        let tagged = HTTPRouting.conditional(ok, ifNoneMatch: nil)
        let tag = tagged.headers.first { $0.0 == "etag" }!.1
        #expect(tagged.status == 200 && !tagged.omitsBody && tagged.body == ok.body)
        #expect(tagged.headers.map { $0.0 + ": " + $0.1 } == ["etag: \(tag)", "cache-control: no-cache", "vary: Accept"])
        // The same body as application/graphql-response+json is another representation.
        let modern = HTTPResponse(status: 200, contentType: ResponseFormat.graphqlResponse.contentType, body: ok.body)
        let modernTag = HTTPRouting.conditional(modern, ifNoneMatch: nil).headers.first { $0.0 == "etag" }!.1
        #expect(modernTag != tag)
        #expect(HTTPRouting.conditional(modern, ifNoneMatch: tag).status == 200)
        #expect(HTTPRouting.conditional(ok, ifNoneMatch: "\"other\"").status == 200)
        let notModified = HTTPRouting.conditional(ok, ifNoneMatch: tag)
        #expect(notModified.status == 304 && notModified.omitsBody)
        #expect(notModified.headers.map { $0.0 + ": " + $0.1 } == tagged.headers.map { $0.0 + ": " + $0.1 })
        #expect(notModified.body == ok.body)  // kept for Content-Length, not sent
        let failed = HTTPResponse(status: 400, contentType: ResponseFormat.json.contentType, body: Array("{}".utf8))
        #expect(HTTPRouting.conditional(failed, ifNoneMatch: "*") == failed)
    }
}
