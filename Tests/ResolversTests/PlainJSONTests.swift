import Testing
@testable import Resolvers
import Schema

/// `PlainJSON`, the Swift fast path of `JSONParser`, against jansson's reading of the same
/// bytes: whatever the fast path reads, it reads as jansson does (the same cases, the same
/// member order); whatever is outside its subset it leaves to jansson (nil).
@Suite struct PlainJSONTests {
    func plain(_ text: [UInt8]) -> JSONValue? { text.withUnsafeBytes { PlainJSON.parse($0) } }
    func jansson(_ text: [UInt8]) -> JSONValue? { text.withUnsafeBytes { try? JSONParser.parseWithJansson($0) } }

    /// The oracle: a text the fast path reads is one jansson reads to the identical value.
    /// Returns whether the fast path read it.
    @discardableResult
    func agrees(_ text: [UInt8], sourceLocation: Testing.SourceLocation = #_sourceLocation) -> Bool {
        guard let fast = plain(text) else { return false }
        let reference = jansson(text)
        #expect(reference.map { fast.isIdentical(to: $0) } == true,
                "\(String(decoding: text, as: UTF8.self)): fast \(fast), jansson \(String(describing: reference))",
                sourceLocation: sourceLocation)
        return true
    }

    @Test func identicalIsStricterThanEquality() {
        let ab: JSONValue = .object([("a", .int(1)), ("b", .null)]), ba: JSONValue = .object([("b", .null), ("a", .int(1))])
        #expect(ab == ba && !ab.isIdentical(to: ba) && ab.isIdentical(to: ab))
        #expect(JSONValue.int(1) == .double(1) && !JSONValue.int(1).isIdentical(to: .double(1)))
        #expect(!JSONValue.string("e\u{301}").isIdentical(to: .string("\u{E9}")))
    }

    @Test func aSubscribeMessageIsReadByTheFastPath() throws {
        let message = #"{"id":"1","type":"subscribe","payload":{"query":"query CategoryPage($id: ID!) {\n  category(id: $id) {\n    id title\n    products(first: 50) { nodes { id \"x\" } }\n  }\n}","variables":{"id":"36","first":50,"neg":-7,"zero":0,"on":true,"off":false,"none":null,"list":[1,[],{}," a\/b\\c\t"]}}}"#
        #expect(agrees(Array(message.utf8)))
        let v = try #require(plain(Array(message.utf8)))
        #expect(v["payload"]?["variables"]?["first"] == .int(50))
        #expect(v["payload"]?["query"].map { if case .string(let s) = $0 { s.contains("\n  category") && s.contains("\"x\"") } else { false } } == true)
    }

    @Test(arguments: [
        // Whitespace around everything; every kind of top-level value.
        " \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } } \n", "[]", "{}", "\"\"", "0", "-0", "123456789012345678",
        "-123456789012345678", "true", "false", "null", "[[[[[]]]]]", #"{"":""}"#, #"["\"\\\/\b\f\n\r\t"]"#,
    ])
    func theSubsetIsReadAsJanssonReadsIt(_ text: String) {
        #expect(agrees(Array(text.utf8)))
    }

    @Test(arguments: [
        // Outside the subset, valid JSON: jansson reads these.
        #"["\u0041"]"#, "[\"caf\u{E9}\"]", "1.5", "1e3", "1E3", "-0.0", "1234567890123456789", "99999999999999999999",
        #"{"a":1,"a":2}"#, "[\"\u{7F}\"]",
        // Not JSON: jansson's error is the answer.
        "", " ", "{", "[1,]", "{\"a\":1,}", "[01]", "-", "--1", "+1", "tru", "nul", "[1 2]", "{\"a\" 1}", "{a:1}",
        "'a'", "[\"\u{1}\"]", "\"abc", "\"\\x\"", "\"\\", "{} {}", "[] x", "\u{0}", "[1]\u{0}", "NaN", "[.5]",
    ])
    func everythingElseIsLeftToJansson(_ text: String) {
        #expect(plain(Array(text.utf8)) == nil)
    }

    @Test func theLimitsLeaveTheRestToJansson() {
        let deep = String(repeating: "[", count: PlainJSON.maxDepth) + String(repeating: "]", count: PlainJSON.maxDepth)
        #expect(agrees(Array(deep.utf8)))
        let deeper = "[" + deep + "]"
        #expect(plain(Array(deeper.utf8)) == nil)
        #expect(jansson(Array(deeper.utf8)) != nil)
        let members = (0..<PlainJSON.maxMembers).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(agrees(Array("{\(members)}".utf8)))
        #expect(plain(Array("{\(members),\"more\":1}".utf8)) == nil)
    }

    /// Strings are scanned eight bytes at a time: every length up to 40, with each kind of byte
    /// that ends or breaks a run at every position, read as jansson reads it (or left to it).
    @Test func everyPositionOfAStringsSpecialBytes() {
        let specials: [[UInt8]] = [Array("\\n".utf8), Array("\\\"".utf8), [0x1F], [0x7F], [0xC3, 0xA9], Array("\"".utf8), [0x20], [0x7E]]
        var read = 0
        for length in 0...40 {
            for at in 0...length {
                for special in specials {
                    var body = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    body.insert(contentsOf: special, at: at)
                    let text = [UInt8(ascii: "\"")] + body + [UInt8(ascii: "\"")]
                    if agrees(text) { read += 1 }
                    // A control byte or a byte outside ASCII is always left to jansson.
                    if special == [0x1F] || special == [0x7F] || special == [0xC3, 0xA9] { #expect(plain(text) == nil) }
                }
            }
        }
        #expect(read > 0)
    }

    /// Through `JSONParser.parse`: the fast path's answer, and jansson's for the rest (its errors
    /// with their positions).
    @Test func jsonParserAnswersTheSameEitherWay() throws {
        let unicode = Array("{\"q\":\"caf\u{E9}\"}".utf8)
        let v = try unicode.withUnsafeBytes { try JSONParser.parse($0) }
        #expect(v["q"] == .string("caf\u{E9}"))
        do {
            _ = try JSONParser.parse(Array("{\"a\":1,}".utf8))
            Issue.record("a trailing comma was accepted")
        } catch {
            #expect(error.line == 1 && error.column > 0)
        }
    }

    /// Random texts near the subset — generated values, then mutated byte by byte — through
    /// both readers: 30,000 texts from a fixed seed, every one the fast path reads checked.
    @Test func randomTextsAgreeWithJansson() {
        var rng = SplitMix64(seed: 0x5EED_43)
        var read = 0, total = 0
        let alphabet = Array(" \t\n{}[],:\"\\/-+.0123456789eEtruefalsn\u{1}aé".utf8)
        for _ in 0..<30_000 {
            var text = Array(Self.generate(&rng, depth: 0).utf8)
            let mutations = Int(rng.next() % 4)
            for _ in 0..<mutations where !text.isEmpty {
                let at = Int(rng.next() % UInt64(text.count))
                switch rng.next() % 3 {
                case 0: text.remove(at: at)
                case 1: text.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                default: text[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                }
            }
            total += 1
            if agrees(text) { read += 1 }
        }
        // Both kinds were exercised: many texts read by the fast path, many left to jansson.
        #expect(read > total / 4 && read < total, "\(read) of \(total) read by the fast path")
    }

    static func generate(_ rng: inout SplitMix64, depth: Int) -> String {
        let pick = rng.next() % (depth > 4 ? 6 : 9)
        switch pick {
        case 0: return "null"
        case 1: return rng.next() % 2 == 0 ? "true" : "false"
        case 2:
            let digits = 1 + Int(rng.next() % 20)
            let n = String((0..<digits).map { _ in Character(String(rng.next() % 10)) })
            return (rng.next() % 3 == 0 ? "-" : "") + n
        case 3: return rng.next() % 5 == 0 ? "\(Double(rng.next() % 1000) / 8)" : "\(rng.next() % 1000)"
        case 4, 5:
            let pieces = ["a", "b", " ", "\\n", "\\\"", "\\\\", "\\/", "\\t", "\\u0041", "é", "{", "]", "'", "query { x }"]
            let s = (0..<Int(rng.next() % 6)).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
            return "\"\(s)\""
        case 6, 7:
            let keys = ["a", "b", "id", "type", "payload", "a"]
            let members = (0..<Int(rng.next() % 5)).map { _ in
                "\"\(keys[Int(rng.next() % UInt64(keys.count))])\"" + (rng.next() % 4 == 0 ? " : " : ":") + generate(&rng, depth: depth + 1)
            }
            return "{" + members.joined(separator: rng.next() % 4 == 0 ? " , " : ",") + "}"
        default:
            return "[" + (0..<Int(rng.next() % 5)).map { _ in generate(&rng, depth: depth + 1) }.joined(separator: ",") + "]"
        }
    }
}
