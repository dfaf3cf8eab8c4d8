import CWebSockets  // sys/socket.h as lws includes it: SHUT_WR, MSG_DONTWAIT
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sockets whose HTTP connection the gateway closes after an answer while the client may still
/// be sending (a pipelined request, a 400 that ends the connection): RFC 9112 9.6's "lingering
/// close". Closing a socket with unread input makes the kernel reset the connection, and the
/// reset throws away whatever of the answer the client had not read yet — a slow client lost
/// the end of a 200 KB answer that way. lws 4.1 means to wait for the peer's close after
/// shutting the write side (`LRS_SHUTDOWN`) but marks the socket unusable just before testing
/// that mark, so it closes at once.
///
/// So before lws closes such a socket, `add` keeps a duplicate of its descriptor: lws's
/// shutdown still sends the answer and then FIN, and its close no longer ends the socket. The
/// duplicate is never in the epoll set (the tick calls `service`): its input is read and
/// thrown away until the peer closes, `lingerMs` pass or `maxDiscardBytes` came, and then it
/// is closed — on empty input, so without a reset. Service thread (the service lock) only.
final class LingeringCloses {
    struct Entry {
        let fd: Int32
        /// Monotonic ms after which it is closed whatever arrives.
        let until: UInt64
        var discarded: Int
    }

    private(set) var entries: [Entry] = []
    /// Sockets lingering at once at most: each holds a descriptor (the open-files limit); past
    /// it a socket is closed at once, as lws does. The server sets it from the limit it got.
    var limit: Int
    let lingerMs: UInt64
    /// Input read and thrown away per socket at most before it is closed.
    let maxDiscardBytes: Int
    /// Sockets kept (`add`), and closed on the peer's close rather than at a deadline or limit.
    private(set) var kept = 0
    private(set) var closedByPeer = 0
    private var scratch = [UInt8](repeating: 0, count: 64 << 10)

    /// The most the server keeps, asked for in its open-files limit
    /// (`GatewayServer.neededFileLimit`).
    static let defaultLimit = 32

    init(limit: Int = LingeringCloses.defaultLimit, lingerMs: UInt64 = 5000, maxDiscardBytes: Int = 4 << 20) {
        self.limit = limit; self.lingerMs = lingerMs; self.maxDiscardBytes = maxDiscardBytes
    }

    var count: Int { entries.count }

    /// Keeps the socket of `fd` past its owner's close; false when `limit` sockets linger
    /// already or the descriptor cannot be duplicated (the open-files limit).
    /// `written`: every byte of the answer is with the kernel (lws holds none back), so the
    /// write side is shut here, at once; otherwise lws shuts it once it has sent the rest.
    @discardableResult
    func add(_ fd: Int32, now: UInt64, written: Bool) -> Bool {
        guard fd >= 0, entries.count < limit else { return false }
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return false }
        if written { shutdown(copy, Int32(SHUT_WR)) }
        // The duplicate shares the socket's file status flags: O_NONBLOCK as lws set it. Reads
        // below say MSG_DONTWAIT anyway.
        entries.append(Entry(fd: copy, until: now + lingerMs, discarded: 0))
        kept += 1
        return true
    }

    /// Reads and discards what arrived on each socket; closes those whose peer closed, whose
    /// time ran out or that sent too much. Returns the earliest deadline left, nil when none.
    func service(now: UInt64) -> UInt64? {
        var next: UInt64? = nil
        var k = 0
        while k < entries.count {
            var e = entries[k]
            var done = now >= e.until
            while !done {
                let n = scratch.withUnsafeMutableBytes { recv(e.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 {
                    e.discarded += n
                    done = e.discarded >= maxDiscardBytes
                } else if n == 0 {
                    closedByPeer += 1
                    done = true
                } else {
                    if errno == EINTR { continue }
                    done = errno != EAGAIN && errno != EWOULDBLOCK
                    break
                }
            }
            if done {
                close(e.fd)
                entries.swapAt(k, entries.count - 1)
                entries.removeLast()
                continue
            }
            entries[k] = e
            next = min(next ?? e.until, e.until)
            k += 1
        }
        return next
    }

    /// Closes every lingering socket (the server stops).
    func closeAll() {
        for e in entries { close(e.fd) }
        entries.removeAll()
    }

    deinit { closeAll() }
}
