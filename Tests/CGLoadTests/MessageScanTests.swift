import Testing
@testable import cg_load

@Suite struct MessageScanTests {
    private func scan(_ text: String, wantPayload: Bool = false) -> ScannedMessage? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { MessageScan.scan($0.baseAddress!, $0.count, wantPayload: wantPayload) }
    }

    private func payload(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard let m = bytes.withUnsafeBufferPointer({ MessageScan.scan($0.baseAddress!, $0.count, wantPayload: true) }),
              let r = m.payload else { return nil }
        return String(decoding: bytes[r], as: UTF8.self)
    }

    @Test func typeAndIDInEitherOrder() {
        let a = scan(#"{"id":"17","type":"next","payload":{"data":{"id":"99"}}}"#)
        #expect(a?.type == .next)
        #expect(a?.id == 17)
        let b = scan(#"{"type":"complete","id":"4"}"#)
        #expect(b?.type == .complete)
        #expect(b?.id == 4)
    }

    @Test func payloadFirstIsSkippedWithoutConfusingNestedIDs() {
        let text = #"{"payload":{"data":{"product":{"id":"5","type":"x","name":"a \"quoted\" {brace}"}}},"type":"next","id":"8"}"#
        let m = scan(text)
        #expect(m?.type == .next)
        #expect(m?.id == 8)
        #expect(payload(text) == #"{"data":{"product":{"id":"5","type":"x","name":"a \"quoted\" {brace}"}}}"#)
    }

    @Test func controlMessages() {
        #expect(scan(#"{"type":"connection_ack"}"#)?.type == .connectionAck)
        #expect(scan(#"{ "type" : "ping" , "payload" : {} }"#)?.type == .ping)
        #expect(scan(#"{"type":"error","id":"3","payload":[{"message":"Syntax Error"}]}"#)?.type == .error)
        #expect(scan(#"{"type":"something"}"#)?.type == .other)
    }

    @Test func malformedTextIsNil() {
        #expect(scan("") == nil)
        #expect(scan("[1,2]") == nil)
        #expect(scan(#"{"type":"next","id":"1"#) == nil)
        #expect(scan(#"{"type":"next" "id":"1"}"#) == nil)
    }

    @Test func stopsOnceTypeAndIDAreKnown() {
        // What follows the members it needs is not read (a 100 KB payload is never walked).
        #expect(scan(#"{"type":"next","id":"1","payload":{"data":"#)?.id == 1)
        #expect(scan(#"{"type":"next","id":"1","payload":{"data":"#, wantPayload: true) == nil)
    }

    @Test func stringsEndingInEscapedBackslashes() {
        let text = #"{"payload":{"data":{"s":"ends with \\"}},"id":"2","type":"next"}"#
        #expect(scan(text)?.id == 2)
        #expect(payload(text) == #"{"data":{"s":"ends with \\"}}"#)
    }

    @Test func errorsMemberOnlyAtTheTopLevelOfThePayload() {
        func has(_ p: String) -> Bool {
            let b = Array(p.utf8)
            return b.withUnsafeBufferPointer { MessageScan.hasMember($0.baseAddress!, 0..<b.count, "errors") }
        }
        #expect(has(#"{"data":null,"errors":[{"message":"x"}]}"#))
        #expect(!has(#"{"data":{"errors":"a field named errors"}}"#))
        #expect(!has(#"{"data":{"s":"\"errors\":"}}"#))
    }

    @Test func versionFromASubscriptionPayload() {
        let b = Array(#"{"data":{"catalogVersion":{"version":1234}}}"#.utf8)
        let v = b.withUnsafeBufferPointer { MessageScan.integer(after: "version", $0.baseAddress!, 0..<b.count) }
        #expect(v == 1234)
    }

    @Test func endpoints() {
        let e = Endpoint("ws://127.0.0.1:4000/graphql")
        #expect(e?.host == "127.0.0.1")
        #expect(e?.port == 4000)
        #expect(e?.path == "/graphql")
        #expect(Endpoint("ws://localhost:9")?.host == "127.0.0.1")
        #expect(Endpoint("ws://localhost:9")?.path == "/")
        #expect(Endpoint("ws://[::1]:8080/x")?.host == "::1")
        #expect(Endpoint("http://127.0.0.1:4000/graphql") == nil)
    }

    @Test func operationPayloadEscapesTheDocument() {
        let p = String(decoding: operationPayload(query: "query {\n  a(s: \"x\\y\")\n}", variables: #"{"id":"1"}"#), as: UTF8.self)
        #expect(p == #"{"query":"query {\n  a(s: \"x\\y\")\n}","variables":{"id":"1"}}"#)
    }
}
