import Testing
@testable import Gateway
import Resolvers
import Schema

/// graphql-transport-ws lifecycle rules (enisdenjo/graphql-ws PROTOCOL.md), without sockets.
@Suite struct TransportWSStateMachineTests {
    static let config = WSMachineConfiguration(initTimeoutMs: 3_000, keepAliveMs: 12_000, maxOperations: 3)

    func acked() -> TransportWSStateMachine {
        var m = TransportWSStateMachine(configuration: Self.config)
        _ = m.opened()
        _ = m.receive(#"{"type":"connection_init"}"#)
        return m
    }

    func describe(_ actions: [WSAction]) -> [String] { actions.map(\.description) }

    @Test func openingArmsTheInitTimeout() {
        var m = TransportWSStateMachine(configuration: Self.config)
        #expect(describe(m.opened()) == ["timer 3000"])
    }

    @Test func initIsAcknowledgedAndCancelsTheTimeout() {
        var m = TransportWSStateMachine(configuration: Self.config)
        _ = m.opened()
        #expect(describe(m.receive(#"{"type":"connection_init","payload":{"token":"x"}}"#)) == ["timer off", "send connection_ack"])
        #expect(m.phase == .acknowledged)
    }

    @Test func initTimeoutCloses4408() {
        var m = TransportWSStateMachine(configuration: Self.config)
        _ = m.opened()
        #expect(describe(m.timerFired()) == ["close 4408 Connection initialisation timeout"])
        #expect(m.phase == .closed)
        #expect(describe(m.receive(#"{"type":"connection_init"}"#)) == [])
    }

    @Test func timerAfterAckDoesNothing() {
        var m = acked()
        #expect(describe(m.timerFired()) == [])
    }

    @Test func secondInitCloses4429() {
        var m = acked()
        #expect(describe(m.receive(#"{"type":"connection_init"}"#)) == ["close 4429 Too many initialisation requests"])
    }

    @Test func subscribeBeforeAckCloses4401() {
        var m = TransportWSStateMachine(configuration: Self.config)
        _ = m.opened()
        #expect(describe(m.receive(#"{"id":"1","type":"subscribe","payload":{"query":"{ a }"}}"#)) == ["close 4401 Unauthorized"])
    }

    @Test func pingIsAnsweredWithPongEchoingThePayload() {
        var m = TransportWSStateMachine(configuration: Self.config)
        _ = m.opened()
        // Ping is allowed before connection_init.
        #expect(describe(m.receive(#"{"type":"ping"}"#)) == ["send pong"])
        #expect(describe(m.receive(#"{"type":"ping","payload":{"n":1,"s":"x"}}"#)) == [#"send pong {"n":1,"s":"x"}"#])
        #expect(describe(m.receive(#"{"type":"ping","payload":null}"#)) == ["send pong"])
    }

    @Test func unpromptedPongIsAccepted() {
        var m = acked()
        #expect(describe(m.receive(#"{"type":"pong","payload":{"a":1}}"#)) == [])
        #expect(m.phase == .acknowledged)
    }

    @Test func subscribeStartsAnOperationWithItsRequest() throws {
        var m = acked()
        let actions = m.receive(#"{"id":"q1","type":"subscribe","payload":{"query":"query Q($a: Int) { x }","variables":{"a":1},"operationName":"Q","extensions":{}}}"#)
        #expect(actions.count == 1)
        guard case .execute(let op)? = actions.first else { Issue.record("expected execute"); return }
        #expect(op.id == "q1")
        #expect(op.serial == 1)
        #expect(op.request.query == "query Q($a: Int) { x }")
        #expect(op.request.variables == .object([("a", .int(1))]))
        #expect(op.request.operationName == "Q")
        #expect(m.isActive(id: "q1", serial: 1))
    }

    @Test func duplicateActiveIdCloses4409() {
        var m = acked()
        _ = m.receive(#"{"id":"1","type":"subscribe","payload":{"query":"subscription { catalogVersion { version } }"}}"#)
        #expect(describe(m.receive(#"{"id":"1","type":"subscribe","payload":{"query":"{ a }"}}"#))
                == ["cancel 1#1", "close 4409 Subscriber for 1 already exists"])
    }

    @Test func idIsFreeAgainAfterTheTerminalMessage() {
        var m = acked()
        _ = m.receive(#"{"id":"1","type":"subscribe","payload":{"query":"{ a }"}}"#)
        m.finished(id: "1", serial: 1)
        #expect(!m.isActive(id: "1", serial: 1))
        #expect(describe(m.receive(#"{"id":"1","type":"subscribe","payload":{"query":"{ a }"}}"#)) == ["execute 1#2 { a }"])
        // A stale terminal message of the first operation does not free the second one.
        m.finished(id: "1", serial: 1)
        #expect(m.isActive(id: "1", serial: 2))
    }

    @Test func clientCompleteCancelsAndDropsLaterResults() {
        var m = acked()
        _ = m.receive(#"{"id":"s","type":"subscribe","payload":{"query":"subscription { catalogVersion { version } }"}}"#)
        #expect(describe(m.receive(#"{"id":"s","type":"complete"}"#)) == ["cancel s#1"])
        #expect(!m.isActive(id: "s", serial: 1))
        #expect(describe(m.receive(#"{"id":"s","type":"complete"}"#)) == [])
        #expect(describe(m.receive(#"{"id":"unknown","type":"complete"}"#)) == [])
    }

    @Test func operationsInterleave() {
        var m = acked()
        #expect(describe(m.receive(#"{"id":"a","type":"subscribe","payload":{"query":"{ a }"}}"#)) == ["execute a#1 { a }"])
        #expect(describe(m.receive(#"{"id":"b","type":"subscribe","payload":{"query":"{ b }"}}"#)) == ["execute b#2 { b }"])
        m.finished(id: "b", serial: 2)
        #expect(m.isActive(id: "a", serial: 1))
        #expect(m.operations == [ExactString("a"): 1])
    }

    /// Ids are compared by their bytes: "\u{E9}" and "e\u{301}" (one text to Swift's `==`) are
    /// two operations, not a repeated id (4409).
    @Test func idsThatDifferOnlyByNormalizationAreTwoOperations() {
        var m = acked()
        #expect(describe(m.receive(#"{"id":"\u00e9","type":"subscribe","payload":{"query":"{ a }"}}"#)) == ["execute \u{E9}#1 { a }"])
        #expect(describe(m.receive(#"{"id":"e\u0301","type":"subscribe","payload":{"query":"{ a }"}}"#)) == ["execute e\u{301}#2 { a }"])
        #expect(m.isActive(id: "\u{E9}", serial: 1) && m.isActive(id: "e\u{301}", serial: 2))
        #expect(describe(m.receive(#"{"id":"e\u0301","type":"complete"}"#)) == ["cancel e\u{301}#2"])
        #expect(m.isActive(id: "\u{E9}", serial: 1))
    }

    @Test func tooManyOperationsIsAnErrorForThatOperation() {
        var m = acked()
        for id in ["1", "2", "3"] { _ = m.receive(#"{"id":"\#(id)","type":"subscribe","payload":{"query":"{ a }"}}"#) }
        #expect(describe(m.receive(#"{"id":"4","type":"subscribe","payload":{"query":"{ a }"}}"#))
                == [#"send error 4 ["Too many operations in flight on this connection (limit 3)"]"#])
        #expect(!m.isActive(id: "4", serial: 4))
    }

    @Test func shutdownRefusesNewOperations() {
        var m = acked()
        m.beginShutdown()
        #expect(describe(m.receive(#"{"id":"1","type":"subscribe","payload":{"query":"{ a }"}}"#))
                == [#"send error 1 ["The server is shutting down; retry on a new connection"]"#])
    }

    @Test func closingCancelsEveryActiveOperation() {
        var m = acked()
        _ = m.receive(#"{"id":"a","type":"subscribe","payload":{"query":"{ a }"}}"#)
        _ = m.receive(#"{"id":"b","type":"subscribe","payload":{"query":"{ a }"}}"#)
        let actions = describe(m.receive("{"))
        #expect(actions.prefix(2) == ["cancel a#1", "cancel b#2"])
        #expect(actions.count == 3)
    }

    /// (message, 4400 close reason) — the reasons graphql-ws's validateMessage gives.
    static let invalid: [(String, String)] = [
        ("[]", "Message is expected to be an object, but got array"),
        ("\"text\"", "Message is expected to be an object, but got string"),
        ("42", "Message is expected to be an object, but got number"),
        ("null", "Message is expected to be an object, but got null"),
        ("{}", "Message is missing the 'type' property"),
        (#"{"type":""}"#, "Message is missing the 'type' property"),
        (#"{"type":null}"#, "Message is missing the 'type' property"),
        (#"{"type":1}"#, "Message is expects the 'type' property to be a string, but got number"),
        (#"{"type":["ping"]}"#, "Message is expects the 'type' property to be a string, but got array"),
        (#"{"type":"start"}"#, #"Invalid message 'type' property "start""#),
        (#"{"type":"ka"}"#, #"Invalid message 'type' property "ka""#),
        (#"{"type":"next","id":"1","payload":{}}"#, "Unexpected message of type next received"),
        (#"{"type":"error","id":"1","payload":[]}"#, "Unexpected message of type error received"),
        (#"{"type":"connection_ack"}"#, "Unexpected message of type connection_ack received"),
        (#"{"type":"connection_init","payload":1}"#, #""connection_init" message expects the 'payload' property to be an object or nullish or missing, but got number"#),
        (#"{"type":"ping","payload":[]}"#, #""ping" message expects the 'payload' property to be an object or nullish or missing, but got array"#),
        (#"{"type":"pong","payload":"x"}"#, #""pong" message expects the 'payload' property to be an object or nullish or missing, but got string"#),
        (#"{"type":"subscribe","payload":{"query":"{a}"}}"#, #""subscribe" message expects the 'id' property to be a string, but got undefined"#),
        (#"{"type":"subscribe","id":5,"payload":{"query":"{a}"}}"#, #""subscribe" message expects the 'id' property to be a string, but got number"#),
        (#"{"type":"subscribe","id":"","payload":{"query":"{a}"}}"#, #""subscribe" message requires a non-empty 'id' property"#),
        (#"{"type":"subscribe","id":"1"}"#, #""subscribe" message expects the 'payload' property to be an object, but got undefined"#),
        (#"{"type":"subscribe","id":"1","payload":"{a}"}"#, #""subscribe" message expects the 'payload' property to be an object, but got string"#),
        (#"{"type":"subscribe","id":"1","payload":{}}"#, #""subscribe" message payload expects the 'query' property to be a string, but got undefined"#),
        (#"{"type":"subscribe","id":"1","payload":{"query":7}}"#, #""subscribe" message payload expects the 'query' property to be a string, but got number"#),
        (#"{"type":"subscribe","id":"1","payload":{"query":"{a}","variables":[]}}"#, #""subscribe" message payload expects the 'variables' property to be a an object or nullish or missing, but got array"#),
        (#"{"type":"subscribe","id":"1","payload":{"query":"{a}","variables":"{}"}}"#, #""subscribe" message payload expects the 'variables' property to be a an object or nullish or missing, but got string"#),
        (#"{"type":"subscribe","id":"1","payload":{"query":"{a}","operationName":1}}"#, #""subscribe" message payload expects the 'operationName' property to be a string or nullish or missing, but got number"#),
        (#"{"type":"subscribe","id":"1","payload":{"query":"{a}","extensions":"x"}}"#, #""subscribe" message payload expects the 'extensions' property to be a an object or nullish or missing, but got string"#),
        (#"{"type":"complete"}"#, #""complete" message expects the 'id' property to be a string, but got undefined"#),
        (#"{"type":"complete","id":""}"#, #""complete" message requires a non-empty 'id' property"#),
    ]

    @Test(arguments: invalid)
    func invalidMessageCloses4400(_ message: String, _ reason: String) {
        var m = acked()
        #expect(describe(m.receive(message)) == ["close 4400 \(reason)"])
        #expect(m.phase == .closed)
    }

    @Test(arguments: ["nonsense", "{", "{\"type\":\"ping\",}", "", "{\"type\":\"ping\"} x"])
    func unparsableJSONCloses4400(_ text: String) {
        var m = acked()
        let actions = describe(m.receive(text))
        #expect(actions.count == 1)
        #expect(actions.first?.hasPrefix("close 4400 Invalid message received: ") == true)
    }

    @Test func nullablePayloadFieldsAreAccepted() {
        var m = acked()
        let actions = m.receive(#"{"id":"1","type":"subscribe","payload":{"query":"{a}","variables":null,"operationName":null,"extensions":null}}"#)
        guard case .execute(let op)? = actions.first else { Issue.record("expected execute"); return }
        #expect(op.request.variables == nil)
        #expect(op.request.operationName == nil)
    }
}
