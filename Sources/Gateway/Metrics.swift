import Synchronization

/// GET /metrics: what an operator watches — connections, subscriptions, the work waiting for a
/// worker, what was refused or closed for load, the catalog version — in Prometheus' text
/// exposition format (0.0.4), which Prometheus, VictoriaMetrics, the OpenTelemetry collector
/// and Datadog's agent scrape. Counters count from the server's start.
public struct MetricsSnapshot: Sendable {
    /// The catalog version the watcher read last; nil before the first read.
    public var catalogVersion: Int?
    /// Whether the watcher can read the catalog now (/healthz's 200).
    public var catalogReadable = false
    /// Open WebSockets per subprotocol.
    public var webSockets: [WireProtocol: Int] = [:]
    public var webSocketsOpened = 0
    public var httpInProgress = 0
    /// HTTP responses written, by status: to requests, to refused WebSocket handshakes and to
    /// bytes that are not HTTP.
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
    /// How long answered operations ran on a worker, by transport ("websocket", "http").
    public var durations: [(transport: String, counts: LatencyHistogram.Counts)] = []
    /// How long operations waited for a worker (every worker busy).
    public var waits = LatencyHistogram.Counts()
    /// The service thread's waits for socket events, through epoll and plain poll(), and lost
    /// epoll registrations the once-a-second sweep restored.
    public var serviceWaits: (epoll: UInt, plain: UInt, healed: UInt) = (0, 0, 0)

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
        func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
            out += "catalog_gateway_\(name)"
            if !labels.isEmpty {
                out += "{" + labels.map { "\($0.0)=\"\(escaped($0.1))\"" }.joined(separator: ",") + "}"
            }
            out += " \(value)\n"
        }
        func header(_ name: String, _ type: String, _ help: String) {
            out += "# HELP catalog_gateway_\(name) \(help)\n# TYPE catalog_gateway_\(name) \(type)\n"
        }
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: [(String, String)], value: String)]) {
            header(name, type, help)
            for (labels, value) in samples { sample(name, labels, value) }
        }
        func histogram(_ name: String, _ help: String, _ series: [(labels: [(String, String)], counts: LatencyHistogram.Counts)]) {
            header(name, "histogram", help)
            for (labels, counts) in series {
                var cumulative = 0
                for (bound, n) in zip(LatencyHistogram.bounds, counts.buckets) {
                    cumulative += n
                    sample(name + "_bucket", labels + [("le", bound.label)], String(cumulative))
                }
                sample(name + "_bucket", labels + [("le", "+Inf")], String(counts.count))
                sample(name + "_sum", labels, String(seconds: Double(counts.sumNs) / 1e9, digits: 6))
                sample(name + "_count", labels, String(counts.count))
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
               [([], String(seconds: s.startTime, digits: 3))])
        if let v = s.catalogVersion {
            one("catalog_version", "gauge", "The catalog version last read (the greatest versionid).", v)
        }
        one("catalog_readable", "gauge", "1 while the catalog can be read (/healthz answers 200), else 0.", s.catalogReadable ? 1 : 0)
        family("websocket_connections", "gauge", "Open WebSocket connections, by subprotocol.",
               [WireProtocol.transport, .legacy].map { ([("subprotocol", $0.rawValue)], String(s.webSockets[$0] ?? 0)) })
        one("websocket_connections_opened_total", "counter", "WebSocket connections opened.", s.webSocketsOpened)
        one("http_requests_in_progress", "gauge", "HTTP requests received and not yet answered.", s.httpInProgress)
        family("http_responses_total", "counter", "HTTP responses written, by status code (refused WebSocket handshakes and answers to bytes that are not HTTP included).",
               s.httpResponses.sorted { $0.key < $1.key }.map { ([("code", String($0.key))], String($0.value)) })
        one("subscriptions", "gauge", "Live catalogVersion and catalogChanges subscriptions.", s.subscriptions)
        one("operations_waiting", "gauge", "Operations waiting for a worker (--max-waiting-operations).", s.waitingOperations)
        one("operations_waiting_bytes", "gauge", "Bytes of the requests waiting for a worker (--max-waiting-bytes).", s.waitingBytes)
        one("operations_refused_total", "counter",
            "Operations refused for load: SERVER_BUSY (--max-waiting-operations, --max-waiting-bytes, --max-wait-ms), and TOO_MANY_OPERATIONS for jobs waiting on one connection.", s.operationsRefused)
        one("send_queue_bytes", "gauge", "Bytes queued for WebSocket clients behind each one's first message (--max-total-queued-bytes).", s.queuedBytes)
        one("slow_clients_closed_total", "counter", "WebSocket clients closed because they did not read (1008, or dropped when their socket was full).", s.slowClientsClosed)
        one("connections_refused_total", "counter", "TCP connections closed at once near the open-files limit.", s.socketsRefused)
        family("service_waits_total", "counter",
               "The service thread's waits for socket events: through epoll, or plain poll() over every socket (with --no-epoll, or where epoll cannot watch a descriptor).",
               [([("wait", "epoll")], String(s.serviceWaits.epoll)), ([("wait", "poll")], String(s.serviceWaits.plain))])
        one("service_wait_registrations_restored_total", "counter",
            "Sockets epoll had stopped watching that the once-a-second check of every socket found ready and registered again (a fault if ever above 0).", Int(s.serviceWaits.healed))
        histogram("operation_duration_seconds", "How long queries ran on a worker, from its start to the answer queued, by transport.",
                  s.durations.map { ([("transport", $0.transport)], $0.counts) })
        histogram("operation_wait_seconds",
                  "How long operations waited for a worker while every worker was busy (what --max-wait-ms bounds).",
                  [([], s.waits)])
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

/// Counts of durations in fixed buckets (`bounds`), their sum and count; taken by any thread.
public final class LatencyHistogram: Sendable {
    /// Upper bounds in nanoseconds, with their `le` labels: 0.5 ms to 10 s.
    public static let bounds: [(ns: UInt64, label: String)] = [
        (500_000, "0.0005"), (1_000_000, "0.001"), (2_500_000, "0.0025"), (5_000_000, "0.005"),
        (10_000_000, "0.01"), (25_000_000, "0.025"), (50_000_000, "0.05"), (100_000_000, "0.1"),
        (250_000_000, "0.25"), (500_000_000, "0.5"), (1_000_000_000, "1"), (2_500_000_000, "2.5"),
        (5_000_000_000, "5"), (10_000_000_000, "10"),
    ]

    public struct Counts: Sendable, Equatable {
        /// Per bucket (not cumulative); a duration past the last bound is only in `count`.
        public var buckets = [Int](repeating: 0, count: LatencyHistogram.bounds.count)
        public var count = 0
        public var sumNs: UInt64 = 0
        public init() {}
    }

    private let state = Mutex(Counts())

    public init() {}

    public func observe(ns: UInt64) {
        let i = Self.bounds.firstIndex { ns <= $0.ns }
        state.withLock { c in
            if let i { c.buckets[i] += 1 }
            c.count += 1
            c.sumNs &+= ns
        }
    }

    public var counts: Counts { state.withLock { $0 } }
}

private extension String {
    /// A non-negative number of seconds with `digits` decimals, without exponent.
    init(seconds: Double, digits: Int) {
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        let units = Int64((seconds * Double(scale)).rounded())
        let frac = String(units % scale)
        self = "\(units / scale).\(String(repeating: "0", count: digits - frac.count))\(frac)"
    }
}
