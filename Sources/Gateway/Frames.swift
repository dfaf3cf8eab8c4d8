import CWebSockets
import Resolvers
import Schema

/// Encodes server messages as WebSocket payloads. Every frame starts with LWS_PRE bytes of
/// headroom that libwebsockets writes its frame header into, so a frame is written without a copy.
public enum Frames {
    public static let headroom = Int(cg_lws_pre())

    static func begin(capacity: Int) -> JSONWriter {
        var w = JSONWriter(capacity: headroom + capacity)
        w.bytes.append(contentsOf: repeatElement(0, count: headroom))
        return w
    }

    /// The message text of a frame (without the headroom).
    public static func text(_ frame: [UInt8]) -> String {
        String(decoding: frame[min(headroom, frame.count)...], as: UTF8.self)
    }

    public static func jsonText(_ v: JSONValue) -> String {
        var w = JSONWriter(capacity: 64)
        w.json(v)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    public static func encode(_ message: ServerMessage, _ proto: WireProtocol) -> [UInt8] {
        var w = begin(capacity: 64)
        switch message {
        case .connectionAck:
            w.raw("{\"type\":\"connection_ack\"}")
        case .pong(let payload):
            w.raw("{\"type\":\"pong\"")
            if let payload { w.raw(",\"payload\":"); w.json(payload) }
            w.byte(0x7D)
        case .keepAlive:
            w.raw("{\"type\":\"ka\"}")
        case .complete(let id):
            w.raw("{\"id\":"); w.string(id); w.raw(",\"type\":\"complete\"}")
        case .requestError(let id, let errors):
            switch proto {
            case .transport:
                w.raw("{\"id\":"); w.string(id); w.raw(",\"type\":\"error\",\"payload\":"); w.errors(errors); w.byte(0x7D)
            case .legacy:
                // graphql-ws clients (Apollo, gql) expect an object payload in `error`.
                w.raw("{\"id\":"); w.string(id); w.raw(",\"type\":\"error\",\"payload\":")
                if let first = errors.first { w.error(first) } else { w.raw("{\"message\":\"Unknown error\"}") }
                w.byte(0x7D)
            }
        case .legacyError(let id, let message):
            w.raw("{")
            if let id { w.raw("\"id\":"); w.string(id); w.byte(0x2C) }
            w.raw("\"type\":\"error\",\"payload\":{\"message\":"); w.string(message); w.raw("}}")
        }
        return w.bytes
    }

    /// `next` (graphql-transport-ws) or `data` (graphql-ws) carrying a complete response object.
    public static func result(id: String, payload: [UInt8], _ proto: WireProtocol) -> [UInt8] {
        var w = begin(capacity: payload.count + id.utf8.count + 40)
        writeResultStart(&w, id: id, proto)
        w.raw(payload)
        w.byte(0x7D)
        return w.bytes
    }

    /// The bytes of a `result` frame before its payload — headroom, `{"id":"…","type":"next","payload":`
    /// — made once per subscription, so each delivery is two copies into one allocation.
    public static func resultPrefix(id: String, _ proto: WireProtocol) -> [UInt8] {
        var w = begin(capacity: id.utf8.count + 40)
        writeResultStart(&w, id: id, proto)
        return w.bytes
    }

    /// `{"id":"…","type":"next","payload":` (`data` for graphql-ws).
    private static func writeResultStart(_ w: inout JSONWriter, id: String, _ proto: WireProtocol) {
        w.raw("{\"id\":"); w.string(id)
        switch proto {
        case .transport: w.raw(",\"type\":\"next\",\"payload\":")
        case .legacy: w.raw(",\"type\":\"data\",\"payload\":")
        }
    }

    /// The same bytes as `result(id:payload:proto)`, from the subscription's `resultPrefix`.
    public static func result(prefix: [UInt8], payload: [UInt8]) -> [UInt8] {
        let n = prefix.count + payload.count + 1
        return [UInt8](unsafeUninitializedCapacity: n) { buf, count in
            let base = buf.baseAddress!
            prefix.withUnsafeBufferPointer { p in base.initialize(from: p.baseAddress!, count: p.count) }
            payload.withUnsafeBufferPointer { p in
                if let a = p.baseAddress { (base + prefix.count).initialize(from: a, count: p.count) }
            }
            base[n - 1] = 0x7D
            count = n
        }
    }

    /// Appends the header of an unmasked, final text frame carrying `payloadCount` bytes
    /// (RFC 6455 §5.2), as the server writes it to the socket itself (`DirectChunk`).
    public static func appendTextFrameHeader(_ out: inout [UInt8], payloadCount n: Int) {
        out.append(0x81)
        if n < 126 {
            out.append(UInt8(n))
        } else if n <= 0xFFFF {
            out.append(126); out.append(UInt8(n >> 8)); out.append(UInt8(n & 0xFF))
        } else {
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((n >> shift) & 0xFF)) }
        }
    }
}
