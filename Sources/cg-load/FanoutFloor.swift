import ArgumentParser
import CWebSockets
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// MARK: - fanout-floor

/// The fan-out scenario's floor: what this machine's kernel and this client cost to deliver one
/// small frame to each of N loopback TCP connections, with nothing of a server in between.
/// --sender-threads threads (the bench uses the gateway's --send-threads default) send() a
/// pre-made WebSocket text frame, the size of a catalogVersion `next`, to their share of the
/// accepted sockets; the same epoll reader threads as `fanout` time its arrival. Reports trigger → last arrival over
/// --bumps rounds, as `fanout` reports commit → last `next`.
struct FanoutFloorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout-floor",
        abstract: "Floor of the fan-out scenario: sender threads send() a fixed frame to N loopback sockets; time to the last arrival.",
        discussion: """
            No server is involved: cg-load listens on 127.0.0.1, connects N sockets to itself, \
            and per round sends each accepted socket one small frame from --sender-threads \
            threads (each its share, in turn) while --threads epoll threads read the other ends. Per round: trigger → first and last \
            arrival. The gateway's fan-out adds, per subscriber, lws's poll() and WRITEABLE \
            dispatch, the frame's id, and the outbox, on top of exactly this.
            """)

    @Option(name: .long, help: "Where to write the JSON result (`-`: standard output).")
    var json: String?

    @Option(name: .long, help: "Name of this run in the table and JSON.")
    var label: String?

    @Option(name: .long, parsing: .unconditional, help: "Connections.")
    var subscribers = 1000

    @Option(name: .long, parsing: .unconditional, help: "Rounds.")
    var bumps = 20

    @Option(name: .long, parsing: .unconditional, help: "Milliseconds between one round's last arrival and the next.")
    var gapMs = 200

    @Option(name: .long, parsing: .unconditional, help: "Reader threads (default: as `fanout`: one per 1,250 connections, at most 8 and at most one per CPU).")
    var threads: Int?

    @Option(name: .long, parsing: .unconditional, help: "Bytes of the frame's payload.")
    var payloadBytes = 72

    @Option(name: .long, parsing: .unconditional, help: "Threads sending the frames (as `serve --send-threads`).")
    var senderThreads = 1

    func validate() throws {
        guard subscribers >= 1, bumps >= 1 else { throw ValidationError("--subscribers and --bumps must be at least 1") }
        try Check.count("--gap-ms", gapMs, atLeast: 0)
        guard (1...64).contains(senderThreads) else { throw ValidationError("--sender-threads must be 1...64") }
        guard (1...125).contains(payloadBytes) else { throw ValidationError("--payload-bytes must be 1...125 (a one-byte-length frame)") }
    }

    func run() throws {
        raiseFileLimit(needed: subscribers + 64)
        let shardCount = threads ?? fanoutReaderThreads(subscribers: subscribers, framing: .raw)
        // The sending side is a child process (this binary's hidden `fanout-floor-sender`), so
        // that each process needs one descriptor per connection, as with a real server.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = ["fanout-floor-sender", "--subscribers", "\(subscribers)", "--payload-bytes", "\(payloadBytes)",
                           "--sender-threads", "\(senderThreads)"]
        let toChild = Pipe(), fromChild = Pipe()
        child.standardInput = toChild
        child.standardOutput = fromChild
        try child.run()
        defer { if child.isRunning { child.terminate() }; child.waitUntilExit() }
        let lines = LineReader(fromChild.fileHandleForReading)
        guard let portLine = lines.next(), let port = UInt16(portLine.dropFirst(5)), portLine.hasPrefix("port ") else {
            throw LoadError("fanout-floor-sender did not start")
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = port.bigEndian
        var clientFDs: [Int32] = []
        clientFDs.reserveCapacity(subscribers)
        defer { for fd in clientFDs { close(fd) } }
        for _ in 0..<subscribers {
            let c = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard c >= 0 else { throw LoadError("socket: \(String(cString: strerror(errno))) after \(clientFDs.count) connections") }
            clientFDs.append(c)
            let ok = withUnsafePointer(to: &addr) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(c, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard ok else { throw LoadError("connect: \(String(cString: strerror(errno))) after \(clientFDs.count - 1) connections") }
        }
        guard lines.next() == "ready" else { throw LoadError("fanout-floor-sender did not accept every connection") }
        let frameSize = 2 + payloadBytes

        let round = Atomic<Int>(0)          // current round (1-based); 0 before the first
        let stop = Atomic<Bool>(false)
        let arrivals = Mutex<[[UInt64]]>(Array(repeating: [], count: bumps))
        let counted = Atomic<Int>(0)
        let shares = (0..<shardCount).map { k in stride(from: k, to: subscribers, by: shardCount).map { clientFDs[$0] } }
        let readersDone = runShards(shardCount, total: subscribers) { shard, _ in
            let fds = shares[shard]
            let ep = epoll_create1(Int32(EPOLL_CLOEXEC))
            guard ep >= 0 else { return }
            defer { close(ep) }
            for (i, fd) in fds.enumerated() {
                var ev = epoll_event()
                ev.events = EPOLLIN.rawValue
                ev.data.u64 = UInt64(i)
                _ = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)
            }
            var pending = [Int](repeating: 0, count: fds.count)   // bytes of a partial frame
            var events = [epoll_event](repeating: epoll_event(), count: 1024)
            var buffer = [UInt8](repeating: 0, count: 4096)
            var local: [(Int, UInt64)] = []
            while !stop.load(ordering: .acquiring) {
                let n = events.withUnsafeMutableBufferPointer { epoll_wait(ep, $0.baseAddress, Int32($0.count), 20) }
                guard n > 0 else { continue }
                let t = nowNs()
                let r = round.load(ordering: .acquiring)
                for k in 0..<Int(n) {
                    let i = Int(events[k].data.u64)
                    let got = buffer.withUnsafeMutableBytes { recv(fds[i], $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                    guard got > 0 else { continue }
                    pending[i] += got
                    while pending[i] >= frameSize { pending[i] -= frameSize; local.append((r, t)) }
                }
                if !local.isEmpty {
                    arrivals.withLock { a in for (r, t) in local where r >= 1 && r <= a.count { a[r - 1].append(t) } }
                    counted.add(local.count, ordering: .releasing)
                    local.removeAll(keepingCapacity: true)
                }
            }
        }
        let cpu0 = processCPUSeconds(), sender0 = serverCPUSeconds(child.processIdentifier)
        var triggers: [UInt64] = []
        var sendNs: [Double] = []
        let t0 = nowNs()
        for b in 1...bumps {
            usleep(useconds_t(gapMs * 1000))
            round.store(b, ordering: .releasing)
            toChild.fileHandleForWriting.write(Data("go\n".utf8))
            // "sent START_NS LOOP_NS": the sender's own clock (CLOCK_MONOTONIC, shared).
            guard let reply = lines.next(), reply.hasPrefix("sent ") else {
                stop.store(true, ordering: .releasing); readersDone()
                throw LoadError("fanout-floor-sender failed")
            }
            let parts = reply.split(separator: " ")
            triggers.append(UInt64(parts[1]) ?? 0)
            sendNs.append(Double(UInt64(parts[2]) ?? 0) / 1e6)
            let deadline = nowNs() + 10_000_000_000
            while counted.load(ordering: .acquiring) < b * subscribers && nowNs() < deadline { usleep(200) }
        }
        let wall = Double(nowNs() - t0) / 1e9
        let cpu = processCPUSeconds() - cpu0
        let senderCPU = sender0.flatMap { s0 in serverCPUSeconds(child.processIdentifier).map { $0 - s0 } }
        stop.store(true, ordering: .releasing)
        readersDone()
        try? toChild.fileHandleForWriting.close()

        let perRound = arrivals.withLock { $0 }
        var lastMs: [Double] = [], firstMs: [Double] = [], allMs: [Double] = []
        var missed = 0
        for (i, a) in perRound.enumerated() {
            let ms = a.map { Double(Int64(bitPattern: $0 &- triggers[i])) / 1e6 }
            lastMs.append(ms.max() ?? 0); firstMs.append(ms.min() ?? 0); allMs += ms
            missed += max(0, subscribers - a.count)
        }
        let last = LatencySummary(samplesMs: lastMs), first = LatencySummary(samplesMs: firstMs)
        let all = LatencySummary(samplesMs: allMs), sendLoop = LatencySummary(samplesMs: sendNs)
        var table = TextTable(header: ["fan-out floor", "sockets", "threads", "senders", "rounds", "last p50 ms", "last p99 ms", "first p50 ms", "all p50 ms", "send loop p50 ms", "missed", "client CPU s", "sender CPU s"])
        table.add([label ?? "floor", "\(subscribers)", "\(shardCount)", "\(senderThreads)", "\(bumps)", fmt(last.p50, 1), fmt(last.p99, 1), fmt(first.p50, 1),
                   fmt(all.p50, 1), fmt(sendLoop.p50, 1), "\(missed)", fmt(cpu), senderCPU.map { fmt($0) } ?? "-"])
        print(table.render(), terminator: "")
        let object: [String: Any] = [
            "tool": "cg-load", "mode": "fanout-floor", "label": label ?? "floor", "subscribers": subscribers,
            "client_threads": shardCount, "sender_threads": senderThreads, "bumps": bumps, "frame_bytes": frameSize,
            "commit_to_last_next": last.json, "commit_to_first_next": first.json, "commit_to_each_next": all.json,
            "send_loop": sendLoop.json, "missed_deliveries": missed, "wall_s": r(wall), "client_cpu_s": r(cpu), "server_cpu_s": senderCPU.map(r) ?? NSNull(),
            "per_bump_last_ms": lastMs.map(r),
        ]
        let path = json ?? "bench/results/cg-load-fanout-floor-\(timestamp()).json"
        try writeJSON(object, to: path)
        if path != "-" { print("wrote \(path)") }
    }
}

/// The sending half of `fanout-floor`, in its own process: listens on 127.0.0.1, prints
/// `port N`, accepts --subscribers connections, prints `ready`; then for every `go` line on
/// standard input sends each socket one frame (--sender-threads threads, each every n-th
/// socket) and prints `sent START_NS LOOP_NS`.
struct FanoutFloorSenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fanout-floor-sender", shouldDisplay: false)

    @Option var subscribers: Int
    @Option var payloadBytes: Int = 72
    @Option var senderThreads: Int = 1

    func run() throws {
        raiseFileLimit(needed: subscribers + 64)
        func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw LoadError("socket: \(String(cString: strerror(errno)))") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) == 0 && listen(listener, 4096) == 0 && getsockname(listener, $0, &len) == 0 }
        }
        guard bound else { throw LoadError("bind/listen on 127.0.0.1: \(String(cString: strerror(errno)))") }
        say("port \(UInt16(bigEndian: addr.sin_port))")
        var fds: [Int32] = []
        var one: Int32 = 1
        while fds.count < subscribers {
            let s = accept(listener, nil, nil)
            guard s >= 0 else { throw LoadError("accept: \(String(cString: strerror(errno)))") }
            setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            fds.append(s)
        }
        say("ready")
        var frame: [UInt8] = [0x81, UInt8(payloadBytes)]
        frame.append(contentsOf: repeatElement(UInt8(ascii: "x"), count: payloadBytes))
        while let line = readLine() {
            guard line == "go" else { continue }
            let t = nowNs()
            let failures = Atomic<Int>(0)
            let parts = senderThreads
            fds.withUnsafeBufferPointer { all in
                frame.withUnsafeBytes { f in
                    let job = FloorSend(fds: all, frame: f)
                    if parts == 1 {
                        failures.add(job.run(part: 0, of: 1), ordering: .relaxed)
                    } else {
                        DispatchQueue.concurrentPerform(iterations: parts) { failures.add(job.run(part: $0, of: parts), ordering: .relaxed) }
                    }
                }
            }
            if failures.load(ordering: .relaxed) > 0 { throw LoadError("send: \(failures.load(ordering: .relaxed)) short or failed writes") }
            say("sent \(t) \(nowNs() - t)")
        }
    }
}

/// One sender thread's share of a floor round: sockets part, part + parts, …; returns how many
/// did not take the whole frame.
private struct FloorSend: @unchecked Sendable {
    let fds: UnsafeBufferPointer<Int32>
    let frame: UnsafeRawBufferPointer

    func run(part: Int, of parts: Int) -> Int {
        var failed = 0
        var i = part
        while i < fds.count {
            if send(fds[i], frame.baseAddress, frame.count, Int32(MSG_NOSIGNAL)) != frame.count { failed += 1 }
            i += parts
        }
        return failed
    }
}

/// Lines from a pipe, blocking.
final class LineReader {
    private let handle: FileHandle
    private var buffer = Data()
    init(_ handle: FileHandle) { self.handle = handle }
    func next() -> String? {
        while true {
            if let i = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[buffer.startIndex..<i], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...i)
                return line
            }
            let more = handle.availableData
            if more.isEmpty { return nil }
            buffer.append(more)
        }
    }
}
