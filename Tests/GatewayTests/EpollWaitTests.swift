import CServiceLock
import Foundation
import Testing

/// The service thread's poll() through epoll (CServiceLock, `cg_service_lock_use_epoll`): what
/// lws sees must be what a plain poll() over the same array would report — the ready entries'
/// `revents`, nothing for the rest — while the set behind it follows the array and the
/// descriptors' closes.
@Suite(.serialized) struct EpollWaitTests {
    /// A lock with the epoll wait on, entered by the calling thread for `body`.
    func asServiceThread(_ body: (OpaquePointer) throws -> Void) rethrows {
        let lock = cg_service_lock_create()!
        #expect(cg_service_lock_use_epoll(lock) == 1)
        cg_service_lock_enter(lock)
        defer {
            cg_service_lock_leave(lock)
            cg_service_lock_destroy(lock)
        }
        try body(lock)
    }

    func counts(_ lock: OpaquePointer) -> (epoll: UInt, plain: UInt, healed: UInt) {
        var e: UInt = 0, p: UInt = 0, h: UInt = 0
        cg_service_lock_wait_counts(lock, &e, &p, &h)
        return (e, p, h)
    }

    /// A connected pair of stream sockets.
    func pair() -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let r = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds)
        precondition(r == 0, "socketpair: \(errno)")
        return (fds[0], fds[1])
    }

    /// Other suites open and close descriptors meanwhile, so a number's reuse is arranged
    /// (dup2) near the top of the open-files limit, where they do not reach: `fd` moved to the
    /// slot'th number from the top.
    func moved(_ fd: Int32, toSlot slot: Int32) -> Int32 {
        var rl = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &rl)
        let target = Int32(min(rl.rlim_cur, 1 << 20)) - 1 - slot
        precondition(dup2(fd, target) == target, "dup2: \(errno)")
        close(fd)
        return target
    }

    /// Closes the watched socket `a0` with `closeA0`, and its peer `a1`, then puts a new
    /// connected socket at the same number (the slot'th from the top) with a byte to read:
    /// the new socket and its peer.
    func replaced(_ a0: Int32, peer a1: Int32, slot: Int32, closing closeA0: (Int32) -> Void) -> (Int32, Int32) {
        closeA0(a0)
        close(a1)
        let (q0, c1) = pair()
        let c0 = moved(q0, toSlot: slot)
        #expect(c0 == a0)
        send(c1)
        return (c0, c1)
    }

    func send(_ fd: Int32) { var b: UInt8 = 0x41; _ = write(fd, &b, 1) }

    /// A socket that is never ready, in every wait: lws's own waits always have two entries or
    /// more (a one-entry poll() with no timeout is a question, not a wait; see below).
    static let quiet: Int32 = {
        var fds: [Int32] = [-1, -1]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        return fds[0]
    }()

    /// poll() over `fds` and the quiet socket, as the service thread's wait.
    func wait(_ fds: inout [pollfd], _ timeoutMs: Int32) -> Int32 {
        var all = fds + [entry(Self.quiet, POLLIN)]
        let r = all.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeoutMs) }
        for i in fds.indices { fds[i].revents = all[i].revents }
        #expect(all.last?.revents == 0)
        return r
    }

    /// poll() over exactly `fds`.
    func ask(_ fds: inout [pollfd], _ timeoutMs: Int32) -> Int32 {
        fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeoutMs) }
    }

    func entry(_ fd: Int32, _ events: Int32) -> pollfd { pollfd(fd: fd, events: Int16(events), revents: 0) }

    @Test func onlyTheReadyEntryGetsItsEventsThroughEpoll() {
        asServiceThread { lock in
            let (a0, a1) = pair(), (b0, b1) = pair()
            defer { for fd in [a0, a1, b0, b1] { close(fd) } }
            var fds = [entry(a0, POLLIN), entry(-1, POLLIN), entry(b0, POLLIN)]
            #expect(wait(&fds, 0) == 0)
            send(b1)
            let before = counts(lock).epoll
            #expect(wait(&fds, 1000) == 1)
            #expect(fds.map(\.revents) == [0, 0, Int16(POLLIN)])
            #expect(counts(lock).epoll == before + 1)
            // Level-triggered, as poll() is: still ready until read.
            #expect(wait(&fds, 0) == 1)
            #expect(fds[2].revents == Int16(POLLIN))
        }
    }

    /// The pass skips an entry equal to what it left there last time (fd and events, no
    /// revents). Entries that trade places, or were reported and are not ready any more, are
    /// not such entries: each is reported where it is now, and a drained one no longer.
    @Test func entriesThatMoveOrWereReportedAreLookedAtAgain() {
        asServiceThread { _ in
            let (a0, a1) = pair(), (b0, b1) = pair()
            defer { for fd in [a0, a1, b0, b1] { close(fd) } }
            var fds = [entry(a0, POLLIN), entry(b0, POLLIN)]
            #expect(wait(&fds, 0) == 0)
            send(b1)
            #expect(wait(&fds, 1000) == 1)
            #expect(fds.map(\.revents) == [0, Int16(POLLIN)])
            // lws moves its last entry into a gap: the same descriptors, in other places.
            var swapped = [entry(b0, POLLIN), entry(a0, POLLIN)]
            #expect(wait(&swapped, 0) == 1)
            #expect(swapped.map(\.revents) == [Int16(POLLIN), 0])
            var byte: UInt8 = 0
            #expect(read(b0, &byte, 1) == 1)
            // Drained: the entry reported last time reads 0 now, as the array is passed again.
            #expect(wait(&swapped, 0) == 0)
            #expect(swapped.map(\.revents) == [0, 0])
            send(a1)
            #expect(wait(&swapped, 1000) == 1)
            #expect(swapped.map(\.revents) == [0, Int16(POLLIN)])
        }
    }

    @Test func aWaitWithNothingReadyLastsItsTimeout() {
        asServiceThread { _ in
            let (a0, a1) = pair()
            defer { close(a0); close(a1) }
            var fds = [entry(a0, POLLIN)]
            let t0 = DispatchTime.now().uptimeNanoseconds
            #expect(wait(&fds, 60) == 0)
            #expect(DispatchTime.now().uptimeNanoseconds - t0 >= 50_000_000)
            #expect(fds[0].revents == 0)
        }
    }

    /// The number of a closed socket comes back with the next one: it must be watched afresh,
    /// although the array shows the same number with the same events.
    @Test func aClosedDescriptorsNumberReusedAtOnceIsWatched() {
        asServiceThread { lock in
            let (p0, a1) = pair()
            let a0 = moved(p0, toSlot: 1)
            var fds = [entry(a0, POLLIN)]
            #expect(wait(&fds, 0) == 0)
            let (c0, c1) = replaced(a0, peer: a1, slot: 1) { close($0) }
            defer { close(c0); close(c1) }
            let before = counts(lock).epoll
            var again = [entry(c0, POLLIN)]
            #expect(wait(&again, 200) == 1)
            #expect(again[0].revents == Int16(POLLIN))
            #expect(counts(lock).epoll == before + 1)
        }
    }

    @Test func changedEventsTakeEffect() {
        asServiceThread { _ in
            let (a0, a1) = pair()
            defer { close(a0); close(a1) }
            var fds = [entry(a0, POLLIN)]
            #expect(wait(&fds, 0) == 0)
            fds[0].events = Int16(POLLIN | POLLOUT)
            #expect(wait(&fds, 0) == 1)
            #expect(fds[0].revents == Int16(POLLOUT))
            fds[0].events = Int16(POLLIN)
            #expect(wait(&fds, 0) == 0)
            #expect(fds[0].revents == 0)
        }
    }

    /// An entry lws dropped from its array is not reported (its registration goes when it
    /// fires), and is watched again once back in the array.
    @Test func anEntryLeftOutOfTheArrayIsNotReported() {
        asServiceThread { _ in
            let (a0, a1) = pair(), (b0, b1) = pair()
            defer { for fd in [a0, a1, b0, b1] { close(fd) } }
            var both = [entry(a0, POLLIN), entry(b0, POLLIN)]
            #expect(wait(&both, 0) == 0)
            send(a1)
            var onlyB = [entry(b0, POLLIN)]
            #expect(wait(&onlyB, 50) == 0)
            #expect(onlyB[0].revents == 0)
            var onlyA = [entry(a0, POLLIN)]
            #expect(wait(&onlyA, 200) == 1)
            #expect(onlyA[0].revents == Int16(POLLIN))
        }
    }

    /// poll() reports a hang-up whatever was asked, and so does this.
    @Test func aPeersHangUpIsReported() {
        asServiceThread { _ in
            let (a0, a1) = pair()
            defer { close(a0) }
            var fds = [entry(a0, 0)]
            #expect(wait(&fds, 0) == 0)
            close(a1)
            #expect(wait(&fds, 200) == 1)
            #expect(fds[0].revents & Int16(POLLHUP) != 0)
        }
    }

    /// epoll cannot watch a character device: that wait is a plain poll(), with poll()'s answer.
    @Test func aDescriptorEpollRefusesMakesThatWaitPlain() {
        asServiceThread { lock in
            let null = open("/dev/null", O_RDONLY)
            let (b0, b1) = pair()
            defer { close(null); close(b0); close(b1) }
            let before = counts(lock)
            var fds = [entry(b0, POLLIN), entry(null, POLLIN)]
            #expect(wait(&fds, 0) == 1)
            #expect(fds[0].revents == 0)
            #expect(fds[1].revents == Int16(POLLIN))
            #expect(counts(lock).plain == before.plain + 1)
            #expect(counts(lock).epoll == before.epoll)
        }
    }

    /// A registration lost behind this target's back (a close that bypassed its close(), here
    /// `cg_close_unseen`) is found by the sweep — once a second the kernel checks the array too,
    /// in slices of 512 after the waits — and restored. Here it is the 601st of 700 entries.
    @Test func aLostRegistrationIsRestoredByTheSweepOnceASecond() {
        asServiceThread { lock in
            let crowd = (0..<699).map { _ in dup(Self.quiet) }
            defer { for fd in crowd { close(fd) } }
            let (p0, a1) = pair()
            let a0 = moved(p0, toSlot: 2)
            var fds = crowd.prefix(600).map { entry($0, POLLIN) } + [entry(a0, POLLIN)] + crowd.dropFirst(600).map { entry($0, POLLIN) }
            #expect(wait(&fds, 0) == 0)
            let (c0, c1) = replaced(a0, peer: a1, slot: 2) { _ = cg_close_unseen($0) }
            defer { close(c0); close(c1) }
            // Through epoll alone the socket is not seen; the sweep sees it within a second.
            #expect(wait(&fds, 100) == 0)
            var waits = 0
            while wait(&fds, 100) == 0 && waits < 30 { waits += 1 }
            #expect(fds[600].revents == Int16(POLLIN))
            #expect(fds.enumerated().allSatisfy { $0.offset == 600 || $0.element.revents == 0 })
            #expect(counts(lock).healed == 1)
            #expect(counts(lock).plain == 0)
            // Restored: epoll reports it from now on.
            let before = counts(lock).epoll
            #expect(wait(&fds, 0) == 1)
            #expect(counts(lock).epoll == before + 1)
        }
    }

    /// lws asks about one descriptor with no timeout from inside its service pass — whether
    /// another connection is pending on the listening socket (`lws_poll_listen_fd`, an entry of
    /// its array), whether a socket takes more (`lws_send_pipe_choked`, POLLOUT on a pollfd of
    /// its own): the answer is that descriptor's own, whatever else is ready, and the lock
    /// stays held (no wait is counted). Through the set, the first came back 0 for a ready
    /// socket, and so did the second (stop 36's review).
    @Test func aOneEntryQuestionInsideAPassIsAnsweredForThatEntryWithTheLockHeld() {
        asServiceThread { lock in
            let pairs = (0..<4).map { _ in pair() }
            defer { for (x, y) in pairs { close(x); close(y) } }
            var all = pairs.map { entry($0.0, POLLIN) }
            #expect(wait(&all, 0) == 0)
            // The others become ready first, so an epoll set would name one of them first.
            for (_, y) in pairs.dropFirst() { send(y) }
            send(pairs[0].1)
            let polls = cg_service_lock_polls(lock), before = counts(lock)
            var one = [entry(pairs[0].0, POLLIN)]
            #expect(ask(&one, 0) == 1)
            #expect(one[0].revents == Int16(POLLIN))
            var choked = [entry(pairs[0].0, POLLOUT)]
            #expect(ask(&choked, 0) == 1)
            #expect(choked[0].revents == Int16(POLLOUT))
            #expect(cg_service_lock_polls(lock) == polls)
            #expect(counts(lock) == before)
            // The set is untouched: the next wait reports all four through epoll.
            #expect(wait(&all, 0) == 4)
            #expect(counts(lock).epoll == before.epoll + 1)
        }
    }

    /// Off the service thread, poll() is plain ppoll() and counts nothing.
    @Test func otherThreadsPollPlainly() {
        let lock = cg_service_lock_create()!
        defer { cg_service_lock_destroy(lock) }
        #expect(cg_service_lock_use_epoll(lock) == 1)
        let (a0, a1) = pair()
        defer { close(a0); close(a1) }
        send(a1)
        var fds = [entry(a0, POLLIN), entry(Self.quiet, POLLIN)]
        #expect(ask(&fds, 0) == 1)
        #expect(counts(lock).epoll == 0 && counts(lock).plain == 0)
    }
}
