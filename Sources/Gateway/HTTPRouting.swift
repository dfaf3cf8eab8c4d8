#if canImport(Glibc)
import Glibc
#endif
import Resolvers
import Schema

/// An HTTP response before it is written: status, content type, body, extra headers.
public struct HTTPResponse: Error, Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    public var headers: [(String, String)]
    /// Close the connection after the response (the request body was not read).
    public var closeConnection: Bool
    /// Send the headers only (a 304): Content-Length still says what a 200 would have carried,
    /// as for HEAD (RFC 9110 8.6).
    public var omitsBody = false

    public init(status: Int, contentType: String, body: [UInt8], headers: [(String, String)] = [], closeConnection: Bool = false) {
        self.status = status; self.contentType = contentType; self.body = body; self.headers = headers
        self.closeConnection = closeConnection
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    public static func == (a: HTTPResponse, b: HTTPResponse) -> Bool {
        a.status == b.status && a.contentType == b.contentType && a.body == b.body
            && a.headers.map { $0.0 + ":" + $0.1 } == b.headers.map { $0.0 + ":" + $0.1 } && a.closeConnection == b.closeConnection
            && a.omitsBody == b.omitsBody
    }
}

public enum HTTPMethod: String, Sendable {
    case get = "GET", post = "POST", head = "HEAD", options = "OPTIONS", put = "PUT", patch = "PATCH", delete = "DELETE", other = "OTHER"
}

/// The media type a GraphQL response is sent as (GraphQL-over-HTTP draft).
public enum ResponseFormat: Sendable, Equatable {
    /// application/graphql-response+json: request errors get 4xx status codes.
    case graphqlResponse
    /// application/json: every well-formed request gets 200.
    case json

    public var contentType: String {
        switch self {
        case .graphqlResponse: return "application/graphql-response+json; charset=utf-8"
        case .json: return "application/json; charset=utf-8"
        }
    }
}

/// Which Host header values the gateway answers (--allowed-host). A page whose name a DNS
/// rebinding points at the gateway's address is read by the browser as its own, same-origin,
/// but its requests still name that page's host in Host: refusing unknown names is what keeps
/// such a page from reading a gateway on a developer's machine (Jupyter and Vite do the same).
public enum HostPolicy: Sendable, Equatable {
    /// Any Host: `--allowed-host '*'`, or no list and bound to an address others reach (a
    /// server behind a name, whatever it is).
    case any
    /// Loopback names only — `localhost`, names ending in `.localhost`, 127.0.0.0/8 and `[::1]`
    /// — with or without a port: no list and bound to a loopback address.
    case loopback
    /// Exactly these names (ASCII lower case, without a trailing dot); one with a leading dot
    /// allows that domain and its subdomains.
    case names([String])

    /// The policy of a server bound to `bindHost` (--host) with the --allowed-host list
    /// `allowed` (nil: not given). A list replaces the default whatever the address.
    public static func forServer(bindHost: String, allowed: [String]?) -> HostPolicy {
        guard let allowed else { return isLoopbackAddress(bindHost) ? .loopback : .any }
        if allowed.contains("*") { return .any }
        return .names(allowed.map { name in
            var b = name.utf8.map(HTTPRouting.asciiLowercased)
            if b.last == 0x2E && b.first != 0x5B { b.removeLast() }
            return String(decoding: b, as: UTF8.self)
        })
    }

    /// Whether `host` (what --host takes) is a loopback address: 127.0.0.0/8, ::1 (or ::1's
    /// IPv4-mapped 127.0.0.0/8) or `localhost`.
    public static func isLoopbackAddress(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        let b = withUnsafeBytes(of: v6) { Array($0) }
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return true }
        return b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF && b[12] == 127
    }

    /// Why `name` cannot be an --allowed-host value, or nil when it can: `*`, or a host name
    /// or IP address as the Host header carries it without its port (an IPv6 address in
    /// brackets), optionally with a leading dot. Browsers send international names in their
    /// ASCII (xn--) form, so only ASCII letters, digits, `-`, `_` and `.` are taken.
    public static func problem(_ name: String) -> String? {
        if name == "*" { return nil }
        let b = Array(name.utf8)
        if b.isEmpty { return "the name is empty" }
        if b.contains(0x2F) { return "a name has no scheme or path (\"/\"); give the host alone" }
        if b.contains(where: { $0 <= 0x20 || $0 == 0x7F }) { return "a name has no spaces or control characters" }
        if b.contains(0x2A) { return "`*` stands alone (any Host); for a domain and its subdomains give .example.com" }
        if b.first == 0x5B || (b.first == 0x2E && b.dropFirst().first == 0x5B) {
            let open = b.first == 0x2E ? 1 : 0
            guard open == 0 else { return "an IP address takes no leading dot" }
            guard let close = b.firstIndex(of: 0x5D) else { return "an IPv6 address needs its closing bracket ([::1])" }
            if close != b.count - 1 {
                return b[(close + 1)...].first == 0x3A ? "give it without a port: the port is not compared" : "nothing follows the IPv6 address's closing bracket"
            }
            var v6 = in6_addr()
            let inner = String(decoding: b[1..<close], as: UTF8.self)
            return inet_pton(AF_INET6, inner, &v6) == 1 ? nil : "\(inner) is not an IPv6 address"
        }
        let colons = b.filter { $0 == 0x3A }.count
        if colons > 1 { return "an IPv6 address goes in brackets, as in the Host header ([::1])" }
        if colons == 1 { return "give it without a port: the port is not compared" }
        if b.contains(where: { $0 >= 0x80 }) { return "give an international name in its ASCII form (xn--…), as browsers send it" }
        let isNameByte: (UInt8) -> Bool = { c in
            (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x5F || c == 0x2E
        }
        if let bad = b.first(where: { !isNameByte($0) }) {
            return "\"\(String(decoding: [bad], as: UTF8.self))\" is not in a host name (letters, digits, -, _ and .)"
        }
        // Empty labels: `..`, or nothing but dots. One leading dot (a domain) and one trailing
        // dot (a fully qualified name) are each allowed.
        var labels = b.split(separator: 0x2E, omittingEmptySubsequences: false)
        if b.first == 0x2E { labels.removeFirst() }
        if b.last == 0x2E && labels.count > 1 { labels.removeLast() }
        if labels.contains(where: \.isEmpty) { return "a name has no empty labels (\"..\", or a dot alone)" }
        return nil
    }
}

/// Routing and the GraphQL-over-HTTP rules, as pure functions of the request.
public enum HTTPRouting {
    public static let graphqlPath = "/graphql"
    public static let healthPath = "/healthz"

    public enum Route: Equatable, Sendable {
        case graphql
        case health
        case metrics
        case respond(HTTPResponse)
    }

    /// Which handler serves (method, path); 404 and 405 (with Allow) are answered here.
    public static func route(method: HTTPMethod, path: String) -> Route {
        switch path {
        case graphqlPath, graphqlPath + "/":
            switch method {
            // HEAD is GET without the body (RFC 9110 9.3.2): the same status and headers.
            case .get, .head, .post: return .graphql
            case .options:
                // 200, empty: CORS preflights accept it, and a 204 must not carry the
                // Content-Length that every answer here has (RFC 9110 8.6).
                // (Access-Control-Allow-Headers: `preflightHeaders`, from the request.)
                return .respond(HTTPResponse(status: 200, contentType: "text/plain; charset=utf-8", body: [], headers: [
                    ("allow", "GET, HEAD, POST, OPTIONS"),
                    ("access-control-allow-methods", "GET, HEAD, POST, OPTIONS"),
                    ("access-control-max-age", "86400"),
                ]))
            default:
                return .respond(methodNotAllowed(method, allow: "GET, HEAD, POST, OPTIONS"))
            }
        case healthPath:
            return method == .get || method == .head ? .health : .respond(methodNotAllowed(method, allow: "GET, HEAD"))
        case Metrics.path:
            return method == .get || method == .head ? .metrics : .respond(methodNotAllowed(method, allow: "GET, HEAD"))
        default:
            return .respond(plainError(404, "Not found: \(path). The GraphQL endpoint is \(graphqlPath) (HTTP GET/POST and WebSocket); health is at \(healthPath), metrics at \(Metrics.path)."))
        }
    }

    // MARK: CORS

    /// The headers a preflight allows: those it asks for (Access-Control-Request-Headers) when
    /// that is a list of header names, else the ones GraphQL clients send. A fixed list refused
    /// every client adding its own (Apollo's apollographql-client-name, tracing's traceparent,
    /// sentry-trace), and `*` does not cover Authorization, nor anything with credentials.
    public static func preflightHeaders(requested: String?) -> [(String, String)] {
        // RFC 9110 5.6.2 tchar: letters, digits and !#$%&'*+-.^_`|~ (no CR, LF, colon or space).
        let isName: (UInt8) -> Bool = { c in
            (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || "!#$%&'*+-.^_`|~".utf8.contains(c)
        }
        if let requested, requested.utf8.count <= 4096,
           requested.utf8.allSatisfy({ isName($0) || $0 == 0x2C || $0 == 0x20 || $0 == 0x09 }),
           requested.utf8.contains(where: isName) {
            let names = requested.split(separator: ",").map { $0.trimmingCharacters(in: " \t").lowercased() }.filter { !$0.isEmpty }
            return [("access-control-allow-headers", names.joined(separator: ", ")), ("vary", "access-control-request-headers")]
        }
        return [("access-control-allow-headers", "content-type, accept, authorization, if-none-match"),
                ("vary", "access-control-request-headers")]
    }

    /// Whether `origin` is one of `allowed` (scheme, host and port as a browser sends them;
    /// compared without ASCII case and without a trailing slash). Byte for byte: browsers send
    /// names in ASCII (punycode), and Unicode case folding or canonical equivalence would let a
    /// differently spelled origin in (a Kelvin sign, U+212A, lowercases to `k`).
    public static func originAllowed(_ origin: String, _ allowed: [String]) -> Bool {
        let o = normalizedOrigin(origin)
        return allowed.contains { normalizedOrigin($0) == o }
    }

    /// The UTF-8 in ASCII lower case, no trailing slash, no default port (browsers send
    /// `https://a`, never `https://a:443`).
    static func normalizedOrigin(_ origin: String) -> [UInt8] {
        var o = origin.utf8.map(asciiLowercased)
        while o.last == 0x2F { o.removeLast() }
        if o.starts(with: "https://".utf8) && o.ends(with: ":443") { o.removeLast(4) }
        if o.starts(with: "http://".utf8) && o.ends(with: ":80") { o.removeLast(3) }
        return o
    }

    /// `b` with A–Z made a–z and every other byte as it is (no Unicode case mapping).
    static func asciiLowercased(_ b: UInt8) -> UInt8 {
        b >= 0x41 && b <= 0x5A ? b | 0x20 : b
    }

    /// The CORS headers of an answer to a request from `origin`: with no --cors-origin list any
    /// origin may read it (`*`); with one, a listed origin is named, with credentials allowed,
    /// and any other gets none (the browser then hides the answer). ETag is exposed to scripts.
    public static func corsHeaders(origin: String?, allowed: [String]?) -> [(String, String)] {
        guard let allowed else {
            return [("access-control-allow-origin", "*"), ("access-control-expose-headers", "etag")]
        }
        guard let origin, originAllowed(origin, allowed) else { return [("vary", "origin")] }
        return [("access-control-allow-origin", origin), ("access-control-allow-credentials", "true"),
                ("access-control-expose-headers", "etag"), ("vary", "origin")]
    }

    // MARK: Host

    /// Whether a request whose Host header is `host` is answered under `allowed`. The port is
    /// not compared, nor ASCII case, nor one trailing dot of the name; the rest byte for byte
    /// (no Unicode folding: browsers send names in ASCII). A value that is not `name[:port]`
    /// is allowed only under `.any`, which checks nothing.
    public static func hostAllowed(_ host: String, allowed: HostPolicy) -> Bool {
        if allowed == .any { return true }
        guard let name = hostName(host) else { return false }
        switch allowed {
        case .any:
            return true
        case .loopback:
            return isLoopbackName(name)
        case .names(let names):
            return names.contains { entry in
                let e = Array(entry.utf8)
                guard e.first == 0x2E else { return name == e }
                // `.example.com`: example.com itself, and any name ending in `.example.com`.
                return name.elementsEqual(e.dropFirst()) || (name.count > e.count && name.ends(with: entry))
            }
        }
    }

    /// The name in a Host value, ASCII lower case, without its port and one trailing dot (an
    /// IPv6 literal keeps its brackets); nil unless the value is `name[:digits]`.
    static func hostName(_ host: String) -> [UInt8]? {
        var b = Array(host.utf8)
        while let f = b.first, f == 0x20 || f == 0x09 { b.removeFirst() }
        while let l = b.last, l == 0x20 || l == 0x09 { b.removeLast() }
        let end: Int
        if b.first == 0x5B {
            guard let close = b.firstIndex(of: 0x5D) else { return nil }
            end = close + 1
        } else {
            end = b.firstIndex(of: 0x3A) ?? b.count
        }
        let port = b[end...]
        guard port.isEmpty || (port.first == 0x3A && port.dropFirst().allSatisfy { $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var name = b[..<end].map(asciiLowercased)
        if name.last == 0x2E { name.removeLast() }
        return name.isEmpty ? nil : name
    }

    /// `localhost`, a name ending in `.localhost` (RFC 6761 6.3: always loopback), a 127.0.0.0/8
    /// literal in dotted decimal, or `[::1]`. Not `localhost.evil.example` nor
    /// `127.0.0.1.evil.example`: those are anybody's names.
    static func isLoopbackName(_ name: [UInt8]) -> Bool {
        if name.elementsEqual("localhost".utf8) { return true }
        if name.count > 10 && name.ends(with: ".localhost") { return true }
        if name.first == 0x5B && name.last == 0x5D {
            var v6 = in6_addr()
            let inner = String(decoding: name.dropFirst().dropLast(), as: UTF8.self)
            guard inet_pton(AF_INET6, inner, &v6) == 1 else { return false }
            return withUnsafeBytes(of: v6) { b in b[0..<15].allSatisfy { $0 == 0 } && b[15] == 1 }
        }
        let parts = name.split(separator: 0x2E, omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        let octets = parts.map { p -> Int? in
            guard (1...3).contains(p.count), p.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return p.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        return octets[0] == 127 && octets.allSatisfy { $0 != nil && $0! <= 255 }
    }

    /// The answer to a request whose Host is not allowed (421: RFC 9110 15.5.20, this server
    /// does not serve that name).
    public static func misdirected(host: String) -> HTTPResponse {
        let shown = host.utf8.count > 200 ? String(decoding: host.utf8.prefix(200), as: UTF8.self) + "…" : host
        return plainError(421, "Host \"\(shown)\" is not served here (--allowed-host)", code: "MISDIRECTED_REQUEST")
    }

    /// A GET of the GraphQL path with Sec-WebSocket-Key but no Upgrade header: a WebSocket
    /// handshake whose Upgrade and Connection headers a proxy did not pass on.
    public static let upgradeStripped: HTTPResponse = {
        var r = plainError(426, "This is a WebSocket handshake without its Upgrade header: a proxy between the client and the gateway did not pass it on. nginx needs `proxy_http_version 1.1; proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection \"upgrade\";`.",
                           code: "UPGRADE_REQUIRED")
        r.headers.append(("upgrade", "websocket"))
        return r
    }()

    /// The charset parameter of a JSON Content-Type when it is not UTF-8 (JSON is UTF-8, RFC
    /// 8259 8.1; the GraphQL-over-HTTP draft answers another charset 415); nil otherwise.
    public static func unsupportedCharset(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        for param in contentType.split(separator: ";").dropFirst() {
            let kv = param.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, kv[0].trimmingCharacters(in: " \t").lowercased() == "charset" else { continue }
            let value = kv[1].trimmingCharacters(in: " \t\"").lowercased()
            return value == "utf-8" || value == "utf8" ? nil : value
        }
        return nil
    }

    public static func methodNotAllowed(_ method: HTTPMethod, allow: String) -> HTTPResponse {
        var r = plainError(405, "Method \(method.rawValue) is not allowed here; allowed: \(allow)")
        r.headers.append(("allow", allow))
        return r
    }

    /// `{"errors":[{"message":...,"extensions":{"code":...}}]}` as application/json; the code is
    /// the status's (`code(for:)`) unless given.
    public static func plainError(_ status: Int, _ message: String, code: String? = nil) -> HTTPResponse {
        let e = GraphQLError(message, extensions: ["code": .string(code ?? Self.code(for: status))])
        return HTTPResponse(status: status, contentType: ResponseFormat.json.contentType, body: JSONWriter.requestErrorResponse([e]))
    }

    /// The `extensions.code` of an HTTP-level error.
    public static func code(for status: Int) -> String {
        switch status {
        case 404: return "NOT_FOUND"
        case 405: return "METHOD_NOT_ALLOWED"
        case 406: return "NOT_ACCEPTABLE"
        case 408: return "REQUEST_TIMEOUT"
        case 411: return "LENGTH_REQUIRED"
        case 413: return "BODY_TOO_LARGE"
        case 415: return "UNSUPPORTED_MEDIA_TYPE"
        case 421: return "MISDIRECTED_REQUEST"
        case 403: return "FORBIDDEN"
        case 426: return "UPGRADE_REQUIRED"
        case 501: return "NOT_IMPLEMENTED"
        case 503: return "SERVICE_UNAVAILABLE"
        case 500...: return "INTERNAL_SERVER_ERROR"
        default: return "BAD_REQUEST"
        }
    }

    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 204: return "No Content"
        case 400: return "Bad Request"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 406: return "Not Acceptable"
        case 408: return "Request Timeout"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 421: return "Misdirected Request"
        case 403: return "Forbidden"
        case 426: return "Upgrade Required"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }

    // MARK: Requests lws cannot take as they are

    /// A Content-Length header: absent, a length, or not a length at all.
    public enum ContentLength: Equatable, Sendable {
        case absent
        case length(Int)
        case invalid(String)
    }

    /// RFC 9110: `Content-Length = 1*DIGIT`. A sign, a fraction, anything else, or a value
    /// beyond 63 bits is invalid (never "absent": the request then gets 400, not 411).
    public static func contentLength(_ header: String?) -> ContentLength {
        guard let header else { return .absent }
        var bytes = Substring(header).utf8[...]
        while let f = bytes.first, f == 0x20 || f == 0x09 { bytes = bytes.dropFirst() }
        while let l = bytes.last, l == 0x20 || l == 0x09 { bytes = bytes.dropLast() }
        let value = String(decoding: bytes, as: UTF8.self)
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(value) else {
            return .invalid(value)
        }
        return .length(n)
    }

    public static func invalidContentLength(_ value: String) -> HTTPResponse {
        let shown = value.count > 40 ? String(value.prefix(40)) + "…" : value
        var r = plainError(400, "Invalid Content-Length \"\(shown)\": it must be a decimal number of bytes, 0 to 9223372036854775807",
                           code: "BAD_REQUEST")
        r.closeConnection = true
        return r
    }

    /// The request body did not arrive within the body timeout.
    public static func bodyTimeout(seconds: Int, received: Int, announced: Int) -> HTTPResponse {
        var r = plainError(408, "Request body timeout: \(received) of \(announced) bytes arrived in \(seconds) s",
                           code: "REQUEST_TIMEOUT")
        r.closeConnection = true
        return r
    }

    /// The answer to bytes that are not an HTTP request lws can parse: 501 when the first line
    /// is a well-formed request line with a method lws does not know, else 400.
    public static func unparsableRequest(_ bytes: UnsafeRawBufferPointer) -> HTTPResponse {
        let end = bytes.firstIndex(of: 0x0A) ?? min(bytes.count, 200)
        var line = Array(bytes[0..<min(end, 200)])
        if line.last == 0x0D { line.removeLast() }
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        let isToken: (ArraySlice<UInt8>) -> Bool = { p in !p.isEmpty && p.allSatisfy { $0 >= 0x41 && $0 <= 0x5A || $0 == 0x2D || $0 == 0x5F } }
        var r: HTTPResponse
        if parts.count == 3, isToken(parts[0]), parts[1].first == 0x2F || parts[1].elementsEqual("*".utf8),
           parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8) {
            let method = String(decoding: parts[0], as: UTF8.self)
            r = plainError(501, "Method \(method) is not implemented; use GET or POST (OPTIONS for CORS)", code: "NOT_IMPLEMENTED")
        } else {
            r = plainError(400, "Bad Request: not an HTTP/1.1 request line", code: "BAD_REQUEST")
        }
        r.closeConnection = true
        return r
    }

    /// The whole response as HTTP/1.1 text, for the paths where lws has no HTTP response
    /// state to write through (before the upgrade, the raw fallback). `date`: the Date header's
    /// value (every answer has one, RFC 9110 6.6.1); `anyOrigin`: no --cors-origin list, so
    /// any page may read the answer (with a list, these answers name no origin).
    public static func rawResponse(_ r: HTTPResponse, date: String, anyOrigin: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(r.status) \(reasonPhrase(r.status))\r\n"
        head += "server: catalog-gateway\r\ndate: \(date)\r\ncontent-type: \(r.contentType)\r\ncontent-length: \(r.body.count)\r\n"
        for (k, v) in r.headers { head += "\(k): \(v)\r\n" }
        if anyOrigin { head += "access-control-allow-origin: *\r\n" }
        head += "connection: close\r\n\r\n"
        return Array(head.utf8) + r.body
    }

    /// A request error in the negotiated format.
    public static func requestError(_ status: Int, _ message: String, format: ResponseFormat, code: String = "BAD_REQUEST") -> HTTPResponse {
        let e = GraphQLError(message, extensions: ["code": .string(code)])
        return HTTPResponse(status: status, contentType: format.contentType, body: JSONWriter.requestErrorResponse([e]))
    }

    /// Picks the response media type from Accept: graphql-response+json when the client accepts
    /// it, else application/json; nil (406) when it accepts neither.
    public static func negotiate(accept: String?) -> ResponseFormat? {
        guard let accept, !accept.allSatisfy({ $0 == " " || $0 == "\t" }) else { return .json }
        // RFC 9110 12.5.1: each type takes the quality of the most specific range that matches
        // it (`application/json;q=0, */*` refuses JSON and accepts the other).
        struct Quality { var q = -1.0; var specificity = 0 }
        var graphql = Quality(), json = Quality()
        func apply(_ range: String, _ q: Double, to quality: inout Quality, type: String) {
            let specificity = range == type ? 3 : range == "application/*" ? 2 : range == "*/*" ? 1 : 0
            guard specificity > 0 else { return }
            if specificity > quality.specificity {
                quality = Quality(q: q, specificity: specificity)
            } else if specificity == quality.specificity {
                quality.q = max(quality.q, q)
            }
        }
        for part in accept.split(separator: ",") {
            let fields = part.split(separator: ";")
            guard let typeField = fields.first else { continue }
            let range = typeField.trimmingCharacters(in: " \t").lowercased()
            var q = 1.0
            for f in fields.dropFirst() {
                let kv = f.split(separator: "=", maxSplits: 1)
                if kv.count == 2, kv[0].trimmingCharacters(in: " \t").lowercased() == "q",
                   let v = Double(kv[1].trimmingCharacters(in: " \t")) { q = v }
            }
            apply(range, q, to: &graphql, type: "application/graphql-response+json")
            apply(range, q, to: &json, type: "application/json")
        }
        // On a tie, the GraphQL media type only when named: a wildcard alone keeps the
        // application/json that clients written before it expect.
        if graphql.q > 0 && (graphql.q > json.q || (graphql.q == json.q && graphql.specificity == 3)) {
            return .graphqlResponse
        }
        if json.q > 0 { return .json }
        return nil
    }

    public static let notAcceptable = plainError(
        406, "Not acceptable: this endpoint answers application/graphql-response+json or application/json")

    /// True for `application/json` with any parameters.
    public static func isJSONContentType(_ value: String?) -> Bool {
        guard let value else { return false }
        let type = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: " \t").lowercased() } ?? ""
        return type == "application/json"
    }

    /// A GraphQL request from GET parameters (already URL-decoded).
    public static func request(fromQuery params: [(String, String)], format: ResponseFormat) -> Result<GraphQLRequest, HTTPResponse> {
        func param(_ name: String) -> String? { params.first { $0.0 == name }?.1 }
        guard let query = param("query") else {
            return .failure(withoutQuery(hasPersistedQuery: param("extensions")?.contains("persistedQuery") ?? false,
                                         hasDocumentID: param("documentId") != nil || param("doc_id") != nil,
                                         missing: "Missing the 'query' parameter: GET /graphql?query={...}", format: format))
        }
        // A JSON object (or null), as in a POST body; `extensions` is not used, but checked the
        // same (graphql-http refuses a broken one too).
        func object(_ name: String) -> Result<JSONValue?, HTTPResponse> {
            guard let v = param(name), !v.isEmpty else { return .success(nil) }
            do {
                let parsed = try JSONParser.parse(v)
                switch parsed {
                case .object, .null: return .success(parsed)
                default:
                    return .failure(requestError(400, "The '\(name)' parameter must be a JSON object, but got \(JSONInput.typeName(parsed))", format: format))
                }
            } catch {
                return .failure(requestError(400, "The '\(name)' parameter is not valid JSON: \(error)", format: format))
            }
        }
        let variables: JSONValue?
        switch object("variables") {
        case .success(let v): variables = v
        case .failure(let r): return .failure(r)
        }
        if case .failure(let r) = object("extensions") { return .failure(r) }
        let opName = param("operationName").flatMap { $0.isEmpty ? nil : $0 }
        return .success(GraphQLRequest(query: query, variables: variables, operationName: opName))
    }

    /// A request without its document. Automatic persisted queries (Apollo's
    /// createPersistedQueryLink, urql's persistedExchange) first send only the document's hash
    /// and send the text only after the error they know: "PersistedQueryNotSupported" turns the
    /// feature off for the session (any other error failed every query). Persisted documents
    /// (Relay's doc_id, the draft's documentId) are not kept either.
    static func withoutQuery(hasPersistedQuery: Bool, hasDocumentID: Bool, missing: String, format: ResponseFormat) -> HTTPResponse {
        if hasPersistedQuery {
            return requestError(400, "PersistedQueryNotSupported", format: format, code: "PERSISTED_QUERY_NOT_SUPPORTED")
        }
        if hasDocumentID {
            return requestError(400, "Persisted documents (documentId, doc_id) are not supported: send the document text in 'query'",
                                format: format, code: "PERSISTED_QUERY_NOT_SUPPORTED")
        }
        return requestError(400, missing, format: format)
    }

    /// A GraphQL request from a POST body (`application/json`).
    public static func request(fromBody body: [UInt8], format: ResponseFormat) -> Result<GraphQLRequest, HTTPResponse> {
        let value: JSONValue
        do { value = try JSONParser.parse(body) } catch {
            return .failure(requestError(400, "The request body is not valid JSON: \(error)", format: format))
        }
        if case .array = value {
            return .failure(requestError(400, "Batched requests (a JSON array of operations) are not supported: send one operation per request", format: format))
        }
        guard case .object = value else {
            return .failure(requestError(400, "The request body must be a JSON object, but got \(JSONInput.typeName(value))", format: format))
        }
        guard let q = value["query"] else {
            return .failure(withoutQuery(hasPersistedQuery: value["extensions"]?["persistedQuery"] != nil,
                                         hasDocumentID: value["documentId"] != nil || value["doc_id"] != nil,
                                         missing: "The request body has no 'query' member", format: format))
        }
        guard case .string(let query) = q else {
            return .failure(requestError(400, "The 'query' member must be a string, but got \(JSONInput.typeName(q))", format: format))
        }
        var variables: JSONValue? = nil
        switch value["variables"] {
        case nil, .null?: break
        case .object?: variables = value["variables"]
        case let v?:
            return .failure(requestError(400, "The 'variables' member must be an object or null, but got \(JSONInput.typeName(v))", format: format))
        }
        var operationName: String? = nil
        switch value["operationName"] {
        case nil, .null?: break
        case .string(let s)?: operationName = s
        case let v?:
            return .failure(requestError(400, "The 'operationName' member must be a string or null, but got \(JSONInput.typeName(v))", format: format))
        }
        switch value["extensions"] {
        case nil, .null?, .object?: break
        case let v?:
            return .failure(requestError(400, "The 'extensions' member must be an object or null, but got \(JSONInput.typeName(v))", format: format))
        }
        return .success(GraphQLRequest(query: query, variables: variables, operationName: operationName))
    }

    /// Whether the operation a request selects is a mutation, whatever else is wrong with its
    /// document: GET must not carry one ("the server MUST respond with an appropriate 4xx").
    /// Only read for a GET that failed to prepare, so the document is parsed again here.
    static func selectsMutation(_ request: GraphQLRequest) -> Bool {
        guard let document = try? Parser.parse(request.query) else { return false }
        let operations = document.operations
        let selected = request.operationName.map { name in operations.first { $0.name?.value == name } }
            ?? (operations.count == 1 ? operations.first : nil)
        return selected?.operation == .mutation
    }

    /// Prepares and executes a request on a worker's session, mapping the outcome to the
    /// draft's status codes. A query's 200 to GET or HEAD carries an entity tag of its body
    /// (`conditional`); `ifNoneMatch` is the request's If-None-Match.
    public static func execute(_ request: GraphQLRequest, method: HTTPMethod, format: ResponseFormat,
                               service: QueryService, session: CatalogSession, ifNoneMatch: String? = nil,
                               cancelled: (() -> Bool)? = nil) -> (HTTPResponse, ExecutionResult?) {
        switch service.prepare(request) {
        case .failed(let result):
            // A mutation (the schema has none) sent with GET: the draft's 405, as for a mutation
            // the schema had ("GET requests MUST NOT be used for executing mutation operations").
            if method == .get || method == .head, selectsMutation(request) {
                var r = HTTPResponse(status: 405, contentType: format.contentType, body: result.json)
                r.headers.append(("allow", "POST"))
                return (r, result)
            }
            return (HTTPResponse(status: format == .graphqlResponse ? 400 : 200, contentType: format.contentType, body: result.json), result)
        case .ready(let op):
            switch op.kind {
            case .subscription:
                let e = GatewayErrors.subscriptionOverHTTP
                return (HTTPResponse(status: 400, contentType: format.contentType, body: JSONWriter.requestErrorResponse([e])), nil)
            case .mutation:
                let e = GatewayErrors.mutationNotSupported
                if method == .get || method == .head {
                    var r = HTTPResponse(status: 405, contentType: format.contentType, body: JSONWriter.requestErrorResponse([e]))
                    r.headers.append(("allow", "POST"))
                    return (r, nil)
                }
                return (HTTPResponse(status: format == .graphqlResponse ? 400 : 200, contentType: format.contentType, body: JSONWriter.requestErrorResponse([e])), nil)
            case .query:
                let result = session.execute(op, cancelled: cancelled)
                let status = result.hasData || format == .json ? 200 : 400
                let r = HTTPResponse(status: status, contentType: format.contentType, body: result.json)
                return (method == .get || method == .head ? conditional(r, ifNoneMatch: ifNoneMatch) : r, result)
            }
        }
    }

    /// A GET's 200 with its entity tag (of its media type and body), `Vary: Accept` and
    /// `Cache-Control: no-cache` (a cache may keep the answer but asks each time: the catalog
    /// changes whenever a writer commits); 304 Not Modified,
    /// headers only, when If-None-Match already names that tag (RFC 9110 13.1.2, 15.4.5). The
    /// query still runs — the tag is the answer's — so a 304 saves the transfer, and the
    /// answer cache (`--answer-cache-mb`) the execution. Other statuses pass unchanged.
    public static func conditional(_ r: HTTPResponse, ifNoneMatch: String?) -> HTTPResponse {
        guard r.status == 200 else { return r }
        var r = r
        // The media type is part of the representation (the same answer is sent as
        // application/json or application/graphql-response+json by Accept): it is in the tag,
        // and `Vary: Accept` tells caches to keep the two apart.
        let tag = entityTag(r.body, mediaType: r.contentType)
        r.headers.append(("etag", tag))
        r.headers.append(("cache-control", "no-cache"))
        r.headers.append(("vary", "Accept"))
        if let ifNoneMatch, matches(ifNoneMatch: ifNoneMatch, tag: tag) {
            r.status = 304
            r.omitsBody = true
        }
        return r
    }

    /// A strong entity tag of `body` sent as `mediaType`: a 64-bit hash of their bytes (the same
    /// in every worker and process), as 16 hex digits in quotes.
    public static func entityTag(_ body: [UInt8], mediaType: String = "") -> String {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(body.count)
        for byte in mediaType.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01B3 }
        h = (h ^ 0xFF) &* 0x100_0000_01B3  // ends the media type (no byte of its UTF-8 is 0xFF)
        body.withUnsafeBytes { b in
            var i = 0
            // Eight bytes a step (FNV-style multiply, then a xorshift to spread the high bits).
            while i + 8 <= b.count {
                h = (h ^ b.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x100_0000_01B3
                h ^= h >> 29
                i += 8
            }
            while i < b.count {
                h = (h ^ UInt64(b[i])) &* 0x100_0000_01B3
                i += 1
            }
        }
        h ^= h >> 33; h &*= 0xFF51_AFD7_ED55_8CCD; h ^= h >> 33
        let hex = String(h, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// If-None-Match's weak comparison: `*`, or a listed tag whose opaque part (without `W/`)
    /// equals `tag`'s.
    static func matches(ifNoneMatch: String, tag: String) -> Bool {
        for item in ifNoneMatch.split(separator: ",") {
            var t = item.trimmingCharacters(in: [" ", "\t"])
            if t == "*" { return true }
            if t.hasPrefix("W/") { t.removeFirst(2) }
            if t == tag { return true }
        }
        return false
    }

    /// GET /healthz.
    public static func health(version: CatalogVersionValue?, error: String?) -> HTTPResponse {
        var w = JSONWriter(capacity: 64)
        if let version, error == nil {
            w.raw("{\"status\":\"ok\",\"version\":"); w.int(version.version); w.byte(0x7D)
            return HTTPResponse(status: 200, contentType: ResponseFormat.json.contentType, body: w.bytes)
        }
        w.raw("{\"status\":\"error\",\"message\":"); w.string(error ?? "the catalog version has not been read yet"); w.byte(0x7D)
        return HTTPResponse(status: 503, contentType: ResponseFormat.json.contentType, body: w.bytes)
    }
}

/// The Date header's value (RFC 9110 6.6.1, IMF-fixdate), made once a second.
final class HTTPDate {
    private var second = -1
    private var text = ""

    func now() -> String {
        var t = time(nil)
        if t != second {
            second = t
            var tmv = tm()
            gmtime_r(&t, &tmv)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
            text = "\(days[Int(tmv.tm_wday)]), \(two(tmv.tm_mday)) \(months[Int(tmv.tm_mon)]) \(tmv.tm_year + 1900) "
                + "\(two(tmv.tm_hour)):\(two(tmv.tm_min)):\(two(tmv.tm_sec)) GMT"
        }
        return text
    }
}

extension Array where Element == UInt8 {
    /// Whether the bytes end with `suffix`'s UTF-8.
    func ends(with suffix: String) -> Bool {
        count >= suffix.utf8.count && self[(count - suffix.utf8.count)...].elementsEqual(suffix.utf8)
    }
}
