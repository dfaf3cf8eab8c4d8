#if canImport(Glibc)
import Glibc
#endif

/// Every limit and switch of the gateway, each with its default and the `serve` flag that sets it.
public struct GatewayOptions: Sendable {
    /// --host: the one address to bind (IPv4 or IPv6 literal; `localhost` means 127.0.0.1).
    public var host = "127.0.0.1"
    /// --port: TCP port; 0 picks an ephemeral port (the ready line shows the real one).
    public var port = 4000
    /// --workers: threads executing queries, each with its own SQLite connection.
    public var workers = GatewayOptions.defaultWorkers
    /// --max-workers-per-connection: how many workers one connection may occupy at once, so a
    /// heavy query on one connection never holds every worker (default: workers - 1, at least 1).
    public var maxWorkersPerConnection: Int? = nil
    /// --init-timeout: seconds a WebSocket client has to send connection_init (else 4408).
    public var initTimeout: Double = 3
    /// --keepalive: seconds between WebSocket pings (and legacy `ka` messages).
    public var keepAliveInterval = 12
    /// --keepalive-timeout: seconds after an unanswered ping before the peer is closed as dead.
    public var keepAliveTimeout = 10
    /// --http-idle-timeout: seconds an HTTP/1.1 connection may stay idle between requests before
    /// the server closes it (sent as `Keep-Alive: timeout=N`). Longer than a proxy's pool: a
    /// request a proxy sends on a pooled connection just as the server closes it fails (nginx
    /// keeps upstream connections 60 s, and answers such a POST 502; libwebsockets' own default
    /// is 5 s).
    public var httpIdleTimeout = 75
    /// --cors-origin: the origins a browser may call from. nil: any (`Access-Control-Allow-Origin:
    /// *`, no credentials). A list: the request's Origin is echoed when listed, with
    /// `Access-Control-Allow-Credentials: true`; other origins get no CORS headers, and their
    /// WebSocket handshakes 403.
    public var corsOrigins: [String]? = nil
    /// --allowed-host: the Host header values answered, against DNS rebinding (`HostPolicy`).
    /// nil: loopback names only when bound to a loopback address, else any. A list: exactly
    /// its names (`*` for any), whatever the address. Others get 421, WebSocket handshakes too.
    public var allowedHosts: [String]? = nil
    /// --send-timeout: seconds a WebSocket may hold bytes lws could not write while its socket
    /// takes none of them (a client that has stopped reading); then it is dropped at the TCP
    /// level. Bounds what the queue limits do not count: the message lws holds. 0: never.
    public var sendTimeout: Double = 60
    /// --max-connections: open WebSocket connections plus HTTP requests in progress; over it,
    /// HTTP 503 before the upgrade. Also capped by the open-files limit.
    public var maxConnections = 16_384
    /// Set the open-files soft limit to what maxConnections needs, lowering it too when it is
    /// higher (the limit is the process's: the serve command owns its process; a library user
    /// with other sockets in the process leaves this off, and the limit is then only raised).
    public var fitFileLimit = false
    /// --max-connections-per-address: open WebSockets from one client address (the peer, or
    /// with --trusted-proxy the address X-Forwarded-For names); past it an upgrade gets HTTP 503
    /// before the upgrade, as over --max-connections. 0 (the default): no limit — a load
    /// generator or a test on loopback opens thousands from 127.0.0.1, and behind a proxy that
    /// is not trusted every client is the proxy's address.
    public var maxConnectionsPerAddress = 0
    /// --trusted-proxy: reverse proxies whose X-Forwarded-For (or, with --trusted-proxy-header
    /// forwarded, Forwarded) names the client (`TrustedProxies`). Empty: none; the client is
    /// the TCP peer.
    public var trustedProxies = TrustedProxies()
    /// --ipv6-client-prefix: IPv6 clients are counted against --max-connections-per-address
    /// and take their HTTP turns at the workers by the first this many bits of their address
    /// (`IPAddress.clientGroup`): one customer usually holds a /64. 128: each address alone.
    public var ipv6ClientPrefix = 64
    /// --max-message-bytes: largest WebSocket message (after reassembly and inflation); over it,
    /// close 1009.
    public var maxMessageBytes = 1 << 20
    /// --max-body-bytes: largest HTTP request body; over it, 413.
    public var maxBodyBytes = 1 << 20
    /// --max-queued-bytes: bytes waiting to be sent to one client that does not read; over it,
    /// that client is closed (1008; dropped at the TCP level when its socket is full) and
    /// everyone else is unaffected.
    public var maxQueuedBytes = 16 << 20
    /// --max-total-queued-bytes: bytes waiting behind the first item of every client's send
    /// queue, all clients together; a push to a client with a backlog of its own that would
    /// pass it closes that client (1008), so many clients that do not read, each under
    /// maxQueuedBytes, cannot take the memory together.
    public var maxTotalQueuedBytes = 256 << 20
    /// --max-operations: operations (queries in flight and active subscriptions) per WebSocket.
    public var maxOperationsPerConnection = 500
    /// --max-waiting-operations, --max-waiting-bytes: operations waiting for a worker, and the
    /// bytes of their requests, all connections together. Past either, a new operation is
    /// refused with SERVER_BUSY (an HTTP request with 503): memory and the wait stay bounded
    /// when clients offer more than the workers can do. Past the count, an operation that is
    /// the only one of its WebSocket waiting still gets in, so a connection asking for one
    /// thing at a time is not refused because others ask for more.
    /// (cg-load at 50 connections × 100 in flight keeps up to 5,000 waiting.)
    public var maxWaitingOperations = 10_000
    public var maxWaitingBytes = 16 << 20
    /// --max-wait-ms: how long an operation may wait for a worker (the time every worker was
    /// busy while it waited, `WorkerPool.submitTimed`); one that waited longer is
    /// answered SERVER_BUSY when its turn comes, without running (0: no limit). Bounds the wait
    /// where the queue's own bounds do not: a request that waited that long has likely been
    /// given up, and running it would make everyone after it wait longer still.
    public var maxWaitMs = 5_000
    /// --max-subscriptions: active subscriptions per WebSocket.
    public var maxSubscriptionsPerConnection = 100
    /// --max-messages-per-second: messages one WebSocket may send per second; over it, close
    /// 1013 "Too many messages" (Try Again Later).
    /// (A flood guard, not a throttle: one pipelining client is answered well over 100,000
    /// times a second from the answer cache, so the default sits an order of magnitude above.)
    public var maxMessagesPerSecond = 1_000_000
    /// --poll-interval-ms: how often the watcher checks `PRAGMA data_version`.
    public var pollIntervalMs = 25
    /// --shutdown-timeout: seconds SIGINT/SIGTERM waits for in-flight operations.
    public var shutdownTimeout: Double = 10
    /// --compression: offer permessage-deflate. Off by default: lws 4.1.6's inflater asserts
    /// (aborting the process) on some compressed client messages — two clients sending 1 MB
    /// messages of `[1,1,…]` bring it down within seconds — and it applies
    /// server_no_context_takeover to the wrong direction (docs/FAULTS.md).
    public var permessageDeflate = false
    /// --no-metrics: GET /metrics answers 404 (its counts are then nobody's business).
    public var metrics = true
    /// --no-direct-writes: every frame goes through lws's WRITEABLE callback (otherwise frames
    /// for a connection with nothing else on the wire are written by the gateway at once).
    public var directWrites = true
    /// --no-epoll: the service thread waits in plain poll() over every socket, as lws does by
    /// itself, instead of epoll_wait on a set kept in step with lws's array (CServiceLock).
    public var epoll = true
    /// --send-threads: threads (the service thread included) that write one wake-up's frames
    /// when it reaches hundreds of connections, as a version fan-out does.
    public var sendThreads = GatewayOptions.defaultSendThreads
    /// From this many open WebSocket connections on (and with direct writes), the drainer
    /// thread writes answers and fan-outs while the service thread sleeps in poll(), instead of
    /// waking it (GatewayServer, "The drainer"). Below it the service thread is woken as
    /// before: poll() over few sockets returns at once (about 0.5 ms at 1,000 here,
    /// bench/tools/poll-wake.c), and a hand-off to a thread the scheduler may preempt while it
    /// holds the service lock costs more than it saves. Not a command-line flag; tests lower it.
    public var drainerMinConnections = 1000
    /// --log-level.
    public var logLevel: LogLevel = .info
    /// --fixed-response (benchmarks only): every query is answered with these bytes (a complete
    /// response object) without being parsed or executed, so a load test measures the transport
    /// alone — the floor the real answers are compared with.
    public var fixedResponse: [UInt8]? = nil

    public init() {}

    /// Whether `host` is what --host takes: an IPv4 or IPv6 address literal, or `localhost`.
    public static func isListenAddress(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// The Host policy of --host and --allowed-host.
    public var hostPolicy: HostPolicy { HostPolicy.forServer(bindHost: host, allowed: allowedHosts) }

    public static var defaultWorkers: Int {
        let n = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return max(2, Int(n))
    }

    /// 4 whatever the cores. Not min(4, cores): on 2 cores, 10,000 subscribers' fan-out reached
    /// its last one sooner with 4 than with 2 (docs/FAULTS.md, stop 39), the client reading
    /// more frames per wake-up; sends are mostly the kernel's work, not a core each.
    public static let defaultSendThreads = 4

    var effectiveWorkersPerConnection: Int {
        max(1, min(workers, maxWorkersPerConnection ?? (workers - 1)))
    }
}
