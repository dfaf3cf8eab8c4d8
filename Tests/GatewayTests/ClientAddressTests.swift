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
        #expect(trusted.client(peer: peer, header: header) == client, "\(peer) \(header ?? "nil")")
    }

    @Test func ipv6Proxies() throws {
        let trusted = TrustedProxies([try AddressRange("::1"), try AddressRange("fd00::/8")])
        #expect(trusted.client(peer: "::1", header: "2001:db8::1, fd12::3") == "2001:db8::1")
        #expect(trusted.client(peer: "::1", header: "127.0.0.1") == "127.0.0.1")
        #expect(trusted.client(peer: "127.0.0.1", header: "2001:db8::1") == "127.0.0.1")
    }

    @Test func withNoProxyTrustedThePeerIsTheClientAsItCame() {
        #expect(TrustedProxies().client(peer: "::ffff:127.0.0.1", header: "1.2.3.4") == "::ffff:127.0.0.1")
        #expect(TrustedProxies().client(peer: "127.0.0.1", header: "1.2.3.4") == "127.0.0.1")
    }

    static let groups: [(String, Int, String)] = [
        // (client, --ipv6-client-prefix, what it is counted and takes turns under)
        ("2001:db8:1:2:aaaa::1", 64, "2001:db8:1:2::/64"), ("2001:db8:1:2:ffff:ffff:ffff:ffff", 64, "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", 64, "2001:db8:1:3::/64"), ("2001:DB8:1:2::1", 64, "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", 48, "2001:db8:1::/48"), ("2001:db8:1:ff01::1", 56, "2001:db8:1:ff00::/56"),
        ("2001:db8:1:2::1", 1, "::/1"), ("ffff::1", 1, "8000::/1"), ("2001:db8:1:2::1", 127, "2001:db8:1:2::/127"),
        ("2001:db8:1:2::7", 125, "2001:db8:1:2::/125"), ("2001:db8:1:2::f", 125, "2001:db8:1:2::8/125"),
        // 128: the address alone, as it came.
        ("2001:db8:1:2::1", 128, "2001:db8:1:2::1"),
        ("::1", 64, "::/64"), ("fe80::1", 64, "fe80::/64"),
        // IPv4, written either way, is one address per client whatever the prefix.
        ("192.0.2.7", 64, "192.0.2.7"), ("192.0.2.7", 1, "192.0.2.7"), ("::ffff:192.0.2.7", 64, "::ffff:192.0.2.7"),
        ("::ffff:192.0.2.7", 96, "::ffff:192.0.2.7"),
        // Not an address (a peer lws could not name, a zone): as it came.
        ("-", 64, "-"), ("fe80::1%eth0", 64, "fe80::1%eth0"), ("", 64, ""),
    ]

    @Test(arguments: groups)
    func ipv6ClientsAreGroupedByTheirPrefix(_ client: String, _ prefix: Int, _ group: String) {
        #expect(IPAddress.clientGroup(client, ipv6Prefix: prefix) == group, "\(client) /\(prefix)")
    }

    static let forwarded: [(String, [String?]?)] = [
        // (Forwarded, the for value of each element; nil: the header does not parse)
        ("for=192.0.2.43", ["192.0.2.43"]),
        ("for=192.0.2.43, for=198.51.100.17", ["192.0.2.43", "198.51.100.17"]),
        ("for=192.0.2.60;proto=http;by=203.0.113.43", ["192.0.2.60"]),
        ("proto=http;by=203.0.113.43;for=192.0.2.60", ["192.0.2.60"]),
        // Parameter names without case; quoted strings and their escapes.
        ("For=\"_gazonk\"", ["_gazonk"]), ("FOR=1.2.3.4", ["1.2.3.4"]),
        ("for=\"[2001:db8:cafe::17]:4711\"", ["[2001:db8:cafe::17]:4711"]),
        ("for=\"\\[2001:db8::1\\]\"", ["[2001:db8::1]"]), ("for=\"a\\\"b\"", ["a\"b"]), ("for=\"a,b;c\"", ["a,b;c"]),
        ("for=\"\"", [""]),
        // Decided: a port and brackets unquoted are taken (the RFC wants them quoted).
        ("for=192.0.2.43:80", ["192.0.2.43:80"]), ("for=[2001:db8::1]:443", ["[2001:db8::1]:443"]),
        // Spaces around elements and pairs; several header lines joined with commas.
        ("  for=1.1.1.1 ,\tfor=2.2.2.2  ", ["1.1.1.1", "2.2.2.2"]), ("for=1.1.1.1 ; proto=https", ["1.1.1.1"]),
        ("for=1.1.1.1,for=2.2.2.2", ["1.1.1.1", "2.2.2.2"]),
        // Elements without one `for`: empty, none, two (RFC 7239 4: invalid).
        ("", [nil]), ("for=1.1.1.1,", ["1.1.1.1", nil]), ("for=1.1.1.1,,for=2.2.2.2", ["1.1.1.1", nil, "2.2.2.2"]),
        (" , ", [nil, nil]), ("proto=https", [nil]), (";;", [nil]), ("for=1.1.1.1;;proto=http", ["1.1.1.1"]),
        ("for=1.1.1.1;for=2.2.2.2", [nil]), ("for=1.1.1.1;FOR=1.1.1.1, for=3.3.3.3", [nil, "3.3.3.3"]),
        // What does not parse.
        ("for=", nil), ("for", nil), ("=1.2.3.4", nil), ("for =1.2.3.4", nil), ("for= 1.2.3.4", nil),
        ("for=\"1.2.3.4", nil), ("for=\"1.2.3.4\\\"", nil), ("for=1.2.3.4\"", nil), ("for=\"1.2.3.4\"x", nil),
        ("for=1.2.3.4 5.6.7.8", nil), ("for=1.2.3.4;x", nil), ("for=2001:db8::1/64", nil), ("fo r=1.2.3.4", nil),
        ("for=\"a\u{01}b\"", nil), ("for=\"a\u{7F}\"", nil), ("f\u{E9}r=1.2.3.4", nil), ("for=1.2.3.4\r\n", nil),
        ("for=\"\\", nil), ("\"", nil), ("for=\"a\",", ["a", nil]),
    ]

    @Test(arguments: forwarded)
    func forwardedHeaders(_ header: String, _ fors: [String?]?) {
        #expect(ForwardedHeader.forValues(header) == fors, "\(header)")
    }

    @Test func forwardedHeadersOfManyElements() {
        let many = Array(repeating: "for=10.0.0.1;proto=https", count: 1_000).joined(separator: ", ")
        #expect(ForwardedHeader.forValues(many) == Array(repeating: "10.0.0.1", count: 1_000))
        // One unbalanced quote at the start swallows the rest: nothing parses.
        #expect(ForwardedHeader.forValues("for=\"" + many) == nil)
        let trusted = TrustedProxies([try! AddressRange("127.0.0.1"), try! AddressRange("10.0.0.0/8")], header: .forwarded)
        #expect(trusted.client(peer: "127.0.0.1", header: "for=1.2.3.4, " + many) == "1.2.3.4")
        #expect(trusted.client(peer: "127.0.0.1", header: many) == "10.0.0.1")
    }

    static let nodes: [(String, String?)] = [
        // (a for value, its address; RFC 7239 6)
        ("192.0.2.43", "192.0.2.43"), ("192.0.2.43:80", "192.0.2.43"), ("192.0.2.43:_port-1.x", "192.0.2.43"),
        ("[2001:db8:cafe::17]", "2001:db8:cafe::17"), ("[2001:db8:cafe::17]:4711", "2001:db8:cafe::17"),
        ("[2001:db8::17]:_p", "2001:db8::17"), ("[::ffff:192.0.2.1]", "192.0.2.1"),
        // Taken as X-Forwarded-For takes it: IPv6 without brackets, whose last group is no port.
        ("2001:db8::17", "2001:db8::17"), ("2001:db8::17:80", "2001:db8::17:80"),
        // Obfuscated or unknown: no address.
        ("unknown", nil), ("unknown:80", nil), ("_hidden", nil), ("_SEVKISEK", nil), ("_hidden:_port", nil),
        ("", nil), ("192.0.2.43:", nil), ("192.0.2.43:_", nil), ("192.0.2.43:_a b", nil), ("192.0.2.43:99999", nil),
        ("[192.0.2.43]", nil), ("[2001:db8::17", nil), ("2001:db8::17:_p", nil), ("example.com", nil), ("fe80::1%eth0", nil),
    ]

    @Test(arguments: nodes)
    func forwardedNodes(_ value: String, _ address: String?) {
        #expect(ForwardedHeader.node(value)?.description == address, "\(value)")
    }

    static let forwardedWalks: [(String, String?, String)] = [
        // (peer, Forwarded, client) with 127.0.0.1 and 10.0.0.0/8 trusted, --trusted-proxy-header forwarded.
        ("127.0.0.1", "for=1.2.3.4", "1.2.3.4"),
        ("127.0.0.1", "for=6.6.6.6, for=1.2.3.4", "1.2.3.4"),
        ("127.0.0.1", "for=9.9.9.9, for=1.2.3.4;proto=https, for=10.1.1.1;by=x", "1.2.3.4"),
        ("127.0.0.1", "for=\"[2001:DB8::7]:443\", for=10.0.0.1", "2001:db8::7"),
        ("127.0.0.1", "for=10.0.0.7, for=127.0.0.1", "10.0.0.7"),
        // What the client wrote left of its proxy's element, when it parses, is not read.
        ("127.0.0.1", "for=_hidden, for=1.2.3.4", "1.2.3.4"),
        ("127.0.0.1", "for=1.1.1.1;for=2.2.2.2, for=1.2.3.4", "1.2.3.4"),
        // No address met on the way: the peer.
        ("127.0.0.1", "for=unknown", "127.0.0.1"), ("127.0.0.1", "for=_hidden", "127.0.0.1"),
        ("127.0.0.1", "for=1.2.3.4, for=unknown", "127.0.0.1"), ("127.0.0.1", "proto=https", "127.0.0.1"),
        ("127.0.0.1", "for=1.2.3.4,", "127.0.0.1"), ("127.0.0.1", "for=1.2.3.4;for=5.6.7.8", "127.0.0.1"),
        ("127.0.0.1", "for=1.2.3.4, for=10.0.0.1;for=10.0.0.2", "127.0.0.1"),
        ("127.0.0.1", "for=", "127.0.0.1"), ("127.0.0.1", "", "127.0.0.1"), ("127.0.0.1", nil, "127.0.0.1"),
        // A header that does not parse names nobody, whoever wrote the broken part.
        ("127.0.0.1", "for=\"1.2.3.4, for=5.6.7.8", "127.0.0.1"),
        ("127.0.0.1", "for=\"x, for=1.2.3.4", "127.0.0.1"),
        // X-Forwarded-For's syntax is not Forwarded's.
        ("127.0.0.1", "1.2.3.4", "127.0.0.1"),
        // An untrusted peer's header is never read.
        ("127.0.0.2", "for=1.2.3.4", "127.0.0.2"), ("-", "for=1.2.3.4", "-"),
    ]

    @Test(arguments: forwardedWalks)
    func theForwardedClientIsTheFirstUntrustedAddressFromTheRight(_ peer: String, _ header: String?, _ client: String) throws {
        let trusted = TrustedProxies([try AddressRange("127.0.0.1"), try AddressRange("10.0.0.0/8")], header: .forwarded)
        #expect(trusted.client(peer: peer, header: header) == client, "\(peer) \(header ?? "nil")")
    }

    @Test func withXForwardedForChosenForwardedSyntaxIsNoAddress() throws {
        let trusted = TrustedProxies([try AddressRange("127.0.0.1")])
        #expect(trusted.header == .xForwardedFor)
        #expect(trusted.client(peer: "127.0.0.1", header: "for=1.2.3.4") == "127.0.0.1")
    }
}
