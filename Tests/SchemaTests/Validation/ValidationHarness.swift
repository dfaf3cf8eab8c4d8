import Testing
@testable import Schema

/// The schemas validation tests run against: the project's catalog schema, and a small schema
/// with interfaces and unions for the rules that only matter with abstract types.
enum TestSchema: Sendable {
    case catalog
    case pets

    var schema: GraphQLSchema {
        switch self {
        case .catalog: return TestSchemas.catalog
        case .pets: return TestSchemas.pets
        }
    }
}

enum TestSchemas {
    static var catalog: GraphQLSchema { CatalogSchema.shared }
    static let pets: GraphQLSchema = {
        do {
            return try GraphQLSchema.build(sdl: petsSDL)
        } catch {
            preconditionFailure("test schema: \(error)")
        }
    }()

    static let petsSDL = #"""
        interface Node { id: ID! }
        interface Named { name: String }
        type Dog implements Node & Named { id: ID! name: String barks: Boolean nickname: String owner: Human }
        type Cat implements Node & Named { id: ID! name: String meows: Boolean nickname: String }
        type Human implements Node & Named { id: ID! name: String pets: [Pet] iq: Int }
        union Pet = Dog | Cat
        union Being = Dog | Human
        input Complex { requiredField: Boolean! nonNullField: Boolean! = false intField: Int stringListField: [String] nested: Complex }
        type Query { node(id: ID!): Node pet: Pet being: Being dog: Dog cat: Cat human(id: ID): Human named: Named complex(arg: Complex): Boolean measure(f: Float): Float }
        type Subscription { newDog: Dog newCat: Cat }
        """#
}

/// Parses a document that must be syntactically valid.
func parseDocument(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> Document? {
    do {
        return try Parser.parse(Source(text))
    } catch {
        Issue.record("syntax error: \(error.error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Each error as `message [line:column ...]`.
func formatted(_ errors: [GraphQLError]) -> [String] {
    errors.map { e in e.message + " [" + e.locations.map { "\($0.line):\($0.column)" }.joined(separator: " ") + "]" }
}

/// One row of a validation table: a document and the errors validation must give, in order.
struct ValidationCase: Sendable, CustomTestStringConvertible {
    let name: String
    let schema: TestSchema
    let query: String
    let expected: [String]

    init(_ name: String, schema: TestSchema = .catalog, _ query: String, _ expected: [String]) {
        self.name = name; self.schema = schema; self.query = query; self.expected = expected
    }

    var testDescription: String { name }

    func check(sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        guard let document = parseDocument(query, sourceLocation: sourceLocation) else { return }
        let actual = formatted(validate(schema: schema.schema, document: document))
        #expect(actual == expected, "\(name)", sourceLocation: sourceLocation)
    }
}
