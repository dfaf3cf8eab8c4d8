import ArgumentParser
import Foundation
import Gateway
import Resolvers
import Schema
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `catalog-gateway serve`: one libwebsockets context serving GraphQL over WebSocket
/// (graphql-transport-ws and graphql-ws) and HTTP on one port.
struct ServeCommand: ParsableCommand {
    static let defaultCatalog = "demo/catalog.sqlite"
    /// The largest value a byte-limit flag takes (1 TiB).
    static let maxByteLimit = 1 << 40

    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a catalog as GraphQL over WebSocket and HTTP on one port.",
        discussion: """
            Endpoints (all on --host:--port):
              ws://HOST:PORT/graphql    WebSocket, subprotocol graphql-transport-ws
                                        (preferred when offered) or graphql-ws
                                        (subscriptions-transport-ws);
                                        permessage-deflate with --compression
              http://HOST:PORT/graphql  GraphQL over HTTP: POST application/json,
                                        or GET ?query=&variables=&operationName=
              http://HOST:PORT/healthz  200 {"status":"ok","version":N}

            Once listening it prints exactly one line on standard output (shown here
            in two):
              catalog-gateway listening on ws://HOST:PORT/graphql and
                http://HOST:PORT/graphql (catalog: PATH)
            With --port 0 the line shows the port the system picked. Logs are key=value lines on \
            standard error. SIGINT, SIGTERM and SIGHUP stop accepting, finish in-flight operations (up to \
            --shutdown-timeout), close WebSockets with 1001 and exit 0.

            Limits answer precisely: over --max-message-bytes a WebSocket is closed with 1009; over \
            --max-queued-bytes (a client that does not read) or --max-total-queued-bytes (all of \
            them together) with 1008; over \
            --max-messages-per-second with 1013 (try again later); over --max-operations or --max-subscriptions the \
            operation gets an `error` (extensions.code TOO_MANY_OPERATIONS / TOO_MANY_SUBSCRIPTIONS); \
            over --max-waiting-operations or --max-waiting-bytes (offered more work than the workers \
            do), or after waiting --max-wait-ms for a worker, an `error` or HTTP 503 with Retry-After \
            (SERVER_BUSY); \
            over --max-connections the upgrade or request gets HTTP 503 (over \
            --max-connections-per-address, the upgrade); over --max-body-bytes HTTP 413.
            """)

    @Option(name: .long, help: ArgumentHelp("Catalog SQLite file (default: demo/catalog.sqlite, created on first use). Queries only read it; at start the gateway adds its own cg_ indexes, search index and change capture unless --read-only.", valueName: "path"))
    var db: String?

    @Option(name: .long, help: "Address to bind; only this address is listened on (IPv4 or IPv6 literal, or localhost).")
    var host: String = "127.0.0.1"

    @Option(name: .long, parsing: .unconditional, help: "TCP port; 0 picks a free port (shown in the ready line).")
    var port: Int = 4000

    @Option(name: .long, parsing: .unconditional, help: "Query worker threads, each with its own SQLite connection, 1 to 1024; the default is this machine's cores, at least 2.")
    var workers: Int = GatewayOptions.defaultWorkers

    @Option(name: .long, parsing: .unconditional, help: "Workers one connection may occupy at once (default: workers - 1, at least 1), so a heavy query never blocks other clients.")
    var maxWorkersPerConnection: Int?

    @Option(name: .long, help: "Log level: error, warn, info or debug.")
    var logLevel: String = "info"

    @Option(name: .long, parsing: .unconditional, help: "Seconds a WebSocket client has to send connection_init (else close 4408).")
    var initTimeout: Double = 3

    @Option(name: .long, parsing: .unconditional, help: "Seconds of silence from a WebSocket peer before the server pings it; also the interval of graphql-ws `ka` messages.")
    var keepalive: Int = 12

    @Option(name: .long, parsing: .unconditional, help: "Seconds a ping may stay unanswered before the peer is closed as dead; also the time an HTTP request body has to arrive after its headers (else 408).")
    var keepaliveTimeout: Int = 10

    @Option(name: .long, parsing: .unconditional, help: "Seconds a WebSocket may hold a message its socket takes none of (a client that has stopped reading while it keeps sending, so the keep-alive never reaps it); then it is dropped. 0: never.")
    var sendTimeout: Double = GatewayOptions().sendTimeout

    @Option(name: .long, parsing: .unconditional, help: "Seconds an HTTP/1.1 connection may stay idle between requests before it is closed (sent as Keep-Alive: timeout=N). Keep it above the idle time of any proxy's connection pool in front (nginx: 60 s), or a request the proxy sends as the gateway closes fails (nginx answers such a POST 502).")
    var httpIdleTimeout: Int = GatewayOptions().httpIdleTimeout

    @Option(name: .long, parsing: .unconditionalSingleValue, help: ArgumentHelp("An origin browsers may call from, as the browser sends it (https://app.example.com); repeat for more. Without it any origin may read answers (Access-Control-Allow-Origin: *, no credentials). With it, a listed origin is named in Access-Control-Allow-Origin with Access-Control-Allow-Credentials: true, others get no CORS headers, and WebSocket handshakes from them get 403.", valueName: "origin"))
    var corsOrigin: [String] = []

    @Option(name: .long, parsing: .unconditionalSingleValue, help: ArgumentHelp("A name the Host header may carry, as browsers send it without the port: app.example.com, 192.168.1.5, [::1] (IPv6 in brackets); .example.com allows that domain and its subdomains, * any Host; repeat for more. Compared without ASCII case, port and one trailing dot. Requests naming another Host get 421 Misdirected Request, WebSocket handshakes too: a web page whose name is rebound to this address (DNS rebinding) cannot read the gateway. Without it, a gateway bound to a loopback address (127.x.x.x, ::1, localhost) answers only loopback names (localhost, *.localhost, 127.x.x.x, [::1]), and one bound to any other address any Host. A request without Host (HTTP/1.0) is answered. Behind a proxy that passes its own Host on, list the name clients use.", valueName: "name"))
    var allowedHost: [String] = []

    @Option(name: .long, parsing: .unconditional, help: "Open WebSockets plus HTTP requests in progress; over it, HTTP 503. The open-files soft limit is set to this plus \(GatewayServer.refusalSockets) (for the 503s) plus a reserve (64 + 4 per SQLite connection) plus \(GatewayServer.lingeringSockets) for HTTP connections lingering after their answer, within the hard limit; when the hard limit is lower, this is capped to fit. At most 10000000. Keep it near the connections you expect: every close walks libwebsockets' fd table, one entry per possible descriptor (about 20 µs of CPU per close at the default, growing with the table).")
    var maxConnections: Int = GatewayOptions().maxConnections

    @Option(name: .long, parsing: .unconditional, help: "Open WebSockets from one client address (the peer, or the address X-Forwarded-For names when the peer is a --trusted-proxy; an IPv6 client by its --ipv6-client-prefix); over it, the upgrade gets HTTP 503 with Retry-After. 0 (the default): no limit, as load generators and tests open thousands from 127.0.0.1 and, behind a proxy that is not trusted, every client is the proxy's address.")
    var maxConnectionsPerAddress: Int = GatewayOptions().maxConnectionsPerAddress

    @Option(name: .long, parsing: .unconditionalSingleValue, help: ArgumentHelp("A reverse proxy whose X-Forwarded-For (or Forwarded: --trusted-proxy-header) names the client: an IPv4 or IPv6 address, or a range with a prefix (10.0.0.0/8, fd00::/8); repeat for more. A request or WebSocket upgrade whose TCP peer is one has its client taken from X-Forwarded-For as nginx's real_ip_recursive does: from the right, past trusted addresses, the first untrusted one (an entry may carry a port, 1.2.3.4:5678 or [2001:db8::1]:443); an entry that is no address makes the peer the client. Trust the proxies only: a client inside a trusted range names its own address. The client keys the HTTP requests' turn at the workers, --max-connections-per-address and the log's client=. Without it the header is only logged.", valueName: "address[/prefix]"))
    var trustedProxy: [String] = []

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("The header a --trusted-proxy names the client in: x-forwarded-for (the default: nginx's $proxy_add_x_forwarded_for, HAProxy's option forwardfor, the cloud load balancers) or forwarded (RFC 7239, for=: HAProxy 2.8's option forwarded; lws 4.1 hands out only its first line, so the proxies must send one: behind HAProxy, http-request del-header forwarded in the frontend). Only that one is read: a proxy passes the other on as the client wrote it.", valueName: "x-forwarded-for|forwarded"))
    var trustedProxyHeader: String = ForwardingHeader.xForwardedFor.rawValue

    /// --trusted-proxy-header as read (without ASCII case), nil when it names neither header.
    var forwardingHeader: ForwardingHeader? { ForwardingHeader(rawValue: trustedProxyHeader.lowercased()) }

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("IPv6 clients are counted against --max-connections-per-address and take their HTTP turns at the workers by the first N bits of their address, 1 to 128 (the default 64: one customer usually holds a /64 and may use any address in it; 128: each address alone). IPv4 clients are one address each. The log's client= still names the address.", valueName: "N"))
    var ipv6ClientPrefix: Int = GatewayOptions().ipv6ClientPrefix

    @Option(name: .long, parsing: .unconditional, help: "Largest WebSocket message in bytes, after reassembly and decompression (over it: close 1009).")
    var maxMessageBytes: Int = GatewayOptions().maxMessageBytes

    @Option(name: .long, parsing: .unconditional, help: "Largest HTTP request body in bytes (over it: 413).")
    var maxBodyBytes: Int = GatewayOptions().maxBodyBytes

    @Option(name: .long, parsing: .unconditional, help: "Bytes queued for one client that does not read before it is closed with 1008 (dropped without it when its socket is full; a close not answered within a second is dropped too).")
    var maxQueuedBytes: Int = GatewayOptions().maxQueuedBytes

    @Option(name: .long, parsing: .unconditional, help: "Bytes queued for all clients together, behind each client's first message; a client with a backlog of its own when this is passed is closed with 1008 (or dropped, as over --max-queued-bytes).")
    var maxTotalQueuedBytes: Int = GatewayOptions().maxTotalQueuedBytes

    @Option(name: .long, parsing: .unconditional, help: "Operations (queries in flight and subscriptions) per WebSocket.")
    var maxOperations: Int = GatewayOptions().maxOperationsPerConnection

    @Option(name: .long, parsing: .unconditional, help: "Operations waiting for a worker, all connections together; past it a new operation gets an `error` / HTTP 503 with extensions.code SERVER_BUSY, unless it is the only one of its WebSocket waiting.")
    var maxWaitingOperations: Int = GatewayOptions().maxWaitingOperations

    @Option(name: .long, parsing: .unconditional, help: "Bytes of the requests (messages, HTTP bodies) waiting for a worker, all connections together; past it every new operation is refused with SERVER_BUSY (one still gets in when nothing waits).")
    var maxWaitingBytes: Int = GatewayOptions().maxWaitingBytes

    @Option(name: .long, parsing: .unconditional, help: "Milliseconds an operation may wait for a worker; one that waited longer is answered SERVER_BUSY (HTTP 503) when its turn comes, without running (0: no limit).")
    var maxWaitMs: Int = GatewayOptions().maxWaitMs

    @Option(name: .long, parsing: .unconditional, help: "Active subscriptions per WebSocket.")
    var maxSubscriptions: Int = GatewayOptions().maxSubscriptionsPerConnection

    @Option(name: .long, parsing: .unconditional, help: "Messages one WebSocket may send per second (over it: close 1013, try again later).")
    var maxMessagesPerSecond: Int = GatewayOptions().maxMessagesPerSecond

    @Option(name: .long, parsing: .unconditional, help: "Longest time between `PRAGMA data_version` checks for catalog changes (a write to the catalog's files triggers a check at once, through inotify; this interval is the fallback; 1 to 60000 ms).")
    var pollIntervalMs: Int = GatewayOptions().pollIntervalMs

    @Option(name: .long, parsing: .unconditional, help: "Seconds a stop signal (SIGINT, SIGTERM, SIGHUP) waits for in-flight operations before closing anyway; operations still running then are stopped, their answers not sent.")
    var shutdownTimeout: Double = GatewayOptions().shutdownTimeout

    @Option(name: .long, parsing: .unconditional, help: "Milliseconds a query waits for another process's write lock on the catalog before it fails with CATALOG_BUSY (rollback-journal catalogs; WAL readers never wait). The prepare at start and the change-log compaction wait as long.")
    var busyTimeoutMs: Int = Int(EngineOptions().busyTimeoutMs)

    @Flag(name: .long, inversion: .prefixedNo,
          help: "Offer permessage-deflate. Off by default: libwebsockets 4.1.6's implementation aborts the whole process on some compressed client messages (docs/FAULTS.md); offer it only to trusted clients.")
    var compression = false

    @Option(name: .long, parsing: .unconditional, help: "Threads that write a catalog-version fan-out's frames to the subscribers' sockets (the service thread included; used once a wake-up has frames for 256 connections or more), 1 to 64; the default is 4.")
    var sendThreads: Int = GatewayOptions.defaultSendThreads

    @Flag(name: .long, inversion: .prefixedNo,
          help: "Answer GET /metrics: connections, subscriptions, operations waiting and refused, clients closed for not reading, the catalog version, in Prometheus' text format. It answers whoever may reach /healthz; --no-metrics answers 404 instead.")
    var metrics = true

    @Flag(name: .long, help: "Write every WebSocket frame through libwebsockets' WRITEABLE callbacks, never directly to an idle socket, and never from the drainer thread while the service thread sleeps (for comparison; slower).")
    var noDirectWrites = false

    @Flag(name: .long, help: "Wait for socket events in plain poll() over every open socket, as libwebsockets does by itself, instead of epoll (for comparison; each wait then costs time in proportion to the connections open: 1.5–3 ms at 8,000 on a 2-core machine).")
    var noEpoll = false

    @Option(name: .long, parsing: .unconditional, help: "Megabytes of answers each worker keeps until the next commit (0: execute every query).")
    var answerCacheMb: Int = 32

    @Option(name: .long, parsing: .unconditional, help: "Megabytes of SQLite page cache per catalog connection (one per worker, one for the watcher); filled only as pages are read.")
    var pageCacheMb: Int = EngineOptions().pageCacheKiB / 1024

    @Option(name: .long, help: .hidden)
    var fixedResponse: String?

    @OptionGroup var limits: LimitOptions

    @Flag(name: .long, help: "Never write to the catalog: no cg_ indexes, search index or change capture are added (catalogChanges then uses the version-row rule).")
    var readOnly = false

    @Option(name: .long, parsing: .unconditional, help: "Keep the change log of this many latest versions (older sinceVersion values get CHANGES_EXPIRED).")
    var retainVersions: Int?

    @Option(name: .long, parsing: .unconditional, help: "Keep the change log of versions from the last this many days.")
    var retainDays: Int?

    @Option(name: .long, parsing: .unconditional, help: "Seconds between change-log compactions (with --retain-versions or --retain-days).")
    var compactionInterval: Double = 60

    func validate() throws {
        guard LogLevel(name: logLevel) != nil else {
            throw ValidationError("--log-level must be one of error, warn, info, debug")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        for origin in corsOrigin {
            // scheme://host[:port], as a browser sends Origin: no path, no wildcard.
            let parts = origin.split(separator: "/", omittingEmptySubsequences: false)
            let ok = parts.count >= 3 && parts.count <= 4 && (parts.count == 3 || parts[3].isEmpty)
                && (parts[0] == "http:" || parts[0] == "https:") && parts[1].isEmpty && !parts[2].isEmpty
                && !parts[2].contains(where: { $0 == "*" || $0 == " " })
            guard ok else {
                throw ValidationError("--cors-origin takes an origin as browsers send it, scheme://host[:port] (got \"\(origin)\"); leave it out to allow any origin")
            }
        }
        for name in allowedHost {
            if let problem = HostPolicy.problem(name) {
                throw ValidationError("--allowed-host takes a name as the Host header carries it, without the port (app.example.com, .example.com for a domain and its subdomains, 127.0.0.1, [::1], or * for any): \(problem) (got \"\(name)\")")
            }
        }
        for range in trustedProxy {
            do {
                _ = try AddressRange(range)
            } catch {
                throw ValidationError("--trusted-proxy takes an IPv4 or IPv6 address, or one with a prefix (127.0.0.1, 10.0.0.0/8, fd00::/8): \(error) (got \"\(range)\")")
            }
        }
        guard let forwardingHeader else {
            throw ValidationError("--trusted-proxy-header takes x-forwarded-for or forwarded (got \"\(trustedProxyHeader)\")")
        }
        // Without a proxy to trust nothing is read, and a configuration that names the header
        // but forgot the proxy would serve every client as its proxy's address, silently.
        guard forwardingHeader == .xForwardedFor || !trustedProxy.isEmpty else {
            throw ValidationError("--trusted-proxy-header forwarded reads the header only from a --trusted-proxy, and none is given")
        }
        guard (1...128).contains(ipv6ClientPrefix) else {
            throw ValidationError("--ipv6-client-prefix must be between 1 and 128 (got \(ipv6ClientPrefix))")
        }
        guard GatewayOptions.isListenAddress(host) else {
            throw ValidationError("--host must be an IPv4 or IPv6 address literal or localhost (got \"\(host)\")")
        }
        // Each worker is a thread with its own SQLite connection, opened before the server listens.
        guard (1...1024).contains(workers) else { throw ValidationError("--workers must be between 1 and 1024 (got \(workers))") }
        guard (1...64).contains(sendThreads) else { throw ValidationError("--send-threads must be between 1 and 64") }
        if let m = maxWorkersPerConnection, !(1...1024).contains(m) {
            throw ValidationError("--max-workers-per-connection must be between 1 and 1024 (got \(m))")
        }
        // Checked here, before anything is written (the demo catalog included).
        if let f = fixedResponse, !FileManager.default.isReadableFile(atPath: f) {
            throw ValidationError("cannot read --fixed-response \(f)")
        }
        guard (1...(1 << 16)).contains(pageCacheMb) else { throw ValidationError("--page-cache-mb must be between 1 and 65536") }
        guard (0...(1 << 20)).contains(answerCacheMb) else { throw ValidationError("--answer-cache-mb must be between 0 and 1048576") }
        if let r = retainVersions, r < 1 { throw ValidationError("--retain-versions must be at least 1") }
        if let r = retainDays, r < 1 { throw ValidationError("--retain-days must be at least 1") }
        // Limits that are summed or turned into deadlines: bounded, so that no value overflows.
        guard maxConnections <= 10_000_000 else {
            throw ValidationError("--max-connections must be between 1 and 10000000 (got \(maxConnections))")
        }
        guard (0...10_000_000).contains(maxConnectionsPerAddress) else {
            throw ValidationError("--max-connections-per-address must be between 0 and 10000000 (got \(maxConnectionsPerAddress))")
        }
        guard (0...Int(Int32.max)).contains(maxWaitMs) else {
            throw ValidationError("--max-wait-ms must be between 0 and \(Int32.max) (got \(maxWaitMs))")
        }
        guard busyTimeoutMs <= Int(Int32.max) else {
            throw ValidationError("--busy-timeout-ms must be between 1 and \(Int32.max) (got \(busyTimeoutMs))")
        }
        guard pollIntervalMs <= 60_000 else {
            throw ValidationError("--poll-interval-ms must be between 1 and 60000 (got \(pollIntervalMs))")
        }
        // Seconds: finite, and at most a day (NaN and infinity would trap where they become
        // milliseconds; a timeout of years is a typo).
        let day = 86_400.0
        for (name, v, zero) in [("--init-timeout", initTimeout, false), ("--shutdown-timeout", shutdownTimeout, true),
                                ("--compaction-interval", compactionInterval, false),
                                ("--keepalive", Double(keepalive), false), ("--keepalive-timeout", Double(keepaliveTimeout), false),
                                ("--send-timeout", sendTimeout, true), ("--http-idle-timeout", Double(httpIdleTimeout), false)]
        where !(v.isFinite && (zero ? v >= 0 : v > 0) && v <= day) {
            let got = v.isFinite && v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
            throw ValidationError("\(name) must be \(zero ? "between 0 and" : "more than 0 and at most") \(Int(day)) seconds (got \(got))")
        }
        // Byte limits: at most 1 TiB, so that the sums and multiples made of them cannot
        // overflow (--max-body-bytes 2^63 - 1 crashed the first early HTTP answer).
        for (name, v) in [("--max-message-bytes", maxMessageBytes), ("--max-body-bytes", maxBodyBytes),
                          ("--max-queued-bytes", maxQueuedBytes), ("--max-total-queued-bytes", maxTotalQueuedBytes),
                          ("--max-waiting-bytes", maxWaitingBytes)]
        where v > Self.maxByteLimit {
            throw ValidationError("\(name) must be at most \(Self.maxByteLimit) (1 TiB; got \(v))")
        }
        for (name, v) in [("--max-connections", maxConnections), ("--max-message-bytes", maxMessageBytes),
                          ("--max-body-bytes", maxBodyBytes), ("--max-queued-bytes", maxQueuedBytes),
                          ("--max-total-queued-bytes", maxTotalQueuedBytes),
                          ("--max-operations", maxOperations), ("--max-subscriptions", maxSubscriptions),
                          ("--max-waiting-operations", maxWaitingOperations), ("--max-waiting-bytes", maxWaitingBytes),
                          ("--max-messages-per-second", maxMessagesPerSecond), ("--poll-interval-ms", pollIntervalMs),
                          ("--busy-timeout-ms", busyTimeoutMs)] where v < 1 {
            throw ValidationError("\(name) must be at least 1")
        }
    }

    func run() throws {
        let path = db ?? Self.defaultCatalog
        let setupLogger = Logger(level: LogLevel(name: logLevel) ?? .info)
        if db == nil { ServeSetup.ensureDemoCatalog(at: path, logger: setupLogger) }
        if let reason = Database.missingFileReason(path) {
            if db == nil {
                fail("no catalog at \(path). Create the demo catalog with `catalog-gateway demo-db --out \(path)` (or `make run`), or pass --db PATH.")
            }
            fail("\(path): \(reason == "no such file" ? "catalog not found" : reason)")
        }

        var o = GatewayOptions()
        o.host = host
        o.port = port
        o.workers = workers
        o.maxWorkersPerConnection = maxWorkersPerConnection
        o.logLevel = LogLevel(name: logLevel) ?? .info
        o.initTimeout = initTimeout
        o.keepAliveInterval = keepalive
        o.keepAliveTimeout = keepaliveTimeout
        o.sendTimeout = sendTimeout
        o.httpIdleTimeout = httpIdleTimeout
        o.corsOrigins = corsOrigin.isEmpty ? nil : corsOrigin
        o.allowedHosts = allowedHost.isEmpty ? nil : allowedHost
        o.maxConnections = maxConnections
        o.maxConnectionsPerAddress = maxConnectionsPerAddress
        o.trustedProxies = TrustedProxies(trustedProxy.compactMap { try? AddressRange($0) },
                                          header: forwardingHeader ?? .xForwardedFor)
        o.ipv6ClientPrefix = ipv6ClientPrefix
        o.fitFileLimit = true
        o.maxMessageBytes = maxMessageBytes
        o.maxBodyBytes = maxBodyBytes
        o.maxQueuedBytes = maxQueuedBytes
        o.maxTotalQueuedBytes = maxTotalQueuedBytes
        o.maxOperationsPerConnection = maxOperations
        o.maxSubscriptionsPerConnection = maxSubscriptions
        o.maxWaitingOperations = maxWaitingOperations
        o.maxWaitingBytes = maxWaitingBytes
        o.maxWaitMs = maxWaitMs
        o.maxMessagesPerSecond = maxMessagesPerSecond
        o.pollIntervalMs = pollIntervalMs
        o.shutdownTimeout = shutdownTimeout
        o.permessageDeflate = compression
        o.sendThreads = sendThreads
        o.directWrites = !noDirectWrites
        o.epoll = !noEpoll
        o.metrics = metrics
        // Benchmarks only (hidden): answer every query with this file's JSON, unexecuted.
        if let fixedResponse {
            guard let data = FileManager.default.contents(atPath: fixedResponse) else { fail("cannot read --fixed-response \(fixedResponse)") }
            var bytes = [UInt8](data)
            while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 { bytes.removeLast() }
            o.fixedResponse = bytes
        }

        // Signals are taken by one thread with sigwait; every thread started from here on
        // inherits the blocked mask, so no signal handler ever runs inside lws or SQLite. The
        // thread starts before the catalog is prepared: a stop during a long prepare ends it.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        // The terminal it ran in closed: a graceful stop as for SIGTERM, not a silent kill.
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
        let stop = StopRequest()
        Self.takeSignals(set, stop: stop, logger: setupLogger)

        // An address that cannot be listened on is told before the catalog is touched (prepare
        // writes the gateway's cg_ objects; the server itself binds only after that).
        if let reason = GatewayServer.bindProbe(host == "localhost" ? "127.0.0.1" : host, port: port) {
            fail("could not listen on \(host):\(port): \(reason)")
        }
        let lockWaitMs = Int32(clamping: busyTimeoutMs)
        ServeSetup.prepare(path: path, readOnly: readOnly, busyTimeoutMs: lockWaitMs, logger: setupLogger, stopped: stop.isRequested)
        if stop.isRequested() { Self.exitStoppedBeforeListening(logger: setupLogger) }

        var engineOptions = limits.engineOptions
        engineOptions.busyTimeoutMs = lockWaitMs
        engineOptions.pageCacheKiB = pageCacheMb * 1024
        let service = QueryService(options: engineOptions)
        let server: GatewayServer
        let readOnly = self.readOnly
        do {
            server = try GatewayServer(options: o, service: service, catalogPath: path) {
                let session = try CatalogSession(path: path, service: service, readOnly: true)
                session.answerCacheLimit = answerCacheMb << 20
                session.rollsBackHotJournals = !readOnly
                session.rolledBackHotJournal = { ServeSetup.logHotJournalRolledBack(path: $0, logger: setupLogger) }
                return session
            }
            server.prepareReplacedCatalog = {
                ServeSetup.prepare(path: $0, readOnly: readOnly, busyTimeoutMs: lockWaitMs, logger: setupLogger,
                                   stopped: stop.isRequested)
                return !stop.isRequested()
            }
            try server.start()
        } catch {
            fail("\(error)")
        }
        // A stop that came while the server started: it stops now, without a ready line.
        guard stop.serve(server) else { Self.exitAfterStop(of: server, compaction: nil) }
        let hub = server.hub
        let compaction = ServeSetup.startCompaction(path: path, keepVersions: retainVersions, keepDays: retainDays,
                                                    interval: compactionInterval, busyTimeoutMs: lockWaitMs,
                                                    logger: setupLogger, served: { hub.servedFileIdentity }, stopped: stop.isRequested)
        // The ready line promises a working /healthz: wait (bounded) until the watcher has read
        // the catalog version once, or failed to (then /healthz says why, with 503).
        let readyBy = Date().addingTimeInterval(10)
        while Date() < readyBy && !stop.isRequested() {
            let s = server.hub.status
            if s.version != nil || s.error != nil { break }
            usleep(2_000)
        }
        // Stopped while waiting for the first version: no ready line for a server going away.
        if stop.isRequested() { Self.exitAfterStop(of: server, compaction: compaction) }
        let shown = host.contains(":") ? "[\(host)]" : host
        let line = "catalog-gateway listening on ws://\(shown):\(server.port)/graphql and http://\(shown):\(server.port)/graphql (catalog: \(path))\n"
        if let error = writeAll(1, Array(line.utf8)) {
            // Nobody reads standard output (closed, or a pipe whose reader is gone): serve anyway,
            // but say so where someone may look.
            server.logger.warn("ready_line_unwritten", ["error": String(cString: strerror(error))])
        }
        server.logger.info("listening", ["host": host, "port": String(server.port), "catalog": path,
                                         "workers": String(workers), "max_connections": String(server.maxConnections),
                                         "trusted_proxies": o.trustedProxies.isEmpty ? "-" : o.trustedProxies.ranges.map(\.description).joined(separator: ","),
                                         "trusted_proxy_header": o.trustedProxies.header.rawValue,
                                         "ipv6_client_prefix": String(o.ipv6ClientPrefix),
                                         "version": BuildInfo.version, "libraries": BuildInfo.libraries])

        Self.exitAfterStop(of: server, compaction: compaction)
    }

    /// Waits for the server's graceful stop and for the compaction pass running, if one is
    /// (the stop signal stops it), then exits 0 with the log written.
    private static func exitAfterStop(of server: GatewayServer, compaction: Compaction?) -> Never {
        server.wait()
        compaction?.finish()
        Logger.flush()
        Glibc.exit(0)
    }

    /// Starts the thread that takes the stop signals in `set` (blocked in every thread): the
    /// first asks for a graceful stop, a second exits at once.
    private static func takeSignals(_ set: sigset_t, stop: StopRequest, logger: Logger) {
        let signals = Transfer(set)
        let t = Thread {
            var s = signals.value
            var count = 0
            while true {
                var sig: Int32 = 0
                if sigwait(&s, &sig) != 0 { continue }
                count += 1
                let name = sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM"
                if count == 1 {
                    logger.info("signal", ["signal": name, "action": "graceful shutdown"])
                    stop.request()
                } else {
                    logger.warn("signal", ["signal": name, "action": "exit now"])
                    // _exit, not exit: exit's handlers and static destructors would run while
                    // the service thread and workers still run, and crashed the process
                    // (SIGILL in libdispatch) instead of exiting 1.
                    Logger.flush(seconds: 0.2)
                    Glibc._exit(1)
                }
            }
        }
        t.name = "signals"
        t.start()
    }

    /// A stop signal came while the catalog was prepared, before the server listened: the
    /// prepare was stopped and rolled back (the file is as it was), and there is nothing to
    /// shut down gracefully.
    private static func exitStoppedBeforeListening(logger: Logger) -> Never {
        logger.info("stopped", ["reason": "stop signal before listening"])
        Logger.flush()
        Glibc.exit(0)
    }
}

/// The first stop signal, acted on by whatever runs when it comes: the catalog's prepare before
/// the server listens (it asks `isRequested`), the server once it is handed over (`serve`).
private final class StopRequest: Sendable {
    private let state = Mutex<(requested: Bool, server: GatewayServer?)>((false, nil))

    @Sendable func isRequested() -> Bool { state.withLock { $0.requested } }

    func request() {
        let server = state.withLock { s -> GatewayServer? in
            s.requested = true
            return s.server
        }
        server?.stop()
    }

    /// Hands the started server over; false (and the server asked to stop) when a stop was
    /// requested before.
    func serve(_ server: GatewayServer) -> Bool {
        let requested = state.withLock { s -> Bool in
            s.server = server
            return s.requested
        }
        if requested { server.stop() }
        return !requested
    }
}

/// Hands a value to another thread (sigset_t is a plain C struct).
private struct Transfer<T>: @unchecked Sendable {
    let value: T
    init(_ v: T) { value = v }
}
