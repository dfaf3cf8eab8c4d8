// Shared by the libFuzzer targets: the driver entry point, the input format, and the oracles
// every target checks beyond "does not crash".
import CLibFuzzer
import Gateway
import Resolvers
import Schema
#if canImport(Glibc)
import Glibc
#endif

/// The signature libFuzzer calls for each input.
public typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Hands control to libFuzzer. SwiftPM renames an executable's entry point to <Module>_main and
/// points `main` at it, so each target's main.swift calls this instead of relying on libFuzzer's
/// own main.
public func runFuzzer(_ callback: FuzzCallback) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
}

/// The input as bytes.
public func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// A request as the variables and execution targets read their input:
/// `query 0xFF variables-JSON [0xFF operationName]`. 0xFF never occurs in UTF-8, so valid
/// queries and JSON never contain the separator; the query part is decoded leniently (invalid
/// UTF-8 becomes U+FFFD, as a transport decoding bytes would).
public struct FuzzRequest {
    public var query: String
    /// nil when there is no variables part; the raw bytes otherwise.
    public var variablesJSON: [UInt8]?
    public var operationName: String?

    public init(_ bytes: [UInt8]) {
        let parts = bytes.split(separator: 0xFF, maxSplits: 2, omittingEmptySubsequences: false)
        query = String(decoding: parts[0], as: UTF8.self)
        variablesJSON = parts.count > 1 ? Array(parts[1]) : nil
        operationName = parts.count > 2 ? String(decoding: parts[2], as: UTF8.self) : nil
    }

    /// The GraphQL request, or nil when the variables part is not JSON (the transport would
    /// have answered that itself).
    public func request() -> GraphQLRequest? {
        var variables: JSONValue?
        if let variablesJSON, !variablesJSON.isEmpty {
            guard let v = try? JSONParser.parse(variablesJSON) else { return nil }
            variables = v
        }
        return GraphQLRequest(query: query, variables: variables, operationName: operationName)
    }
}

/// Stops the run (libFuzzer records the input as a crash) with a message.
public func fuzzFailure(_ message: String) -> Never {
    let line = Array("fuzz oracle failed: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// Every response must be one JSON object, valid UTF-8, with `data` and/or a non-empty `errors`.
public func checkResponse(_ result: ExecutionResult) {
    let value: JSONValue
    do {
        value = try JSONParser.parse(result.json)
    } catch {
        fuzzFailure("response is not JSON (\(error)): \(String(decoding: result.json.prefix(500), as: UTF8.self))")
    }
    guard case .object(let members) = value else { fuzzFailure("response is not an object") }
    let keys = members.map(\.0)
    if result.hasData != keys.contains("data") { fuzzFailure("hasData \(result.hasData) but keys \(keys)") }
    if result.errors.isEmpty == keys.contains("errors") { fuzzFailure("errors \(result.errors.count) but keys \(keys)") }
    if case .array(let list)? = value["errors"], list.count != result.errors.count {
        fuzzFailure("errors \(result.errors.count) but \(list.count) serialised")
    }
}

/// The input split on 0xFF into parts (empty parts kept).
public func fuzzParts(_ bytes: [UInt8], max: Int = 64) -> [[UInt8]] {
    bytes.split(separator: 0xFF, maxSplits: max - 1, omittingEmptySubsequences: false).map(Array.init)
}

/// A frame or body that must be one JSON object; returns it.
@discardableResult
public func checkJSONObject(_ bytes: ArraySlice<UInt8>, _ what: String) -> JSONValue {
    let value: JSONValue
    do { value = try JSONParser.parse(Array(bytes)) } catch {
        fuzzFailure("\(what) is not JSON (\(error)): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
    }
    guard case .object = value else { fuzzFailure("\(what) is not an object") }
    return value
}

/// The subprotocol targets (FuzzTransportWS, FuzzLegacyWS): `machine` fed a sequence of events.
/// The input is split on 0xFF; a part that is exactly "T" fires the timer, "F" finishes the
/// oldest operation, "S" begins shutdown; any other part is one received message. Oracles: every
/// frame sent is a JSON object; nothing follows a close, and a closed machine ignores
/// everything; operations stay within `maxOperations` and every execute/cancel names a live
/// (id, serial); close codes are among `closeCodes`.
public func fuzzProtocolMachine<M: WSProtocolMachine>(_ machine: M, wire: WireProtocol, maxOperations: Int,
                                                      closeCodes: Set<UInt16>, _ data: UnsafePointer<UInt8>?, _ size: Int) {
    var machine = machine
    var live: [ExactString: UInt64] = [:]
    var closed = false
    func apply(_ actions: [WSAction]) {
        if closed && !actions.isEmpty { fuzzFailure("actions after close: \(actions)") }
        for (k, action) in actions.enumerated() {
            switch action {
            case .send(let message):
                let frame = Frames.encode(message, wire)
                checkJSONObject(frame[Frames.headroom...], "frame \(action)")
            case .execute(let op):
                if live[ExactString(op.id)] != nil { fuzzFailure("execute of a live id \(op.id)") }
                live[ExactString(op.id)] = op.serial
                if !machine.isActive(id: op.id, serial: op.serial) { fuzzFailure("executed operation is not active") }
            case .cancel(let id, let serial):
                if live[ExactString(id)] != serial { fuzzFailure("cancel of \(id)#\(serial), live \(String(describing: live[ExactString(id)]))") }
                live[ExactString(id)] = nil
            case .close(let code, _):
                if !closeCodes.contains(code) { fuzzFailure("close code \(code)") }
                if k != actions.count - 1 { fuzzFailure("actions after close in one step: \(actions)") }
                if machine.phase != .closed { fuzzFailure("close without the closed phase") }
                closed = true
            case .setTimer, .cancelTimer: break
            }
        }
        if machine.operations.count > maxOperations { fuzzFailure("\(machine.operations.count) operations") }
        if !closed && machine.operations != live { fuzzFailure("operations \(machine.operations) but live \(live)") }
    }
    apply(machine.opened())
    for part in fuzzParts(fuzzBytes(data, size)) {
        switch part {
        case [0x54]: apply(machine.timerFired())
        case [0x46]:
            if let (id, serial) = machine.operations.min(by: { $0.value < $1.value }) {
                machine.finished(id: id.value, serial: serial)
                live[id] = nil
            }
        case [0x53]: machine.beginShutdown()
        default: apply(part.withUnsafeBytes { machine.receive($0) })
        }
    }
}

/// The demo catalog the executing targets (FuzzExecute, FuzzHTTP) run against: 60 products,
/// opened with no answer cache so that repeats execute again. Written once, at
/// $CG_FUZZ_CATALOG (Fuzz/run.sh: under .build-fuzz/, removed at the start of each run so that
/// a catalog written by an older build is not reused) or else one per process in /tmp.
public func fuzzCatalogSession(_ configure: (inout EngineOptions) -> Void = { _ in }) -> (QueryService, CatalogSession) {
    let catalogPath = getenv("CG_FUZZ_CATALOG").map { String(cString: $0) } ?? "/tmp/cg-fuzz-demo-60-\(getpid()).sqlite"
    if access(catalogPath, R_OK) != 0 {
        do { try DemoCatalog(products: 60).write(to: catalogPath) } catch { fuzzFailure("cannot write \(catalogPath): \(error)") }
    }
    var options = EngineOptions()
    configure(&options)
    let service = QueryService(options: options)
    do {
        let s = try CatalogSession(path: catalogPath, service: service)
        s.answerCacheLimit = 0
        return (service, s)
    } catch {
        fuzzFailure("cannot open \(catalogPath): \(error)")
    }
}
