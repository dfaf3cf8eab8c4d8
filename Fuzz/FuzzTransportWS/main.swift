// libFuzzer target: the graphql-transport-ws state machine (Sources/Gateway/TransportWS.swift) fed a sequence of
// events; input format and oracles: `fuzzProtocolMachine` in Fuzz/FuzzSupport.
import FuzzSupport
import Gateway

let configuration = WSMachineConfiguration(initTimeoutMs: 3_000, keepAliveMs: 12_000, maxOperations: 4)
let closeCodes: Set<UInt16> = [CloseCode.badRequest, CloseCode.unauthorized, CloseCode.initialisationTimeout,
                               CloseCode.subscriberAlreadyExists, CloseCode.tooManyInitialisationRequests]

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzProtocolMachine(TransportWSStateMachine(configuration: configuration), wire: .transport,
                        maxOperations: configuration.maxOperations, closeCodes: closeCodes, data, size)
    return 0
}

runFuzzer(fuzzOne)
