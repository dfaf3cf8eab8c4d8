// libFuzzer target: arbitrary bytes as a GraphQL document through the lexer, the parser and
// validation against the catalog schema, the errors serialised as the server sends them. Oracles:
// the error response is valid JSON, and a value literal printed and parsed again prints the same.
import FuzzSupport
import Resolvers
import Schema

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let source = Source(bytes: fuzzBytes(data, size))
    let errors: [GraphQLError]
    do {
        let document = try Parser.parse(source)
        errors = validate(schema: CatalogSchema.shared, document: document)
    } catch {
        errors = [error.error]
    }
    if !errors.isEmpty { checkResponse(.requestErrors(errors)) }
    if let value = try? Parser.parseValue(source) {
        let printed = Printer.print(value)
        guard let again = try? Parser.parseValue(Source(printed)) else {
            fuzzFailure("printed value does not parse: \(printed)")
        }
        let reprinted = Printer.print(again)
        if reprinted != printed { fuzzFailure("print is not stable: \(printed) vs \(reprinted)") }
    }
    return 0
}

runFuzzer(fuzzOne)
