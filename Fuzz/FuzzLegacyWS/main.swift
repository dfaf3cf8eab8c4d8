// libFuzzer target: the graphql-ws (legacy) state machine (Sources/Gateway/LegacyWS.swift)
// fed a sequence of events. The input is split on 0xFF; a part that is exactly "T" fires the
// timer, "F" finishes the oldest operation, "S" begins shutdown; any other part is one received
// message. Oracles: every frame sent is a JSON object; nothing follows a close, and a closed
// machine ignores everything; operations stay within the limit and every execute/cancel names a
// live (id, serial); close codes are the protocol's.
import FuzzSupport
import Gateway
import Resolvers
import Schema

let configuration = WSMachineConfiguration(initTimeoutMs: 3_000, keepAliveMs: 12_000, maxOperations: 4)
let closeCodes: Set<UInt16> = [CloseCode.normal, CloseCode.initialisationTimeout]

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var machine = LegacyWSStateMachine(configuration: configuration)
    var live: [String: UInt64] = [:]
    var closed = false
    func apply(_ actions: [WSAction]) {
        if closed && !actions.isEmpty { fuzzFailure("actions after close: \(actions)") }
        for (k, action) in actions.enumerated() {
            switch action {
            case .send(let message):
                let frame = Frames.encode(message, .legacy)
                checkJSONObject(frame[Frames.headroom...], "frame \(action)")
            case .execute(let op):
                if live[op.id] != nil { fuzzFailure("execute of a live id \(op.id)") }
                live[op.id] = op.serial
                if !machine.isActive(id: op.id, serial: op.serial) { fuzzFailure("executed operation is not active") }
            case .cancel(let id, let serial):
                if live[id] != serial { fuzzFailure("cancel of \(id)#\(serial), live \(String(describing: live[id]))") }
                live[id] = nil
            case .close(let code, _):
                if !closeCodes.contains(code) { fuzzFailure("close code \(code)") }
                if k != actions.count - 1 { fuzzFailure("actions after close in one step: \(actions)") }
                if machine.phase != .closed { fuzzFailure("close without the closed phase") }
                closed = true
            case .setTimer, .cancelTimer: break
            }
        }
        if machine.operations.count > configuration.maxOperations { fuzzFailure("\(machine.operations.count) operations") }
        if !closed && machine.operations != live { fuzzFailure("operations \(machine.operations) but live \(live)") }
    }
    apply(machine.opened())
    for part in fuzzParts(fuzzBytes(data, size)) {
        switch part {
        case [0x54]: apply(machine.timerFired())
        case [0x46]:
            if let (id, serial) = machine.operations.min(by: { $0.value < $1.value }) {
                machine.finished(id: id, serial: serial)
                live[id] = nil
            }
        case [0x53]: machine.beginShutdown()
        default: apply(part.withUnsafeBytes { machine.receive($0) })
        }
    }
    return 0
}

runFuzzer(fuzzOne)
