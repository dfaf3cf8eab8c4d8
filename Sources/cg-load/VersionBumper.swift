import Foundation
import Resolvers
import Synchronization

/// What the bumper thread and the lws thread share in fan-out mode: per bumped version, its
/// commit time and every subscriber's arrival time.
final class FanoutState: Sendable {
    struct Round {
        var version: Int
        var commitNs: UInt64 = 0
        var arrivals: [UInt64] = []
    }

    struct Summary {
        var lastMs: Double
        var firstMs: Double
        var allMs: [Double]
        var missing: Int
    }

    private struct Shared {
        var rounds: [Round] = []
        var byVersion: [Int: Int] = [:]
        var finished = false
        var failure: String?
    }

    private let expectedCount = Atomic<Int>(Int.max)
    private let shared = Mutex(Shared())

    /// Subscribers every bump must reach (set once they have all subscribed).
    var expected: Int { expectedCount.load(ordering: .acquiring) }
    func setExpected(_ n: Int) { expectedCount.store(n, ordering: .releasing) }

    /// Registers a version before its commit, so early arrivals are kept.
    func expect(version: Int) {
        shared.withLock { s in
            s.byVersion[version] = s.rounds.count
            s.rounds.append(Round(version: version))
        }
    }

    func committed(version: Int, at t: UInt64) {
        shared.withLock { s in if let i = s.byVersion[version] { s.rounds[i].commitNs = t } }
    }

    func received(version: Int, at t: UInt64) {
        shared.withLock { s in if let i = s.byVersion[version] { s.rounds[i].arrivals.append(t) } }
    }

    func received(_ batch: [(version: Int, at: UInt64)]) {
        shared.withLock { s in
            for (version, t) in batch { if let i = s.byVersion[version] { s.rounds[i].arrivals.append(t) } }
        }
    }

    func arrivals(version: Int) -> Int {
        shared.withLock { s in s.byVersion[version].map { s.rounds[$0].arrivals.count } ?? 0 }
    }

    func finish(failure: String?) {
        shared.withLock { s in s.finished = true; s.failure = failure }
    }

    var finished: Bool { shared.withLock { $0.finished } }
    var failure: String? { shared.withLock { $0.failure } }

    /// Per committed round: commit → last and first arrival, and every arrival (ms).
    func rounds() -> [Summary] {
        shared.withLock { s in
            s.rounds.filter { $0.commitNs > 0 && !$0.arrivals.isEmpty }.map { round in
                let ms = round.arrivals.map { Double(Int64(bitPattern: $0 &- round.commitNs)) / 1e6 }
                return Summary(lastMs: ms.max() ?? 0, firstMs: ms.min() ?? 0, allMs: ms,
                               missing: max(0, expected - round.arrivals.count))
            }
        }
    }
}

/// Commits new catalog versions from its own thread and SQLite connection, as another process
/// updating the catalog would.
final class VersionBumper: Sendable {
    let path: String
    let bumps: Int
    let gapMs: Int
    let timeoutSeconds: Double
    let state: FanoutState

    init(path: String, bumps: Int, gapMs: Int, timeoutSeconds: Double, state: FanoutState) {
        self.path = path; self.bumps = bumps; self.gapMs = gapMs; self.timeoutSeconds = timeoutSeconds; self.state = state
    }

    func start() {
        let t = Thread { [self] in
            do {
                try self.runBumps()
                self.state.finish(failure: nil)
            } catch {
                self.state.finish(failure: "\(error)")
            }
        }
        t.name = "version-bumper"
        t.start()
    }

    private func runBumps() throws {
        let db = try Database(path: path, readOnly: false, busyTimeoutMs: 10_000)
        let begin = try db.prepare("BEGIN IMMEDIATE")
        let maxVersion = try db.prepare("SELECT coalesce(max(versionid), 0) FROM version")
        let insert = try db.prepare("INSERT INTO version(versionid, updatecatalogrow, updateassetrow) VALUES(?, '', '')")
        let commit = try db.prepare("COMMIT")
        for _ in 0..<bumps {
            usleep(useconds_t(gapMs * 1000))
            begin.reset(); try begin.run()
            maxVersion.reset()
            let version = (try maxVersion.step() ? Int(maxVersion.int64(0)) : 0) + 1
            state.expect(version: version)
            insert.reset(); insert.bind(version, at: 1); try insert.run()
            commit.reset(); try commit.run()
            state.committed(version: version, at: nowNs())
            let deadline = nowNs() + UInt64(timeoutSeconds * 1e9)
            while state.arrivals(version: version) < state.expected && nowNs() < deadline { usleep(500) }
        }
    }
}
