// libFuzzer target: the graphql-ws (legacy) state machine (Sources/Gateway/LegacyWS.swift) fed a sequence of
// events; input format and oracles: `fuzzProtocolMachine` in Fuzz/FuzzSupport.
import FuzzSupport
import Gateway

let configuration = WSMachineConfiguration(initTimeoutMs: 3_000, keepAliveMs: 12_000, maxOperations: 4)
let closeCodes: Set<UInt16> = [CloseCode.normal, CloseCode.initialisationTimeout]

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzProtocolMachine(LegacyWSStateMachine(configuration: configuration), wire: .legacy,
                        maxOperations: configuration.maxOperations, closeCodes: closeCodes, data, size)
    return 0
}

runFuzzer(fuzzOne)
