import Foundation
import Resolvers

/// Moves a value that is not Sendable to the one thread that will own it from then on.
struct Transfer<T>: @unchecked Sendable {
    let value: T
}

/// A fixed set of threads, each owning one CatalogSession (one SQLite connection), running jobs
/// from per-connection lanes in round-robin order. A lane (one WebSocket or HTTP request) runs at
/// most `perLaneLimit` jobs at once, so a connection sending heavy queries cannot occupy every
/// worker while small queries from other connections wait.
public final class WorkerPool: @unchecked Sendable {
    public typealias Job = @Sendable (CatalogSession) -> Void

    private final class Lane {
        var jobs = RingQueue<Job>()
        var running = 0
        var inReady = false
    }

    private let cond = NSCondition()
    // Guarded by `cond`.
    private var lanes: [UInt64: Lane] = [:]
    private var ready = RingQueue<UInt64>()
    private var stopping = false
    private var alive = 0

    public let perLaneLimit: Int
    public let count: Int
    private let exited = DispatchSemaphore(value: 0)

    /// Runs on the worker's thread before each job, with its session.
    private let beforeJob: (@Sendable (CatalogSession) -> Void)?

    /// Starts one thread per session.
    public init(sessions: [CatalogSession], perLaneLimit: Int, name: String = "worker",
                beforeJob: (@Sendable (CatalogSession) -> Void)? = nil) {
        self.beforeJob = beforeJob
        self.perLaneLimit = max(1, perLaneLimit)
        self.count = sessions.count
        alive = sessions.count
        for (i, s) in sessions.enumerated() {
            let box = Transfer(value: s)
            let t = Thread { [self] in self.run(box.value) }
            t.name = "\(name)-\(i)"
            t.stackSize = 8 << 20
            t.start()
        }
    }

    public func submit(lane id: UInt64, _ job: @escaping Job) {
        cond.lock()
        defer { cond.unlock() }
        if stopping { return }
        let lane: Lane
        if let l = lanes[id] { lane = l } else { lane = Lane(); lanes[id] = lane }
        lane.jobs.append(job)
        if !lane.inReady && lane.running < perLaneLimit {
            lane.inReady = true
            ready.append(id)
            cond.signal()
        }
    }

    /// Drops the jobs of a lane that have not started (its connection closed).
    public func dropLane(_ id: UInt64) {
        cond.lock()
        defer { cond.unlock() }
        guard let lane = lanes[id] else { return }
        lane.jobs.removeAll()
        if lane.running == 0 { lanes.removeValue(forKey: id) }
    }

    /// Jobs queued or running, over all lanes.
    public var pendingJobs: Int {
        cond.lock()
        defer { cond.unlock() }
        return lanes.values.reduce(0) { $0 + $1.jobs.count + $1.running }
    }

    /// Lets queued jobs finish, then stops the threads and waits for them.
    public func shutdown() {
        cond.lock()
        stopping = true
        let n = alive
        cond.broadcast()
        cond.unlock()
        for _ in 0..<n { exited.wait() }
    }

    private func run(_ session: CatalogSession) {
        cond.lock()
        while true {
            if let id = ready.popFirst() {
                guard let lane = lanes[id] else { continue }
                lane.inReady = false
                guard let job = lane.jobs.popFirst() else {
                    if lane.running == 0 { lanes.removeValue(forKey: id) }
                    continue
                }
                lane.running += 1
                if !lane.jobs.isEmpty && lane.running < perLaneLimit {
                    lane.inReady = true
                    ready.append(id)
                    cond.signal()
                }
                cond.unlock()
                beforeJob?(session)
                job(session)
                cond.lock()
                lane.running -= 1
                if lane.jobs.isEmpty {
                    if lane.running == 0 && !lane.inReady { lanes.removeValue(forKey: id) }
                } else if !lane.inReady && lane.running < perLaneLimit {
                    lane.inReady = true
                    ready.append(id)
                    cond.signal()
                }
                continue
            }
            if stopping { break }
            cond.wait()
        }
        alive -= 1
        cond.unlock()
        exited.signal()
    }
}
