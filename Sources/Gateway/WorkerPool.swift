import Foundation
import Resolvers

/// Moves a value that is not Sendable to the one thread that will own it from then on.
struct Transfer<T>: @unchecked Sendable {
    let value: T
}

/// A fixed set of threads, each owning one session (for the gateway, one CatalogSession: one
/// SQLite connection), running jobs from per-connection lanes in round-robin order. A lane (one
/// WebSocket, or the HTTP requests of one client address) runs at most `perLaneLimit` jobs at
/// once (or its own limit), so a connection sending heavy queries cannot occupy every worker
/// while small queries from other connections wait.
///
/// Jobs waiting for a worker are bounded (`maxWaiting`, `maxWaitingBytes` for all lanes together,
/// `maxWaitingPerLane` for one): past a bound `submit` refuses the job, so a server offered more
/// work than it can do answers the excess at once instead of holding it in memory for longer
/// and longer. A job on a lane with nothing waiting passes the count bound (unless `strict`):
/// a connection that asks for one thing at a time is not refused because others ask for more.
/// The bytes bound, which is the memory, holds for every job.
///
/// Idle workers wait on their own semaphore and are woken last-in, first-out: when jobs arrive
/// one at a time, the worker that just finished takes the next one, with its CPU caches, its
/// SQLite page cache and its statement caches hot, while the others stay asleep. (A shared
/// condition variable wakes the longest-waiting thread instead; at one query in flight the
/// workers then alternate and every query runs cold — 0.77 vs 0.51 ms per category page.)
public final class WorkerPool<Session>: @unchecked Sendable {
    public typealias Job = @Sendable (Session) -> Void
    /// A job told how long it waited for a worker, in ns (`submitTimed`).
    public typealias TimedJob = @Sendable (Session, _ waitedNs: UInt64) -> Void

    private struct Waiting {
        let job: TimedJob
        /// What it weighs against `maxWaitingBytes` (the request's size).
        let bytes: Int
        /// `submit`'s `token`: what `withdraw` finds it by (0: none).
        let token: UInt64
        /// `busyNs` when it was queued.
        let busyAtQueue: UInt64
    }

    private final class Lane {
        var jobs = RingQueue<Waiting>()
        var running = 0
        var inReady = false
        /// Jobs it may run at once, and have waiting (`submit`'s `running`, `waiting`).
        let limit: Int
        let waitingLimit: Int
        init(limit: Int, waitingLimit: Int) { self.limit = limit; self.waitingLimit = waitingLimit }
    }

    /// What `submit` did with a job.
    public enum Admission: Equatable, Sendable {
        case accepted
        /// Its lane has `maxWaitingPerLane` jobs waiting already.
        case laneFull
        /// The job would pass `maxWaitingBytes`, or `maxWaiting` jobs wait in all lanes together
        /// and the job's lane has one waiting already (or the job is `strict`).
        case poolFull
    }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var lanes: [UInt64: Lane] = [:]
    private var ready = RingQueue<UInt64>()
    private var stopping = false
    private var alive = 0
    /// Jobs submitted and not yet started, in all lanes, and their `bytes`.
    private var waitingJobs = 0
    private var waitingBytes = 0
    /// Workers waiting for work, the most recently idle last.
    private var idle: [Int] = [] {
        didSet { busyClock() }  // without oldValue: modified in place, not copied
    }
    /// Workers taken off `idle` for a job (`wakeOne`) that have not yet taken one (`arrived`),
    /// and which they are. Idle to the busy clock: the scheduler's time to wake a worker (µs,
    /// over a millisecond now and then on a loaded machine) is no wait for a busy one. Counted
    /// busy from the moment it was signalled, a lone request on an idle pool "waited" that long
    /// and, with --max-wait-ms 1, was now and then refused (stop 35's review).
    private var waking = 0 {
        didSet { busyClock() }
    }
    private var isWaking: [Bool]
    /// The nanoseconds during which no worker was idle or on its way, before `allBusyFrom` (set
    /// while none is): what a job waited for a worker is how much this grew while it waited.
    private var allBusyTotal: UInt64 = 0
    private var allBusyFrom: UInt64? = nil

    /// Starts or stops the busy clock as `idle` and `waking` change (under `lock`).
    private func busyClock() {
        if idle.isEmpty && waking == 0 {
            if allBusyFrom == nil { allBusyFrom = monotonicNs() }
        } else if let from = allBusyFrom {
            allBusyTotal &+= monotonicNs() &- from
            allBusyFrom = nil
        }
    }

    /// The most recently idle worker, taken off `idle` to take a job, or nil if none is idle
    /// (under `lock`; the caller signals it). On its way until `arrived`.
    private func wakeOne() -> Int? {
        guard let w = idle.last else { return nil }
        waking += 1  // before it leaves `idle`: the clock does not start in between
        isWaking[w] = true
        idle.removeLast()
        return w
    }

    /// `worker` is no longer on its way: it took a job, went back to `idle` or stops (under `lock`).
    private func arrived(_ worker: Int) {
        guard isWaking[worker] else { return }
        isWaking[worker] = false
        waking -= 1
    }
    /// Workers asked to run `beforeJob` without a job (`touchAll`).
    private var touched: [Bool]

    private let wakeups: [DispatchSemaphore]
    public let perLaneLimit: Int
    public let maxWaiting: Int
    public let maxWaitingBytes: Int
    public let maxWaitingPerLane: Int
    public let count: Int
    private let exited = DispatchSemaphore(value: 0)

    /// Runs on the worker's thread before each job, with its session.
    private let beforeJob: (@Sendable (Session) -> Void)?

    /// Starts one thread per session.
    public init(sessions: [Session], perLaneLimit: Int, maxWaiting: Int = .max, maxWaitingBytes: Int = .max,
                maxWaitingPerLane: Int = .max, name: String = "worker", beforeJob: (@Sendable (Session) -> Void)? = nil) {
        self.beforeJob = beforeJob
        self.perLaneLimit = max(1, perLaneLimit)
        self.maxWaiting = max(1, maxWaiting)
        self.maxWaitingBytes = max(1, maxWaitingBytes)
        self.maxWaitingPerLane = max(1, maxWaitingPerLane)
        self.count = sessions.count
        self.wakeups = sessions.map { _ in DispatchSemaphore(value: 0) }
        self.touched = sessions.map { _ in false }
        self.isWaking = sessions.map { _ in false }
        alive = sessions.count
        for (i, s) in sessions.enumerated() {
            let box = Transfer(value: s)
            let t = Thread { [self] in self.run(worker: i, box.value) }
            t.name = "\(name)-\(i)"
            t.stackSize = 8 << 20
            t.start()
        }
    }

    /// Queues a job on a lane, or refuses it when the waiting jobs are at a bound (see the type).
    /// `bytes`: what the job weighs against `maxWaitingBytes`. A lane made by this call runs up
    /// to `running` jobs at once (default `perLaneLimit`) and holds up to `waiting` waiting
    /// (default `maxWaitingPerLane`). `token`: for `withdraw`.
    @discardableResult
    public func submit(lane id: UInt64, bytes: Int = 0, token: UInt64 = 0, strict: Bool = false, running: Int? = nil,
                       waiting: Int? = nil, _ job: @escaping Job) -> Admission {
        submitTimed(lane: id, bytes: bytes, token: token, strict: strict, running: running, waiting: waiting) { s, _ in job(s) }
    }

    /// `submit` for a job told how long it waited for a worker: the time, since it was queued,
    /// during which every worker was busy. Time spent only behind its own lane's running jobs
    /// (`running`, --max-workers-per-connection) while another worker sat idle is not counted,
    /// nor the time a worker woken for a job takes to come (`waking`).
    @discardableResult
    public func submitTimed(lane id: UInt64, bytes: Int = 0, token: UInt64 = 0, strict: Bool = false, running: Int? = nil,
                            waiting: Int? = nil, _ job: @escaping TimedJob) -> Admission {
        lock.lock()
        if stopping { lock.unlock(); return .accepted }
        let lane: Lane
        if let l = lanes[id] {
            lane = l
        } else {
            lane = Lane(limit: max(1, running ?? perLaneLimit), waitingLimit: max(1, waiting ?? maxWaitingPerLane))
            lanes[id] = lane
        }
        if lane.jobs.count >= lane.waitingLimit {
            lock.unlock()
            return .laneFull
        }
        // The bytes bound holds for every lane (a job larger than it still gets in when nothing
        // waits); the count bound lets in a lane's first.
        if (waitingJobs > 0 && waitingBytes + bytes > maxWaitingBytes)
            || ((strict || !lane.jobs.isEmpty) && waitingJobs >= maxWaiting) {
            if lane.jobs.isEmpty && lane.running == 0 && !lane.inReady { lanes.removeValue(forKey: id) }
            lock.unlock()
            return .poolFull
        }
        lane.jobs.append(Waiting(job: job, bytes: bytes, token: token, busyAtQueue: busyNs(monotonicNs())))
        waitingJobs += 1
        waitingBytes += bytes
        var wake: Int? = nil
        if !lane.inReady && lane.running < lane.limit {
            lane.inReady = true
            ready.append(id)
            wake = wakeOne()
        }
        lock.unlock()
        if let wake { wakeups[wake].signal() }
        return .accepted
    }

    /// Drops the jobs of a lane that have not started (its connection closed).
    public func dropLane(_ id: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        guard let lane = lanes[id] else { return }
        while let w = lane.jobs.popFirst() {
            waitingJobs -= 1
            waitingBytes -= w.bytes
        }
        lane.jobs.removeAll()
        if lane.running == 0 { lanes.removeValue(forKey: id) }
    }

    /// Drops the job submitted with `token` on a lane shared with others if it has not started
    /// (its HTTP request's client went away): it no longer counts as waiting, and its request's
    /// memory is freed now rather than when its turn comes. Scans that lane only.
    public func withdraw(lane id: UInt64, token: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        guard token != 0, let lane = lanes[id] else { return }
        var kept = RingQueue<Waiting>()
        while let w = lane.jobs.popFirst() {
            if w.token == token {
                waitingJobs -= 1
                waitingBytes -= w.bytes
            } else {
                kept.append(w)
            }
        }
        lane.jobs = kept
        if lane.jobs.isEmpty && lane.running == 0 && !lane.inReady { lanes.removeValue(forKey: id) }
    }

    /// Nanoseconds during which no worker was idle or on its way, up to `now` (under `lock`).
    private func busyNs(_ now: UInt64) -> UInt64 {
        allBusyFrom.map { allBusyTotal &+ (now &- $0) } ?? allBusyTotal
    }

    /// Workers waiting for work (for tests).
    var idleWorkers: Int {
        lock.lock()
        defer { lock.unlock() }
        return idle.count
    }

    /// Jobs waiting for a worker in all lanes, and their bytes.
    public var waiting: (jobs: Int, bytes: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (waitingJobs, waitingBytes)
    }

    /// Has every worker run `beforeJob` on its session as soon as it is free — at once when
    /// idle, else right after its current job — without waiting for a job of its own. (The
    /// gateway's workers move to a replaced catalog file this way: `SubscriptionHub.follow`.)
    public func touchAll() {
        lock.lock()
        for i in touched.indices { touched[i] = true }
        let sleeping = idle
        idle.removeAll()
        lock.unlock()
        for w in sleeping { wakeups[w].signal() }
    }

    /// Lets queued jobs finish, then stops the threads and waits for them.
    public func shutdown() {
        lock.lock()
        stopping = true
        let n = alive
        let sleeping = idle
        idle.removeAll()
        lock.unlock()
        for w in sleeping { wakeups[w].signal() }
        for _ in 0..<n { exited.wait() }
    }

    private func run(worker: Int, _ session: Session) {
        lock.lock()
        while true {
            if touched[worker] {
                touched[worker] = false
                arrived(worker)
                lock.unlock()
                beforeJob?(session)
                lock.lock()
                continue
            }
            if let id = ready.popFirst() {
                guard let lane = lanes[id] else { continue }
                lane.inReady = false
                guard let next = lane.jobs.popFirst() else {
                    if lane.running == 0 { lanes.removeValue(forKey: id) }
                    continue
                }
                let job = next.job
                let waited = busyNs(monotonicNs()) &- next.busyAtQueue
                arrived(worker)
                waitingJobs -= 1
                waitingBytes -= next.bytes
                lane.running += 1
                var wake: Int? = nil
                if !lane.jobs.isEmpty && lane.running < lane.limit {
                    lane.inReady = true
                    ready.append(id)
                    wake = wakeOne()
                }
                lock.unlock()
                if let wake { wakeups[wake].signal() }
                beforeJob?(session)
                job(session, waited)
                lock.lock()
                lane.running -= 1
                if lane.jobs.isEmpty {
                    if lane.running == 0 && !lane.inReady { lanes.removeValue(forKey: id) }
                } else if !lane.inReady && lane.running < lane.limit {
                    lane.inReady = true
                    // This worker loops to take it; wake another only if more lanes wait.
                    ready.append(id)
                }
                continue
            }
            if stopping { arrived(worker); break }
            idle.append(worker)
            arrived(worker)  // after: the clock does not start in between
            lock.unlock()
            wakeups[worker].wait()
            lock.lock()
            // Woken by submit/requeue (which removed us from `idle`) or by shutdown.
        }
        alive -= 1
        lock.unlock()
        exited.signal()
    }
}
