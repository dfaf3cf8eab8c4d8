import Foundation
import Testing
@testable import Gateway

/// What one `operation_error` log line says about an answer's errors.
@Suite struct LogTests {
    @Test func fewErrorsAreListedInFull() {
        #expect(Logger.errorSummary([]) == "")
        #expect(Logger.errorSummary(["a"]) == "a")
        #expect(Logger.errorSummary(["a", "b", "c"]) == "a | b | c")
    }

    /// A list that timed out answers one error per item: the line names the distinct messages
    /// (at most five) and the count, not 500,000 messages.
    @Test func manyErrorsAreSummed() {
        let timeouts = Array(repeating: "Query stopped: the execution limit of 5000 ms was reached.", count: 500_000)
        #expect(Logger.errorSummary(timeouts) == "Query stopped: the execution limit of 5000 ms was reached. | (500000 errors)")
        let mixed = (0..<20).map { "m\($0 % 7)" }
        #expect(Logger.errorSummary(mixed) == "m0 | m1 | m2 | m3 | m4 | (20 errors)")
        #expect(Logger.errorSummary(["x", "x"]) == "x | (2 errors)")
    }

    /// Lines wait for the log thread instead of being written by the thread that logs them: a
    /// full pipe that nobody reads (stderr under a stalled journald) used to stop the server.
    /// Past 1 MiB lines are dropped, and the count is written once the pipe is read again.
    @Test func aPipeNobodyReadsNeverBlocksALine() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let sink = LogSink(fd: fds[1])
        let line = String(repeating: "x", count: 999) + "\n"
        let started = Date()
        for _ in 0..<3_000 { sink.append(line) }  // 3 MB: the pipe holds 64 KiB, the queue 1 MiB
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(sink.pendingBytes <= LogSink.maxPendingBytes)
        // Read it all: the lines kept, in order, then the count of those dropped.
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        var text: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && !String(decoding: text.suffix(300), as: UTF8.self).contains("event=log_lines_dropped") {
            let n = read(fds[0], &buf, buf.count)
            if n > 0 { text += buf[0..<n] } else { usleep(1_000) }
        }
        let out = String(decoding: text, as: UTF8.self)
        let kept = out.split(separator: "\n").filter { $0.count == 999 }.count
        guard let dropped = out.split(separator: "\n").last(where: { $0.contains("event=log_lines_dropped") })
            .flatMap({ $0.split(separator: " ").first(where: { $0.hasPrefix("count=") }) })
            .flatMap({ Int($0.dropFirst(6)) }) else {
            Issue.record("no log_lines_dropped line in \(out.suffix(300))")
            return
        }
        #expect(kept + dropped == 3_000 && dropped > 0, "kept \(kept), dropped \(dropped)")
        // (The read end stays open: the log thread would otherwise meet a broken pipe later.)
    }

    /// A client's text cannot forge a line, steer a terminal or flip what follows it: every
    /// control, line-breaking and text-direction character is written as `\uXXXX`.
    @Test func clientTextCannotForgeALine() {
        let forged = "203.0.113.9\u{2028}ts=2026 level=error event=admin\u{2029}\u{85}\u{9B}2K\u{202E}txt\u{1B}\u{7F}\u{FEFF}\u{200F}\u{2066}"
        let q = Logger.quote(forged)
        #expect(q == "\"203.0.113.9\\u2028ts=2026 level=error event=admin\\u2029\\u0085\\u009b2K\\u202etxt\\u001b\\u007f\\ufeff\\u200f\\u2066\"")
        #expect(!q.unicodeScalars.contains { $0.value >= 0x7F && $0.value <= 0x9F || $0.value == 0x2028 || $0.value == 0x2029 })
        // Printable text beyond ASCII stays as it is, quoted.
        #expect(Logger.quote("Café Objektiv") == "\"Café Objektiv\"")
        #expect(Logger.quote("Café") == "\"Café\"")
        #expect(Logger.quote("plain-ascii_1.2") == "plain-ascii_1.2")
    }

    /// A value past 1 KiB is cut on a character boundary and says how long it was.
    @Test func longValuesAreCut() {
        #expect(Logger.quote(String(repeating: "a", count: 1024)) == String(repeating: "a", count: 1024))
        let long = String(repeating: "é", count: 600)  // 1,200 bytes
        let q = Logger.quote(long)
        #expect(q == "\"" + String(repeating: "é", count: 512) + "…(1200 bytes)\"")
        let huge = Logger.quote(String(repeating: "x", count: 1_000_000))
        #expect(huge.utf8.count < 1100 && huge.hasSuffix("…(1000000 bytes)\""))
    }

    /// Lines a failed write lost (a full disk) are counted and said, with the error, once
    /// writing works again.
    @Test func linesLostToAFailedWriteAreCountedAndSaid() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let full = open("/dev/full", O_WRONLY)
        #expect(full >= 0)
        let target = dup(full)  // the sink's fd: /dev/full first, the pipe later
        let sink = LogSink(fd: target)
        for k in 0..<3 { sink.append("lost \(k)\n") }
        sink.flush(seconds: 5)
        #expect(dup2(fds[1], target) == target)
        sink.append("kept\n")
        sink.flush(seconds: 5)
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = read(fds[0], &buf, buf.count)
        let out = String(decoding: buf[0..<max(0, n)], as: UTF8.self)
        let lines = out.split(separator: "\n")
        #expect(lines.first == "kept", "\(out)")
        #expect(lines.count == 2 && lines[1].contains("event=log_lines_dropped count=3 reason=\"writing to standard error failed (No space left on device)\""), "\(out)")
        close(full)
    }
}
