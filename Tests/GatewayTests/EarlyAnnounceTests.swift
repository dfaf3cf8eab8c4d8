import Foundation
import Synchronization
import Testing
@testable import Gateway
import Resolvers

/// A commit hint (inotify) announces the fan-out to the service thread before the watcher has
/// settled and read, when enough subscribers are live, and the announcement always ends with
/// the check that follows (a leaked one would make the service thread wait on every wake-up).
@Suite struct EarlyAnnounceTests {
    /// `count` catalogVersion subscribers on outboxes of their own.
    func subscribe(_ hub: SubscriptionHub, _ session: CatalogSession, count: Int) throws -> [Outbox] {
        guard case .ready(let op) = session.service.prepare(GraphQLRequest(query: "subscription { catalogVersion { version } }")) else {
            Issue.record("the subscription did not prepare")
            return []
        }
        var boxes: [Outbox] = []
        for i in 0..<count {
            let box = Outbox(connectionID: UInt64(i + 1), limit: 1 << 20)
            let r = hub.subscribe(op, id: "1", serial: 1, proto: .transport, outbox: box, handle: OperationHandle(),
                                  limit: 10, session: session)
            #expect(r == .subscribed)
            boxes.append(box)
        }
        return boxes
    }

    /// The payload text of every frame queued in `box`.
    func frames(_ box: Outbox) -> [String] {
        var out: [String] = []
        while case let (item?, _) = box.pop() { out.append(String(decoding: item.frame[Frames.headroom...], as: UTF8.self)) }
        return out
    }

    /// Whether `waker` was seen announcing while `body` ran and for `seconds` after it.
    func observe(_ waker: Waker, seconds: Double, _ body: () throws -> Void) rethrows -> Bool {
        let seen = Atomic<Bool>(false)
        let done = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)
        let t = Thread {
            let deadline = Date().addingTimeInterval(60)
            while !done.load(ordering: .sequentiallyConsistent) && Date() < deadline {
                if waker.isExpecting { seen.store(true, ordering: .sequentiallyConsistent) }
                usleep(50)
            }
            finished.signal()
        }
        t.start()
        defer { done.store(true, ordering: .sequentiallyConsistent); finished.wait() }
        try body()
        usleep(UInt32(seconds * 1_000_000))
        return seen.load(ordering: .sequentiallyConsistent)
    }

    /// A subscriber's first catalogVersion is the version in the file when it subscribes, not
    /// the watcher's last (which reads a commit only a poll after it returned): a client that
    /// has just had version 2 from a query never sees 1 next. Each is sent once.
    @Test func aNewSubscriberStartsFromTheFileNotTheWatchersLastRead() throws {
        let path = try CatalogFixture.make()
        let session = try CatalogSession(path: path, service: makeTestService(), readOnly: true)
        let hub = SubscriptionHub(waker: Waker(), logger: Logger(level: .error))
        hub.startWatcher(session: session, intervalMs: 2_000)
        defer { hub.stop() }
        let subscriberSession = try CatalogSession(path: path, service: makeTestService(), readOnly: true)
        guard case .ready(let op) = subscriberSession.service.prepare(GraphQLRequest(query: "subscription { catalogVersion { version } }")) else {
            Issue.record("the subscription did not prepare")
            return
        }
        func subscribe(_ connection: UInt64) -> Outbox {
            let box = Outbox(connectionID: connection, limit: 1 << 20)
            #expect(hub.subscribe(op, id: "1", serial: 1, proto: .transport, outbox: box, handle: OperationHandle(),
                                  limit: 10, session: subscriberSession) == .subscribed)
            return box
        }
        func versions(_ box: Outbox) -> [String] {
            frames(box).compactMap { f in f.range(of: #""version":[0-9]+"#, options: .regularExpression).map { String(f[$0]) } }
        }
        let first = subscribe(1)
        for version in 2...6 {
            try CatalogFixture.sqlite(path, "INSERT INTO version VALUES (\(version), 11, 21);")
            // At once, before the watcher has settled and read the commit.
            #expect(versions(subscribe(UInt64(version))) == [#""version":\#(version)"#])
        }
        let deadline = Date().addingTimeInterval(5)
        while hub.status.version?.version != 6 && Date() < deadline { usleep(10_000) }
        usleep(300_000)
        let seen = versions(first)
        #expect(seen.first == #""version":1"# && seen.last == #""version":6"# && Set(seen).count == seen.count, "\(seen)")
    }

    @Test(arguments: [(SubscriptionHub.announceFanout, true), (SubscriptionHub.announceFanout - 1, false)])
    func aCommitHintAnnouncesOnlyWithManySubscribers(subscribers: Int, announces: Bool) throws {
        let path = try CatalogFixture.make()
        let session = try CatalogSession(path: path, service: makeTestService(), readOnly: true)
        let waker = Waker()
        let hub = SubscriptionHub(waker: waker, logger: Logger(level: .error))
        // A long poll interval: only the commit's hint makes the watcher look.
        hub.startWatcher(session: session, intervalMs: 2_000)
        defer { hub.stop() }
        let subscriberSession = try CatalogSession(path: path, service: makeTestService(), readOnly: true)
        let boxes = try subscribe(hub, subscriberSession, count: subscribers)
        #expect(hub.subscriberCount == subscribers)
        #expect(!waker.isExpecting)

        // A commit that leaves the version as it is: no fan-out follows it, so only the early
        // announcement can set the flag. The watcher does read it (data_version moves).
        let seen = try observe(waker, seconds: 0.5) {
            try CatalogFixture.sqlite(path, "UPDATE mfg SET Manufacturer = 'ARRI Group' WHERE mfgid = 1;")
        }
        #expect(seen == announces)
        #expect(!waker.isExpecting)
        #expect(hub.status.version?.version == 1)

        // A version commit: delivered to every subscriber, and the announcement ends with it.
        try CatalogFixture.sqlite(path, "INSERT INTO version VALUES (2, 11, 21);")
        let deadline = Date().addingTimeInterval(5)
        while hub.status.version?.version != 2 && Date() < deadline { usleep(10_000) }
        #expect(hub.status.version?.version == 2)
        usleep(200_000)
        #expect(!waker.isExpecting)
        let last = boxes.map { frames($0).last ?? "" }
        #expect(last.filter { $0.contains("\"version\":2") }.count == subscribers, "\(last.prefix(2))")
    }
}
