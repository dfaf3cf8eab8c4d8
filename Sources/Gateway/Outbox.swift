import CWebSockets
import Dispatch
import Synchronization

/// One frame (or a close order) waiting to be written to a WebSocket.
public struct OutboundItem: Sendable {
    public enum Kind: Sendable, Equatable {
        case frame
        case close(code: UInt16, reason: String)
    }
    public var kind: Kind
    /// LWS_PRE bytes of headroom, then the message text — or, with `shared`, its start.
    public var head: [UInt8]
    /// A subscription's `next` whose payload its whole cohort shares: the message is `head`'s
    /// text, these bytes, then `}`. Queued without a frame of its own (a fan-out to 10,000
    /// allocates and copies nothing per subscriber here); `frame` assembles it when needed.
    public var shared: [UInt8]?
    /// The operation this frame belongs to (nil and 0 for connection-level messages).
    public var id: String?
    public var serial: UInt64
    /// The operation's last message (`complete` or `error`): its id is free once this is written.
    public var terminal: Bool

    /// Headroom and the whole message text.
    public var frame: [UInt8] {
        guard let shared else { return head }
        return Frames.result(prefix: head, payload: shared)
    }

    /// `frame.count`, without assembling it.
    public var byteCount: Int { head.count + (shared.map { $0.count + 1 } ?? 0) }

    public static func message(_ frame: [UInt8]) -> OutboundItem {
        OutboundItem(kind: .frame, head: frame, shared: nil, id: nil, serial: 0, terminal: false)
    }

    public static func operation(_ frame: [UInt8], id: String, serial: UInt64, terminal: Bool) -> OutboundItem {
        OutboundItem(kind: .frame, head: frame, shared: nil, id: id, serial: serial, terminal: terminal)
    }

    /// A `next` of `payload` after a subscription's `Frames.resultPrefix`.
    public static func result(prefix: [UInt8], payload: [UInt8], id: String, serial: UInt64) -> OutboundItem {
        OutboundItem(kind: .frame, head: prefix, shared: payload, id: id, serial: serial, terminal: false)
    }
}

/// A first-in first-out queue: a circular buffer whose capacity is a power of two, doubled when
/// full. Taking the last item leaves the storage as it is (nothing is moved or freed per pop,
/// which a fan-out does once per connection); storage past `keptCapacity` slots is freed once
/// the queue runs empty.
struct RingQueue<Element> {
    fileprivate var slots: [Element?] = []
    fileprivate var head = 0
    private(set) var count = 0
    /// Slots kept allocated while the queue is empty.
    static var keptCapacity: Int { 1024 }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ e: Element) {
        if count == slots.count { grow() }
        slots[(head &+ count) & (slots.count &- 1)] = e
        count += 1
    }

    var first: Element? { count > 0 ? slots[head] : nil }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        var e: Element? = nil
        swap(&e, &slots[head])
        count -= 1
        if count == 0 {
            head = 0
            if slots.count > Self.keptCapacity { slots = [] }
        } else {
            head = (head &+ 1) & (slots.count &- 1)
        }
        return e
    }

    mutating func removeAll() { slots = []; head = 0; count = 0 }

    private mutating func grow() {
        let capacity = Swift.max(1, slots.count * 2)  // one slot first: an idle connection holds one
        var bigger = [Element?](repeating: nil, count: capacity)
        for i in 0..<count { swap(&bigger[i], &slots[(head &+ i) & (slots.count &- 1)]) }
        slots = bigger
        head = 0
    }
}

extension RingQueue where Element == OutboundItem {
    /// The first item's frame size when it is a frame (not a close order), read in place.
    var firstFrameCount: Int? {
        guard count > 0, let item = slots[head], case .frame = item.kind else { return nil }
        return item.byteCount
    }

    /// The first item's size (0 when empty).
    var firstByteCount: Int {
        guard count > 0, let item = slots[head] else { return 0 }
        return item.byteCount
    }
}

/// What every send queue together may hold behind their first items (--max-total-queued-bytes):
/// a bound on the memory of many clients that do not read, each under its own limit.
///
/// A queue's first item is not counted: it is what a client that keeps up has waiting, and a
/// fan-out puts one item in each of 10,000 queues at once. Only items queued behind another
/// are, so a fan-out to clients that read touches the shared counter not at all.
public final class QueueBudget: Sendable {
    public let limit: Int
    private let used = Atomic<Int>(0)

    public init(limit: Int) { self.limit = limit }

    /// Bytes queued behind the first item of each queue, over all queues.
    public var bytes: Int { used.load(ordering: .relaxed) }

    fileprivate func add(_ n: Int) { used.add(n, ordering: .relaxed) }
}

/// The bounded, locked send queue of one WebSocket. Workers and the watcher push; only the lws
/// service thread pops. A client that stops reading fills it past `limit` bytes (or, with a
/// backlog of its own, finds the queues' shared `budget` spent): the queue then drops
/// everything, refuses more, and the service thread closes that client.
public final class Outbox: Sendable {
    public let connectionID: UInt64
    public let limit: Int
    public let budget: QueueBudget?

    /// Which limit a queue that overflowed passed.
    public enum Overflow: Equatable, Sendable {
        /// Its own (`limit`).
        case connection
        /// The shared budget, spent by all queues together.
        case total
    }

    private struct State: ~Copyable {
        var items = RingQueue<OutboundItem>()
        var bytes = 0
        /// The bytes behind the first item, counted in `budget`.
        var charged = 0
        var overflow: Overflow? = nil
        var closed = false
        /// The service thread has been (or will be) told about pending items.
        var scheduled = false
    }
    private let state = Mutex(State())

    public init(connectionID: UInt64, limit: Int, budget: QueueBudget? = nil) {
        self.connectionID = connectionID
        self.limit = limit
        self.budget = budget
    }

    /// After items left the queue: its first item is no longer counted in the budget.
    private func recharge(_ s: inout State) {
        guard let budget else { return }
        let owed = s.items.isEmpty ? 0 : s.bytes - s.items.firstByteCount
        if owed != s.charged {
            budget.add(owed - s.charged)
            s.charged = owed
        }
    }

    /// Drops everything queued (and its share of the budget).
    private func empty(_ s: inout State) {
        s.items.removeAll()
        s.bytes = 0
        if s.charged != 0 {
            budget?.add(-s.charged)
            s.charged = 0
        }
    }

    public enum PushResult: Equatable, Sendable {
        /// Queued; the service thread must be woken for this connection.
        case wake
        /// Queued; the service thread already knows.
        case queued
        /// The queue overflowed just now: the service thread must be woken to close this client.
        case overflow
        /// Dropped: the queue overflowed earlier and the service thread already knows.
        case dropped
        /// The connection is gone.
        case closed
    }

    public func push(_ item: OutboundItem) -> PushResult {
        state.withLock { s in
            if s.closed { return .closed }
            if s.overflow != nil { return .dropped }
            let n = item.byteCount
            // One message larger than the limit is still sent to a client that keeps up.
            if s.bytes > 0 {
                var passed: Overflow? = nil
                if s.bytes + n > limit {
                    passed = .connection
                } else if let budget, budget.bytes + n > budget.limit {
                    passed = .total
                }
                if let passed {
                    s.overflow = passed
                    empty(&s)
                    // Wake even when already scheduled: a client that does not read gets no
                    // WRITEABLE callback, so the service thread must hear about it another way.
                    s.scheduled = true
                    return .overflow
                }
                if let budget {
                    budget.add(n)
                    s.charged += n
                }
            }
            s.items.append(item)
            s.bytes += n
            if s.scheduled { return .queued }
            s.scheduled = true
            return .wake
        }
    }

    /// Takes the next item; `more` tells whether others remain. When the queue runs empty the
    /// next push wakes the service thread again.
    public func pop() -> (item: OutboundItem?, more: Bool) {
        state.withLock { s in
            guard let item = s.items.popFirst() else {
                s.scheduled = false
                return (nil, false)
            }
            s.bytes -= item.byteCount
            recharge(&s)
            let more = !s.items.isEmpty
            if !more { s.scheduled = false }
            return (item, more)
        }
    }

    /// Takes the leading frames while they total at most `maxBytes` (stopping before a close
    /// order or a frame that would pass the limit); `more` tells whether items remain. Used by
    /// the service thread's direct writes (`GatewayServer.drainWakes`).
    public func popFrames(maxBytes: Int) -> (items: [OutboundItem], more: Bool) {
        var out: [OutboundItem] = []
        let (more, _) = popFrames(maxBytes: maxBytes, into: &out)
        return (out, more)
    }

    /// The same into a caller's reusable array, in the same lock also telling whether the
    /// queue has overflowed (then nothing is taken).
    public func popFrames(maxBytes: Int, into out: inout [OutboundItem]) -> (more: Bool, overflowed: Bool) {
        state.withLock { s in
            if s.overflow != nil { return (false, true) }
            var total = 0
            while let n = s.items.firstFrameCount, total + n <= maxBytes, let next = s.items.popFirst() {
                total += n
                s.bytes -= n
                out.append(next)
            }
            if total > 0 { recharge(&s) }
            let more = !s.items.isEmpty
            if !more { s.scheduled = false }
            return (more, false)
        }
    }

    public var isEmpty: Bool { state.withLock { $0.items.isEmpty } }
    public var queuedBytes: Int { state.withLock { $0.bytes } }
    public var overflowed: Bool { state.withLock { $0.overflow != nil } }
    /// Which limit the queue passed, once it overflowed.
    public var overflow: Overflow? { state.withLock { $0.overflow } }
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// The connection closed: drop everything and refuse further pushes.
    public func close() {
        state.withLock { s in
            s.closed = true
            empty(&s)
        }
    }
}

/// The one way other threads reach the lws service thread: they mark a connection dirty and the
/// first mark since the last drain calls `lws_cancel_service`, which makes the service thread
/// run LWS_CALLBACK_EVENT_WAIT_CANCELLED and drain the list.
public final class Waker: Sendable {
    private struct ContextRef: @unchecked Sendable { var context: OpaquePointer? }
    private let context = Mutex(ContextRef(context: nil))
    private struct Dirty: ~Copyable {
        var ids: [UInt64] = []
        /// The service thread is inside `drainWakes` and will drain again before it returns
        /// to poll(): marks need not poke it (each poke costs a poll() pass over every socket).
        var draining = false
        /// The subscription watcher is about to fan out (`expect`): the service thread, woken
        /// ahead, waits in `waitForMarks` instead of going back to poll().
        var expecting = false
        /// The service thread waits on `arrived`.
        var waiting = false
    }
    private let dirty = Mutex(Dirty())
    private let arrived = DispatchSemaphore(value: 0)

    public init() {}

    func attach(_ ctx: OpaquePointer?) { context.withLock { $0.context = ctx } }

    /// Called before lws_context_destroy: later wakes become no-ops.
    func detach() { context.withLock { $0.context = nil } }

    public func wake(_ connectionID: UInt64) {
        wake(connectionID, serviceThreadOnly: false)
    }

    /// `wake` for a mark only the service thread can finish: an HTTP answer, which that
    /// thread writes through lws (at once, or from the exchange's WRITEABLE callback). The
    /// drainer could only ask for that callback and wake the service thread itself, one more
    /// thread hand-off per answer, so the first mark wakes the service thread directly.
    public func wakeServiceThread(_ connectionID: UInt64) {
        wake(connectionID, serviceThreadOnly: true)
    }

    private func wake(_ connectionID: UInt64, serviceThreadOnly: Bool) {
        let (first, signal) = dirty.withLock { d -> (Bool, Bool) in
            d.ids.append(connectionID)
            let signal = d.waiting
            d.waiting = false
            return (d.ids.count == 1 && !d.draining, signal)
        }
        if signal { arrived.signal() }
        if first { serviceThreadOnly ? cancelService() : poke() }
    }

    /// `wake` for several connections with one lock (a fan-out batch).
    public func wake(_ connectionIDs: [UInt64]) {
        guard !connectionIDs.isEmpty else { return }
        let (first, signal) = dirty.withLock { d -> (Bool, Bool) in
            let wasEmpty = d.ids.isEmpty
            d.ids.append(contentsOf: connectionIDs)
            let signal = d.waiting
            d.waiting = false
            return (wasEmpty && !d.draining, signal)
        }
        if signal { arrived.signal() }
        if first { poke() }
    }

    /// The watcher found a new version and is about to push to many subscribers: the service
    /// thread is woken now, so that its poll() pass over every socket (milliseconds at
    /// 10,000) overlaps with the query and the pushes instead of following the first mark.
    /// Pair with `expectDone`.
    public func expect() {
        let pokeNow = dirty.withLock { d -> Bool in
            d.expecting = true
            return d.ids.isEmpty && !d.draining
        }
        if pokeNow { poke() }
    }

    /// Whether a fan-out is announced (`expect` without its `expectDone` yet).
    var isExpecting: Bool { dirty.withLock { $0.expecting } }

    public func expectDone() {
        let signal = dirty.withLock { d -> Bool in
            d.expecting = false
            let signal = d.waiting
            d.waiting = false
            return signal
        }
        if signal { arrived.signal() }
    }

    /// In the service thread's drain loop, once a drain found nothing: while the watcher
    /// `expect`s marks, waits up to `timeoutMs` for one (or for `expectDone`) and returns true
    /// (drain again); otherwise returns false. Keeps `draining` set while it waits, so marks
    /// made meanwhile do not poke.
    func waitForMarks(timeoutMs: Int) -> Bool {
        let wait = dirty.withLock { d -> Bool? in
            if !d.ids.isEmpty { return false }
            guard d.expecting else { return nil }
            d.draining = true
            d.waiting = true
            return true
        }
        guard let wait else { return false }
        if !wait { return true }
        _ = arrived.wait(timeout: .now() + .milliseconds(timeoutMs))
        dirty.withLock { $0.waiting = false }
        return true
    }

    /// The server's drainer (`GatewayServer.drainerLoop`), which takes the marks itself while
    /// the service thread sleeps in poll(): a poke signals it instead of waking that thread,
    /// once `enabled` and with at least `minimumSockets` open. Read without a lock: a poke is
    /// on every answer's path, and a contended lock there costs a futex sleep.
    final class DrainerGate: Sendable {
        let enabled = Atomic<Bool>(false)
        let sockets = Atomic<Int>(0)
        /// `GatewayOptions.drainerMinConnections`, set when the drainer starts.
        let minimumSockets = Atomic<Int>(Int.max)
        let signal = DispatchSemaphore(value: 0)
    }
    let drainer = DrainerGate()

    /// Gets the marks taken: by the drainer when it is on, else by the service thread.
    public func poke() {
        if drainer.enabled.load(ordering: .relaxed)
            && drainer.sockets.load(ordering: .relaxed) >= drainer.minimumSockets.load(ordering: .relaxed) {
            drainer.signal.signal()
            return
        }
        cancelService()
    }

    /// Wakes the service thread (lws_cancel_service: it runs LWS_CALLBACK_EVENT_WAIT_CANCELLED).
    func cancelService() {
        context.withLock { if let c = $0.context { lws_cancel_service(c) } }
    }

    func drain() -> [UInt64] {
        dirty.withLock { d in
            let out = d.ids
            d.ids.removeAll(keepingCapacity: true)
            return out
        }
    }

    /// The service thread's drain loop: takes the marks and, while `keepDraining`, promises to
    /// come back for later ones without a poke. Once it finds none (or stops looping), later
    /// marks poke again.
    func drain(keepDraining: Bool) -> [UInt64] {
        dirty.withLock { d in
            let out = d.ids
            d.ids.removeAll(keepingCapacity: true)
            d.draining = keepDraining && !out.isEmpty
            return out
        }
    }

    /// Ends a drain loop that stops with marks possibly pending: pokes when there are any.
    func endDrain() {
        let pending = dirty.withLock { d -> Bool in
            d.draining = false
            return !d.ids.isEmpty
        }
        if pending { poke() }
    }
}

/// Shared between the service thread (which may cancel it) and the worker running it.
public final class OperationHandle: Sendable {
    private let flags = Atomic<UInt8>(0)
    public init() {}
    public var cancelled: Bool { flags.load(ordering: .sequentiallyConsistent) & 1 != 0 }
    public func cancel() { flags.bitwiseOr(1, ordering: .sequentiallyConsistent) }
    /// Set by the worker once the operation became a live subscription.
    public var streaming: Bool { flags.load(ordering: .sequentiallyConsistent) & 2 != 0 }
    public func markStreaming() { flags.bitwiseOr(2, ordering: .sequentiallyConsistent) }
}
