import Foundation
import Testing
@testable import Gateway
import Resolvers
import Schema
import TestSupport

/// Isolation between clients: a heavy client and a client that does not read must not hold up
/// anyone else.
@Suite(.serialized) struct GatewayLoadTests {
    /// ~3 MB of JSON and tens of milliseconds of SQL per execution; `first` varies so that no
    /// two executions share an answer.
    static func heavyQuery(_ n: Int) -> String {
        "{ a: products(first: \(100 - n)) { nodes { id sku name description images specs { label value } manufacturer { name products(first: 100) { nodes { name description specs { label value } } } } category { title path { title } } } } b: search(text: \\\"a\\\", first: 100) { nodes { id name description specs { label value } manufacturer { products(first: 100) { nodes { name description } } } } } }"
    }

    static func demoServer(_ configure: @escaping (inout GatewayOptions) -> Void = { _ in }) throws -> LiveServer {
        try LiveServer(configure, catalog: {
            let dir = URL(fileURLWithPath: TestFiles.file("demo", ext: "d"))
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let path = dir.appendingPathComponent("catalog.sqlite").path
            try DemoCatalog().write(to: path)
            return path
        })
    }

    @Test func heavyQueriesOnOneConnectionDoNotBlockSmallOnesOnOthers() throws {
        let s = try Self.demoServer { $0.workers = 2; $0.maxQueuedBytes = 256 << 20 }
        let heavy = try s.transportClient()
        let t0 = Date()
        for i in 0..<6 { try heavy.send(#"{"id":"h\#(i)","type":"subscribe","payload":{"query":"\#(Self.heavyQuery(i))"}}"#) }
        usleep(20_000)
        let small = try s.transportClient()
        let t1 = Date()
        try small.send(#"{"id":"s","type":"subscribe","payload":{"query":"{ catalogVersion { version } }"}}"#)
        guard case .text(let next) = small.next(timeout: 10) else { Issue.record("no answer for the small query"); return }
        let smallLatency = Date().timeIntervalSince(t1)
        #expect(next.hasPrefix(#"{"id":"s","type":"next""#))
        var completes = 0
        while completes < 6 {
            switch heavy.next(timeout: 30) {
            case .text(let t): if t.hasSuffix(#""type":"complete"}"#) { completes += 1 } else { #expect(!t.contains(#""errors""#)) }
            case let other: Issue.record("heavy connection: \(other)"); return
            }
        }
        let heavyTotal = Date().timeIntervalSince(t0)
        #expect(smallLatency < heavyTotal / 3, "small query took \(smallLatency)s while the heavy batch took \(heavyTotal)s")
    }

    @Test func clientThatDoesNotReadIsClosedAndOthersAreUnaffected() throws {
        let s = try Self.demoServer { $0.maxQueuedBytes = 1 << 20 }
        let slow = try s.transportClient()
        for i in 0..<12 { try slow.send(#"{"id":"h\#(i)","type":"subscribe","payload":{"query":"\#(Self.heavyQuery(i))"}}"#) }
        // Meanwhile another client is served promptly, many times over.
        let other = try s.transportClient()
        for i in 0..<20 {
            let t = Date()
            try other.send(#"{"id":"q\#(i)","type":"subscribe","payload":{"query":"{ catalogVersion { version } }"}}"#)
            #expect(other.next(timeout: 5).description.hasPrefix(#"text {"id":"q\#(i)","type":"next""#))
            #expect(other.next(timeout: 5) == .text(#"{"id":"q\#(i)","type":"complete"}"#))
            #expect(Date().timeIntervalSince(t) < 1)
        }
        // Only once the server gave up on it does the slow client start reading: after what the
        // kernel and lws had buffered, it finds a 1008 close.
        let gaveUp = Date().addingTimeInterval(30)
        while s.server.slowClientsClosed == 0 && Date() < gaveUp { usleep(10_000) }
        #expect(s.server.slowClientsClosed == 1)
        var sawClose: TestWebSocket.Event? = nil
        let deadline = Date().addingTimeInterval(30)
        var n = 0
        while Date() < deadline {
            let e = slow.next(timeout: 10)
            if case .text = e { n += 1; continue }
            sawClose = e
            break
        }
        // lws sends the close frame after what it had buffered, or drops the connection when that
        // cannot be flushed in time.
        switch sawClose {
        case .close(let code, let reason)?:
            #expect(code == 1008)
            #expect(reason.hasPrefix("Send queue limit exceeded"))
        case .eof?: break
        default: Issue.record("expected a close, got \(String(describing: sawClose)) after reading \(n) messages")
        }
        // The server still answers.
        let after = try s.transportClient()
        try after.send(#"{"id":"x","type":"subscribe","payload":{"query":"{ catalogVersion { version } }"}}"#)
        #expect(after.next().description.hasPrefix(#"text {"id":"x","type":"next""#))
    }

    @Test func stopFinishesInFlightOperationsThenCloses1001() throws {
        let s = try Self.demoServer { $0.maxQueuedBytes = 256 << 20; $0.shutdownTimeout = 120 }
        let ws = try s.transportClient()
        for i in 0..<4 { try ws.send(#"{"id":"h\#(i)","type":"subscribe","payload":{"query":"\#(Self.heavyQuery(i))"}}"#) }
        usleep(30_000)
        s.server.stop()
        var completes = 0
        var final: TestWebSocket.Event = .timeout
        while true {
            let e = ws.next(timeout: 120)
            if case .text(let t) = e {
                if t.hasSuffix(#""type":"complete"}"#) { completes += 1 }
                continue
            }
            final = e
            break
        }
        #expect(completes == 4)
        #expect(final == .close(code: 1001, reason: "Server shutting down"))
        s.server.wait()
    }
}
