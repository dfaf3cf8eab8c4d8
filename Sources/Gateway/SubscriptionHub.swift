import Foundation
import Resolvers
import Schema
import Synchronization

/// Live subscriptions, grouped in cohorts of equal operations (PreparedOperation.cacheKey), and
/// the one watcher thread that notices commits.
///
/// The watcher owns its own CatalogSession and checks `PRAGMA data_version` as soon as a writer
/// touches the catalog's files (inotify, `CommitSignal`) and at least every poll interval (one
/// cheap statement, whatever the number of subscribers). When it changes it reads the
/// catalog version; when that changed it executes each cohort's operation once and fans the
/// bytes out to every subscriber of the cohort. A subscriber never gets the same payload twice
/// in a row, and never an older generation after a newer one.
///
/// catalogVersion cohorts (one cheap read each) are answered first, then the catalogChanges
/// feeds, cheapest first. A writer committing again while the feeds are answered interrupts
/// them after the feed at work: the next version's catalogVersion subscribers are answered,
/// then the feeds left behind (before the others), up to the newest version in one set each.
public final class SubscriptionHub: @unchecked Sendable {
    public struct Key: Hashable, Sendable {
        public let connection: UInt64
        public let serial: UInt64
    }

    final class Subscriber {
        let key: Key
        let id: String
        let proto: WireProtocol
        let outbox: Outbox
        /// Its result frames up to the payload (`Frames.resultPrefix`).
        let framePrefix: [UInt8]
        var lastGeneration: UInt64 = 0
        var lastPayload: [UInt8]? = nil
        /// catalogChanges: the version of the last set sent (nil while the first is computed),
        /// and the catalog file that version is one of (the catalog may be replaced on disk).
        var lastVersion: Int? = nil
        var lastFile: CatalogFileIdentity? = nil
        init(key: Key, id: String, proto: WireProtocol, outbox: Outbox) {
            self.key = key; self.id = id; self.proto = proto; self.outbox = outbox
            framePrefix = Frames.resultPrefix(id: id, proto)
        }
        /// catalogChanges: whether a set up to `version` is news to this subscriber. Versions
        /// in successive sets strictly increase (SYNC.md): a set no newer than the last one sent
        /// is dropped — the first set of a subscription with `sinceVersion` and the watcher's
        /// catch-up of the feeds may both answer the same version.
        func takesChangeSet(upTo version: Int) -> Bool {
            guard let last = lastVersion, lastPayload != nil else { return true }
            return version > last
        }
    }

    final class Cohort {
        let operation: PreparedOperation
        var subscribers: [Key: Subscriber] = [:]
        /// catalogChanges: what bringing its subscribers up to date took the last time, and
        /// since when they have been behind (0: not behind). The watcher takes the feeds left
        /// behind longest first, then the cheapest.
        var feedCostNs: UInt64 = 0
        var feedBehindSince: UInt64 = 0
        init(operation: PreparedOperation) { self.operation = operation }
    }

    private let lock = NSLock()
    // Guarded by `lock`.
    /// By document and variables, compared by their bytes (`ExactString`).
    private var cohorts: [ExactString: Cohort] = [:]
    private var cohortOf: [Key: ExactString] = [:]
    /// Per connection, the serials of its live subscriptions (so closing one of 10,000
    /// connections finds its keys without walking — and copying — `cohortOf`).
    private var perConnection: [UInt64: [UInt64]] = [:]
    private var generation: UInt64 = 1
    private var currentVersion: CatalogVersionValue? = nil
    private var watcherError: String? = nil
    private var stopping = false
    /// The running watcher's signal, which `stop` interrupts.
    private var watcherSignal: CommitSignal? = nil
    /// Set once the server's --shutdown-timeout has passed (`abandon`): executions still running
    /// stop at SQLite's next progress check, and nothing more is sent.
    private let abandoned = Atomic<Bool>(false)
    /// Set by `abandon` (the shutdown deadline): every SQL statement the hub or a worker runs
    /// stops at SQLite's next progress check.
    var isAbandoned: Bool { abandoned.load(ordering: .sequentiallyConsistent) }
    /// The `cancelled` of every execution the hub runs.
    private var abandonedCheck: () -> Bool { { [unowned self] in self.isAbandoned } }

    /// The catalog file the watcher reads; workers follow it (`follow`) before each job.
    private let servedFile = Mutex<CatalogFileIdentity?>(nil)
    /// The watcher's last read of the catalog timed out on another process's write lock: until
    /// its next read succeeds, queries wait `lockedBusyTimeoutMs` for that lock, not the full
    /// busy timeout each (one after another on the workers, the last of many waiting for all).
    private let lockedOut = Atomic<Bool>(false)
    static let lockedBusyTimeoutMs: Int32 = 100

    private let waker: Waker
    private let logger: Logger
    private let stopped = DispatchSemaphore(value: 0)
    private var watcherRunning = false

    public init(waker: Waker, logger: Logger) {
        self.waker = waker
        self.logger = logger
    }

    /// The catalog version the watcher saw last, or the error that stopped it from reading one.
    public var status: (version: CatalogVersionValue?, error: String?) {
        lock.lock(); defer { lock.unlock() }
        return (currentVersion, watcherError)
    }

    /// The catalog file the server answers from (the watcher moves it to a replacement once it
    /// has opened and prepared it; a refused replacement leaves it on the file before).
    public var servedFileIdentity: CatalogFileIdentity? { servedFile.withLock { $0 } }

    public var subscriberCount: Int {
        lock.lock(); defer { lock.unlock() }
        return cohortOf.count
    }

    public enum SubscribeResult: Equatable, Sendable {
        case subscribed, tooMany, gone
    }

    /// Registers a subscriber and sends it the current value at once, executed on the caller's
    /// (worker's) session.
    public func subscribe(_ operation: PreparedOperation, id: String, serial: UInt64, proto: WireProtocol,
                          outbox: Outbox, handle: OperationHandle, limit: Int,
                          session: CatalogSession) -> SubscribeResult {
        let key = Key(connection: outbox.connectionID, serial: serial)
        let sub = Subscriber(key: key, id: id, proto: proto, outbox: outbox)
        lock.lock()
        if handle.cancelled || outbox.isClosed || stopping {
            lock.unlock()
            return .gone
        }
        if perConnection[key.connection]?.count ?? 0 >= limit {
            lock.unlock()
            return .tooMany
        }
        let cohortKey = ExactString(operation.cacheKey)
        func cohortLocked() -> Cohort {
            if let c = cohorts[cohortKey] { return c }
            let c = Cohort(operation: operation)
            cohorts[cohortKey] = c
            return c
        }
        cohortOf[key] = cohortKey
        perConnection[key.connection, default: []].append(key.serial)
        if let feed = operation.changeFeed {
            cohortLocked().subscribers[key] = sub
            lock.unlock()
            return subscribeFeed(operation, feed: feed, sub, session: session)
        }
        // Executed for every new subscriber, never the cohort's last answer: the watcher reads a
        // commit a poll (or, behind a writer's lock, up to a second) after it returned, so that
        // answer could be older than one the client has just had from a query. The watcher's
        // next answer, the same bytes, is then not sent again (`pushLocked`). The answer goes
        // out under the generation current before and after it was read: a generation begun
        // meanwhile may have read an older version, which would follow this answer (retried
        // up to three times). It joins its cohort only then, with this answer: the watcher's
        // answer of a generation begun before it, which may be older, is not pushed to it first.
        /// One read of the answer (outside the lock). The watcher may have moved to a replaced
        /// catalog file since the worker followed it before this job (it publishes the file
        /// first, then the generation): each read is of the file a generation read just before
        /// belongs to.
        func read() -> ExecutionResult {
            follow(session)
            beforeSubscribeExecution?()
            defer { afterSubscribeExecution?() }
            return session.execute(operation, cancelled: abandonedCheck)
        }
        var gen = generation
        var result: ExecutionResult
        var tries = 0
        while true {
            lock.unlock()
            result = read()
            tries += 1
            lock.lock()
            if isAbandoned { lock.unlock(); return .gone }
            if generation == gen || tries == 3 { break }
            gen = generation
        }
        // Completed or closed meanwhile: `removeLocked` took it out of `cohortOf`.
        guard cohortOf[key] != nil else {
            lock.unlock()
            return .subscribed
        }
        cohortLocked().subscribers[key] = sub
        if generation == gen {
            deliverLocked(sub, generation: gen, payload: result.json)
        } else {
            // The generation still moved during the last try: a version published then, before
            // the subscriber was in its cohort, may be newer than that answer, and would reach
            // it only with the next commit. Nor is that answer sent: the watcher may still push
            // the cohort an older one under a later generation (read before the commit this
            // answer saw), which would then follow it. In the cohort now, the subscriber misses
            // no later generation; one more execution covers the ones before. It is sent under
            // the generation current before it, unless the watcher has sent that generation's
            // answer first, and only if no generation began meanwhile: that one's answer, read
            // perhaps before a commit this execution saw, reaches the subscriber (in the cohort
            // by then) afterwards, and would be older.
            let joined = generation
            lock.unlock()
            let again = read()
            lock.lock()
            if !isAbandoned && cohortOf[key] != nil && generation == joined {
                deliverLocked(sub, generation: joined, payload: again.json)
            }
        }
        lock.unlock()
        return .subscribed
    }

    /// Tests only: run before and after each execution of a new catalogVersion subscriber's
    /// answer, outside the lock (to move the generation in between).
    var beforeSubscribeExecution: (() -> Void)? = nil
    var afterSubscribeExecution: (() -> Void)? = nil
    /// Tests only: runs on the watcher after it executed a catalogVersion cohort for a new
    /// generation and before it pushes the answer to the cohort's subscribers (set from the
    /// test's thread while the watcher runs, hence the mutex).
    var beforeCohortPush: (@Sendable () -> Void)? {
        get { cohortPushHook.withLock { $0 } }
        set { cohortPushHook.withLock { $0 = newValue } }
    }
    private let cohortPushHook = Mutex<(@Sendable () -> Void)?>(nil)

    // MARK: catalogChanges feeds

    /// A catalogChanges subscriber: with sinceVersion, the set for (since, current] at once;
    /// without, nothing until the next version. Afterwards the watcher answers
    /// (lastVersion, new] for each group of subscribers at the same lastVersion.
    private func subscribeFeed(_ operation: PreparedOperation, feed: PreparedOperation.ChangeFeed,
                               _ sub: Subscriber, session: CatalogSession) -> SubscribeResult {
        guard let since = feed.since else {
            // "From the next version on": the version current now, read from the file. The
            // watcher's can be a poll behind a commit that the client saw return before it
            // subscribed, which would then come as this subscriber's first set.
            let read = (try? session.catalogVersion())?.version
            lock.lock()
            let known = currentVersion?.version
            lock.unlock()
            let start = max(read ?? 0, known ?? 0)
            lock.lock()
            sub.lastVersion = start
            sub.lastFile = session.file
            lock.unlock()
            catchUp(operation, sub, session: session)
            return .subscribed
        }
        let result = session.execute(operation, subscriptionSince: since, cancelled: abandonedCheck)
        lock.lock()
        let alive = deliverFeedLocked(sub, result: result, after: since, file: session.file)
        lock.unlock()
        if alive { catchUp(operation, sub, session: session) }
        return .subscribed
    }

    /// Answers versions that appeared while the subscriber was being set up.
    private func catchUp(_ operation: PreparedOperation, _ sub: Subscriber, session: CatalogSession) {
        while true {
            lock.lock()
            guard cohortOf[sub.key] != nil, let last = sub.lastVersion,
                  let current = currentVersion?.version, current > last else {
                lock.unlock()
                return
            }
            lock.unlock()
            let result = session.execute(operation, subscriptionSince: last, cancelled: abandonedCheck)
            lock.lock()
            let alive = sub.lastVersion == last ? deliverFeedLocked(sub, result: result, after: last, file: session.file) : true
            lock.unlock()
            if !alive { return }
        }
    }

    /// Sends one change set; an error (CHANGES_EXPIRED, ...) is sent and ends the subscription.
    /// Returns false when the subscription ended.
    private func deliverFeedLocked(_ sub: Subscriber, result: ExecutionResult, after last: Int,
                                   file: CatalogFileIdentity?) -> Bool {
        guard cohortOf[sub.key] != nil, !isAbandoned else { return false }
        // The subscribers of a group share the set's bytes until each is written.
        let item = OutboundItem.result(prefix: sub.framePrefix, payload: result.json, id: sub.id, serial: sub.key.serial)
        if !result.errors.isEmpty || result.changeSetVersion == nil {
            _ = sub.outbox.push(item)
            let done = Frames.encode(.complete(id: sub.id), sub.proto)
            _ = sub.outbox.push(.operation(done, id: sub.id, serial: sub.key.serial, terminal: true))
            waker.wake(sub.outbox.connectionID)
            removeLocked(sub.key)
            return false
        }
        let version = result.changeSetVersion ?? last
        guard sub.takesChangeSet(upTo: version) else { return true }
        sub.lastVersion = version
        sub.lastFile = file
        sub.lastPayload = result.json
        switch sub.outbox.push(item) {
        case .wake, .overflow: waker.wake(sub.outbox.connectionID)
        case .queued, .dropped, .closed: break
        }
        return true
    }

    /// Brings every catalogChanges subscriber behind `version` up to it: one execution per
    /// (feed, lastVersion) group; a subscriber whose last version is one of another catalog
    /// file (replaced on disk) gets CHANGES_EXPIRED, whatever the numbers. The feeds left
    /// behind longest go first, then the cheapest (what each took the last time). Stops early
    /// when a writer commits again (`signal`), so that the next version's catalogVersion
    /// subscribers are not kept waiting behind heavy feeds; the feeds not reached keep their
    /// place at the front and are answered up to the newest version. Returns true when none is
    /// left behind `version`.
    private func advanceFeeds(to version: Int, session: CatalogSession, signal: CommitSignal) -> Bool {
        struct Group: Hashable { let last: Int; let lost: Bool }
        let file = session.file
        lock.lock()
        let now = monotonicNs()
        let feeds = cohorts.values.filter { $0.operation.changeFeed != nil }
        for cohort in feeds where cohort.feedBehindSince == 0 { cohort.feedBehindSince = now }
        let order = feeds.sorted { ($0.feedBehindSince, $0.feedCostNs) < ($1.feedBehindSince, $1.feedCostNs) }
        lock.unlock()
        for (i, cohort) in order.enumerated() {
            let start = monotonicNs()
            lock.lock()
            var groups: [Group: [Subscriber]] = [:]
            for sub in cohort.subscribers.values {
                guard let last = sub.lastVersion else { continue }
                let lost = sub.lastFile != file
                if lost || last < version { groups[Group(last: last, lost: lost), default: []].append(sub) }
            }
            if groups.isEmpty { cohort.feedBehindSince = 0 }
            lock.unlock()
            if groups.isEmpty { continue }
            for (group, subs) in groups.sorted(by: { $0.key.last < $1.key.last }) {
                let result = session.execute(cohort.operation, subscriptionSince: group.last, historyLost: group.lost,
                                             cancelled: abandonedCheck)
                lock.lock()
                for sub in subs where sub.lastVersion == group.last {
                    _ = deliverFeedLocked(sub, result: result, after: group.last, file: file)
                }
                lock.unlock()
            }
            lock.lock()
            cohort.feedCostNs = monotonicNs() &- start
            cohort.feedBehindSince = 0
            let stop = stopping || isAbandoned
            lock.unlock()
            if i + 1 < order.count && (stop || signal.pending()) {
                logger.debug("catalog_feeds_interrupted", ["version": String(version), "left": String(order.count - i - 1)])
                return false
            }
        }
        return true
    }

    public func unsubscribe(connection: UInt64, serial: UInt64) {
        lock.lock()
        removeLocked(Key(connection: connection, serial: serial))
        lock.unlock()
    }

    public func removeConnection(_ connection: UInt64) {
        lock.lock()
        if let serials = perConnection[connection] {
            for serial in serials { removeLocked(Key(connection: connection, serial: serial)) }
        }
        lock.unlock()
    }

    private func removeLocked(_ key: Key) {
        guard let ck = cohortOf.removeValue(forKey: key) else { return }
        if let c = cohorts[ck] {
            c.subscribers.removeValue(forKey: key)
            if c.subscribers.isEmpty { cohorts.removeValue(forKey: ck) }
        }
        if var serials = perConnection[key.connection] {
            serials.removeAll { $0 == key.serial }
            if serials.isEmpty { perConnection.removeValue(forKey: key.connection) } else { perConnection[key.connection] = serials }
        }
    }

    private func deliverLocked(_ sub: Subscriber, generation gen: UInt64, payload: [UInt8]) {
        if pushLocked(sub, generation: gen, payload: payload) { waker.wake(sub.outbox.connectionID) }
    }

    /// Queues the payload for `sub` unless it has it (or a newer one); returns true when the
    /// service thread must be woken for its connection.
    private func pushLocked(_ sub: Subscriber, generation gen: UInt64, payload: [UInt8]) -> Bool {
        if sub.lastPayload != nil && gen <= sub.lastGeneration { return false }
        sub.lastGeneration = gen
        if let last = sub.lastPayload, last == payload { return false }
        sub.lastPayload = payload
        switch sub.outbox.push(.result(prefix: sub.framePrefix, payload: payload, id: sub.id, serial: sub.key.serial)) {
        case .wake, .overflow: return true
        case .queued, .dropped, .closed: return false
        }
    }

    /// Connections woken at once during a fan-out (one lock on the wake list per batch, while
    /// the service thread already writes the first batches).
    static let wakeBatch = 256
    /// From this many subscribers to a new version on, the service thread is woken before the
    /// cohorts execute (`Waker.expect`).
    static let announceFanout = 256

    // MARK: The watcher

    // MARK: The catalog file replaced on disk

    /// Called by each worker before a job, on the worker's own session: sets its busy timeout
    /// (shortened while the watcher finds the catalog locked), and once the watcher has moved
    /// to a replaced catalog file, reopens the session on it too.
    public func follow(_ session: CatalogSession) {
        let full = session.service.options.busyTimeoutMs
        session.busyTimeoutMs = lockedOut.load(ordering: .relaxed) ? min(full, Self.lockedBusyTimeoutMs) : full
        guard let served = servedFile.withLock({ $0 }), session.file != served else { return }
        do {
            try session.reopen()
        } catch {
            logger.warn("catalog_reopen_failed", ["path": session.path, "by": "worker", "error": "\(error)"])
        }
    }

    /// What the watcher knows about the file at the catalog path.
    struct FileWatch {
        var missingLogged = false
        var failed: CatalogFileIdentity? = nil
        var failedAt: UInt64 = 0
    }

    /// Each poll: when the path names another file than the one served (renamed over, or
    /// deleted and made again), opens it on the watcher's session, prepares it and publishes it
    /// for the workers. A deleted file goes on being served (it stays open) until a file appears
    /// at the path; a replacement that cannot be opened is retried once a second, logged once.
    /// Returns true when the watcher's session moved to a new file.
    private func checkFile(_ session: CatalogSession, _ w: inout FileWatch,
                           prepare: (@Sendable (String) -> Bool)?) -> Bool {
        let now = CatalogFileIdentity(path: session.path)
        guard now != session.file else { return false }
        guard let now else {
            if !w.missingLogged {
                w.missingLogged = true
                logger.warn("catalog_file_missing", [
                    "path": session.path,
                    "effect": "answers continue from the deleted file, which stays open, until a catalog appears at the path",
                ])
            }
            return false
        }
        let ms = monotonicMs()
        if w.failed == now && ms &- w.failedAt < 1000 { return false }
        let old = session.file
        do {
            if let hazard = session.replacementHazard() { throw CatalogError(path: session.path, message: hazard) }
            try session.reopen()
        } catch {
            if w.failed != now {
                logger.warn("catalog_reopen_failed", [
                    "path": session.path, "file": now.description, "error": "\(error)",
                    "effect": "answers continue from the previous file; retried every second",
                ])
            }
            w.failed = now
            w.failedAt = ms
            return false
        }
        w = FileWatch()
        // Its schema changes under the open session, which re-reads its layout on next use.
        // A stop that cut the prepare short (catalog_prepare_stopped) ends the server: the file
        // is not taken up.
        if let prepare, !prepare(session.path) { return false }
        let file = session.file
        servedFile.withLock { $0 = file }
        logger.warn("catalog_file_replaced", ["path": session.path, "old": old?.description ?? "none",
                                               "new": file?.description ?? "none"])
        return true
    }

    // MARK: The watcher

    /// Reads the current version on the caller's thread (so /healthz answers as soon as the
    /// server listens), then starts the watcher thread on its own session. `prepare` runs on a
    /// replacement catalog before it is opened (the gateway's indexes and change capture).
    ///
    /// `replaced` runs on the watcher's thread once it has moved to a replaced catalog file, so
    /// the workers can follow at once rather than at their next job: a file renamed over the
    /// catalog and then deleted would otherwise leave a worker that had no job in between on
    /// the file before (the path no longer leads to the one the watcher serves).
    public func startWatcher(session: CatalogSession, intervalMs: Int, prepare: (@Sendable (String) -> Bool)? = nil,
                             replaced: (@Sendable () -> Void)? = nil) {
        let served = session.file
        servedFile.withLock { $0 = served }
        // A stop ends the watcher's wait for a writer's lock (up to --busy-timeout-ms) at once.
        session.stopsWhen = abandonedCheck
        var first: Int64? = nil
        // Read before the data version: a commit in between moves the counter past this value,
        // so the watcher's first look reads again.
        let counter = session.fileChangeCounter()
        do {
            first = try session.dataVersion()
            let v = try session.catalogVersion()
            lock.lock()
            currentVersion = v
            lock.unlock()
        } catch {
            first = nil
            lock.lock()
            watcherError = "\(error)"
            lock.unlock()
        }
        let box = Transfer(value: session)
        let firstDataVersion = first
        lock.lock()
        watcherRunning = true
        lock.unlock()
        let t = Thread { [self] in
            self.watch(box.value, intervalMs: intervalMs, lastDataVersion: firstDataVersion,
                       lastCounter: firstDataVersion == nil ? nil : counter, prepare: prepare, replacedFile: replaced)
        }
        t.name = "watcher"
        t.stackSize = 8 << 20
        t.start()
    }

    /// --shutdown-timeout passed: executions still running (a long change set, say) stop instead
    /// of being waited for, and their results are dropped. `stop` still waits for the watcher,
    /// which then returns at SQLite's next progress check.
    public func abandon() { abandoned.store(true, ordering: .sequentiallyConsistent) }

    /// Stops the watcher and waits for it.
    public func stop() {
        abandon()
        lock.lock()
        stopping = true
        let running = watcherRunning
        watcherSignal?.interrupt()
        lock.unlock()
        if running { stopped.wait() }
    }

    /// What /healthz says while the watcher cannot read the catalog.
    /// /healthz answers anyone: SQLite's code and message, not the statement that met it (the
    /// log's catalog_watch_failed line has that).
    static func watchError(_ error: Error, busyTimeoutMs: Int32) -> String {
        if let e = error as? SQLiteError {
            if e.isBusy { return "The catalog is locked by another writer (busy timeout \(busyTimeoutMs) ms)" }
            return "SQLite error \(e.code): \(e.message)"
        }
        return "\(error)"
    }

    /// On a commit hint: `Waker.expect` when a fan-out to this many subscribers may follow.
    /// Returns whether it announced (the caller pairs it with `expectDone` after the check).
    private func announceEarly() -> Bool {
        guard subscriberCount >= Self.announceFanout else { return false }
        waker.expect()
        return true
    }

    /// After a hint: returns once 2 ms pass without another (at most 25 ms after the first).
    private func settle(_ signal: CommitSignal) {
        let deadline = monotonicMs() + 25
        while signal.wait(timeoutMs: 2) && monotonicMs() < deadline {}
    }

    /// After a schema change by anyone: when another program dropped one of the gateway's
    /// triggers (or rebuilt a catalog table, which drops its triggers — what "modify table"
    /// in a SQLite editor does), the gateway's objects are installed again at once, before this
    /// commit's version reaches any change feed. Change capture then restarts its history at
    /// the current version, so a feed behind it gets CHANGES_EXPIRED (the writes in between
    /// went unrecorded) instead of a change set that silently misses them; the search index is
    /// filled again. Until then, and on a read-only catalog, sync falls back to the version-row
    /// rule, search to its scan and counts to count(*).
    private func repairIfIncomplete(_ session: CatalogSession, prepare: (@Sendable (String) -> Bool)?) {
        guard let prepare, (try? session.gatewayObjectsIncomplete()) == true else { return }
        logger.warn("catalog_objects_incomplete", ["path": session.path,
                                                   "reason": "a cg_ trigger is missing (dropped, or its catalog table rebuilt)",
                                                   "action": "installing them again"])
        _ = prepare(session.path)
    }

    /// The version row just read (`v`; `replaced`: from another file). When it changed, a new
    /// generation: each catalogVersion cohort is executed once and its subscribers pushed the
    /// answer; the change feeds, which may be heavy, are left to `advanceFeeds`, which is told
    /// the version to bring them up to (`feedsBehind`) and since when (`feedsBehindSince`).
    private func publish(_ v: CatalogVersionValue, replaced: Bool, session: CatalogSession, seenSince: UInt64,
                         feedsBehind: inout Int?, feedsBehindSince: inout UInt64) {
        lock.lock()
        let changed = v != currentVersion || replaced
        currentVersion = v
        watcherError = nil
        guard changed else {
            lock.unlock()
            return
        }
        generation += 1
        let work = cohorts.values.filter { $0.operation.changeFeed == nil }.map { ($0, generation) }
        if work.count < cohorts.count {
            if feedsBehind == nil { feedsBehindSince = seenSince }
            feedsBehind = v.version
        }
        let fanout = work.reduce(0) { $0 + $1.0.subscribers.count }
        lock.unlock()
        let announce = fanout >= Self.announceFanout
        if announce { waker.expect() }
        defer { if announce { waker.expectDone() } }
        logger.debug("catalog_version_changed", ["version": String(v.version), "cohorts": String(work.count)])
        for (cohort, gen) in work {
            let result = session.execute(cohort.operation, cancelled: abandonedCheck)
            beforeCohortPush?()
            lock.lock()
            if isAbandoned { lock.unlock(); break }
            var wakes: [UInt64] = []
            wakes.reserveCapacity(Self.wakeBatch)
            for sub in cohort.subscribers.values {
                if pushLocked(sub, generation: gen, payload: result.json) {
                    wakes.append(sub.outbox.connectionID)
                    if wakes.count >= Self.wakeBatch {
                        waker.wake(wakes)
                        wakes.removeAll(keepingCapacity: true)
                    }
                }
            }
            waker.wake(wakes)
            lock.unlock()
        }
    }

    private func watch(_ session: CatalogSession, intervalMs: Int, lastDataVersion first: Int64?,
                       lastCounter firstCounter: UInt32?, prepare: (@Sendable (String) -> Bool)?,
                       replacedFile: (@Sendable () -> Void)?) {
        var lastDataVersion = first
        var lastSchemaVersion: Int64? = nil
        var lastCounter = firstCounter
        var lastFullCheck: UInt64 = 0
        var deferredSince: UInt64? = nil
        var failing = false
        var fileWatch = FileWatch()
        var replaced = false
        let signal = CommitSignal(path: session.path)
        lock.lock()
        watcherSignal = signal
        if stopping { signal.interrupt() }
        lock.unlock()
        var rechecks = 0
        var preAnnounced = false
        defer { if preAnnounced { waker.expectDone() } }
        /// The version the catalogChanges subscribers are still to be brought up to, and since
        /// when the watcher has had it (or put off reading it: the lock check's 1 s counts from there).
        var feedsBehind: Int? = nil
        var feedsBehindSince: UInt64 = 0
        while true {
            lock.lock()
            let stop = stopping
            lock.unlock()
            if stop { break }
            if checkFile(session, &fileWatch, prepare: prepare) {
                // Another file: every answer may differ, whatever its version row says.
                lastDataVersion = nil
                lastCounter = nil
                replaced = true
                replacedFile?()
            }
            do {
                // Rollback-journal catalogs: the header's change counter, read without a lock,
                // tells whether anyone committed since the last look. Only then is a read
                // transaction taken — a reader holding its shared lock at the moment a writer
                // without a busy timeout (the sqlite3 shell) commits makes that writer fail.
                // Once a second the watcher also asks, again without a lock, whether a writer
                // holds its lock; only then does it read, so a writer keeping readers out for
                // long shows in /healthz (503) within about a second plus --busy-timeout-ms,
                // while an idle catalog is never locked by the watcher at all.
                let counter = session.fileChangeCounter()
                let now = monotonicMs()
                var read = counter == nil || counter != lastCounter || failing || replaced
                var deferred = false
                if read, counter != nil, !failing, !replaced, session.writerHoldsLock() == true {
                    // A commit, but a writer is already inside its next transaction (a script
                    // of several statements): a read now would hold a shared lock across that
                    // writer's commit. Look again in 2 ms, for at most a second.
                    let since = deferredSince ?? now
                    deferredSince = since
                    if now &- since < 1000 {
                        read = false
                        deferred = true
                        rechecks = max(rechecks, 1)
                    }
                }
                if !read && !deferred && now &- lastFullCheck >= 1000 {
                    lastFullCheck = now
                    read = session.writerHoldsLock() ?? true
                }
                if read {
                    lastFullCheck = now
                    let seenSince = deferredSince ?? now
                    deferredSince = nil
                    let dv = try session.dataVersion()
                    // After a failure the version is read again whatever the data version says:
                    // the commit that moved it may be the one whose read failed.
                    if dv != lastDataVersion || failing {
                        let sv = try session.schemaCookie()
                        if sv != lastSchemaVersion {
                            lastSchemaVersion = sv
                            repairIfIncomplete(session, prepare: prepare)
                        }
                        let v = try session.catalogVersion()
                        lastDataVersion = dv
                        publish(v, replaced: replaced, session: session, seenSince: seenSince,
                                feedsBehind: &feedsBehind, feedsBehindSince: &feedsBehindSince)
                        replaced = false
                    }
                    lastCounter = counter
                }
                // catalogVersion subscribers (one cheap execution per cohort) were answered
                // above; the change feeds, which may be heavy, come after them. Left behind by a
                // newer commit, they are taken up again here. (Not while a rollback-journal
                // writer is inside its next transaction, for at most a second: see above.)
                if let target = feedsBehind, !deferred {
                    if counter != nil, now &- feedsBehindSince < 1000, session.writerHoldsLock() == true {
                        rechecks = max(rechecks, 1)
                    } else if advanceFeeds(to: target, session: session, signal: signal) {
                        feedsBehind = nil
                    }
                }
                if failing {
                    // Readable again, whether or not anything was committed meanwhile.
                    failing = false
                    lockedOut.store(false, ordering: .relaxed)
                    lock.lock()
                    watcherError = nil
                    lock.unlock()
                    logger.info("catalog_watch_recovered")
                }
            } catch {
                // Stopped by the shutdown deadline (`abandon`), not a failure of the catalog: the
                // read gives up a lock wait as if it had timed out.
                if isAbandoned { break }
                let message = Self.watchError(error, busyTimeoutMs: session.service.options.busyTimeoutMs)
                lockedOut.store((error as? SQLiteError)?.isBusy == true, ordering: .relaxed)
                lock.lock()
                watcherError = message
                lock.unlock()
                if !failing {
                    failing = true
                    logger.warn("catalog_watch_failed", ["error": "\(error)"])
                }
            }
            // Until the next check: a write to the catalog's files (checked once the writer has
            // been quiet for 2 ms, then again at 2 ms steps a few times, since a WAL commit's last
            // step makes no event), or the poll interval, whichever comes first. Waiting for a
            // quiet moment means a script of several autocommit statements (each its own commit)
            // is read once it is done, not between two of its commits — a reader there makes the
            // next commit fail when the writer has no busy timeout, as the sqlite3 shell has not.
            // It also bounds how often a long import's stream of writes makes the watcher look.
            //
            // A hint is almost always a commit: with many subscribers the service thread is woken
            // at once (`Waker.expect`), so that its return from poll() over every socket (about
            // 4–9 ms at 10,000) overlaps with the settling instead of following it.
            if preAnnounced { waker.expectDone(); preAnnounced = false }
            if rechecks > 0 {
                rechecks -= 1
                if signal.wait(timeoutMs: 2) { rechecks = 3; preAnnounced = announceEarly(); settle(signal) }
            } else if signal.wait(timeoutMs: max(1, intervalMs)) {
                rechecks = 3
                preAnnounced = announceEarly()
                settle(signal)
            }
        }
        stopped.signal()
    }
}
