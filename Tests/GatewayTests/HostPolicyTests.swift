import Testing
@testable import Gateway

/// --allowed-host: which Host header values are answered (against DNS rebinding), as pure
/// functions of the header, the bind address and the list.
@Suite struct HostPolicyTests {
    static let loopback: [(String, Bool)] = [
        ("localhost", true), ("LOCALHOST", true), ("localhost:4000", true), ("localhost.", true), ("localhost.:4000", true),
        ("app.localhost", true), ("a.b.LocalHost:8080", true), ("127.0.0.1", true), ("127.0.0.1:4000", true),
        ("127.255.3.4", true), ("127.0.0.1:", true), ("[::1]", true), ("[::1]:4000", true), ("[0:0:0:0:0:0:0:1]:80", true),
        (" localhost:4000 ", true),
        // Anybody's names, whatever they start with.
        ("localhost.evil.com", false), ("localhost.evil.com:4000", false), ("127.0.0.1.evil.com", false),
        ("evillocalhost", false), ("evil.example", false), ("evil.example:4000", false), (".localhost", false),
        ("128.0.0.1", false), ("127.0.0", false), ("127.0.0.256", false), ("127.0.0.1.1", false), ("0x7f.0.0.1", false),
        ("[::2]", false), ("[::1", false), ("::1", false), ("[::ffff:127.0.0.1]", false),
        // Not name[:port].
        ("localhost:http", false), ("localhost:4000:1", false), ("localhost/x", false), ("localhost:-1", false),
        ("", false), (":4000", false), ("l\u{1E9E}ocalhost", false),
    ]

    @Test(arguments: loopback)
    func theLoopbackDefault(_ host: String, _ allowed: Bool) {
        #expect(HTTPRouting.hostAllowed(host, allowed: .loopback) == allowed)
    }

    static let listed: [(String, Bool)] = [
        ("app.example", true), ("APP.Example:8080", true), ("app.example.", true), ("app.example.:443", true),
        ("example.com", true), ("www.example.com", true), ("a.b.EXAMPLE.com:1", true), ("example.com.", true),
        ("[2001:db8::1]:4000", true), ("[2001:DB8::1]", true), ("10.0.0.5:4000", true),
        ("badexample.com", false), ("example.com.evil", false), (".example.com", false), ("app.example.evil", false),
        ("xapp.example", false), ("sub.app.example", false), ("localhost", false), ("127.0.0.1", false), ("[::1]", false),
        ("10.0.0.50", false), ("app.example:x", false),
        // U+212A KELVIN SIGN lowercases to `k` in Unicode: not here, byte for byte.
        ("\u{212A}ite.example", false), ("kite.example", true), ("KITE.example", true),
    ]

    @Test(arguments: listed)
    func aList(_ host: String, _ allowed: Bool) {
        let policy = HostPolicy.forServer(bindHost: "127.0.0.1",
                                          allowed: ["App.Example.", ".example.com", "[2001:db8::1]", "10.0.0.5", "kite.example"])
        #expect(HTTPRouting.hostAllowed(host, allowed: policy) == allowed)
    }

    @Test func theDefaultFollowsTheBindAddress() {
        for bind in ["127.0.0.1", "127.1.2.3", "::1", "localhost", "::ffff:127.0.0.1"] {
            #expect(HostPolicy.forServer(bindHost: bind, allowed: nil) == .loopback, "\(bind)")
        }
        for bind in ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "::2", "128.0.0.1"] {
            #expect(HostPolicy.forServer(bindHost: bind, allowed: nil) == .any, "\(bind)")
        }
        // A list replaces the default whatever the address, with nothing implicit.
        #expect(HostPolicy.forServer(bindHost: "127.0.0.1", allowed: ["app.example"]) == .names(["app.example"]))
        #expect(HostPolicy.forServer(bindHost: "0.0.0.0", allowed: ["app.example"]) == .names(["app.example"]))
        #expect(HostPolicy.forServer(bindHost: "127.0.0.1", allowed: ["app.example", "*"]) == .any)
    }

    @Test func starAllowsAnyHost() {
        let policy = HostPolicy.forServer(bindHost: "127.0.0.1", allowed: ["*"])
        for host in ["evil.example", "evil.example:4000", "localhost", "not a host", "x:y:z", ""] {
            #expect(HTTPRouting.hostAllowed(host, allowed: policy), "\(host)")
        }
    }

    static let names: [(String, String?)] = [
        ("*", nil), ("app.example", nil), ("App.Example.", nil), (".example.com", nil), ("localhost", nil),
        ("127.0.0.1", nil), ("[::1]", nil), ("[2001:db8::1]", nil), ("my_host", nil), ("xn--caf-dma.example", nil),
        ("", "the name is empty"),
        ("http://app.example", "a name has no scheme or path (\"/\"); give the host alone"),
        ("app.example/", "a name has no scheme or path (\"/\"); give the host alone"),
        ("app example", "a name has no spaces or control characters"),
        (" app.example", "a name has no spaces or control characters"),
        ("app.example:8080", "give it without a port: the port is not compared"),
        ("[::1]:8080", "give it without a port: the port is not compared"),
        ("::1", "an IPv6 address goes in brackets, as in the Host header ([::1])"),
        ("[::1", "an IPv6 address needs its closing bracket ([::1])"),
        ("[::1]x", "nothing follows the IPv6 address's closing bracket"),
        ("[nope]", "nope is not an IPv6 address"),
        (".[::1]", "an IP address takes no leading dot"),
        ("*.example.com", "`*` stands alone (any Host); for a domain and its subdomains give .example.com"),
        ("café.example", "give an international name in its ASCII form (xn--…), as browsers send it"),
        ("app,example", "\",\" is not in a host name (letters, digits, -, _ and .)"),
        ("a..b", "a name has no empty labels (\"..\", or a dot alone)"),
        (".", "a name has no empty labels (\"..\", or a dot alone)"),
        ("..example.com", "a name has no empty labels (\"..\", or a dot alone)"),
        ("example.com..", "a name has no empty labels (\"..\", or a dot alone)"),
    ]

    @Test(arguments: names)
    func flagValues(_ name: String, _ problem: String?) {
        #expect(HostPolicy.problem(name) == problem)
    }

    @Test func theRefusalSaysTheHostAndTheFlag() {
        let r = HTTPRouting.misdirected(host: "evil.example:4000")
        #expect(r.status == 421 && HTTPRouting.reasonPhrase(421) == "Misdirected Request")
        #expect(r.text == #"{"errors":[{"message":"Host \"evil.example:4000\" is not served here (--allowed-host)","extensions":{"code":"MISDIRECTED_REQUEST"}}]}"#)
        #expect(HTTPRouting.misdirected(host: String(repeating: "a", count: 5000)).body.count < 400)
    }
}
