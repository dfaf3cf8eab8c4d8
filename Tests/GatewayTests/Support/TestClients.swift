import Foundation
@testable import Gateway
import Resolvers
import Schema
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// Test-only clients speaking raw TCP: a minimal RFC 6455 WebSocket client and an HTTP/1.1
/// client, so the live tests see exactly what goes over the wire (status lines, close codes).
struct TestClientError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

final class TestSocket {
    let fd: Int32
    var buffer: [UInt8] = []
    var eof = false

    init(port: Int, host: String = "127.0.0.1") throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestClientError("socket: \(errno)") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &addr.sin_addr)
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard r == 0 else {
            close(fd)
            throw TestClientError("connect to \(host):\(port) failed: errno \(errno)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8]) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw TestClientError("send failed: errno \(errno)") }
            done += n
        }
    }

    /// Reads what is available within `timeout` seconds; false on timeout.
    @discardableResult
    func fill(timeout: Double) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, Int32(timeout * 1000))
        if r <= 0 { return false }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &chunk, chunk.count, 0)
        if n <= 0 { eof = true; return true }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// Reads until `predicate` holds on the buffer or the deadline passes.
    func read(until deadline: Date, _ predicate: ([UInt8]) -> Bool) -> Bool {
        while !predicate(buffer) {
            if eof { return false }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return false }
            fill(timeout: left)
        }
        return true
    }
}

struct HTTPTestResponse {
    var statusLine: String
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSONValue? { try? JSONParser.parse(body) }
}

private func findHeaderEnd(_ b: [UInt8]) -> Int? {
    guard b.count >= 4 else { return nil }
    for i in 0...(b.count - 4) where b[i] == 13 && b[i + 1] == 10 && b[i + 2] == 13 && b[i + 3] == 10 { return i }
    return nil
}

private func parseHead(_ b: [UInt8], _ end: Int) -> (String, Int, [String: String]) {
    let lines = String(decoding: b[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let statusLine = lines.first ?? ""
    let parts = statusLine.split(separator: " ")
    let status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    var headers: [String: String] = [:]
    for l in lines.dropFirst() {
        guard let c = l.firstIndex(of: ":") else { continue }
        headers[l[..<c].lowercased()] = l[l.index(after: c)...].trimmingCharacters(in: .whitespaces)
    }
    return (statusLine, status, headers)
}

/// One HTTP/1.1 request on a fresh connection; reads the response by Content-Length.
func httpRequest(port: Int, method: String, path: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                 timeout: Double = 10) throws -> HTTPTestResponse {
    let s = try TestSocket(port: port)
    var req = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
    for (k, v) in headers { req += "\(k): \(v)\r\n" }
    if let body { req += "Content-Length: \(body.count)\r\n" }
    req += "\r\n"
    try s.write(Array(req.utf8) + (body ?? []))
    let deadline = Date().addingTimeInterval(timeout)
    guard s.read(until: deadline, { findHeaderEnd($0) != nil }), let end = findHeaderEnd(s.buffer) else {
        throw TestClientError("no response head: \(String(decoding: s.buffer, as: UTF8.self))")
    }
    let (line, status, h) = parseHead(s.buffer, end)
    let length = Int(h["content-length"] ?? "0") ?? 0
    _ = s.read(until: deadline) { $0.count >= end + 4 + length }
    let body = Array(s.buffer[(end + 4)..<min(s.buffer.count, end + 4 + length)])
    return HTTPTestResponse(statusLine: line, status: status, headers: h, body: body)
}

struct HandshakeRejected: Error {
    let response: HTTPTestResponse
}

/// A minimal WebSocket client: masked frames out, unfragmented or fragmented frames in.
final class TestWebSocket {
    enum Event: Equatable, CustomStringConvertible {
        case text(String)
        case binary([UInt8])
        case close(code: UInt16?, reason: String)
        case pong([UInt8])
        case timeout
        case eof

        var description: String {
            switch self {
            case .text(let t): return "text \(t)"
            case .binary(let b): return "binary \(b.count)"
            case .close(let c, let r): return "close \(c.map(String.init) ?? "-") \(r)"
            case .pong: return "pong"
            case .timeout: return "timeout"
            case .eof: return "eof"
            }
        }
    }

    let socket: TestSocket
    let subprotocol: String?
    let responseHeaders: [String: String]
    var pingsReceived = 0
    var answerPings = true

    init(port: Int, protocols: [String]?, path: String = "/graphql", extraHeaders: [(String, String)] = []) throws {
        socket = try TestSocket(port: port)
        var req = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        req += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let protocols { req += "Sec-WebSocket-Protocol: \(protocols.joined(separator: ", "))\r\n" }
        for (k, v) in extraHeaders { req += "\(k): \(v)\r\n" }
        req += "\r\n"
        try socket.write(Array(req.utf8))
        let deadline = Date().addingTimeInterval(10)
        guard socket.read(until: deadline, { findHeaderEnd($0) != nil }), let end = findHeaderEnd(socket.buffer) else {
            throw TestClientError("no handshake response")
        }
        let (line, status, h) = parseHead(socket.buffer, end)
        socket.buffer.removeFirst(end + 4)
        guard status == 101 else {
            let length = Int(h["content-length"] ?? "0") ?? 0
            _ = socket.read(until: deadline) { $0.count >= length }
            throw HandshakeRejected(response: HTTPTestResponse(statusLine: line, status: status, headers: h,
                                                              body: Array(socket.buffer.prefix(length))))
        }
        responseHeaders = h
        subprotocol = h["sec-websocket-protocol"]
    }

    func sendFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) throws {
        var f: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let n = payload.count
        if n < 126 { f.append(0x80 | UInt8(n)) }
        else if n < 65536 { f.append(0x80 | 126); f += [UInt8(n >> 8), UInt8(n & 0xFF)] }
        else { f.append(0x80 | 127); for i in (0..<8).reversed() { f.append(UInt8((UInt64(n) >> (UInt64(i) * 8)) & 0xFF)) } }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        f += mask
        for (i, b) in payload.enumerated() { f.append(b ^ mask[i & 3]) }
        try socket.write(f)
    }

    func send(_ text: String) throws { try sendFrame(opcode: 1, Array(text.utf8)) }

    func close(code: UInt16 = 1000) throws { try sendFrame(opcode: 8, [UInt8(code >> 8), UInt8(code & 0xFF)]) }

    private func parseFrame() -> (fin: Bool, opcode: UInt8, payload: [UInt8])? {
        let b = socket.buffer
        guard b.count >= 2 else { return nil }
        var len = Int(b[1] & 0x7F)
        var off = 2
        if len == 126 {
            guard b.count >= 4 else { return nil }
            len = Int(b[2]) << 8 | Int(b[3]); off = 4
        } else if len == 127 {
            guard b.count >= 10 else { return nil }
            len = 0
            for i in 2..<10 { len = len << 8 | Int(b[i]) }
            off = 10
        }
        guard b.count >= off + len else { return nil }
        let payload = Array(b[off..<(off + len)])
        socket.buffer.removeFirst(off + len)
        return (b[0] & 0x80 != 0, b[0] & 0x0F, payload)
    }

    /// The next message or control event (pings are answered and counted, not returned).
    func next(timeout: Double = 5) -> Event {
        let deadline = Date().addingTimeInterval(timeout)
        var message: [UInt8] = []
        var messageOpcode: UInt8 = 0
        while true {
            while let f = parseFrame() {
                switch f.opcode {
                case 0x9:
                    pingsReceived += 1
                    if answerPings { try? sendFrame(opcode: 0xA, f.payload) }
                case 0xA:
                    return .pong(f.payload)
                case 0x8:
                    let code = f.payload.count >= 2 ? UInt16(f.payload[0]) << 8 | UInt16(f.payload[1]) : nil
                    let reason = f.payload.count > 2 ? String(decoding: f.payload[2...], as: UTF8.self) : ""
                    return .close(code: code, reason: reason)
                case 0x0, 0x1, 0x2:
                    if f.opcode != 0 { messageOpcode = f.opcode }
                    message += f.payload
                    if f.fin {
                        return messageOpcode == 1 ? .text(String(decoding: message, as: UTF8.self)) : .binary(message)
                    }
                default:
                    break
                }
            }
            if socket.eof { return .eof }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return .timeout }
            socket.fill(timeout: left)
        }
    }

    /// The next text message parsed as JSON (nil on anything else).
    func nextJSON(timeout: Double = 5) -> JSONValue? {
        if case .text(let t) = next(timeout: timeout) { return try? JSONParser.parse(t) }
        return nil
    }
}

/// A small Radiant catalog made with the sqlite3 shell from the contract's schema.
enum CatalogFixture {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let schemaSQL = repoRoot.deletingLastPathComponent().appendingPathComponent("shared/contract/radiant-schema.sql")

    static let rows = """
        INSERT INTO version VALUES (1, 10, 20);
        INSERT INTO hierarchy VALUES (1, 'Cameras', 'cameras.png', 1, 0);
        INSERT INTO hierarchy VALUES (2, 'Lenses', 'lenses.png', 1, 0);
        INSERT INTO mfg VALUES (1, 'ARRI', 'arri.png');
        INSERT INTO Product_Catalog (product_ID, Product, Manufacturer, cat, displayorder, description, keyid)
          VALUES (100, 'ALEXA Mini', 'ARRI', 1, 1, 'Super 35 camera', 1);
        """

    /// Creates a fresh catalog file and returns its path.
    static func make() throws -> String {
        let dir = URL(fileURLWithPath: TestFiles.file("catalog", ext: "d"))
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("catalog.sqlite").path
        let schema = try String(contentsOf: schemaSQL, encoding: .utf8)
            .components(separatedBy: "\n").filter { !$0.hasPrefix("CREATE TABLE sqlite_sequence") }.joined(separator: "\n")
        try sqlite(path, schema + "\n" + rows)
        return path
    }

    /// Runs SQL through the sqlite3 shell: a separate process, like any other writer, with a
    /// busy timeout as tools should set one. Without it, a commit that met the watcher's read of
    /// the commit before (which no reader can avoid) failed with "database is locked":
    /// EarlyAnnounceTests, which is about versions, not locks, failed so twice in a row under a
    /// loaded machine (stop 42). Python's test_sync.py keeps writers without one where the
    /// watcher's care is what is tested.
    static func sqlite(_ path: String, _ sql: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        p.arguments = [path]
        let input = Pipe()
        let errors = Pipe()
        p.standardInput = input
        p.standardError = errors
        try p.run()
        input.fileHandleForWriting.write(Data((".timeout 5000\n" + sql).utf8))
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            let e = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw TestClientError("sqlite3 failed: \(e)")
        }
    }
}

/// A gateway running in-process on an ephemeral port.
final class LiveServer {
    let server: GatewayServer
    let db: String
    var port: Int { server.port }

    init(_ configure: (inout GatewayOptions) -> Void = { _ in }, catalog: () throws -> String = CatalogFixture.make) throws {
        db = try catalog()
        var o = GatewayOptions()
        o.port = 0
        o.workers = 2
        o.logLevel = .error
        configure(&o)
        let service = makeTestService()
        let path = db
        server = try GatewayServer(options: o, service: service, catalogPath: path) {
            try CatalogSession(path: path, service: service, readOnly: true)
        }
        try server.start()
    }

    func stop() {
        server.stop()
        server.wait()
    }

    deinit { stop() }

    /// A WebSocket that has been acknowledged on graphql-transport-ws.
    func transportClient() throws -> TestWebSocket {
        let ws = try TestWebSocket(port: port, protocols: ["graphql-transport-ws"])
        try ws.send(#"{"type":"connection_init"}"#)
        guard case .text(#"{"type":"connection_ack"}"#) = ws.next() else { throw TestClientError("no connection_ack") }
        return ws
    }
}
