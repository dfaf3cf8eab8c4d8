/// The client side of the wire that cg-load writes itself (raw framing, slow readers): the
/// upgrade request, client frames and the end of the upgrade response's headers.
enum ClientWire {
    /// An HTTP upgrade to graphql-transport-ws (a fixed key: cg-load does not check the accept).
    static func upgradeRequest(_ e: Endpoint) -> [UInt8] {
        Array(("GET \(e.path) HTTP/1.1\r\nHost: \(e.host):\(e.port)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n").utf8)
    }

    /// Appends a final client frame with an all-zero masking key (RFC 6455 requires a mask; XOR
    /// with zeros leaves the payload as it is, so nothing is copied twice).
    static func appendFrame(_ out: inout [UInt8], opcode: UInt8, _ payload: [UInt8]) {
        out.append(0x80 | opcode)
        let n = payload.count
        if n < 126 {
            out.append(0x80 | UInt8(n))
        } else if n < 65536 {
            out.append(0x80 | 126); out.append(UInt8(n >> 8)); out.append(UInt8(n & 0xFF))
        } else {
            out.append(0x80 | 127)
            for k in (0..<8).reversed() { out.append(UInt8((n >> (8 * k)) & 0xFF)) }
        }
        out.append(contentsOf: [0, 0, 0, 0])
        out.append(contentsOf: payload)
    }

    /// Where the upgrade response's headers end (just past CRLF CRLF), if they have.
    static func headerEnd(_ b: [UInt8]) -> Int? {
        guard b.count >= 4 else { return nil }
        for i in 0...(b.count - 4) where b[i] == 13 && b[i + 1] == 10 && b[i + 2] == 13 && b[i + 3] == 10 {
            return i + 4
        }
        return nil
    }
}
