import Testing
@testable import Gateway
import Schema

@Suite struct FramesTests {
    @Test func transportMessages() {
        #expect(Frames.text(Frames.encode(.connectionAck, .transport)) == #"{"type":"connection_ack"}"#)
        #expect(Frames.text(Frames.encode(.pong(nil), .transport)) == #"{"type":"pong"}"#)
        #expect(Frames.text(Frames.encode(.pong(.object([("a", .array([.int(1), .string("é\"")]))])), .transport))
                == #"{"type":"pong","payload":{"a":[1,"é\""]}}"#)
        #expect(Frames.text(Frames.encode(.complete(id: "x\"1"), .transport)) == #"{"id":"x\"1","type":"complete"}"#)
        let e = GraphQLError("Cannot query field \"a\" on type \"Query\".", locations: [SourceLocation(line: 1, column: 3)],
                             extensions: ["code": .string("GRAPHQL_VALIDATION_FAILED")])
        #expect(Frames.text(Frames.encode(.requestError(id: "1", errors: [e]), .transport))
                == #"{"id":"1","type":"error","payload":[{"message":"Cannot query field \"a\" on type \"Query\".","locations":[{"line":1,"column":3}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"#)
        #expect(Frames.text(Frames.result(id: "1", payload: Array(#"{"data":{"a":1}}"#.utf8), .transport))
                == #"{"id":"1","type":"next","payload":{"data":{"a":1}}}"#)
    }

    /// RFC 6455 §5.2: FIN + text opcode, then a 7-bit length, 126 + 16-bit or 127 + 64-bit
    /// big-endian, never masked from a server.
    @Test func textFrameHeaderLengthEncodings() {
        func header(_ n: Int) -> [UInt8] {
            var out: [UInt8] = []
            Frames.appendTextFrameHeader(&out, payloadCount: n)
            return out
        }
        #expect(header(0) == [0x81, 0])
        #expect(header(125) == [0x81, 125])
        #expect(header(126) == [0x81, 126, 0, 126])
        #expect(header(65535) == [0x81, 126, 0xFF, 0xFF])
        #expect(header(65536) == [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0])
        #expect(header(0x0102_0304_0506) == [0x81, 127, 0, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06])
    }

    @Test func legacyMessages() {
        #expect(Frames.text(Frames.encode(.connectionAck, .legacy)) == #"{"type":"connection_ack"}"#)
        #expect(Frames.text(Frames.encode(.keepAlive, .legacy)) == #"{"type":"ka"}"#)
        #expect(Frames.text(Frames.result(id: "2", payload: Array(#"{"data":null}"#.utf8), .legacy))
                == #"{"id":"2","type":"data","payload":{"data":null}}"#)
        #expect(Frames.text(Frames.encode(.legacyError(id: nil, message: "bad"), .legacy)) == #"{"type":"error","payload":{"message":"bad"}}"#)
        #expect(Frames.text(Frames.encode(.legacyError(id: "3", message: "bad"), .legacy)) == #"{"id":"3","type":"error","payload":{"message":"bad"}}"#)
        #expect(Frames.text(Frames.encode(.requestError(id: "3", errors: [GraphQLError("no")]), .legacy))
                == #"{"id":"3","type":"error","payload":{"message":"no"}}"#)
    }

    @Test func framesCarryLWSHeadroom() {
        let f = Frames.encode(.connectionAck, .transport)
        #expect(Frames.headroom >= 10)
        #expect(f.count == Frames.headroom + #"{"type":"connection_ack"}"#.utf8.count)
        #expect(f.prefix(Frames.headroom).allSatisfy { $0 == 0 })
    }

    @Test func subprotocolNegotiationPrefersTransport() {
        #expect(WireProtocol.negotiate("graphql-ws, graphql-transport-ws") == .transport)
        #expect(WireProtocol.negotiate("graphql-transport-ws,graphql-ws") == .transport)
        #expect(WireProtocol.negotiate("graphql-ws") == .legacy)
        #expect(WireProtocol.negotiate(" foo , graphql-ws ") == .legacy)
        #expect(WireProtocol.negotiate("foo") == nil)
        #expect(WireProtocol.negotiate("") == nil)
        #expect(WireProtocol.negotiate(nil) == nil)
    }

    @Test func resultFromPrefixIsTheSameFrame() {
        let payload = Array(#"{"data":{"catalogVersion":{"version":7}}}"#.utf8)
        for proto in [WireProtocol.transport, .legacy] {
            for id in ["1", "sub-\u{e9}\"q\"\\\n", ""] {
                let fromPrefix = Frames.result(prefix: Frames.resultPrefix(id: id, proto), payload: payload)
                #expect(fromPrefix == Frames.result(id: id, payload: payload, proto))
                #expect(Frames.result(prefix: Frames.resultPrefix(id: id, proto), payload: []) == Frames.result(id: id, payload: [], proto))
            }
        }
    }
}
