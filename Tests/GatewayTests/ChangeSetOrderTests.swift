import Testing
@testable import Gateway

/// SYNC.md: "Versions in successive sets strictly increase." Two paths may answer one
/// catalogChanges subscriber the same version — its first set (from `sinceVersion`) and the
/// watcher's catch-up of the feeds — and only the first of them is sent.
@Suite struct ChangeSetOrderTests {
    func subscriber() -> SubscriptionHub.Subscriber {
        SubscriptionHub.Subscriber(key: .init(connection: 1, serial: 1), id: "1", proto: .transport,
                                   outbox: Outbox(connectionID: 1, limit: 1 << 20))
    }

    @Test func aSetIsSentOnlyWhenItsVersionIsNewerThanTheLastSent() {
        let sub = subscriber()
        // Nothing sent yet: whatever comes first is sent.
        #expect(sub.takesChangeSet(upTo: 5))
        sub.lastVersion = 5
        sub.lastPayload = Array("{}".utf8)
        #expect(!sub.takesChangeSet(upTo: 5))
        #expect(!sub.takesChangeSet(upTo: 4))
        #expect(sub.takesChangeSet(upTo: 6))
    }
}
