import ArgumentParser
import Foundation
import Histogram
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// cg-load: a load generator for catalog-gateway (or any GraphQL server speaking
/// graphql-transport-ws or the legacy graphql-ws) on one libwebsockets client service thread.
struct CGLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cg-load",
        abstract: "Drive a GraphQL server over WebSockets (graphql-transport-ws or graphql-ws) and record latency histograms.",
        discussion: """
            Every connection sends connection_init, waits for connection_ack, then runs operations \
            as `subscribe` messages with numeric ids; an operation's latency is the time from \
            writing its `subscribe` to reading its `next`, and a new one is started when its \
            `complete` (or `error`) arrives, so each connection keeps --inflight operations in flight. \
            Over the legacy graphql-ws (--subprotocol; by default each connection speaks the one \
            the server picks) these are `start` and `data`, and `ka` keep-alives are ignored. \
            All sockets are served by one libwebsockets service thread; the JSON result reports \
            this process's CPU time next to the server's (--server-pid) so a saturated client shows.

            Results: a table on standard output and a JSON file (--json, default \
            bench/results/cg-load-MODE-TIMESTAMP.json; `-` for standard output).
            """,
        subcommands: [OpsCommand.self, HolCommand.self, FanoutCommand.self, FanoutFloorCommand.self, FanoutFloorSenderCommand.self, IdleCommand.self, SlowReaderCommand.self])
}

struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "Server WebSocket endpoint.")
    var url = "ws://127.0.0.1:4000/graphql"

    @Option(name: .long, help: "Where to write the JSON result (`-`: standard output).")
    var json: String?

    @Option(name: .long, help: "Name of this run in the table and JSON.")
    var label: String?

    @Option(name: .long, parsing: .unconditional, help: "Server process id: its CPU time (and RSS in idle mode) is read from /proc, summed with every process descended from it (a server with worker processes).")
    var serverPid: Int32?

    @Option(name: .long, parsing: .unconditional, help: "Seconds to wait for all connections to be acknowledged.")
    var connectTimeout: Double = 120

    @Option(name: .long, parsing: .unconditional, help: "Handshakes in progress at once while connecting.")
    var connectBatch: Int = 256

    @Option(name: .long, help: "WebSocket framing: raw (lws raw sockets, RFC 6455 frames parsed here, whole frames in place) or lws (libwebsockets' ws client, which parses payload a byte at a time).")
    var framing: String = "raw"

    @Option(name: .long, help: "WebSocket subprotocol to offer: auto (graphql-transport-ws and graphql-ws, in that order; each connection speaks the one the server picks), graphql-transport-ws, or graphql-ws (the legacy subscriptions-transport-ws protocol: start / data / stop, ka keep-alives).")
    var subprotocol: String = "auto"

    func subprotocolChoice() throws -> SubprotocolChoice {
        guard let s = SubprotocolChoice(rawValue: subprotocol) else {
            throw ValidationError("--subprotocol must be auto, graphql-transport-ws or graphql-ws")
        }
        return s
    }

    func framingMode() throws -> LoadClient.Framing {
        guard let f = LoadClient.Framing(rawValue: framing) else { throw ValidationError("--framing must be raw or lws") }
        return f
    }

    func endpoint() throws -> Endpoint {
        guard let e = Endpoint(url) else { throw ValidationError("--url must look like ws://HOST:PORT/PATH") }
        return e
    }

    func output(_ mode: String, _ object: [String: Any]) throws {
        let path = json ?? "bench/results/cg-load-\(mode)-\(timestamp()).json"
        try writeJSON(object, to: path)
        if path != "-" { print("wrote \(path)") }
    }

    func validate() throws {
        try Check.seconds("--connect-timeout", connectTimeout)
        try Check.count("--connect-batch", connectBatch, atLeast: 1)
    }
}

/// One operation: a document with variables (one set, or a file of sets used in turn).
struct OperationOptions: ParsableArguments {
    @Option(name: .long, help: "GraphQL document.")
    var query: String?

    @Option(name: .long, help: "File holding the GraphQL document.")
    var queryFile: String?

    @Option(name: .long, help: "Variables as a JSON object.")
    var variables: String?

    @Option(name: .long, help: "File of variable objects, one JSON object per line, used in turn.")
    var variablesFile: String?

    func payloads() throws -> [[UInt8]] {
        let q: String
        if let query { q = query } else if let queryFile {
            q = try String(contentsOfFile: queryFile, encoding: .utf8)
        } else {
            throw ValidationError("give --query or --query-file")
        }
        var sets: [String?] = [variables]
        if let variablesFile {
            sets = try String(contentsOfFile: variablesFile, encoding: .utf8)
                .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if sets.isEmpty { throw ValidationError("\(variablesFile) holds no variables") }
        }
        for case let v? in sets {
            guard (try? JSONSerialization.jsonObject(with: Data(v.utf8))) is [String: Any] else {
                throw ValidationError("variables must be JSON objects: \(v.prefix(80))")
            }
        }
        return sets.map { operationPayload(query: q, variables: $0) }
    }
}

// MARK: - ops

struct OpsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ops",
        abstract: "N connections × M operations in flight for a fixed time: operations/s and latency.")

    @OptionGroup var common: CommonOptions
    @OptionGroup var operation: OperationOptions

    @Option(name: .long, parsing: .unconditional, help: "Connections.")
    var connections = 1

    @Option(name: .long, parsing: .unconditional, help: "Operations in flight per connection.")
    var inflight = 100

    @Option(name: .long, parsing: .unconditional, help: "Measured seconds.")
    var duration = 10.0

    @Option(name: .long, parsing: .unconditional, help: "Warm-up seconds (operations run, nothing recorded).")
    var warmup = 2.0

    func validate() throws {
        try Check.count("--connections", connections, atLeast: 1)
        try Check.count("--inflight", inflight, atLeast: 1)
        try Check.seconds("--duration", duration)
        try Check.seconds("--warmup", warmup, zeroAllowed: true)
    }

    func run() throws {
        let client = try LoadClient(endpoint: common.endpoint(), groups: [
            GroupSpec(name: common.label ?? "ops", connections: connections, inflight: inflight,
                      payloads: operation.payloads(), activePhases: [0, 1]),
        ], framing: common.framingMode(), subprotocol: common.subprotocolChoice())
        client.maxPendingConnects = common.connectBatch
        let connectSeconds = client.connectAll(timeoutSeconds: common.connectTimeout)
        try requireConnected(client)
        let phases = client.run(phases: [PhaseSpec(name: "warmup", seconds: warmup, recorded: false),
                                         PhaseSpec(name: "measure", seconds: duration, recorded: true)],
                                serverPID: common.serverPid)
        client.closeAll()
        let result = phaseReport(mode: "ops", client: client, phases: phases, connectSeconds: connectSeconds,
                                 extra: ["connections": connections, "inflight": inflight, "duration_s": duration])
        try common.output("ops", result)
    }
}

// MARK: - hol

struct HolCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hol",
        abstract: "Head-of-line blocking: small queries' latency alone, then while other connections run heavy queries.",
        discussion: """
            Phases: warm-up and `alone` run only the small queries (--connections × --inflight); \
            `loaded` runs them while --heavy-connections each keep --heavy-inflight heavy queries in \
            flight. Compare the small queries' p99 between the two phases.
            """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var operation: OperationOptions

    @Option(name: .long, parsing: .unconditional, help: "Connections running the small query.")
    var connections = 4

    @Option(name: .long, parsing: .unconditional, help: "Small queries in flight per connection.")
    var inflight = 1

    @Option(name: .long, help: "Heavy GraphQL document.")
    var heavyQuery: String?

    @Option(name: .long, help: "File holding the heavy document.")
    var heavyQueryFile: String?

    @Option(name: .long, help: "Variables of the heavy query (JSON object).")
    var heavyVariables: String?

    @Option(name: .long, parsing: .unconditional, help: "Connections running the heavy query.")
    var heavyConnections = 1

    @Option(name: .long, parsing: .unconditional, help: "Heavy queries in flight per heavy connection.")
    var heavyInflight = 8

    @Option(name: .long, parsing: .unconditional, help: "Seconds of each measured phase.")
    var duration = 5.0

    @Option(name: .long, parsing: .unconditional, help: "Warm-up seconds.")
    var warmup = 1.0

    func validate() throws {
        try Check.count("--connections", connections, atLeast: 1)
        try Check.count("--inflight", inflight, atLeast: 1)
        try Check.count("--heavy-connections", heavyConnections, atLeast: 1)
        try Check.count("--heavy-inflight", heavyInflight, atLeast: 1)
        try Check.seconds("--duration", duration)
        try Check.seconds("--warmup", warmup, zeroAllowed: true)
    }

    func run() throws {
        let heavy = try OperationOptions.parse(
            (heavyQuery.map { ["--query", $0] } ?? heavyQueryFile.map { ["--query-file", $0] } ?? [])
                + (heavyVariables.map { ["--variables", $0] } ?? [])).payloads()
        let client = try LoadClient(endpoint: common.endpoint(), groups: [
            GroupSpec(name: "small", connections: connections, inflight: inflight, payloads: operation.payloads(), activePhases: [0, 1, 2]),
            GroupSpec(name: "heavy", connections: heavyConnections, inflight: heavyInflight, payloads: heavy, activePhases: [2]),
        ], framing: common.framingMode(), subprotocol: common.subprotocolChoice())
        client.maxPendingConnects = common.connectBatch
        let connectSeconds = client.connectAll(timeoutSeconds: common.connectTimeout)
        try requireConnected(client)
        let phases = client.run(phases: [PhaseSpec(name: "warmup", seconds: warmup, recorded: false),
                                         PhaseSpec(name: "alone", seconds: duration, recorded: true),
                                         PhaseSpec(name: "loaded", seconds: duration, recorded: true)],
                                serverPID: common.serverPid)
        client.closeAll()
        var result = phaseReport(mode: "hol", client: client, phases: phases, connectSeconds: connectSeconds,
                                 extra: ["connections": connections, "inflight": inflight, "heavy_connections": heavyConnections,
                                         "heavy_inflight": heavyInflight, "duration_s": duration])
        if phases.count == 2 {
            let alone = LatencySummary(phases[0].groups[0].histogram), loaded = LatencySummary(phases[1].groups[0].histogram)
            let ratio = alone.p99 > 0 ? loaded.p99 / alone.p99 : 0
            result["small_p99_ratio_loaded_vs_alone"] = r(ratio)
            print("small query p99: alone \(fmt(alone.p99, 3)) ms, with heavy load \(fmt(loaded.p99, 3)) ms (× \(fmt(ratio)))")
        }
        try common.output("hol", result)
    }
}

// MARK: - fanout

struct FanoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "N subscribers to catalogVersion; time from each version commit to the last subscriber's `next`.",
        discussion: """
            Every connection subscribes to `subscription { catalogVersion { version } }` and \
            receives the current version. Then, --bumps times, a separate SQLite connection on \
            another thread inserts version max+1 (INSERT INTO version(versionid, updatecatalogrow, \
            updateassetrow) VALUES(max+1,'','') in BEGIN IMMEDIATE … COMMIT) and the time from the \
            COMMIT's return to each subscriber's `next` with that version is recorded. Reports the \
            median and p99 over bumps of commit → last subscriber, and the distribution over all \
            deliveries. The catalog file must be writable.

            The subscribers are spread over --threads client threads, each with its own \
            libwebsockets context for connecting and subscribing. While versions are bumped, each \
            thread reads its sockets through epoll (raw framing; poll() would cost O(sockets) per \
            wake-up and steal the CPU the server needs on a small machine); --framing lws keeps \
            lws's poll() loop throughout.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .long, parsing: .unconditional, help: "Subscribed connections.")
    var subscribers = 1000

    @Option(name: .long, parsing: .unconditional, help: "Version commits.")
    var bumps = 20

    @Option(name: .long, help: "Catalog file the server serves (written to).")
    var db: String

    @Option(name: .long, parsing: .unconditional, help: "Milliseconds between one bump's last delivery and the next commit.")
    var gapMs = 200

    @Option(name: .long, parsing: .unconditional, help: "Seconds to wait for one bump to reach every subscriber.")
    var bumpTimeout = 10.0

    @Option(name: .long, parsing: .unconditional, help: "Client threads (default: one per 1,250 subscribers, at most 8, and with raw framing at most one per CPU: an epoll reader is not the bottleneck, and on a small machine every extra client thread steals the CPU the server needs).")
    var threads: Int?

    @Option(name: .long, parsing: .unconditional, help: "With --framing lws only: microseconds each client thread sleeps between poll() passes, so one pass reads many sockets: a pass costs O(sockets) in the kernel. A delivery time can read up to this much late (never early).")
    var coalesceUs: UInt32 = 10_000

    func validate() throws {
        try Check.count("--subscribers", subscribers, atLeast: 1)
        try Check.count("--bumps", bumps, atLeast: 1)
        try Check.count("--gap-ms", gapMs, atLeast: 0)
        try Check.seconds("--bump-timeout", bumpTimeout)
    }

    func run() throws {
        let endpoint = try common.endpoint(), framing = try common.framingMode(), subprotocol = try common.subprotocolChoice()
        let shardCount = threads ?? fanoutReaderThreads(subscribers: subscribers, framing: framing)
        let state = FanoutState()
        let coordinator = Coordinator(shards: shardCount)
        let payload = operationPayload(query: "subscription { catalogVersion { version } }", variables: nil)
        let batch = max(1, common.connectBatch / shardCount), timeout = common.connectTimeout, coalesce = coalesceUs
        let t0 = nowNs()
        let threadsDone = runShards(shardCount, total: subscribers) { shard, count in
            do {
                let client = try LoadClient(endpoint: endpoint, groups: [
                    GroupSpec(name: "subscribers", connections: count, inflight: 0, payloads: [[]], activePhases: []),
                ], framing: framing, subprotocol: subprotocol, tickMs: 50)
                client.maxPendingConnects = batch
                client.coalesceMicros = coalesce
                _ = client.connectAll(timeoutSeconds: timeout)
                _ = client.subscribeAll(payload, timeoutSeconds: timeout)
                // Arrivals are handed to the shared state once per wake-up, not once per message
                // (eight threads taking one lock 10,000 times per bump contended on it).
                var arrived: [(version: Int, at: UInt64)] = []
                arrived.reserveCapacity(count)
                client.onSubscriptionNext = { _, p, payload, t in
                    if let v = MessageScan.integer(after: "version", p, payload) { arrived.append((v, t)) }
                }
                coordinator.report(shard, ShardReport(acknowledged: client.acknowledged, failed: client.failedCount,
                                                      subscribed: client.subscriptionFirstNexts, failure: client.lastFailure,
                                                      legacy: client.acknowledgedLegacy))
                client.serviceEpoll(until: .max) {
                    if !arrived.isEmpty {
                        state.received(arrived)
                        arrived.removeAll(keepingCapacity: true)
                    }
                    return state.finished || coordinator.stage >= 2
                }
                client.closeAll()
            } catch {
                coordinator.report(shard, ShardReport(acknowledged: 0, failed: count, subscribed: 0, failure: "\(error)"))
            }
        }
        coordinator.waitForReports()
        let reports = coordinator.reports
        let connectSeconds = Double(nowNs() - t0) / 1e9
        let acknowledged = reports.reduce(0) { $0 + $1.acknowledged }, subscribed = reports.reduce(0) { $0 + $1.subscribed }
        let failure = reports.compactMap(\.failure).first
        guard subscribed > 0 else {
            coordinator.advance(to: 2)
            threadsDone()
            throw LoadError("no subscription answered (\(acknowledged) of \(subscribers) connections acknowledged; \(failure ?? "no error seen"))")
        }
        if subscribed < subscribers {
            FileHandle.standardError.write(Data("cg-load: \(subscribed) of \(subscribers) subscriptions answered (\(acknowledged) connections acknowledged; \(failure ?? "timed out")); measuring those\n".utf8))
        }
        state.setExpected(subscribed)
        let bumper = VersionBumper(path: db, bumps: bumps, gapMs: gapMs, timeoutSeconds: bumpTimeout, state: state)
        let cpu1 = processCPUSeconds(), server0 = common.serverPid.flatMap(serverCPUSeconds), t1 = nowNs()
        bumper.start()
        while !state.finished { usleep(2000) }
        let wall = Double(nowNs() - t1) / 1e9
        let clientCPU = processCPUSeconds() - cpu1
        let serverCPU = server0.flatMap { s0 in common.serverPid.flatMap(serverCPUSeconds).map { $0 - s0 } }
        coordinator.advance(to: 2)
        threadsDone()
        if let e = state.failure { throw LoadError("version bump failed: \(e)") }

        let rounds = state.rounds()
        let lastMs = rounds.map(\.lastMs), firstMs = rounds.map(\.firstMs)
        let last = LatencySummary(samplesMs: lastMs), first = LatencySummary(samplesMs: firstMs)
        let all = LatencySummary(samplesMs: rounds.flatMap(\.allMs))
        let missed = rounds.reduce(0) { $0 + $1.missing }
        var table = TextTable(header: ["fan-out", "subscribers", "threads", "bumps", "last p50 ms", "last p99 ms", "first p50 ms", "all p50 ms", "all p99 ms", "missed", "client CPU s", "server CPU s"])
        table.add([common.label ?? "fanout", "\(subscribed)", "\(shardCount)", "\(rounds.count)", fmt(last.p50, 1), fmt(last.p99, 1),
                   fmt(first.p50, 1), fmt(all.p50, 1), fmt(all.p99, 1), "\(missed)", fmt(clientCPU), serverCPU.map { fmt($0) } ?? "-"])
        print(table.render(), terminator: "")
        var object: [String: Any] = [
            "tool": "cg-load", "mode": "fanout", "label": common.label ?? "fanout", "url": common.url,
            "subscribers": subscribed, "subscribers_wanted": subscribers, "connections_acknowledged": acknowledged,
            "subprotocols": subprotocolCounts(acknowledged: acknowledged, legacy: reports.reduce(0) { $0 + $1.legacy }),
            "connect_failed": reports.reduce(0) { $0 + $1.failed }, "bumps": rounds.count, "first_failure": failure ?? NSNull(),
            "client_threads": shardCount, "client_coalesce_us": coalesceUs, "connect_and_subscribe_s": r(connectSeconds),
            "commit_to_last_next": last.json, "commit_to_first_next": first.json, "commit_to_each_next": all.json,
            "missed_deliveries": missed, "wall_s": r(wall), "client_cpu_s": r(clientCPU),
            "per_bump_last_ms": lastMs.map(r),
        ]
        if let serverCPU { object["server_cpu_s"] = r(serverCPU) }
        try common.output("fanout", object)
    }
}

// MARK: - idle

struct IdleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "Open N acknowledged connections (then, with --subscribe, one subscription each) and hold them; server RSS per connection.",
        discussion: """
            With --server-pid it reads the server's VmRSS from /proc/PID/status (with its descendants') before connecting, \
            after every connection is acknowledged and --settle seconds have passed, and (with \
            --subscribe) after every subscription has received its first `next`: KiB per idle \
            connection and per subscription. Prints `ready` on standard error when all are open, \
            then holds them --hold seconds. Connections are spread over --threads client threads.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .long, parsing: .unconditional, help: "Connections.")
    var connections = 1000

    @Flag(name: .long, help: "Also subscribe each connection to catalogVersion.")
    var subscribe = false

    @Option(name: .long, parsing: .unconditional, help: "Seconds to let the server settle before reading its RSS.")
    var settle = 2.0

    @Option(name: .long, parsing: .unconditional, help: "Seconds to hold the connections open after measuring.")
    var hold = 0.0

    @Option(name: .long, parsing: .unconditional, help: "Client threads (default: one per 1,250 connections, at most 8).")
    var threads: Int?

    @Option(name: .long, parsing: .unconditional, help: "Microseconds each client thread sleeps between poll() passes.")
    var coalesceUs: UInt32 = 10_000

    func validate() throws {
        try Check.count("--connections", connections, atLeast: 1)
        try Check.seconds("--settle", settle, zeroAllowed: true)
        try Check.seconds("--hold", hold, zeroAllowed: true)
    }

    func run() throws {
        let endpoint = try common.endpoint(), framing = try common.framingMode(), subprotocol = try common.subprotocolChoice()
        let shardCount = threads ?? min(8, max(1, (connections + 1249) / 1250))
        let pid = common.serverPid
        let rss0 = pid.flatMap { residentKiB($0) }
        let connectCoordinator = Coordinator(shards: shardCount), subscribeCoordinator = Coordinator(shards: shardCount)
        let payload = operationPayload(query: "subscription { catalogVersion { version } }", variables: nil)
        let batch = max(1, common.connectBatch / shardCount), timeout = common.connectTimeout, subscribe = self.subscribe, coalesce = coalesceUs
        let t0 = nowNs()
        let threadsDone = runShards(shardCount, total: connections) { shard, count in
            do {
                let client = try LoadClient(endpoint: endpoint, groups: [
                    GroupSpec(name: "idle", connections: count, inflight: 0, payloads: [[]], activePhases: []),
                ], framing: framing, subprotocol: subprotocol, tickMs: 50)
                client.maxPendingConnects = batch
                client.coalesceMicros = coalesce
                _ = client.connectAll(timeoutSeconds: timeout)
                connectCoordinator.report(shard, ShardReport(acknowledged: client.acknowledged, failed: client.failedCount,
                                                             subscribed: 0, failure: client.lastFailure, legacy: client.acknowledgedLegacy))
                client.service(until: .max) { connectCoordinator.stage >= 1 }
                if subscribe {
                    _ = client.subscribeAll(payload, timeoutSeconds: timeout)
                    subscribeCoordinator.report(shard, ShardReport(acknowledged: client.acknowledged, failed: client.failedCount,
                                                                   subscribed: client.subscriptionFirstNexts, failure: client.lastFailure))
                }
                client.service(until: .max) { connectCoordinator.stage >= 2 }
                client.closeAll()
            } catch {
                connectCoordinator.report(shard, ShardReport(acknowledged: 0, failed: count, subscribed: 0, failure: "\(error)"))
                if subscribe { subscribeCoordinator.report(shard, ShardReport(acknowledged: 0, failed: count, subscribed: 0, failure: "\(error)")) }
            }
        }
        connectCoordinator.waitForReports()
        let connectSeconds = Double(nowNs() - t0) / 1e9
        let reports = connectCoordinator.reports
        let acknowledged = reports.reduce(0) { $0 + $1.acknowledged }
        let failure = reports.compactMap(\.failure).first
        guard acknowledged > 0 else {
            connectCoordinator.advance(to: 2)
            threadsDone()
            throw LoadError("no connection was acknowledged (\(failure ?? "timed out"))")
        }
        if acknowledged < connections {
            FileHandle.standardError.write(Data("cg-load: \(acknowledged) of \(connections) connections acknowledged (\(failure ?? "timed out"))\n".utf8))
        }
        usleep(useconds_t(settle * 1e6))
        let rss1 = pid.flatMap { residentKiB($0) }
        connectCoordinator.advance(to: 1)
        var rss2: Int?, subscribed = 0, subscribeSeconds: Double?
        if subscribe {
            let t1 = nowNs()
            subscribeCoordinator.waitForReports()
            subscribeSeconds = Double(nowNs() - t1) / 1e9
            subscribed = subscribeCoordinator.reports.reduce(0) { $0 + $1.subscribed }
            usleep(useconds_t(settle * 1e6))
            rss2 = pid.flatMap { residentKiB($0) }
        }
        FileHandle.standardError.write(Data("ready \(acknowledged) connections\n".utf8))
        if hold > 0 { usleep(useconds_t(hold * 1e6)) }
        connectCoordinator.advance(to: 2)
        threadsDone()

        let n = Double(max(1, acknowledged))
        var object: [String: Any] = [
            "tool": "cg-load", "mode": "idle", "label": common.label ?? "idle", "url": common.url,
            "connections": acknowledged, "connect_failed": reports.reduce(0) { $0 + $1.failed }, "connect_s": r(connectSeconds),
            "subprotocols": subprotocolCounts(acknowledged: acknowledged, legacy: reports.reduce(0) { $0 + $1.legacy }),
            "client_threads": shardCount,
        ]
        var table = TextTable(header: ["idle", "connections", "connect s", "RSS before KiB", "RSS open KiB", "KiB/conn", "RSS subscribed KiB", "KiB/subscription"])
        var perConn: Double?, perSub: Double?
        if let rss0, let rss1 {
            perConn = Double(rss1 - rss0) / n
            object["server_rss_before_kib"] = rss0
            object["server_rss_connected_kib"] = rss1
            object["kib_per_connection"] = r(perConn ?? 0)
        }
        if let rss1, let rss2 {
            perSub = Double(rss2 - rss1) / Double(max(1, subscribed))
            object["server_rss_subscribed_kib"] = rss2
            object["kib_per_subscription"] = r(perSub ?? 0)
            object["subscribed"] = subscribed
        }
        if let subscribeSeconds { object["subscribe_s"] = r(subscribeSeconds) }
        table.add([common.label ?? "idle", "\(acknowledged)", fmt(connectSeconds), rss0.map(String.init) ?? "-", rss1.map(String.init) ?? "-",
                   perConn.map { fmt($0) } ?? "-", rss2.map(String.init) ?? "-", perSub.map { fmt($0) } ?? "-"])
        print(table.render(), terminator: "")
        try common.output("idle", object)
    }
}

// MARK: - shards

struct ShardReport: Sendable {
    var acknowledged: Int
    var failed: Int
    var subscribed: Int
    var failure: String?
    /// Of `acknowledged`, the connections speaking the legacy graphql-ws.
    var legacy = 0
}

/// The JSON result's `subprotocols`: acknowledged connections by the protocol they spoke.
func subprotocolCounts(acknowledged: Int, legacy: Int) -> [String: Int] {
    [Subprotocol.transport.rawValue: acknowledged - legacy, Subprotocol.legacy.rawValue: legacy]
}

/// Client threads report here when a stage is done and wait for the main thread to advance.
final class Coordinator: Sendable {
    private let state: Mutex<[ShardReport?]>
    private let stageValue = Atomic<Int>(0)

    init(shards: Int) { state = Mutex(Array(repeating: nil, count: shards)) }

    func report(_ shard: Int, _ r: ShardReport) { state.withLock { $0[shard] = r } }
    var reports: [ShardReport] { state.withLock { $0.compactMap { $0 } } }
    func waitForReports() { while state.withLock({ $0.contains { $0 == nil } }) { usleep(2000) } }
    var stage: Int { stageValue.load(ordering: .acquiring) }
    func advance(to s: Int) { stageValue.store(s, ordering: .releasing) }
}

/// Starts `count` client threads, each given its shard index and its share of `total`
/// connections; returns a function that waits for all of them.
func runShards(_ count: Int, total: Int, _ body: @escaping @Sendable (Int, Int) -> Void) -> () -> Void {
    let finished = Counter()
    for shard in 0..<count {
        let share = total / count + (shard < total % count ? 1 : 0)
        let t = Thread {
            body(shard, share)
            finished.value.add(1, ordering: .releasing)
        }
        t.stackSize = 4 << 20
        t.start()
    }
    return { while finished.value.load(ordering: .acquiring) < count { usleep(2000) } }
}

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

// MARK: - shared

func requireConnected(_ client: LoadClient) throws {
    guard client.readyCount > 0 else {
        throw LoadError("no connection was acknowledged (\(client.lastFailure ?? "timed out"))")
    }
    if client.readyCount < client.connections.count {
        FileHandle.standardError.write(Data("cg-load: \(client.readyCount) of \(client.connections.count) connections acknowledged (\(client.lastFailure ?? "timed out"))\n".utf8))
    }
}

/// The table and JSON object of an ops/hol run.
func phaseReport(mode: String, client: LoadClient, phases: [PhaseResult], connectSeconds: Double, extra: [String: Any]) -> [String: Any] {
    var table = TextTable(header: ["phase", "group", "conns", "ops", "ops/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "KiB/op", "client CPU", "server CPU"])
    var phaseObjects: [[String: Any]] = []
    for phase in phases {
        var groupObjects: [[String: Any]] = []
        for (g, s) in phase.groups.enumerated() {
            let lat = LatencySummary(s.histogram)
            let opsPerSecond = Double(s.completed) / phase.wallSeconds
            table.add([phase.name, client.groups[g].name, "\(client.groups[g].connections)×\(client.groups[g].inflight)",
                       "\(s.completed)", fmt(opsPerSecond, 0), fmt(lat.p50, 3), fmt(lat.p90, 3), fmt(lat.p99, 3), fmt(lat.p999, 3), fmt(lat.max, 3),
                       "\(s.errors + s.fieldErrors)", fmt(Double(s.responseBytes) / Double(max(1, lat.count)) / 1024),
                       g == 0 ? fmt(phase.clientCPUSeconds / phase.wallSeconds * 100, 0) + "%" : "",
                       g == 0 ? phase.serverCPUSeconds.map { fmt($0 / phase.wallSeconds * 100, 0) + "%" } ?? "-" : ""])
            groupObjects.append([
                "name": client.groups[g].name, "connections": client.groups[g].connections, "inflight": client.groups[g].inflight,
                "ops": s.completed, "ops_per_s": r(opsPerSecond), "errors": s.errors, "responses_checked": s.checked,
                "responses_with_errors": s.fieldErrors, "response_bytes_mean": lat.count > 0 ? s.responseBytes / lat.count : 0,
                "latency": lat.json,
            ])
        }
        var p: [String: Any] = ["name": phase.name, "wall_s": r(phase.wallSeconds), "client_cpu_s": r(phase.clientCPUSeconds),
                                "client_cpu_percent": r(phase.clientCPUSeconds / phase.wallSeconds * 100), "groups": groupObjects]
        if let s = phase.serverCPUSeconds {
            p["server_cpu_s"] = r(s)
            p["server_cpu_percent"] = r(s / phase.wallSeconds * 100)
            let ops = phase.groups.reduce(0) { $0 + $1.completed }
            if ops > 0 { p["server_cpu_us_per_op"] = r(s / Double(ops) * 1e6) }
        }
        phaseObjects.append(p)
    }
    print(table.render(), terminator: "")
    if let f = client.lastFailure { FileHandle.standardError.write(Data("cg-load: note: \(f)\n".utf8)) }
    var object: [String: Any] = [
        "tool": "cg-load", "mode": mode, "label": client.groups[0].name, "url": "ws://\(client.endpoint.host):\(client.endpoint.port)\(client.endpoint.path)",
        "connect_s": r(connectSeconds), "connections_ready": client.acknowledged, "connect_failed": client.failedCount,
        "protocol_errors": client.protocolErrors, "phases": phaseObjects,
        "subprotocols": subprotocolCounts(acknowledged: client.acknowledged, legacy: client.acknowledgedLegacy),
    ]
    for (k, v) in extra { object[k] = v }
    return object
}

CGLoad.main()

/// Default client threads of `fanout` and `fanout-floor`: one per 1,250 subscribers, at most 8;
/// with raw (epoll) framing also at most one per CPU.
func fanoutReaderThreads(subscribers: Int, framing: LoadClient.Framing) -> Int {
    let bySize = min(8, max(1, (subscribers + 1249) / 1250))
    guard framing == .raw else { return bySize }
    return min(bySize, max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
}
