import Testing
@testable import Gateway
import Resolvers
import Schema

@Suite struct JSONInputTests {
    @Test func convertsEveryTypeKeepingMemberOrder() throws {
        let v = try JSONParser.parse(#"{"z":1,"a":[true,false,null,1.5,"s\u0000t"],"m":{"k":-9007199254740993}}"#)
        guard case .object(let members) = v else { Issue.record("expected object"); return }
        #expect(members.map(\.0) == ["z", "a", "m"])
        #expect(v["a"] == .array([.bool(true), .bool(false), .null, .double(1.5), .string("s\u{0}t")]))
        #expect(v["m"]?["k"] == .int(-9007199254740993))
    }

    @Test func scalarsAtTopLevel() throws {
        #expect(try JSONParser.parse("1") == .int(1))
        #expect(try JSONParser.parse("\"x\"") == .string("x"))
        #expect(try JSONParser.parse("null") == .null)
    }

    @Test func errorsCarryPosition() {
        #expect(throws: JSONParseError(message: "invalid token near 'x'", line: 1, column: 1)) {
            _ = try JSONParser.parse("x")
        }
        #expect(throws: JSONParseError.self) { _ = try JSONParser.parse("{\"a\":1,}") }
        #expect(throws: JSONParseError.self) { _ = try JSONParser.parse(Array([0x22, 0xC3, 0x28, 0x22])) }
        // A number too large even for a double is still refused.
        #expect(throws: JSONParseError.self) { _ = try JSONParser.parse("1e400") }
        #expect(throws: JSONParseError.self) { _ = try JSONParser.parse("[1e999, 99999999999999999999999]") }
    }

    /// Integers past 64 bits are valid JSON: read as doubles (as JavaScript reads them), and then
    /// every number of that text is a double — integral ones coerce to Int and ID as before.
    @Test func integersBeyond64BitsAreDoubles() throws {
        #expect(try JSONParser.parse("99999999999999999999999") == .double(1e23))
        #expect(try JSONParser.parse("-99999999999999999999") == .double(-1e20))
        #expect(try JSONParser.parse(#"{"a":99999999999999999999,"b":3}"#) == .object([("a", .double(1e20)), ("b", .double(3))]))
        #expect(try JSONParser.parse(#"{"b":3}"#) == .object([("b", .int(3))]))
    }

    @Test func deepNestingIsRejectedNotCrashing() {
        let deep = String(repeating: "[", count: 3000) + String(repeating: "]", count: 3000)
        #expect(throws: JSONParseError.self) { _ = try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: 400) + String(repeating: "]", count: 400)
        #expect(throws: Never.self) { _ = try JSONParser.parse(ok) }
    }
}
