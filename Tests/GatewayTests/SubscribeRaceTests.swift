import Foundation
import Synchronization
import Testing
@testable import Gateway
import Resolvers

/// A new catalogVersion subscriber reads its first answer outside the hub's lock; a version the
/// watcher publishes meanwhile goes to the cohort, which the subscriber joins only afterwards.
/// The hub's test seams (`beforeSubscribeExecution`, `afterSubscribeExecution`,
/// `beforeCohortPush`) put commits and file replacements exactly between those steps.
@Suite struct SubscribeRaceTests {
    /// A catalog, its watcher, a worker's session and the catalogVersion subscription.
    final class Race: @unchecked Sendable {
        let path: String
        let hub = SubscriptionHub(waker: Waker(), logger: Logger(level: .error))
        let subscriberSession: CatalogSession
        let op: PreparedOperation
        /// The first thing a hook saw go wrong (hooks cannot record issues themselves).
        let failure = Mutex<String?>(nil)

        init(pollMs: Int = 2_000) throws {
            path = try CatalogFixture.make()
            let session = try CatalogSession(path: path, service: makeTestService(), readOnly: true)
            hub.startWatcher(session: session, intervalMs: pollMs)
            subscriberSession = try CatalogSession(path: path, service: makeTestService(), readOnly: true)
            guard case .ready(let op) = subscriberSession.service.prepare(GraphQLRequest(query: "subscription { catalogVersion { version } }")) else {
                hub.stop()
                throw CatalogError(path: path, message: "the subscription did not prepare")
            }
            self.op = op
        }

        func fail(_ message: String) { failure.withLock { if $0 == nil { $0 = message } } }

        func commit(_ version: Int) {
            do { try CatalogFixture.sqlite(path, "INSERT INTO version VALUES (\(version), 11, 21);") } catch {
                fail("commit \(version): \(error)")
            }
        }

        func waitUntil(_ what: String, _ condition: () -> Bool) {
            let deadline = Date().addingTimeInterval(5)
            while !condition() && Date() < deadline { usleep(500) }
            if !condition() { fail("timed out waiting for \(what)") }
        }

        // The watcher's hold (`beforeCohortPush`): once armed, it stops after executing the
        // cohort for a new generation until released; every push is counted.
        let armed = Atomic<Bool>(false), held = Atomic<Bool>(false), pushed = Atomic<Int>(0)
        let release = DispatchSemaphore(value: 0)

        func installHold() {
            hub.beforeCohortPush = { [self] in
                if armed.exchange(false, ordering: .sequentiallyConsistent) {
                    held.store(true, ordering: .sequentiallyConsistent)
                    _ = release.wait(timeout: .now() + 10)
                }
                pushed.add(1, ordering: .sequentiallyConsistent)
            }
        }

        /// Commits `version` and waits until the watcher has pushed a cohort's answer since.
        func commitPushed(_ version: Int) {
            let p = pushed.load(ordering: .sequentiallyConsistent)
            commit(version)
            waitUntil("version \(version) pushed") { pushed.load(ordering: .sequentiallyConsistent) > p }
        }

        /// Commits `version` and waits until the watcher, having read it for the cohort, is held
        /// before pushing it.
        func commitHeld(_ version: Int) {
            armed.store(true, ordering: .sequentiallyConsistent)
            commit(version)
            waitUntil("the watcher holding version \(version)") { held.load(ordering: .sequentiallyConsistent) }
        }

        /// Lets the held watcher push, and waits until it has.
        func releasePushed(_ version: Int) {
            let p = pushed.load(ordering: .sequentiallyConsistent)
            release.signal()
            waitUntil("version \(version) pushed") { pushed.load(ordering: .sequentiallyConsistent) > p }
        }

        /// After the new subscriber's `subscribe` returned: the hooks off, the watcher let go,
        /// `version` published in its turn; `box` then holds versions in order only, each once,
        /// ending at `version`.
        func expectInOrder(_ box: Outbox, endingAt version: Int, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            hub.beforeSubscribeExecution = nil
            hub.afterSubscribeExecution = nil
            release.signal()
            waitUntil("version \(version) published") { hub.status.version?.version == version }
            usleep(300_000)
            hub.beforeCohortPush = nil
            #expect(failure.withLock { $0 } == nil, sourceLocation: sourceLocation)
            let versions = self.versions(box)
            #expect(versions.last == version, "\(versions)", sourceLocation: sourceLocation)
            #expect(versions == versions.sorted() && Set(versions).count == versions.count, "\(versions)",
                    sourceLocation: sourceLocation)
        }

        /// Subscribes on a new outbox of connection `connection`.
        func subscribe(_ connection: UInt64) -> Outbox {
            let box = Outbox(connectionID: connection, limit: 1 << 20)
            #expect(hub.subscribe(op, id: "1", serial: 1, proto: .transport, outbox: box, handle: OperationHandle(),
                                  limit: 10, session: subscriberSession) == .subscribed)
            return box
        }

        /// The versions queued in `box`, in order.
        func versions(_ box: Outbox) -> [Int] {
            var out: [Int] = []
            while case let (item?, _) = box.pop() {
                let f = String(decoding: item.frame[Frames.headroom...], as: UTF8.self)
                if let r = f.range(of: #""version":[0-9]+"#, options: .regularExpression) { out.append(Int(f[r].dropFirst(10))!) }
            }
            return out
        }
    }

    /// The generation moves during each of the three tries (a commit published after every
    /// execution): the subscriber still ends at the file's version, not one commit behind it
    /// until the next one. Before the fix it was left at version 3 with 4 in the file.
    @Test func aSubscriberWhoseEveryTryRacesACommitEndsAtTheFilesVersion() throws {
        let race = try Race()
        defer { race.hub.stop() }
        let commits = Atomic<Int>(0)
        race.hub.afterSubscribeExecution = {
            // Only during the three tries: commit the next version and wait for the watcher to
            // publish it, so that each try sees the generation move.
            let n = commits.add(1, ordering: .sequentiallyConsistent).newValue
            guard n <= 3 else { return }
            race.commit(n + 1)
            race.waitUntil("version \(n + 1) published") { race.hub.status.version?.version == n + 1 }
        }
        let box = race.subscribe(1)
        race.hub.afterSubscribeExecution = nil
        #expect(race.failure.withLock { $0 } == nil)
        #expect(commits.load(ordering: .sequentiallyConsistent) >= 3)
        let versions = race.versions(box)
        #expect(versions.last == 4, "\(versions)")
        #expect(versions == versions.sorted() && Set(versions).count == versions.count, "\(versions)")
    }

    /// The catalog file is replaced (renamed over) after the worker followed the served file
    /// and while the subscriber reads its first answer: it ends at the new file's version. Before
    /// the fix every try read the old file, and the subscriber kept its version 1 until the next
    /// commit.
    @Test func aSubscriberRacingAReplacedFileEndsAtTheNewFilesVersion() throws {
        let race = try Race(pollMs: 20)
        defer { race.hub.stop() }
        let next = try CatalogFixture.make()
        try CatalogFixture.sqlite(next, "INSERT INTO version VALUES (7, 11, 21);")
        race.hub.follow(race.subscriberSession)
        let calls = Atomic<Int>(0)
        race.hub.afterSubscribeExecution = {
            guard calls.add(1, ordering: .sequentiallyConsistent).newValue == 1 else { return }
            guard rename(next, race.path) == 0 else { return race.fail("rename: errno \(errno)") }
            race.waitUntil("the replacement published") { race.hub.status.version?.version == 7 }
        }
        let box = race.subscribe(1)
        race.hub.afterSubscribeExecution = nil
        #expect(race.failure.withLock { $0 } == nil)
        #expect(race.versions(box) == [7])
    }

    /// The interleaving stop 43's review found: after two tries that saw the generation move,
    /// the watcher starts a generation just as the third try begins, reads version 4 for the
    /// cohort (which another subscriber already has), and a commit of 5 lands before the try
    /// reads: the try reads 5, the watcher pushes 4 only after the new subscriber joined. The
    /// try's answer used to be sent first, so the subscriber saw 5, 4, 5; now it sees versions
    /// in order only, ending at 5.
    @Test func aSubscriberNeverSeesAnOlderVersionAfterANewerOne() throws {
        let race = try Race()
        defer { race.hub.stop() }
        // Another subscriber first: the cohort exists, so the watcher's generations push to it.
        _ = race.subscribe(1)
        race.installHold()
        let before = Atomic<Int>(0), after = Atomic<Int>(0)
        race.hub.afterSubscribeExecution = {
            // Tries 1 and 2: a commit, pushed to the cohort before the next try.
            let n = after.add(1, ordering: .sequentiallyConsistent).newValue
            if n <= 2 { race.commitPushed(n + 1) }
        }
        race.hub.beforeSubscribeExecution = {
            let n = before.add(1, ordering: .sequentiallyConsistent).newValue
            if n == 3 {
                // Try 3: the watcher starts a generation and reads 4 for the cohort, then 5 is
                // committed before the try reads.
                race.commitHeld(4)
                race.commit(5)
            } else if n == 4 {
                // After the subscriber joined: the watcher pushes its 4.
                race.releasePushed(4)
            }
        }
        let box = race.subscribe(2)
        #expect(before.load(ordering: .sequentiallyConsistent) == 4, "the third try saw the generation move")
        race.expectInOrder(box, endingAt: 5)
    }

    /// The same race one execution later (found by the second review of stop 43): after the
    /// third try the subscriber joins and reads once more; a generation that begins during that
    /// read takes the cohort's answer (5) before a commit (6) that the read sees. Sent, the read's
    /// 6 was followed by the watcher's 5, then 6 again. It is dropped now: the subscriber, in
    /// the cohort, gets 5 and then 6 from the watcher.
    @Test func theReadAfterJoiningIsDroppedWhenAGenerationBeganDuringIt() throws {
        let race = try Race()
        defer { race.hub.stop() }
        _ = race.subscribe(1)
        race.installHold()
        let before = Atomic<Int>(0), after = Atomic<Int>(0)
        race.hub.afterSubscribeExecution = {
            // Tries 1 to 3: a commit, pushed to the cohort before the next read.
            let n = after.add(1, ordering: .sequentiallyConsistent).newValue
            if n <= 3 { race.commitPushed(n + 1) }
        }
        race.hub.beforeSubscribeExecution = {
            // The read after joining: the watcher starts a generation and reads 5 for the
            // cohort, then 6 is committed before the read.
            guard before.add(1, ordering: .sequentiallyConsistent).newValue == 4 else { return }
            race.commitHeld(5)
            race.commit(6)
        }
        let box = race.subscribe(2)
        #expect(before.load(ordering: .sequentiallyConsistent) == 4, "the read after joining ran")
        race.expectInOrder(box, endingAt: 6)
    }
}
