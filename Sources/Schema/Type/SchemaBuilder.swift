// Builds the schema model from SDL, after graphql-js 16 `buildASTSchema` / `extendSchemaImpl`:
// type definitions and their extensions merged, descriptions, @deprecated and @specifiedBy read,
// the built-in scalars, specified directives and introspection types added (Introspection.swift),
// and the checks of graphql-js's SDL validation and `validateSchema` that matter for a schema
// file (unknown and duplicate names, type kinds in each position, root types, interface
// implementations). Messages follow graphql-js.
//
// Types are listed in graphql-js's order: the document's types in definition order, each
// followed by the built-in scalars it is first to reference, then the introspection types.
// As in graphql-js, a built-in scalar that nothing references is not part of the schema.

extension GraphQLSchema {
    /// Builds a schema from SDL text. Throws the first syntax or schema error found.
    public static func build(sdl: String, sourceName: String = "schema.graphql") throws(GraphQLError) -> GraphQLSchema {
        let document: Document
        do {
            document = try Parser.parse(Source(sdl, name: sourceName), maxDepth: 200, maxTokens: Int.max)
        } catch {
            throw error.error
        }
        return try build(document: document)
    }

    /// Builds a schema from a parsed SDL document.
    public static func build(document: Document) throws(GraphQLError) -> GraphQLSchema {
        var builder = SchemaBuilder()
        try builder.add(SchemaBuilder.prelude, isBuiltIn: true)
        try builder.add(document, isBuiltIn: false)
        return try builder.finish()
    }
}

/// A named type while the schema is being assembled.
private struct TypeDraft {
    let name: String
    let kind: TypeKind
    var description: String?
    var fields: [FieldDef] = []
    var interfaces: [String] = []
    var members: [String] = []
    var enumValues: [EnumValueDef] = []
    var inputFields: [InputValueDef] = []
    var specifiedByURL: String?
    let isBuiltIn: Bool
    /// Where the type is defined, and the positions of its interface/member references.
    let source: Source
    let loc: Location
    var referenceLocs: [String: Location] = [:]
}

private struct SchemaBuilder {
    /// The built-in definitions, parsed once.
    static let prelude: Document = {
        do throws(GraphQLSyntaxError) {
            return try Parser.parse(Source(Introspection.sdl, name: "introspection"), maxTokens: Int.max)
        } catch {
            preconditionFailure("The built-in SDL does not parse: \(error.error)")
        }
    }()

    private var types: [String: TypeDraft] = [:]
    /// User-defined types in definition order (graphql-js's `config.types`).
    private var definedOrder: [String] = []
    private var userDirectives: [DirectiveDef] = []
    private var builtInDirectives: [DirectiveDef] = []
    private var schemaDescription: String?
    private var schemaDefined = false
    private var rootTypes: [OperationType: (String, Location, Source)] = [:]
    /// Extensions, applied after every definition is known.
    private var extensions: [(TypeSystemDefinition, Source)] = []
    /// All type definitions, gathered first so that references can be checked in any order.
    private var pendingTypes: [(TypeSystemDefinition, Source, Bool)] = []
    private var pendingDirectives: [(TypeSystemDefinition, Source, Bool)] = []
    private var pendingNames: Set<String> = []

    // MARK: Collecting definitions

    mutating func add(_ document: Document, isBuiltIn: Bool) throws(GraphQLError) {
        let source = document.source
        for definition in document.definitions {
            guard case .typeSystem(let def) = definition else {
                throw GraphQLError("Executable definitions are not allowed in a schema document.",
                                   source: source, offsets: [definition.loc.start])
            }
            switch def {
            case .schema(let description, _, let operationTypes, let isExtension, let loc):
                if !isExtension {
                    if schemaDefined {
                        throw GraphQLError("Must provide only one schema definition.", source: source, offsets: [loc.start])
                    }
                    schemaDefined = true
                    schemaDescription = description
                    for op in operationTypes { try setRoot(op, source: source) }
                } else {
                    extensions.append((def, source))
                }
            case .directive:
                pendingDirectives.append((def, source, isBuiltIn))
            case .scalar(_, let name, _, let isExtension, _), .object(_, let name, _, _, _, let isExtension, _),
                 .interface(_, let name, _, _, _, let isExtension, _), .union(_, let name, _, _, let isExtension, _),
                 .enumType(_, let name, _, _, let isExtension, _), .inputObject(_, let name, _, _, let isExtension, _):
                if isExtension {
                    extensions.append((def, source))
                    continue
                }
                if !isBuiltIn {
                    try checkName(name, at: def.loc, source: source)
                    if Introspection.scalarNames.contains(name.value) {
                        // graphql-js keeps the standard scalar for such a definition.
                        if case .scalar = def {
                            if !definedOrder.contains(name.value) { definedOrder.append(name.value) }
                            continue
                        }
                    }
                }
                if !pendingNames.insert(name.value).inserted {
                    throw GraphQLError("There can be only one type named \"\(name.value)\".",
                                       source: source, offsets: [name.loc.start])
                }
                pendingTypes.append((def, source, isBuiltIn))
                if !isBuiltIn { definedOrder.append(name.value) }
            }
        }
    }

    private mutating func setRoot(_ op: RootOperationTypeDefinition, source: Source) throws(GraphQLError) {
        if rootTypes[op.operation] != nil {
            throw GraphQLError("Type for \(op.operation.rawValue) already defined in the schema. It cannot be redefined.",
                               source: source, offsets: [op.type.loc.start])
        }
        rootTypes[op.operation] = (op.type.name.value, op.type.loc, source)
    }

    /// Names starting with "__" are reserved; the error points at the defining node.
    private func checkName(_ name: Name, at loc: Location? = nil, source: Source) throws(GraphQLError) {
        if name.value.hasPrefix("__") {
            throw GraphQLError("Name \"\(name.value)\" must not begin with \"__\", which is reserved by GraphQL introspection.",
                               source: source, offsets: [(loc ?? name.loc).start])
        }
    }

    // MARK: Building

    mutating func finish() throws(GraphQLError) -> GraphQLSchema {
        let knownNames = pendingNames

        // Directive definitions (user-defined ones replace built-ins of the same name).
        var seenDirectives: Set<String> = []
        for (def, source, isBuiltIn) in pendingDirectives {
            guard case .directive(let description, let name, let args, let repeatable, let locations, _) = def else { continue }
            if !isBuiltIn {
                try checkName(name, at: def.loc, source: source)
                if seenDirectives.contains(name.value) {
                    throw GraphQLError("There can be only one directive named \"@\(name.value)\".",
                                       source: source, offsets: [name.loc.start])
                }
                seenDirectives.insert(name.value)
            }
            let arguments = try inputValues(args, owner: "@\(name.value)", isArgument: true, known: knownNames,
                                            source: source, builtIn: isBuiltIn)
            let directive = DirectiveDef(name: name.value, description: description, locations: locations.map(\.value),
                                         arguments: arguments, isRepeatable: repeatable)
            if isBuiltIn { builtInDirectives.append(directive) } else { userDirectives.append(directive) }
        }
        let allDirectives = userDirectives + builtInDirectives.filter { d in !userDirectives.contains { $0.name == d.name } }
        let directiveTable = Dictionary(allDirectives.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })

        // Type definitions.
        for (def, source, isBuiltIn) in pendingTypes {
            let draft = try makeDraft(def, source: source, isBuiltIn: isBuiltIn, known: knownNames,
                                      directives: directiveTable)
            types[draft.name] = draft
        }

        // Extensions.
        for (def, source) in extensions {
            try applyExtension(def, source: source, known: knownNames, directives: directiveTable)
        }

        try validateTypes()

        // Root operation types: from the schema definition, else the conventional names.
        if !schemaDefined {
            for (op, name) in [(OperationType.query, "Query"), (.mutation, "Mutation"), (.subscription, "Subscription")]
            where rootTypes[op] == nil && types[name] != nil {
                rootTypes[op] = (name, Location(start: 0, end: 0), Self.prelude.source)
            }
        }
        for (op, label) in [(OperationType.query, "Query"), (.mutation, "Mutation"), (.subscription, "Subscription")] {
            guard let (name, loc, source) = rootTypes[op] else { continue }
            guard let t = types[name] else {
                throw GraphQLError("Unknown type \"\(name)\".", source: source, offsets: [loc.start])
            }
            if t.kind != .object {
                let tail = op == .query ? "" : " if provided"
                throw GraphQLError("\(label) root type must be Object type\(tail), it cannot be \(name).",
                                   source: source, offsets: [loc.start])
            }
        }
        guard let queryType = rootTypes[.query]?.0 else {
            throw GraphQLError("Query root type must be provided.")
        }

        let order = typeOrder(roots: [queryType, rootTypes[.mutation]?.0, rootTypes[.subscription]?.0].compactMap { $0 },
                              directives: allDirectives)

        // possibleTypes: union members; for interfaces, implementing objects in type order.
        var implementations: [String: [String]] = [:]
        for name in order {
            guard let t = types[name], t.kind == .object else { continue }
            for i in t.interfaces { implementations[i, default: []].append(name) }
        }
        let defs = order.compactMap { name -> NamedTypeDef? in
            guard let t = types[name] else { return nil }
            let possible: [String]
            switch t.kind {
            case .union: possible = t.members
            case .interface: possible = implementations[name] ?? []
            default: possible = []
            }
            return NamedTypeDef(name: t.name, kind: t.kind, description: t.description, fields: t.fields,
                                interfaces: t.interfaces, possibleTypes: possible, enumValues: t.enumValues,
                                inputFields: t.inputFields, specifiedByURL: t.specifiedByURL)
        }
        return GraphQLSchema(description: schemaDescription, types: defs, queryType: queryType,
                             mutationType: rootTypes[.mutation]?.0, subscriptionType: rootTypes[.subscription]?.0,
                             directives: allDirectives)
    }

    /// graphql-js `GraphQLSchema` constructor order: the defined types (each followed by what
    /// it first references), the root types, directive argument types, then `__Schema`'s closure.
    private func typeOrder(roots: [String], directives: [DirectiveDef]) -> [String] {
        var list: [String] = definedOrder
        var inList = Set(list)
        func collect(_ name: String) {
            guard !inList.contains(name), let t = types[name] else { return }
            list.append(name)
            inList.insert(name)
            switch t.kind {
            case .union:
                for m in t.members { collect(m) }
            case .object, .interface:
                for i in t.interfaces { collect(i) }
                for f in t.fields {
                    collect(f.type.namedType)
                    for a in f.arguments { collect(a.type.namedType) }
                }
            case .inputObject:
                for f in t.inputFields { collect(f.type.namedType) }
            case .scalar, .enumType:
                break
            }
        }
        for name in definedOrder {
            if let i = list.firstIndex(of: name) { list.remove(at: i) }
            inList.remove(name)
            collect(name)
        }
        for r in roots { collect(r) }
        for d in directives { for a in d.arguments { collect(a.type.namedType) } }
        collect("__Schema")
        return list
    }

    private func makeDraft(_ def: TypeSystemDefinition, source: Source, isBuiltIn: Bool, known: Set<String>,
                           directives: [String: DirectiveDef]) throws(GraphQLError) -> TypeDraft {
        switch def {
        case .scalar(let description, let name, let dirs, _, let loc):
            try checkDirectives(dirs, location: "SCALAR", directives: directives, source: source)
            var draft = TypeDraft(name: name.value, kind: .scalar, description: description, isBuiltIn: isBuiltIn,
                                  source: source, loc: loc)
            draft.specifiedByURL = try specifiedByURL(dirs, source: source)
            return draft
        case .object(let description, let name, let interfaces, let dirs, let fields, _, let loc),
             .interface(let description, let name, let interfaces, let dirs, let fields, _, let loc):
            let isObject: Bool
            if case .object = def { isObject = true } else { isObject = false }
            try checkDirectives(dirs, location: isObject ? "OBJECT" : "INTERFACE", directives: directives, source: source)
            var draft = TypeDraft(name: name.value, kind: isObject ? .object : .interface, description: description,
                                  isBuiltIn: isBuiltIn, source: source, loc: loc)
            try addInterfaces(interfaces, to: &draft, known: known, source: source)
            try addFields(fields, to: &draft, known: known, directives: directives, source: source)
            return draft
        case .union(let description, let name, let dirs, let members, _, let loc):
            try checkDirectives(dirs, location: "UNION", directives: directives, source: source)
            var draft = TypeDraft(name: name.value, kind: .union, description: description, isBuiltIn: isBuiltIn,
                                  source: source, loc: loc)
            try addMembers(members, to: &draft, known: known, source: source)
            return draft
        case .enumType(let description, let name, let dirs, let values, _, let loc):
            try checkDirectives(dirs, location: "ENUM", directives: directives, source: source)
            var draft = TypeDraft(name: name.value, kind: .enumType, description: description, isBuiltIn: isBuiltIn,
                                  source: source, loc: loc)
            try addEnumValues(values, to: &draft, directives: directives, source: source)
            return draft
        case .inputObject(let description, let name, let dirs, let fields, _, let loc):
            try checkDirectives(dirs, location: "INPUT_OBJECT", directives: directives, source: source)
            var draft = TypeDraft(name: name.value, kind: .inputObject, description: description, isBuiltIn: isBuiltIn,
                                  source: source, loc: loc)
            try addInputFields(fields, to: &draft, known: known, directives: directives, source: source)
            return draft
        case .schema, .directive:
            preconditionFailure("not a type definition")
        }
    }

    private mutating func applyExtension(_ def: TypeSystemDefinition, source: Source, known: Set<String>,
                                         directives: [String: DirectiveDef]) throws(GraphQLError) {
        if case .schema(_, let dirs, let operationTypes, _, _) = def {
            try checkDirectives(dirs, location: "SCHEMA", directives: directives, source: source)
            for op in operationTypes { try setRoot(op, source: source) }
            return
        }
        guard let name = def.typeNameNode else { return }
        guard var draft = types[name.value], !draft.isBuiltIn else {
            throw GraphQLError("Cannot extend type \"\(name.value)\" because it is not defined.",
                               source: source, offsets: [name.loc.start])
        }
        switch (def, draft.kind) {
        case (.scalar(_, _, let dirs, _, _), .scalar):
            try checkDirectives(dirs, location: "SCALAR", directives: directives, source: source)
            if let url = try specifiedByURL(dirs, source: source) { draft.specifiedByURL = url }
        case (.object(_, _, let interfaces, let dirs, let fields, _, _), .object),
             (.interface(_, _, let interfaces, let dirs, let fields, _, _), .interface):
            try checkDirectives(dirs, location: draft.kind == .object ? "OBJECT" : "INTERFACE",
                                directives: directives, source: source)
            try addInterfaces(interfaces, to: &draft, known: known, source: source)
            try addFields(fields, to: &draft, known: known, directives: directives, source: source)
        case (.union(_, _, let dirs, let members, _, _), .union):
            try checkDirectives(dirs, location: "UNION", directives: directives, source: source)
            try addMembers(members, to: &draft, known: known, source: source)
        case (.enumType(_, _, let dirs, let values, _, _), .enumType):
            try checkDirectives(dirs, location: "ENUM", directives: directives, source: source)
            try addEnumValues(values, to: &draft, directives: directives, source: source)
        case (.inputObject(_, _, let dirs, let fields, _, _), .inputObject):
            try checkDirectives(dirs, location: "INPUT_OBJECT", directives: directives, source: source)
            try addInputFields(fields, to: &draft, known: known, directives: directives, source: source)
        default:
            throw GraphQLError("Cannot extend non-\(def.extensionKindName) type \"\(name.value)\".",
                               source: source, offsets: [name.loc.start])
        }
        types[name.value] = draft
    }

    // MARK: Members

    private func typeRef(_ node: TypeNode, known: Set<String>, source: Source) throws(GraphQLError) -> TypeRef {
        let named = node.namedType
        guard known.contains(named.name.value) else {
            throw GraphQLError("Unknown type \"\(named.name.value)\".", source: source, offsets: [named.loc.start])
        }
        return TypeRef(node)
    }

    private func addInterfaces(_ interfaces: [NamedType], to draft: inout TypeDraft, known: Set<String>,
                               source: Source) throws(GraphQLError) {
        for i in interfaces {
            _ = try typeRef(.named(i), known: known, source: source)
            if draft.interfaces.contains(i.name.value) {
                throw GraphQLError("Type \(draft.name) can only implement \(i.name.value) once.",
                                   source: source, offsets: [i.loc.start])
            }
            draft.interfaces.append(i.name.value)
            draft.referenceLocs["implements " + i.name.value] = i.loc
        }
    }

    private func addMembers(_ members: [NamedType], to draft: inout TypeDraft, known: Set<String>,
                            source: Source) throws(GraphQLError) {
        for m in members {
            _ = try typeRef(.named(m), known: known, source: source)
            if draft.members.contains(m.name.value) {
                throw GraphQLError("Union type \(draft.name) can only include type \(m.name.value) once.",
                                   source: source, offsets: [m.loc.start])
            }
            draft.members.append(m.name.value)
            draft.referenceLocs["member " + m.name.value] = m.loc
        }
    }

    private func addFields(_ fields: [FieldDefinition], to draft: inout TypeDraft, known: Set<String>,
                           directives: [String: DirectiveDef], source: Source) throws(GraphQLError) {
        for f in fields {
            if !draft.isBuiltIn { try checkName(f.name, at: f.loc, source: source) }
            if draft.fields.contains(where: { $0.name == f.name.value }) {
                throw GraphQLError("Field \"\(draft.name).\(f.name.value)\" can only be defined once.",
                                   source: source, offsets: [f.name.loc.start])
            }
            try checkDirectives(f.directives, location: "FIELD_DEFINITION", directives: directives, source: source)
            let type = try typeRef(f.type, known: known, source: source)
            let args = try inputValues(f.arguments, owner: "\(draft.name).\(f.name.value)", isArgument: true,
                                       known: known, source: source, builtIn: draft.isBuiltIn,
                                       directiveTable: directives)
            let reason = try deprecationReason(f.directives, source: source)
            for a in f.arguments { draft.referenceLocs["argument \(f.name.value)(\(a.name.value):)"] = a.type.loc }
            draft.fields.append(FieldDef(name: f.name.value, description: f.description, arguments: args, type: type,
                                         isDeprecated: reason != nil, deprecationReason: reason))
            draft.referenceLocs["field " + f.name.value] = f.type.loc
        }
    }

    private func addInputFields(_ fields: [InputValueDefinition], to draft: inout TypeDraft, known: Set<String>,
                                directives: [String: DirectiveDef], source: Source) throws(GraphQLError) {
        let values = try inputValues(fields, owner: draft.name, isArgument: false, known: known,
                                     source: source, builtIn: draft.isBuiltIn, directiveTable: directives)
        for (v, node) in zip(values, fields) {
            if draft.inputFields.contains(where: { $0.name == v.name }) {
                throw GraphQLError("Field \"\(draft.name).\(v.name)\" can only be defined once.",
                                   source: source, offsets: [node.name.loc.start])
            }
            draft.inputFields.append(v)
            draft.referenceLocs["field " + v.name] = node.type.loc
        }
    }

    private func addEnumValues(_ values: [EnumValueDefinition], to draft: inout TypeDraft,
                               directives: [String: DirectiveDef], source: Source) throws(GraphQLError) {
        for v in values {
            if !draft.isBuiltIn { try checkName(v.name, at: v.loc, source: source) }
            if draft.enumValues.contains(where: { $0.name == v.name.value }) {
                throw GraphQLError("Enum value \"\(draft.name).\(v.name.value)\" can only be defined once.",
                                   source: source, offsets: [v.name.loc.start])
            }
            try checkDirectives(v.directives, location: "ENUM_VALUE", directives: directives, source: source)
            let reason = try deprecationReason(v.directives, source: source)
            draft.enumValues.append(EnumValueDef(name: v.name.value, description: v.description,
                                                 isDeprecated: reason != nil, deprecationReason: reason))
        }
    }

    /// Arguments (`owner` is "Type.field" or "@directive") or input fields (`owner` is the type).
    private func inputValues(_ nodes: [InputValueDefinition], owner: String, isArgument: Bool, known: Set<String>,
                             source: Source, builtIn: Bool,
                             directiveTable: [String: DirectiveDef]? = nil) throws(GraphQLError) -> [InputValueDef] {
        var out: [InputValueDef] = []
        for node in nodes {
            if !builtIn { try checkName(node.name, at: node.loc, source: source) }
            if isArgument && out.contains(where: { $0.name == node.name.value }) {
                throw GraphQLError("Argument \"\(owner)(\(node.name.value):)\" can only be defined once.",
                                   source: source, offsets: [node.name.loc.start])
            }
            if let directiveTable {
                try checkDirectives(node.directives, location: isArgument ? "ARGUMENT_DEFINITION" : "INPUT_FIELD_DEFINITION",
                                    directives: directiveTable, source: source)
            }
            let type = try typeRef(node.type, known: known, source: source)
            let reason = try deprecationReason(node.directives, source: source)
            if reason != nil && type.isNonNull && node.defaultValue == nil {
                let what = isArgument ? "argument \(owner)(\(node.name.value):)" : "input field \(owner).\(node.name.value)"
                throw GraphQLError("Required \(what) cannot be deprecated.", source: source,
                                   offsets: [node.directives.first { $0.name.value == "deprecated" }?.loc.start ?? node.loc.start])
            }
            out.append(InputValueDef(name: node.name.value, description: node.description, type: type,
                                     defaultValue: node.defaultValue, isDeprecated: reason != nil,
                                     deprecationReason: reason))
        }
        return out
    }

    // MARK: Directives used in the SDL

    /// Known directive, allowed at this location, not repeated unless repeatable, known arguments.
    private func checkDirectives(_ used: [Directive], location: String, directives: [String: DirectiveDef],
                                 source: Source) throws(GraphQLError) {
        var seen: Set<String> = []
        for d in used {
            guard let def = directives[d.name.value] else {
                throw GraphQLError("Unknown directive \"@\(d.name.value)\".", source: source, offsets: [d.loc.start])
            }
            if !def.locations.contains(location) {
                throw GraphQLError("Directive \"@\(d.name.value)\" may not be used on \(location).",
                                   source: source, offsets: [d.loc.start])
            }
            if !def.isRepeatable && !seen.insert(d.name.value).inserted {
                throw GraphQLError("The directive \"@\(d.name.value)\" can only be used once at this location.",
                                   source: source, offsets: [d.loc.start])
            }
            for a in d.arguments where def.arguments.first(where: { $0.name == a.name.value }) == nil {
                throw GraphQLError("Unknown argument \"\(a.name.value)\" on directive \"@\(d.name.value)\".",
                                   source: source, offsets: [a.loc.start])
            }
            for a in def.arguments where a.type.isNonNull && a.defaultValue == nil
                && !d.arguments.contains(where: { $0.name.value == a.name }) {
                throw GraphQLError("Directive \"@\(d.name.value)\" argument \"\(a.name)\" of type \"\(a.type)\" is required, but it was not provided.",
                                   source: source, offsets: [d.loc.start])
            }
        }
    }

    /// The reason of an `@deprecated` directive (its default when no reason is given), or nil.
    private func deprecationReason(_ directives: [Directive], source: Source) throws(GraphQLError) -> String? {
        guard let d = directives.first(where: { $0.name.value == "deprecated" }) else { return nil }
        guard let arg = d.arguments.first(where: { $0.name.value == "reason" }) else {
            return Introspection.defaultDeprecationReason
        }
        switch arg.value {
        case .string(let s, _, _): return s
        case .null: return nil
        default:
            throw GraphQLError("Argument \"reason\" has invalid value \(sourceText(arg.value.loc, source)).",
                               source: source, offsets: [arg.value.loc.start])
        }
    }

    private func specifiedByURL(_ directives: [Directive], source: Source) throws(GraphQLError) -> String? {
        guard let d = directives.first(where: { $0.name.value == "specifiedBy" }),
              let arg = d.arguments.first(where: { $0.name.value == "url" }) else { return nil }
        guard case .string(let url, _, _) = arg.value else {
            throw GraphQLError("Argument \"url\" has invalid value \(sourceText(arg.value.loc, source)).",
                               source: source, offsets: [arg.value.loc.start])
        }
        return url
    }

    private func sourceText(_ loc: Location, _ source: Source) -> String {
        String(decoding: source.body[loc.start..<min(loc.end, source.body.count)], as: UTF8.self)
    }

    // MARK: validateSchema

    private func validateTypes() throws(GraphQLError) {
        for name in definedOrder {
            guard let t = types[name], !t.isBuiltIn else { continue }
            let at = { (key: String) -> [Int] in [(t.referenceLocs[key] ?? t.loc).start] }
            switch t.kind {
            case .object, .interface:
                if t.fields.isEmpty {
                    throw GraphQLError("Type \(name) must define one or more fields.", source: t.source, offsets: [t.loc.start])
                }
                for f in t.fields {
                    if let ft = types[f.type.namedType], !ft.kind.isOutputType {
                        throw GraphQLError("The type of \(name).\(f.name) must be Output Type but got: \(f.type).",
                                           source: t.source, offsets: at("field " + f.name))
                    }
                    for a in f.arguments {
                        if let at2 = types[a.type.namedType], !at2.kind.isInputType {
                            throw GraphQLError("The type of \(name).\(f.name)(\(a.name):) must be Input Type but got: \(a.type).",
                                               source: t.source, offsets: at("argument \(f.name)(\(a.name):)"))
                        }
                    }
                }
                for i in t.interfaces {
                    guard let iface = types[i], iface.kind == .interface else {
                        throw GraphQLError("Type \(name) must only implement Interface types, it cannot implement \(i).",
                                           source: t.source, offsets: at("implements " + i))
                    }
                    if i == name {
                        throw GraphQLError("Type \(name) cannot implement itself because it would create a circular reference.",
                                           source: t.source, offsets: at("implements " + i))
                    }
                    for transitive in iface.interfaces where !t.interfaces.contains(transitive) {
                        throw GraphQLError(
                            "Type \(name) must implement \(transitive) because it is implemented by \(i).",
                            source: t.source, offsets: at("implements " + i))
                    }
                    try validateImplementation(t, of: iface, at: at("implements " + i))
                }
            case .union:
                if t.members.isEmpty {
                    throw GraphQLError("Union type \(name) must define one or more member types.",
                                       source: t.source, offsets: [t.loc.start])
                }
                for m in t.members where types[m]?.kind != .object {
                    throw GraphQLError("Union type \(name) can only include Object types, it cannot include \(m).",
                                       source: t.source, offsets: at("member " + m))
                }
            case .enumType:
                if t.enumValues.isEmpty {
                    throw GraphQLError("Enum type \(name) must define one or more values.",
                                       source: t.source, offsets: [t.loc.start])
                }
            case .inputObject:
                if t.inputFields.isEmpty {
                    throw GraphQLError("Input Object type \(name) must define one or more fields.",
                                       source: t.source, offsets: [t.loc.start])
                }
                for f in t.inputFields {
                    if let ft = types[f.type.namedType], !ft.kind.isInputType {
                        throw GraphQLError("The type of \(name).\(f.name) must be Input Type but got: \(f.type).",
                                           source: t.source, offsets: at("field " + f.name))
                    }
                }
            case .scalar:
                break
            }
        }
        for d in userDirectives {
            for a in d.arguments {
                if let at = types[a.type.namedType], !at.kind.isInputType {
                    throw GraphQLError("The type of @\(d.name)(\(a.name):) must be Input Type but got: \(a.type).")
                }
            }
        }
    }

    /// graphql-js `validateTypeImplementsInterface`: every interface field present, with a
    /// covariant type and the same arguments (extra ones optional).
    private func validateImplementation(_ t: TypeDraft, of iface: TypeDraft, at offsets: [Int]) throws(GraphQLError) {
        for ifaceField in iface.fields {
            guard let field = t.fields.first(where: { $0.name == ifaceField.name }) else {
                throw GraphQLError("Interface field \(iface.name).\(ifaceField.name) expected but \(t.name) does not provide it.",
                                   source: t.source, offsets: offsets)
            }
            if !isSubType(field.type, of: ifaceField.type) {
                throw GraphQLError(
                    "Interface field \(iface.name).\(ifaceField.name) expects type \(ifaceField.type) but \(t.name).\(field.name) is type \(field.type).",
                    source: t.source, offsets: offsets)
            }
            for ifaceArg in ifaceField.arguments {
                guard let arg = field.argument(ifaceArg.name) else {
                    throw GraphQLError(
                        "Interface field argument \(iface.name).\(ifaceField.name)(\(ifaceArg.name):) expected but \(t.name).\(field.name) does not provide it.",
                        source: t.source, offsets: offsets)
                }
                if arg.type != ifaceArg.type {
                    throw GraphQLError(
                        "Interface field argument \(iface.name).\(ifaceField.name)(\(ifaceArg.name):) expects type \(ifaceArg.type) but \(t.name).\(field.name)(\(arg.name):) is type \(arg.type).",
                        source: t.source, offsets: offsets)
                }
            }
            for arg in field.arguments where arg.type.isNonNull && arg.defaultValue == nil
                && ifaceField.argument(arg.name) == nil {
                throw GraphQLError(
                    "Object field \(t.name).\(field.name) includes required argument \(arg.name) that is missing from the Interface field \(iface.name).\(ifaceField.name).",
                    source: t.source, offsets: offsets)
            }
        }
    }

    /// graphql-js `isTypeSubTypeOf` for output types.
    private func isSubType(_ sub: TypeRef, of sup: TypeRef) -> Bool {
        switch (sub, sup) {
        case (.nonNull(let a), .nonNull(let b)): return isSubType(a, of: b)
        case (.nonNull(let a), _): return isSubType(a, of: sup)
        case (_, .nonNull): return false
        case (.list(let a), .list(let b)): return isSubType(a, of: b)
        case (.list, _), (_, .list): return false
        case (.named(let a), .named(let b)):
            if a == b { return true }
            guard let st = types[b], st.kind.isAbstract, let t = types[a] else { return false }
            return st.kind == .union ? st.members.contains(a) : t.interfaces.contains(b)
        }
    }
}

private extension TypeSystemDefinition {
    var typeNameNode: Name? {
        switch self {
        case .scalar(_, let n, _, _, _), .object(_, let n, _, _, _, _, _), .interface(_, let n, _, _, _, _, _),
             .union(_, let n, _, _, _, _), .enumType(_, let n, _, _, _, _), .inputObject(_, let n, _, _, _, _):
            return n
        case .schema, .directive:
            return nil
        }
    }
    /// graphql-js's wording in "Cannot extend non-X type".
    var extensionKindName: String {
        switch self {
        case .scalar: return "scalar"
        case .object: return "object"
        case .interface: return "interface"
        case .union: return "union"
        case .enumType: return "enum"
        case .inputObject: return "input object"
        case .schema, .directive: return ""
        }
    }
}
