// Input coercion (spec 6.1.2 Coercing Variable Values, 6.4.1 Coercing Field Arguments, 3.5/3.9/
// 3.10/3.11 input coercion of scalars, enums, input objects and lists), with graphql-js 16's
// messages (`execution/values.ts`, `utilities/coerceInputValue.ts`, `utilities/valueFromAST.ts`,
// `type/scalars.ts`).
//
// Coerced values are JSONValue: .string for ID, String and enum values, .int for Int, .double for
// Float, .bool, .array, and .object with input fields in definition order (fields neither given
// nor defaulted are absent). A variable that was not provided and has no default is absent
// from the coerced variables; an explicit null is .null.

// MARK: Variables

/// The errors of a failed variable coercion (a request error: no execution).
public struct VariableCoercionErrors: Error, Sendable {
    public let errors: [GraphQLError]
    public init(_ errors: [GraphQLError]) { self.errors = errors }
}

/// Coerces the request's `variables` for one operation (spec CoerceVariableValues). Errors name
/// the variable and are located at its definition; at most 50 are reported.
public func coerceVariableValues(
    schema: GraphQLSchema, operation: OperationDefinition, inputs: [String: JSONValue], document: Document
) -> Result<[String: JSONValue], VariableCoercionErrors> {
    var errors: [GraphQLError] = []
    var coerced: [String: JSONValue] = [:]
    let maxErrors = 50
    // Built on the first error only: a request whose variables coerce never scans its source.
    var lines: LineIndex? = nil

    func fail(_ message: String, at loc: Location) -> Bool {
        if errors.count >= maxErrors {
            errors.append(GraphQLError("Too many errors processing variables, error limit reached. Execution aborted."))
            return false
        }
        if lines == nil { lines = LineIndex(document.source) }
        errors.append(GraphQLError(message, locations: [lines!.location(of: loc.start)]))
        return true
    }

    for def in operation.variableDefinitions {
        let name = def.variable.name.value
        let type = TypeRef(def.type)
        guard schema.inputTypeRef(type) != nil else {
            if !fail("Variable \"$\(name)\" expected value of type \"\(type)\" which cannot be used as an input type.",
                     at: def.type.loc) { break }
            continue
        }
        guard let value = inputs[name] else {
            if let defaultValue = def.defaultValue {
                if let v = valueFromAST(defaultValue, type: type, schema: schema, variables: [:]) { coerced[name] = v }
            } else if type.isNonNull {
                if !fail("Variable \"$\(name)\" of required type \"\(type)\" was not provided.", at: def.loc) { break }
            }
            continue
        }
        if value == .null && type.isNonNull {
            if !fail("Variable \"$\(name)\" of non-null type \"\(type)\" must not be null.", at: def.loc) { break }
            continue
        }
        var coercer = InputCoercer(schema: schema)
        let result = coercer.coerce(value, type: type, path: [])
        if coercer.failures.isEmpty {
            if let result { coerced[name] = result }
            continue
        }
        var stop = false
        for failure in coercer.failures {
            var prefix = "Variable \"$\(name)\" got invalid value \(MessageFormat.inspect(failure.value))"
            if !failure.path.isEmpty { prefix += " at \"\(name)\(pathText(failure.path))\"" }
            if !fail(prefix + "; " + failure.message, at: def.loc) { stop = true; break }
        }
        if stop { break }
    }
    return errors.isEmpty ? .success(coerced) : .failure(VariableCoercionErrors(errors))
}

private func pathText(_ path: [PathComponent]) -> String {
    var s = ""
    for p in path {
        switch p {
        case .key(let k): s += "." + k
        case .index(let i): s += "[\(i)]"
        }
    }
    return s
}

/// graphql-js `coerceInputValue`: a runtime (JSON) value against an input type, collecting
/// every failure with its path.
private struct InputCoercer {
    struct Failure {
        let path: [PathComponent]
        let value: JSONValue
        let message: String
    }

    let schema: GraphQLSchema
    var failures: [Failure] = []

    init(schema: GraphQLSchema) { self.schema = schema }

    mutating func coerce(_ value: JSONValue, type: TypeRef, path: [PathComponent]) -> JSONValue? {
        switch type {
        case .nonNull(let inner):
            if value != .null { return coerce(value, type: inner, path: path) }
            failures.append(Failure(path: path, value: value, message: "Expected non-nullable type \"\(type)\" not to be null."))
            return nil
        case _ where value == .null:
            return .null
        case .list(let item):
            if case .array(let items) = value {
                var out: [JSONValue] = []
                out.reserveCapacity(items.count)
                for (i, element) in items.enumerated() {
                    // A failed item still leaves a slot so that indexes stay aligned.
                    out.append(coerce(element, type: item, path: path + [.index(i)]) ?? .null)
                }
                return .array(out)
            }
            // A non-list value is a list of one.
            return coerce(value, type: item, path: path).map { .array([$0]) }
        case .named(let name):
            guard let def = schema.type(name) else { return nil }
            if def.kind == .inputObject { return coerceObject(value, def, path: path) }
            switch LeafCoercion.parseValue(value, type: def) {
            case .success(let v): return v
            case .failure(let error):
                failures.append(Failure(path: path, value: value, message: error.message))
                return nil
            }
        }
    }

    private mutating func coerceObject(_ value: JSONValue, _ def: NamedTypeDef, path: [PathComponent]) -> JSONValue? {
        guard case .object(let members) = value else {
            failures.append(Failure(path: path, value: value, message: "Expected type \"\(def.name)\" to be an object."))
            return nil
        }
        var out: [(String, JSONValue)] = []
        for field in def.inputFields {
            // As JSON.parse: a repeated member's last value wins.
            guard let fieldValue = members.last(where: { $0.0 == field.name })?.1 else {
                if let defaultValue = field.defaultValue {
                    if let v = valueFromAST(defaultValue, type: field.type, schema: schema, variables: [:]) {
                        out.append((field.name, v))
                    }
                } else if field.type.isNonNull {
                    failures.append(Failure(
                        path: path, value: value,
                        message: "Field \"\(field.name)\" of required type \"\(field.type)\" was not provided."))
                }
                continue
            }
            if let v = coerce(fieldValue, type: field.type, path: path + [.key(field.name)]) {
                out.append((field.name, v))
            }
        }
        var reported: Set<String> = []
        for (key, _) in members where def.inputField(key) == nil && reported.insert(key).inserted {
            let suggestions = Suggestions.list(key, def.inputFields.map(\.name))
            failures.append(Failure(
                path: path, value: value,
                message: "Field \"\(key)\" is not defined by type \"\(def.name)\"." + Suggestions.didYouMean(suggestions)))
        }
        return .object(out)
    }
}

// MARK: Arguments

/// Coerces a field's arguments (spec CoerceArgumentValues): defaults applied, a variable that
/// was not provided falls back to the default, an explicit null stays null. `node` is the
/// field (or directive) the arguments belong to, for the location of a missing argument.
public func coerceArgumentValues(
    schema: GraphQLSchema, definitions: [InputValueDef], arguments: [Argument], node: Location,
    variables: [String: JSONValue], document: Document
) throws(GraphQLError) -> [String: JSONValue] {
    var coerced: [String: JSONValue] = [:]
    func error(_ message: String, _ loc: Location) -> GraphQLError {
        GraphQLError(message, locations: [document.location(loc)])
    }
    for def in definitions {
        let name = def.name
        let type = def.type
        // As graphql-js keyMap: a repeated argument's last occurrence wins.
        guard let argument = arguments.last(where: { $0.name.value == name }) else {
            if let defaultValue = def.defaultValue {
                if let v = valueFromAST(defaultValue, type: type, schema: schema, variables: [:]) { coerced[name] = v }
            } else if type.isNonNull {
                throw error("Argument \"\(name)\" of required type \"\(type)\" was not provided.", node)
            }
            continue
        }
        let valueNode = argument.value
        var isNull = false
        if case .null = valueNode { isNull = true }
        if case .variable(let v) = valueNode {
            guard let variableValue = variables[v.name.value] else {
                if let defaultValue = def.defaultValue {
                    if let d = valueFromAST(defaultValue, type: type, schema: schema, variables: [:]) { coerced[name] = d }
                } else if type.isNonNull {
                    throw error(
                        "Argument \"\(name)\" of required type \"\(type)\" was provided the variable \"$\(v.name.value)\" which was not provided a runtime value.",
                        valueNode.loc)
                }
                continue
            }
            isNull = variableValue == .null
        }
        if isNull && type.isNonNull {
            throw error("Argument \"\(name)\" of non-null type \"\(type)\" must not be null.", valueNode.loc)
        }
        guard let value = valueFromAST(valueNode, type: type, schema: schema, variables: variables) else {
            throw error("Argument \"\(name)\" has invalid value \(Printer.print(valueNode)).", valueNode.loc)
        }
        coerced[name] = value
    }
    return coerced
}

/// Coerces the arguments of a field selection against its definition.
public func coerceArgumentValues(
    schema: GraphQLSchema, field: FieldDef, node: Field, variables: [String: JSONValue], document: Document
) throws(GraphQLError) -> [String: JSONValue] {
    try coerceArgumentValues(schema: schema, definitions: field.arguments, arguments: node.arguments,
                             node: node.loc, variables: variables, document: document)
}

// MARK: Literals

/// The value of an AST literal of the given input type (graphql-js `valueFromAST`), with
/// variables replaced by their coerced values. nil when the literal is invalid for the type
/// (or is a variable that was not provided).
public func valueFromAST(_ value: Value, type: TypeRef, schema: GraphQLSchema, variables: [String: JSONValue]) -> JSONValue? {
    if case .variable(let v) = value {
        guard let variableValue = variables[v.name.value] else { return nil }
        if variableValue == .null && type.isNonNull { return nil }
        return variableValue
    }
    switch type {
    case .nonNull(let inner):
        if case .null = value { return nil }
        return valueFromAST(value, type: inner, schema: schema, variables: variables)
    case _ where isNullLiteral(value):
        return .null
    case .list(let itemType):
        guard case .list(let items, _) = value else {
            return valueFromAST(value, type: itemType, schema: schema, variables: variables).map { .array([$0]) }
        }
        var out: [JSONValue] = []
        out.reserveCapacity(items.count)
        for item in items {
            if isMissingVariable(item, variables) {
                if itemType.isNonNull { return nil }
                out.append(.null)
            } else {
                guard let v = valueFromAST(item, type: itemType, schema: schema, variables: variables) else { return nil }
                out.append(v)
            }
        }
        return .array(out)
    case .named(let name):
        guard let def = schema.type(name) else { return nil }
        if def.kind == .inputObject {
            guard case .object(let fields, _) = value else { return nil }
            var out: [(String, JSONValue)] = []
            for field in def.inputFields {
                let node = fields.last { $0.name.value == field.name }
                guard let node, !isMissingVariable(node.value, variables) else {
                    if let defaultValue = field.defaultValue {
                        guard let d = valueFromAST(defaultValue, type: field.type, schema: schema, variables: [:])
                        else { return nil }
                        out.append((field.name, d))
                    } else if field.type.isNonNull {
                        return nil
                    }
                    continue
                }
                guard let v = valueFromAST(node.value, type: field.type, schema: schema, variables: variables)
                else { return nil }
                out.append((field.name, v))
            }
            return .object(out)
        }
        if case .success(let v) = LeafCoercion.parseLiteral(value, type: def, variables: variables) { return v }
        return nil
    }
}

private func isNullLiteral(_ value: Value) -> Bool {
    if case .null = value { return true }
    return false
}

private func isMissingVariable(_ value: Value, _ variables: [String: JSONValue]) -> Bool {
    if case .variable(let v) = value { return variables[v.name.value] == nil }
    return false
}

// MARK: @skip / @include

/// Whether a selection with these directives may be executed, for estimates made before
/// execution (the node limit): not when `@skip(if: true)` or `@include(if: false)` (literal or
/// variable); anything else, a null included, counts. Execution decides with the throwing
/// variant below, which makes a null `if` the field error.
public func shouldInclude(directives: [Directive], variables: [String: JSONValue]) -> Bool {
    guard !directives.isEmpty else { return true }
    func condition(_ d: Directive) -> Bool? {
        guard let arg = d.arguments.last(where: { $0.name.value == "if" }) else { return nil }
        switch arg.value {
        case .boolean(let b, _): return b
        case .variable(let v):
            if case .bool(let b)? = variables[v.name.value] { return b }
            return nil
        default: return nil
        }
    }
    for d in directives where d.name.value == "skip" {
        if condition(d) == true { return false }
    }
    for d in directives where d.name.value == "include" {
        if condition(d) == false { return false }
    }
    return true
}

/// graphql-js `shouldIncludeNode` in execution: each directive's arguments coerced as
/// CoerceArgumentValues does, so an explicit null for `if` (a variable with a default, given
/// null) is the field error `Argument "if" of non-null type "Boolean!" must not be null.`, not
/// a directive ignored. The first @skip, then the first @include (graphql-js
/// `getDirectiveValues`).
public func shouldInclude(directives: [Directive], schema: GraphQLSchema, variables: [String: JSONValue],
                          document: Document) throws(GraphQLError) -> Bool {
    guard !directives.isEmpty else { return true }
    for (name, excludeWhen) in [("skip", true), ("include", false)] {
        guard let d = directives.first(where: { $0.name.value == name }), let def = schema.directive(name) else { continue }
        let args = try coerceArgumentValues(schema: schema, definitions: def.arguments, arguments: d.arguments,
                                            node: d.loc, variables: variables, document: document)
        if case .bool(let b)? = args["if"], b == excludeWhen { return false }
    }
    return true
}

// MARK: Scalars and enums

/// A scalar or enum rejecting a value; the message is graphql-js's.
struct LeafCoercionError: Error {
    let message: String
}

/// parseValue / parseLiteral of the built-in scalars and of enums (graphql-js `type/scalars.ts`,
/// `GraphQLEnumType`). Custom scalars accept any value.
enum LeafCoercion {
    static let minInt = -2_147_483_648
    static let maxInt = 2_147_483_647

    /// A runtime (JSON) value.
    static func parseValue(_ value: JSONValue, type: NamedTypeDef) -> Result<JSONValue, LeafCoercionError> {
        let shown = MessageFormat.inspect(value)
        switch type.kind {
        case .enumType:
            guard case .string(let s) = value else {
                return .failure(LeafCoercionError(message: "Enum \"\(type.name)\" cannot represent non-string value: \(shown)."
                    + didYouMeanEnumValue(type, shown)))
            }
            guard type.enumValue(s) != nil else {
                return .failure(LeafCoercionError(message: "Value \"\(s)\" does not exist in \"\(type.name)\" enum."
                    + didYouMeanEnumValue(type, s)))
            }
            return .success(.string(s))
        case .scalar:
            break
        default:
            return .failure(LeafCoercionError(message: "Expected type \"\(type.name)\"."))
        }
        switch type.name {
        case "Int":
            let number: Int64
            switch value {
            case .int(let i): number = i
            case .double(let d) where d.isFinite && d.rounded(.towardZero) == d:
                guard d >= Double(minInt) && d <= Double(maxInt) else {
                    return .failure(LeafCoercionError(message: "Int cannot represent non 32-bit signed integer value: \(MessageFormat.number(d))"))
                }
                number = Int64(d)
            default:
                return .failure(LeafCoercionError(message: "Int cannot represent non-integer value: \(shown)"))
            }
            guard number >= minInt && number <= maxInt else {
                return .failure(LeafCoercionError(message: "Int cannot represent non 32-bit signed integer value: \(number)"))
            }
            return .success(.int(number))
        case "Float":
            switch value {
            case .int(let i): return .success(.double(Double(i)))
            case .double(let d) where d.isFinite: return .success(.double(d))
            default: return .failure(LeafCoercionError(message: "Float cannot represent non numeric value: \(shown)"))
            }
        case "String":
            if case .string = value { return .success(value) }
            return .failure(LeafCoercionError(message: "String cannot represent a non string value: \(shown)"))
        case "Boolean":
            if case .bool = value { return .success(value) }
            return .failure(LeafCoercionError(message: "Boolean cannot represent a non boolean value: \(shown)"))
        case "ID":
            switch value {
            case .string: return .success(value)
            case .int(let i): return .success(.string(String(i)))
            case .double(let d) where d.isFinite && d.rounded(.towardZero) == d:
                return .success(.string(MessageFormat.number(d)))
            default: return .failure(LeafCoercionError(message: "ID cannot represent value: \(shown)"))
            }
        default:
            return .success(value)
        }
    }

    /// An AST literal (never a variable at the top; variables inside lists or objects given to a
    /// scalar are resolved for custom scalars only).
    static func parseLiteral(_ value: Value, type: NamedTypeDef, variables: [String: JSONValue] = [:])
        -> Result<JSONValue, LeafCoercionError>
    {
        let printed = { Printer.print(value) }
        switch type.kind {
        case .enumType:
            guard case .enumValue(let name, _) = value else {
                let shown = printed()
                return .failure(LeafCoercionError(message: "Enum \"\(type.name)\" cannot represent non-enum value: \(shown)."
                    + didYouMeanEnumValue(type, shown)))
            }
            guard type.enumValue(name) != nil else {
                return .failure(LeafCoercionError(message: "Value \"\(name)\" does not exist in \"\(type.name)\" enum."
                    + didYouMeanEnumValue(type, name)))
            }
            return .success(.string(name))
        case .scalar:
            break
        default:
            return .failure(LeafCoercionError(message: "Expected type \"\(type.name)\"."))
        }
        switch type.name {
        case "Int":
            guard case .int(let text, _) = value else {
                return .failure(LeafCoercionError(message: "Int cannot represent non-integer value: \(printed())"))
            }
            guard let n = Int64(text), n >= minInt && n <= maxInt else {
                return .failure(LeafCoercionError(message: "Int cannot represent non 32-bit signed integer value: \(text)"))
            }
            return .success(.int(n))
        case "Float":
            switch value {
            case .int(let text, _), .float(let text, _):
                return .success(.double(Double(text) ?? .nan))
            default:
                return .failure(LeafCoercionError(message: "Float cannot represent non numeric value: \(printed())"))
            }
        case "String":
            if case .string(let s, _, _) = value { return .success(.string(s)) }
            return .failure(LeafCoercionError(message: "String cannot represent a non string value: \(printed())"))
        case "Boolean":
            if case .boolean(let b, _) = value { return .success(.bool(b)) }
            return .failure(LeafCoercionError(message: "Boolean cannot represent a non boolean value: \(printed())"))
        case "ID":
            switch value {
            case .string(let s, _, _): return .success(.string(s))
            case .int(let text, _): return .success(.string(text))
            default:
                return .failure(LeafCoercionError(message: "ID cannot represent a non-string and non-integer value: \(printed())"))
            }
        default:
            return .success(untypedValue(value, variables: variables))
        }
    }

    private static func didYouMeanEnumValue(_ type: NamedTypeDef, _ unknown: String) -> String {
        Suggestions.didYouMean("the enum value", Suggestions.list(unknown, type.enumValues.map(\.name)))
    }

    /// graphql-js `valueFromASTUntyped`, for custom scalars.
    static func untypedValue(_ value: Value, variables: [String: JSONValue]) -> JSONValue {
        switch value {
        case .variable(let v): return variables[v.name.value] ?? .null
        case .int(let text, _): return Int64(text).map { .int($0) } ?? .double(Double(text) ?? .nan)
        case .float(let text, _): return .double(Double(text) ?? .nan)
        case .string(let s, _, _): return .string(s)
        case .boolean(let b, _): return .bool(b)
        case .null: return .null
        case .enumValue(let name, _): return .string(name)
        case .list(let items, _): return .array(items.map { untypedValue($0, variables: variables) })
        case .object(let fields, _): return .object(fields.map { ($0.name.value, untypedValue($0.value, variables: variables)) })
        }
    }
}
