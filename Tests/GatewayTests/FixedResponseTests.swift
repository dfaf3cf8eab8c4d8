import Foundation
import Testing
@testable import Gateway
import Schema

/// `serve --fixed-response` (the benchmarks' transport floor): every operation is answered
/// with the given bytes, without being parsed or executed.
@Suite(.serialized) struct FixedResponseTests {
    static let fixed = #"{"data":{"fixed":true}}"#

    @Test func websocketOperationsGetTheFixedAnswerUnparsed() throws {
        let s = try LiveServer { $0.fixedResponse = Array(Self.fixed.utf8) }
        let ws = try s.transportClient()
        // Not even a valid document: nothing is parsed.
        try ws.send(#"{"id":"a","type":"subscribe","payload":{"query":"{ nonsense"}}"#)
        #expect(ws.next() == .text(#"{"id":"a","type":"next","payload":\#(Self.fixed)}"#))
        #expect(ws.next() == .text(#"{"id":"a","type":"complete"}"#))
    }

    @Test func httpPostGetsTheFixedAnswer() throws {
        let s = try LiveServer { $0.fixedResponse = Array(Self.fixed.utf8) }
        let body = Array(#"{"query":"{ catalogVersion { version } }"}"#.utf8)
        let r = try httpRequest(port: s.port, method: "POST", path: "/graphql",
                                headers: [("Content-Type", "application/json")], body: body)
        #expect(r.status == 200)
        #expect(r.text == Self.fixed)
    }
}
