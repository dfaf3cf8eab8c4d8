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
}
