import Foundation
import Testing
@testable import Schema

/// The repository root (this file is Tests/SchemaTests/CatalogSchemaTests.swift).
private let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
private let projectSchemaPath = repoRoot.appendingPathComponent("schema.graphql").path
/// The contract lives beside the repository: ../shared/contract/schema.graphql.
private let contractSchemaPath = repoRoot.deletingLastPathComponent()
    .appendingPathComponent("shared/contract/schema.graphql").path

/// A default value in canonical form, for comparing schemas.
func canonical(_ value: Value?) -> String {
    guard let value else { return "-" }
    switch value {
    case .variable(let v): return "$" + v.name.value
    case .int(let s, _), .float(let s, _): return s
    case .string(let s, _, _): return s.debugDescription
    case .boolean(let b, _): return String(b)
    case .null: return "null"
    case .enumValue(let e, _): return e
    case .list(let items, _): return "[" + items.map(canonical).joined(separator: ",") + "]"
    case .object(let fields, _):
        return "{" + fields.map { "\($0.name.value):\(canonical($0.value))" }.joined(separator: ",") + "}"
    }
}

/// Everything about a schema but its descriptions, one line per element, in order.
func shape(_ schema: GraphQLSchema) -> [String] {
    var lines = ["schema query:\(schema.queryType) mutation:\(schema.mutationType ?? "-") subscription:\(schema.subscriptionType ?? "-")"]
    for name in schema.typeNames {
        guard let t = schema.type(name) else { lines.append("missing \(name)"); continue }
        lines.append("\(t.kind.rawValue) \(name) implements:\(t.interfaces) possible:\(t.possibleTypes)")
        for f in t.fields {
            lines.append("  \(name).\(f.name): \(f.type) deprecated:\(f.deprecationReason ?? "-")")
            for a in f.arguments {
                lines.append("    \(name).\(f.name)(\(a.name): \(a.type) = \(canonical(a.defaultValue)))")
            }
        }
        for f in t.inputFields { lines.append("  \(name).\(f.name): \(f.type) = \(canonical(f.defaultValue))") }
        for v in t.enumValues { lines.append("  \(name).\(v.name) deprecated:\(v.deprecationReason ?? "-")") }
    }
    return lines
}

@Suite struct CatalogSchemaTests {
    @Test func embeddedSDLEqualsSchemaFile() throws {
        let file = try Data(contentsOf: URL(fileURLWithPath: projectSchemaPath))
        #expect(Array(file) == Array(CatalogSchema.sdl.utf8), "Sources/Schema/Type/CatalogSchema.swift must embed schema.graphql unchanged")
    }

    @Test func embeddedSchemaBuilds() throws {
        let schema = try GraphQLSchema.build(sdl: CatalogSchema.sdl)
        #expect(schema.queryType == "Query")
        #expect(schema.subscriptionType == "Subscription")
        #expect(schema.mutationType == nil)
        #expect(CatalogSchema.shared.typeNames == schema.typeNames)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: contractSchemaPath), "needs ../shared/contract"))
    func matchesContractTypeForType() throws {
        // The contract's queries plus its sync additions (sync.graphql extends Query and Subscription).
        let syncPath = (contractSchemaPath as NSString).deletingLastPathComponent + "/sync.graphql"
        let contract = try GraphQLSchema.build(sdl: String(contentsOfFile: contractSchemaPath, encoding: .utf8)
            + "\n" + String(contentsOfFile: syncPath, encoding: .utf8))
        let ours = CatalogSchema.shared
        let expected = shape(contract)
        let actual = shape(ours)
        #expect(expected.count > 80)
        #expect(actual.count == expected.count)
        for (a, e) in zip(actual, expected) { #expect(a == e) }
    }

    @Test func everyTypeAndFieldIsDescribed() {
        let schema = CatalogSchema.shared
        #expect(schema.description?.isEmpty == false)
        for name in schema.typeNames where !name.hasPrefix("__") {
            guard let t = schema.type(name) else { continue }
            #expect(t.description?.isEmpty == false, "type \(name)")
            for f in t.fields {
                #expect(f.description?.isEmpty == false, "field \(name).\(f.name)")
                for a in f.arguments { #expect(a.description?.isEmpty == false, "argument \(name).\(f.name)(\(a.name):)") }
            }
            for f in t.inputFields { #expect(f.description?.isEmpty == false, "input field \(name).\(f.name)") }
            for v in t.enumValues { #expect(v.description?.isEmpty == false, "enum value \(name).\(v.name)") }
        }
    }

    /// The order graphql-js 16 gives `buildSchema(contract).getTypeMap()`.
    @Test func typeOrderMatchesGraphQLJS() {
        #expect(CatalogSchema.shared.typeNames == [
            "Query", "ID", "Int", "String", "Subscription", "ProductFilter", "Boolean", "ProductOrder",
            "CatalogVersion", "Category", "Product", "VideoKind", "Video", "Spec", "KitItem", "Manufacturer",
            "LetterCount", "ProductConnection", "ProductEdge", "PageInfo", "CatalogChangeSet", "__Schema", "__Type", "__TypeKind",
            "__Field", "__InputValue", "__EnumValue", "__Directive", "__DirectiveLocation",
        ])
    }
}
