#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as 16 bytes, IPv4 in its IPv4-mapped form (`::ffff:a.b.c.d`): a
/// dual-stack socket reports an IPv4 client that way, and nginx and Express's proxy-addr match
/// such an address against IPv4 ranges, so both spellings are one address here.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// An IPv4 literal in dotted decimal (`inet_pton`: no octal, hex or short forms) or an IPv6
    /// literal without brackets or zone; nil for anything else.
    public init?(_ text: some StringProtocol) {
        let s = String(text)
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, s, &v4) == 1 {
            bytes = [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, s, &v6) == 1 {
            bytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// An IPv4 address (written either way).
    public var isIPv4: Bool { bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF }

    /// IPv4 in dotted decimal, IPv6 as inet_ntop writes it (lower case, the longest run of zeros
    /// as `::`): one text per address, whatever spelling it came in.
    public var description: String {
        isIPv4 ? Self.ipv4Text(bytes) : Self.ipv6Text(bytes) ?? "-"
    }

    /// The key a client's connections are counted and its HTTP requests take turns under
    /// (--max-connections-per-address, the HTTP lanes): an IPv6 client by the first
    /// `ipv6Prefix` bits of its address (--ipv6-client-prefix), written as the range
    /// (`2001:db8:1:2::/64`), since one customer is usually given a whole /64 and may use any
    /// address in it; an IPv4 client (`::ffff:a.b.c.d` too), an IPv6 one at 128, and anything
    /// that is not an address (a peer lws could not name, "-") by its text as it came.
    public static func clientGroup(_ client: String, ipv6Prefix: Int) -> String {
        guard ipv6Prefix < 128, client.contains(":"), let a = IPAddress(client), !a.isIPv4 else { return client }
        return "\(ipv6Text(masked(a.bytes, ipv6Prefix)) ?? client)/\(ipv6Prefix)"
    }

    /// `bytes` with every bit past the first `bits` cleared.
    static func masked(_ bytes: [UInt8], _ bits: Int) -> [UInt8] {
        var b = bytes
        for i in bits..<128 { b[i / 8] &= ~(0x80 >> UInt8(i % 8)) }
        return b
    }

    /// The last 4 of 16 bytes in dotted decimal.
    static func ipv4Text(_ bytes: [UInt8]) -> String {
        bytes[12..<16].map { String($0) }.joined(separator: ".")
    }

    /// 16 bytes as inet_ntop writes an IPv6 address; nil if it cannot.
    static func ipv6Text(_ bytes: [UInt8]) -> String? {
        var v6 = in6_addr()
        withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
        var buf = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        return buf.withUnsafeMutableBufferPointer { b in
            inet_ntop(AF_INET6, &v6, b.baseAddress, socklen_t(b.count)).map { String(cString: $0) }
        }
    }
}

/// An address with a prefix length (`10.0.0.0/8`, `fd00::/8`); an address alone is a range of
/// one. An IPv4 range's prefix counts within the mapped form (96 + its bits), so it holds an
/// IPv4 client whichever way the socket reports it; `::/0` therefore holds IPv4 addresses too.
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    public let address: IPAddress
    /// How many leading bits of the 16 bytes are compared.
    public let bits: Int
    public let description: String

    /// `ADDR` or `ADDR/PREFIX`, as --trusted-proxy takes it; the error says what is wrong.
    /// Bits set past the prefix (`10.0.0.1/8`) are refused rather than masked, as a typo for a
    /// single address is likelier than a range written that way (nginx masks them with a warning).
    public init(_ text: String) throws(GatewayError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let addressText = parts[0]
        guard !addressText.isEmpty else { throw GatewayError("the address is empty") }
        if addressText.first == "[" { throw GatewayError("give an IPv6 address without brackets (::1, 2001:db8::/32)") }
        guard let address = IPAddress(addressText) else {
            throw GatewayError("\(addressText) is not an IPv4 or IPv6 address (a name is not resolved; give its address)")
        }
        let v4Text = !addressText.contains(":")
        let most = v4Text ? 32 : 128
        var prefix = most
        if parts.count == 2 {
            let p = parts[1]
            guard !p.isEmpty, p.count <= 3, p.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(p), n <= most else {
                throw GatewayError("the prefix after / is a number of bits, 0 to \(most) for an \(v4Text ? "IPv4" : "IPv6") address")
            }
            prefix = n
        }
        let bits = v4Text ? 96 + prefix : prefix
        for i in bits..<128 where address.bytes[i / 8] & (0x80 >> UInt8(i % 8)) != 0 {
            throw GatewayError("\(text) has bits set past its prefix; the range starts at \(Self.masked(address, bits, v4: v4Text))/\(prefix)")
        }
        self.address = address
        self.bits = bits
        self.description = parts.count == 2 ? "\(address)/\(prefix)" : address.description
    }

    /// Whether `a` is in the range.
    public func contains(_ a: IPAddress) -> Bool {
        let whole = bits / 8
        if whole > 0 && a.bytes[0..<whole] != address.bytes[0..<whole] { return false }
        let rest = bits % 8
        guard rest > 0 else { return true }
        let mask = UInt8(0xFF) << UInt8(8 - rest)
        return a.bytes[whole] & mask == address.bytes[whole] & mask
    }

    private static func masked(_ a: IPAddress, _ bits: Int, v4: Bool) -> String {
        let b = IPAddress.masked(a.bytes, bits)
        return v4 ? IPAddress.ipv4Text(b) : IPAddress.ipv6Text(b) ?? ""
    }
}

/// --trusted-proxy-header: the header the trusted proxies name the client in. One, chosen by
/// the operator, never a fallback from one to the other: a proxy rewrites or appends to the
/// header it writes and passes any other on as the client sent it, so whichever header were
/// read when the proxy's own is absent, or preferred when both are there, a client could write
/// it and name any address it likes (a new lane and a new count each time).
public enum ForwardingHeader: String, Sendable, CaseIterable {
    /// `X-Forwarded-For: client, proxy1` — nginx's `$proxy_add_x_forwarded_for`, HAProxy's
    /// `option forwardfor`, the cloud load balancers.
    case xForwardedFor = "x-forwarded-for"
    /// RFC 7239's `Forwarded: for=client, for="[2001:db8::1]:443"` — HAProxy's `option
    /// forwarded`, some CDNs and meshes.
    case forwarded
}

/// --trusted-proxy: the reverse proxies whose `X-Forwarded-For` (or, with
/// --trusted-proxy-header forwarded, `Forwarded`) names the client, read as nginx's realip
/// module reads it with `real_ip_recursive on` and Express's `trust proxy` with a list of
/// addresses: only when the TCP peer is trusted; from the right, past every trusted address;
/// the first untrusted one is the client (every one trusted: the leftmost). What is left of the
/// client was written by the client and is never read. An entry that is not an address, met on
/// the way (`unknown`, a name, an empty entry; in `Forwarded` an element without one `for`, an
/// obfuscated `_hidden`), makes the peer itself the client: nothing is taken from a header a
/// trusted proxy did not write as expected. The client keys the HTTP requests' worker lane,
/// --max-connections-per-address and the log's `client=`. Empty (the default): the client is
/// always the peer, and the header only logged.
public struct TrustedProxies: Sendable, Equatable {
    public let ranges: [AddressRange]
    public let header: ForwardingHeader

    public init(_ ranges: [AddressRange] = [], header: ForwardingHeader = .xForwardedFor) {
        self.ranges = ranges
        self.header = header
    }

    public var isEmpty: Bool { ranges.isEmpty }

    public func trusts(_ a: IPAddress) -> Bool { ranges.contains { $0.contains(a) } }

    /// The client of a request from TCP peer `peer` (as lws reports it; "-" when it cannot)
    /// carrying `value`, the text of the header `header` names (X-Forwarded-For's lines joined
    /// with commas, as lws joins them; the first Forwarded line, all lws 4.1 hands out of a
    /// header it does not know). With no proxy trusted, `peer` itself, unparsed; otherwise an
    /// address in one text per address (`IPAddress.description`), or `peer` as it came when it
    /// is not one.
    public func client(peer: String, header value: String?) -> String {
        guard !ranges.isEmpty else { return peer }
        guard let p = IPAddress(peer) else { return peer }
        guard trusts(p), let value else { return p.description }
        switch header {
        case .xForwardedFor:
            return walk(p, value.split(separator: ",", omittingEmptySubsequences: false).reversed().lazy.map(Self.entry)).description
        case .forwarded:
            guard let fors = ForwardedHeader.forValues(value) else { return p.description }
            return walk(p, fors.reversed().lazy.map { $0.flatMap(ForwardedHeader.node) }).description
        }
    }

    /// From the right (`hops` in that order): each address a trusted hop wrote, until one it
    /// did not trust; an entry that is no address (nil) makes `peer` the client.
    private func walk(_ peer: IPAddress, _ hops: some Sequence<IPAddress?>) -> IPAddress {
        var client = peer
        for hop in hops {
            guard let a = hop else { return peer }
            client = a
            if !trusts(a) { break }
        }
        return client
    }

    /// One X-Forwarded-For entry, between optional spaces and tabs: an IPv4 or IPv6 address, or
    /// one with the port some proxies add (Azure's gateways, IIS ARR) — `1.2.3.4:5678`,
    /// `[2001:db8::1]:443`, `[2001:db8::1]` — the port dropped (it changes with every
    /// connection; the address is the client). An IPv6 address with a port needs its brackets:
    /// `2001:db8::1:80` is an address. Anything else (`unknown`, a name, `_hidden`, a zone
    /// `fe80::1%eth0`) is nil.
    static func entry(_ raw: Substring) -> IPAddress? {
        var s = raw[...]
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        func isPort(_ p: Substring) -> Bool {
            !p.isEmpty && p.count <= 5 && p.allSatisfy { $0.isASCII && $0.isNumber } && Int(p).map { $0 <= 65535 } == true
        }
        if s.first == "[" {
            guard let close = s.firstIndex(of: "]") else { return nil }
            let inner = s[s.index(after: s.startIndex)..<close]
            let after = s[s.index(after: close)...]
            guard after.isEmpty || (after.first == ":" && isPort(after.dropFirst())) else { return nil }
            guard inner.contains(":") else { return nil }  // brackets hold IPv6 only
            return IPAddress(inner)
        }
        let colons = s.reduce(0) { $0 + ($1 == ":" ? 1 : 0) }
        if colons == 1, let colon = s.firstIndex(of: ":") {
            guard isPort(s[s.index(after: colon)...]), let a = IPAddress(s[..<colon]), a.isIPv4 else { return nil }
            return a
        }
        return IPAddress(s)
    }
}

/// RFC 7239's `Forwarded` header, as far as the client is concerned: the `for` parameter of each
/// element. Its grammar (section 4, with RFC 7230's list, token and quoted-string):
///
///     Forwarded         = 1#forwarded-element
///     forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] )
///     forwarded-pair    = token "=" value
///     value             = token / quoted-string
///
/// Decided: parameter names without ASCII case; optional spaces and tabs around elements and
/// around pairs; a value may hold `:`, `[` and `]` unquoted (`for=192.0.2.43:80`,
/// `for=[2001:db8::1]`, which the RFC says need quotes: a proxy writing them so is understood,
/// as the delimiters `,` `;` `"` still cannot occur in such a value). A header that does not
/// parse (an unbalanced quote, a pair without `=`, an empty value, a control character) names
/// nobody: the peer is the client, as for an entry that is no address.
enum ForwardedHeader {
    /// The `for` value of each element, left to right, unquoted: nil for an element without one,
    /// or with two (section 4: a parameter MUST NOT occur more than once per element). nil as a
    /// whole when the header does not parse.
    static func forValues(_ text: String) -> [String?]? {
        var p = Parser(bytes: Array(text.utf8))
        return p.header()
    }

    /// A `for` value as an address (section 6): `node = nodename [ ":" node-port ]`, the
    /// nodename an IPv4 address or an IPv6 one in brackets, the port (digits, or obfuscated:
    /// `_` then letters, digits, `.`, `_`, `-`) dropped as X-Forwarded-For's port is; an IPv6
    /// address without brackets is taken too, as in X-Forwarded-For. `unknown` and obfuscated
    /// names (`_hidden`, section 6.3) are nil, as are names and anything else.
    static func node(_ value: String) -> IPAddress? {
        var v = value[...]
        if let colon = v.lastIndex(of: ":") {
            let port = v[v.index(after: colon)...]
            let name = v[..<colon]
            if port.first == "_", port.count > 1,
               port.dropFirst().allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") }),
               name.last == "]" || !name.contains(":") {
                v = name
            }
        }
        return TrustedProxies.entry(v)
    }

    private struct Parser {
        let bytes: [UInt8]
        var i = 0

        var atEnd: Bool { i == bytes.count }

        // Forwarded = 1#forwarded-element
        mutating func header() -> [String?]? {
            var fors: [String?] = []
            while true {
                skipSpace()
                guard let f = element() else { return nil }
                fors.append(f)
                skipSpace()
                if atEnd { return fors }
                guard bytes[i] == UInt8(ascii: ",") else { return nil }
                i += 1
            }
        }

        // forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] )
        // Its `for` value (nil inside: none, or more than one); nil: it does not parse.
        mutating func element() -> String?? {
            var value: String? = nil
            var fors = 0
            while true {
                skipSpace()
                if atEnd || bytes[i] == UInt8(ascii: ",") { break }
                if bytes[i] != UInt8(ascii: ";") {
                    guard let (name, v) = pair() else { return nil }
                    if name == "for" { fors += 1; value = v }
                    skipSpace()
                    if atEnd || bytes[i] == UInt8(ascii: ",") { break }
                    guard bytes[i] == UInt8(ascii: ";") else { return nil }
                }
                i += 1
            }
            return .some(fors == 1 ? value : nil)
        }

        // forwarded-pair = token "=" value
        // The name in lower case, and the value.
        mutating func pair() -> (String, String)? {
            let start = i
            while !atEnd && Self.isTokenByte(bytes[i]) { i += 1 }
            guard i > start, !atEnd, bytes[i] == UInt8(ascii: "=") else { return nil }
            let name = String(decoding: bytes[start..<i], as: UTF8.self).lowercased()
            i += 1
            guard let v = value() else { return nil }
            return (name, v)
        }

        // value = token / quoted-string (a token here may also hold ":", "[" and "]")
        mutating func value() -> String? {
            if !atEnd && bytes[i] == UInt8(ascii: "\"") { return quotedString() }
            let start = i
            while !atEnd && (Self.isTokenByte(bytes[i]) || bytes[i] == UInt8(ascii: ":") || bytes[i] == UInt8(ascii: "[")
                             || bytes[i] == UInt8(ascii: "]")) { i += 1 }
            return i > start ? String(decoding: bytes[start..<i], as: UTF8.self) : nil
        }

        // quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE
        // qdtext        = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
        // quoted-pair   = "\" ( HTAB / SP / VCHAR / obs-text )
        mutating func quotedString() -> String? {
            i += 1
            var out: [UInt8] = []
            while !atEnd {
                let c = bytes[i]
                i += 1
                switch c {
                case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard !atEnd, Self.isQuotable(bytes[i]) else { return nil }
                    out.append(bytes[i])
                    i += 1
                default:
                    guard Self.isQuotable(c) else { return nil }
                    out.append(c)
                }
            }
            return nil  // no closing quote
        }

        // OWS = *( SP / HTAB )
        mutating func skipSpace() {
            while !atEnd && (bytes[i] == 0x20 || bytes[i] == 0x09) { i += 1 }
        }

        // tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
        static func isTokenByte(_ c: UInt8) -> Bool {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                return true
            default:
                return "!#$%&'*+-.^_`|~".utf8.contains(c)
            }
        }

        // HTAB / SP / VCHAR / obs-text: what a quoted string may hold, escaped or not.
        static func isQuotable(_ c: UInt8) -> Bool { c == 0x09 || c >= 0x20 && c != 0x7F }
    }
}
