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
        var b = a.bytes
        for i in bits..<128 { b[i / 8] &= ~(0x80 >> UInt8(i % 8)) }
        return v4 ? IPAddress.ipv4Text(b) : IPAddress.ipv6Text(b) ?? ""
    }
}

/// --trusted-proxy: the reverse proxies whose `X-Forwarded-For` names the client, read as
/// nginx's realip module reads it with `real_ip_recursive on` and Express's `trust proxy` with a
/// list of addresses: only when the TCP peer is trusted; from the right, past every trusted
/// address; the first untrusted one is the client (every one trusted: the leftmost). What is
/// left of the client was written by the client and is never read. An entry that is not an
/// address, met on the way (`unknown`, a name, an empty entry), makes the peer itself the
/// client: nothing is taken from a header a trusted proxy did not write as expected.
/// The client keys the HTTP requests' worker lane, --max-connections-per-address and the log's
/// `client=`. Empty (the default): the client is always the peer, and the header only logged.
public struct TrustedProxies: Sendable, Equatable {
    public let ranges: [AddressRange]

    public init(_ ranges: [AddressRange] = []) { self.ranges = ranges }

    public var isEmpty: Bool { ranges.isEmpty }

    public func trusts(_ a: IPAddress) -> Bool { ranges.contains { $0.contains(a) } }

    /// The client of a request from TCP peer `peer` (as lws reports it; "-" when it cannot)
    /// carrying `forwardedFor` (X-Forwarded-For, several header lines joined with commas, as
    /// lws joins them). With no proxy trusted, `peer` itself, unparsed; otherwise an address in
    /// one text per address (`IPAddress.description`), or `peer` as it came when it is not one.
    public func client(peer: String, forwardedFor: String?) -> String {
        guard !ranges.isEmpty else { return peer }
        guard let p = IPAddress(peer) else { return peer }
        guard trusts(p), let forwardedFor else { return p.description }
        var client = p
        // From the right: each address a trusted hop wrote, until one it did not trust.
        for entry in forwardedFor.split(separator: ",", omittingEmptySubsequences: false).reversed() {
            guard let a = Self.entry(entry) else { return p.description }
            client = a
            if !trusts(a) { break }
        }
        return client.description
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
