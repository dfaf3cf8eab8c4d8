import ArgumentParser
import CWebSockets
import Foundation
import Histogram
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// MARK: - slowreader

struct SlowReaderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slowreader",
        abstract: "Small queries' latency among N idle connections, without and then with clients that never read.",
        discussion: """
            Opens --idle acknowledged connections that stay idle (spread over --threads client \
            threads, like `idle`), --connections measuring connections running the small query \
            (--inflight each), and --slow-readers raw sockets that complete the handshake and \
            connection_init. Phases: warm-up, `without` (the slow readers are open but quiet), \
            `with` (each slow reader sends --slow-requests subscribe messages for --slow-query, one \
            every --slow-interval-ms, and never reads its socket; with --slow-reconnect, a reader \
            whose connection ended opens a new one). A server that bounds what it queues for a \
            client (catalog-gateway --max-queued-bytes) closes them; cg-load sees that without \
            reading (send() fails, or poll() reports a reset or hang-up), then reads what the \
            socket holds to find the close frame and its code (`found at drain` when only the \
            read showed it). A slow connection not yet ended when the phase ends sends nothing more \
            and is given 2 s before it is read. With --server-pid the server's VmRSS is sampled \
            every 100 ms.

            Reports the small queries' p50/p99 in both phases and their ratio, every slow-reader \
            connection's end (close code, reset or EOF, time from its first request), and the \
            server's RSS: after the idle crowd connected, highest in each phase, after.
            """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var operation: OperationOptions

    @Option(name: .long, parsing: .unconditional, help: "Idle acknowledged connections (the crowd).")
    var idle = 10_000

    @Option(name: .long, parsing: .unconditional, help: "Measuring connections running the small query.")
    var connections = 50

    @Option(name: .long, parsing: .unconditional, help: "Small queries in flight per measuring connection.")
    var inflight = 2

    @Option(name: .long, parsing: .unconditional, help: "Slow readers (at once).")
    var slowReaders = 1

    @Option(name: .long, help: "Document the slow readers request (default: three aliased products(first: 100) lists with every field, about 250 KB per answer on the demo catalog).")
    var slowQuery: String?

    @Option(name: .long, parsing: .unconditional, help: "Subscribe messages each slow-reader connection sends at most (below the server's operations-in-flight limit).")
    var slowRequests = 400

    @Option(name: .long, parsing: .unconditional, help: "Milliseconds between a slow reader's requests.")
    var slowIntervalMs = 5.0

    @Option(name: .long, parsing: .unconditional, help: "Slow readers' SO_RCVBUF in bytes (the kernel then holds little for them).")
    var slowRcvbuf: Int32 = 4096

    @Flag(name: .long, inversion: .prefixedNo, help: "Open a new slow-reader connection when one ends (during the `with` phase).")
    var slowReconnect = true

    @Option(name: .long, parsing: .unconditional, help: "Seconds of each measured phase.")
    var duration = 5.0

    @Option(name: .long, parsing: .unconditional, help: "Warm-up seconds.")
    var warmup = 1.0

    @Option(name: .long, parsing: .unconditional, help: "Seconds to let the server settle before and after the phases (RSS).")
    var settle = 1.0

    @Option(name: .long, parsing: .unconditional, help: "Idle crowd's client threads (default: one per 1,250 connections, at most 8).")
    var threads: Int?

    @Option(name: .long, parsing: .unconditional, help: "Microseconds each idle thread sleeps between poll() passes.")
    var coalesceUs: UInt32 = 10_000

    static let defaultSlowQuery = "{ " + ["CATALOG", "NAME", "NEWEST"].enumerated().map { i, order in
        "p\(i): products(first: 100, orderBy: \(order)) { edges { node { id sku name description images "
            + "videos { kind url } specs { key label value } kit { id name quantity } category { id title } "
            + "manufacturer { name } } } }"
    }.joined(separator: " ") + " }"

    func validate() throws {
        if idle < 0 || connections < 1 || inflight < 1 || slowReaders < 0 || slowRequests < 1 {
            throw ValidationError("--idle ≥ 0, --connections ≥ 1, --inflight ≥ 1, --slow-readers ≥ 0, --slow-requests ≥ 1")
        }
        try Check.seconds("--duration", duration)
        try Check.seconds("--warmup", warmup, zeroAllowed: true)
        try Check.seconds("--settle", settle, zeroAllowed: true)
        try Check.seconds("--slow-interval-ms", slowIntervalMs / 1000, zeroAllowed: true)
    }

    func run() throws {
        let endpoint = try common.endpoint(), framing = try common.framingMode(), subprotocol = try common.subprotocolChoice()
        // Every socket of this process: the crowd, the measuring group, the slow readers, lws's own.
        raiseFileLimit(needed: idle + connections + slowReaders * 2 + 256)
        let pid = common.serverPid
        let sampler = RSSSampler(pid: pid)
        sampler.start()
        defer { sampler.stop() }
        let rssStart = pid.flatMap { residentKiB($0) }

        // 1. The idle crowd.
        let shardCount = idle == 0 ? 0 : threads ?? min(8, max(1, (idle + 1249) / 1250))
        let crowd = Coordinator(shards: shardCount), crowdEnd = Coordinator(shards: shardCount)
        let batch = max(1, common.connectBatch / max(1, shardCount)), timeout = common.connectTimeout, coalesce = coalesceUs
        let t0 = nowNs()
        let crowdDone = runShards(shardCount, total: idle) { shard, count in
            do {
                let client = try LoadClient(endpoint: endpoint, groups: [
                    GroupSpec(name: "idle", connections: count, inflight: 0, payloads: [[]], activePhases: []),
                ], framing: framing, subprotocol: subprotocol, tickMs: 50)
                client.maxPendingConnects = batch
                client.coalesceMicros = coalesce
                _ = client.connectAll(timeoutSeconds: timeout)
                crowd.report(shard, ShardReport(acknowledged: client.acknowledged, failed: client.failedCount,
                                                subscribed: client.readyCount, failure: client.lastFailure))
                client.service(until: .max) { crowd.stage >= 1 }
                // Still open at the end (a server that closed idle clients for a slow one's sake would show here).
                crowdEnd.report(shard, ShardReport(acknowledged: client.acknowledged, failed: client.failedCount,
                                                   subscribed: client.readyCount, failure: client.lastFailure))
                client.service(until: .max) { crowd.stage >= 2 }
                client.closeAll()
            } catch {
                crowd.report(shard, ShardReport(acknowledged: 0, failed: count, subscribed: 0, failure: "\(error)"))
                crowdEnd.report(shard, ShardReport(acknowledged: 0, failed: count, subscribed: 0, failure: "\(error)"))
            }
        }
        var stopped = false
        func stopCrowd() {
            guard !stopped else { return }
            stopped = true
            crowd.advance(to: 1)
            crowdEnd.waitForReports()
            crowd.advance(to: 2)
            crowdDone()
        }
        defer { stopCrowd() }
        crowd.waitForReports()
        let crowdAcknowledged = crowd.reports.reduce(0) { $0 + $1.acknowledged }
        let crowdSeconds = Double(nowNs() - t0) / 1e9
        if crowdAcknowledged < idle {
            FileHandle.standardError.write(Data("cg-load: \(crowdAcknowledged) of \(idle) idle connections acknowledged (\(crowd.reports.compactMap(\.failure).first ?? "timed out"))\n".utf8))
        }

        // 2. The slow readers: connected and acknowledged, quiet until the `with` phase.
        let slowPayload = operationPayload(query: slowQuery ?? Self.defaultSlowQuery, variables: nil)
        let readers = SlowReaders(config: SlowReaderConfig(
            endpoint: endpoint, payload: slowPayload, requests: slowRequests, intervalMicros: UInt32(max(0, slowIntervalMs * 1000)),
            rcvbuf: slowRcvbuf, reconnect: slowReconnect))
        readers.start(count: slowReaders)
        readers.waitUntilOpen(count: slowReaders, timeoutSeconds: 30)
        if let f = readers.openFailure { throw LoadError("slow reader could not connect: \(f)") }

        // 3. The measuring group.
        let client = try LoadClient(endpoint: endpoint, groups: [
            GroupSpec(name: "small", connections: connections, inflight: inflight, payloads: operation.payloads(), activePhases: [0, 1, 2]),
        ], framing: framing, subprotocol: subprotocol)
        client.maxPendingConnects = common.connectBatch
        let connectSeconds = client.connectAll(timeoutSeconds: common.connectTimeout)
        try requireConnected(client)
        usleep(useconds_t(settle * 1e6))
        let rssCrowd = pid.flatMap { residentKiB($0) }

        let phaseStarts = PhaseClock()
        client.onPhaseStart = { i in
            phaseStarts.mark(i)
            if i == 2 { readers.go() }
        }
        let phases = client.run(phases: [PhaseSpec(name: "warmup", seconds: warmup, recorded: false),
                                         PhaseSpec(name: "without", seconds: duration, recorded: true),
                                         PhaseSpec(name: "with", seconds: duration, recorded: true)],
                                serverPID: pid)
        let withEnd = nowNs()
        readers.stop()
        let sessions = readers.sessions
        usleep(useconds_t(settle * 1e6))
        let rssAfter = pid.flatMap { residentKiB($0) }
        client.closeAll()
        stopCrowd()
        let crowdStillOpen = crowdEnd.reports.reduce(0) { $0 + $1.subscribed }

        // Report.
        var result = phaseReport(mode: "slowreader", client: client, phases: phases, connectSeconds: connectSeconds,
                                 extra: ["connections": connections, "inflight": inflight, "duration_s": duration,
                                         "idle_connections": crowdAcknowledged, "idle_wanted": idle, "idle_connect_s": r(crowdSeconds),
                                         "idle_still_open_at_end": crowdStillOpen, "idle_threads": shardCount,
                                         "slow_readers": slowReaders, "slow_requests": slowRequests,
                                         "slow_interval_ms": slowIntervalMs, "slow_rcvbuf": Int(slowRcvbuf),
                                         "slow_reconnect": slowReconnect])
        result["label"] = common.label ?? "slowreader"
        var ratio = 0.0
        if phases.count == 2 {
            let without = LatencySummary(phases[0].groups[0].histogram), with = LatencySummary(phases[1].groups[0].histogram)
            ratio = without.p99 > 0 ? with.p99 / without.p99 : 0
            result["small_p99_ratio_with_vs_without"] = r(ratio)
            result["small_p50_ratio_with_vs_without"] = r(without.p50 > 0 ? with.p50 / without.p50 : 0)
        }

        // Slow-reader connections.
        let withStart = phaseStarts.at(2) ?? withEnd
        var ends: [String: Int] = [:]
        var detectMs: [Double] = []
        var sessionObjects: [[String: Any]] = []
        for s in sessions {
            ends[s.endLabel, default: 0] += 1
            if let ms = s.closedAfterMs { detectMs.append(ms) }
            if sessionObjects.count < 100 { sessionObjects.append(s.json(phaseStart: withStart)) }
        }
        let closed = sessions.filter(\.closed).count
        let detect = LatencySummary(samplesMs: detectMs)
        result["slow_sessions"] = sessions.count
        result["slow_sessions_closed"] = closed
        result["slow_session_ends"] = ends
        result["slow_first_request_to_close_ms"] = detect.json
        result["slow_sessions_detail"] = sessionObjects
        result["slow_bytes_drained_max"] = sessions.map(\.drainedBytes).max() ?? 0

        // Server memory.
        let samples = sampler.samples
        func maxRSS(_ from: UInt64?, _ to: UInt64?) -> Int? {
            guard let from, let to else { return nil }
            return samples.filter { $0.at >= from && $0.at <= to }.map(\.kib).max()
        }
        var rss: [String: Any] = [:]
        let rssWithout = maxRSS(phaseStarts.at(1), phaseStarts.at(2)), rssWith = maxRSS(phaseStarts.at(2), withEnd)
        if let rssStart { rss["start_kib"] = rssStart }
        if let rssCrowd { rss["crowd_connected_kib"] = rssCrowd }
        if let rssWithout { rss["max_without_kib"] = rssWithout }
        if let rssWith { rss["max_with_kib"] = rssWith }
        if let rssAfter { rss["after_kib"] = rssAfter }
        result["server_rss"] = rss

        var table = TextTable(header: ["slow readers", "connections", "closed", "ends", "1st request → close p50 ms", "max ms", "drained max B"])
        table.add(["\(slowReaders)", "\(sessions.count)", "\(closed)",
                   ends.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "),
                   fmt(detect.p50, 1), fmt(detect.max, 1), "\(sessions.map(\.drainedBytes).max() ?? 0)"])
        print(table.render(), terminator: "")
        if phases.count == 2 {
            print("small query p99: without slow readers \(fmt(LatencySummary(phases[0].groups[0].histogram).p99, 3)) ms, "
                  + "with \(fmt(LatencySummary(phases[1].groups[0].histogram).p99, 3)) ms (× \(fmt(ratio))); "
                  + "idle connections \(crowdAcknowledged), still open at the end \(crowdStillOpen)")
        }
        if pid != nil {
            func k(_ v: Int?) -> String { v.map { "\($0)" } ?? "-" }
            print("server RSS KiB: start \(k(rssStart)), crowd connected \(k(rssCrowd)), max without \(k(rssWithout)), "
                  + "max with \(k(rssWith)), after \(k(rssAfter))")
        }
        try common.output("slowreader", result)
    }
}

/// When each phase began (set on the measuring thread, read after).
final class PhaseClock: Sendable {
    private let starts = Mutex<[Int: UInt64]>([:])
    func mark(_ i: Int) { starts.withLock { $0[i] = nowNs() } }
    func at(_ i: Int) -> UInt64? { starts.withLock { $0[i] } }
}

/// The server's VmRSS (with its worker processes') every 100 ms on a thread of its own.
final class RSSSampler: Sendable {
    let pid: Int32?
    private let stored = Mutex<[(at: UInt64, kib: Int)]>([])
    private let running = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(true)

    init(pid: Int32?) { self.pid = pid }

    func start() {
        guard let pid else { return }
        running.store(true, ordering: .releasing)
        finished.store(false, ordering: .releasing)
        let t = Thread { [self] in
            // The processes are found once: reading every /proc/N/stat each 100 ms would load the
            // machine the server shares with this client.
            let tree = processTree(pid)
            while running.load(ordering: .acquiring) {
                if let k = residentKiB(pid, tree: tree) { stored.withLock { $0.append((nowNs(), k)) } }
                usleep(100_000)
            }
            finished.store(true, ordering: .releasing)
        }
        t.start()
    }

    func stop() {
        running.store(false, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(1000) }
    }

    var samples: [(at: UInt64, kib: Int)] { stored.withLock { $0 } }
}

// MARK: - Slow readers

/// POLLRDHUP (Linux; Glibc exports it only under _GNU_SOURCE): the peer shut down its side.
private let pollRDHUP: Int16 = 0x2000

struct SlowReaderConfig: Sendable {
    var endpoint: Endpoint
    var payload: [UInt8]
    var requests: Int
    var intervalMicros: UInt32
    var rcvbuf: Int32
    var reconnect: Bool
}

/// One slow-reader connection, from its acknowledgement to its end.
struct SlowSession: Sendable {
    var reader: Int
    var openedNs: UInt64
    var firstRequestNs: UInt64?
    var requests = 0
    var requestsRefused = 0
    /// When the connection's end showed without reading, and how.
    var detectedNs: UInt64?
    var detectedBy: String?
    /// What reading the socket afterwards found.
    var drainedBytes = 0
    var drainedMessages = 0
    var end = "open"          // close frame / eof / reset / open (still open after the read went quiet)
    var closeCode: Int?
    var closeReason: String?

    var closed: Bool { end != "open" }
    /// The close code when a close frame was read; `reset` when the socket was reset before it
    /// was read (what it held was lost); else what the read found (eof, open).
    var endLabel: String {
        if let closeCode { return "close \(closeCode)" }
        if detectedBy?.contains("reset") == true { return "reset" }
        return end
    }

    /// From its first request to the end being seen (without reading: detectedNs; else unknown).
    var closedAfterMs: Double? {
        guard let d = detectedNs, let f = firstRequestNs, d >= f else { return nil }
        return Double(d - f) / 1e6
    }

    func json(phaseStart: UInt64) -> [String: Any] {
        func ms(_ t: UInt64?) -> Any { t.map { r((Double($0) - Double(phaseStart)) / 1e6) } ?? NSNull() }
        return ["reader": reader, "opened_ms": ms(openedNs), "first_request_ms": ms(firstRequestNs), "requests": requests,
                "requests_refused": requestsRefused, "end_seen_ms": ms(detectedNs), "end_seen_by": detectedBy ?? "found at drain",
                "first_request_to_close_ms": closedAfterMs.map(r) ?? NSNull(), "drained_bytes": drainedBytes,
                "drained_messages": drainedMessages, "end": endLabel, "close_code": closeCode ?? NSNull(),
                "close_reason": closeReason ?? NSNull()]
    }
}

/// Clients that never read: each on its own thread with a plain socket (no lws, which would read).
final class SlowReaders: Sendable {
    let config: SlowReaderConfig
    private let goFlag = Atomic<Bool>(false)
    private let stopFlag = Atomic<Bool>(false)
    private let opened = Atomic<Int>(0)
    private let running = Atomic<Int>(0)
    private let done = Mutex<[SlowSession]>([])
    private let failure = Mutex<String?>(nil)

    init(config: SlowReaderConfig) { self.config = config }

    func start(count: Int) {
        for k in 0..<count {
            running.add(1, ordering: .releasing)
            let t = Thread { [self] in
                readerLoop(k)
                running.subtract(1, ordering: .releasing)
            }
            t.stackSize = 1 << 20
            t.start()
        }
    }

    func waitUntilOpen(count: Int, timeoutSeconds: Double) {
        let deadline = nowNs() + UInt64(timeoutSeconds * 1e9)
        while opened.load(ordering: .acquiring) < count && failure.withLock({ $0 }) == nil && nowNs() < deadline { usleep(2000) }
    }

    var openFailure: String? { failure.withLock { $0 } }
    func go() { goFlag.store(true, ordering: .releasing) }

    /// Ends the `with` phase: every reader reads what its socket holds and records its end.
    func stop() {
        stopFlag.store(true, ordering: .releasing)
        while running.load(ordering: .acquiring) > 0 { usleep(2000) }
    }

    var sessions: [SlowSession] { done.withLock { $0 }.sorted { $0.openedNs < $1.openedNs } }

    private func readerLoop(_ k: Int) {
        var first = true
        while !stopFlag.load(ordering: .acquiring) {
            let fd: Int32
            do { fd = try SlowSocket.open(config) } catch {
                failure.withLock { $0 = $0 ?? "\(error)" }
                return
            }
            var s = SlowSession(reader: k, openedNs: nowNs())
            if first { opened.add(1, ordering: .releasing); first = false }
            while !goFlag.load(ordering: .acquiring) && !stopFlag.load(ordering: .acquiring) { usleep(1000) }
            var frame: [UInt8] = []
            // At the end of the phase a connection not yet seen closed sends nothing more and gets
            // 2 s for the server to end it (the answers to what it asked are still coming).
            var stopDeadline: UInt64?
            while s.detectedNs == nil {
                if stopFlag.load(ordering: .acquiring) {
                    let now = nowNs()
                    if stopDeadline == nil { stopDeadline = now + 2_000_000_000 }
                    if let d = stopDeadline, now >= d { break }
                }
                var p = pollfd(fd: fd, events: Int16(POLLOUT) | pollRDHUP, revents: 0)
                _ = poll(&p, 1, 0)
                if p.revents & (Int16(POLLERR) | Int16(POLLHUP) | pollRDHUP) != 0 {
                    s.detectedNs = nowNs()
                    var parts: [String] = []
                    if p.revents & Int16(POLLERR) != 0 {
                        var err: Int32 = 0, len = socklen_t(4)
                        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
                        parts.append("POLLERR (\(err == 0 ? "" : String(cString: strerror(err))))")
                    }
                    if p.revents & Int16(POLLHUP) != 0 { parts.append("POLLHUP") }
                    if p.revents & pollRDHUP != 0 { parts.append("POLLRDHUP") }
                    s.detectedBy = "poll: " + parts.joined(separator: " ")
                    break
                }
                if s.requests < config.requests && stopDeadline == nil {
                    if p.revents & Int16(POLLOUT) != 0 {
                        frame.removeAll(keepingCapacity: true)
                        ClientWire.appendFrame(&frame, opcode: 0x1,
                                               Array(#"{"type":"subscribe","id":"s\#(s.requests)","payload":"#.utf8) + config.payload + [UInt8(ascii: "}")])
                        let w = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                        if w < 0 && errno != EAGAIN && errno != EINTR {
                            s.detectedNs = nowNs()
                            s.detectedBy = "send: " + String(cString: strerror(errno))
                            break
                        }
                        if w > 0 && w < frame.count {
                            // The server stopped reading us; finish the frame when it takes more.
                            if !SlowSocket.sendAll(fd, Array(frame[w...]), until: nowNs() + 2_000_000_000) {
                                s.detectedNs = nowNs()
                                s.detectedBy = "send: " + String(cString: strerror(errno))
                                break
                            }
                        }
                        if w > 0 {
                            if s.firstRequestNs == nil { s.firstRequestNs = nowNs() }
                            s.requests += 1
                        } else {
                            s.requestsRefused += 1
                        }
                    } else {
                        s.requestsRefused += 1
                    }
                }
                usleep(config.intervalMicros > 0 ? config.intervalMicros : 1000)
            }
            SlowSocket.drain(fd, &s)
            close(fd)
            done.withLock { $0.append(s) }
            if !config.reconnect || stopFlag.load(ordering: .acquiring) { break }
        }
        // A reader without reconnect waits out the phase after its connection ended.
        while !stopFlag.load(ordering: .acquiring) { usleep(2000) }
    }
}

/// A WebSocket over a plain socket: handshake, connection_init, masked frames, and the final read.
enum SlowSocket {
    static func open(_ config: SlowReaderConfig) throws -> Int32 {
        let e = config.endpoint
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoadError("socket: \(String(cString: strerror(errno)))") }
        var ok = false
        defer { if !ok { close(fd) } }
        var buf = config.rcvbuf
        if buf > 0 { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, socklen_t(4)) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(4))
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(e.port).bigEndian
        guard inet_pton(AF_INET, e.host, &addr.sin_addr) == 1 else { throw LoadError("slow reader: \(e.host) is not an IPv4 address") }
        let connected = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw LoadError("connect: \(String(cString: strerror(errno)))") }
        guard sendAll(fd, ClientWire.upgradeRequest(e), until: nowNs() + 5_000_000_000) else { throw LoadError("upgrade: \(String(cString: strerror(errno)))") }
        var rx: [UInt8] = []
        var end: Int?
        while end == nil {
            guard readSome(fd, &rx) > 0 else { throw LoadError("no upgrade answer") }
            end = ClientWire.headerEnd(rx)
        }
        guard let end, rx.starts(with: Array("HTTP/1.1 101".utf8)) else {
            throw LoadError("upgrade refused: " + String(decoding: rx.prefix(120), as: UTF8.self))
        }
        rx.removeFirst(end)
        var f: [UInt8] = []
        ClientWire.appendFrame(&f, opcode: 0x1, Array(#"{"type":"connection_init"}"#.utf8))
        guard sendAll(fd, f, until: nowNs() + 5_000_000_000) else { throw LoadError("connection_init: \(String(cString: strerror(errno)))") }
        let deadline = nowNs() + 10_000_000_000
        while nowNs() < deadline {
            var acked = false
            let used = frames(rx) { opcode, payload in
                if opcode == 0x1, payload.contains(subsequence: Array(#""connection_ack""#.utf8)) { acked = true }
            }
            rx.removeFirst(used)
            if acked {
                let flags = fcntl(fd, F_GETFL)
                _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
                ok = true
                return fd
            }
            guard readSome(fd, &rx) > 0 else { break }
        }
        throw LoadError("no connection_ack")
    }

    /// Reads everything the socket holds until end of stream, a reset, or 1 s of quiet (then the
    /// connection is still open); notes the close frame if one arrives. At most 30 s.
    static func drain(_ fd: Int32, _ s: inout SlowSession) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        var tv = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var big: Int32 = 1 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, socklen_t(4))
        var rx: [UInt8] = []
        let deadline = nowNs() + 30_000_000_000
        var sawClose = false
        while nowNs() < deadline {
            let n = readSome(fd, &rx)
            if n > 0 {
                s.drainedBytes += n
                let used = frames(rx) { opcode, payload in
                    switch opcode {
                    case 0x1, 0x2: s.drainedMessages += 1
                    case 0x8:
                        sawClose = true
                        if payload.count >= 2 {
                            s.closeCode = Int(payload[payload.startIndex]) << 8 | Int(payload[payload.startIndex + 1])
                            s.closeReason = String(decoding: payload.dropFirst(2), as: UTF8.self)
                        }
                    case 0x9:
                        // A keep-alive ping: answer it, as any client would while it reads.
                        var pong: [UInt8] = []
                        ClientWire.appendFrame(&pong, opcode: 0xA, Array(payload))
                        _ = sendAll(fd, pong, until: nowNs() + 1_000_000_000)
                    default: break
                    }
                }
                rx.removeFirst(used)
                continue
            }
            if n == 0 { s.end = sawClose ? "close frame" : "eof"; return }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { s.end = sawClose ? "close frame" : "open"; return }
            s.end = sawClose ? "close frame" : (errno == ECONNRESET ? "reset" : String(cString: strerror(errno)))
            return
        }
    }

    /// recv() into `rx`; returns what recv returned.
    static func readSome(_ fd: Int32, _ rx: inout [UInt8]) -> Int {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { rx.append(contentsOf: chunk[0..<n]) }
        return n
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8], until deadline: UInt64) -> Bool {
        var off = 0
        while off < bytes.count {
            let w = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if w > 0 { off += w; continue }
            if w < 0 && (errno == EAGAIN || errno == EINTR) && nowNs() < deadline {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 50)
                continue
            }
            return false
        }
        return true
    }

    /// Calls `body` for each complete server frame in `b`; returns the bytes used.
    static func frames(_ b: [UInt8], _ body: (UInt8, ArraySlice<UInt8>) -> Void) -> Int {
        var i = 0
        while b.count - i >= 2 {
            var length = Int(b[i + 1] & 0x7F), header = 2
            if length == 126 {
                guard b.count - i >= 4 else { break }
                length = Int(b[i + 2]) << 8 | Int(b[i + 3]); header = 4
            } else if length == 127 {
                guard b.count - i >= 10 else { break }
                length = 0
                for k in 2..<10 { length = length << 8 | Int(b[i + k]) }
                header = 10
            }
            guard b.count - i - header >= length else { break }
            body(b[i] & 0x0F, b[(i + header)..<(i + header + length)])
            i += header + length
        }
        return i
    }
}

private extension ArraySlice where Element == UInt8 {
    func contains(subsequence s: [UInt8]) -> Bool {
        guard s.count <= count else { return false }
        var i = startIndex
        while i + s.count <= endIndex {
            if self[i..<(i + s.count)].elementsEqual(s) { return true }
            i += 1
        }
        return false
    }
}
