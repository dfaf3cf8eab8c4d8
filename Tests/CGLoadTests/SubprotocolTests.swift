import Testing
@testable import cg_load

/// cg-load's two GraphQL-over-WebSocket protocols: what the upgrade offers, which one a
/// connection speaks after the server's answer, and the legacy protocol's message names.
@Suite struct SubprotocolTests {
    @Test func theOfferNamesGraphqlTransportWsFirst() {
        #expect(SubprotocolChoice.auto.offer == "graphql-transport-ws, graphql-ws")
        #expect(SubprotocolChoice.legacy.offer == "graphql-ws")
        let request = String(decoding: ClientWire.upgradeRequest(Endpoint("ws://127.0.0.1:4000/graphql")!, offer: SubprotocolChoice.auto.offer),
                             as: UTF8.self)
        #expect(request.contains("\r\nSec-WebSocket-Protocol: graphql-transport-ws, graphql-ws\r\n"))
    }

    @Test func theServersPickIsSpokenWhenItWasOffered() {
        #expect(SubprotocolChoice.auto.spoken("graphql-ws") == .legacy)
        #expect(SubprotocolChoice.auto.spoken("graphql-transport-ws") == .transport)
        #expect(SubprotocolChoice.legacy.spoken("graphql-ws") == .legacy)
        // Not offered, or unknown: the connection fails.
        #expect(SubprotocolChoice.legacy.spoken("graphql-transport-ws") == nil)
        #expect(SubprotocolChoice.transport.spoken("graphql-ws") == nil)
        #expect(SubprotocolChoice.auto.spoken("mqtt") == nil)
        // None named: the one offered alone, graphql-transport-ws when both were.
        #expect(SubprotocolChoice.auto.spoken(nil) == .transport)
        #expect(SubprotocolChoice.legacy.spoken("") == .legacy)
    }

    @Test func theChosenProtocolIsReadFromTheResponseHeaders() {
        let response = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nsec-websocket-PROTOCOL:  graphql-ws \r\nConnection: Upgrade\r\n\r\n".utf8)
        #expect(ClientWire.chosenProtocol(response[...]) == "graphql-ws")
        let none = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n".utf8)
        #expect(ClientWire.chosenProtocol(none[...]) == nil)
    }

    @Test func legacyMessagesScanAsTheirCounterparts() {
        func type(_ text: String) -> MessageType? {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBufferPointer { MessageScan.scan($0.baseAddress!, $0.count, wantPayload: false) }?.type
        }
        #expect(type(#"{"type":"data","id":"3","payload":{"data":{}}}"#) == .next)
        #expect(type(#"{"type":"ka"}"#) == .other)
        #expect(type(#"{"type":"connection_error","payload":{"message":"no"}}"#) == .connectionError)
    }
}
