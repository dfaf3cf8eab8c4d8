#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Schema
import Synchronization

/// Severity of a log line; `--log-level` keeps lines at or above the chosen one.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case error = 0, warn, info, debug

    public var name: String {
        switch self {
        case .error: return "error"
        case .warn: return "warn"
        case .info: return "info"
        case .debug: return "debug"
        }
    }

    public init?(name: String) {
        guard let l = LogLevel.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = l
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Structured `key=value` lines on stderr, written by a thread of their own (`LogSink`): a
/// line never waits for stderr, so a log reader that stalls cannot stall the server.
public struct Logger: Sendable {
    public let level: LogLevel

    public init(level: LogLevel) { self.level = level }

    @inline(__always) public func enabled(_ l: LogLevel) -> Bool { l <= level }

    public func log(_ l: LogLevel, _ event: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard enabled(l) else { return }
        var line = "ts=" + Self.timestamp() + " level=" + l.name + " event=" + event
        for (k, v) in fields {
            line += " " + k + "=" + Self.quote(v)
        }
        line += "\n"
        LogSink.standardError.append(line)
    }

    /// Waits until the lines logged so far are written to stderr, at most `seconds` (a reader
    /// that stopped reading keeps them): before the process exits.
    public static func flush(seconds: Double = 1) { LogSink.standardError.flush(seconds: seconds) }

    public func error(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, event, fields) }
    public func warn(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warn, event, fields) }
    public func info(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, event, fields) }
    public func debug(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.debug, event, fields) }

    /// Most UTF-8 bytes of one value in a line; the rest is cut and counted. Values may come
    /// from clients (ids, error messages quoting their input, X-Forwarded-For): uncut, a client
    /// wrote 10 MB of log for 10 MB sent, and a line past `LogSink.maxPendingBytes` was lost.
    static let maxValueBytes = 1024

    /// Values with spaces, quotes, `=`, control characters or anything but printable ASCII are
    /// quoted, with `\"` and `\\` escaped and every control, line-breaking or text-direction
    /// character written `\uXXXX` (U+0085, U+2028 and U+2029 end lines for many readers; C1's
    /// U+009B is a terminal's CSI; U+202E reverses what follows): a value cannot forge a line,
    /// move a terminal's cursor or hide text. Past `maxValueBytes` a value is cut on a character
    /// boundary and ends `…(N bytes)`.
    static func quote(_ v: String) -> String {
        if !v.isEmpty, v.utf8.count <= maxValueBytes,
           !v.utf8.contains(where: { $0 <= 0x20 || $0 == 0x22 || $0 == 0x3D || $0 == 0x5C || $0 >= 0x7F }) {
            return v
        }
        var out = "\""
        var bytes = 0
        for u in v.unicodeScalars {
            bytes += UTF8.width(u)
            if bytes > maxValueBytes {
                out += "…(\(v.utf8.count) bytes)"
                break
            }
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if DisplayText.mustEscape(u) { DisplayText.appendEscape(u, to: &out) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }

    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = ts.tv_sec
        var tmv = tm()
        gmtime_r(&t, &tmv)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(tmv.tm_year) + 1900, Int(tmv.tm_mon) + 1,
                      Int(tmv.tm_mday), Int(tmv.tm_hour), Int(tmv.tm_min), Int(tmv.tm_sec), Int(ts.tv_nsec / 1_000_000))
    }
}

extension Logger {
    /// The level to log an answer's errors at: warn when the catalog itself failed (a damaged
    /// page, an I/O error, a hot journal: DATABASE_ERROR, CATALOG_UNAVAILABLE), which an
    /// operator must see at the default level and tell from a client's mistake; info otherwise.
    static func level(of errors: [GraphQLError]) -> LogLevel {
        errors.contains { e in
            e.extensions["code"] == .string("DATABASE_ERROR") || e.extensions["code"] == .string("CATALOG_UNAVAILABLE")
        } ? .warn : .info
    }

    /// An answer's error messages for one log line: the first `shown` distinct ones joined by
    /// " | ", then how many errors there were in all. A timed-out list answers one error per
    /// item (an audit's 500,000 manufacturers made a 9.7 MB log line).
    static func errorSummary(_ messages: [String], shown: Int = 5) -> String {
        var seen: [String] = []
        for m in messages where !seen.contains(m) {
            seen.append(m)
            if seen.count == shown { break }
        }
        let text = seen.joined(separator: " | ")
        return messages.count > seen.count ? "\(text) | (\(messages.count) errors)" : text
    }
}

/// Log lines on their way to a file descriptor, written in order by one thread. Not a blocking
/// write(2) from the thread that logs, the service thread included: once a pipe nobody read was
/// full (64 KiB: 165 connections' lines at info), the whole server would stop, SIGTERM included.
/// Lines wait here, up to `maxPendingBytes`; past that they are dropped and counted, and the
/// count is logged once the sink can write again.
final class LogSink: Sendable {
    static let standardError = LogSink(fd: 2)
    static let maxPendingBytes = 1 << 20

    private struct State {
        var pending: [UInt8] = []
        var dropped = 0
        /// The writer has taken lines it has not finished writing.
        var writing = false
        var started = false
    }
    private let fd: Int32
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    init(fd: Int32) { self.fd = fd }

    func append(_ line: String) {
        let (signal, start) = state.withLock { s -> (Bool, Bool) in
            guard s.pending.count + line.utf8.count <= Self.maxPendingBytes else {
                s.dropped += 1
                return (true, false)  // the count is written once the writer is through
            }
            let wasEmpty = s.pending.isEmpty
            s.pending.append(contentsOf: line.utf8)
            let start = !s.started
            s.started = true
            return (wasEmpty, start)
        }
        if start {
            let t = Thread { [self] in self.run() }
            t.name = "log"
            t.start()
        }
        if signal { wake.signal() }
    }

    /// Lines appended and not yet written (tests).
    var pendingBytes: Int { state.withLock { $0.pending.count } }

    func flush(seconds: Double) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        while state.withLock({ !$0.pending.isEmpty || $0.writing }) && DispatchTime.now().uptimeNanoseconds < deadline {
            usleep(1_000)
        }
    }

    private func run() {
        // Signals go to the thread that waits for them (serve's); this thread may start before
        // serve blocks them, and would otherwise take SIGTERM's default action: an exit without
        // the graceful shutdown.
        var all = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, nil)
        // Lines a failed write lost (a full disk, EIO), and the error: counted until a write
        // succeeds again, then said.
        var lost = 0
        var lostError: Int32 = 0
        while true {
            wake.wait()
            while true {
                let (bytes, dropped) = state.withLock { s -> ([UInt8], Int) in
                    let taken = (s.pending, s.dropped)
                    s.pending = []
                    s.dropped = 0
                    s.writing = !taken.0.isEmpty || taken.1 > 0
                    return taken
                }
                if bytes.isEmpty && dropped == 0 { break }
                if !bytes.isEmpty {
                    let (written, error) = write(bytes)
                    if error != 0 {
                        lost += bytes[written...].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                        lostError = error
                    } else if lost > 0 {
                        let reason = "writing to standard error failed (\(String(cString: strerror(lostError))))"
                        _ = write(Array(Self.droppedLine(count: lost, reason: reason).utf8))
                        lost = 0
                    }
                }
                if dropped > 0 {
                    let reason = "standard error was not being read: \(Self.maxPendingBytes) bytes of lines were waiting"
                    if write(Array(Self.droppedLine(count: dropped, reason: reason).utf8)).error != 0 { lost += dropped + 1 }
                }
                state.withLock { $0.writing = false }
            }
        }
    }

    static func droppedLine(count: Int, reason: String) -> String {
        "ts=\(Logger.timestamp()) level=warn event=log_lines_dropped count=\(count) reason=\(Logger.quote(reason))\n"
    }

    /// Every byte, retrying short writes; stops at an error (a closed reader: EPIPE; a full
    /// disk: ENOSPC) and returns how many bytes were written and the error (0 when none).
    private func write(_ bytes: [UInt8]) -> (written: Int, error: Int32) {
        bytes.withUnsafeBytes { b -> (Int, Int32) in
            guard let base = b.baseAddress else { return (0, 0) }
            var off = 0
            while off < b.count {
                let n = Glibc.write(fd, base + off, b.count - off)
                if n > 0 { off += n } else if n < 0 && errno == EINTR { continue } else { return (off, n < 0 ? errno : EIO) }
            }
            return (off, 0)
        }
    }
}
