import CServiceLock
import CWebSockets
import Foundation
import Resolvers
import Schema
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// MARK: - C entry points

/// The one lws callback for every protocol. It runs on the service thread only and reaches the
/// server through the context's user pointer; per-connection state is found by the id stored
/// in the session's user space.
private func gatewayCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ len: Int
) -> Int32 {
    guard let wsi, let ctx = lws_get_context(wsi), let raw = lws_context_user(ctx) else { return 0 }
    let server = Unmanaged<GatewayServer>.fromOpaque(raw).takeUnretainedValue()
    return server.handle(wsi, reason, user, input, len)
}

private struct LWSLogState {
    var logger: Logger? = nil
    var last = ""
    var repeats = 0
    var since: UInt64 = 0
}
private let lwsLog = Mutex(LWSLogState())

/// lws's own log lines, routed into the structured log. A line repeated within a second is
/// counted, not printed again (a failing accept must not flood the log).
private func lwsLogEmit(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    var text = String(cString: line)
    while text.last == "\n" || text.last == "\r" { text.removeLast() }
    // lws prefixes a timestamp and level tag; keep the message after "]: " when present.
    if let r = text.range(of: "]: ") { text = String(text[r.upperBound...]) }
    let l: LogLevel = level & Int32(LLL_ERR) != 0 ? .error : level & Int32(LLL_WARN) != 0 ? .warn : .debug
    let now = monotonicMs()
    let (logger, repeated): (Logger?, Int) = lwsLog.withLock { st in
        if text == st.last && now &- st.since < 1000 {
            st.repeats += 1
            return (nil, 0)
        }
        let r = st.repeats
        st.last = text
        st.repeats = 0
        st.since = now
        return (st.logger, r)
    }
    guard let logger else { return }
    if repeated > 0 { logger.log(l, "lws", ["msg": "(previous message repeated \(repeated) times)"]) }
    logger.log(l, "lws", ["msg": text])
}

public struct GatewayError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ d: String) { description = d }
}

/// The tick's lws callback (a plain C function): finds the server beside the sul.
private func gatewayTick(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let raw = cg_tick_owner(sul) else { return }
    Unmanaged<GatewayServer>.fromOpaque(raw).takeUnretainedValue().tick()
}

// MARK: - Connections (service thread only)

final class WSConnection {
    let id: UInt64
    let wsi: OpaquePointer
    let proto: WireProtocol
    /// The subprotocol's state machine (TransportWSStateMachine or LegacyWSStateMachine).
    var machine: any WSProtocolMachine
    let outbox: Outbox
    var rx: [UInt8] = []
    /// A large message is being decoded on the decode queue (`GatewayServer.offloadDecodeBytes`):
    /// reading is paused, and whatever complete messages lws still hands over wait in `held`
    /// until its result, put in `decoded` there, has been applied on the service thread.
    var decoding = false
    var held: [[UInt8]] = []
    var heldBytes = 0
    /// Made on the first large message (an idle connection costs nothing for it).
    var decoded: DecodedSlot? = nil
    var handles: [UInt64: OperationHandle] = [:]
    /// The size of the message being applied (what an operation it starts weighs against
    /// --max-waiting-bytes), and of the one on the decode queue.
    var messageBytes = 0
    var decodingBytes = 0
    var rateWindowStart: UInt64 = 0
    var rateCount = 0
    var pendingClose: (code: UInt16, reason: String, afterFlush: Bool)? = nil
    var closeCode: UInt16? = nil
    var closeReason = ""
    var closedBy = "network"
    /// closeNow ran, or lws began closing on its own (WS_SERVER_DROP_PROTOCOL): nothing more is
    /// written; later callbacks return 0.
    var closing = false
    /// The peer sent a close frame: lws answers it; nothing more may be written.
    var peerClosing = false
    /// Frames may be written to the socket directly (`collectDirect`): a plain TCP connection
    /// of its own — not TLS, not a stream multiplexed over HTTP/2.
    var directCapable = false
    /// With permessage-deflate: no message handed to lws is still being compressed or drained.
    /// lws calls WRITEABLE only once its extension has drained, so the callback sets it; each
    /// compressed lws_write clears it (and asks for one more callback).
    var deflateQuiet = true
    /// permessage-deflate is in use: one frame per WRITEABLE (the extension may still be
    /// draining the previous message).
    var compressed = false
    /// The last frame handed to lws_write on a compressed connection. permessage-deflate does
    /// not copy its input: when a message deflates to more than one fragment, zlib keeps
    /// reading this buffer while lws drains the rest from later POLLOUT events, which all come
    /// before the next WRITEABLE callback. So it lives until the next frame is written.
    var deflateInput: [UInt8] = []
    let peer: String
    /// The client's address: the peer, or with --trusted-proxy the one X-Forwarded-For names
    /// (`TrustedProxies.client`). Logged.
    let client: String
    /// What it is counted under against --max-connections-per-address: the client, or for IPv6
    /// its --ipv6-client-prefix (`IPAddress.clientGroup`).
    let clientGroup: String
    let openedAt = monotonicMs()
    /// The state machine's timer (`WSAction.setTimer`), as a monotonic deadline in ms; 0: none.
    /// `GatewayServer.tick` fires it.
    var timerDeadline: UInt64 = 0
    /// `tick` asked lws for this connection's LWS_CALLBACK_TIMER (cleared by a new setTimer or
    /// cancelTimer meanwhile, so a cancelled timer never fires late).
    var timerFiring = false
    /// Keep-alive: when the peer was last heard from (any frame, pongs included), and when a
    /// ping was asked for and not yet answered (0: none outstanding).
    var lastHeard = monotonicMs()
    /// The socket's unsent bytes when the keep-alive last looked (`stillTakingBytes`).
    var keepaliveQueue: Int32 = 0
    var pingRequestedAt: UInt64 = 0
    /// --send-timeout: since when bytes have waited to be written to this socket while its
    /// kernel send queue stayed at `stalledQueue` bytes (0: not stalled).
    var stalledSince: UInt64 = 0
    var stalledQueue: Int32 = -1
    /// Its place in `GatewayServer.tickOrder`, the order in which `tick` visits connections.
    var tickSlot = -1
    var pingDue = false
    var messagesIn = 0
    var messagesOut = 0
    /// Messages written directly (`collectDirect`), and direct writes whose bytes the socket
    /// did not take in full (handed to lws).
    var messagesDirect = 0
    var writesDeferred = 0
    /// The drain round (`GatewayServer.drainRound`) that last looked at this connection.
    var drainRound: UInt64 = 0
    /// Messages decoded on the decode queue (`decoding`).
    var messagesDecodedAside = 0

    init(id: UInt64, wsi: OpaquePointer, proto: WireProtocol, configuration: WSMachineConfiguration, queueLimit: Int,
         budget: QueueBudget, peer: String, client: String, clientGroup: String) {
        self.id = id; self.wsi = wsi; self.proto = proto; self.peer = peer; self.client = client; self.clientGroup = clientGroup
        switch proto {
        case .transport: machine = TransportWSStateMachine(configuration: configuration)
        case .legacy: machine = LegacyWSStateMachine(configuration: configuration)
        }
        outbox = Outbox(connectionID: id, limit: queueLimit, budget: budget)
    }

    /// Bumped by every call that may change the machine's live operations, so `isActive` can
    /// remember its last positive answer: a fan-out asks once per connection per version, for
    /// the same (id, serial), and the machine's answer (a String-keyed lookup through an
    /// existential) is then reused until something changed.
    private var machineEpoch: UInt64 = 1
    private var activeCache: (epoch: UInt64, serial: UInt64, id: String) = (0, 0, "")

    func opened() -> [WSAction] { machineEpoch &+= 1; return machine.opened() }
    func receive(_ text: UnsafeRawBufferPointer) -> [WSAction] { machineEpoch &+= 1; return machine.receive(text) }
    func receive(decoded m: DecodedClientMessage) -> [WSAction] { machineEpoch &+= 1; return machine.receive(decoded: m) }
    func timerFired() -> [WSAction] { machineEpoch &+= 1; return machine.timerFired() }
    func isActive(id: String, serial: UInt64) -> Bool {
        if activeCache.epoch == machineEpoch && activeCache.serial == serial && activeCache.id == id { return true }
        guard machine.isActive(id: id, serial: serial) else { return false }
        activeCache = (machineEpoch, serial, id)
        return true
    }
    func finished(id: String, serial: UInt64) { machineEpoch &+= 1; machine.finished(id: id, serial: serial) }
    func beginShutdown() { machineEpoch &+= 1; machine.beginShutdown() }
    func heard() {
        lastHeard = monotonicMs()
        pingRequestedAt = 0
    }
    /// No query is in flight (live subscriptions do not count).
    var idle: Bool { handles.values.allSatisfy { $0.streaming } }
}

final class HTTPExchange: @unchecked Sendable {
    let id: UInt64
    let wsi: OpaquePointer
    let method: HTTPMethod
    let path: String
    let startedAt = monotonicMs()
    let peer: String
    var format: ResponseFormat = .json
    var body: [UInt8] = []
    var expectsBody = false
    /// Content-Length, and the body bytes received so far (for the body timeout's message).
    var announcedLength = 0
    var received = 0
    /// The answer decided before the body was read; sent once the body has been consumed.
    var deferred: HTTPResponse? = nil
    var response: HTTPResponse? = nil
    var headersSent = false
    var offset = 0
    var done = false
    /// The request (with its body) has been read: a later BODY_COMPLETION is lws offering
    /// bytes that came after it (see `httpBodyComplete`).
    var complete = false
    /// The client sent another request before this one was answered (HTTP/1.1 pipelining):
    /// this answer closes the connection (see `httpRequest`, `httpBodyComplete`).
    var pipelined = false
    /// The client sent `Expect: 100-continue` and waits for `100 Continue` before the body.
    var expectsContinue = false
    /// The request's If-None-Match (a GET's answer may then be 304).
    var ifNoneMatch: String? = nil
    /// The request's Origin (CORS, with --cors-origin) and X-Forwarded-For (logged, and read
    /// with --trusted-proxy).
    var origin: String? = nil
    var forwardedFor: String? = nil
    /// The client's address: the peer, or the one X-Forwarded-For names when the peer is a
    /// trusted proxy (`TrustedProxies.client`). Logged.
    var client: String
    /// What keys its worker lane (`GatewayServer.httpLane`): the client, or for IPv6 its
    /// --ipv6-client-prefix (`IPAddress.clientGroup`).
    var clientGroup: String
    /// An HTTP/1.0 request asking to keep the connection (lws keeps it): the answer says it
    /// does (RFC 9112 C.2.2), or the client closes it.
    var keepAlive10 = false
    let handle = OperationHandle()
    /// The worker pool lane of its address, once submitted (`GatewayServer.httpLane`).
    var lane: UInt64? = nil
    /// Set by the worker, taken by the service thread.
    let result = Mutex<HTTPResponse?>(nil)

    /// The worker's answer, if it is ready (then no longer held here).
    func takeResult() -> HTTPResponse? {
        result.withLock { r -> HTTPResponse? in
            let v = r
            r = nil
            return v
        }
    }

    init(id: UInt64, wsi: OpaquePointer, method: HTTPMethod, path: String, peer: String) {
        self.id = id; self.wsi = wsi; self.method = method; self.path = path; self.peer = peer; self.client = peer
        self.clientGroup = peer
    }
}

// MARK: - The server

/// One libwebsockets context serving graphql-transport-ws, graphql-ws and GraphQL over HTTP on
/// one port. lws runs on a single service thread; queries run on the worker pool; the watcher
/// thread feeds subscriptions. Other threads only push into per-connection outboxes and wake
/// the service thread through `lws_cancel_service`.
public final class GatewayServer: @unchecked Sendable {
    public let options: GatewayOptions
    public let service: QueryService
    public let catalogPath: String
    public let logger: Logger
    public let hub: SubscriptionHub
    let pool: WorkerPool<CatalogSession>
    let waker = Waker()
    /// Held by the service thread except while it sleeps in poll() (CServiceLock); the drainer
    /// takes it to write frames in the service thread's place.
    private let serviceLock: OpaquePointer = cg_service_lock_create()
    private let drainerStop = Atomic<Bool>(false)
    private let drainerDone = DispatchSemaphore(value: 0)
    private var drainerRunning = false
    /// Set (under the service lock) when a drain off the service thread asked lws for something
    /// — a WRITEABLE callback, a timer, a timeout, bytes to keep — that only takes effect once the
    /// service thread polls again.
    private var servicePassNeeded = false
    /// Operations refused because too many wait for a worker (`WorkerPool.Admission`) or one
    /// waited too long (--max-wait-ms), and when that was last logged.
    private let refusals = Mutex<(count: Int, loggedAt: UInt64)>((0, 0))
    private var watcherSession: Transfer<CatalogSession>?
    /// Runs on a catalog file that replaced the served one, before it is opened (set before
    /// `start`; `serve` adds the gateway's indexes and change capture unless --read-only).
    /// Returns false when a stop cut it short, and the file is not taken up.
    public var prepareReplacedCatalog: (@Sendable (String) -> Bool)? = nil

    private var context: OpaquePointer? = nil
    /// The Date header's text, made once a second (service thread).
    private let httpDate = HTTPDate()
    /// The Host header values answered (--host, --allowed-host).
    private let hostPolicy: HostPolicy
    /// lws's per-request header buffer. Request line plus headers beyond it: lws 4.1 closes the
    /// connection without an answer, and no callback runs before it shuts the socket's write
    /// side (docs/FAULTS.md, "Requests lws cannot parse").
    static let headerBufferBytes = 16384
    /// Most header buffers lent at once (`max_http_header_pool`).
    static let headerPoolLimit = 4096
    static let rawFallbackProtocol = "catalog-gateway raw"
    public private(set) var port = 0
    public private(set) var maxConnections: Int
    /// Accepted sockets above which new TCP connections are closed at once (below the
    /// open-files limit, so accept never fails and the service loop never spins on EMFILE).
    public private(set) var socketCap = Int.max
    private var openSockets = 0
    private var refusedSockets = 0
    // For /metrics (service thread, or the drainer holding the service lock).
    private var refusedSocketsTotal = 0
    private var webSocketsOpened = 0
    /// HTTP responses written, by status (`httpWriteable`).
    private var httpResponses: [Int: Int] = [:]
    private let startTime = Double(time(nil))
    /// Taken by the workers: how long queries ran, and how long operations waited for one.
    private let webSocketDurations = LatencyHistogram()
    private let httpDurations = LatencyHistogram()
    private let waits = LatencyHistogram()
    private var refusedLoggedAt: UInt64 = 0

    // lws keeps pointers to these for the life of the context.
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let extensions: UnsafeMutablePointer<lws_extension>
    private let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>
    private let tickBox: UnsafeMutablePointer<cg_tick>
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    private var legacyName: UnsafeMutablePointer<CChar>? = nil
    private var legacyNameHidden = false

    // Service-thread state.
    private var wsConnections: [UInt64: WSConnection] = [:]
    /// The open WebSockets in the order `tick` visits them (`WSConnection.tickSlot`; removal
    /// moves the last one into the gap), and where its next visit starts.
    private var tickOrder: [WSConnection] = []
    private var tickCursor = 0
    /// The service thread waits through epoll (not --no-epoll, and epoll was available): a
    /// wake-up costs what is ready, not every socket.
    private var waitsThroughEpoll = false
    private var httpExchanges: [UInt64: HTTPExchange] = [:]
    private var nextID: UInt64 = 1
    /// Per client address (or IPv6 prefix) with HTTP requests submitted and not yet released:
    /// their lane and how many (`httpLane`).
    private var httpPeers: [String: (lane: UInt64, requests: Int)] = [:]
    /// Open WebSockets per client address or IPv6 prefix (`WSConnection.clientGroup`), for
    /// --max-connections-per-address: one more at ESTABLISHED, one fewer at CLOSED, the two
    /// callbacks that add a connection to `wsConnections` and remove it (lws runs the upgrade's
    /// confirmation, the handshake and ESTABLISHED in one pass, so no upgrade passes the check
    /// between them; a handshake that fails before ESTABLISHED was never counted).
    private var wsPerClient: [String: Int] = [:]
    private var stopping = false
    private var stopDeadline: UInt64 = 0
    private let machineConfiguration: WSMachineConfiguration
    /// --send-threads serial queues that write chunks of a large wake-up's direct writes.
    private let sendQueues: [DispatchQueue]
    /// Decodes large messages (`offloadDecodeBytes`), one at a time.
    private let decodeQueue = DispatchQueue(label: "catalog-gateway.decode")

    private let stopRequested = Atomic<Bool>(false)
    private let slowClientsClosedCount = Atomic<Int>(0)
    /// Clients closed because they did not read (--max-queued-bytes, --max-total-queued-bytes).
    public var slowClientsClosed: Int { slowClientsClosedCount.load(ordering: .relaxed) }
    /// What all WebSockets' send queues together may hold behind their first items.
    public let queueBudget: QueueBudget
    private let stoppedSemaphore = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    /// Opens one CatalogSession per worker plus one for the watcher (so a missing or broken
    /// catalog fails here, before anything listens).
    public init(options: GatewayOptions, service: QueryService, catalogPath: String,
                openSession: () throws -> CatalogSession) throws {
        self.options = options
        hostPolicy = options.hostPolicy
        queueBudget = QueueBudget(limit: options.maxTotalQueuedBytes)
        self.service = service
        self.catalogPath = catalogPath
        self.logger = Logger(level: options.logLevel)
        self.hub = SubscriptionHub(waker: waker, logger: logger)
        var sessions: [CatalogSession] = []
        for _ in 0..<max(1, options.workers) {
            let session = try openSession()
            // Past --shutdown-timeout a running query is stopped as the server stopping, not as
            // cancelled by its client (which is still connected, and told with a 1001 or a 503).
            let hub = self.hub
            session.stopsWhen = { hub.isAbandoned }
            sessions.append(session)
        }
        watcherSession = Transfer(value: try openSession())
        let hub = self.hub
        // A WebSocket's lane holds at most --max-operations jobs: an operation the client
        // completes before it starts leaves its job queued (it returns at once when its turn
        // comes) while its id is free again, so the protocol's count alone did not bound it.
        pool = WorkerPool(sessions: sessions, perLaneLimit: options.effectiveWorkersPerConnection,
                          maxWaiting: options.maxWaitingOperations, maxWaitingBytes: options.maxWaitingBytes,
                          maxWaitingPerLane: options.maxOperationsPerConnection,
                          beforeJob: { hub.follow($0) })
        machineConfiguration = WSMachineConfiguration(
            initTimeoutMs: max(1, Int(options.initTimeout * 1000)),
            keepAliveMs: max(1, options.keepAliveInterval) * 1000,
            maxOperations: options.maxOperationsPerConnection)
        maxConnections = options.maxConnections
        sendQueues = options.sendThreads > 1
            ? (0..<options.sendThreads).map { DispatchQueue(label: "catalog-gateway.send-\($0)") } : []

        protocols = .allocate(capacity: 5)
        extensions = .allocate(capacity: 2)
        retryPolicy = .allocate(capacity: 1)
        tickBox = .allocate(capacity: 1)
        tickBox.initialize(to: cg_tick())
    }

    deinit {
        tickBox.deallocate()
        protocols.deallocate()
        extensions.deallocate()
        retryPolicy.deallocate()
        for s in cStrings { free(s) }
        cg_service_lock_destroy(serviceLock)
    }

    private func cString(_ s: String) -> UnsafeMutablePointer<CChar> {
        let p = strdup(s)!
        cStrings.append(p)
        return p
    }

    /// File descriptors kept beside the sockets: SQLite files, the listen socket, lws's pipes,
    /// the watcher's inotify descriptor and stdio.
    static func reservedFiles(workers: Int) -> Int { 64 + 4 * (max(1, workers) + 1) }

    /// Sockets accepted above --max-connections, so that those clients still get an HTTP 503.
    public static let refusalSockets = 32
    /// HTTP connections lingering after their close at most (`LingeringCloses`).
    public static let lingeringSockets = LingeringCloses.defaultLimit

    /// The open-files soft limit that --max-connections needs: its sockets, the refusal margin,
    /// the reserve and, unless `least`, the HTTP connections that may linger after their close.
    static func neededFileLimit(maxConnections: Int, workers: Int, least: Bool = false) -> Int {
        maxConnections + refusalSockets + reservedFiles(workers: workers) + (least ? 0 : lingeringSockets)
    }

    /// Sets the open-files soft limit to what --max-connections needs, within the hard limit
    /// (only ever raising it unless `options.fitFileLimit`), and caps --max-connections below
    /// the limit it got. lws sizes its descriptor table from this limit, and Debian's lws 4.1
    /// walks that whole table on every close (`sanity_assert_no_sockfd_traces`; an accept
    /// indexes it by descriptor): raised to a hard limit of 1,048,576, as it used to be, that
    /// is 8 MB read per close (docs/FAULTS.md, "The open-files limit").
    private func fitFileLimit() throws {
        var rl = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &rl) == 0 else { return }
        let needed = rlim_t(Self.neededFileLimit(maxConnections: max(1, maxConnections), workers: options.workers))
        let wanted = min(rl.rlim_max, needed)
        if rl.rlim_cur < wanted || (options.fitFileLimit && rl.rlim_cur > wanted) {
            var fitted = rl
            fitted.rlim_cur = wanted
            if setrlimit(resource, &fitted) == 0 { rl = fitted }
        }
        // A limit that leaves no socket for a client: lws then fails every accept, in a loop at
        // 100% CPU with every client hanging (`ulimit -n 10` in an audit), or, lower still, opens
        // no listening socket at all.
        let least = Self.neededFileLimit(maxConnections: 1, workers: options.workers, least: true)
        if rl.rlim_cur < rlim_t(least) {
            throw GatewayError("the open-files limit is \(rl.rlim_cur) (hard limit \(rl.rlim_max)), below the \(least) "
                + "this server needs with \(options.workers) workers to serve one connection; raise it (ulimit -n) or use fewer --workers")
        }
        // Between the connection limit and the socket cap, clients still get an HTTP 503.
        socketCap = max(8, Int(min(rl.rlim_cur, rlim_t(Int32.max))) - Self.reservedFiles(workers: options.workers))
        let cap = max(1, socketCap - Self.refusalSockets)
        if maxConnections > cap {
            logger.warn("max_connections_capped", ["requested": String(maxConnections), "cap": String(cap),
                                                   "nofile": String(rl.rlim_cur)])
            maxConnections = cap
        }
        // Lingering closes get what the limit leaves above that (none under a tight hard limit),
        // taken from the sockets lws may hold.
        lingering.limit = min(Self.lingeringSockets, max(0, cap - maxConnections))
        socketCap -= lingering.limit
    }

    /// Binds and listens; after it returns `port` is the real port. Starts the service thread.
    public func start() throws {
        try fitFileLimit()
        lwsLog.withLock { $0.logger = logger }
        var mask = Int32(LLL_ERR)
        if options.logLevel >= .warn { mask |= Int32(LLL_WARN) }
        if options.logLevel >= .debug { mask |= Int32(LLL_NOTICE) }
        lws_set_log_level(mask, lwsLogEmit)

        let pss = Int(MemoryLayout<UInt64>.size)
        protocols[0] = lws_protocols(name: cString("http"), callback: gatewayCallback, per_session_data_size: pss,
                                     rx_buffer_size: 0, id: 0, user: nil, tx_packet_size: 0)
        protocols[1] = lws_protocols(name: cString(WireProtocol.transport.rawValue), callback: gatewayCallback,
                                     per_session_data_size: pss, rx_buffer_size: 16384, id: 1, user: nil, tx_packet_size: 0)
        let legacy = cString(WireProtocol.legacy.rawValue)
        legacyName = legacy
        protocols[2] = lws_protocols(name: legacy, callback: gatewayCallback,
                                     per_session_data_size: pss, rx_buffer_size: 16384, id: 2, user: nil, tx_packet_size: 0)
        // Bytes lws cannot parse as HTTP land here (raw socket) to get our 400/501. The space in
        // the name keeps it from ever matching a token of a client's Sec-WebSocket-Protocol.
        protocols[3] = lws_protocols(name: cString(Self.rawFallbackProtocol), callback: gatewayCallback,
                                     per_session_data_size: pss, rx_buffer_size: 0, id: 3, user: nil, tx_packet_size: 0)
        protocols[4] = lws_protocols()
        extensions[0] = lws_extension(name: cString("permessage-deflate"), callback: lws_extension_callback_pm_deflate,
                                      client_offer: cString("permessage-deflate; client_max_window_bits"))
        extensions[1] = lws_extension()
        // lws's own keep-alive ("validity") is off: it re-inserts a timer per connection into a
        // sorted list at every ping and pong, O(connections) each, which with 10,000
        // connections stalled the service thread for seconds. `tick` does it instead.
        retryPolicy.pointee = lws_retry_bo_t(
            retry_ms_table: nil, retry_ms_table_count: 0, conceal_count: 0,
            secs_since_valid_ping: 0, secs_since_valid_hangup: 0, jitter_percent: 0)

        var info = lws_context_creation_info()
        var host = options.host
        if host == "localhost" { host = "127.0.0.1" }
        var v4 = in_addr()
        let isIPv4 = inet_pton(AF_INET, host, &v4) == 1
        info.port = Int32(options.port)
        if host != "" && host != "::" && host != "0.0.0.0" { info.iface = UnsafePointer(cString(host)) }
        info.protocols = UnsafePointer(protocols)
        if options.permessageDeflate { info.extensions = UnsafePointer(extensions) }
        info.options = cg_lws_option_validate_utf8()
        if isIPv4 { info.options |= cg_lws_option_disable_ipv6() }
        info.options |= cg_lws_option_fallback_to_raw()
        info.listen_accept_role = UnsafePointer(cString("raw-skt"))
        info.listen_accept_protocol = UnsafePointer(cString(Self.rawFallbackProtocol))
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.retry_and_idle_policy = UnsafePointer(retryPolicy)
        info.vhost_name = UnsafePointer(cString("default"))
        info.server_string = UnsafePointer(cString("catalog-gateway"))
        info.max_http_header_data = UInt16(Self.headerBufferBytes)
        // Header buffers are lent to connections while their headers arrive and freed once
        // nobody waits for one: a pool of 256 let 300 clients that never finish their headers
        // (slowloris) stall every new request for lws's header timeout. Under such a flood the
        // pool costs at most 4096 x 16 KiB = 64 MiB.
        info.max_http_header_pool = UInt16(min(max(1, maxConnections), Self.headerPoolLimit))
        // lws's own HTTP timeouts (header completion, each body chunk) stay above the body timeout.
        info.timeout_secs = UInt32(max(30, options.keepAliveTimeout + 5))
        info.keepalive_timeout = Int32(clamping: options.httpIdleTimeout)
        info.pt_serv_buf_size = 65536

        if let reason = Self.bindProbe(host, port: options.port) {
            throw GatewayError("could not listen on \(options.host):\(options.port): \(reason)")
        }
        guard let ctx = lws_create_context(&info) else {
            throw GatewayError("could not listen on \(options.host):\(options.port) (address in use, or not an address of this machine?)")
        }
        context = ctx
        waker.attach(ctx)
        if let vh = lws_get_vhost_by_name(ctx, "default") {
            port = Int(lws_get_vhost_listen_port(vh))
        }
        if port == 0 && options.port == 0 {
            throw GatewayError("could not listen on \(options.host):0: libwebsockets opened no listening socket (see its error above)")
        }
        if port == 0 { port = options.port }
        if let ws = watcherSession {
            let pool = self.pool
            hub.startWatcher(session: ws.value, intervalMs: options.pollIntervalMs, prepare: prepareReplacedCatalog,
                             replaced: { pool.touchAll() })
            watcherSession = nil
        }
        running.store(true, ordering: .sequentiallyConsistent)
        let box = Transfer(value: ctx)
        let t = Thread { [self] in self.serviceLoop(box.value) }
        t.name = "lws-service"
        t.stackSize = 8 << 20
        t.start()
    }

    /// Asks the server to stop (any thread, also from a signal-watching thread): stop accepting,
    /// finish in-flight operations, close WebSockets with 1001.
    public func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        waker.poke()
    }

    /// Blocks until the service thread has finished.
    public func wait() {
        guard running.load(ordering: .sequentiallyConsistent) else { return }
        stoppedSemaphore.wait()
        stoppedSemaphore.signal()
    }

    private func serviceLoop(_ ctx: OpaquePointer) {
        if options.epoll {
            waitsThroughEpoll = cg_service_lock_use_epoll(serviceLock) != 0
            if !waitsThroughEpoll { logger.warn("epoll_unavailable", ["detail": "waiting in poll() over every socket"]) }
        }
        cg_service_lock_enter(serviceLock)
        tickBox.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        scheduleTick(ctx, inMs: Self.tickMs)
        if options.directWrites { startDrainer() }
        while true {
            if lws_service(ctx, 0) < 0 { break }
            if stopRequested.load(ordering: .sequentiallyConsistent) && !stopping { beginShutdown() }
            if stopping {
                let busyHTTP = httpExchanges.values.contains { !$0.done }
                if (wsConnections.isEmpty && !busyHTTP) || monotonicMs() >= stopDeadline { break }
            }
        }
        let timedOut = stopping && monotonicMs() >= stopDeadline
        if timedOut {
            // --shutdown-timeout passed: what still runs (a query without --max-execution-ms, a
            // long change set) is stopped at SQLite's next progress check, not waited for.
            hub.abandon()
            for conn in wsConnections.values { for h in conn.handles.values { h.cancel() } }
            for ex in httpExchanges.values { ex.handle.cancel() }
            sayLastWords(ctx)
        }
        stopDrainer()
        lws_sul_cancel(&tickBox.pointee.sul)
        pool.shutdown()
        hub.stop()
        waker.detach()
        cg_service_lock_leave(serviceLock)
        lws_context_destroy(ctx)
        context = nil
        lingering.closeAll()
        logger.info("stopped", ["timed_out": timedOut ? "true" : "false", "drainer_passes": String(drainerPasses), "drainer_polls": String(servicePolls)])
        running.store(false, ordering: .sequentiallyConsistent)
        stoppedSemaphore.signal()
    }

    /// How long the clients still connected at the shutdown deadline are given to take their
    /// last words (`sayLastWords`).
    static let lastWordsMs: UInt64 = 250

    /// --shutdown-timeout passed with operations still running: every client still connected
    /// is told, instead of having its socket dropped — a WebSocket gets its 1001 close (which
    /// graphql-ws clients retry), an HTTP request not yet answered a 503 closing its connection.
    /// The loop serves them for at most `lastWordsMs`; a client that does not read by then is
    /// dropped.
    private func sayLastWords(_ ctx: OpaquePointer) {
        for conn in wsConnections.values where !conn.closing {
            closeFromWriteable(conn, CloseCode.goingAway, "Server shutting down")
        }
        var unanswered = 0
        for ex in httpExchanges.values where !ex.done && ex.response == nil && ex.deferred == nil {
            unanswered += 1
            var r = HTTPRouting.plainError(503, "The server stopped before this request was answered (--shutdown-timeout)",
                                           code: "SERVICE_UNAVAILABLE")
            r.closeConnection = true
            _ = respond(ex, r)
        }
        logger.info("shutdown_deadline", ["websockets": String(wsConnections.count), "http_unanswered": String(unanswered)])
        let until = monotonicMs() + Self.lastWordsMs
        while monotonicMs() < until && (!wsConnections.isEmpty || httpExchanges.values.contains { !$0.done }) {
            if lws_service(ctx, 0) < 0 { break }
        }
    }

    private func beginShutdown() {
        stopping = true
        stopDeadline = monotonicMs() + UInt64(max(0, options.shutdownTimeout) * 1000)
        logger.info("shutdown_started", ["websockets": String(wsConnections.count),
                                         "http_in_progress": String(httpExchanges.values.filter { !$0.done }.count)])
        for conn in wsConnections.values {
            conn.beginShutdown()
            closeWhenIdle(conn)
        }
        // Wake the loop regularly until it ends, so the deadline is noticed.
        let waker = self.waker
        let t = Thread { [self] in
            while self.running.load(ordering: .sequentiallyConsistent) {
                usleep(50_000)
                waker.poke()
            }
        }
        t.start()
    }

    // MARK: Tick

    /// The finest step of `tick`: the precision of --init-timeout, --keepalive and legacy `ka`.
    static let tickMs: UInt64 = 100
    /// The longest sleep of `tick` when nothing is due sooner.
    static let idleTickMs: UInt64 = 1000
    /// When the tick is next scheduled (monotonic ms).
    private var tickDue: UInt64 = 0
    /// Clients closed for their send queue (`closeSlowClient`), by connection id: when the tick
    /// drops the connection if lws still holds it then. Removed by `closed`.
    private var slowClientDropDue: [UInt64: UInt64] = [:]
    /// How long a slow client's close may take before it is dropped at the TCP level: lws 4.1
    /// would wait 5 s for the client's close reply (or to send the frame), which a client that
    /// does not read never gives.
    static let slowCloseGraceMs: UInt64 = 1000

    private func scheduleTick(_ ctx: OpaquePointer, inMs ms: UInt64) {
        tickDue = monotonicMs() + ms
        lws_sul_schedule(ctx, 0, &tickBox.pointee.sul, gatewayTick, lws_usec_t(ms * 1000))
    }

    /// A connection's timer or keep-alive falls due at `deadline`: brings the tick forward if it
    /// is scheduled later (never closer than `tickMs` from now).
    private func tickBy(_ deadline: UInt64) {
        guard let ctx = context else { return }
        let now = monotonicMs()
        let at = max(deadline, now + Self.tickMs)
        if at < tickDue { scheduleTick(ctx, inMs: at - now) }
    }

    /// Connections `tick` visits at least, each time: all of them up to this many.
    static let tickVisitsMin = 1024
    /// Above `tickVisitsMin`, the share of the connections one tick visits (1 / this).
    static let tickVisitSlices = 10

    /// On the service thread when something may be due: fires due protocol timers, runs the
    /// keep-alive and --send-timeout, and drops a client closed for its send queue that is
    /// still open `slowCloseGraceMs` later (`slowClientDropDue`). Up to `tickVisitsMin`
    /// connections, one pass over all of them; it then sleeps until the earliest deadline it
    /// saw, between `tickMs` and `idleTickMs`. Above, through epoll, it visits a tenth of them (`tickOrder` from
    /// `tickCursor` on) every `tickMs`, so each one is looked at once a second and deadlines are
    /// met within a second rather than `tickMs`: a pass over all 8,000 of a server's idle
    /// WebSockets held the service thread 2.3 ms (median) a few times a second, and requests
    /// that came then waited. Without epoll (--no-epoll) it keeps to whole passes, because
    /// there every wake-up costs O(connections) in the kernel (about 7 ms at 10,000 on this
    /// machine).
    fileprivate func tick() {
        guard let ctx = context else { return }
        let now = monotonicMs()
        var next = now + Self.idleTickMs
        let n = tickOrder.count
        let visits = n <= Self.tickVisitsMin || !waitsThroughEpoll
            ? n : max(Self.tickVisitsMin, (n + Self.tickVisitSlices - 1) / Self.tickVisitSlices)
        if visits < n { next = now + Self.tickMs }
        for _ in 0..<visits {
            if tickCursor >= tickOrder.count { tickCursor = 0 }
            let conn = tickOrder[tickCursor]
            tickCursor += 1
            if !conn.closing { next = min(next, visit(conn, now: now)) }
        }
        for (id, due) in slowClientDropDue {
            guard now >= due else {
                next = min(next, due)
                continue
            }
            guard let conn = wsConnections[id] else {
                slowClientDropDue[id] = nil
                continue
            }
            lws_set_timeout(conn.wsi, PENDING_TIMEOUT_USER_OK, -1)  // LWS_TO_KILL_ASYNC
            // Again at the next tick should lws set a timeout of its own (sending the close
            // frame sets the close reply's 5 s) before this one ran.
            slowClientDropDue[id] = now + Self.tickMs
            next = min(next, now + Self.tickMs)
        }
        if lingering.count > 0, lingering.service(now: now) != nil {
            next = min(next, now + Self.tickMs)
        }
        scheduleTick(ctx, inMs: max(Self.tickMs, next &- now))
    }

    /// `tick`'s look at one connection: fires its protocol timer if due, pings it or drops it
    /// for the keep-alive, and checks its send progress. Returns when it next needs a look.
    private func visit(_ conn: WSConnection, now: UInt64) -> UInt64 {
        let interval = UInt64(max(1, options.keepAliveInterval)) * 1000
        let timeout = UInt64(max(1, options.keepAliveTimeout)) * 1000
        let sendTimeout = UInt64(max(0, options.sendTimeout) * 1000)
        var next = UInt64.max
        if sendTimeout > 0, let due = checkSendProgress(conn, now: now, limit: sendTimeout) {
            next = min(next, due)
            if conn.closing { return next }
        }
        if conn.timerDeadline != 0 {
            if now >= conn.timerDeadline {
                conn.timerDeadline = 0
                conn.timerFiring = true
                // LWS_CALLBACK_TIMER on this connection at once; an immediate deadline goes to
                // the head of lws's sorted list without walking it.
                lws_set_timer_usecs(conn.wsi, 1)
            } else {
                next = min(next, conn.timerDeadline)
            }
        }
        if conn.pingRequestedAt != 0 {
            if now &- conn.pingRequestedAt >= timeout && stillTakingBytes(conn) {
                // The ping waits behind an answer the peer is still downloading (its TCP
                // acknowledges our bytes): it cannot answer yet, and is alive. A graphql-ws
                // client on a 1 MB/s link was reaped 22 s into a 22 MB change set, again and
                // again, as it resubscribed for the same set.
                conn.pingRequestedAt = now
                next = min(next, now + timeout)
            } else if now &- conn.pingRequestedAt >= timeout {
                conn.closing = true
                conn.closedBy = "keepalive"
                logger.info("keepalive_timeout", ["conn": String(conn.id), "peer": conn.peer])
                lws_set_timeout(conn.wsi, PENDING_TIMEOUT_USER_OK, -1)  // LWS_TO_KILL_ASYNC
            } else {
                next = min(next, conn.pingRequestedAt + timeout)
            }
        } else if now &- conn.lastHeard >= interval {
            conn.pingRequestedAt = now
            conn.pingDue = true
            _ = stillTakingBytes(conn)  // what it held when the ping was asked for
            lws_callback_on_writable(conn.wsi)
            next = min(next, now + timeout)
        } else {
            next = min(next, conn.lastHeard + interval)
        }
        return next
    }

    /// --send-timeout: a connection with bytes waiting to be written makes progress while its
    /// socket's kernel send queue changes (the client reads, the kernel sends, lws writes more).
    /// Full and unchanged for `limit` ms, the client has stopped reading: it is dropped at the
    /// TCP level (a close frame would wait behind the bytes it does not read). Returns when to
    /// look again.
    private func checkSendProgress(_ conn: WSConnection, now: UInt64, limit: UInt64) -> UInt64? {
        let queued = unsentBytes(conn)
        // An empty send queue is the gateway's turn to write, not a client that does not read.
        guard queued > 0 else {
            conn.stalledSince = 0
            return nil
        }
        if conn.stalledSince == 0 || queued != conn.stalledQueue {
            conn.stalledSince = now
            conn.stalledQueue = queued
            return now + limit
        }
        guard now &- conn.stalledSince >= limit else { return conn.stalledSince + limit }
        conn.closing = true
        conn.closedBy = "send_timeout"
        slowClientsClosedCount.add(1, ordering: .relaxed)
        logger.warn("slow_client_closed", ["conn": String(conn.id), "peer": conn.peer, "scope": "send_timeout",
                                           "unsent": String(queued), "seconds": String(limit / 1000)])
        lws_set_timeout(conn.wsi, PENDING_TIMEOUT_USER_OK, -1)  // LWS_TO_KILL_ASYNC
        return nil
    }

    /// The bytes the socket's kernel holds unsent or unacknowledged while more wait behind them
    /// — in lws's buffer, in its compressor (which keeps what the socket did not take inside the
    /// extension), or in the outbox —; 0 when nothing waits.
    private func unsentBytes(_ conn: WSConnection) -> Int32 {
        let waiting = lws_partial_buffered(conn.wsi) != 0 || (conn.compressed && !conn.deflateQuiet) || !conn.outbox.isEmpty
        return waiting ? cg_socket_unsent(lws_get_socket_fd(conn.wsi)) : 0
    }

    /// Whether bytes wait to be sent to this connection and its socket took some since the last
    /// time this was asked (the bytes its kernel holds unacknowledged changed).
    private func stillTakingBytes(_ conn: WSConnection) -> Bool {
        let queued = unsentBytes(conn)
        defer { conn.keepaliveQueue = queued }
        return queued > 0 && queued != conn.keepaliveQueue
    }

    private func closeWhenIdle(_ conn: WSConnection) {
        guard stopping, conn.pendingClose == nil, conn.idle else { return }
        conn.pendingClose = (CloseCode.goingAway, "Server shutting down", true)
        lws_callback_on_writable(conn.wsi)
    }

    private var liveConnections: Int { wsConnections.count + httpExchanges.values.filter { !$0.done }.count }

    // MARK: Dispatch

    fileprivate func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        if legacyNameHidden { restoreLegacyName() }
        switch reason {
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            if stopping { return 1 }
            if openSockets >= socketCap {
                refusedSockets += 1
                refusedSocketsTotal += 1
                let now = monotonicMs()
                if now &- refusedLoggedAt >= 1000 {
                    logger.warn("connections_refused", ["reason": "open-files limit", "open": String(openSockets),
                                                        "refused": String(refusedSockets)])
                    refusedLoggedAt = now
                    refusedSockets = 0
                }
                return 1
            }
            return 0
        case LWS_CALLBACK_WSI_CREATE:
            openSockets += 1
            return 0
        case LWS_CALLBACK_WSI_DESTROY:
            if openSockets > 0 { openSockets -= 1 }
            return 0
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi, input)
        case LWS_CALLBACK_ESTABLISHED:
            return established(wsi, user)
        case LWS_CALLBACK_RECEIVE:
            return receive(wsi, user, input, len)
        case LWS_CALLBACK_SERVER_WRITEABLE:
            return writeable(wsi, user)
        case LWS_CALLBACK_RECEIVE_PONG:
            if let conn = wsConnection(user) { conn.heard() }
            return 0
        case LWS_CALLBACK_TIMER:
            if let ex = httpExchange(user) { return httpBodyTimeout(ex) }
            guard let conn = wsConnection(user) else { return 0 }
            if conn.outbox.overflowed { return closeSlowClient(conn) }
            // lws shows a frame's payload only once 16 KiB of it or its end arrived; a client
            // that announced an oversized frame and stalled is caught here (see receive).
            if conn.pendingClose == nil && passesMessageLimit(conn, wsi, adding: 0) {
                return refuseOversized(conn)
            }
            guard conn.timerFiring else { return 0 }
            conn.timerFiring = false
            return apply(conn.timerFired(), conn)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let conn = wsConnection(user) {
                conn.closedBy = "client"
                conn.peerClosing = true
                if let input, len >= 2 {
                    let b = input.assumingMemoryBound(to: UInt8.self)
                    conn.closeCode = UInt16(b[0]) << 8 | UInt16(b[1])
                    conn.closeReason = String(decoding: UnsafeBufferPointer(start: b + 2, count: len - 2), as: UTF8.self)
                }
            }
            return 0
        case LWS_CALLBACK_WS_SERVER_DROP_PROTOCOL:
            // lws has begun closing: on its own (a text frame that is not UTF-8, 1007; a protocol
            // error, 1002), after a -1, or for a socket gone. It may still wait for the client's
            // close frame; nothing more may be written after its own (RFC 6455 5.5.1).
            wsConnection(user)?.closing = true
            return 0
        case LWS_CALLBACK_CLOSED:
            closed(user)
            return 0
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi, user, input, len)
        case LWS_CALLBACK_HTTP_BODY:
            return httpBody(user, input, len)
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            return httpBodyComplete(wsi, user)
        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWriteable(wsi, user)
        case LWS_CALLBACK_HTTP_DROP_PROTOCOL, LWS_CALLBACK_CLOSED_HTTP:
            httpRelease(user)
            return 0
        case LWS_CALLBACK_RAW_RX:
            return unparsableRequest(wsi, user, input, len)
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainWakes(onServiceThread: true)
            return 0
        default:
            return 0
        }
    }

    private func sessionID(_ user: UnsafeMutableRawPointer?) -> UInt64 {
        user?.load(as: UInt64.self) ?? 0
    }

    private func wsConnection(_ user: UnsafeMutableRawPointer?) -> WSConnection? {
        wsConnections[sessionID(user)]
    }

    // MARK: The drainer

    /// Starts the drainer: from now on a poke (the first mark since the last drain) signals it
    /// instead of waking the service thread.
    private func startDrainer() {
        drainerRunning = true
        waker.drainer.minimumSockets.store(options.drainerMinConnections, ordering: .sequentiallyConsistent)
        waker.drainer.enabled.store(true, ordering: .sequentiallyConsistent)
        let t = Thread { [self] in self.drainerLoop() }
        t.name = "drainer"
        t.start()
    }

    /// Service thread, at the end: pokes go to the service thread again, and the drainer ends.
    private func stopDrainer() {
        guard drainerRunning else { return }
        drainerRunning = false
        waker.drainer.enabled.store(false, ordering: .sequentiallyConsistent)
        drainerStop.store(true, ordering: .sequentiallyConsistent)
        waker.drainer.signal.signal()
        // The drainer only ever tries the lock this thread holds, so it cannot be waiting for it.
        drainerDone.wait()
    }

    /// Takes the marks in the service thread's place while that thread sleeps in poll(): with
    /// 10,000 connections the service thread needs 4–9 ms to come back from that poll(), which
    /// delayed every answer and every fan-out by as much (bench/README.md, "Fan-out"). When the
    /// service thread is awake (the lock is taken), it gets the usual lws_cancel_service.
    private func drainerLoop() {
        while true {
            waker.drainer.signal.wait()
            if drainerStop.load(ordering: .sequentiallyConsistent) { break }
            guard cg_service_lock_try(serviceLock) != 0 else {
                waker.cancelService()
                continue
            }
            // Shutting down: that is the service thread's work.
            if stopping || stopRequested.load(ordering: .sequentiallyConsistent) {
                cg_service_lock_release(serviceLock)
                waker.cancelService()
                continue
            }
            servicePassNeeded = false
            drainWakes(onServiceThread: false)
            let pass = servicePassNeeded
            drainerPassCount.add(1, ordering: .sequentiallyConsistent)
            cg_service_lock_release(serviceLock)
            if pass { waker.cancelService() }
        }
        drainerDone.signal()
    }

    /// Numbers drain rounds (`WSConnection.drainRound`); the service lock's holder only.
    private var drainRoundSerial: UInt64 = 0
    /// Connections named again in a drain round that had already looked at them (tests).
    private let repeatedInRoundCount = Atomic<Int>(0)
    var repeatedInRound: Int { repeatedInRoundCount.load(ordering: .sequentiallyConsistent) }

    /// Drains done by the drainer.
    private let drainerPassCount = Atomic<Int>(0)
    var drainerPasses: Int { drainerPassCount.load(ordering: .sequentiallyConsistent) }
    /// The service thread's waits in poll() that released the service lock (0: lws's poll()
    /// does not reach CServiceLock's, and the drainer can never take the lock).
    var servicePolls: UInt { cg_service_lock_polls(serviceLock) }
    /// The service thread's waits through epoll and plain poll(), and the epoll registrations
    /// the once-a-second sweep found lost and restored (CServiceLock; should stay 0).
    var serviceWaits: (epoll: UInt, plain: UInt, healed: UInt) {
        var e: UInt = 0, p: UInt = 0, h: UInt = 0
        cg_service_lock_wait_counts(serviceLock, &e, &p, &h)
        return (e, p, h)
    }

    /// Most rounds of `drainWakes` before the service thread returns to poll() (its other
    /// sockets wait meanwhile).
    static let maxDrainRounds = 32
    /// Longest wait in one `drainWakes` for the marks of an announced fan-out.
    static let expectWaitMs: UInt64 = 20

    /// Runs rounds of wake-ups until none are pending: marks made while a round writes are
    /// taken by the next round instead of poking lws, whose every poll() pass walks all
    /// sockets (a fan-out to 10,000 otherwise paid one such pass per round).
    private func drainWakes(onServiceThread: Bool) {
        var rounds = 0
        // While the watcher announced a fan-out (`Waker.expect`), this thread waits for its
        // marks — at most this long in all — rather than going back to poll().
        let waitUntil = monotonicMs() + Self.expectWaitMs
        while true {
            let ids = waker.drain(keepDraining: true)
            if ids.isEmpty {
                let left = Int(waitUntil) - Int(monotonicMs())
                if left > 0 && rounds < Self.maxDrainRounds && waker.waitForMarks(timeoutMs: left) { continue }
                waker.endDrain()
                break
            }
            drainRound(ids, onServiceThread: onServiceThread)
            rounds += 1
            if rounds >= Self.maxDrainRounds {
                waker.endDrain()
                break
            }
        }
        if onServiceThread && stopRequested.load(ordering: .sequentiallyConsistent) && !stopping { beginShutdown() }
    }

    private func drainRound(_ ids: [UInt64], onServiceThread: Bool) {
        // A wake-up with hundreds of connections (a catalogVersion fan-out) is written in
        // chunks by the send queues while this thread fills the next chunk.
        let pipelined = ids.count >= Self.parallelWriteMinConnections && sendQueues.count > 1
        var chunk = DirectChunk()
        var sealed: [DirectChunkBox] = []
        let group = DispatchGroup()
        drainRoundSerial &+= 1
        for id in ids {
            if let conn = wsConnections[id] {
                if conn.decoding { finishDecode(conn) }
                // Shutting down: a subscription that was waiting for a worker has just started
                // (its worker marks it streaming, then this connection): the connection may
                // now be idle, and is closed after its queue as the others were. Before, it
                // stayed open, subscribed, until --shutdown-timeout.
                if stopping { closeWhenIdle(conn) }
                // Some marks are made without the outbox's say (a subscription's start, a
                // decode done aside, the hub), so a connection can be named twice in one
                // round. A second direct write would go out beside the first, before
                // `finishDirect` hands lws what a short first write left: its bytes would
                // overtake them (or, in chunks sent on two send queues, race them). What was
                // queued since the first look goes through WRITEABLE, after those bytes.
                if conn.drainRound == drainRoundSerial {
                    repeatedInRoundCount.add(1, ordering: .relaxed)
                    writeThroughLws(conn)
                    continue
                }
                conn.drainRound = drainRoundSerial
                switch collectDirect(conn, into: &chunk) {
                case .overflowed:
                    // It does not read, so it may never become writeable: close it from its
                    // own timer callback instead.
                    lws_set_timer_usecs(conn.wsi, 1)
                    servicePassNeeded = true
                case .notDirect:
                    writeThroughLws(conn)
                case .collected:
                    if chunk.writes.count >= Self.chunkConnections { seal(&chunk, into: &sealed, pipelined: pipelined, group: group) }
                }
            } else if let ex = httpExchanges[id], ex.response == nil {
                if let r = ex.takeResult() {
                    if onServiceThread && answerNow(ex, r) { continue }
                    answer(ex, r)
                    servicePassNeeded = true
                }
            }
        }
        seal(&chunk, into: &sealed, pipelined: pipelined, group: group)
        if pipelined {
            group.wait()
        } else {
            for box in sealed { box.chunk.send() }
        }
        for box in sealed { finishDirect(box.chunk) }
    }

    /// Leaves `conn`'s queue to its WRITEABLE callback, or, when the queue overflowed, to its
    /// timer, which closes it.
    private func writeThroughLws(_ conn: WSConnection) {
        if conn.outbox.overflowed { lws_set_timer_usecs(conn.wsi, 1) } else { lws_callback_on_writable(conn.wsi) }
        servicePassNeeded = true
    }

    /// Ends the chunk being filled: a send queue writes it at once (`pipelined`), or
    /// `drainRound` does once all are filled.
    private func seal(_ chunk: inout DirectChunk, into sealed: inout [DirectChunkBox], pipelined: Bool, group: DispatchGroup) {
        guard !chunk.writes.isEmpty else { return }
        let box = DirectChunkBox(chunk)
        chunk = DirectChunk()
        if pipelined {
            let job = DirectChunkJob(box: box)
            sendQueues[sealed.count % sendQueues.count].async(group: group) { job.send() }
        }
        sealed.append(box)
    }

    // MARK: Direct writes

    /// Most bytes of one connection's queue taken for a direct write at once.
    static let directWriteMaxBytes = 65536
    /// The same on a permessage-deflate connection, whose direct messages go uncompressed.
    static let directCompressedMaxBytes = 512
    /// From this many connections in one wake-up on, their direct writes go to the send queues.
    static let parallelWriteMinConnections = 256
    /// Connections per chunk handed to a send queue.
    static let chunkConnections = 512
    /// A message text from this size on (a page's answer) is sent from its own buffer rather
    /// than copied into the arena (`DirectSpan.big`), one per connection and chunk.
    static let directBigMinBytes = 4096

    /// When nothing else is on the wire for `conn` — lws holds no unsent bytes (a partial
    /// write), no close is under way, no ping is due, no compressed message is draining —
    /// takes its queued frames (up to `directWriteMaxBytes`) into `chunk` and returns true;
    /// the rest, if any, goes through WRITEABLE as before. Otherwise returns false.
    enum DirectOutcome { case collected, notDirect, overflowed }

    /// Reused by `collectDirect` (lws thread only), so taking a connection's frames allocates
    /// nothing. Always empty between calls.
    private var directScratch: [OutboundItem] = []

    private func collectDirect(_ conn: WSConnection, into chunk: inout DirectChunk) -> DirectOutcome {
        guard options.directWrites, conn.directCapable, !conn.compressed || conn.deflateQuiet, !stopping, !conn.closing, !conn.peerClosing,
              conn.pendingClose == nil, !conn.pingDue, lws_partial_buffered(conn.wsi) == 0 else { return .notDirect }
        // A compressed connection negotiated deflate to save bandwidth: only small messages (a
        // catalogVersion `next`, ~100 bytes, which deflate cannot shrink) go out directly,
        // uncompressed (RSV1 clear, as RFC 7692 allows per message); larger ones go through lws.
        // One lock: the frames, whether more remain, and whether the queue overflowed.
        var items: [OutboundItem] = []
        swap(&items, &directScratch)
        defer {
            while items.popLast() != nil {}
            swap(&items, &directScratch)
        }
        let (more, overflowed) = conn.outbox.popFrames(maxBytes: conn.compressed ? Self.directCompressedMaxBytes : Self.directWriteMaxBytes,
                                                       into: &items)
        if overflowed { return .overflowed }
        let start = chunk.arena.count
        // The first large text (a page's answer: a query's frame, or a shared `next` payload) is
        // sent from its own buffer, between the arena bytes before and after it: not copied.
        var big: (bytes: [UInt8], from: Int)? = nil
        var beforeBig = 0
        for k in items.indices {
            if isStale(items[k], on: conn) { continue }
            let n = items[k].byteCount - Frames.headroom
            guard n >= 0 else { continue }
            Frames.appendTextFrameHeader(&chunk.arena, payloadCount: n)
            if let shared = items[k].shared {
                chunk.arena.append(contentsOf: items[k].head[Frames.headroom...])
                if big == nil && shared.count >= Self.directBigMinBytes {
                    big = (shared, 0)
                    beforeBig = chunk.arena.count - start
                } else {
                    chunk.arena.append(contentsOf: shared)
                }
                chunk.arena.append(0x7D)
            } else if big == nil && n >= Self.directBigMinBytes {
                big = (items[k].head, Frames.headroom)
                beforeBig = chunk.arena.count - start
            } else {
                chunk.arena.append(contentsOf: items[k].head[Frames.headroom...])
            }
            conn.messagesDirect += 1
            wrote(items[k], on: conn)
        }
        if chunk.arena.count > start {
            let arenaBytes = chunk.arena.count - start
            let span = DirectSpan(start: start, count: big == nil ? arenaBytes : beforeBig, big: big?.bytes,
                                  bigFrom: big?.from ?? 0, after: big == nil ? 0 : arenaBytes - beforeBig)
            chunk.writes.append(DirectWrite(conn: conn, fd: lws_get_socket_fd(conn.wsi), span: span))
        }
        if more {
            lws_callback_on_writable(conn.wsi)
            servicePassNeeded = true
        }
        return .collected
    }

    /// A frame the client no longer wants: its operation was completed or stopped meanwhile.
    private func isStale(_ item: OutboundItem, on conn: WSConnection) -> Bool {
        guard item.serial != 0, let id = item.id else { return false }
        return !conn.isActive(id: id, serial: item.serial)
    }

    /// Bookkeeping once a frame is on the wire (or with lws): the operation's last message frees
    /// its id.
    private func wrote(_ item: OutboundItem, on conn: WSConnection) {
        conn.messagesOut += 1
        if item.terminal, let id = item.id {
            conn.finished(id: id, serial: item.serial)
            conn.handles.removeValue(forKey: item.serial)
            if stopping { closeWhenIdle(conn) }
        }
    }

    /// The socket refused a direct write for good (EPIPE, ECONNRESET): lws would find out only
    /// at its next read, so the connection is closed now.
    private func dropAfterFailedWrite(_ conn: WSConnection, _ error: String) {
        logger.info("write_failed", ["conn": String(conn.id), "error": error])
        conn.closing = true
        lws_set_timeout(conn.wsi, PENDING_TIMEOUT_USER_OK, -1)  // LWS_TO_KILL_ASYNC
        servicePassNeeded = true
    }

    /// After a chunk was sent: whatever a socket did not take — it is full, or the kernel is
    /// short of memory — is handed to lws as raw bytes (lws_write LWS_WRITE_HTTP, i.e.
    /// lws_issue_raw), which keeps it and sends it before anything else on that connection.
    private func finishDirect(_ chunk: DirectChunk) {
        for d in chunk.writes {
            let w = d.result
            if w == d.span.total { continue }
            let conn = d.conn
            let e = d.errno
            if w < 0 && e != EAGAIN && e != EWOULDBLOCK && e != EINTR {
                dropAfterFailedWrite(conn, String(cString: strerror(e)))
                continue
            }
            conn.writesDeferred += 1
            var rest = d.span.unsent(chunk.arena, sent: max(0, w))
            let r = rest.withUnsafeMutableBufferPointer { b in lws_write(conn.wsi, b.baseAddress!, b.count, LWS_WRITE_HTTP) }
            servicePassNeeded = true
            if r < 0 { dropAfterFailedWrite(conn, "lws_write") }
        }
    }

    /// Why nothing can listen on `host` (an address literal) and `port`, or nil: binds a socket
    /// to them (with SO_REUSEADDR, as lws's listener has) and closes it. lws takes an address
    /// that is not this machine's for an interface that may appear later: it creates the
    /// context, listens nowhere and retries every 30 s. That case, a port in use and a port this
    /// user may not bind are told here with the system's reason.
    public static func bindProbe(_ host: String, port: Int) -> String? {
        var v4 = sockaddr_in(), v6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            family = AF_INET6
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
        } else {
            return "not an IPv4 or IPv6 address literal"
        }
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { close(fd) }
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        let r = family == AF_INET
            ? withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            : withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        return r == 0 ? nil : String(cString: strerror(errno))
    }

    // MARK: Headers

    private func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let n = lws_hdr_total_length(wsi, token)
        guard n > 0 else { return nil }
        var buf = [CChar](repeating: 0, count: Int(n) + 1)
        let got = lws_hdr_copy(wsi, &buf, Int32(buf.count), token)
        guard got >= 0 else { return nil }
        return String(decoding: buf[0..<Int(got)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func uriArguments(_ wsi: OpaquePointer) -> [(String, String)] {
        let total = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS)
        guard total > 0 else { return [] }
        var out: [(String, String)] = []
        var buf = [CChar](repeating: 0, count: Int(total) + 1)
        var idx: Int32 = 0
        while true {
            let n = lws_hdr_copy_fragment(wsi, &buf, Int32(buf.count), WSI_TOKEN_HTTP_URI_ARGS, idx)
            if n < 0 { break }
            let s = String(decoding: buf[0..<Int(n)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let eq = s.firstIndex(of: "=") {
                out.append((String(s[..<eq]), String(s[s.index(after: eq)...])))
            } else {
                out.append((s, ""))
            }
            idx += 1
        }
        return out
    }

    /// RFC 9112 3.2: a server answers 400 to an HTTP/1.1 request without a Host header, and to
    /// any request with more than one (two hosts are how requests are smuggled past a proxy that
    /// reads the other). A Host of an http URI is never empty (RFC 9110 7.2). lws keeps the
    /// request line's version as the WSI_TOKEN_HTTP header and each Host line as a fragment.
    private func hostProblem(_ wsi: OpaquePointer) -> String? {
        var buf = [CChar](repeating: 0, count: 2)
        if lws_hdr_copy_fragment(wsi, &buf, Int32(buf.count), WSI_TOKEN_HOST, 1) != -1
            || lws_hdr_fragment_length(wsi, WSI_TOKEN_HOST, 1) > 0 {
            return "more than one Host header"
        }
        guard header(wsi, WSI_TOKEN_HTTP) == "HTTP/1.1", lws_hdr_total_length(wsi, WSI_TOKEN_HOST) == 0 else { return nil }
        return "an HTTP/1.1 request needs a Host header naming this server (RFC 9112 3.2)"
    }

    private func peerAddress(_ wsi: OpaquePointer) -> String {
        var buf = [CChar](repeating: 0, count: 64)
        guard let p = lws_get_peer_simple(wsi, &buf, buf.count) else { return "-" }
        return String(cString: p)
    }

    /// The client of a request or upgrade from `peer`: `peer` itself unless it is a
    /// --trusted-proxy, then the address its X-Forwarded-For (`forwardedFor`) or Forwarded
    /// names (`TrustedProxies.client`, --trusted-proxy-header).
    private func clientAddress(_ wsi: OpaquePointer, peer: String, forwardedFor: @autoclosure () -> String?) -> String {
        let trusted = options.trustedProxies
        if trusted.isEmpty { return peer }
        switch trusted.header {
        case .xForwardedFor: return trusted.client(peer: peer, header: forwardedFor())
        case .forwarded: return trusted.client(peer: peer, header: customHeader(wsi, "forwarded:"))
        }
    }

    /// A header lws 4.1 has no token for (`name` in lower case with its colon). Of several
    /// lines of it, lws hands out the first only (lws_hdr_custom_copy; 4.3's
    /// lws_hdr_custom_name_foreach lists names, not values).
    private func customHeader(_ wsi: OpaquePointer, _ name: String) -> String? {
        let length = Int32(name.utf8.count)
        let n = lws_hdr_custom_length(wsi, name, length)
        guard n >= 0 else { return nil }
        var buf = [CChar](repeating: 0, count: Int(n) + 1)
        let got = lws_hdr_custom_copy(wsi, &buf, Int32(buf.count), name, length)
        guard got >= 0 else { return nil }
        return String(decoding: buf[0..<Int(got)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func httpMethod(_ wsi: OpaquePointer) -> HTTPMethod {
        if lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0 { return .get }
        if lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0 { return .post }
        if lws_hdr_total_length(wsi, WSI_TOKEN_OPTIONS_URI) > 0 { return .options }
        if lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) > 0 { return .head }
        if lws_hdr_total_length(wsi, WSI_TOKEN_PUT_URI) > 0 { return .put }
        if lws_hdr_total_length(wsi, WSI_TOKEN_PATCH_URI) > 0 { return .patch }
        if lws_hdr_total_length(wsi, WSI_TOKEN_DELETE_URI) > 0 { return .delete }
        return .other
    }

    // MARK: WebSocket upgrade

    /// Runs before lws accepts an upgrade: wrong path 404, shutting down or full 503, missing or
    /// unknown subprotocol 400 — each a real HTTP response, not a dropped connection.
    private func confirmUpgrade(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?) -> Int32 {
        let upgrade = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
        let path = header(wsi, WSI_TOKEN_GET_URI) ?? ""
        let peer = peerAddress(wsi)
        let client = clientAddress(wsi, peer: peer, forwardedFor: header(wsi, WSI_TOKEN_X_FORWARDED_FOR))
        let group = IPAddress.clientGroup(client, ipv6Prefix: options.ipv6ClientPrefix)
        func reject(_ r: HTTPResponse, _ why: String) -> Int32 {
            logger.info("upgrade_rejected", ["peer": peer, "client": client, "path": path, "status": String(r.status), "reason": why])
            return respondNow(wsi, r)
        }
        if upgrade.lowercased() == "h2c", let input {
            // RFC 9110 7.8: a server may ignore an Upgrade. lws would switch to HTTP/2 on a
            // "h2c" confirmed here, so the name lws compares next is changed (lws keeps it in the
            // request's header buffer): the request is then served as the HTTP/1.1 it is.
            // curl --http2, Java's HttpClient and nginx configs passing $http_upgrade send it.
            input.assumingMemoryBound(to: UInt8.self)[2] = 0x5F  // "h2_"
            logger.debug("upgrade_ignored", ["peer": peer, "upgrade": upgrade])
            return 0
        }
        guard upgrade.lowercased() == "websocket" else {
            return reject(HTTPRouting.plainError(400, "Only WebSocket upgrades are supported"), "upgrade \(upgrade)")
        }
        if let allowed = options.corsOrigins, let origin = header(wsi, WSI_TOKEN_ORIGIN),
           !HTTPRouting.originAllowed(origin, allowed) {
            // A browser page from another origin (--cors-origin): what CORS refuses it over HTTP.
            return reject(HTTPRouting.plainError(403, "Origin \(origin) is not allowed (--cors-origin)", code: "FORBIDDEN"), "origin")
        }
        if let problem = hostProblem(wsi) {
            return reject(HTTPRouting.plainError(400, "Bad Request: \(problem)", code: "BAD_REQUEST"), "host")
        }
        if let host = header(wsi, WSI_TOKEN_HOST), !HTTPRouting.hostAllowed(host, allowed: hostPolicy) {
            // A page whose name was rebound to this address (--allowed-host): refused before the upgrade.
            return reject(HTTPRouting.misdirected(host: host), "allowed-host \(host)")
        }
        guard path == HTTPRouting.graphqlPath || path == HTTPRouting.graphqlPath + "/" else {
            return reject(HTTPRouting.plainError(404, "Not found: \(path). The WebSocket endpoint is \(HTTPRouting.graphqlPath)."), "path")
        }
        if stopping {
            return reject(HTTPRouting.plainError(503, "The server is shutting down", code: "SERVICE_UNAVAILABLE"), "shutting down")
        }
        if liveConnections >= maxConnections {
            return reject(Self.tooManyConnections(maxConnections), "max connections")
        }
        let perAddress = options.maxConnectionsPerAddress
        if perAddress > 0, wsPerClient[group, default: 0] >= perAddress {
            return reject(Self.tooManyConnections(perAddress, address: group), "max connections per address")
        }
        let offered = header(wsi, WSI_TOKEN_PROTOCOL)
        guard let proto = WireProtocol.negotiate(offered) else {
            let what = offered.map { "offered \"\($0)\"" } ?? "no Sec-WebSocket-Protocol header"
            let text = "Unsupported WebSocket subprotocol (\(what)). This endpoint speaks graphql-transport-ws (graphql-ws library, Apollo Client 3.x GraphQLWsLink, urql, Relay) and graphql-ws (subscriptions-transport-ws); offer one in Sec-WebSocket-Protocol.\n"
            return reject(HTTPResponse(status: 400, contentType: "text/plain; charset=utf-8", body: Array(text.utf8)), "subprotocol")
        }
        if proto == .transport, let offered { preferTransport(offered) }
        return 0
    }

    /// The 503 of --max-connections (all clients) and --max-connections-per-address (`address`
    /// given: one address, or an IPv6 client's network, "2001:db8::/64", as
    /// --ipv6-client-prefix groups them), before an upgrade or for an HTTP request: come back
    /// in a second, as SERVER_BUSY.
    static func tooManyConnections(_ limit: Int, address: String? = nil) -> HTTPResponse {
        let text = address.map { a -> String in
            let unit = a.firstIndex(of: "/").map { "\(a[$0...]) network" } ?? "address"
            return "Too many connections from \(a) (limit \(limit) per \(unit)); retry later"
        } ?? "Too many connections (limit \(limit)); retry later"
        var r = HTTPRouting.plainError(503, text, code: "TOO_MANY_CONNECTIONS")
        r.headers.append(("Retry-After", "1"))
        return r
    }

    /// lws binds the first protocol of the client's list that it knows (lws_process_ws_upgrade,
    /// right after this callback returns). When graphql-ws comes before graphql-transport-ws,
    /// hide graphql-ws from that one lookup by changing the first byte of its name (lws keeps
    /// our name pointers); the next callback, whatever it is, restores it.
    private func preferTransport(_ offered: String) {
        let tokens = offered.split(separator: ",").map { $0.trimmingCharacters(in: " \t") }
        guard let first = tokens.first(where: { WireProtocol(rawValue: $0) != nil }),
              first != WireProtocol.transport.rawValue, let name = legacyName else { return }
        name[0] = 0x23  // "#raphql-ws" matches no client's offer
        legacyNameHidden = true
    }

    private func restoreLegacyName() {
        legacyName?[0] = 0x67  // "g"
        legacyNameHidden = false
    }

    /// Writes a whole small response from inside LWS_CALLBACK_HTTP_CONFIRM_UPGRADE and returns
    /// what that callback expects for "answered". The response is composed here as HTTP/1.1 text:
    /// before the upgrade lws has not yet recorded the request's HTTP version and would answer
    /// HTTP/1.0, which WebSocket clients refuse to parse.
    private func respondNow(_ wsi: OpaquePointer, _ r: HTTPResponse) -> Int32 {
        var buf = [UInt8](repeating: 0, count: Frames.headroom) + HTTPRouting.rawResponse(r, date: httpDate.now(), anyOrigin: options.corsOrigins == nil)
        let n = buf.count - Frames.headroom
        let w = buf.withUnsafeMutableBufferPointer { b -> Int32 in
            guard let base = b.baseAddress else { return -1 }
            return lws_write(wsi, base + Frames.headroom, n, LWS_WRITE_HTTP)
        }
        if w < Int32(n) { return -1 }
        httpResponses[r.status, default: 0] += 1
        return 1
    }

    /// Writes the answer's headers — followed by its whole body when `withBody` — in one write.
    private func writeHeaders(_ wsi: OpaquePointer, _ r: HTTPResponse, origin: String?, keepAlive10: Bool,
                              withBody: Bool = false) -> Bool {
        var extra = r.headers
        extra.append(("date", httpDate.now()))
        extra += HTTPRouting.corsHeaders(origin: origin, allowed: options.corsOrigins)
        if r.closeConnection || stopping {
            extra.append(("connection", "close"))
        } else {
            if keepAlive10 { extra.append(("connection", "keep-alive")) }
            extra.append(("keep-alive", "timeout=\(options.httpIdleTimeout)"))
        }
        // The status line and lws's common headers fit in 2 KiB; every other header is counted
        // (a long --cors-origin echoed back must not make the answer fail to fit).
        let size = Frames.headroom + 2048 + extra.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 }
            + (withBody ? r.body.count : 0)
        var buf = [UInt8](repeating: 0, count: size)
        return buf.withUnsafeMutableBufferPointer { b -> Bool in
            guard let base = b.baseAddress else { return false }
            let start = base + Frames.headroom
            let end = base + size - 1
            var p: UnsafeMutablePointer<UInt8>? = start
            // A 304 carries no Content-Type (RFC 9110 15.4.5: no representation metadata).
            let contentType: String? = r.status == 304 ? nil : r.contentType
            if lws_add_http_common_headers(wsi, UInt32(r.status), contentType, lws_filepos_t(r.body.count), &p, end) != 0 {
                return false
            }
            for (k, v) in extra {
                let name = k + ":"
                let ok = name.withCString { n in
                    v.withCString { vp in
                        lws_add_http_header_by_name(wsi, UnsafeRawPointer(n).assumingMemoryBound(to: UInt8.self),
                                                    UnsafeRawPointer(vp).assumingMemoryBound(to: UInt8.self),
                                                    Int32(v.utf8.count), &p, end)
                    }
                }
                if ok != 0 { return false }
            }
            guard withBody else { return lws_finalize_write_http_header(wsi, start, &p, end) == 0 }
            // Headers and body as one write (one segment on the wire, one send): for HTTP/1 lws
            // writes both kinds as raw bytes, and it keeps what the socket does not take.
            guard lws_finalize_http_header(wsi, &p, end) == 0, var q = p else { return false }
            r.body.withUnsafeBufferPointer { b in
                if let bb = b.baseAddress { q.update(from: bb, count: b.count) }
            }
            q += r.body.count
            let n = q - start
            return lws_write(wsi, start, n, LWS_WRITE_HTTP_HEADERS) == Int32(n)
        }
    }

    // MARK: WebSocket events

    private func established(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let user else { return -1 }
        let proto: WireProtocol
        if let p = lws_get_protocol(wsi), p.pointee.id == 2 { proto = .legacy } else { proto = .transport }
        let id = nextID
        nextID += 1
        user.storeBytes(of: id, as: UInt64.self)
        let peer = peerAddress(wsi)
        let client = clientAddress(wsi, peer: peer, forwardedFor: header(wsi, WSI_TOKEN_X_FORWARDED_FOR))
        let conn = WSConnection(id: id, wsi: wsi, proto: proto, configuration: machineConfiguration,
                                queueLimit: options.maxQueuedBytes, budget: queueBudget, peer: peer, client: client,
                                clientGroup: IPAddress.clientGroup(client, ipv6Prefix: options.ipv6ClientPrefix))
        conn.compressed = options.permessageDeflate && (header(wsi, WSI_TOKEN_EXTENSIONS)?.contains("permessage-deflate") ?? false)
        if conn.compressed {
            // zlib's default memLevel 8 costs ~128 KiB of deflate state per connection; catalog
            // JSON compresses about as well with a smaller hash table.
            _ = lws_set_extension_option(wsi, "permessage-deflate", "mem_level", "4")
        }
        conn.directCapable = lws_get_network_wsi(wsi) == wsi && lws_is_ssl(wsi) == 0
        wsConnections[id] = conn
        conn.tickSlot = tickOrder.count
        tickOrder.append(conn)
        webSocketsOpened += 1
        wsPerClient[conn.clientGroup, default: 0] += 1
        waker.drainer.sockets.add(1, ordering: .relaxed)
        logger.info("connection_opened", ["conn": String(id), "peer": conn.peer, "client": conn.client,
                                          "forwarded_for": header(wsi, WSI_TOKEN_X_FORWARDED_FOR) ?? "-", "protocol": proto.rawValue,
                                          "compressed": conn.compressed ? "true" : "false"])
        let r = apply(conn.opened(), conn)
        if stopping {
            conn.beginShutdown()
            closeWhenIdle(conn)
        }
        return r
    }

    private func receive(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        guard let conn = wsConnection(user) else { return -1 }
        conn.heard()
        // Closing: the rest of what the client sends is dropped until lws ends the connection.
        if conn.closing || conn.pendingClose != nil { conn.rx = []; return 0 }
        let final = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        // The rest of the current frame is known in advance: refuse before buffering it.
        if passesMessageLimit(conn, wsi, adding: len) { return refuseOversized(conn) }
        if conn.rx.isEmpty && final && !conn.decoding {
            return process(conn, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : len))
        }
        if let input, len > 0 { conn.rx.append(contentsOf: UnsafeRawBufferPointer(start: input, count: len)) }
        guard final else { return 0 }
        let message = conn.rx
        conn.rx = []
        if conn.decoding { return hold(conn, message) }
        return message.withUnsafeBytes { process(conn, $0) }
    }

    /// From this size on, a message is decoded (JSON parsed and checked) on its own thread rather
    /// than on the service thread: jansson takes ~90 ms for a 1 MiB array of small numbers (plain
    /// JSON is read in Swift, faster, but any text with a `\u` escape or a non-ASCII string still
    /// goes to jansson), and every other client would wait that long. Its connection stops reading meanwhile, so its
    /// messages still take effect in order and it has one such decode at a time.
    static let offloadDecodeBytes = 16 * 1024

    /// A message that arrived while an earlier one is being decoded. lws stops reading the
    /// socket once the flow is paused, so only what it had already read lands here; the cap is
    /// a guard, not a limit a client can reach by design.
    private func hold(_ conn: WSConnection, _ message: [UInt8]) -> Int32 {
        conn.heldBytes += message.count
        if conn.heldBytes > 2 * options.maxMessageBytes {
            return closeNow(conn, CloseCode.policyViolation, "Too much input while a large message is decoded")
        }
        conn.held.append(message)
        return 0
    }

    /// Hands a large message to the decode queue and pauses reading. Not the query workers: a
    /// decode running there would hold a worker for its ~90 ms and other clients' queries
    /// would queue behind it; on a thread of its own it only takes its share of the CPU.
    private func decodeOffThread(_ conn: WSConnection, _ text: UnsafeRawBufferPointer) {
        let bytes = [UInt8](text)
        let slot = conn.decoded ?? DecodedSlot()
        conn.decoded = slot
        let proto = conn.proto, id = conn.id, waker = self.waker
        conn.decoding = true
        conn.decodingBytes = bytes.count
        conn.messagesDecodedAside += 1
        lws_rx_flow_control(conn.wsi, 0)
        decodeQueue.async {
            let m = bytes.withUnsafeBytes { DecodedClientMessage.decode($0, proto) }
            slot.put(m)
            waker.wake(id)
        }
    }

    /// On the service thread (or the drainer, holding the service lock), outside any callback of
    /// the connection: applies the decode queue's result, then the messages held meanwhile, and
    /// resumes reading. A close they call for goes out from WRITEABLE (`pendingClose`).
    private func finishDecode(_ conn: WSConnection) {
        guard conn.decoding, let m = conn.decoded?.take() else { return }
        conn.decoding = false
        servicePassNeeded = true
        // Reading resumes even when the connection is to close: lws must read the client's
        // answer to the close frame (the client waits for the TCP close that follows it).
        defer { if !conn.decoding { lws_rx_flow_control(conn.wsi, 1) } }
        if conn.closing || conn.pendingClose != nil { return }
        conn.messageBytes = conn.decodingBytes
        if applyOutsideCallback(conn.receive(decoded: m), conn) { return }
        while !conn.decoding, !conn.held.isEmpty {
            let next = conn.held.removeFirst()
            conn.heldBytes -= next.count
            if next.withUnsafeBytes({ processOutsideCallback(conn, $0) }) { return }
        }
    }

    /// `process` away from the connection's callbacks; true when the connection is to close.
    private func processOutsideCallback(_ conn: WSConnection, _ text: UnsafeRawBufferPointer) -> Bool {
        guard let actions = admit(conn, text) else { return false }
        return applyOutsideCallback(actions, conn)
    }

    /// `apply` away from the connection's callbacks, where returning -1 cannot close it: a close
    /// goes out from its next WRITEABLE. Returns true when it is to close.
    private func applyOutsideCallback(_ actions: [WSAction], _ conn: WSConnection) -> Bool {
        if let k = actions.firstIndex(where: { if case .close = $0 { return true } else { return false } }),
           case .close(let code, let reason) = actions[k] {
            _ = apply(Array(actions[..<k]), conn)
            closeFromWriteable(conn, code, reason)
            return true
        }
        _ = apply(actions, conn)
        return false
    }

    /// A close the protocol calls for goes out after the messages already queued for the
    /// connection (the `connection_ack` of a `connection_init` that arrived in one read with a
    /// malformed message, say) when they are few: up to `flushBeforeCloseBytes`, not for a
    /// client whose queue overflowed, and not when the socket takes nothing more now. It never
    /// waits longer than `flushBeforeCloseSeconds`: a client that stops reading is then dropped
    /// without the close.
    private func flushesBeforeClose(_ conn: WSConnection) -> Bool {
        !conn.outbox.isEmpty && !conn.outbox.overflowed && conn.outbox.queuedBytes <= Self.flushBeforeCloseBytes
            && lws_send_pipe_choked(conn.wsi) == 0
    }

    static let flushBeforeCloseBytes = 64 << 10
    static let flushBeforeCloseSeconds: Int32 = 3

    /// The close waits for the queue's flush (`pendingClose` after it), at most
    /// `flushBeforeCloseSeconds`.
    private func deferClose(_ conn: WSConnection, _ code: UInt16, _ reason: String) {
        conn.pendingClose = (code, reason, true)
        lws_set_timeout(conn.wsi, PENDING_TIMEOUT_USER_OK, Self.flushBeforeCloseSeconds)
        lws_callback_on_writable(conn.wsi)
    }

    /// lws still holds the rest of a frame the socket did not take (a large answer to a client
    /// reading slowly). Returning -1 now makes lws 4.1 flush those bytes and then drop the socket
    /// without the close frame (it sends one only from the established state, and a flush
    /// before close leaves it), so a client that sent a malformed message or a duplicate id
    /// saw an abnormal closure instead of 4400 / 4409. The close goes out from WRITEABLE,
    /// which lws calls once those bytes are out; the frames still queued are not sent. A client
    /// that reads nothing more is dropped after `flushBeforeCloseSeconds`.
    private func closeAfterPartial(_ conn: WSConnection, _ code: UInt16, _ reason: String) {
        conn.pendingClose = (code, reason, false)
        lws_set_timeout(conn.wsi, PENDING_TIMEOUT_USER_OK, Self.flushBeforeCloseSeconds)
        lws_callback_on_writable(conn.wsi)
    }

    private func closeFromWriteable(_ conn: WSConnection, _ code: UInt16, _ reason: String) {
        if conn.pendingClose == nil || conn.pendingClose?.afterFlush == true {
            if flushesBeforeClose(conn) { deferClose(conn, code, reason) } else { conn.pendingClose = (code, reason, false) }
        }
        lws_callback_on_writable(conn.wsi)
        servicePassNeeded = true
    }

    /// A message over --max-message-bytes: what arrived is dropped, and so is the rest of what
    /// the client sends; the 1009 close goes out from WRITEABLE. Returning -1 here, in the middle
    /// of a frame, made lws drop the socket without the close frame whenever more of the frame
    /// was read before the close went out, and froze a compressed connection (lws 4.1).
    private func refuseOversized(_ conn: WSConnection) -> Int32 {
        conn.rx = []
        if conn.pendingClose == nil {
            conn.pendingClose = (CloseCode.messageTooBig, "Message too big (limit \(options.maxMessageBytes) bytes)", false)
            lws_callback_on_writable(conn.wsi)
        }
        return 0
    }

    /// Whether the message buffered so far, `len` more bytes and the rest of the current frame
    /// pass --max-message-bytes. The rest is the length the client announced, up to 2^63 - 1:
    /// compared, not added (a fragment then a continuation announcing 2^63 - 1 bytes overflowed
    /// the sum and crashed the server).
    private func passesMessageLimit(_ conn: WSConnection, _ wsi: OpaquePointer, adding len: Int) -> Bool {
        let have = conn.rx.count + len  // both at most the limit plus one read
        let limit = options.maxMessageBytes
        return have > limit || UInt64(lws_remaining_packet_payload(wsi)) > UInt64(limit - have)
    }

    private func process(_ conn: WSConnection, _ text: UnsafeRawBufferPointer) -> Int32 {
        guard let actions = admit(conn, text) else { return 0 }
        return apply(actions, conn)
    }

    /// Counts a message against --max-messages-per-second, then returns what it calls for — or
    /// nil when it went to the decode queue (`offloadDecodeBytes`).
    private func admit(_ conn: WSConnection, _ text: UnsafeRawBufferPointer) -> [WSAction]? {
        conn.messagesIn += 1
        let now = monotonicMs()
        if now &- conn.rateWindowStart >= 1000 {
            conn.rateWindowStart = now
            conn.rateCount = 0
        }
        conn.rateCount += 1
        if conn.rateCount > options.maxMessagesPerSecond {
            // Not 4429, which graphql-transport-ws gives to a second connection_init: a client
            // flooding has a bug or a burst, and may come back after a pause.
            return [.close(code: CloseCode.tryAgainLater,
                           reason: "Too many messages (limit \(options.maxMessagesPerSecond) per second)")]
        }
        if text.count >= Self.offloadDecodeBytes {
            decodeOffThread(conn, text)
            return nil
        }
        conn.messageBytes = text.count
        return conn.receive(text)
    }

    private func apply(_ actions: [WSAction], _ conn: WSConnection) -> Int32 {
        var wantWritable = false
        for a in actions {
            switch a {
            case .send(let m):
                _ = conn.outbox.push(.message(Frames.encode(m, conn.proto)))
                wantWritable = true
            case .execute(let op):
                startOperation(op, conn)
            case .cancel(let id, let serial):
                if let h = conn.handles.removeValue(forKey: serial) { h.cancel() }
                hub.unsubscribe(connection: conn.id, serial: serial)
                logger.debug("operation_cancelled", ["conn": String(conn.id), "id": id])
            case .close(let code, let reason):
                if flushesBeforeClose(conn) {
                    deferClose(conn, code, reason)
                    return 0
                }
                if lws_partial_buffered(conn.wsi) != 0 {
                    closeAfterPartial(conn, code, reason)
                    return 0
                }
                return closeNow(conn, code, reason)
            case .setTimer(let ms):
                conn.timerDeadline = monotonicMs() + UInt64(max(1, ms))
                conn.timerFiring = false
                tickBy(conn.timerDeadline)
            case .cancelTimer:
                conn.timerDeadline = 0
                conn.timerFiring = false
            }
        }
        if wantWritable { writableOrOverflowed(conn) }
        if stopping { closeWhenIdle(conn) }
        return 0
    }

    /// After this thread queued for `conn`: asks for WRITEABLE, or, when the queue overflowed,
    /// closes the connection from its timer. A client that does not read never becomes
    /// writeable, so an overflow caused by this thread's own message (a pong, a refusal) would
    /// otherwise wait for the keep-alive or the send timeout (`drainRound` does the same for
    /// the workers' messages).
    private func writableOrOverflowed(_ conn: WSConnection) {
        if conn.outbox.overflowed { lws_set_timer_usecs(conn.wsi, 1) } else { lws_callback_on_writable(conn.wsi) }
    }

    /// Sets the close frame's code and reason and returns -1, which the callback hands to lws so
    /// that it sends the frame and closes. Once a connection is closing, every later call returns
    /// 0: lws is already sending the close frame (or killing the connection), and a second -1 in
    /// any callback before the frame is out makes lws drop the socket without it.
    private func closeNow(_ conn: WSConnection, _ code: UInt16, _ reason: String) -> Int32 {
        if conn.closing { return 0 }
        conn.closing = true
        conn.closeCode = code
        conn.closeReason = reason
        conn.closedBy = "server"
        var bytes = Array(reason.utf8)
        if bytes.count > 123 {
            // A close reason is at most 123 bytes; cut on a UTF-8 boundary.
            var n = 123
            while n > 0 && bytes[n] & 0xC0 == 0x80 { n -= 1 }
            bytes = Array(bytes[0..<n])
        }
        bytes.withUnsafeMutableBufferPointer { b in
            lws_close_reason(conn.wsi, lws_close_status(rawValue: UInt32(code)), b.baseAddress, b.count)
        }
        return -1
    }

    /// A client whose send queue passed --max-queued-bytes (or the total) is closed with 1008 —
    /// unless its socket is full (lws holds bytes it did not take, or it takes nothing more now):
    /// the frame would wait behind bytes the client does not read, and lws would hold the
    /// connection 5 s for them, so it is dropped at the TCP level at once. Either way the tick
    /// drops it if it is still open `slowCloseGraceMs` later (lws waits 5 s for the close reply).
    private func closeSlowClient(_ conn: WSConnection) -> Int32 {
        if conn.closing { return 0 }
        slowClientsClosedCount.add(1, ordering: .relaxed)
        let due = monotonicMs() + Self.slowCloseGraceMs
        slowClientDropDue[conn.id] = due
        tickBy(due)
        let full = lws_partial_buffered(conn.wsi) != 0 || lws_send_pipe_choked(conn.wsi) != 0
        let close = full ? "dropped" : String(CloseCode.policyViolation)
        let reason: String
        if conn.outbox.overflow == .total {
            // Many clients' backlogs together: this one had one of its own when it was passed.
            let limit = queueBudget.limit
            logger.warn("slow_client_closed", ["conn": String(conn.id), "peer": conn.peer, "limit": String(limit), "scope": "total",
                                               "close": close])
            reason = "Send queue limit exceeded (\(limit) bytes for all clients): the client is not reading fast enough"
        } else {
            logger.warn("slow_client_closed", ["conn": String(conn.id), "peer": conn.peer, "limit": String(options.maxQueuedBytes),
                                               "close": close])
            reason = "Send queue limit exceeded (\(options.maxQueuedBytes) bytes): the client is not reading"
        }
        guard full else { return closeNow(conn, CloseCode.policyViolation, reason) }
        conn.closing = true
        conn.closedBy = "server"
        lws_set_timeout(conn.wsi, PENDING_TIMEOUT_USER_OK, -1)  // LWS_TO_KILL_ASYNC
        return 0
    }

    private func writeable(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let conn = wsConnection(user) else { return -1 }
        if conn.closing { return 0 }  // lws is sending (or has sent) the close frame
        conn.deflateQuiet = true
        if conn.outbox.overflowed { return closeSlowClient(conn) }
        if let pc = conn.pendingClose, !pc.afterFlush { return closeNow(conn, pc.code, pc.reason) }
        if conn.pingDue {
            conn.pingDue = false
            // Not empty: lws 4.1 reports a pong to the protocol only when it carries a payload.
            var ping = [UInt8](repeating: 0, count: Frames.headroom) + Array("ka".utf8)
            let w = ping.withUnsafeMutableBufferPointer { b in lws_write(wsi, b.baseAddress! + Frames.headroom, 2, LWS_WRITE_PING) }
            if w < 0 {
                logger.info("write_failed", ["conn": String(conn.id)])
                return -1
            }
            lws_callback_on_writable(wsi)
            return 0
        }
        // Small frames are batched while the socket takes them (lws_send_pipe_choked); with
        // permessage-deflate, one message per callback.
        let budget = conn.compressed ? 1 : 64
        var written = 0
        var bytes = 0
        while true {
            let (item, more) = conn.outbox.pop()
            guard let item else {
                if let pc = conn.pendingClose { return closeNow(conn, pc.code, pc.reason) }
                return 0
            }
            switch item.kind {
            case .close(let code, let reason):
                return closeNow(conn, code, reason)
            case .frame:
                if isStale(item, on: conn) {
                    if more { continue }  // the client completed/stopped this operation: drop its results
                    if let pc = conn.pendingClose { return closeNow(conn, pc.code, pc.reason) }
                    return 0
                }
                var frame = item.frame
                let n = frame.count - Frames.headroom
                let w = frame.withUnsafeMutableBufferPointer { b -> Int32 in
                    guard let base = b.baseAddress, n >= 0 else { return -1 }
                    return lws_write(wsi, base + Frames.headroom, n, LWS_WRITE_TEXT)
                }
                if w < Int32(n) {
                    logger.info("write_failed", ["conn": String(conn.id)])
                    return -1
                }
                if conn.compressed {
                    conn.deflateInput = frame
                    conn.deflateQuiet = false
                }
                wrote(item, on: conn)
                written += 1
                bytes += n
                if more && written < budget && bytes < 65536 && lws_send_pipe_choked(wsi) == 0 { continue }
                // A compressed message may still be draining: the next callback says when it is
                // done (deflateQuiet), which lets direct writes resume on this connection.
                if more || conn.pendingClose != nil || conn.compressed { lws_callback_on_writable(wsi) }
                return 0
            }
        }
    }

    private func closed(_ user: UnsafeMutableRawPointer?) {
        let id = sessionID(user)
        guard let conn = wsConnections.removeValue(forKey: id) else { return }
        slowClientDropDue[id] = nil
        let last = tickOrder.removeLast()
        if last !== conn {
            last.tickSlot = conn.tickSlot
            tickOrder[conn.tickSlot] = last
        }
        conn.tickSlot = -1
        if let n = wsPerClient[conn.clientGroup] { wsPerClient[conn.clientGroup] = n > 1 ? n - 1 : nil }
        waker.drainer.sockets.subtract(1, ordering: .relaxed)
        user?.storeBytes(of: UInt64(0), as: UInt64.self)
        conn.outbox.close()
        for h in conn.handles.values { h.cancel() }
        conn.handles = [:]
        hub.removeConnection(id)
        pool.dropLane(id)
        logger.info("connection_closed", [
            "conn": String(id), "peer": conn.peer, "client": conn.client, "protocol": conn.proto.rawValue,
            "code": conn.closeCode.map { String($0) } ?? "none", "reason": conn.closeReason, "by": conn.closedBy,
            "duration_ms": String(monotonicMs() &- conn.openedAt),
            "messages_in": String(conn.messagesIn), "messages_out": String(conn.messagesOut),
            "messages_direct": String(conn.messagesDirect), "writes_deferred": String(conn.writesDeferred),
            "messages_decoded_aside": String(conn.messagesDecodedAside),
        ])
    }

    // MARK: Operations (worker threads)

    private func startOperation(_ op: OperationStart, _ conn: WSConnection) {
        let handle = OperationHandle()
        let outbox = conn.outbox
        let proto = conn.proto
        let connID = conn.id
        let admission = pool.submitTimed(lane: conn.id, bytes: conn.messageBytes) { [self] session, waited in
            if !handle.cancelled { self.waits.observe(ns: waited) }
            if !handle.cancelled, let e = self.waitedTooLong(waited) {
                self.push(outbox, .operation(Frames.encode(.requestError(id: op.id, errors: [e]), proto),
                                             id: op.id, serial: op.serial, terminal: true))
                self.refused(e, client: ("conn", String(connID)), id: op.id)
                return
            }
            self.runOperation(op, handle: handle, outbox: outbox, proto: proto, connID: connID, session: session)
        }
        let error: GraphQLError
        switch admission {
        case .accepted:
            conn.handles[op.serial] = handle
            return
        case .laneFull: error = GatewayErrors.tooManyOperations(options.maxOperationsPerConnection)
        case .poolFull: error = GatewayErrors.serverBusy(operations: options.maxWaitingOperations, bytes: options.maxWaitingBytes)
        }
        // Refused at once: its `error` ends it and frees its id.
        _ = outbox.push(.operation(Frames.encode(.requestError(id: op.id, errors: [error]), proto),
                                   id: op.id, serial: op.serial, terminal: true))
        writableOrOverflowed(conn)
        refused(error, client: ("conn", String(conn.id)), id: op.id)
    }

    /// Logs a refused operation: the first, then at most one line a second with the count so far
    /// (a server shedding load refuses thousands a second).
    private func refused(_ error: GraphQLError, client: (key: String, value: String), id: String) {
        let now = monotonicMs()
        let total: Int? = refusals.withLock { r in
            r.count += 1
            guard r.count == 1 || now &- r.loggedAt >= 1000 else { return nil }
            r.loggedAt = now
            return r.count
        }
        guard let total else { return }
        logger.info("operation_refused", [client.key: client.value, "id": id, "errors": Logger.errorSummary([error.message]),
                                          "refused_total": String(total)])
    }

    /// The error for an operation that waited longer than --max-wait-ms for a worker
    /// (`WorkerPool.submitTimed`'s measure, in ns), or nil.
    private func waitedTooLong(_ waitedNs: UInt64) -> GraphQLError? {
        GatewayErrors.waitedTooLong(ns: waitedNs, limitMs: options.maxWaitMs)
    }

    private func push(_ outbox: Outbox, _ item: OutboundItem) {
        switch outbox.push(item) {
        case .wake, .overflow: waker.wake(outbox.connectionID)
        case .queued, .dropped, .closed: break
        }
    }

    private func runOperation(_ op: OperationStart, handle: OperationHandle, outbox: Outbox, proto: WireProtocol,
                              connID: UInt64, session: CatalogSession) {
        if handle.cancelled { return }
        if let fixed = options.fixedResponse {  // transport floor: no parse, no execution
            push(outbox, .result(prefix: Frames.resultPrefix(id: op.id, proto), payload: fixed, id: op.id, serial: op.serial))
            push(outbox, .operation(Frames.encode(.complete(id: op.id), proto), id: op.id, serial: op.serial, terminal: true))
            return
        }
        let startedNs = monotonicNs()
        func fail(_ errors: [GraphQLError], json: [UInt8], documentRefused: Bool) {
            webSocketDurations.observe(ns: monotonicNs() &- startedNs)
            switch proto {
            case .transport where documentRefused:
                push(outbox, .operation(Frames.encode(.requestError(id: op.id, errors: errors), proto), id: op.id, serial: op.serial, terminal: true))
            case .transport, .legacy:
                // A valid document whose variables do not coerce (graphql-transport-ws), and any
                // request that cannot run (subscriptions-transport-ws): {errors} + complete.
                push(outbox, .operation(Frames.result(id: op.id, payload: json, proto), id: op.id, serial: op.serial, terminal: false))
                push(outbox, .operation(Frames.encode(.complete(id: op.id), proto), id: op.id, serial: op.serial, terminal: true))
            }
            logger.info("operation_error", ["conn": String(connID), "id": op.id,
                                            "errors": Logger.errorSummary(errors.map(\.message))])
        }
        switch service.prepare(op.request) {
        case .failed(let result):
            fail(result.errors, json: result.json, documentRefused: result.documentRefused)
        case .ready(let prepared):
            switch prepared.kind {
            case .query:
                let result = session.execute(prepared, cancelled: { handle.cancelled })
                if handle.cancelled { return }
                guard !result.json.isEmpty else {
                    // The engine produced no response object at all: a fault of ours, not of the request.
                    logger.error("internal_fault", ["conn": String(connID), "id": op.id])
                    push(outbox, OutboundItem(kind: .close(code: CloseCode.internalServerError, reason: "Internal server error"),
                                              head: [], shared: nil, id: nil, serial: 0, terminal: false))
                    return
                }
                // The answer is queued as it is, after its message's prefix, not copied into a frame:
                // a direct write sends it from here (`DirectSpan.big`), and lws's path assembles it.
                push(outbox, .result(prefix: Frames.resultPrefix(id: op.id, proto), payload: result.json, id: op.id, serial: op.serial))
                push(outbox, .operation(Frames.encode(.complete(id: op.id), proto), id: op.id, serial: op.serial, terminal: true))
                webSocketDurations.observe(ns: monotonicNs() &- startedNs)
                if !result.errors.isEmpty {
                    logger.log(Logger.level(of: result.errors), "operation_field_errors", ["conn": String(connID), "id": op.id,
                                                           "errors": Logger.errorSummary(result.errors.map(\.message))])
                }
                logger.debug("operation_done", ["conn": String(connID), "id": op.id, "ms": String((monotonicNs() &- startedNs) / 1_000_000),
                                                 "bytes": String(result.json.count)])
            case .subscription:
                handle.markStreaming()
                switch hub.subscribe(prepared, id: op.id, serial: op.serial, proto: proto, outbox: outbox, handle: handle,
                                     limit: options.maxSubscriptionsPerConnection, session: session) {
                case .subscribed, .gone:
                    break
                case .tooMany:
                    let e = GatewayErrors.tooManySubscriptions(options.maxSubscriptionsPerConnection)
                    fail([e], json: JSONWriter.requestErrorResponse([e]), documentRefused: true)
                }
                // The service thread may wait for this operation to become idle (shutdown).
                waker.wake(connID)
            case .mutation:
                let e = GatewayErrors.mutationNotSupported
                fail([e], json: JSONWriter.requestErrorResponse([e]), documentRefused: true)
            }
        }
    }

    // MARK: HTTP

    private func httpExchange(_ user: UnsafeMutableRawPointer?) -> HTTPExchange? {
        httpExchanges[sessionID(user)]
    }

    private func httpRequest(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        guard let user else { return -1 }
        if let ex = httpExchange(user), !ex.done {
            // lws called HTTP again while this connection's request is still being answered:
            // it read a pipelined request into the headers it holds. Rather than answer one
            // request twice, the answer under way closes the connection, and the client
            // retries what went unanswered (RFC 9112 9.3.2).
            ex.pipelined = true
            logger.info("http_pipelined", ["http": String(ex.id), "peer": ex.peer])
            return 0
        }
        let path = input.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: len), as: UTF8.self) } ?? "/"
        let method = httpMethod(wsi)
        let id = nextID
        nextID += 1
        user.storeBytes(of: id, as: UInt64.self)
        let ex = HTTPExchange(id: id, wsi: wsi, method: method, path: path, peer: peerAddress(wsi))
        ex.origin = header(wsi, WSI_TOKEN_ORIGIN)
        ex.forwardedFor = header(wsi, WSI_TOKEN_X_FORWARDED_FOR)
        ex.client = clientAddress(wsi, peer: ex.peer, forwardedFor: ex.forwardedFor)
        ex.clientGroup = IPAddress.clientGroup(ex.client, ipv6Prefix: options.ipv6ClientPrefix)
        ex.keepAlive10 = header(wsi, WSI_TOKEN_HTTP) == "HTTP/1.0"
            && (header(wsi, WSI_TOKEN_CONNECTION)?.lowercased().contains("keep-alive") ?? false)
        let live = liveConnections
        httpExchanges[id] = ex

        var contentLength: Int? = nil
        switch HTTPRouting.contentLength(header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH)) {
        case .absent: break
        case .length(let n): contentLength = n
        case .invalid(let v):
            // lws took it as a negative or saturated length: never wait for that body.
            return respond(ex, HTTPRouting.invalidContentLength(v))
        }
        ex.expectsBody = (method == .post || method == .put || method == .patch) && (contentLength ?? 0) > 0
        if ex.expectsBody {
            ex.expectsContinue = header(wsi, WSI_TOKEN_HTTP_EXPECT)?.trimmingCharacters(in: .whitespaces).lowercased() == "100-continue"
            // The whole body must arrive within --keepalive-timeout seconds, else 408.
            ex.announcedLength = contentLength ?? 0
            lws_set_timer_usecs(wsi, lws_usec_t(max(1, options.keepAliveTimeout)) * 1_000_000)
        }
        if contentLength != nil && header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) != nil {
            // RFC 9112 6.3: both framings at once "ought to be handled as an error" (a proxy in
            // front may have read the body by the other one: request smuggling). lws reads the
            // Content-Length bytes; the answer then closes the connection.
            var r = HTTPRouting.plainError(400, "Bad Request: both Transfer-Encoding and Content-Length", code: "BAD_REQUEST")
            r.closeConnection = true
            return respond(ex, r)
        }

        if let problem = hostProblem(wsi) {
            var r = HTTPRouting.plainError(400, "Bad Request: \(problem)", code: "BAD_REQUEST")
            r.closeConnection = true
            return respond(ex, r)
        }
        if let host = header(wsi, WSI_TOKEN_HOST), !HTTPRouting.hostAllowed(host, allowed: hostPolicy) {
            // A browser page whose name was rebound to this address would read the answer as
            // its own (--allowed-host). Without Host (HTTP/1.0) the client is no browser.
            logger.info("http_rejected", ["http": String(id), "peer": ex.peer, "client": ex.client, "method": method.rawValue, "path": path,
                                          "status": "421", "reason": "allowed-host \(host)"])
            return respond(ex, HTTPRouting.misdirected(host: host))
        }
        if stopping {
            return respond(ex, HTTPRouting.plainError(503, "The server is shutting down", code: "SERVICE_UNAVAILABLE"))
        }
        if live >= maxConnections {
            return respond(ex, Self.tooManyConnections(maxConnections))
        }
        switch HTTPRouting.route(method: method, path: path) {
        case .respond(var r):
            if method == .options && r.status == 200 {
                r.headers += HTTPRouting.preflightHeaders(requested: header(wsi, WSI_TOKEN_HTTP_AC_REQUEST_HEADERS))
            }
            return respond(ex, r)
        case .health:
            let s = hub.status
            return respond(ex, HTTPRouting.health(version: s.version, error: s.error))
        case .metrics:
            guard options.metrics else {
                return respond(ex, HTTPRouting.plainError(404, "Not found: \(path). Metrics are off (--no-metrics)."))
            }
            return respond(ex, Metrics.response(metrics()))
        case .graphql:
            guard let format = HTTPRouting.negotiate(accept: header(wsi, WSI_TOKEN_HTTP_ACCEPT)) else {
                return respond(ex, HTTPRouting.notAcceptable)
            }
            ex.format = format
            if method == .get || method == .head {
                if header(wsi, WSI_TOKEN_KEY) != nil && header(wsi, WSI_TOKEN_UPGRADE) == nil {
                    // A WebSocket handshake whose Upgrade header a proxy in between dropped.
                    return respond(ex, HTTPRouting.upgradeStripped)
                }
                ex.ifNoneMatch = header(wsi, WSI_TOKEN_HTTP_IF_NONE_MATCH)
                switch HTTPRouting.request(fromQuery: uriArguments(wsi), format: format) {
                case .failure(let r): return respond(ex, r)
                case .success(let request): submitHTTP(ex, .request(request))
                }
                return 0
            }
            // POST
            let contentType = header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE)
            guard HTTPRouting.isJSONContentType(contentType) else {
                return respond(ex, HTTPRouting.plainError(415, "Unsupported Content-Type \(contentType ?? "none"): POST a JSON body with Content-Type: application/json"))
            }
            if let charset = HTTPRouting.unsupportedCharset(contentType) {
                return respond(ex, HTTPRouting.plainError(415, "Unsupported charset \(charset): send the JSON body as UTF-8"))
            }
            guard let length = contentLength else {
                var r = HTTPRouting.plainError(411, "Length Required: send the JSON body with a Content-Length header")
                r.closeConnection = true
                return respond(ex, r)
            }
            if length > options.maxBodyBytes {
                return respond(ex, HTTPRouting.plainError(413, "Request body too large: \(length) bytes (limit \(options.maxBodyBytes))"))
            }
            if length == 0 {
                // lws delivers BODY and BODY_COMPLETION at once for an explicit zero length.
                return 0
            }
            // RFC 9110 10.1.1: the client waits for 100 (Continue) before it sends the body.
            if ex.expectsContinue && !sendRaw(wsi, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) { return -1 }
            return 0
        }
    }

    /// Bytes written to the socket as they are (through lws, which keeps what the socket
    /// does not take and sends it first); false when the connection failed.
    private func sendRaw(_ wsi: OpaquePointer, _ bytes: [UInt8]) -> Bool {
        var buf = [UInt8](repeating: 0, count: Frames.headroom) + bytes
        let n = bytes.count
        let w = buf.withUnsafeMutableBufferPointer { b -> Int32 in
            guard let base = b.baseAddress else { return -1 }
            return lws_write(wsi, base + Frames.headroom, n, cg_lws_write_raw())
        }
        return w >= Int32(n)
    }

    /// The largest request body read and dropped before an early answer (413, 415, ...): bodies
    /// a proxy may pass on (nginx's client_max_body_size is often raised to 50 MB or more).
    static let drainBodyBytes = 256 << 20

    /// Answers now, or — when a request body is still coming — after it has been read and
    /// discarded (a body above the drain limit is not read: the connection closes after the answer).
    private func respond(_ ex: HTTPExchange, _ r: HTTPResponse) -> Int32 {
        if ex.expectsBody && ex.expectsContinue {
            // The client has not sent the body and will not until it is told to continue: the
            // final answer goes now (RFC 9110 10.1.1), and the connection closes after it.
            var r = r
            r.closeConnection = true
            ex.expectsBody = false
            answer(ex, r)
            return 0
        }
        if ex.expectsBody {
            // Read (and dropped) first, within the body timeout: a socket closed with body bytes
            // unread is reset, and the answer lost with it (nginx, still sending a 20 MB body
            // when the 413 came and the connection closed, answered 502). Up to a bound: a
            // Content-Length of 2^62 from a fast sender was read at 1.2 GB/s for the whole
            // timeout; past it the answer goes at once and the connection closes.
            if ex.announcedLength <= max(options.maxBodyBytes * 4, Self.drainBodyBytes) {
                ex.deferred = r
                return 0
            }
            var r = r
            r.closeConnection = true
            ex.expectsBody = false
            answer(ex, r)
            return 0
        }
        answer(ex, r)
        return 0
    }

    /// What GET /metrics reports, read on the service thread.
    private func metrics() -> MetricsSnapshot {
        var m = MetricsSnapshot()
        let status = hub.status
        m.catalogVersion = status.version?.version
        m.catalogReadable = status.version != nil && status.error == nil
        for conn in wsConnections.values { m.webSockets[conn.proto, default: 0] += 1 }
        m.webSocketsOpened = webSocketsOpened
        m.httpInProgress = httpExchanges.count
        m.httpResponses = httpResponses
        m.subscriptions = hub.subscriberCount
        (m.waitingOperations, m.waitingBytes) = pool.waiting
        m.operationsRefused = refusals.withLock { $0.count }
        m.queuedBytes = queueBudget.bytes
        m.slowClientsClosed = slowClientsClosed
        m.socketsRefused = refusedSocketsTotal
        m.startTime = startTime
        m.durations = [("websocket", webSocketDurations.counts), ("http", httpDurations.counts)]
        m.waits = waits.counts
        m.serviceWaits = serviceWaits
        return m
    }

    /// The exchange's answer is decided: written from its WRITEABLE callback.
    private func answer(_ ex: HTTPExchange, _ r: HTTPResponse) {
        ex.response = r
        lws_callback_on_writable(ex.wsi)
    }

    /// Most bytes of an HTTP answer's body written by one WRITEABLE callback (or `answerNow`).
    static let httpWriteBytes = 65536

    /// HTTP answers `answerNow` wrote (counted on the service thread, read by tests).
    private let httpAnswersWrittenAtOnceCount = Atomic<Int>(0)
    var httpAnswersWrittenAtOnce: Int { httpAnswersWrittenAtOnceCount.load(ordering: .sequentiallyConsistent) }

    /// HTTP answers whose body went in the same write as their headers (read by tests).
    private let httpBodiesWithHeadersCount = Atomic<Int>(0)
    var httpBodiesWithHeaders: Int { httpBodiesWithHeadersCount.load(ordering: .sequentiallyConsistent) }

    /// On the service thread, between lws's passes: an answer that fits one write and keeps
    /// its connection is written now, as its WRITEABLE callback would write it, instead of
    /// asking lws for that callback (one more epoll pass and wait, and lws's walk over every
    /// socket after it). False: not such an answer, left to `answer`.
    private func answerNow(_ ex: HTTPExchange, _ r: HTTPResponse) -> Bool {
        guard !ex.pipelined, !r.closeConnection, !stopping, r.body.count <= Self.httpWriteBytes else { return false }
        ex.response = r
        httpAnswersWrittenAtOnceCount.add(1, ordering: .sequentiallyConsistent)
        if httpWriteable(ex.wsi, lws_wsi_user(ex.wsi)) != 0 {
            // What the callback's -1 would have done: close it (at lws's next pass).
            lws_set_timeout(ex.wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
        }
        return true
    }

    private func httpBody(_ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        guard let ex = httpExchange(user) else { return -1 }
        if ex.deferred != nil || ex.response != nil { ex.received += len; return 0 }
        guard let input, len > 0 else { return 0 }
        ex.received += len
        if ex.body.count + len > options.maxBodyBytes {
            ex.body = []
            ex.deferred = HTTPRouting.plainError(413, "Request body too large (limit \(options.maxBodyBytes) bytes)")
            return 0
        }
        ex.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: len))
        return 0
    }

    private func httpBodyComplete(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let ex = httpExchange(user) else { return -1 }
        if ex.complete {
            // Bytes came after the body (a pipelined request, a stray CRLF). lws 4.1 keeps them
            // and calls BODY_COMPLETION again for them, consuming nothing, in a loop that never
            // sleeps in poll() and never lets this connection's WRITEABLE run. So the answer is
            // taken from the worker here (until it is ready, each call returns at once: the
            // service thread spins, serving its other sockets, for as long as the query runs)
            // and written at once, and the connection closes after it: the client retries
            // what went unanswered (RFC 9112 9.3.2).
            if !ex.pipelined {
                ex.pipelined = true
                logger.info("http_pipelined", ["http": String(ex.id), "peer": ex.peer])
            }
            if ex.response == nil, let r = ex.takeResult() { ex.response = r }
            guard ex.response != nil else { return 0 }
            while !ex.done {
                if httpWriteable(wsi, user) != 0 { break }
            }
            return -1
        }
        ex.complete = true
        if ex.expectsBody { lws_set_timer_usecs(wsi, cg_lws_timer_cancel()) }
        ex.expectsBody = false
        if ex.response != nil { return 0 }
        if let d = ex.deferred {
            ex.deferred = nil
            answer(ex, d)
            return 0
        }
        guard ex.method == .post else { return 0 }
        let body = ex.body
        ex.body = []
        submitHTTP(ex, .body(body))
        return 0
    }

    private enum HTTPInput: Sendable {
        case request(GraphQLRequest)
        case body([UInt8])
    }

    private func submitHTTP(_ ex: HTTPExchange, _ input: HTTPInput) {
        // The query may run longer than lws's HTTP content timeout: the exchange is ours now.
        lws_set_timeout(ex.wsi, NO_PENDING_TIMEOUT, 0)
        let format = ex.format
        let method = ex.method
        let ifNoneMatch = ex.ifNoneMatch
        let bytes: Int
        switch input {
        case .request(let r): bytes = r.query.utf8.count
        case .body(let b): bytes = b.count
        }
        // Strict: a request is not a connection that asks for one thing at a time (its
        // address's lane may hold thousands); over the shared bounds it is told to come back.
        let admission = pool.submitTimed(lane: httpLane(ex), bytes: bytes, token: ex.id, strict: true, running: options.workers,
                                         waiting: options.maxWaitingOperations) { [self] session, waited in
            if ex.handle.cancelled { return }
            self.waits.observe(ns: waited)
            if let e = self.waitedTooLong(waited) {
                self.refused(e, client: ("http", String(ex.id)), id: "-")
                ex.result.withLock { $0 = Self.busy(e) }
                self.waker.wakeServiceThread(ex.id)
                return
            }
            let startedNs = monotonicNs()
            let response: HTTPResponse
            var result: ExecutionResult? = nil
            let request: Result<GraphQLRequest, HTTPResponse>
            switch input {
            case .request(let r): request = .success(r)
            case .body(let b): request = HTTPRouting.request(fromBody: b, format: format)
            }
            switch request {
            case .failure(let r): response = r
            case .success(_) where self.options.fixedResponse != nil:  // transport floor
                response = HTTPResponse(status: 200, contentType: format.contentType, body: self.options.fixedResponse ?? [])
            case .success(let r):
                (response, result) = HTTPRouting.execute(r, method: method, format: format, service: self.service, session: session,
                                                         ifNoneMatch: ifNoneMatch, cancelled: { ex.handle.cancelled })
            }
            if ex.handle.cancelled {
                // Its client went away, or the shutdown deadline answered it with a 503: what
                // was computed is not sent, so no status is logged as if it had been.
                self.logger.log(self.hub.isAbandoned ? .info : .debug, "operation_cancelled", ["http": String(ex.id),
                                "errors": Logger.errorSummary(result?.errors.map(\.message) ?? [])])
            } else if let result, !result.errors.isEmpty {
                self.logger.log(Logger.level(of: result.errors), "operation_error", ["http": String(ex.id), "status": String(response.status),
                                                     "errors": Logger.errorSummary(result.errors.map(\.message))])
            }
            if !ex.handle.cancelled { self.httpDurations.observe(ns: monotonicNs() &- startedNs) }
            ex.result.withLock { $0 = response }
            self.waker.wakeServiceThread(ex.id)
        }
        if admission != .accepted {
            let e = GatewayErrors.serverBusy(operations: options.maxWaitingOperations, bytes: options.maxWaitingBytes)
            refused(e, client: ("http", String(ex.id)), id: "-")
            answer(ex, Self.busy(e))
        }
    }

    /// A SERVER_BUSY answer over HTTP: 503, come back in a second.
    private static func busy(_ e: GraphQLError) -> HTTPResponse {
        var r = HTTPRouting.plainError(503, e.message, code: "SERVER_BUSY")
        r.headers.append(("Retry-After", "1"))
        return r
    }

    private func httpWriteable(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
        guard let ex = httpExchange(user), var r = ex.response, !ex.done else { return 0 }
        if ex.pipelined { r.closeConnection = true }
        // HEAD and 304: the headers of the answer (its Content-Length included), no body.
        let sendsBody = ex.method != .head && !r.omitsBody
        if !ex.headersSent {
            // A body that fits one write goes with its headers, on a connection of its own (not
            // a stream of HTTP/2, whose headers and data are frames of their own).
            let together = sendsBody && !r.body.isEmpty && r.body.count <= Self.httpWriteBytes && lws_get_network_wsi(wsi) == wsi
            // Counted before the write, as `answerNow` counts: a client that has its answer finds
            // it counted (after the write, a test reading the count raced the service thread).
            if together { httpBodiesWithHeadersCount.add(1, ordering: .sequentiallyConsistent) }
            guard writeHeaders(wsi, r, origin: ex.origin, keepAlive10: ex.keepAlive10, withBody: together) else { return -1 }
            ex.headersSent = true
            if together { ex.offset = r.body.count }
        }
        if sendsBody && ex.offset < r.body.count {
            let n = min(Self.httpWriteBytes, r.body.count - ex.offset)
            let final = ex.offset + n == r.body.count
            var chunk = [UInt8](repeating: 0, count: Frames.headroom + n)
            chunk.withUnsafeMutableBufferPointer { c in
                r.body.withUnsafeBufferPointer { b in
                    if let cb = c.baseAddress, let bb = b.baseAddress {
                        (cb + Frames.headroom).update(from: bb + ex.offset, count: n)
                    }
                }
            }
            let w = chunk.withUnsafeMutableBufferPointer { c -> Int32 in
                guard let base = c.baseAddress else { return -1 }
                return lws_write(wsi, base + Frames.headroom, n, final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
            }
            if w < Int32(n) { return -1 }
            ex.offset += n
            if !final {
                lws_callback_on_writable(wsi)
                return 0
            }
        }
        ex.done = true
        leaveLane(ex)
        // Counted here, where every answer through the request path ends and is logged: a
        // pipelined request's answer is taken from its worker in BODY_COMPLETION, not `answer`.
        httpResponses[r.status, default: 0] += 1
        logger.debug("http_request", ["http": String(ex.id), "peer": ex.peer, "client": ex.client, "forwarded_for": ex.forwardedFor ?? "-",
                                      "method": ex.method.rawValue, "path": ex.path,
                                      "status": String(r.status), "bytes": String(r.body.count),
                                      "ms": String(monotonicMs() &- ex.startedAt)])
        if r.closeConnection || stopping {
            // The client may still be sending (a pipelined request): its socket lingers, so
            // that the close does not reset the connection under the answer (RFC 9112 9.6).
            // Not for a stream of HTTP/2, whose connection goes on.
            if !stopping && lws_get_network_wsi(wsi) == wsi {
                let now = monotonicMs()
                if lingering.add(lws_get_socket_fd(wsi), now: now, written: lws_partial_buffered(wsi) == 0) { tickBy(now + Self.tickMs) }
            }
            return -1
        }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }

    /// HTTP connections closed after an answer, kept until the client's close (`tick`).
    let lingering = LingeringCloses()

    /// The body timer fired before the body was complete: the answer already decided (413,
    /// 415, ...) or else 408, then close (if the peer is gone, the write fails and the
    /// connection just closes).
    private func httpBodyTimeout(_ ex: HTTPExchange) -> Int32 {
        guard ex.expectsBody, ex.response == nil else { return 0 }
        ex.expectsBody = false
        ex.body = []
        let seconds = max(1, options.keepAliveTimeout)
        logger.info("http_body_timeout", ["http": String(ex.id), "peer": ex.peer, "received": String(ex.received),
                                          "announced": String(ex.announcedLength), "seconds": String(seconds)])
        var r = ex.deferred ?? HTTPRouting.bodyTimeout(seconds: seconds, received: ex.received, announced: ex.announcedLength)
        r.closeConnection = true
        ex.deferred = nil
        answer(ex, r)
        return 0
    }

    /// Bytes lws could not parse as an HTTP request (unknown method, binary), handed over as a
    /// raw socket: one 400/501 answer, then the write side is shut and whatever else arrives is
    /// discarded until the peer closes (or 5 s pass), so the answer is not lost to a reset.
    private func unparsableRequest(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?,
                                   _ input: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        guard let user else { return -1 }
        if user.load(as: UInt64.self) != 0 { return 0 }
        user.storeBytes(of: UInt64(1), as: UInt64.self)
        let r = HTTPRouting.unparsableRequest(UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : len))
        logger.info("http_unparsable", ["peer": peerAddress(wsi), "status": String(r.status), "bytes": String(len)])
        if !sendRaw(wsi, HTTPRouting.rawResponse(r, date: httpDate.now(), anyOrigin: options.corsOrigins == nil)) { return -1 }
        httpResponses[r.status, default: 0] += 1
        if lws_send_pipe_choked(wsi) == 0 { shutdown(lws_get_socket_fd(wsi), Int32(SHUT_WR)) }
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, 5)
        return 0
    }

    private func httpRelease(_ user: UnsafeMutableRawPointer?) {
        let id = sessionID(user)
        guard id != 0, let ex = httpExchanges.removeValue(forKey: id) else { return }
        user?.storeBytes(of: UInt64(0), as: UInt64.self)
        ex.handle.cancel()
        // A job of its still waiting leaves its address's lane (shared, so not dropped whole):
        // left there, it counted against --max-waiting-operations and --max-waiting-bytes, and
        // held its body, until a worker reached it.
        if let lane = ex.lane { pool.withdraw(lane: lane, token: ex.id) }
        leaveLane(ex)
    }

    /// The exchange was answered or went away: its address has one request fewer.
    private func leaveLane(_ ex: HTTPExchange) {
        guard ex.lane != nil else { return }
        ex.lane = nil
        guard var p = httpPeers[ex.clientGroup] else { return }
        p.requests -= 1
        httpPeers[ex.clientGroup] = p.requests == 0 ? nil : p
    }

    /// The lane of the HTTP requests from one address: each address takes its turn at the
    /// workers as one WebSocket does, so a client sending thousands of requests at once holds
    /// back the others by about one operation each, not by its thousands. It may use every
    /// worker. The address is the client's (`HTTPExchange.clientGroup`): behind a reverse proxy
    /// every request is the proxy's address unless it is a --trusted-proxy, whose
    /// X-Forwarded-For then names the client; an IPv6 client's is its --ipv6-client-prefix.
    private func httpLane(_ ex: HTTPExchange) -> UInt64 {
        var p = httpPeers[ex.clientGroup] ?? (lane: nextID, requests: 0)
        if p.requests == 0 { p.lane = nextID; nextID += 1 }
        p.requests += 1
        httpPeers[ex.clientGroup] = p
        ex.lane = p.lane
        return p.lane
    }
}

/// One connection's part of a `DirectChunk`: the bytes (`span`) and the socket, and after the
/// send what send(2) or sendmsg(2) returned and its errno.
struct DirectWrite {
    let conn: WSConnection
    let fd: Int32
    let span: DirectSpan
    var result = 0
    var errno: Int32 = 0
}

/// Where a connection's bytes of a `DirectChunk` are: its slice of the arena — frame headers and
/// texts, several messages back to back — with, when one of its texts is large (a page's answer),
/// that text sent from its own buffer instead of copied: the slice's first `count` bytes (ending
/// with that frame's header, or with a `next`'s prefix), then `big` from `bigFrom`, then the
/// slice's next `after` bytes (a `next`'s closing brace, a `complete`), with sendmsg and three
/// iovecs.
struct DirectSpan {
    let start: Int
    let count: Int
    var big: [UInt8]? = nil
    var bigFrom = 0
    var after = 0

    /// The bytes it puts on the wire.
    var total: Int { count + (big.map { $0.count - bigFrom } ?? 0) + after }

    /// What a write that took only `sent` of `total` bytes left, in order, from `arena` and `big`.
    func unsent(_ arena: [UInt8], sent: Int) -> [UInt8] {
        var rest: [UInt8] = []
        rest.reserveCapacity(max(0, total - sent))
        if sent < count { rest += arena[(start + sent)..<(start + count)] }
        var done = count
        if let big {
            let n = big.count - bigFrom
            if sent < done + n { rest += big[(bigFrom + max(0, sent - done))...] }
            done += n
        }
        if sent < done + after { rest += arena[(start + count + max(0, sent - done))..<(start + count + after)] }
        return rest
    }
}

/// Frames the gateway writes to sockets itself rather than through lws's WRITEABLE callbacks
/// (`GatewayServer.drainWakes`), with one non-blocking send(2) or sendmsg(2) per connection.
/// A value filled by the service thread without locks or dynamic exclusivity checks, then
/// handed to a send queue in a `DirectChunkBox`.
struct DirectChunk {
    var arena: [UInt8] = []
    var writes: [DirectWrite] = []

    /// On loopback each send costs the sender ~10 µs of kernel time (the receiver's TCP path
    /// and wake-up run inline), so a fan-out to thousands is spread over --send-threads queues.
    mutating func send() {
        arena.withUnsafeBytes { a in
            guard let base = a.baseAddress else { return }
            let flags = Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)
            for i in writes.indices {
                let fd = writes[i].fd, span = writes[i].span, start = span.start, n = span.count
                let w: Int
                if let big = span.big {
                    let from = span.bigFrom, after = span.after
                    w = big.withUnsafeBytes { t -> Int in
                        guard let text = t.baseAddress else { return -1 }
                        var iov = (iovec(iov_base: UnsafeMutableRawPointer(mutating: base + start), iov_len: n),
                                   iovec(iov_base: UnsafeMutableRawPointer(mutating: text + from), iov_len: t.count - from),
                                   iovec(iov_base: UnsafeMutableRawPointer(mutating: base + start + n), iov_len: after))
                        return withUnsafeMutableBytes(of: &iov) { v -> Int in
                            var msg = msghdr()
                            msg.msg_iov = v.baseAddress?.assumingMemoryBound(to: iovec.self)
                            msg.msg_iovlen = after > 0 ? 3 : 2
                            return Glibc.sendmsg(fd, &msg, flags)
                        }
                    }
                } else {
                    w = Glibc.send(fd, base + start, n, flags)
                }
                writes[i].result = w
                if w < 0 { writes[i].errno = Glibc.errno }
            }
        }
    }
}

/// A sealed chunk: from its hand-over to a send queue until the service thread's
/// `group.wait()`, only that queue touches it (and only its sockets, bytes and results, never
/// the connections).
final class DirectChunkBox {
    var chunk: DirectChunk
    init(_ chunk: DirectChunk) { self.chunk = chunk }
}

private struct DirectChunkJob: @unchecked Sendable {
    let box: DirectChunkBox
    func send() { box.chunk.send() }
}

/// Where the decode queue leaves a connection's decoded message for the service thread.
final class DecodedSlot: Sendable {
    private let value = Mutex<DecodedClientMessage?>(nil)
    func put(_ m: DecodedClientMessage) { value.withLock { $0 = m } }
    func take() -> DecodedClientMessage? { value.withLock { v in defer { v = nil }; return v } }
}
