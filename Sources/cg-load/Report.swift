import Foundation
import ArgumentParser
import Histogram

/// Latency summary of one histogram, in milliseconds (recorded in microseconds).
struct LatencySummary {
    var count: Int
    var p50, p90, p99, p999, max, mean: Double

    init(_ h: Histogram<UInt64>) {
        count = Int(h.totalCount)
        func ms(_ us: UInt64) -> Double { Double(us) / 1000 }
        if h.totalCount == 0 {
            p50 = 0; p90 = 0; p99 = 0; p999 = 0; max = 0; mean = 0
        } else {
            p50 = ms(h.valueAtPercentile(50)); p90 = ms(h.valueAtPercentile(90))
            p99 = ms(h.valueAtPercentile(99)); p999 = ms(h.valueAtPercentile(99.9))
            max = ms(h.max); mean = h.mean / 1000
        }
    }

    init(samplesMs: [Double]) {
        let s = samplesMs.sorted()
        count = s.count
        func at(_ q: Double) -> Double { s.isEmpty ? 0 : s[min(s.count - 1, Int((Double(s.count) * q).rounded(.down)))] }
        p50 = at(0.5); p90 = at(0.9); p99 = at(0.99); p999 = at(0.999)
        max = s.last ?? 0
        mean = s.isEmpty ? 0 : s.reduce(0, +) / Double(s.count)
    }

    var json: [String: Any] {
        ["count": count, "p50_ms": r(p50), "p90_ms": r(p90), "p99_ms": r(p99), "p999_ms": r(p999), "max_ms": r(max), "mean_ms": r(mean)]
    }
}

/// Rounds to 4 decimals for the JSON files.
func r(_ v: Double) -> Double { (v * 10_000).rounded() / 10_000 }

/// A fixed-width text table.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    mutating func add(_ row: [String]) { rows.append(row) }

    func render() -> String {
        var widths = header.map(\.count)
        for row in rows { for (i, c) in row.enumerated() where i < widths.count { widths[i] = Swift.max(widths[i], c.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in
                let pad = String(repeating: " ", count: widths[i] - c.count)
                return i == 0 ? c + pad : pad + c
            }.joined(separator: "  ")
        }
        var out = line(header) + "\n" + line(widths.map { String(repeating: "-", count: $0) }) + "\n"
        for row in rows { out += line(row) + "\n" }
        return out
    }
}

func fmt(_ v: Double, _ decimals: Int = 2) -> String { String(format: "%.\(decimals)f", v) }

/// Writes `object` as pretty JSON to `path` ("-": standard output), creating the folder.
func writeJSON(_ object: [String: Any], to path: String) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    if path == "-" {
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
        return
    }
    let dir = (path as NSString).deletingLastPathComponent
    if !dir.isEmpty { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
    try data.write(to: URL(fileURLWithPath: path))
}

func timestamp() -> String {
    let f = DateFormatter()
    f.locale = Locale(identifier: "en_US_POSIX")
    f.timeZone = TimeZone(identifier: "UTC")
    f.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
    return f.string(from: Date())
}

/// A JSON string literal.
func jsonString(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
        }
    }
    return out + "\""
}

/// The `payload` object of a subscribe message.
func operationPayload(query: String, variables: String?) -> [UInt8] {
    var s = "{\"query\":" + jsonString(query)
    if let variables, !variables.isEmpty { s += ",\"variables\":" + variables }
    return Array((s + "}").utf8)
}

/// Usage errors for the commands' numbers: a count below its minimum, or seconds that are not a
/// finite number in range (infinity ran forever, NaN and negative durations measured nothing).
enum Check {
    static func count(_ name: String, _ v: Int, atLeast minimum: Int) throws {
        guard v >= minimum else { throw ValidationError("\(name) must be at least \(minimum) (got \(v))") }
    }

    static func seconds(_ name: String, _ v: Double, zeroAllowed: Bool = false, atMost maximum: Double = 86_400) throws {
        guard v.isFinite, zeroAllowed ? v >= 0 : v > 0, v <= maximum else {
            throw ValidationError("\(name) must be \(zeroAllowed ? "between 0 and" : "more than 0 and at most") \(Int(maximum)) (got \(v))")
        }
    }
}
