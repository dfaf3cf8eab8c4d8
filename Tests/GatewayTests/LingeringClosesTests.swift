import Foundation
import Testing
@testable import Gateway
#if canImport(Glibc)
import Glibc
#endif

/// `LingeringCloses` on socket pairs: the "server" end is duplicated and its original closed, as
/// lws closes it; the "client" end plays the peer.
@Suite struct LingeringClosesTests {
    /// A connected pair (server, client), both non-blocking.
    func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EMFILE) }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return (fds[0], fds[1])
    }

    func send(_ fd: Int32, _ n: Int) -> Int {
        let bytes = [UInt8](repeating: 0x61, count: n)
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, n, Int32(MSG_NOSIGNAL)) }
    }

    /// What the peer reads now: bytes, 0 at end of stream, -1 for nothing yet (or an error).
    func read(_ fd: Int32) -> Int {
        var buf = [UInt8](repeating: 0, count: 1 << 16)
        return buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
    }

    @Test func theSocketOutlivesItsOwnersCloseUntilThePeerCloses() throws {
        let (server, client) = try pair()
        defer { close(client) }
        let l = LingeringCloses()
        #expect(l.add(server, now: 0, written: true))
        close(server)  // lws's close: the socket lives on in the duplicate
        // The write side was shut: the peer reads the end of the stream, and may still send.
        #expect(read(client) == 0)
        #expect(send(client, 1000) == 1000)
        #expect(l.service(now: 10) == 5000)
        #expect(l.count == 1)
        close(client)
        #expect(l.service(now: 20) == nil)
        #expect(l.count == 0 && l.closedByPeer == 1)
    }

    @Test func unwrittenAnswersLeaveTheWriteSideOpenForLws() throws {
        let (server, client) = try pair()
        defer { close(client); close(server) }
        let l = LingeringCloses()
        #expect(l.add(server, now: 0, written: false))
        #expect(read(client) == -1)  // no end of stream: lws still has bytes to send
        #expect(send(server, 10) == 10)
        #expect(read(client) == 10)
    }

    @Test func itIsClosedAtItsDeadlineOrPastTheBytesItMayDiscard() throws {
        let (s1, c1) = try pair()
        let (s2, c2) = try pair()
        defer { close(c1); close(c2) }
        let l = LingeringCloses(limit: 8, lingerMs: 100, maxDiscardBytes: 4000)
        #expect(l.add(s1, now: 0, written: true))
        #expect(l.add(s2, now: 50, written: true))
        close(s1); close(s2)
        #expect(l.service(now: 60) == 100)
        #expect(l.service(now: 100) == 150)  // the first one's time is up
        #expect(l.count == 1)
        #expect(send(c1, 10) < 0)  // its socket is gone
        #expect(send(c2, 5000) == 5000)
        #expect(l.service(now: 110) == nil)  // the second sent more than it may
        #expect(l.count == 0 && l.closedByPeer == 0)
    }

    @Test func pastItsLimitASocketIsNotKept() throws {
        let (s1, c1) = try pair()
        let (s2, c2) = try pair()
        defer { close(s2); close(c1); close(c2) }
        let l = LingeringCloses(limit: 1)
        #expect(l.add(s1, now: 0, written: false))
        #expect(!l.add(s2, now: 0, written: false))
        close(s1)
        #expect(l.count == 1 && l.kept == 1)
        l.closeAll()
        #expect(l.count == 0)
        #expect(send(c1, 10) < 0)
    }
}
