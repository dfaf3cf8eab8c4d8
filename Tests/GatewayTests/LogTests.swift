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
}
