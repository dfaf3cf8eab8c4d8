import Schema

/// Resolves __Schema, __Type, __Field, __InputValue, __EnumValue and __Directive over the
/// in-memory schema (spec 4.2).
final class IntrospectionResolver {
    let schema: GraphQLSchema

    init(schema: GraphQLSchema) { self.schema = schema }

    func resolve(type: String, field: PlannedField, objects: [ObjectValue]) throws(GraphQLError) -> [ResolvedValue] {
        objects.map { resolve(type: type, field: field, object: $0) }
    }

    private func typeValue(_ t: TypeRef) -> ResolvedValue { .object(.introType(t)) }
    private func text(_ s: String?) -> ResolvedValue { s.map { .string($0) } ?? .null }

    private func resolve(type: String, field f: PlannedField, object: ObjectValue) -> ResolvedValue {
        let includeDeprecated = f.bool("includeDeprecated") ?? false
        switch object {
        case .introSchema:
            switch f.name {
            case "description": return text(schema.description)
            case "types": return .list(schema.typeNames.map { typeValue(.named($0)) })
            case "queryType": return typeValue(.named(schema.queryType))
            case "mutationType": return schema.mutationType.map { typeValue(.named($0)) } ?? .null
            case "subscriptionType": return schema.subscriptionType.map { typeValue(.named($0)) } ?? .null
            case "directives": return .list(schema.directives.map { .object(.introDirective($0)) })
            default: return .null
            }
        case .introType(let ref):
            switch ref {
            case .nonNull(let inner), .list(let inner):
                switch f.name {
                case "kind": return .enumName(ref.isNonNull ? "NON_NULL" : "LIST")
                case "ofType": return typeValue(inner)
                case "fields", "interfaces", "possibleTypes", "enumValues", "inputFields": return .null
                default: return .null
                }
            case .named(let name):
                guard let t = schema.type(name) else { return .null }
                switch f.name {
                case "kind": return .enumName(t.kind.rawValue)
                case "name": return .string(t.name)
                case "description": return text(t.description)
                case "specifiedByURL": return text(t.specifiedByURL)
                // graphql-js 16.9+ and graphql-core 3.3 ask for it with their `oneOf` option (no
                // input type of this schema is a OneOf input object).
                case "isOneOf": return t.kind == .inputObject ? .bool(false) : .null
                case "ofType": return .null
                case "fields":
                    guard t.kind == .object || t.kind == .interface else { return .null }
                    return .list(t.fields.filter { includeDeprecated || !$0.isDeprecated }.map { .object(.introField($0)) })
                case "interfaces":
                    guard t.kind == .object || t.kind == .interface else { return .null }
                    return .list(t.interfaces.map { typeValue(.named($0)) })
                case "possibleTypes":
                    guard t.kind.isAbstract else { return .null }
                    return .list(t.possibleTypes.map { typeValue(.named($0)) })
                case "enumValues":
                    guard t.kind == .enumType else { return .null }
                    return .list(t.enumValues.filter { includeDeprecated || !$0.isDeprecated }.map { .object(.introEnumValue($0)) })
                case "inputFields":
                    guard t.kind == .inputObject else { return .null }
                    return .list(t.inputFields.filter { includeDeprecated || !$0.isDeprecated }.map { .object(.introInputValue($0)) })
                default: return .null
                }
            }
        case .introField(let d):
            switch f.name {
            case "name": return .string(d.name)
            case "description": return text(d.description)
            case "args":
                return .list(d.arguments.filter { includeDeprecated || !$0.isDeprecated }.map { .object(.introInputValue($0)) })
            case "type": return typeValue(d.type)
            case "isDeprecated": return .bool(d.isDeprecated)
            case "deprecationReason": return text(d.deprecationReason)
            default: return .null
            }
        case .introInputValue(let d):
            switch f.name {
            case "name": return .string(d.name)
            case "description": return text(d.description)
            case "type": return typeValue(d.type)
            case "defaultValue": return d.defaultValue.map { .string(Printer.print($0)) } ?? .null
            case "isDeprecated": return .bool(d.isDeprecated)
            case "deprecationReason": return text(d.deprecationReason)
            default: return .null
            }
        case .introEnumValue(let d):
            switch f.name {
            case "name": return .string(d.name)
            case "description": return text(d.description)
            case "isDeprecated": return .bool(d.isDeprecated)
            case "deprecationReason": return text(d.deprecationReason)
            default: return .null
            }
        case .introDirective(let d):
            switch f.name {
            case "name": return .string(d.name)
            case "description": return text(d.description)
            case "isRepeatable": return .bool(d.isRepeatable)
            case "locations": return .list(d.locations.map { .enumName($0) })
            case "args":
                return .list(d.arguments.filter { includeDeprecated || !$0.isDeprecated }.map { .object(.introInputValue($0)) })
            default: return .null
            }
        default:
            return .null
        }
    }
}
