import Foundation
import Testing
@testable import Gateway
import Resolvers

/// The watcher's inotify hint: writes to the catalog file or its -wal/-journal wake it; other
/// files in the same directory do not.
@Suite struct CommitSignalTests {
    func scratchDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cg-signal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A rollback-journal catalog with one table, in `dir`.
    func versionTable(in dir: URL) throws -> (path: String, db: Database) {
        let path = dir.appendingPathComponent("catalog.sqlite").path
        let db = try Database(path: path, readOnly: false, create: true)
        try db.execute("CREATE TABLE version(versionid INTEGER)")
        return (path, db)
    }

    @Test func aCommitToTheCatalogWakesIt() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (path, db) = try versionTable(in: dir)
        let signal = CommitSignal(path: path)
        #expect(signal.isActive)
        #expect(signal.wait(timeoutMs: 50) == false)  // nothing written since the watch began
        try db.execute("INSERT INTO version VALUES(2)")
        #expect(signal.wait(timeoutMs: 5_000) == true)
    }

    @Test func anInterruptEndsTheWaitAndEveryLaterOne() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (path, _) = try versionTable(in: dir)
        let signal = CommitSignal(path: path)
        let started = monotonicMs()
        Thread.detachNewThread {
            usleep(100_000)
            signal.interrupt()
        }
        #expect(signal.wait(timeoutMs: 60_000) == false)
        let waited = monotonicMs() - started
        #expect(waited >= 90 && waited < 10_000, "waited \(waited) ms")
        let again = monotonicMs()
        #expect(signal.wait(timeoutMs: 60_000) == false)
        #expect(monotonicMs() - again < 1_000)
    }

    @Test func aHintSeenByPendingIsKeptForTheNextWait() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (path, db) = try versionTable(in: dir)
        let signal = CommitSignal(path: path)
        #expect(signal.pending() == false)
        try db.execute("INSERT INTO version VALUES(2)")
        var seen = false
        for _ in 0..<500 where !seen {
            seen = signal.pending()
            if !seen { usleep(10_000) }
        }
        #expect(seen)
        #expect(signal.pending() == true)  // asking again does not consume it
        #expect(signal.wait(timeoutMs: 0) == true)  // the wait takes it at once, even with no time
        #expect(signal.pending() == false)
        #expect(signal.wait(timeoutMs: 50) == false)
    }

    @Test func aWALCommitWakesIt() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("c.sqlite").path
        let db = try Database(path: path, readOnly: false, create: true)
        try db.execute("PRAGMA journal_mode=WAL")
        try db.execute("CREATE TABLE t(x)")
        let signal = CommitSignal(path: path)
        try db.execute("INSERT INTO t VALUES(1)")
        #expect(signal.wait(timeoutMs: 5_000) == true)
    }

    @Test func otherFilesAndAWriterAtWorkDoNot() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("catalog.sqlite").path
        try #require(FileManager.default.createFile(atPath: path, contents: Data()))
        let signal = CommitSignal(path: path)
        try Data("x".utf8).write(to: dir.appendingPathComponent("catalog.sqlite.bak"))
        try Data("y".utf8).write(to: dir.appendingPathComponent("notes.txt"))
        // A rollback-journal writer at work: the journal appears and grows, the file is written.
        let journal = dir.appendingPathComponent("catalog.sqlite-journal")
        try Data("j".utf8).write(to: journal)
        try Data("z".utf8).write(to: URL(fileURLWithPath: path))
        #expect(signal.wait(timeoutMs: 200) == false)
        // Its commit ends by deleting the journal.
        try FileManager.default.removeItem(at: journal)
        #expect(signal.wait(timeoutMs: 5_000) == true)
    }

    @Test func aFileRenamedOntoThePathWakesIt() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("catalog.sqlite").path
        try #require(FileManager.default.createFile(atPath: path, contents: Data()))
        let signal = CommitSignal(path: path)
        let next = dir.appendingPathComponent("next.sqlite").path
        try #require(FileManager.default.createFile(atPath: next, contents: Data("new".utf8)))
        #expect(rename(next, path) == 0)
        #expect(signal.wait(timeoutMs: 5_000) == true)
    }

    @Test func aMissingDirectoryLeavesItInactiveAndWaitSleeps() {
        let signal = CommitSignal(path: "/nonexistent-\(UUID().uuidString)/catalog.sqlite")
        #expect(!signal.isActive)
        let t0 = Date()
        #expect(signal.wait(timeoutMs: 30) == false)
        #expect(Date().timeIntervalSince(t0) >= 0.025)
    }
}
