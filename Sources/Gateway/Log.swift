#if canImport(Glibc)
import Glibc
#endif
import Foundation

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

/// Structured `key=value` lines on stderr, one `write(2)` per line so threads never interleave.
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
        line.withCString { p in _ = Glibc.write(2, p, strlen(p)) }
    }

    public func error(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, event, fields) }
    public func warn(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warn, event, fields) }
    public func info(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, event, fields) }
    public func debug(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.debug, event, fields) }

    /// Values with spaces, quotes, `=` or control characters are quoted with `\"` and `\\` escaped.
    static func quote(_ v: String) -> String {
        if !v.isEmpty, !v.utf8.contains(where: { $0 <= 0x20 || $0 == 0x22 || $0 == 0x3D || $0 == 0x5C || $0 == 0x7F }) {
            return v
        }
        var out = "\""
        for u in v.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 || u.value == 0x7F { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
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
