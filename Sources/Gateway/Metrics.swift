/// GET /metrics: what an operator watches — connections, subscriptions, the work waiting for a
/// worker, what was refused or closed for load, the catalog version — in Prometheus' text
/// exposition format (0.0.4), which Prometheus, VictoriaMetrics, the OpenTelemetry collector
/// and Datadog's agent scrape. Counters count from the server's start.
public struct MetricsSnapshot: Sendable, Equatable {
    /// The catalog version the watcher read last; nil before the first read.
    public var catalogVersion: Int?
    /// Whether the watcher can read the catalog now (/healthz's 200).
    public var catalogReadable = false
    /// Open WebSockets per subprotocol.
    public var webSockets: [WireProtocol: Int] = [:]
    public var webSocketsOpened = 0
    public var httpInProgress = 0
    /// HTTP responses written through the request path, by status.
    public var httpResponses: [Int: Int] = [:]
    public var subscriptions = 0
    public var waitingOperations = 0
    public var waitingBytes = 0
    public var operationsRefused = 0
    /// Bytes all WebSockets' send queues hold behind their first messages (--max-total-queued-bytes).
    public var queuedBytes = 0
    public var slowClientsClosed = 0
    /// TCP connections closed at once because the open-files limit was near.
    public var socketsRefused = 0
    /// Wall-clock seconds since 1970 when the server started.
    public var startTime = 0.0

    public init() {}
}

public enum Metrics {
    public static let path = "/metrics"
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public static func response(_ s: MetricsSnapshot) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: contentType, body: Array(render(s).utf8),
                     headers: [("cache-control", "no-store")])
    }

    public static func render(_ s: MetricsSnapshot) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: [(String, String)], value: String)]) {
            out += "# HELP catalog_gateway_\(name) \(help)\n# TYPE catalog_gateway_\(name) \(type)\n"
            for (labels, value) in samples {
                out += "catalog_gateway_\(name)"
                if !labels.isEmpty {
                    out += "{" + labels.map { "\($0.0)=\"\(escaped($0.1))\"" }.joined(separator: ",") + "}"
                }
                out += " \(value)\n"
            }
        }
        func one(_ name: String, _ type: String, _ help: String, _ value: Int) {
            family(name, type, help, [([], String(value))])
        }
        let libraries = BuildInfo.libraryVersions
        family("build_info", "gauge", "The gateway's version and the libraries it runs with (always 1).",
               [([("version", BuildInfo.version), ("sqlite", libraries.sqlite), ("libwebsockets", libraries.libwebsockets),
                  ("jansson", libraries.jansson)], "1")])
        family("start_time_seconds", "gauge", "When the server started, in seconds since 1970.",
               [([], String(format: s.startTime))])
        if let v = s.catalogVersion {
            one("catalog_version", "gauge", "The catalog version last read (the greatest versionid).", v)
        }
        one("catalog_readable", "gauge", "1 while the catalog can be read (/healthz answers 200), else 0.", s.catalogReadable ? 1 : 0)
        family("websocket_connections", "gauge", "Open WebSocket connections, by subprotocol.",
               [WireProtocol.transport, .legacy].map { ([("subprotocol", $0.rawValue)], String(s.webSockets[$0] ?? 0)) })
        one("websocket_connections_opened_total", "counter", "WebSocket connections opened.", s.webSocketsOpened)
        one("http_requests_in_progress", "gauge", "HTTP requests received and not yet answered.", s.httpInProgress)
        family("http_responses_total", "counter", "HTTP responses, by status code.",
               s.httpResponses.sorted { $0.key < $1.key }.map { ([("code", String($0.key))], String($0.value)) })
        one("subscriptions", "gauge", "Live catalogVersion and catalogChanges subscriptions.", s.subscriptions)
        one("operations_waiting", "gauge", "Operations waiting for a worker (--max-waiting-operations).", s.waitingOperations)
        one("operations_waiting_bytes", "gauge", "Bytes of the requests waiting for a worker (--max-waiting-bytes).", s.waitingBytes)
        one("operations_refused_total", "counter",
            "Operations refused for load: SERVER_BUSY (--max-waiting-operations, --max-waiting-bytes, --max-wait-ms), and TOO_MANY_OPERATIONS for jobs waiting on one connection.", s.operationsRefused)
        one("send_queue_bytes", "gauge", "Bytes queued for WebSocket clients behind each one's first message (--max-total-queued-bytes).", s.queuedBytes)
        one("slow_clients_closed_total", "counter", "WebSocket clients closed because they did not read (1008).", s.slowClientsClosed)
        one("connections_refused_total", "counter", "TCP connections closed at once near the open-files limit.", s.socketsRefused)
        return out
    }

    /// A label value: backslash, double quote and line feed escaped (the format's only escapes).
    static func escaped(_ v: String) -> String {
        var r = ""
        for c in v.unicodeScalars {
            switch c {
            case "\\": r += "\\\\"
            case "\"": r += "\\\""
            case "\n": r += "\\n"
            default: r.unicodeScalars.append(c)
            }
        }
        return r
    }
}

private extension String {
    /// Seconds with millisecond precision, as Prometheus reads floats.
    init(format seconds: Double) {
        let ms = Int64((seconds * 1000).rounded())
        let frac = String(ms % 1000)
        self = "\(ms / 1000).\(String(repeating: "0", count: 3 - frac.count))\(frac)"
    }
}
