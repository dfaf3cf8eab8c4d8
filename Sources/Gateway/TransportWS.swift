import Resolvers
import Schema

/// Close codes of the GraphQL over WebSocket Protocol (graphql-transport-ws) and RFC 6455 ones
/// the gateway uses.
public enum CloseCode {
    public static let normal: UInt16 = 1000
    public static let goingAway: UInt16 = 1001
    public static let policyViolation: UInt16 = 1008
    public static let messageTooBig: UInt16 = 1009
    public static let internalError: UInt16 = 1011
    /// RFC 6455 7.4.2's registry "Try Again Later": a temporary condition (graphql-ws's client
    /// reconnects after it, backing off; 4429 and 1008 end its retries for good).
    public static let tryAgainLater: UInt16 = 1013
    public static let badRequest: UInt16 = 4400
    public static let unauthorized: UInt16 = 4401
    public static let initialisationTimeout: UInt16 = 4408
    public static let subscriberAlreadyExists: UInt16 = 4409
    public static let tooManyInitialisationRequests: UInt16 = 4429
    public static let internalServerError: UInt16 = 4500
}

/// Limits a protocol state machine enforces itself.
public struct WSMachineConfiguration: Sendable {
    public var initTimeoutMs: Int
    public var keepAliveMs: Int
    public var maxOperations: Int
    public init(initTimeoutMs: Int = 3_000, keepAliveMs: Int = 12_000, maxOperations: Int = 500) {
        self.initTimeoutMs = initTimeoutMs; self.keepAliveMs = keepAliveMs; self.maxOperations = maxOperations
    }
}

/// What the gateway (and the protocol fuzz targets) ask of either subprotocol's state machine.
public protocol WSProtocolMachine {
    var phase: WSPhase { get }
    /// Live operations: id → serial.
    var operations: [ExactString: UInt64] { get }
    mutating func opened() -> [WSAction]
    mutating func receive(_ text: UnsafeRawBufferPointer) -> [WSAction]
    /// The same for a message already decoded (on a worker, when large).
    mutating func receive(decoded: DecodedClientMessage) -> [WSAction]
    mutating func timerFired() -> [WSAction]
    func isActive(id: String, serial: UInt64) -> Bool
    mutating func finished(id: String, serial: UInt64)
    mutating func beginShutdown()
}

extension TransportWSStateMachine: WSProtocolMachine {}
extension LegacyWSStateMachine: WSProtocolMachine {}

public enum WSPhase: Sendable, Equatable {
    case awaitingInit, acknowledged, closed
}

/// The graphql-transport-ws connection lifecycle (enisdenjo/graphql-ws PROTOCOL.md) as a value:
/// each event returns the actions to perform, so it is tested without sockets.
public struct TransportWSStateMachine: Sendable {
    public let configuration: WSMachineConfiguration
    public private(set) var phase: WSPhase = .awaitingInit
    /// Active operation ids (queries in flight and subscriptions) and their serials.
    public private(set) var operations: [ExactString: UInt64] = [:]
    public private(set) var shuttingDown = false
    private var nextSerial: UInt64 = 1

    public init(configuration: WSMachineConfiguration = WSMachineConfiguration()) {
        self.configuration = configuration
    }

    /// The socket is open: the client has `initTimeoutMs` to send connection_init.
    public mutating func opened() -> [WSAction] {
        [.setTimer(milliseconds: configuration.initTimeoutMs)]
    }

    /// One complete text (or binary) message.
    public mutating func receive(_ text: UnsafeRawBufferPointer) -> [WSAction] {
        guard phase != .closed else { return [] }
        return receive(decoded: .transport(TransportClientMessage.decode(text)))
    }

    public mutating func receive(decoded: DecodedClientMessage) -> [WSAction] {
        guard phase != .closed, case .transport(let result) = decoded else { return [] }
        switch result {
        case .failure(let e): return close(CloseCode.badRequest, e.reason)
        case .success(let m): return receive(m)
        }
    }

    public mutating func receive(_ text: String) -> [WSAction] {
        var t = text
        return t.withUTF8 { receive(UnsafeRawBufferPointer($0)) }
    }

    public mutating func receive(_ message: TransportClientMessage) -> [WSAction] {
        guard phase != .closed else { return [] }
        switch message {
        case .connectionInit:
            guard phase == .awaitingInit else {
                return close(CloseCode.tooManyInitialisationRequests, "Too many initialisation requests")
            }
            phase = .acknowledged
            return [.cancelTimer, .send(.connectionAck)]
        case .ping(let payload):
            return [.send(.pong(payload))]
        case .pong:
            return []
        case .subscribe(let id, let request):
            guard phase == .acknowledged else { return close(CloseCode.unauthorized, "Unauthorized") }
            if operations[ExactString(id)] != nil {
                return close(CloseCode.subscriberAlreadyExists, "Subscriber for \(id) already exists")
            }
            if shuttingDown {
                return [.send(.requestError(id: id, errors: [GatewayErrors.shuttingDown]))]
            }
            if operations.count >= configuration.maxOperations {
                return [.send(.requestError(id: id, errors: [GatewayErrors.tooManyOperations(configuration.maxOperations)]))]
            }
            let serial = nextSerial
            nextSerial += 1
            operations[ExactString(id)] = serial
            return [.execute(OperationStart(id: id, serial: serial, request: request))]
        case .complete(let id):
            guard let serial = operations.removeValue(forKey: ExactString(id)) else { return [] }
            return [.cancel(id: id, serial: serial)]
        }
    }

    /// The connection timer fired.
    public mutating func timerFired() -> [WSAction] {
        guard phase == .awaitingInit else { return [] }
        return close(CloseCode.initialisationTimeout, "Connection initialisation timeout")
    }

    /// Whether a result for (id, serial) may still be sent.
    public func isActive(id: String, serial: UInt64) -> Bool { operations[ExactString(id)] == serial }

    /// The terminal message (`complete` or `error`) of (id, serial) was sent: the id is free again.
    public mutating func finished(id: String, serial: UInt64) {
        if operations[ExactString(id)] == serial { operations.removeValue(forKey: ExactString(id)) }
    }

    /// Server shutdown: new operations are refused with an `error`.
    public mutating func beginShutdown() { shuttingDown = true }

    private mutating func close(_ code: UInt16, _ reason: String) -> [WSAction] {
        phase = .closed
        let ops = operations
        operations = [:]
        return ops.sorted { $0.value < $1.value }.map { WSAction.cancel(id: $0.key.value, serial: $0.value) }
            + [.close(code: code, reason: reason)]
    }
}

/// Errors the gateway itself reports in `error` messages and HTTP responses.
public enum GatewayErrors {
    public static let shuttingDown = GraphQLError(
        "The server is shutting down; retry on a new connection",
        extensions: ["code": .string("SERVICE_UNAVAILABLE")])

    public static func tooManyOperations(_ limit: Int) -> GraphQLError {
        GraphQLError("Too many operations in flight on this connection (limit \(limit))",
                     extensions: ["code": .string("TOO_MANY_OPERATIONS")])
    }

    public static func tooManySubscriptions(_ limit: Int) -> GraphQLError {
        GraphQLError("Too many subscriptions on this connection (limit \(limit))",
                     extensions: ["code": .string("TOO_MANY_SUBSCRIPTIONS")])
    }

    /// Too many operations wait for a worker, all clients together (--max-waiting-operations,
    /// --max-waiting-bytes): the server is offered more than it can do. A WebSocket operation
    /// gets it in an `error`, an HTTP request as a 503 with Retry-After.
    public static func serverBusy(operations: Int, bytes: Int) -> GraphQLError {
        GraphQLError("The server is busy: too many operations are waiting for a worker (limit \(operations) operations or \(bytes) bytes, all clients together); retry later",
                     extensions: ["code": .string("SERVER_BUSY")])
    }

    /// The error for an operation that waited `ns` for a worker (`WorkerPool.submitTimed`)
    /// under --max-wait-ms `limitMs`, or nil when that is no longer than the limit (0: none).
    /// The wait is told in ms rounded up, so that it reads as over the limit: 1.3 ms against 1
    /// is "2 ms" (rounded down, "waited 1 ms for a worker (limit 1 ms)").
    public static func waitedTooLong(ns: UInt64, limitMs: Int) -> GraphQLError? {
        guard limitMs > 0, ns > UInt64(limitMs) &* 1_000_000 else { return nil }
        return waitedTooLong(ms: Int((ns - 1) / 1_000_000 + 1), limit: limitMs)
    }

    /// An operation waited longer than --max-wait-ms for a worker: it is answered this instead of
    /// running (its client has likely given up, and running it would make everyone after it
    /// wait longer still).
    public static func waitedTooLong(ms: Int, limit: Int) -> GraphQLError {
        GraphQLError("The server is busy: the operation waited \(ms) ms for a worker (limit \(limit) ms) and was not run; retry later",
                     extensions: ["code": .string("SERVER_BUSY")])
    }

    public static let subscriptionOverHTTP = GraphQLError(
        "Subscriptions are not supported over HTTP; subscribe over a WebSocket at /graphql (subprotocol graphql-transport-ws or graphql-ws)",
        extensions: ["code": .string("SUBSCRIPTION_OVER_HTTP")])

    public static let mutationNotSupported = GraphQLError(
        "Mutations are not supported: this catalog is read-only",
        extensions: ["code": .string("MUTATION_NOT_SUPPORTED")])

    public static func internalError(_ detail: String) -> GraphQLError {
        GraphQLError("Internal server error: \(detail)", extensions: ["code": .string("INTERNAL_SERVER_ERROR")])
    }
}
