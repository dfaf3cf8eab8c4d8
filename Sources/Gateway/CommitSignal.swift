import CWebSockets
import Foundation
#if canImport(Glibc)
import Glibc
import Resolvers
#endif

/// Wakes the subscription watcher as soon as a writer commits, instead of after the rest of its
/// poll interval: an inotify watch on the catalog's directory, filtered to the events that mark
/// a commit that is done or nearly so —
/// - a write to `-wal` (WAL mode; readers never block a WAL writer, so looking early is harmless);
/// - the deletion of `-journal` (rollback-journal mode, `journal_mode=DELETE`, the default: the
///   commit's last step). Writes to the journal or the main file are *not* hints: they happen
///   while the writer works, and a reader that takes its shared lock then makes the writer's
///   commit wait, or fail at once for a writer without a busy timeout (the sqlite3 shell);
/// - a file renamed onto, created at or deleted from the catalog's path (replacement).
/// Other journal modes (TRUNCATE, PERSIST, MEMORY, OFF) give no hint and are seen at the poll
/// interval.
///
/// A wake-up is only a hint: the watcher still decides by `PRAGMA data_version`, and keeps its
/// poll interval as the fallback for filesystems without inotify (then `wait` simply sleeps).
/// In WAL mode the last write of a commit (the wal-index header, in shared memory) makes no
/// event, so a hint that arrives before the commit is visible is followed by short re-checks —
/// see `SubscriptionHub.watch`.
final class CommitSignal: @unchecked Sendable {
    private var fd: Int32 = -1
    private var watch: Int32 = -1
    /// A pipe whose read end `interrupt` (from any thread) makes readable: every `wait` from
    /// then on returns at once.
    private let stopFD: Int32
    private let stopWriteFD: Int32
    private let base: String, wal: String, journal: String
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    /// A hint `pending()` found, kept for the next `wait`.
    private var held = false

    /// `path`: the catalog file. Inotify failing (limits, unsupported filesystem) leaves the
    /// signal inactive; `wait` then sleeps for its timeout.
    init(path: String) {
        let url = URL(fileURLWithPath: path)
        let base = url.lastPathComponent
        self.base = base
        wal = base + "-wal"
        journal = base + "-journal"
        let dir = url.deletingLastPathComponent().path
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)
            }
        } else {
            ends = [-1, -1]  // poll() skips a negative fd: `wait` then only times out
        }
        stopFD = ends[0]
        stopWriteFD = ends[1]
        fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { return }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_TO | IN_CREATE)
        watch = inotify_add_watch(fd, dir.isEmpty ? "." : dir, mask)
        if watch < 0 { close(fd); fd = -1 }
    }

    deinit {
        if fd >= 0 { close(fd) }
        if stopFD >= 0 { close(stopFD); close(stopWriteFD) }
    }

    /// Ends the current `wait` and every later one at once (the server is stopping: the watcher
    /// must not sleep out a poll interval of up to a minute). Safe from any thread.
    func interrupt() {
        var one: UInt8 = 1
        if stopWriteFD >= 0 { _ = write(stopWriteFD, &one, 1) }
    }

    var isActive: Bool { fd >= 0 }

    /// Waits up to `timeoutMs` for a hint. Returns true when one came (all pending events are
    /// consumed), false on timeout or once `interrupt` was called.
    func wait(timeoutMs: Int) -> Bool {
        if held {
            held = false
            return true
        }
        // Events that are not hints (a writer's work in progress) do not end the wait. Without
        // inotify, only an interrupt does.
        let deadline = monotonicMs() + UInt64(max(0, timeoutMs))
        var fds = [pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0), pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        let count = nfds_t(fd >= 0 ? 2 : 1)
        while true {
            let now = monotonicMs()
            guard now < deadline else { return false }
            let r = poll(&fds, count, Int32(deadline - now))
            if r < 0 && errno != EINTR { return false }
            if r > 0 && fds[0].revents != 0 { return false }
            if r > 0 && fds[1].revents != 0 && drain() { return true }
        }
    }

    /// Whether a hint came since the last `wait`, without waiting; the hint stays for `wait`,
    /// which then returns at once. (The watcher asks between two pieces of long work.)
    func pending() -> Bool {
        guard fd >= 0 else { return false }
        if !held && drain() { held = true }
        return held
    }

    func isHint(name: String, mask: UInt32) -> Bool {
        if name == wal { return true }
        if name == journal { return mask & UInt32(IN_DELETE) != 0 }
        if name == base { return mask & UInt32(IN_MOVED_TO | IN_CREATE | IN_DELETE) != 0 }
        return false
    }

    /// Reads every queued event; true when one is a hint (see the type's comment).
    private func drain() -> Bool {
        var hit = false
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            buffer.withUnsafeBytes { raw in
                var off = 0
                let headerSize = MemoryLayout<inotify_event>.size
                while off + headerSize <= n {
                    let mask = raw.loadUnaligned(fromByteOffset: off + 4, as: UInt32.self)
                    let nameLength = Int(raw.loadUnaligned(fromByteOffset: off + 12, as: UInt32.self))
                    if nameLength > 0, off + headerSize + nameLength <= n {
                        let bytes = raw[(off + headerSize)..<(off + headerSize + nameLength)]
                        let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
                        let name = String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)
                        if isHint(name: name, mask: mask) { hit = true }
                    }
                    off += headerSize + nameLength
                }
            }
        }
        return hit
    }
}
