import Resolvers
import Schema

/// The two WebSocket subprotocols served on /graphql.
public enum WireProtocol: String, Sendable, CaseIterable {
    /// enisdenjo/graphql-ws, the GraphQL over WebSocket Protocol.
    case transport = "graphql-transport-ws"
    /// Apollo's subscriptions-transport-ws (deprecated, still used by many clients).
    case legacy = "graphql-ws"

    /// Picks the subprotocol from a Sec-WebSocket-Protocol header: graphql-transport-ws whenever
    /// offered, whatever the order, else graphql-ws; nil when neither is offered.
    public static func negotiate(_ header: String?) -> WireProtocol? {
        guard let header else { return nil }
        let offered = header.split(separator: ",").map { $0.trimmingCharacters(in: " \t") }
        if offered.contains(WireProtocol.transport.rawValue) { return .transport }
        if offered.contains(WireProtocol.legacy.rawValue) { return .legacy }
        return nil
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self[...]
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}

/// One operation the state machine asks the server to run: `serial` is unique per connection
/// and tells a result for an old operation from one for a newer operation reusing its id.
public struct OperationStart: Sendable {
    public let id: String
    public let serial: UInt64
    public let request: GraphQLRequest
}

/// A message the server sends, before encoding for a subprotocol.
public enum ServerMessage: Equatable, Sendable {
    case connectionAck
    /// graphql-transport-ws `pong`, echoing the ping's payload.
    case pong(JSONValue?)
    /// graphql-ws `ka`.
    case keepAlive
    case complete(id: String)
    /// The request failed before execution: transport `error` / legacy `error` with the errors.
    case requestError(id: String, errors: [GraphQLError])
    /// graphql-ws `error` with `{"message": ...}` for a message the server could not accept.
    case legacyError(id: String?, message: String)
}

/// What a protocol state machine asks the connection to do, in order.
public enum WSAction: Sendable, CustomStringConvertible {
    case send(ServerMessage)
    case execute(OperationStart)
    /// Stop the operation: cancel it if not started, end the subscription, drop its results.
    case cancel(id: String, serial: UInt64)
    /// Close the socket with this code and reason; nothing after it is sent.
    case close(code: UInt16, reason: String)
    /// (Re)arm the connection's single timer.
    case setTimer(milliseconds: Int)
    case cancelTimer

    public var description: String {
        switch self {
        case .send(let m):
            switch m {
            case .connectionAck: return "send connection_ack"
            case .pong(let p): return "send pong" + (p.map { " " + Frames.jsonText($0) } ?? "")
            case .keepAlive: return "send ka"
            case .complete(let id): return "send complete \(id)"
            case .requestError(let id, let errors): return "send error \(id) \(errors.map(\.message))"
            case .legacyError(let id, let message): return "send error \(id ?? "-") \(message)"
            }
        case .execute(let op): return "execute \(op.id)#\(op.serial) \(op.request.query)"
        case .cancel(let id, let serial): return "cancel \(id)#\(serial)"
        case .close(let code, let reason): return "close \(code) \(reason)"
        case .setTimer(let ms): return "timer \(ms)"
        case .cancelTimer: return "timer off"
        }
    }
}

/// A message from a graphql-transport-ws client, validated as graphql-ws `validateMessage` does.
public enum TransportClientMessage: Sendable {
    case connectionInit(payload: JSONValue?)
    case ping(payload: JSONValue?)
    case pong(payload: JSONValue?)
    case subscribe(id: String, request: GraphQLRequest)
    case complete(id: String)

    /// The 4400 close reason for an invalid message.
    public struct Invalid: Error, Equatable, Sendable { public let reason: String }

    public static func decode(_ text: UnsafeRawBufferPointer) -> Result<TransportClientMessage, Invalid> {
        let value: JSONValue
        do { value = try JSONParser.parse(text) } catch {
            return .failure(Invalid(reason: "Invalid message received: \(error.message)"))
        }
        return decode(value)
    }

    public static func decode(_ value: JSONValue) -> Result<TransportClientMessage, Invalid> {
        func fail(_ s: String) -> Result<TransportClientMessage, Invalid> { .failure(Invalid(reason: s)) }
        guard case .object = value else {
            return fail("Message is expected to be an object, but got \(JSONInput.typeName(value))")
        }
        let type: String
        switch value["type"] {
        case nil, .null?, .bool(false)?, .string("")?: return fail("Message is missing the 'type' property")
        case .string(let t)?: type = t
        case let other?:
            return fail("Message is expects the 'type' property to be a string, but got \(JSONInput.typeName(other))")
        }
        func objectPayload() -> Result<JSONValue?, Invalid> {
            switch value["payload"] {
            case nil, .null?: return .success(nil)
            case .object?: return .success(value["payload"])
            case let p?:
                return .failure(Invalid(reason: "\"\(type)\" message expects the 'payload' property to be an object or nullish or missing, but got \(JSONInput.typeName(p))"))
            }
        }
        func id() -> Result<String, Invalid> {
            switch value["id"] {
            case .string(let s)?:
                if s.isEmpty { return .failure(Invalid(reason: "\"\(type)\" message requires a non-empty 'id' property")) }
                return .success(s)
            default:
                return .failure(Invalid(reason: "\"\(type)\" message expects the 'id' property to be a string, but got \(JSONInput.typeName(value["id"]))"))
            }
        }
        switch type {
        case "connection_init":
            return objectPayload().map { .connectionInit(payload: $0) }
        case "ping":
            return objectPayload().map { .ping(payload: $0) }
        case "pong":
            return objectPayload().map { .pong(payload: $0) }
        case "subscribe":
            let opId: String
            switch id() { case .success(let s): opId = s; case .failure(let e): return .failure(e) }
            guard let payload = value["payload"], case .object = payload else {
                return fail("\"subscribe\" message expects the 'payload' property to be an object, but got \(JSONInput.typeName(value["payload"]))")
            }
            guard case .string(let query)? = payload["query"] else {
                return fail("\"subscribe\" message payload expects the 'query' property to be a string, but got \(JSONInput.typeName(payload["query"]))")
            }
            var variables: JSONValue? = nil
            switch payload["variables"] {
            case nil, .null?: break
            case .object?: variables = payload["variables"]
            case let v?:
                return fail("\"subscribe\" message payload expects the 'variables' property to be a an object or nullish or missing, but got \(JSONInput.typeName(v))")
            }
            var operationName: String? = nil
            switch payload["operationName"] {
            case nil, .null?: break
            case .string(let s)?: operationName = s
            case let v?:
                return fail("\"subscribe\" message payload expects the 'operationName' property to be a string or nullish or missing, but got \(JSONInput.typeName(v))")
            }
            switch payload["extensions"] {
            case nil, .null?, .object?: break
            case let v?:
                return fail("\"subscribe\" message payload expects the 'extensions' property to be a an object or nullish or missing, but got \(JSONInput.typeName(v))")
            }
            return .success(.subscribe(id: opId, request: GraphQLRequest(query: query, variables: variables, operationName: operationName)))
        case "complete":
            return id().map { .complete(id: $0) }
        case "connection_ack", "next", "error":
            return fail("Unexpected message of type \(type) received")
        default:
            return fail("Invalid message 'type' property \"\(type)\"")
        }
    }
}

/// A message from a graphql-ws (subscriptions-transport-ws) client.
public enum LegacyClientMessage: Sendable {
    case connectionInit(payload: JSONValue?)
    case start(id: String, request: GraphQLRequest)
    case stop(id: String)
    case connectionTerminate

    /// Answered with an `error` message (the legacy protocol keeps the socket open).
    public struct Invalid: Error, Equatable, Sendable { public let id: String?; public let message: String }

    public static func decode(_ text: UnsafeRawBufferPointer) -> Result<LegacyClientMessage, Invalid> {
        let value: JSONValue
        do { value = try JSONParser.parse(text) } catch {
            return .failure(Invalid(id: nil, message: "Message must be JSON: \(error.message)"))
        }
        return decode(value)
    }

    public static func decode(_ value: JSONValue) -> Result<LegacyClientMessage, Invalid> {
        guard case .object = value else {
            return .failure(Invalid(id: nil, message: "Message must be a JSON object, but got \(JSONInput.typeName(value))"))
        }
        var id: String? = nil
        switch value["id"] {
        case .string(let s)?: id = s
        case .int(let i)?: id = String(i)
        default: break
        }
        guard case .string(let type)? = value["type"] else {
            return .failure(Invalid(id: id, message: "Invalid message type!"))
        }
        switch type {
        case "connection_init":
            return .success(.connectionInit(payload: value["payload"]))
        case "connection_terminate":
            return .success(.connectionTerminate)
        case "start", "stop":
            guard let opId = id, !opId.isEmpty else {
                return .failure(Invalid(id: nil, message: "\"\(type)\" message requires a non-empty string 'id'"))
            }
            if type == "stop" { return .success(.stop(id: opId)) }
            guard let payload = value["payload"], case .object = payload else {
                return .failure(Invalid(id: opId, message: "\"start\" message expects the 'payload' property to be an object, but got \(JSONInput.typeName(value["payload"]))"))
            }
            guard case .string(let query)? = payload["query"] else {
                return .failure(Invalid(id: opId, message: "\"start\" message payload expects the 'query' property to be a string, but got \(JSONInput.typeName(payload["query"]))"))
            }
            var variables: JSONValue? = nil
            switch payload["variables"] {
            case nil, .null?: break
            case .object?: variables = payload["variables"]
            case let v?:
                return .failure(Invalid(id: opId, message: "\"start\" message payload expects the 'variables' property to be an object or null, but got \(JSONInput.typeName(v))"))
            }
            var operationName: String? = nil
            switch payload["operationName"] {
            case nil, .null?: break
            case .string(let s)?: operationName = s
            case let v?:
                return .failure(Invalid(id: opId, message: "\"start\" message payload expects the 'operationName' property to be a string or null, but got \(JSONInput.typeName(v))"))
            }
            return .success(.start(id: opId, request: GraphQLRequest(query: query, variables: variables, operationName: operationName)))
        default:
            return .failure(Invalid(id: id, message: "Invalid message type!"))
        }
    }
}

/// A client message decoded from its text, for either subprotocol: what the state machines take.
/// A large message is decoded on a thread of its own and handed back to the service thread as this
/// (`GatewayServer.offloadDecodeBytes`).
public enum DecodedClientMessage: Sendable {
    case transport(Result<TransportClientMessage, TransportClientMessage.Invalid>)
    case legacy(Result<LegacyClientMessage, LegacyClientMessage.Invalid>)

    public static func decode(_ text: UnsafeRawBufferPointer, _ proto: WireProtocol) -> DecodedClientMessage {
        switch proto {
        case .transport: return .transport(TransportClientMessage.decode(text))
        case .legacy: return .legacy(LegacyClientMessage.decode(text))
        }
    }
}
