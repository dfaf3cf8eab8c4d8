// Shared by the libFuzzer targets: the driver entry point, the input format, and the oracles
// every target checks beyond "does not crash".
import CLibFuzzer
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
