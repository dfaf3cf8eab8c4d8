import Testing
@testable import Gateway

/// --trusted-proxy: address ranges, and the client an X-Forwarded-For names, as pure functions
/// of the peer, the header and the trusted list.
@Suite struct ClientAddressTests {
    static let ranges: [(String, String, Bool)] = [
        // (range, address, contained)
        ("127.0.0.1", "127.0.0.1", true), ("127.0.0.1", "127.0.0.2", false),
        ("127.0.0.1", "::ffff:127.0.0.1", true), ("::ffff:127.0.0.1", "127.0.0.1", true),
        ("10.0.0.0/8", "10.255.1.2", true), ("10.0.0.0/8", "11.0.0.0", false), ("10.0.0.0/8", "::ffff:10.1.2.3", true),
        ("192.168.0.0/23", "192.168.1.255", true), ("192.168.0.0/23", "192.168.2.0", false),
        ("172.16.0.0/12", "172.31.255.255", true), ("172.16.0.0/12", "172.32.0.0", false),
        ("0.0.0.0/0", "8.8.8.8", true), ("0.0.0.0/0", "::1", false),
        ("::1", "::1", true), ("::1", "0:0:0:0:0:0:0:1", true), ("::1", "::2", false), ("::1", "127.0.0.1", false),
        ("2001:db8::/32", "2001:DB8:ffff::1", true), ("2001:db8::/32", "2001:db9::1", false),
        ("fd00::/8", "fdab::1", true), ("fd00::/8", "fe80::1", false),
        ("2001:db8::/127", "2001:db8::1", true), ("2001:db8::/127", "2001:db8::2", false),
        ("::/0", "2001:db8::1", true), ("::/0", "1.2.3.4", true),
    ]

    @Test(arguments: ranges)
    func rangesHoldTheirAddresses(_ range: String, _ address: String, _ contained: Bool) throws {
        let r = try AddressRange(range)
        let a = try #require(IPAddress(address))
        #expect(r.contains(a) == contained, "\(range) \(address)")
    }

    static let badRanges: [(String, String)] = [
        ("", "empty"), ("/8", "empty"), ("localhost", "not an IPv4 or IPv6 address"), ("proxy.example", "not an IPv4"),
        ("10.0.0.0/", "prefix"), ("10.0.0.0/33", "0 to 32"), ("10.0.0.0/-1", "prefix"), ("10.0.0.0/8/8", "prefix"),
        ("10.0.0.0/ 8", "prefix"), ("::/129", "0 to 128"), ("[::1]", "without brackets"), ("10.0.0.1/8", "10.0.0.0/8"),
        ("2001:db8::1/32", "2001:db8::/32"), ("010.0.0.1", "not an IPv4"), ("10.1", "not an IPv4"), ("fe80::1%eth0", "not an IPv4"),
        (" 10.0.0.1", "not an IPv4"),
    ]

    @Test(arguments: badRanges)
    func badRangesSayWhatIsWrong(_ range: String, _ says: String) {
        do {
            _ = try AddressRange(range)
            Issue.record("\(range) was taken")
        } catch {
            #expect(error.description.contains(says), "\(range): \(error)")
        }
    }

    @Test func addressesHaveOneText() throws {
        #expect(try #require(IPAddress("::ffff:10.0.0.1")).description == "10.0.0.1")
        #expect(try #require(IPAddress("2001:DB8:0:0::1")).description == "2001:db8::1")
        #expect(try #require(IPAddress("::1")).description == "::1")
        #expect(IPAddress("::ffff:10.0.0.1") == IPAddress("10.0.0.1"))
        #expect(try AddressRange("10.0.0.0/8").description == "10.0.0.0/8")
        #expect(try AddressRange("::ffff:127.0.0.1").description == "127.0.0.1")
    }

    static let entries: [(String, String?)] = [
        ("1.2.3.4", "1.2.3.4"), (" \t1.2.3.4 ", "1.2.3.4"), ("1.2.3.4:5678", "1.2.3.4"), ("1.2.3.4:0", "1.2.3.4"),
        ("[::1]:80", "::1"), ("[::1]", "::1"), ("[2001:DB8::1]:443", "2001:db8::1"), ("2001:db8::1", "2001:db8::1"),
        ("::ffff:1.2.3.4", "1.2.3.4"), ("[::ffff:1.2.3.4]:80", "1.2.3.4"),
        // A bare IPv6 address's last group is not a port.
        ("2001:db8::1:80", "2001:db8::1:80"),
        ("", nil), ("unknown", nil), ("_hidden", nil), ("proxy.example", nil), ("1.2.3.4:", nil), ("1.2.3.4:65536", nil),
        ("1.2.3.4:http", nil), ("1.2.3.4:-1", nil), ("[1.2.3.4]:80", nil), ("[::1]80", nil), ("[::1", nil), ("::1]:80", nil),
        ("1.2.3.4 5.6.7.8", nil), ("fe80::1%eth0", nil), ("\"1.2.3.4\"", nil), ("1.2.3", nil), ("1.2.3.4.5", nil),
        ("[::1]:80:80", nil), ("1.2.3.04", nil),
    ]

    @Test(arguments: entries)
    func forwardedEntries(_ entry: String, _ address: String?) {
        #expect(TrustedProxies.entry(entry[...])?.description == address, "\(entry)")
    }

    static let walks: [(String, String?, String)] = [
        // (peer, X-Forwarded-For, client) with 127.0.0.1 and 10.0.0.0/8 trusted.
        ("127.0.0.1", "1.2.3.4", "1.2.3.4"),
        ("127.0.0.1", nil, "127.0.0.1"),
        // A client's own forged entries sit left of the one the proxy wrote: never read.
        ("127.0.0.1", "1.2.3.4, 5.6.7.8", "5.6.7.8"),
        ("127.0.0.1", "garbage, 5.6.7.8", "5.6.7.8"),
        // Trusted hops are passed from the right; the first untrusted is the client.
        ("127.0.0.1", "1.2.3.4, 127.0.0.1", "1.2.3.4"),
        ("127.0.0.1", "9.9.9.9, 1.2.3.4, 10.1.1.1, 10.2.2.2", "1.2.3.4"),
        // Every one trusted: the leftmost.
        ("127.0.0.1", "10.0.0.7, 127.0.0.1", "10.0.0.7"),
        // Garbage met on the way: the peer.
        ("127.0.0.1", "garbage", "127.0.0.1"),
        ("127.0.0.1", "1.2.3.4, unknown", "127.0.0.1"),
        ("127.0.0.1", "1.2.3.4, garbage, 10.0.0.1", "127.0.0.1"),
        ("127.0.0.1", "1.2.3.4,", "127.0.0.1"),
        ("127.0.0.1", "1.2.3.4,,10.0.0.1", "127.0.0.1"),
        ("127.0.0.1", " ", "127.0.0.1"),
        // Ports and IPv6 in entries.
        ("127.0.0.1", "1.2.3.4:5678", "1.2.3.4"),
        ("127.0.0.1", "[2001:db8::7]:443, 10.0.0.1:80", "2001:db8::7"),
        ("127.0.0.1", "2001:DB8::7", "2001:db8::7"),
        ("127.0.0.1", "::ffff:1.2.3.4", "1.2.3.4"),
        // Several header lines, as lws joins them.
        ("127.0.0.1", "6.6.6.6,1.2.3.4", "1.2.3.4"),
        // The peer as a dual-stack socket reports it.
        ("::ffff:127.0.0.1", "1.2.3.4", "1.2.3.4"),
        ("::ffff:10.9.9.9", "1.2.3.4", "1.2.3.4"),
        // An untrusted peer's header is never read.
        ("127.0.0.2", "1.2.3.4", "127.0.0.2"),
        ("203.0.113.9", "127.0.0.1", "203.0.113.9"),
        ("::1", "1.2.3.4", "::1"),
        ("-", "1.2.3.4", "-"),
    ]

    @Test(arguments: walks)
    func theClientIsTheFirstUntrustedAddressFromTheRight(_ peer: String, _ header: String?, _ client: String) throws {
        let trusted = TrustedProxies([try AddressRange("127.0.0.1"), try AddressRange("10.0.0.0/8")])
        #expect(trusted.client(peer: peer, forwardedFor: header) == client, "\(peer) \(header ?? "nil")")
    }

    @Test func ipv6Proxies() throws {
        let trusted = TrustedProxies([try AddressRange("::1"), try AddressRange("fd00::/8")])
        #expect(trusted.client(peer: "::1", forwardedFor: "2001:db8::1, fd12::3") == "2001:db8::1")
        #expect(trusted.client(peer: "::1", forwardedFor: "127.0.0.1") == "127.0.0.1")
        #expect(trusted.client(peer: "127.0.0.1", forwardedFor: "2001:db8::1") == "127.0.0.1")
    }

    @Test func withNoProxyTrustedThePeerIsTheClientAsItCame() {
        #expect(TrustedProxies().client(peer: "::ffff:127.0.0.1", forwardedFor: "1.2.3.4") == "::ffff:127.0.0.1")
        #expect(TrustedProxies().client(peer: "127.0.0.1", forwardedFor: "1.2.3.4") == "127.0.0.1")
    }
}
