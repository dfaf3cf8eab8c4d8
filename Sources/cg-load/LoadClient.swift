import CWebSockets
import Foundation
import Histogram
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Monotonic clock in nanoseconds.
@inline(__always)
func nowNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// The one lws callback; it runs on the thread that calls `LoadClient.service` and reaches the
/// client through the context's user pointer.
private func loadCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ len: Int
) -> Int32 {
    guard let wsi, let ctx = lws_get_context(wsi), let raw = lws_context_user(ctx) else { return 0 }
    let client = Unmanaged<LoadClient>.fromOpaque(raw).takeUnretainedValue()
    return client.handle(wsi, reason, input, len)
}

/// Where to connect: ws://HOST:PORT/PATH.
struct Endpoint {
    var host: String
    var port: Int32
    var path: String

    init?(_ url: String) {
        guard url.hasPrefix("ws://") else { return nil }
        let rest = url.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
        if let colon = authority.lastIndex(of: ":"), let p = Int32(authority[authority.index(after: colon)...]) {
            host = String(authority[..<colon]); port = p
        } else {
            host = String(authority); port = 80
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" { host = "127.0.0.1" }
        guard !host.isEmpty else { return nil }
    }
}

/// A set of connections that run the same operations.
struct GroupSpec {
    var name: String
    var connections: Int
    /// Operations kept in flight on each connection while the group is active (0: none).
    var inflight: Int
    /// `payload` objects of `subscribe` messages ({"query":...,"variables":...}), used in turn.
    var payloads: [[UInt8]]
    /// Phases (indexes) in which the group sends operations.
    var activePhases: Set<Int>
}

/// One measured stretch of a run.
struct PhaseSpec {
    var name: String
    var seconds: Double
    /// False for warm-up: operations run but nothing is recorded.
    var recorded: Bool
}

/// Per group and phase: completed operations and the latency of each (send → `next`).
struct GroupPhaseStats {
    var histogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three)
    var completed = 0
    var errors = 0
    var responseBytes = 0
    var checked = 0
    var fieldErrors = 0
}

struct PhaseResult {
    var name: String
    var wallSeconds: Double
    var clientCPUSeconds: Double
    var serverCPUSeconds: Double?
    var groups: [GroupPhaseStats]
}

final class Connection {
    enum State { case pending, connecting, handshaking, awaitingAck, ready, failed, closed }
    let index: Int
    let group: Int
    var wsi: OpaquePointer?
    var state: State = .pending
    var rx: [UInt8] = []
    var needInit = false
    var needPong = false
    /// Operations to start at the next writable callback.
    var toStart = 0
    var inflight: [Int: (sent: UInt64, gotNext: Bool)] = [:]
    var nextID = 1
    var payloadCursor: Int
    /// A one-off subscription to send (fan-out and idle modes), and whether its first `next` came.
    var subscribePayload: [UInt8]?
    var subscribed = false
    var firstNext = false
    var closing = false
    /// Raw framing: upgrade sent, a ping to answer, a fragmented message being reassembled.
    var sentUpgrade = false
    /// The protocol the server picked for this connection (from its upgrade response).
    var speaks: Subprotocol = .transport
    var pingPayload: [UInt8]?
    var frag: [UInt8] = []

    init(index: Int, group: Int) {
        self.index = index; self.group = group; payloadCursor = index
    }
}

/// Many graphql-transport-ws (or legacy graphql-ws) connections on one libwebsockets client
/// context, all served by the calling thread (one lws service loop). Operations are `subscribe`
/// (`start`) messages with numeric ids; each completes with `next` (`data`) + `complete` (or
/// `error`).
final class LoadClient {
    /// How WebSocket frames are made and parsed. `lws`: libwebsockets' own ws client role.
    /// `raw`: lws raw client sockets with this file's RFC 6455 framing — lws 4.1's client parser
    /// handles payload one byte per call (about 4 ns a byte), which made the client the bottleneck
    /// on 50 KB answers; the raw path handles whole frames in place.
    enum Framing: String { case raw, lws }
    let framing: Framing
    /// What the upgrade offers; each connection then speaks the protocol the server picked.
    let subprotocol: SubprotocolChoice
    let endpoint: Endpoint
    let groups: [GroupSpec]
    var connections: [Connection] = []
    private var context: OpaquePointer?
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let ticker: Ticker
    private var scratch: [UInt8]
    private let headroom = Int(cg_lws_pre())

    /// Connection phase.
    private var connectPending = 0
    private var nextToConnect = 0
    var maxPendingConnects = 256
    private(set) var readyCount = 0
    /// Connections that were acknowledged at some point (closing does not lower it).
    private(set) var acknowledged = 0
    private(set) var failedCount = 0
    private(set) var closedCount = 0
    private(set) var protocolErrors = 0
    /// Acknowledged connections that speak the legacy graphql-ws protocol.
    private(set) var acknowledgedLegacy = 0
    var lastFailure: String?

    /// Operation phases.
    private var phaseIndex = -1
    private var phaseRecorded = false
    private var phaseSpecs: [PhaseSpec] = []
    private var stats: [[GroupPhaseStats]] = []
    /// Check the payload of the first responses of each group, then one in `checkEvery`.
    var checkEvery = 64
    private var sendingEnabled = false

    /// Called on the service thread as each phase of `run` begins, with its index.
    var onPhaseStart: ((Int) -> Void)?

    /// Called for every `next` of a one-off subscription, with the payload bytes and arrival time.
    var onSubscriptionNext: ((Connection, UnsafePointer<UInt8>, Range<Int>, UInt64) -> Void)?
    private(set) var subscriptionFirstNexts = 0
    private(set) var totalBytesIn = 0

    /// `tickMs`: how often the service loop is woken when no traffic arrives, so deadlines and
    /// stop conditions are noticed (each wake-up is a poll() over every socket of the context).
    init(endpoint: Endpoint, groups: [GroupSpec], framing: Framing = .raw, subprotocol: SubprotocolChoice = .auto,
         tickMs: Int = 10) throws {
        self.framing = framing
        self.subprotocol = subprotocol
        self.endpoint = endpoint
        self.groups = groups
        scratch = [UInt8](repeating: 0, count: Int(cg_lws_pre()) + 4096)
        var index = 0
        for (g, spec) in groups.enumerated() {
            for _ in 0..<spec.connections {
                connections.append(Connection(index: index, group: g))
                index += 1
            }
        }
        raiseFileLimit(needed: connections.count + 64)
        lws_set_log_level(Int32(LLL_ERR), nil)
        protocols = .allocate(capacity: 2)
        protocols[0] = lws_protocols(name: strdup("cg-load"), callback: loadCallback, per_session_data_size: 0,
                                     rx_buffer_size: 65536, id: 0, user: nil, tx_packet_size: 0)
        protocols[1] = lws_protocols()
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.gid = -1
        info.uid = -1
        info.fd_limit_per_thread = UInt32(connections.count + 64)
        info.pt_serv_buf_size = 65536
        info.timeout_secs = 30
        ticker = Ticker()
        info.user = nil
        guard let ctx = withExtendedLifetime(self, { () -> OpaquePointer? in
            info.user = Unmanaged.passUnretained(self).toOpaque()
            return lws_create_context(&info)
        }) else {
            throw LoadError("could not create the libwebsockets client context")
        }
        context = ctx
        ticker.start(ctx, intervalMs: tickMs)
    }

    deinit {
        ticker.stop()
        if let context { lws_context_destroy(context) }
        free(UnsafeMutableRawPointer(mutating: protocols[0].name))
        protocols.deallocate()
    }

    // MARK: Driving

    /// Microseconds to sleep after each service pass, so that the next poll() finds many sockets
    /// ready at once: lws's poll() loop costs O(sockets) per wake-up, which with thousands of
    /// connections and one message per wake-up made the client the bottleneck. Adds at most this
    /// much to a measured latency (fan-out and idle modes only).
    var coalesceMicros: UInt32 = 0

    /// Runs the lws loop until `done` returns true or `deadline` (monotonic ns) passes.
    func service(until deadline: UInt64, _ done: () -> Bool) {
        guard let context else { return }
        while !done() && nowNs() < deadline {
            startConnects()
            if lws_service(context, 0) < 0 { break }
            if coalesceMicros > 0 { usleep(coalesceMicros) }
        }
    }

    /// Reads every ready raw-framed connection through epoll instead of lws's poll() loop until
    /// `done` returns true or `deadline` passes, then hands the sockets back to lws untouched
    /// (lws is not serviced meanwhile, so it never reads them concurrently). poll() costs
    /// O(sockets) per wake-up in the kernel — with 10,000 subscribers that scan was most of the
    /// client's CPU and competed with the server on a 2-core machine; epoll_wait costs O(ready).
    /// Pings and `ping` messages are answered with a direct send(). Falls back to `service` with
    /// lws framing. Returns false when epoll could not be set up (then `service` ran instead).
    @discardableResult
    func serviceEpoll(until deadline: UInt64, _ done: () -> Bool) -> Bool {
        guard framing == .raw else { service(until: deadline, done); return false }
        let ep = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard ep >= 0 else { service(until: deadline, done); return false }
        defer { close(ep) }
        for c in connections where c.state == .ready {
            guard let wsi = c.wsi else { continue }
            let fd = lws_get_socket_fd(wsi)
            guard fd >= 0 else { continue }
            var ev = epoll_event()
            ev.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
            ev.data.u64 = UInt64(c.index)
            _ = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)
        }
        var events = [epoll_event](repeating: epoll_event(), count: 1024)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while !done() && nowNs() < deadline {
            let n = events.withUnsafeMutableBufferPointer { epoll_wait(ep, $0.baseAddress, Int32($0.count), 20) }
            if n < 0 { if errno == EINTR { continue }; break }
            for k in 0..<Int(n) {
                let c = connections[Int(events[k].data.u64)]
                guard c.state == .ready, let wsi = c.wsi else { continue }
                let fd = lws_get_socket_fd(wsi)
                let got = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if got < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                var keep = got > 0
                if keep {
                    totalBytesIn += got
                    keep = buffer.withUnsafeBufferPointer { rawReceived(c, $0.baseAddress!, got) }
                }
                if keep && (c.pingPayload != nil || c.needPong) {
                    batchBegin()
                    if let ping = c.pingPayload { c.pingPayload = nil; frame(opcode: 0xA, ping) }
                    if c.needPong { c.needPong = false; frame(opcode: 0x1, Array(#"{"type":"pong"}"#.utf8)) }
                    let sent = batch.withUnsafeBufferPointer { b in
                        send(fd, b.baseAddress! + headroom, b.count - headroom, Int32(MSG_NOSIGNAL))
                    }
                    keep = sent == batch.count - headroom
                }
                if !keep {
                    // Closed or broken: let lws see it (and run its close callback) once it is
                    // serviced again; stop watching it here.
                    if !c.closing { lastFailure = lastFailure ?? "server closed a connection" }
                    epoll_ctl(ep, EPOLL_CTL_DEL, fd, nil)
                    readyCount -= 1; closedCount += 1
                    c.state = .closed
                    c.closing = true
                }
            }
        }
        return true
    }

    /// Opens every connection (at most `maxPendingConnects` handshakes at once) and waits for
    /// each `connection_ack`. Returns the time it took.
    func connectAll(timeoutSeconds: Double) -> Double {
        let t0 = nowNs()
        service(until: t0 + UInt64(timeoutSeconds * 1e9)) { readyCount + failedCount + closedCount >= connections.count }
        return Double(nowNs() - t0) / 1e9
    }

    /// Sends each ready connection's one-off subscription and waits for every first `next`.
    func subscribeAll(_ payload: [UInt8], timeoutSeconds: Double) -> Double {
        let t0 = nowNs()
        for c in connections where c.state == .ready {
            c.subscribePayload = payload
            if let wsi = c.wsi { lws_callback_on_writable(wsi) }
        }
        // Done when every connection has its first `next` or is gone (closed by the server).
        service(until: t0 + UInt64(timeoutSeconds * 1e9)) { connections.allSatisfy { $0.firstNext || $0.state != .ready } }
        if ProcessInfo.processInfo.environment["CG_LOAD_DEBUG"] != nil {
            var h: [String: Int] = [:]
            for c in connections { h["\(c.state) first=\(c.firstNext) sub=\(c.subscribed)", default: 0] += 1 }
            FileHandle.standardError.write(Data("subscribeAll: \(h) pendingConnects=\(connectPending) failure=\(lastFailure ?? "-")\n".utf8))
        }
        return Double(nowNs() - t0) / 1e9
    }

    /// Runs the phases in order; groups send only in their active phases. Returns per-phase
    /// statistics (recorded phases only), then lets in-flight operations finish.
    func run(phases: [PhaseSpec], serverPID: Int32?) -> [PhaseResult] {
        phaseSpecs = phases
        stats = phases.map { _ in groups.map { _ in GroupPhaseStats() } }
        var results: [PhaseResult] = []
        sendingEnabled = true
        for (i, phase) in phases.enumerated() {
            phaseIndex = i
            phaseRecorded = phase.recorded
            onPhaseStart?(i)
            for c in connections where c.state == .ready {
                let spec = groups[c.group]
                if spec.activePhases.contains(i) {
                    let want = spec.inflight - c.inflight.count - c.toStart
                    if want > 0 { c.toStart += want; if let wsi = c.wsi { lws_callback_on_writable(wsi) } }
                } else {
                    c.toStart = 0
                }
            }
            let cpu0 = processCPUSeconds(), server0 = serverPID.flatMap(serverCPUSeconds), t0 = nowNs()
            service(until: t0 + UInt64(phase.seconds * 1e9)) { false }
            let wall = Double(nowNs() - t0) / 1e9
            let cpu = processCPUSeconds() - cpu0
            let server = server0.flatMap { s0 in serverPID.flatMap(serverCPUSeconds).map { $0 - s0 } }
            if phase.recorded {
                results.append(PhaseResult(name: phase.name, wallSeconds: wall, clientCPUSeconds: cpu,
                                           serverCPUSeconds: server, groups: stats[i]))
            }
        }
        // Drain: start nothing new, let what is in flight complete (bounded).
        sendingEnabled = false
        phaseRecorded = false
        for c in connections { c.toStart = 0 }
        service(until: nowNs() + 10_000_000_000) { connections.allSatisfy { $0.inflight.isEmpty || $0.state != .ready } }
        return results
    }

    /// Closes every connection with 1000 and waits (bounded) for the closes.
    func closeAll(timeoutSeconds: Double = 5) {
        for c in connections where c.state == .ready || c.state == .awaitingAck || c.state == .handshaking {
            c.closing = true
            if let wsi = c.wsi { lws_callback_on_writable(wsi) }
        }
        service(until: nowNs() + UInt64(timeoutSeconds * 1e9)) {
            connections.allSatisfy { $0.state == .closed || $0.state == .failed || $0.state == .pending }
        }
    }

    private func startConnects() {
        guard let context else { return }
        while connectPending < maxPendingConnects && nextToConnect < connections.count {
            let c = connections[nextToConnect]
            nextToConnect += 1
            connectPending += 1
            c.state = .connecting
            var info = lws_client_connect_info()
            info.context = context
            info.port = endpoint.port
            info.ietf_version_or_minus_one = -1
            info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: c.index + 1)
            let host = endpoint.host, path = endpoint.path
            let authority = "\(host):\(endpoint.port)"
            let wsi = host.withCString { h in
                path.withCString { p in
                    authority.withCString { a in
                        subprotocol.offer.withCString { proto in
                            "cg-load".withCString { local in
                                "RAW".withCString { method in
                                    info.address = h; info.path = p; info.host = a; info.origin = a
                                    info.protocol = proto; info.local_protocol_name = local
                                    if framing == .raw { info.method = method }
                                    return lws_client_connect_via_info(&info)
                                }
                            }
                        }
                    }
                }
            }
            if wsi == nil && c.state == .connecting {
                c.state = .failed
                failedCount += 1
                connectPending -= 1
                lastFailure = lastFailure ?? "lws_client_connect_via_info failed"
            }
        }
    }

    // MARK: Callback

    fileprivate func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons,
                            _ input: UnsafeMutableRawPointer?, _ len: Int) -> Int32 {
        guard let raw = lws_get_opaque_user_data(wsi) else { return 0 }
        let index = Int(bitPattern: raw) - 1
        guard index >= 0, index < connections.count else { return 0 }
        let c = connections[index]
        switch reason {
        case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
            // The upgrade response's headers, here and not at ESTABLISHED: lws 4.1 detaches the
            // header table before that callback (lib/roles/ws/client-ws.c).
            var name = [CChar](repeating: 0, count: 64)
            let got = lws_hdr_copy(wsi, &name, Int32(name.count), WSI_TOKEN_PROTOCOL)
            let chosen = got > 0 ? String(decoding: name.prefix(Int(got)).map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
            guard let spoken = subprotocol.spoken(chosen) else {
                lastFailure = lastFailure ?? "the server picked subprotocol \"\(chosen ?? "")\", not one offered (\(subprotocol.offer))"
                return -1
            }
            c.speaks = spoken
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            c.wsi = wsi
            c.state = .awaitingAck
            c.needInit = true
            lws_callback_on_writable(wsi)
        case LWS_CALLBACK_RAW_CONNECTED:
            c.wsi = wsi
            c.state = .handshaking
            lws_callback_on_writable(wsi)
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            if c.state == .connecting || c.state == .handshaking || c.state == .awaitingAck { connectPending -= 1 }
            if c.state != .failed && c.state != .closed {
                c.state = .failed
                failedCount += 1
            }
            if lastFailure == nil {
                lastFailure = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection error"
            }
            c.wsi = nil
        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard let input else { return 0 }
            totalBytesIn += len
            let final = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
            if c.rx.isEmpty && final {
                received(c, UnsafePointer(input.assumingMemoryBound(to: UInt8.self)), len)
            } else {
                c.rx.append(contentsOf: UnsafeRawBufferPointer(start: input, count: len))
                if final {
                    c.rx.withUnsafeBufferPointer { b in
                        if let base = b.baseAddress { received(c, base, b.count) }
                    }
                    c.rx.removeAll(keepingCapacity: c.rx.capacity <= 1 << 20)
                }
            }
        case LWS_CALLBACK_RAW_RX:
            guard let input else { return 0 }
            totalBytesIn += len
            return rawReceived(c, UnsafePointer(input.assumingMemoryBound(to: UInt8.self)), len) ? 0 : -1
        case LWS_CALLBACK_CLIENT_WRITEABLE, LWS_CALLBACK_RAW_WRITEABLE:
            return writable(c, wsi)
        case LWS_CALLBACK_CLIENT_CLOSED, LWS_CALLBACK_RAW_CLOSE:
            switch c.state {
            case .connecting, .handshaking, .awaitingAck: connectPending -= 1; closedCount += 1
            case .ready: readyCount -= 1; closedCount += 1
            case .pending, .failed, .closed: break
            }
            if !c.closing && c.state == .ready { lastFailure = lastFailure ?? "server closed a connection" }
            if !c.closing && c.state == .awaitingAck { lastFailure = lastFailure ?? "server closed a connection before connection_ack" }
            c.state = .closed
            c.wsi = nil
        default:
            break
        }
        return 0
    }

    /// Raw framing: the HTTP upgrade response, then RFC 6455 frames (the server's are unmasked).
    /// Whole frames are handled in place; only a partial frame is kept for the next read.
    private func rawReceived(_ c: Connection, _ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        if c.state == .handshaking {
            c.rx.append(contentsOf: UnsafeBufferPointer(start: p, count: n))
            guard let end = ClientWire.headerEnd(c.rx) else { return c.rx.count < 16384 }
            guard c.rx.starts(with: Array("HTTP/1.1 101".utf8)) else {
                lastFailure = lastFailure ?? "upgrade refused: " + String(decoding: c.rx.prefix(200), as: UTF8.self)
                return false
            }
            let chosen = ClientWire.chosenProtocol(c.rx[..<end])
            guard let spoken = subprotocol.spoken(chosen) else {
                lastFailure = lastFailure ?? "the server picked subprotocol \"\(chosen ?? "")\", not one offered (\(subprotocol.offer))"
                return false
            }
            c.speaks = spoken
            c.rx.removeFirst(end)
            c.state = .awaitingAck
            c.needInit = true
            if let wsi = c.wsi { lws_callback_on_writable(wsi) }
            if c.rx.isEmpty { return true }
            let rest = c.rx
            c.rx.removeAll(keepingCapacity: true)
            return rest.withUnsafeBufferPointer { b in rawReceived(c, b.baseAddress!, b.count) }
        }
        if c.rx.isEmpty {
            let used = rawFrames(c, p, n)
            guard used >= 0 else { return false }
            if used < n { c.rx.append(contentsOf: UnsafeBufferPointer(start: p + used, count: n - used)) }
            return true
        }
        c.rx.append(contentsOf: UnsafeBufferPointer(start: p, count: n))
        let used = c.rx.withUnsafeBufferPointer { b in rawFrames(c, b.baseAddress!, b.count) }
        guard used >= 0 else { return false }
        if used == c.rx.count {
            c.rx.removeAll(keepingCapacity: c.rx.capacity <= 1 << 20)
        } else if used > 0 {
            c.rx.removeFirst(used)
        }
        return true
    }

    /// Handles every complete frame in p[0..<n]; returns the bytes used, -1 to close.
    private func rawFrames(_ c: Connection, _ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        var i = 0
        while n - i >= 2 {
            let b0 = p[i], b1 = p[i + 1]
            var length = Int(b1 & 0x7F)
            var header = 2
            if length == 126 {
                guard n - i >= 4 else { break }
                length = Int(p[i + 2]) << 8 | Int(p[i + 3])
                header = 4
            } else if length == 127 {
                guard n - i >= 10 else { break }
                length = 0
                for k in 2..<10 { length = length << 8 | Int(p[i + k]) }
                header = 10
            }
            if b1 & 0x80 != 0 { return -1 }  // servers never mask
            guard n - i - header >= length else { break }
            let payload = p + i + header
            let fin = b0 & 0x80 != 0
            switch b0 & 0x0F {
            case 0x1, 0x0:
                if fin && c.frag.isEmpty && b0 & 0x0F == 0x1 {
                    received(c, payload, length)
                } else {
                    c.frag.append(contentsOf: UnsafeBufferPointer(start: payload, count: length))
                    if fin {
                        let message = c.frag
                        c.frag.removeAll(keepingCapacity: true)
                        message.withUnsafeBufferPointer { b in received(c, b.baseAddress!, b.count) }
                    }
                }
            case 0x8:
                if !c.closing && lastFailure == nil {
                    // The server's close (before or after connection_ack): its code and reason.
                    let code = length >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : 1005
                    let reason = length > 2 ? String(decoding: UnsafeBufferPointer(start: payload + 2, count: min(length - 2, 200)), as: UTF8.self) : ""
                    lastFailure = "server closed a connection \(c.state == .ready ? "" : "before connection_ack ")with \(code)"
                        + (reason.isEmpty ? "" : " \"\(reason)\"")
                }
                c.closing = true
                return -1
            case 0x9:
                c.pingPayload = Array(UnsafeBufferPointer(start: payload, count: length))
                if let wsi = c.wsi { lws_callback_on_writable(wsi) }
            default:
                break
            }
            i += header + length
        }
        return i
    }

    private func received(_ c: Connection, _ p: UnsafePointer<UInt8>, _ n: Int) {
        let t = nowNs()
        let isSubscriber = c.subscribePayload != nil
        guard let m = MessageScan.scan(p, n, wantPayload: isSubscriber) else {
            protocolErrors += 1
            return
        }
        switch m.type {
        case .connectionAck:
            guard c.state == .awaitingAck else { return }
            c.state = .ready
            readyCount += 1
            acknowledged += 1
            if c.speaks == .legacy { acknowledgedLegacy += 1 }
            connectPending -= 1
            if sendingEnabled, phaseIndex >= 0, groups[c.group].activePhases.contains(phaseIndex) {
                c.toStart = groups[c.group].inflight
                if let wsi = c.wsi { lws_callback_on_writable(wsi) }
            }
        case .next:
            if isSubscriber && m.id == 0 {
                if !c.firstNext { c.firstNext = true; subscriptionFirstNexts += 1 }
                if let payload = m.payload { onSubscriptionNext?(c, p, payload, t) }
                return
            }
            guard var op = c.inflight[m.id], !op.gotNext else { protocolErrors += 1; return }
            op.gotNext = true
            c.inflight[m.id] = op
            // Recorded in the phase in which the answer arrives (as throughput is counted).
            if phaseRecorded {
                let phase = phaseIndex
                stats[phase][c.group].histogram.record(max(1, (t &- op.sent) / 1000))
                stats[phase][c.group].responseBytes += n
                let s = stats[phase][c.group]
                if s.checked < 20 || s.completed % checkEvery == 0 {
                    let bad: Bool
                    if let payload = m.payload {
                        bad = MessageScan.hasMember(p, payload, "errors")
                    } else if let full = MessageScan.scan(p, n, wantPayload: true), let payload = full.payload {
                        bad = MessageScan.hasMember(p, payload, "errors")
                    } else {
                        bad = true
                    }
                    stats[phase][c.group].checked += 1
                    if bad {
                        stats[phase][c.group].fieldErrors += 1
                        if lastFailure == nil { lastFailure = "response with errors: " + String(decoding: UnsafeBufferPointer(start: p, count: min(n, 400)), as: UTF8.self) }
                    }
                }
            }
        case .complete, .error:
            if isSubscriber && m.id == 0 {
                if m.type == .error { protocolErrors += 1; lastFailure = lastFailure ?? String(decoding: UnsafeBufferPointer(start: p, count: min(n, 400)), as: UTF8.self) }
                return
            }
            guard let op = c.inflight.removeValue(forKey: m.id) else { protocolErrors += 1; return }
            if phaseRecorded {
                stats[phaseIndex][c.group].completed += 1
            }
            if m.type == .error || !op.gotNext {
                if phaseRecorded { stats[phaseIndex][c.group].errors += 1 }
                if lastFailure == nil { lastFailure = String(decoding: UnsafeBufferPointer(start: p, count: min(n, 400)), as: UTF8.self) }
            }
            if sendingEnabled && groups[c.group].activePhases.contains(phaseIndex) {
                c.toStart += 1
                if let wsi = c.wsi { lws_callback_on_writable(wsi) }
            }
        case .connectionError:
            // graphql-ws refused connection_init: the connection is closed, not counted ready.
            protocolErrors += 1
            lastFailure = lastFailure ?? "connection_error: " + String(decoding: UnsafeBufferPointer(start: p, count: min(n, 400)), as: UTF8.self)
            c.closing = true
            if let wsi = c.wsi { lws_callback_on_writable(wsi) }
        case .ping:
            c.needPong = true
            if let wsi = c.wsi { lws_callback_on_writable(wsi) }
        case .pong, .other:
            break
        }
    }

    // MARK: Writing

    /// Writes what the connection has pending. With lws framing, one message per lws_write;
    /// with raw framing, every pending frame goes out in one write.
    private func writable(_ c: Connection, _ wsi: OpaquePointer) -> Int32 {
        if c.closing {
            if framing == .lws { lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, nil, 0) }
            else { batchBegin(); frame(opcode: 0x8, [0x03, 0xE8]); _ = batchSend(wsi) }
            return -1
        }
        if c.state == .handshaking {
            if c.sentUpgrade { return 0 }
            c.sentUpgrade = true
            batchBegin()
            batch.append(contentsOf: upgradeRequest)
            return batchSend(wsi) ? 0 : -1
        }
        batchBegin()
        if let ping = c.pingPayload {
            c.pingPayload = nil
            frame(opcode: 0xA, ping)
        }
        if c.needInit {
            c.needInit = false
            message(wsi, Array(#"{"type":"connection_init"}"#.utf8))
        }
        if c.state == .ready {
            if c.needPong {
                c.needPong = false
                message(wsi, Array(#"{"type":"pong"}"#.utf8))
            }
            if let payload = c.subscribePayload, !c.subscribed {
                c.subscribed = true
                message(wsi, subscribeMessage(id: 0, payload: payload, c.speaks))
            }
            var budget = framing == .raw ? 256 : 64
            while c.toStart > 0 && budget > 0 {
                let spec = groups[c.group]
                let payload = spec.payloads[c.payloadCursor % spec.payloads.count]
                c.payloadCursor &+= 1
                let id = c.nextID
                c.nextID += 1
                message(wsi, subscribeMessage(id: id, payload: payload, c.speaks))
                c.inflight[id] = (nowNs(), false)
                c.toStart -= 1
                budget -= 1
            }
        }
        if writeFailed { writeFailed = false; return -1 }
        if framing == .raw && batch.count > headroom && !batchSend(wsi) { return -1 }
        if c.toStart > 0 { lws_callback_on_writable(wsi) }
        return 0
    }

    private var batch: [UInt8] = []
    private var writeFailed = false

    private func batchBegin() {
        batch.removeAll(keepingCapacity: true)
        batch.append(contentsOf: repeatElement(0, count: headroom))
    }

    private func batchSend(_ wsi: OpaquePointer) -> Bool {
        let n = batch.count - headroom
        let written = batch.withUnsafeMutableBufferPointer { b -> Int32 in
            guard let base = b.baseAddress else { return -1 }
            return lws_write(wsi, base + headroom, n, cg_lws_write_raw())
        }
        return written >= Int32(n)
    }

    /// One client message: a text frame (raw framing, appended to the batch) or an lws_write.
    private func message(_ wsi: OpaquePointer, _ text: [UInt8]) {
        if framing == .raw {
            frame(opcode: 0x1, text)
            return
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: repeatElement(0, count: headroom))
        scratch.append(contentsOf: text)
        let n = text.count
        let written = scratch.withUnsafeMutableBufferPointer { b -> Int32 in
            guard let base = b.baseAddress else { return -1 }
            return lws_write(wsi, base + headroom, n, LWS_WRITE_TEXT)
        }
        if written < Int32(n) { writeFailed = true }
    }

    private func frame(opcode: UInt8, _ payload: [UInt8]) {
        ClientWire.appendFrame(&batch, opcode: opcode, payload)
    }

    private func subscribeMessage(id: Int, payload: [UInt8], _ speaks: Subprotocol) -> [UInt8] {
        var m: [UInt8] = []
        m.reserveCapacity(payload.count + 48)
        m.append(contentsOf: speaks == .legacy ? #"{"type":"start","id":""#.utf8 : #"{"type":"subscribe","id":""#.utf8)
        m.append(contentsOf: String(id).utf8)
        m.append(contentsOf: #"","payload":"#.utf8)
        m.append(contentsOf: payload)
        m.append(UInt8(ascii: "}"))
        return m
    }

    private lazy var upgradeRequest: [UInt8] = ClientWire.upgradeRequest(endpoint, offer: subprotocol.offer)
}

struct LoadError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Wakes the lws service loop regularly (lws_cancel_service is the one lws call that is safe from
/// another thread) so phase ends and deadlines are noticed while no traffic flows.
final class Ticker: @unchecked Sendable {
    private let running = Atomic<Bool>(false)
    private var thread: pthread_t?
    private var context: OpaquePointer?
    private var intervalMs = 10

    func start(_ ctx: OpaquePointer, intervalMs: Int) {
        context = ctx
        self.intervalMs = intervalMs
        running.store(true, ordering: .sequentiallyConsistent)
        let box = Unmanaged.passRetained(self).toOpaque()
        var t = pthread_t()
        pthread_create(&t, nil, { arg in
            guard let arg else { return nil }
            let me = Unmanaged<Ticker>.fromOpaque(arg).takeRetainedValue()
            while me.running.load(ordering: .sequentiallyConsistent) {
                usleep(useconds_t(me.intervalMs * 1000))
                if let c = me.context, me.running.load(ordering: .sequentiallyConsistent) { lws_cancel_service(c) }
            }
            return nil
        }, box)
        thread = t
    }

    func stop() {
        running.store(false, ordering: .sequentiallyConsistent)
        if let thread { pthread_join(thread, nil) }
        thread = nil
    }
}

/// Raises the soft open-files limit to the hard limit when `needed` is above it.
func raiseFileLimit(needed: Int) {
    var r = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &r) == 0 else { return }
    if r.rlim_cur < rlim_t(needed) {
        r.rlim_cur = min(r.rlim_max, rlim_t(needed) + 256)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &r)
    }
}

/// CPU seconds (user + system) used by this process so far.
func processCPUSeconds() -> Double {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
}

/// The fields of /proc/PID/stat after the command's closing parenthesis (field 3, the state,
/// first), or nil when the process is gone.
private func statFields(_ pid: Int32) -> [Substring]? {
    guard let text = readSmallFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
    return text[text.index(after: close)...].split(separator: " ")
}

/// `pid` and every process descended from it, found through each process's parent (field 4 of
/// /proc/N/stat): a server that runs workers in processes of its own (the Python one runs one per
/// core) is measured whole, not by its first process.
func processTree(_ pid: Int32) -> [Int32] {
    var parents: [(pid: Int32, parent: Int32)] = []
    if let dir = opendir("/proc") {
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let p = Int32(name), p != pid, let fields = statFields(p), fields.count > 1, let parent = Int32(fields[1]) else { continue }
            parents.append((p, parent))
        }
        closedir(dir)
    }
    var tree = [pid]
    var i = 0
    while i < tree.count {
        for p in parents where p.parent == tree[i] { tree.append(p.pid) }
        i += 1
    }
    return tree
}

/// CPU seconds (user + system) used so far by a process and its descendants (`processTree`),
/// from /proc/N/stat; nil when `pid` is gone.
func serverCPUSeconds(_ pid: Int32) -> Double? {
    var total = 0.0
    for (k, p) in processTree(pid).enumerated() {
        // After the command: state is field 3; utime and stime are fields 14 and 15.
        guard let fields = statFields(p), fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else {
            if k == 0 { return nil }
            continue  // a descendant that exited in between
        }
        total += u + s
    }
    return total / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Resident memory in KiB (VmRSS of /proc/N/status) of a process and its descendants
/// (`processTree`, or the `tree` given); nil when `pid` is gone.
func residentKiB(_ pid: Int32, tree: [Int32]? = nil) -> Int? {
    var total = 0
    for (k, p) in (tree ?? processTree(pid)).enumerated() {
        guard let kib = ownResidentKiB(p) else {
            if k == 0 { return nil }
            continue
        }
        total += kib
    }
    return total
}

private func ownResidentKiB(_ pid: Int32) -> Int? {
    guard let text = readSmallFile("/proc/\(pid)/status") else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.dropFirst(6).trimmingCharacters(in: " \tkB"))
    }
    return nil
}

func readSmallFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buf = [UInt8](repeating: 0, count: 8192)
    var total = 0
    while total < buf.count {
        let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
        if n <= 0 { break }
        total += n
    }
    return String(decoding: buf[..<total], as: UTF8.self)
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        var s = self
        while let f = s.first, chars.contains(f) { s = s.dropFirst() }
        while let l = s.last, chars.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
