import Foundation
import Testing
@testable import cg_load

/// `--server-pid` measures a server whole: a process that runs its workers as child processes
/// (the Python server of bench/python-server runs one per core) has their CPU and memory counted.
@Suite struct ProcessTreeTests {
    /// A shell whose child and grandchild each hold 16 MiB of touched memory; it prints the pid
    /// of each once they hold it, then all sleep.
    static let script = """
        sh -c 'x=$(head -c 16777216 /dev/zero | tr "\\\\0" a); echo grandchild $$; sleep 30' &
        x=$(head -c 16777216 /dev/zero | tr "\\\\0" b); echo child $$; sleep 30
        """

    @Test func descendantsAreFoundAndTheirMemoryCounted() throws {
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        let parent = Pipe()
        shell.arguments = ["-c", "sh -c '\(Self.script.replacingOccurrences(of: "'", with: "'\\''"))' & echo parent $$; wait"]
        shell.standardOutput = parent
        shell.standardError = FileHandle.nullDevice  // "Killed" when the tree is stopped
        try shell.run()
        defer {
            for p in processTree(shell.processIdentifier).reversed() { kill(p, SIGKILL) }
            shell.waitUntilExit()
        }
        // Three lines: the parent, then the child and the grandchild once their memory is held.
        var seen = ""
        let deadline = Date().addingTimeInterval(20)
        while seen.split(separator: "\n").count < 3, Date() < deadline {
            seen += String(decoding: parent.fileHandleForReading.availableData, as: UTF8.self)
        }
        let pids = seen.split(separator: "\n").compactMap { $0.split(separator: " ").last.flatMap { Int32($0) } }
        try #require(pids.count == 3, "\(seen)")

        let tree = processTree(shell.processIdentifier)
        for p in pids { #expect(tree.contains(p), "\(p) not in \(tree)") }
        #expect(tree.first == shell.processIdentifier)
        #expect(!tree.contains(getpid()))

        let whole = try #require(residentKiB(shell.processIdentifier))
        let first = try #require(residentKiB(shell.processIdentifier, tree: [shell.processIdentifier]))
        // Two 16 MiB shell variables held in descendants, not in the first process.
        #expect(whole - first >= 2 * 16 * 1024)
        #expect(serverCPUSeconds(shell.processIdentifier) != nil)
        #expect(residentKiB(Int32.max) == nil && serverCPUSeconds(Int32.max) == nil)
    }
}
