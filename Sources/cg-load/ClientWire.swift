import Foundation

/// The GraphQL-over-WebSocket protocol a connection speaks: graphql-transport-ws (the graphql-ws
/// library's; `subscribe` / `next`) or the legacy graphql-ws of subscriptions-transport-ws
/// (`start` / `data`, `ka` keep-alives). Both name their other messages alike.
enum Subprotocol: String, CaseIterable {
    case transport = "graphql-transport-ws"
    case legacy = "graphql-ws"
}

/// What cg-load offers in its upgrade: one protocol, or both (`auto`), graphql-transport-ws
/// first, each connection then speaking the one the server picked.
enum SubprotocolChoice: String, CaseIterable {
    case auto
    case transport = "graphql-transport-ws"
    case legacy = "graphql-ws"

    /// The Sec-WebSocket-Protocol value of the upgrade request.
    var offer: String {
        switch self {
        case .auto: return "\(Subprotocol.transport.rawValue), \(Subprotocol.legacy.rawValue)"
        case .transport: return Subprotocol.transport.rawValue
        case .legacy: return Subprotocol.legacy.rawValue
        }
    }

    /// The protocol a connection speaks given the server's answer (`chosen`: its
    /// Sec-WebSocket-Protocol value, nil if it named none), or nil when the server picked one
    /// that was not offered.
    func spoken(_ chosen: String?) -> Subprotocol? {
        guard let chosen, !chosen.isEmpty else {
            // No protocol named: the one offered alone, graphql-transport-ws when both were.
            return self == .legacy ? .legacy : .transport
        }
        guard let p = Subprotocol(rawValue: chosen) else { return nil }
        return self == .auto || p.rawValue == rawValue ? p : nil
    }
}

/// The client side of the wire that cg-load writes itself (raw framing, slow readers): the
/// upgrade request, client frames and the end of the upgrade response's headers.
enum ClientWire {
    /// An HTTP upgrade offering `offer` (a Sec-WebSocket-Protocol value; a fixed key: cg-load
    /// does not check the accept).
    static func upgradeRequest(_ e: Endpoint, offer: String = Subprotocol.transport.rawValue) -> [UInt8] {
        Array(("GET \(e.path) HTTP/1.1\r\nHost: \(e.host):\(e.port)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: \(offer)\r\n\r\n").utf8)
    }

    /// The Sec-WebSocket-Protocol value of an upgrade response's headers (name matched without
    /// regard to case, value trimmed), or nil when it has none.
    static func chosenProtocol(_ headers: ArraySlice<UInt8>) -> String? {
        let text = String(decoding: headers, as: UTF8.self)
        for line in text.split(separator: "\r\n", omittingEmptySubsequences: true).dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == "sec-websocket-protocol" {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
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
