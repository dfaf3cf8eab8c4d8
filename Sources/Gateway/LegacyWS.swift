import Resolvers
import Schema

/// The graphql-ws (subscriptions-transport-ws) connection lifecycle as a value: connection_init
/// → connection_ack + `ka` (then `ka` every keep-alive interval), start → data… complete or
/// error, stop, connection_terminate. Invalid messages are answered with `error` and the socket
/// stays open, as in subscriptions-transport-ws.
public struct LegacyWSStateMachine: Sendable {
    public let configuration: WSMachineConfiguration
    public private(set) var phase: WSPhase = .awaitingInit
    public private(set) var operations: [ExactString: UInt64] = [:]
    public private(set) var shuttingDown = false
    private var nextSerial: UInt64 = 1

    public init(configuration: WSMachineConfiguration = WSMachineConfiguration()) {
        self.configuration = configuration
    }

    public mutating func opened() -> [WSAction] {
        [.setTimer(milliseconds: configuration.initTimeoutMs)]
    }

    public mutating func receive(_ text: UnsafeRawBufferPointer) -> [WSAction] {
        guard phase != .closed else { return [] }
        return receive(decoded: .legacy(LegacyClientMessage.decode(text)))
    }

    public mutating func receive(decoded: DecodedClientMessage) -> [WSAction] {
        guard phase != .closed, case .legacy(let result) = decoded else { return [] }
        switch result {
        case .failure(let e): return [.send(.legacyError(id: e.id, message: e.message))]
        case .success(let m): return receive(m)
        }
    }

    public mutating func receive(_ text: String) -> [WSAction] {
        var t = text
        return t.withUTF8 { receive(UnsafeRawBufferPointer($0)) }
    }

    public mutating func receive(_ message: LegacyClientMessage) -> [WSAction] {
        guard phase != .closed else { return [] }
        switch message {
        case .connectionInit:
            guard phase == .awaitingInit else { return [.send(.connectionAck)] }
            phase = .acknowledged
            return [.send(.connectionAck), .send(.keepAlive), .setTimer(milliseconds: configuration.keepAliveMs)]
        case .start(let id, let request):
            guard phase == .acknowledged else {
                return [.send(.legacyError(id: id, message: "Connection not initialised: send connection_init first"))]
            }
            var actions: [WSAction] = []
            if let old = operations.removeValue(forKey: ExactString(id)) {
                // subscriptions-transport-ws replaces an operation started again under its id.
                actions.append(.cancel(id: id, serial: old))
            }
            if shuttingDown {
                return actions + [.send(.legacyError(id: id, message: GatewayErrors.shuttingDown.message))]
            }
            if operations.count >= configuration.maxOperations {
                return actions + [.send(.legacyError(id: id, message: GatewayErrors.tooManyOperations(configuration.maxOperations).message))]
            }
            let serial = nextSerial
            nextSerial += 1
            operations[ExactString(id)] = serial
            return actions + [.execute(OperationStart(id: id, serial: serial, request: request))]
        case .stop(let id):
            guard let serial = operations.removeValue(forKey: ExactString(id)) else { return [] }
            return [.cancel(id: id, serial: serial), .send(.complete(id: id))]
        case .connectionTerminate:
            return close(CloseCode.normal, "Connection terminated by the client")
        }
    }

    public mutating func timerFired() -> [WSAction] {
        switch phase {
        case .awaitingInit: return close(CloseCode.initialisationTimeout, "Connection initialisation timeout")
        case .acknowledged: return [.send(.keepAlive), .setTimer(milliseconds: configuration.keepAliveMs)]
        case .closed: return []
        }
    }

    public func isActive(id: String, serial: UInt64) -> Bool { operations[ExactString(id)] == serial }

    public mutating func finished(id: String, serial: UInt64) {
        if operations[ExactString(id)] == serial { operations.removeValue(forKey: ExactString(id)) }
    }

    public mutating func beginShutdown() { shuttingDown = true }

    private mutating func close(_ code: UInt16, _ reason: String) -> [WSAction] {
        phase = .closed
        let ops = operations
        operations = [:]
        return ops.sorted { $0.value < $1.value }.map { WSAction.cancel(id: $0.key.value, serial: $0.value) }
            + [.close(code: code, reason: reason)]
    }
}
