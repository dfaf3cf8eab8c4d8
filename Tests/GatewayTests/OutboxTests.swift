import Dispatch
import Testing
@testable import Gateway

@Suite struct OutboxTests {
    func frame(_ n: Int) -> OutboundItem { .message([UInt8](repeating: 0x41, count: n)) }

    @Test func firstPushWakesLaterOnesDoNot() {
        let o = Outbox(connectionID: 1, limit: 1000)
        #expect(o.push(frame(10)) == .wake)
        #expect(o.push(frame(10)) == .queued)
        #expect(o.queuedBytes == 20)
        let (a, more) = o.pop()
        #expect(a != nil && more)
        let (b, more2) = o.pop()
        #expect(b != nil && !more2)
        // Drained: the next push must wake the service thread again.
        #expect(o.push(frame(1)) == .wake)
    }

    @Test func emptyPopClearsTheScheduledFlag() {
        let o = Outbox(connectionID: 1, limit: 1000)
        #expect(o.push(frame(1)) == .wake)
        _ = o.pop()
        #expect(o.pop().item == nil)
        #expect(o.push(frame(1)) == .wake)
    }

    @Test func overflowDropsEverythingAndRefusesMore() {
        let o = Outbox(connectionID: 7, limit: 100)
        #expect(o.push(frame(60)) == .wake)
        // Wakes although already scheduled: a client that does not read is never writeable.
        #expect(o.push(frame(60)) == .overflow)
        #expect(o.overflowed)
        #expect(o.queuedBytes == 0)
        #expect(o.push(frame(1)) == .dropped)
    }

    /// The limit is passed when the backlog goes over it: reaching it exactly still queues
    /// (--max-queued-bytes: "closed with 1008" past it), for one client and for all together.
    @Test func aBacklogExactlyAtTheLimitIsQueued() {
        let o = Outbox(connectionID: 1, limit: 100)
        #expect(o.push(frame(60)) == .wake)
        #expect(o.push(frame(40)) == .queued)
        #expect(o.queuedBytes == 100 && !o.overflowed)
        #expect(o.push(frame(1)) == .overflow)

        let budget = QueueBudget(limit: 50)
        let p = Outbox(connectionID: 2, limit: 1000, budget: budget)
        #expect(p.push(frame(10)) == .wake)
        #expect(p.push(frame(50)) == .queued)
        #expect(!p.overflowed)
        #expect(p.push(frame(1)) == .overflow)
    }

    @Test func oneLargeMessageToAReadingClientIsSent() {
        let o = Outbox(connectionID: 1, limit: 100)
        #expect(o.push(frame(500)) == .wake)
        #expect(!o.overflowed)
    }

    @Test func theSharedBudgetCountsOnlyWhatWaitsBehindEachFirstItem() {
        let budget = QueueBudget(limit: 100)
        // A fan-out: one item in each of many queues costs the budget nothing.
        let many = (0..<50).map { Outbox(connectionID: UInt64($0), limit: 1000, budget: budget) }
        for o in many { #expect(o.push(frame(40)) == .wake) }
        #expect(budget.bytes == 0)
        // Backlogs count, whichever queue they are in.
        #expect(many[0].push(frame(30)) == .queued)
        #expect(many[1].push(frame(30)) == .queued)
        #expect(budget.bytes == 60)
        // Popping the first item makes the next one first: no longer counted.
        _ = many[0].pop()
        #expect(budget.bytes == 30)
        _ = many[0].pop()
        #expect(budget.bytes == 30)
        #expect(many[1].push(frame(20)) == .queued)
        #expect(budget.bytes == 50)
        let (taken, more) = many[1].popFrames(maxBytes: 1000)
        #expect(taken.count == 3 && !more)
        #expect(budget.bytes == 0)
        // A queue that closes gives its share back (its first item, 40, was never counted).
        _ = many[2].push(frame(10))
        _ = many[2].push(frame(10))
        #expect(budget.bytes == 20)
        many[2].close()
        #expect(budget.bytes == 0)
    }

    @Test func aBacklogPassingTheSharedBudgetOverflowsThatQueueOnly() {
        let budget = QueueBudget(limit: 100)
        let a = Outbox(connectionID: 1, limit: 1000, budget: budget)
        let b = Outbox(connectionID: 2, limit: 1000, budget: budget)
        let c = Outbox(connectionID: 3, limit: 1000, budget: budget)
        #expect(a.push(frame(10)) == .wake)
        #expect(a.push(frame(90)) == .queued)  // a's backlog: 90 of the 100
        #expect(b.push(frame(10)) == .wake)
        #expect(b.push(frame(20)) == .overflow)  // b's would make it 110
        #expect(b.overflow == .total)
        #expect(b.push(frame(1)) == .dropped)
        // A client with nothing waiting still gets its message, whatever the others hold.
        #expect(c.push(frame(500)) == .wake)
        #expect(!c.overflowed)
        // Its own limit is told apart from the shared one.
        let d = Outbox(connectionID: 4, limit: 50, budget: budget)
        _ = d.push(frame(10))
        #expect(d.push(frame(45)) == .overflow)
        #expect(d.overflow == .connection)
        // The overflowed queues gave back what they held: only a's backlog is left.
        #expect(budget.bytes == 90)
    }

    @Test func closedOutboxRefuses() {
        let o = Outbox(connectionID: 1, limit: 100)
        _ = o.push(frame(5))
        o.close()
        #expect(o.isEmpty)
        #expect(o.push(frame(1)) == .closed)
    }

    @Test func ringQueueKeepsOrderAcrossCompaction() {
        var q = RingQueue<Int>()
        var expected: [Int] = []
        var got: [Int] = []
        for i in 0..<1000 {
            q.append(i); expected.append(i)
            if i % 3 == 0, let v = q.popFirst() { got.append(v) }
        }
        while let v = q.popFirst() { got.append(v) }
        #expect(got == expected)
        #expect(q.isEmpty)
    }

    /// The circular buffer grows while its head is mid-buffer (items wrapped around its end),
    /// and keeps order through any mix of appends and pops.
    @Test func ringQueueKeepsOrderWhenGrowingWrappedAround() {
        var q = RingQueue<Int>()
        var model: [Int] = []
        var next = 0
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            if Int.random(in: 0..<10, using: &rng) < 6 {
                q.append(next); model.append(next); next += 1
            } else {
                let got = q.popFirst()
                #expect(got == (model.isEmpty ? nil : model.removeFirst()))
            }
            #expect(q.count == model.count)
            #expect(q.first == model.first)
        }
        while let v = q.popFirst() { #expect(v == model.removeFirst()) }
        #expect(model.isEmpty && q.isEmpty)
    }

    /// A subscription's `next` queued on its cohort's shared payload is the same message as one
    /// assembled for it alone, and counts its full size against the queue's limit.
    @Test func sharedPayloadItemIsTheWholeMessage() {
        let payload = Array(#"{"data":{"catalogVersion":{"version":7}}}"#.utf8)
        let item = OutboundItem.result(prefix: Frames.resultPrefix(id: "sub-1", .transport), payload: payload, id: "sub-1", serial: 3)
        let whole = Frames.result(id: "sub-1", payload: payload, .transport)
        #expect(item.frame == whole)
        #expect(item.byteCount == whole.count)
        let o = Outbox(connectionID: 1, limit: whole.count + 1)
        #expect(o.push(item) == .wake)
        #expect(o.queuedBytes == whole.count)
        #expect(o.push(item) == .overflow)  // two no longer fit
    }

    @Test func popFramesTakesLeadingFramesUpToTheByteCap() {
        let o = Outbox(connectionID: 1, limit: 1 << 20)
        for n in [10, 20, 30, 40] { _ = o.push(frame(n)) }
        let (items, more) = o.popFrames(maxBytes: 65)
        // 10 + 20 + 30 = 60 fit; 40 more would pass 65: it stays, in order.
        #expect(items.map(\.frame.count) == [10, 20, 30])
        #expect(more)
        #expect(o.queuedBytes == 40)
        #expect(o.push(frame(1)) == .queued)  // still scheduled: items remain
        let (rest, more2) = o.popFrames(maxBytes: 65)
        #expect(rest.map(\.frame.count) == [40, 1])
        #expect(!more2)
        #expect(o.queuedBytes == 0)
        #expect(o.push(frame(1)) == .wake)  // emptied: the next push wakes again
    }

    @Test func popFramesStopsBeforeACloseOrderAndAnOversizedFrame() {
        let o = Outbox(connectionID: 1, limit: 1 << 20)
        _ = o.push(frame(5))
        _ = o.push(OutboundItem(kind: .close(code: 1001, reason: "bye"), head: [], shared: nil, id: nil, serial: 0, terminal: false))
        _ = o.push(frame(5))
        let (a, moreA) = o.popFrames(maxBytes: 100)
        #expect(a.count == 1 && moreA)
        let (b, moreB) = o.popFrames(maxBytes: 100)
        #expect(b.isEmpty && moreB)  // the close order is left for the WRITEABLE path
        #expect(o.pop().item?.kind == .close(code: 1001, reason: "bye"))

        let big = Outbox(connectionID: 2, limit: 1 << 20)
        _ = big.push(frame(500))
        let (c, moreC) = big.popFrames(maxBytes: 100)
        #expect(c.isEmpty && moreC && big.queuedBytes == 500)
    }

    @Test func wakerCoalescesUntilDrained() {
        let w = Waker()
        w.wake(1); w.wake(2); w.wake(1)
        #expect(w.drain() == [1, 2, 1])
        #expect(w.drain() == [])
    }

    @Test func wakerWaitsForAnnouncedMarksOnly() {
        let w = Waker()
        // Nothing announced: no wait.
        #expect(w.drain(keepDraining: true) == [])
        #expect(!w.waitForMarks(timeoutMs: 1000))
        w.endDrain()
        // Announced: a mark from another thread ends the wait, and the next drain has it.
        w.expect()
        let start = DispatchTime.now()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { w.wake([7, 8]) }
        #expect(w.waitForMarks(timeoutMs: 5000))
        #expect(w.drain(keepDraining: true) == [7, 8])
        // expectDone ends a wait with no marks; then waits stop.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) { w.expectDone() }
        #expect(w.drain(keepDraining: true) == [])
        #expect(w.waitForMarks(timeoutMs: 5000))
        #expect(!w.waitForMarks(timeoutMs: 5000))
        #expect(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds < 4_000_000_000)
        w.endDrain()
        // Marks already there: no wait.
        w.wake(9)
        #expect(w.waitForMarks(timeoutMs: 5000))
        #expect(w.drain() == [9])
    }
}
