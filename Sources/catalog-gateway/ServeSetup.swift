import Foundation
import Gateway
import Resolvers
import Synchronization

/// What `serve` does to a catalog before it listens, and the background compaction of the
/// change log.
enum ServeSetup {
    /// Creates the demo catalog at `path` when it is missing (only for the default path).
    static func ensureDemoCatalog(at path: String, logger: Logger) {
        guard !FileManager.default.fileExists(atPath: path) else { return }
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty {
            try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        }
        do {
            try DemoCatalog().write(to: path)
            logger.info("demo_catalog_created", ["path": path])
        } catch {
            fail("cannot create the demo catalog at \(path): \(error)")
        }
    }

    /// Adds the gateway's cg_ indexes, search index and change capture when the file can be
    /// written; otherwise serves it as it is, with a warning (slower; sync falls back to the
    /// version-row rule). When `stopped` turns true (a stop signal) the prepare stops and is
    /// rolled back, leaving the file as it was.
    static func prepare(path: String, readOnly: Bool, busyTimeoutMs: Int32, logger: Logger, stopped: @escaping () -> Bool) {
        if readOnly {
            logger.info("catalog_read_only", ["path": path, "reason": "--read-only"])
            return
        }
        do {
            let started = DispatchTime.now().uptimeNanoseconds
            let db = try Database(path: path, readOnly: false, busyTimeoutMs: busyTimeoutMs)
            // A journal with bytes in it and no writer holding its lock is hot: a writer stopped
            // inside a transaction (killed, a crash), and this connection's first read rolls the
            // transaction back. Said as the query path says it.
            let journal = path + "-journal"
            let hotJournal = journalBytes(journal) > 0 && db.writerHoldsLock() == false
            defer {
                if hotJournal && journalBytes(journal) == 0 { logHotJournalRolledBack(path: path, logger: logger) }
            }
            db.stopWhen(everyInstructions: 10_000, stopped)
            let created = try CatalogPreparation.prepare(db)
            if !created.isEmpty {
                // How long a replacement renamed in unprepared went on being answered from the
                // file before (README: prepare a catalog before renaming it in).
                let ms = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
                logger.info("catalog_prepared", ["path": path, "ms": String(ms), "created": created.joined(separator: ",")])
            }
            let newer = try CatalogPreparation.newerObjects(db)
            if !newer.isEmpty {
                // Left to the newer gateway that made them (a rolling deploy, or a rollback):
                // replacing them started a fight between the two (docs/FAULTS.md, stop 34).
                logger.warn("catalog_objects_newer", [
                    "path": path, "objects": newer.map(\.description).joined(separator: ", "),
                    "effect": "left as a newer catalog-gateway made them and not used: search scans, counts count rows, catalogChanges uses the version-row rule",
                    "remedy": "serve with the newer gateway, or once none serves the file: catalog-gateway prepare --downgrade",
                ])
            }
        } catch {
            // A file that is no catalog at all (not SQLite, a directory, tables missing) fails
            // when the server opens it, just after, with the reason: no warning about speed first.
            // The look may wait for a writer's lock too, as long and as stoppable as the prepare.
            var options = EngineOptions()
            options.busyTimeoutMs = busyTimeoutMs
            let isCatalog = !stopped()
                && (try? CatalogSession(path: path, service: QueryService(options: options), readOnly: true, stopsWhen: stopped)) != nil
            if stopped() {
                logger.info("catalog_prepare_stopped", ["path": path, "reason": "stop signal; the file is left as it was"])
                return
            }
            guard isCatalog else { return }
            logger.warn("catalog_not_prepared", [
                "path": path, "error": "\(error)",
                "effect": "answers stay correct but slower without cg_ indexes; catalogChanges uses the version-row rule",
            ])
        }
    }

    /// A writer's transaction, cut short, was undone by rolling its hot journal back: at start
    /// (`prepare`) or by a query (`CatalogSession.rolledBackHotJournal`).
    static func logHotJournalRolledBack(path: String, logger: Logger) {
        logger.warn("catalog_hot_journal_rolled_back", [
            "path": path, "reason": "a writer stopped inside a transaction; its changes were undone"])
    }

    /// The size of the file at `path`; 0 when there is none.
    private static func journalBytes(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : 0
    }

    /// Compacts the change log every `interval` seconds on a connection of its own, only while
    /// the file at `path` is the one the server answers from (`served`): a catalog renamed over
    /// a WAL catalog is refused while the old file's `-wal` is beside it (docs/FAULTS.md), and
    /// a connection opened on it here would read those pages and, closing last, checkpoint
    /// them into the new file (a review audit saw the file corrupted within 0.5 s). A pass
    /// running when `stopped` turns true is stopped and rolled back; `Compaction.finish` waits
    /// for that before the process exits (an exit inside the pass's transaction left a hot
    /// journal, which read-only readers of the file cannot roll back).
    static func startCompaction(path: String, keepVersions: Int?, keepDays: Int?, interval: Double, busyTimeoutMs: Int32,
                                logger: Logger, served: @escaping @Sendable () -> CatalogFileIdentity?,
                                stopped: @escaping @Sendable () -> Bool) -> Compaction? {
        guard keepVersions != nil || keepDays != nil else { return nil }
        let compaction = Compaction()
        let t = Thread {
            // A failure is logged when it first happens, when its message changes and then once
            // every 10 minutes (a full disk logged one line per interval: every 60 s by default),
            // and its end once; measured on the monotonic clock (a wall clock set back would
            // have hidden repeats for as long).
            var failure: (message: String, loggedAtMs: UInt64)? = nil
            while compaction.pass({ compact(path: path, keepVersions: keepVersions, keepDays: keepDays, busyTimeoutMs: busyTimeoutMs,
                                            logger: logger, served: served, stopped: stopped, failure: &failure) }) {
                Thread.sleep(forTimeInterval: interval)
            }
        }
        t.name = "compaction"
        t.start()
        return compaction
    }

    /// One compaction pass (see `startCompaction`).
    private static func compact(path: String, keepVersions: Int?, keepDays: Int?, busyTimeoutMs: Int32, logger: Logger,
                                served: () -> CatalogFileIdentity?, stopped: @escaping () -> Bool,
                                failure: inout (message: String, loggedAtMs: UInt64)?) {
        do {
            guard let file = served(), CatalogFileIdentity(path: path) == file else { return }
            let db = try Database(path: path, readOnly: false, busyTimeoutMs: busyTimeoutMs)
            // Renamed over between the look and the open: this connection may be on the new
            // file; it has read nothing yet, and reads nothing.
            guard CatalogFileIdentity(path: path) == file else { return }
            db.stopWhen(everyInstructions: 10_000, stopped)
            if try ChangeCapture.isInstalled(db) {
                let before = try ChangeCapture.state(db)?.oldestVersion
                let r = try ChangeCapture.compact(db, keepVersions: keepVersions, keepDays: keepDays)
                // Also when no change row went with it: resuming from a version before the new
                // oldest is CHANGES_EXPIRED from now on.
                if r.deletedChanges > 0 || r.oldestVersion != before {
                    logger.info("changes_compacted", ["deleted": String(r.deletedChanges), "oldest_version": String(r.oldestVersion)])
                }
            }
            if failure != nil {
                failure = nil
                logger.info("compaction_recovered")
            }
        } catch {
            if stopped() {
                logger.info("compaction_stopped", ["reason": "stop signal; the pass was rolled back"])
                return
            }
            let message = "\(error)"
            if failure == nil || failure?.message != message || monotonicMs() &- failure!.loggedAtMs >= 600_000 {
                logger.warn("compaction_failed", ["error": message])
                failure = (message, monotonicMs())
            }
        }
    }
}

/// The background compaction's passes, one at a time; `finish` waits for the one running and
/// lets no other begin.
final class Compaction: Sendable {
    /// Held for each pass; true once finished.
    private let passes = Mutex<Bool>(false)

    /// Runs `body` as a pass unless finished; false when finished.
    func pass(_ body: () -> Void) -> Bool {
        passes.withLock { finished in
            if finished { return false }
            body()
            return true
        }
    }

    /// Waits for the pass running (a stop signal stops it), then lets no other begin.
    func finish() { passes.withLock { $0 = true } }
}
