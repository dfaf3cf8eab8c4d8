import Testing
@testable import Gateway
import Schema

/// graphql-ws (subscriptions-transport-ws) lifecycle rules, without sockets.
@Suite struct LegacyWSStateMachineTests {
    static let config = WSMachineConfiguration(initTimeoutMs: 3_000, keepAliveMs: 12_000, maxOperations: 2)

    func acked() -> LegacyWSStateMachine {
        var m = LegacyWSStateMachine(configuration: Self.config)
        _ = m.opened()
        _ = m.receive(#"{"type":"connection_init","payload":{}}"#)
        return m
    }

    func describe(_ actions: [WSAction]) -> [String] { actions.map(\.description) }

    @Test func initIsAcknowledgedWithKeepAlive() {
        var m = LegacyWSStateMachine(configuration: Self.config)
        #expect(describe(m.opened()) == ["timer 3000"])
        #expect(describe(m.receive(#"{"type":"connection_init"}"#)) == ["send connection_ack", "send ka", "timer 12000"])
    }

    @Test func keepAliveRepeatsEveryInterval() {
        var m = acked()
        #expect(describe(m.timerFired()) == ["send ka", "timer 12000"])
        #expect(describe(m.timerFired()) == ["send ka", "timer 12000"])
    }

    @Test func initTimeoutCloses4408() {
        var m = LegacyWSStateMachine(configuration: Self.config)
        _ = m.opened()
        #expect(describe(m.timerFired()) == ["close 4408 Connection initialisation timeout"])
    }

    @Test func repeatedInitIsAcknowledgedAgain() {
        var m = acked()
        #expect(describe(m.receive(#"{"type":"connection_init"}"#)) == ["send connection_ack"])
    }

    @Test func startBeforeInitIsAnError() {
        var m = LegacyWSStateMachine(configuration: Self.config)
        _ = m.opened()
        #expect(describe(m.receive(#"{"id":"1","type":"start","payload":{"query":"{ a }"}}"#))
                == ["send error 1 Connection not initialised: send connection_init first"])
    }

    @Test func startRunsAndStopCompletes() {
        var m = acked()
        #expect(describe(m.receive(#"{"id":"1","type":"start","payload":{"query":"subscription { catalogVersion { version } }","variables":{},"operationName":null}}"#))
                == ["execute 1#1 subscription { catalogVersion { version } }"])
        #expect(describe(m.receive(#"{"id":"1","type":"stop"}"#)) == ["cancel 1#1", "send complete 1"])
        #expect(!m.isActive(id: "1", serial: 1))
        #expect(describe(m.receive(#"{"id":"1","type":"stop"}"#)) == [])
    }

    @Test func startingAnActiveIdAgainReplacesIt() {
        var m = acked()
        _ = m.receive(#"{"id":"1","type":"start","payload":{"query":"{ a }"}}"#)
        #expect(describe(m.receive(#"{"id":"1","type":"start","payload":{"query":"{ b }"}}"#)) == ["cancel 1#1", "execute 1#2 { b }"])
    }

    /// Ids are compared by their bytes: starting "e\u{301}" does not replace "\u{E9}".
    @Test func idsThatDifferOnlyByNormalizationAreTwoOperations() {
        var m = acked()
        _ = m.receive(#"{"id":"\u00e9","type":"start","payload":{"query":"{ a }"}}"#)
        #expect(describe(m.receive(#"{"id":"e\u0301","type":"start","payload":{"query":"{ b }"}}"#)) == ["execute e\u{301}#2 { b }"])
        #expect(m.isActive(id: "\u{E9}", serial: 1))
    }

    @Test func numericIdsAreAccepted() {
        var m = acked()
        #expect(describe(m.receive(#"{"id":7,"type":"start","payload":{"query":"{ a }"}}"#)) == ["execute 7#1 { a }"])
    }

    @Test func terminateCloses1000() {
        var m = acked()
        _ = m.receive(#"{"id":"1","type":"start","payload":{"query":"{ a }"}}"#)
        #expect(describe(m.receive(#"{"type":"connection_terminate"}"#)) == ["cancel 1#1", "close 1000 Connection terminated by the client"])
    }

    @Test func tooManyOperations() {
        var m = acked()
        _ = m.receive(#"{"id":"1","type":"start","payload":{"query":"{ a }"}}"#)
        _ = m.receive(#"{"id":"2","type":"start","payload":{"query":"{ a }"}}"#)
        #expect(describe(m.receive(#"{"id":"3","type":"start","payload":{"query":"{ a }"}}"#))
                == ["send error 3 Too many operations in flight on this connection (limit 2)"])
    }

    /// Invalid messages get an `error` and the socket stays open.
    static let invalid: [(String, String)] = [
        ("[]", "send error - Message must be a JSON object, but got array"),
        ("1", "send error - Message must be a JSON object, but got number"),
        (#"{"id":"3"}"#, "send error 3 Invalid message type!"),
        (#"{"id":"3","type":"subscribe"}"#, "send error 3 Invalid message type!"),
        (#"{"type":"start","payload":{"query":"{a}"}}"#, #"send error - "start" message requires a non-empty string 'id'"#),
        (#"{"type":"stop"}"#, #"send error - "stop" message requires a non-empty string 'id'"#),
        (#"{"id":"1","type":"start"}"#, #"send error 1 "start" message expects the 'payload' property to be an object, but got undefined"#),
        (#"{"id":"1","type":"start","payload":{"query":1}}"#, #"send error 1 "start" message payload expects the 'query' property to be a string, but got number"#),
        (#"{"id":"1","type":"start","payload":{"query":"{a}","variables":[1]}}"#, #"send error 1 "start" message payload expects the 'variables' property to be an object or null, but got array"#),
        (#"{"id":"1","type":"start","payload":{"query":"{a}","operationName":false}}"#, #"send error 1 "start" message payload expects the 'operationName' property to be a string or null, but got boolean"#),
    ]

    @Test(arguments: invalid)
    func invalidMessageIsAnError(_ message: String, _ expected: String) {
        var m = acked()
        #expect(describe(m.receive(message)) == [expected])
        #expect(m.phase == .acknowledged)
    }

    @Test func unparsableJSONIsAnError() {
        var m = acked()
        let a = describe(m.receive("nonsense"))
        #expect(a.count == 1)
        #expect(a.first?.hasPrefix("send error - Message must be JSON: invalid token") == true)
    }
}
