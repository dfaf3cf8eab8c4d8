import Foundation
import Testing
@testable import Gateway
import Schema

/// The real server on an ephemeral port, driven over raw sockets.
@Suite(.serialized) struct GatewayLiveTests {
    static let versionQuery = #"{ catalogVersion { version catalogRow assetRow } }"#
    static let version1 = #"{"data":{"catalogVersion":{"version":1,"catalogRow":10,"assetRow":20}}}"#

    func subscribe(_ ws: TestWebSocket, id: String, _ query: String) throws {
        var w = JSONWriter()
        w.raw("{\"id\":"); w.string(id); w.raw(",\"type\":\"subscribe\",\"payload\":{\"query\":"); w.string(query); w.raw("}}")
        try ws.send(String(decoding: w.bytes, as: UTF8.self))
    }

    // MARK: graphql-transport-ws

    @Test func queryGetsOneNextThenComplete() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        #expect(ws.subprotocol == "graphql-transport-ws")
        try subscribe(ws, id: "1", Self.versionQuery)
        #expect(ws.next() == .text(#"{"id":"1","type":"next","payload":\#(Self.version1)}"#))
        #expect(ws.next() == .text(#"{"id":"1","type":"complete"}"#))
    }

    /// The version query under `id`, answered with its `next` and `complete`.
    func expectVersionAnswer(_ ws: TestWebSocket, id: String) throws {
        try subscribe(ws, id: id, Self.versionQuery)
        #expect(ws.next() == .text(#"{"id":"\#(id)","type":"next","payload":\#(Self.version1)}"#))
        #expect(ws.next() == .text(#"{"id":"\#(id)","type":"complete"}"#))
    }

    /// While the service thread sleeps in poll(), a worker's answer is written by the drainer
    /// in its place, under the service lock that the hooked poll() releases (CServiceLock).
    /// Without direct writes there is no drainer.
    @Test func answersAreWrittenByTheDrainerWhileTheServiceThreadSleeps() throws {
        let s = try LiveServer { $0.drainerMinConnections = 1 }
        let ws = try s.transportClient()
        #expect(s.server.servicePolls > 0)
        var i = 0
        while s.server.drainerPasses == 0 && i < 200 {
            i += 1
            try expectVersionAnswer(ws, id: "q\(i)")
        }
        #expect(s.server.drainerPasses > 0)

        // Below the threshold (the default 1,000 here), or without direct writes: no drainer.
        let few = try LiveServer()
        let ws1 = try few.transportClient()
        for k in 1...20 { try expectVersionAnswer(ws1, id: "\(k)") }
        #expect(few.server.drainerPasses == 0)
        let off = try LiveServer { $0.directWrites = false; $0.drainerMinConnections = 1 }
        let ws2 = try off.transportClient()
        for k in 1...5 { try expectVersionAnswer(ws2, id: "\(k)") }
        #expect(off.server.drainerPasses == 0)
    }

    /// A connection named twice in one drain round (marks made without the outbox's say: a
    /// subscription's start, a decode done aside, the hub) gets one direct write in it, not
    /// two: a second would go out before what lws keeps of a short first one. Here the marks
    /// are doubled by hand, for every connection id the server has given, while queries and
    /// their answers flow; every answer still arrives whole and in order.
    @Test func aConnectionNamedTwiceInARoundGetsOneDirectWrite() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        let ids = [UInt64](1...4)
        for k in 1...60 {
            s.server.waker.wake(ids + ids)
            try subscribe(ws, id: "q\(k)", Self.versionQuery)
            s.server.waker.wake(ids + ids)
            #expect(ws.next() == .text(#"{"id":"q\#(k)","type":"next","payload":\#(Self.version1)}"#))
            #expect(ws.next() == .text(#"{"id":"q\#(k)","type":"complete"}"#))
        }
        #expect(s.server.repeatedInRound > 0)
    }

    /// POST /graphql with `query` as its JSON body.
    func post(_ s: LiveServer, _ query: String) throws -> HTTPTestResponse {
        var w = JSONWriter()
        w.raw("{\"query\":"); w.string(query); w.raw("}")
        return try httpRequest(port: s.port, method: "POST", path: "/graphql",
                               headers: [("Content-Type", "application/json")], body: w.bytes)
    }

    /// An HTTP answer is written through lws on the service thread: the worker wakes that
    /// thread itself. Through the drainer (0.37.0) each answer took one more thread hand-off:
    /// beside 8,000 idle WebSockets, sequential POSTs cost the server 4.29 / 4.24 context
    /// switches each, against 2.97 / 2.99 without it.
    @Test func httpAnswersWakeTheServiceThreadNotTheDrainer() throws {
        let s = try LiveServer { $0.drainerMinConnections = 1 }
        let ws = try s.transportClient()
        for _ in 1...40 {
            let r = try post(s, "{ catalogVersion { version } }")
            #expect(r.status == 200)
            #expect(r.text == #"{"data":{"catalogVersion":{"version":1}}}"#)
        }
        #expect(s.server.drainerPasses == 0)
        // The drainer is on: the WebSocket's answers go through it.
        var i = 0
        while s.server.drainerPasses == 0 && i < 200 {
            i += 1
            try expectVersionAnswer(ws, id: "q\(i)")
        }
        #expect(s.server.drainerPasses > 0)
    }

    /// A worker's HTTP answer that fits one write is written by the service thread as soon
    /// as it takes the mark, not from a WRITEABLE callback asked of lws: one epoll pass and
    /// wait less per request (beside 8,000 idle WebSockets, `idle_http_cost.py`: 4.15 / 4.18
    /// waits per short connection before, 3.16 / 3.17 after). One larger than a write still
    /// goes through WRITEABLE, in pieces, whole. A body of one write goes in the same write as
    /// its headers (one send, one segment); a larger one after them.
    @Test func httpAnswersAreWrittenAtOnce() throws {
        let s = try LiveServer()
        for _ in 1...50 {
            let r = try post(s, "{ catalogVersion { version } }")
            #expect(r.status == 200)
            #expect(r.text == #"{"data":{"catalogVersion":{"version":1}}}"#)
        }
        #expect(s.server.httpAnswersWrittenAtOnce == 50)
        #expect(s.server.httpBodiesWithHeaders == 50)
        // 1,500 aliases: an answer of about 40 KB, still one write.
        let many = (0..<1500).map { "v\($0): catalogVersion { version }" }.joined(separator: " ")
        let big = try post(s, "{ \(many) }")
        #expect(big.status == 200)
        #expect(big.body.count == Int(big.headers["content-length"] ?? "") && big.body.count > 30_000)
        #expect(s.server.httpAnswersWrittenAtOnce == 51)
        #expect(s.server.httpBodiesWithHeaders == 51)
        // 2,000 aliases of three fields each through a fragment: about 100 KB of answer from a
        // document under the 64 KiB limit.
        let more = (0..<2000).map { "v\($0):catalogVersion{...F}" }.joined(separator: " ")
        let bigger = try post(s, "{ \(more) } fragment F on CatalogVersion { version catalogRow assetRow }")
        #expect(bigger.status == 200)
        #expect(bigger.body.count == Int(bigger.headers["content-length"] ?? "") && bigger.body.count > 65_536)
        #expect(bigger.text.hasSuffix(#""v1999":{"version":1,"catalogRow":10,"assetRow":20}}}"#))
        #expect(s.server.httpAnswersWrittenAtOnce == 51)
        #expect(s.server.httpBodiesWithHeaders == 51)
    }

    @Test func validationFailureIsAnErrorMessageWithoutComplete() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        try subscribe(ws, id: "bad", "{ nope }")
        guard let m = ws.nextJSON() else { Issue.record("no message"); return }
        #expect(m["type"] == .string("error"))
        #expect(m["id"] == .string("bad"))
        guard case .array(let errors)? = m["payload"] else { Issue.record("payload is not an array: \(m)"); return }
        #expect(!errors.isEmpty)
        #expect(errors.first?["message"] != nil)
        // Nothing else for "bad": the next message is the pong to this ping.
        try ws.send(#"{"type":"ping","payload":{"after":"error"}}"#)
        #expect(ws.next() == .text(#"{"type":"pong","payload":{"after":"error"}}"#))
    }

    @Test func pingIsAnsweredWithPong() throws {
        let s = try LiveServer()
        let ws = try TestWebSocket(port: s.port, protocols: ["graphql-transport-ws"])
        try ws.send(#"{"type":"ping","payload":{"k":[1,"two"]}}"#)
        #expect(ws.next() == .text(#"{"type":"pong","payload":{"k":[1,"two"]}}"#))
        try ws.send(#"{"type":"connection_init"}"#)
        #expect(ws.next() == .text(#"{"type":"connection_ack"}"#))
        try ws.send(#"{"type":"pong"}"#)
        try ws.send(#"{"type":"ping"}"#)
        #expect(ws.next() == .text(#"{"type":"pong"}"#))
    }

    @Test func subscribeBeforeInitCloses4401() throws {
        let s = try LiveServer()
        let ws = try TestWebSocket(port: s.port, protocols: ["graphql-transport-ws"])
        try subscribe(ws, id: "1", Self.versionQuery)
        #expect(ws.next() == .close(code: 4401, reason: "Unauthorized"))
    }

    @Test func secondInitCloses4429() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        try ws.send(#"{"type":"connection_init"}"#)
        #expect(ws.next() == .close(code: 4429, reason: "Too many initialisation requests"))
    }

    @Test func initTimeoutCloses4408() throws {
        let s = try LiveServer { $0.initTimeout = 0.3 }
        let ws = try TestWebSocket(port: s.port, protocols: ["graphql-transport-ws"])
        let t0 = Date()
        #expect(ws.next(timeout: 3) == .close(code: 4408, reason: "Connection initialisation timeout"))
        #expect(Date().timeIntervalSince(t0) >= 0.25)
    }

    @Test func invalidMessageCloses4400() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        try ws.send(#"{"type":"subscribe","id":"1","payload":{"query":7}}"#)
        #expect(ws.next() == .close(code: 4400, reason: #""subscribe" message payload expects the 'query' property to be a string, but got number"#))
        let ws2 = try s.transportClient()
        try ws2.send("not json")
        guard case .close(let code, let reason) = ws2.next() else { Issue.record("expected close"); return }
        #expect(code == 4400)
        #expect(reason.hasPrefix("Invalid message received: invalid token near 'not'"))
    }

    @Test func invalidUTF8Closes1007() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        try ws.sendFrame(opcode: 1, [0x7B, 0xC3, 0x28, 0x7D])
        guard case .close(let code, _) = ws.next() else { Issue.record("expected close"); return }
        #expect(code == 1007)
    }

    @Test func duplicateSubscriptionIdCloses4409() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        try subscribe(ws, id: "s", "subscription { catalogVersion { version } }")
        #expect(ws.next() == .text(#"{"id":"s","type":"next","payload":{"data":{"catalogVersion":{"version":1}}}}"#))
        try subscribe(ws, id: "s", "subscription { catalogVersion { version } }")
        #expect(ws.next() == .close(code: 4409, reason: "Subscriber for s already exists"))
    }

    @Test func subscriptionSeesACommitFromAnotherProcess() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        try subscribe(ws, id: "v", "subscription { catalogVersion { version catalogRow } }")
        #expect(ws.next() == .text(#"{"id":"v","type":"next","payload":{"data":{"catalogVersion":{"version":1,"catalogRow":10}}}}"#))
        let t0 = Date()
        try CatalogFixture.sqlite(s.db, "INSERT INTO version VALUES (2, 11, 21);")
        let committed = Date()
        #expect(ws.next(timeout: 1) == .text(#"{"id":"v","type":"next","payload":{"data":{"catalogVersion":{"version":2,"catalogRow":11}}}}"#))
        let latency = Date().timeIntervalSince(committed)
        #expect(latency < 0.5, "next arrived \(latency)s after the commit (sqlite3 took \(committed.timeIntervalSince(t0))s)")
        // A commit that does not change the version sends nothing.
        try CatalogFixture.sqlite(s.db, "INSERT INTO mfg VALUES (2, 'Canon', 'canon.png');")
        #expect(ws.next(timeout: 0.4) == .timeout)
    }

    @Test func clientCompleteStopsTheSubscription() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        try subscribe(ws, id: "v", "subscription { catalogVersion { version } }")
        #expect(ws.next() == .text(#"{"id":"v","type":"next","payload":{"data":{"catalogVersion":{"version":1}}}}"#))
        try ws.send(#"{"id":"v","type":"complete"}"#)
        try CatalogFixture.sqlite(s.db, "INSERT INTO version VALUES (2, 11, 21);")
        #expect(ws.next(timeout: 0.5) == .timeout)
        // The id may be used again.
        try subscribe(ws, id: "v", Self.versionQuery)
        #expect(ws.next() == .text(#"{"id":"v","type":"next","payload":{"data":{"catalogVersion":{"version":2,"catalogRow":11,"assetRow":21}}}}"#))
        #expect(ws.next() == .text(#"{"id":"v","type":"complete"}"#))
    }

    @Test func operationsInterleaveOnOneSocket() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        let ids = (0..<40).map { "op\($0)" }
        for id in ids { try subscribe(ws, id: id, Self.versionQuery) }
        var nexts: [String: Int] = [:]
        var completes: [String: Int] = [:]
        for _ in 0..<(ids.count * 2) {
            guard let m = ws.nextJSON(), case .string(let id)? = m["id"], case .string(let type)? = m["type"] else {
                Issue.record("missing message"); return
            }
            if type == "next" {
                #expect(completes[id] == nil, "next after complete for \(id)")
                nexts[id, default: 0] += 1
            } else if type == "complete" {
                completes[id, default: 0] += 1
            }
        }
        #expect(nexts.count == ids.count && nexts.values.allSatisfy { $0 == 1 })
        #expect(completes.count == ids.count && completes.values.allSatisfy { $0 == 1 })
    }

    @Test func fragmentedMessagesAreReassembled() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        let text = Array(#"{"type":"ping","payload":{"fragmented":true}}"#.utf8)
        try ws.sendFrame(opcode: 1, Array(text[0..<10]), fin: false)
        try ws.sendFrame(opcode: 0, Array(text[10..<20]), fin: false)
        try ws.sendFrame(opcode: 0, Array(text[20...]), fin: true)
        #expect(ws.next() == .text(#"{"type":"pong","payload":{"fragmented":true}}"#))
    }

    @Test func oversizedMessageCloses1009() throws {
        let s = try LiveServer { $0.maxMessageBytes = 1000 }
        let ws = try s.transportClient()
        let big = #"{"type":"ping","payload":{"x":""# + String(repeating: "a", count: 2000) + #""}}"#
        try ws.send(big)
        #expect(ws.next() == .close(code: 1009, reason: "Message too big (limit 1000 bytes)"))
    }

    @Test func websocketPingsKeepAlive() throws {
        let s = try LiveServer { $0.keepAliveInterval = 1; $0.keepAliveTimeout = 1 }
        let ws = try s.transportClient()
        #expect(ws.next(timeout: 2.5) == .timeout)
        #expect(ws.pingsReceived >= 1)
    }

    @Test func deadPeerIsClosed() throws {
        let s = try LiveServer { $0.keepAliveInterval = 1; $0.keepAliveTimeout = 1 }
        let ws = try s.transportClient()
        ws.answerPings = false
        let event = ws.next(timeout: 5)
        #expect(event == .eof || event.description.hasPrefix("close"))
        #expect(ws.pingsReceived >= 1)
    }

    // MARK: graphql-ws (legacy)

    @Test func legacyLifecycle() throws {
        let s = try LiveServer()
        let ws = try TestWebSocket(port: s.port, protocols: ["graphql-ws"])
        #expect(ws.subprotocol == "graphql-ws")
        try ws.send(#"{"type":"connection_init","payload":{}}"#)
        #expect(ws.next() == .text(#"{"type":"connection_ack"}"#))
        #expect(ws.next() == .text(#"{"type":"ka"}"#))
        try ws.send(#"{"id":"1","type":"start","payload":{"query":"\#(Self.versionQuery)","variables":null}}"#)
        #expect(ws.next() == .text(#"{"id":"1","type":"data","payload":\#(Self.version1)}"#))
        #expect(ws.next() == .text(#"{"id":"1","type":"complete"}"#))
        try ws.send(#"{"id":"2","type":"start","payload":{"query":"subscription { catalogVersion { version } }"}}"#)
        #expect(ws.next() == .text(#"{"id":"2","type":"data","payload":{"data":{"catalogVersion":{"version":1}}}}"#))
        try ws.send(#"{"id":"2","type":"stop"}"#)
        #expect(ws.next() == .text(#"{"id":"2","type":"complete"}"#))
        try ws.send(#"{"type":"connection_terminate"}"#)
        #expect(ws.next() == .close(code: 1000, reason: "Connection terminated by the client"))
    }

    @Test func legacyRequestErrorIsDataThenComplete() throws {
        let s = try LiveServer()
        let ws = try TestWebSocket(port: s.port, protocols: ["graphql-ws"])
        try ws.send(#"{"type":"connection_init"}"#)
        _ = ws.next(); _ = ws.next()
        try ws.send(#"{"id":"e","type":"start","payload":{"query":"{ nope }"}}"#)
        guard let m = ws.nextJSON() else { Issue.record("no message"); return }
        #expect(m["type"] == .string("data"))
        guard case .array(let errors)? = m["payload"]?["errors"] else { Issue.record("no errors: \(m)"); return }
        #expect(!errors.isEmpty)
        #expect(m["payload"]?["data"] == nil)
        #expect(ws.next() == .text(#"{"id":"e","type":"complete"}"#))
        try ws.send("nonsense")
        guard let e = ws.nextJSON() else { Issue.record("no error message"); return }
        #expect(e["type"] == .string("error"))
    }

    @Test func legacyKeepAliveRepeats() throws {
        let s = try LiveServer { $0.keepAliveInterval = 1 }
        let ws = try TestWebSocket(port: s.port, protocols: ["graphql-ws"])
        try ws.send(#"{"type":"connection_init"}"#)
        #expect(ws.next() == .text(#"{"type":"connection_ack"}"#))
        #expect(ws.next() == .text(#"{"type":"ka"}"#))
        #expect(ws.next(timeout: 2) == .text(#"{"type":"ka"}"#))
    }

    // MARK: Subprotocol negotiation and upgrade refusals

    @Test(arguments: [["graphql-ws", "graphql-transport-ws"], ["graphql-transport-ws", "graphql-ws"], ["foo", "graphql-ws", "graphql-transport-ws"]])
    func transportIsPreferredWhenBothAreOffered(_ offered: [String]) throws {
        let s = try LiveServer()
        let ws = try TestWebSocket(port: s.port, protocols: offered)
        #expect(ws.subprotocol == "graphql-transport-ws")
        try ws.send(#"{"type":"connection_init"}"#)
        #expect(ws.next() == .text(#"{"type":"connection_ack"}"#))
        // graphql-ws is still served to clients offering only it.
        let legacy = try TestWebSocket(port: s.port, protocols: ["graphql-ws"])
        #expect(legacy.subprotocol == "graphql-ws")
    }

    @Test(arguments: [nil, ["foo"], ["graphql"]] as [[String]?])
    func missingOrUnknownSubprotocolIs400(_ offered: [String]?) throws {
        let s = try LiveServer()
        do {
            _ = try TestWebSocket(port: s.port, protocols: offered)
            Issue.record("upgrade accepted")
        } catch let e as HandshakeRejected {
            #expect(e.response.statusLine.hasPrefix("HTTP/1.1 400"))
            #expect(e.response.headers["content-type"] == "text/plain; charset=utf-8")
            #expect(e.response.text.hasPrefix("Unsupported WebSocket subprotocol"))
        }
    }

    @Test func upgradeOnAnotherPathIs404() throws {
        let s = try LiveServer()
        do {
            _ = try TestWebSocket(port: s.port, protocols: ["graphql-transport-ws"], path: "/ws")
            Issue.record("upgrade accepted")
        } catch let e as HandshakeRejected {
            #expect(e.response.status == 404)
        }
    }

    @Test func tooManyConnectionsIs503BeforeTheUpgrade() throws {
        let s = try LiveServer { $0.maxConnections = 1 }
        let first = try s.transportClient()
        do {
            _ = try TestWebSocket(port: s.port, protocols: ["graphql-transport-ws"])
            Issue.record("upgrade accepted")
        } catch let e as HandshakeRejected {
            #expect(e.response.status == 503)
            #expect(e.response.text.contains("Too many connections (limit 1)"))
        }
        _ = first
    }

    @Test func permessageDeflateIsOfferedOnlyWhenTurnedOn() throws {
        let on = try LiveServer { $0.permessageDeflate = true }
        let ws = try TestWebSocket(port: on.port, protocols: ["graphql-transport-ws"],
                                   extraHeaders: [("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")])
        #expect(ws.responseHeaders["sec-websocket-extensions"]?.hasPrefix("permessage-deflate") == true)
        let off = try LiveServer()
        let plain = try TestWebSocket(port: off.port, protocols: ["graphql-transport-ws"],
                                      extraHeaders: [("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")])
        #expect(plain.responseHeaders["sec-websocket-extensions"] == nil)
    }

    // MARK: Shutdown

    @Test func stopClosesWebSocketsWith1001() throws {
        let s = try LiveServer()
        let ws = try s.transportClient()
        try subscribe(ws, id: "v", "subscription { catalogVersion { version } }")
        _ = ws.next()
        s.server.stop()
        #expect(ws.next(timeout: 5) == .close(code: 1001, reason: "Server shutting down"))
        s.server.wait()
        #expect(throws: (any Error).self) { _ = try TestSocket(port: s.port) }
    }
}

/// GraphQL over HTTP on the same port.
@Suite(.serialized) struct GatewayHTTPLiveTests {
    static let jsonCT = "application/json; charset=utf-8"
    static let graphqlCT = "application/graphql-response+json; charset=utf-8"

    @Test func healthReportsTheCatalogVersion() throws {
        let s = try LiveServer()
        let r = try httpRequest(port: s.port, method: "GET", path: "/healthz")
        #expect(r.status == 200)
        #expect(r.headers["content-type"] == Self.jsonCT)
        #expect(r.text == #"{"status":"ok","version":1}"#)
    }

    @Test func postQuery() throws {
        let s = try LiveServer()
        let body = Array(#"{"query":"{ catalogVersion { version } }"}"#.utf8)
        let r = try httpRequest(port: s.port, method: "POST", path: "/graphql",
                                headers: [("Content-Type", "application/json")], body: body)
        #expect(r.status == 200)
        #expect(r.headers["content-type"] == Self.jsonCT)
        #expect(r.text == #"{"data":{"catalogVersion":{"version":1}}}"#)
    }

    @Test func getQueryIsURLDecoded() throws {
        let s = try LiveServer()
        let r = try httpRequest(port: s.port, method: "GET",
                                path: "/graphql?query=query%20V%28%24x%3A%20Boolean%21%29%20%7B%20catalogVersion%20%7B%20version%20%40include%28if%3A%20%24x%29%20%7D%20%7D&variables=%7B%22x%22%3Atrue%7D&operationName=V",
                                headers: [("Accept", "application/graphql-response+json")])
        #expect(r.status == 200)
        #expect(r.headers["content-type"] == Self.graphqlCT)
        #expect(r.text == #"{"data":{"catalogVersion":{"version":1}}}"#)
    }

    @Test func validationErrorStatusDependsOnTheMediaType() throws {
        let s = try LiveServer()
        let body = Array(#"{"query":"{ nope }"}"#.utf8)
        let modern = try httpRequest(port: s.port, method: "POST", path: "/graphql",
                                     headers: [("Content-Type", "application/json"), ("Accept", "application/graphql-response+json, application/json;q=0.9")], body: body)
        #expect(modern.status == 400)
        #expect(modern.headers["content-type"] == Self.graphqlCT)
        #expect(modern.json?["errors"] != nil)
        let legacy = try httpRequest(port: s.port, method: "POST", path: "/graphql",
                                     headers: [("Content-Type", "application/json"), ("Accept", "application/json")], body: body)
        #expect(legacy.status == 200)
        #expect(legacy.headers["content-type"] == Self.jsonCT)
        #expect(legacy.json?["errors"] != nil)
    }

    @Test func subscriptionOverHTTPIsRefused() throws {
        let s = try LiveServer()
        let body = Array(#"{"query":"subscription { catalogVersion { version } }"}"#.utf8)
        let r = try httpRequest(port: s.port, method: "POST", path: "/graphql", headers: [("Content-Type", "application/json")], body: body)
        #expect(r.status == 400)
        #expect(r.text.contains("Subscriptions are not supported over HTTP"))
        #expect(r.text.contains("SUBSCRIPTION_OVER_HTTP"))
    }

    @Test func statusCodes() throws {
        let s = try LiveServer { $0.maxBodyBytes = 100 }
        let p = s.port
        let json = [("Content-Type", "application/json")]
        #expect(try httpRequest(port: p, method: "GET", path: "/nope").status == 404)
        let put = try httpRequest(port: p, method: "PUT", path: "/graphql", headers: json, body: Array("{}".utf8))
        #expect(put.status == 405)
        #expect(put.headers["allow"] == "GET, HEAD, POST, OPTIONS")
        let postHealth = try httpRequest(port: p, method: "POST", path: "/healthz", headers: json, body: Array("{}".utf8))
        #expect(postHealth.status == 405)
        #expect(postHealth.headers["allow"] == "GET, HEAD")
        let big = try httpRequest(port: p, method: "POST", path: "/graphql", headers: json,
                                  body: Array(#"{"query":"\#(String(repeating: " ", count: 200)){ a }"}"#.utf8))
        #expect(big.status == 413)
        let text = try httpRequest(port: p, method: "POST", path: "/graphql", headers: [("Content-Type", "text/plain")], body: Array("{ a }".utf8))
        #expect(text.status == 415)
        let notJSON = try httpRequest(port: p, method: "POST", path: "/graphql", headers: json, body: Array("{query".utf8))
        #expect(notJSON.status == 400)
        let noQuery = try httpRequest(port: p, method: "GET", path: "/graphql")
        #expect(noQuery.status == 400)
        let html = try httpRequest(port: p, method: "GET", path: "/graphql?query=%7Ba%7D", headers: [("Accept", "text/html")])
        #expect(html.status == 406)
        let options = try httpRequest(port: p, method: "OPTIONS", path: "/graphql")
        #expect(options.status == 200)
        #expect(options.headers["content-length"] == "0")
        #expect(options.headers["access-control-allow-origin"] == "*")
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() throws {
        let s = try LiveServer()
        let sock = try TestSocket(port: s.port)
        for _ in 0..<3 {
            try sock.write(Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
            let marker = Array(#""version":1}"#.utf8)
            #expect(sock.read(until: Date().addingTimeInterval(5)) { b in
                b.count >= marker.count && b.indices.dropLast(marker.count - 1).contains { Array(b[$0..<($0 + marker.count)]) == marker }
            })
            sock.buffer = []
        }
    }
}
