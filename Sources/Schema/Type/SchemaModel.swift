// The schema model the validator and executor work on, built from SDL (see SchemaBuilder.swift).
// Immutable after construction and shared by every thread.

/// A reference to a type as written in a field, argument or variable definition.
public indirect enum TypeRef: Hashable, Sendable, CustomStringConvertible {
    case named(String)
    case list(TypeRef)
    case nonNull(TypeRef)

    public var namedType: String {
        switch self {
        case .named(let n): return n
        case .list(let t), .nonNull(let t): return t.namedType
        }
    }
    public var isNonNull: Bool { if case .nonNull = self { return true } else { return false } }
    /// The type without its outermost non-null wrapper.
    public var nullable: TypeRef { if case .nonNull(let t) = self { return t } else { return self } }
    public var description: String {
        switch self {
        case .named(let n): return n
        case .list(let t): return "[\(t)]"
        case .nonNull(let t): return "\(t)!"
        }
    }

    public init(_ node: TypeNode) {
        switch node {
        case .named(let n): self = .named(n.name.value)
        case .list(let t, _): self = .list(TypeRef(t))
        case .nonNull(let t, _): self = .nonNull(TypeRef(t))
        }
    }
}

public enum TypeKind: String, Sendable {
    case scalar = "SCALAR"
    case object = "OBJECT"
    case interface = "INTERFACE"
    case union = "UNION"
    case enumType = "ENUM"
    case inputObject = "INPUT_OBJECT"

    public var isInputType: Bool { self == .scalar || self == .enumType || self == .inputObject }
    public var isOutputType: Bool { self != .inputObject }
    public var isLeaf: Bool { self == .scalar || self == .enumType }
    public var isComposite: Bool { self == .object || self == .interface || self == .union }
    public var isAbstract: Bool { self == .interface || self == .union }
}

public struct InputValueDef: Sendable {
    public let name: String
    public let description: String?
    public let type: TypeRef
    /// The default as its AST literal (coerced against `type` when used).
    public let defaultValue: Value?
    public let isDeprecated: Bool
    public let deprecationReason: String?

    public init(name: String, description: String?, type: TypeRef, defaultValue: Value?,
                isDeprecated: Bool = false, deprecationReason: String? = nil) {
        self.name = name; self.description = description; self.type = type; self.defaultValue = defaultValue
        self.isDeprecated = isDeprecated; self.deprecationReason = deprecationReason
    }
}

public struct FieldDef: Sendable {
    public let name: String
    public let description: String?
    public let arguments: [InputValueDef]
    public let type: TypeRef
    public let isDeprecated: Bool
    public let deprecationReason: String?

    public init(name: String, description: String?, arguments: [InputValueDef], type: TypeRef,
                isDeprecated: Bool = false, deprecationReason: String? = nil) {
        self.name = name; self.description = description; self.arguments = arguments; self.type = type
        self.isDeprecated = isDeprecated; self.deprecationReason = deprecationReason
    }

    public func argument(_ name: String) -> InputValueDef? { arguments.first { $0.name == name } }
}

public struct EnumValueDef: Sendable {
    public let name: String
    public let description: String?
    public let isDeprecated: Bool
    public let deprecationReason: String?
    public init(name: String, description: String?, isDeprecated: Bool = false, deprecationReason: String? = nil) {
        self.name = name; self.description = description
        self.isDeprecated = isDeprecated; self.deprecationReason = deprecationReason
    }
}

public final class NamedTypeDef: Sendable {
    public let name: String
    public let kind: TypeKind
    public let description: String?
    /// Object and interface fields in definition order.
    public let fields: [FieldDef]
    public let fieldsByName: [String: Int]
    /// Interfaces an object or interface implements.
    public let interfaces: [String]
    /// Union members (and, for interfaces, implementing objects), filled by the builder.
    public let possibleTypes: [String]
    public let enumValues: [EnumValueDef]
    public let inputFields: [InputValueDef]
    public let specifiedByURL: String?

    public init(name: String, kind: TypeKind, description: String?, fields: [FieldDef] = [],
                interfaces: [String] = [], possibleTypes: [String] = [], enumValues: [EnumValueDef] = [],
                inputFields: [InputValueDef] = [], specifiedByURL: String? = nil) {
        self.name = name; self.kind = kind; self.description = description; self.fields = fields
        var index: [String: Int] = [:]
        for (i, f) in fields.enumerated() { index[f.name] = i }
        self.fieldsByName = index
        self.interfaces = interfaces; self.possibleTypes = possibleTypes; self.enumValues = enumValues
        self.inputFields = inputFields; self.specifiedByURL = specifiedByURL
    }

    public func field(_ name: String) -> FieldDef? { fieldsByName[name].map { fields[$0] } }
    public func inputField(_ name: String) -> InputValueDef? { inputFields.first { $0.name == name } }
    public func enumValue(_ name: String) -> EnumValueDef? { enumValues.first { $0.name == name } }
}

public struct DirectiveDef: Sendable {
    public let name: String
    public let description: String?
    /// __DirectiveLocation names, e.g. "FIELD", "FRAGMENT_SPREAD", "QUERY".
    public let locations: [String]
    public let arguments: [InputValueDef]
    public let isRepeatable: Bool
    public init(name: String, description: String?, locations: [String], arguments: [InputValueDef], isRepeatable: Bool) {
        self.name = name; self.description = description; self.locations = locations
        self.arguments = arguments; self.isRepeatable = isRepeatable
    }
}

/// A complete schema: user types, the built-in scalars they reference (as in graphql-js, an
/// unreferenced one such as Float is absent), the introspection types
/// (__Schema, __Type, ...), and the directives @include, @skip, @deprecated, @specifiedBy.
public final class GraphQLSchema: Sendable {
    public let description: String?
    public let types: [String: NamedTypeDef]
    /// Type names in the order introspection lists them (definition order, then built-ins).
    public let typeNames: [String]
    public let queryType: String
    public let mutationType: String?
    public let subscriptionType: String?
    public let directives: [DirectiveDef]

    public init(description: String?, types: [NamedTypeDef], queryType: String, mutationType: String?,
                subscriptionType: String?, directives: [DirectiveDef]) {
        self.description = description
        var map: [String: NamedTypeDef] = [:]
        for t in types { map[t.name] = t }
        self.types = map
        self.typeNames = types.map(\.name)
        self.queryType = queryType; self.mutationType = mutationType; self.subscriptionType = subscriptionType
        self.directives = directives
    }

    public func type(_ name: String) -> NamedTypeDef? { types[name] }
    public func directive(_ name: String) -> DirectiveDef? { directives.first { $0.name == name } }

    public func rootType(_ op: OperationType) -> NamedTypeDef? {
        switch op {
        case .query: return types[queryType]
        case .mutation: return mutationType.flatMap { types[$0] }
        case .subscription: return subscriptionType.flatMap { types[$0] }
        }
    }

    /// The field `name` on composite type `parent`, including the meta-fields
    /// __typename (any composite type) and __schema / __type (query root only).
    public func fieldDef(parent: String, name: String) -> FieldDef? {
        if name == "__typename" { return Self.typenameField }
        if parent == queryType {
            if name == "__schema" { return Self.schemaField }
            if name == "__type" { return Self.typeField }
        }
        return types[parent]?.field(name)
    }

    /// True when `sub` is `sup`, or an object that belongs to abstract `sup`.
    public func isSubType(_ sub: String, of sup: String) -> Bool {
        if sub == sup { return true }
        guard let t = types[sup], t.kind.isAbstract else { return false }
        return t.possibleTypes.contains(sub)
    }

    /// Concrete object types a composite type may resolve to.
    public func possibleTypes(_ name: String) -> [String] {
        guard let t = types[name] else { return [] }
        return t.kind == .object ? [name] : t.possibleTypes
    }

    public static let typenameField = FieldDef(
        name: "__typename", description: "The name of the current Object type at runtime.",
        arguments: [], type: .nonNull(.named("String")))
    public static let schemaField = FieldDef(
        name: "__schema", description: "Access the current type schema of this server.",
        arguments: [], type: .nonNull(.named("__Schema")))
    public static let typeField = FieldDef(
        name: "__type", description: "Request the type information of a single type.",
        arguments: [InputValueDef(name: "name", description: nil, type: .nonNull(.named("String")), defaultValue: nil)],
        type: .named("__Type"))
}
