import Foundation
@testable import Resolvers

/// Catalogs for the sync tests: the contract fixture (Fixture.swift, versions 5 and 6), with
/// change capture installed unless asked otherwise.
enum SyncFixture {
    static func make(capture: Bool = true, extraSQL: String = "") throws -> String {
        let path = try Fixture.make(extraSQL: extraSQL)
        if capture {
            let db = try Database(path: path, readOnly: false)
            try ChangeCapture.install(db)
        }
        return path
    }

    /// A separate writer connection, as another program would open it.
    static func writer(_ path: String) throws -> Database {
        try Database(path: path, readOnly: false)
    }

    /// The change set for (since, to], computed on a fresh read-only connection inside one read
    /// transaction (as the executor does).
    static func changes(_ path: String, since: Int, to: Int? = nil) throws -> ChangeSet {
        let db = try Database(path: path, readOnly: true)
        return try changes(db, since: since, to: to)
    }

    static func changes(_ db: Database, since: Int, to: Int? = nil) throws -> ChangeSet {
        try db.execute("BEGIN")
        defer { try? db.execute("COMMIT") }
        return try ChangeSets.compute(db, since: since, to: to)
    }

    /// The error compute throws, or nil.
    static func error(_ path: String, since: Int, to: Int? = nil) throws -> ChangeSetError? {
        let db = try Database(path: path, readOnly: true)
        try db.execute("BEGIN")
        defer { try? db.execute("COMMIT") }
        do {
            _ = try ChangeSets.compute(db, since: since, to: to)
            return nil
        } catch {
            return error
        }
    }

    /// Runs SQL with the sqlite3 command-line shell, as a person editing the catalog would.
    static func sqlite3(_ path: String, _ sql: String) throws -> (status: Int32, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        p.arguments = [path]
        let input = Pipe(), err = Pipe()
        p.standardInput = input
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        input.fileHandleForWriting.write(Data(sql.utf8))
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        let e = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (p.terminationStatus, e)
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }
}
