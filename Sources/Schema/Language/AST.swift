// The abstract syntax tree of GraphQL documents (executable and type-system definitions),
// after graphql-js `src/language/ast.ts`. Every node carries its byte Location in the Source;
// nodes are immutable final classes so that passes can key caches on node identity.

public final class Name: Sendable {
    public let value: String
    public let loc: Location
    public init(_ value: String, loc: Location) { self.value = value; self.loc = loc }
}

// MARK: Documents

public final class Document: Sendable {
    public let definitions: [Definition]
    public let loc: Location
    public let source: Source
    public init(definitions: [Definition], loc: Location, source: Source) {
        self.definitions = definitions; self.loc = loc; self.source = source
    }

    public var operations: [OperationDefinition] {
        definitions.compactMap { if case .operation(let o) = $0 { return o } else { return nil } }
    }
    public var fragments: [FragmentDefinition] {
        definitions.compactMap { if case .fragment(let f) = $0 { return f } else { return nil } }
    }
    /// Line/column of a byte offset in this document's source.
    public func location(_ loc: Location) -> SourceLocation { source.location(of: loc.start) }
}

public enum Definition: Sendable {
    case operation(OperationDefinition)
    case fragment(FragmentDefinition)
    /// Type-system definitions and extensions (schema files; rejected in requests by
    /// ExecutableDefinitions).
    case typeSystem(TypeSystemDefinition)

    public var loc: Location {
        switch self {
        case .operation(let o): return o.loc
        case .fragment(let f): return f.loc
        case .typeSystem(let t): return t.loc
        }
    }
}

public enum OperationType: String, Sendable {
    case query, mutation, subscription
}

public final class OperationDefinition: Sendable {
    public let operation: OperationType
    public let name: Name?
    public let variableDefinitions: [VariableDefinition]
    public let directives: [Directive]
    public let selectionSet: SelectionSet
    public let loc: Location
    public init(operation: OperationType, name: Name?, variableDefinitions: [VariableDefinition],
                directives: [Directive], selectionSet: SelectionSet, loc: Location) {
        self.operation = operation; self.name = name; self.variableDefinitions = variableDefinitions
        self.directives = directives; self.selectionSet = selectionSet; self.loc = loc
    }
}

public final class VariableDefinition: Sendable {
    public let variable: Variable
    public let type: TypeNode
    public let defaultValue: Value?
    public let directives: [Directive]
    public let loc: Location
    public init(variable: Variable, type: TypeNode, defaultValue: Value?, directives: [Directive], loc: Location) {
        self.variable = variable; self.type = type; self.defaultValue = defaultValue
        self.directives = directives; self.loc = loc
    }
}

public final class Variable: Sendable {
    public let name: Name
    public let loc: Location
    public init(name: Name, loc: Location) { self.name = name; self.loc = loc }
}

public final class SelectionSet: Sendable {
    public let selections: [Selection]
    public let loc: Location
    public init(selections: [Selection], loc: Location) { self.selections = selections; self.loc = loc }
}

public enum Selection: Sendable {
    case field(Field)
    case fragmentSpread(FragmentSpread)
    case inlineFragment(InlineFragment)

    public var loc: Location {
        switch self {
        case .field(let f): return f.loc
        case .fragmentSpread(let s): return s.loc
        case .inlineFragment(let i): return i.loc
        }
    }
    public var directives: [Directive] {
        switch self {
        case .field(let f): return f.directives
        case .fragmentSpread(let s): return s.directives
        case .inlineFragment(let i): return i.directives
        }
    }
}

public final class Field: Sendable {
    public let alias: Name?
    public let name: Name
    public let arguments: [Argument]
    public let directives: [Directive]
    public let selectionSet: SelectionSet?
    public let loc: Location
    public init(alias: Name?, name: Name, arguments: [Argument], directives: [Directive],
                selectionSet: SelectionSet?, loc: Location) {
        self.alias = alias; self.name = name; self.arguments = arguments
        self.directives = directives; self.selectionSet = selectionSet; self.loc = loc
    }
    /// The key this field's value has in the response.
    public var responseKey: String { alias?.value ?? name.value }
}

public final class Argument: Sendable {
    public let name: Name
    public let value: Value
    public let loc: Location
    public init(name: Name, value: Value, loc: Location) { self.name = name; self.value = value; self.loc = loc }
}

public final class FragmentSpread: Sendable {
    public let name: Name
    public let directives: [Directive]
    public let loc: Location
    public init(name: Name, directives: [Directive], loc: Location) {
        self.name = name; self.directives = directives; self.loc = loc
    }
}

public final class InlineFragment: Sendable {
    public let typeCondition: NamedType?
    public let directives: [Directive]
    public let selectionSet: SelectionSet
    public let loc: Location
    public init(typeCondition: NamedType?, directives: [Directive], selectionSet: SelectionSet, loc: Location) {
        self.typeCondition = typeCondition; self.directives = directives
        self.selectionSet = selectionSet; self.loc = loc
    }
}

public final class FragmentDefinition: Sendable {
    public let name: Name
    public let typeCondition: NamedType
    public let directives: [Directive]
    public let selectionSet: SelectionSet
    public let loc: Location
    public init(name: Name, typeCondition: NamedType, directives: [Directive], selectionSet: SelectionSet, loc: Location) {
        self.name = name; self.typeCondition = typeCondition; self.directives = directives
        self.selectionSet = selectionSet; self.loc = loc
    }
}

public final class Directive: Sendable {
    public let name: Name
    public let arguments: [Argument]
    public let loc: Location
    public init(name: Name, arguments: [Argument], loc: Location) {
        self.name = name; self.arguments = arguments; self.loc = loc
    }
}

// MARK: Values

public final class ObjectField: Sendable {
    public let name: Name
    public let value: Value
    public let loc: Location
    public init(name: Name, value: Value, loc: Location) { self.name = name; self.value = value; self.loc = loc }
}

public indirect enum Value: Sendable {
    case variable(Variable)
    /// The literal's source text (e.g. "-12"), kept so coercion can report range errors.
    case int(String, Location)
    case float(String, Location)
    /// The decoded string value (escapes and block-string indentation resolved).
    case string(String, block: Bool, Location)
    case boolean(Bool, Location)
    case null(Location)
    case enumValue(String, Location)
    case list([Value], Location)
    case object([ObjectField], Location)

    public var loc: Location {
        switch self {
        case .variable(let v): return v.loc
        case .int(_, let l), .float(_, let l), .boolean(_, let l), .null(let l),
             .enumValue(_, let l), .list(_, let l), .object(_, let l):
            return l
        case .string(_, _, let l): return l
        }
    }
}

// MARK: Type references

public indirect enum TypeNode: Sendable {
    case named(NamedType)
    case list(TypeNode, Location)
    case nonNull(TypeNode, Location)

    public var loc: Location {
        switch self {
        case .named(let n): return n.loc
        case .list(_, let l), .nonNull(_, let l): return l
        }
    }
    /// The innermost named type.
    public var namedType: NamedType {
        switch self {
        case .named(let n): return n
        case .list(let t, _), .nonNull(let t, _): return t.namedType
        }
    }
}

public final class NamedType: Sendable {
    public let name: Name
    public let loc: Location
    public init(name: Name, loc: Location) { self.name = name; self.loc = loc }
}

// MARK: Type-system definitions (enough for this project's schema.graphql and extensions)

public final class InputValueDefinition: Sendable {
    public let description: String?
    public let name: Name
    public let type: TypeNode
    public let defaultValue: Value?
    public let directives: [Directive]
    public let loc: Location
    public init(description: String?, name: Name, type: TypeNode, defaultValue: Value?, directives: [Directive], loc: Location) {
        self.description = description; self.name = name; self.type = type
        self.defaultValue = defaultValue; self.directives = directives; self.loc = loc
    }
}

public final class FieldDefinition: Sendable {
    public let description: String?
    public let name: Name
    public let arguments: [InputValueDefinition]
    public let type: TypeNode
    public let directives: [Directive]
    public let loc: Location
    public init(description: String?, name: Name, arguments: [InputValueDefinition], type: TypeNode, directives: [Directive], loc: Location) {
        self.description = description; self.name = name; self.arguments = arguments
        self.type = type; self.directives = directives; self.loc = loc
    }
}

public final class EnumValueDefinition: Sendable {
    public let description: String?
    public let name: Name
    public let directives: [Directive]
    public let loc: Location
    public init(description: String?, name: Name, directives: [Directive], loc: Location) {
        self.description = description; self.name = name; self.directives = directives; self.loc = loc
    }
}

public struct RootOperationTypeDefinition: Sendable {
    public let operation: OperationType
    public let type: NamedType
    public init(operation: OperationType, type: NamedType) { self.operation = operation; self.type = type }
}

public enum TypeSystemDefinition: Sendable {
    /// `schema { query: Query ... }` (extension: `extend schema`).
    case schema(description: String?, directives: [Directive], operationTypes: [RootOperationTypeDefinition], isExtension: Bool, Location)
    case scalar(description: String?, name: Name, directives: [Directive], isExtension: Bool, Location)
    case object(description: String?, name: Name, interfaces: [NamedType], directives: [Directive], fields: [FieldDefinition], isExtension: Bool, Location)
    case interface(description: String?, name: Name, interfaces: [NamedType], directives: [Directive], fields: [FieldDefinition], isExtension: Bool, Location)
    case union(description: String?, name: Name, directives: [Directive], types: [NamedType], isExtension: Bool, Location)
    case enumType(description: String?, name: Name, directives: [Directive], values: [EnumValueDefinition], isExtension: Bool, Location)
    case inputObject(description: String?, name: Name, directives: [Directive], fields: [InputValueDefinition], isExtension: Bool, Location)
    case directive(description: String?, name: Name, arguments: [InputValueDefinition], repeatable: Bool, locations: [Name], Location)

    public var loc: Location {
        switch self {
        case .schema(_, _, _, _, let l), .scalar(_, _, _, _, let l), .object(_, _, _, _, _, _, let l),
             .interface(_, _, _, _, _, _, let l), .union(_, _, _, _, _, let l), .enumType(_, _, _, _, _, let l),
             .inputObject(_, _, _, _, _, let l), .directive(_, _, _, _, _, let l):
            return l
        }
    }
}
