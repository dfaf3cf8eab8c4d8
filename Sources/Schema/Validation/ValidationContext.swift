// What validation rules can ask while the traversal stands at a node: the schema, the document,
// TypeInfo-style tracking of the types around the current node, fragment lookup, variable usages
// per operation (through fragments), and error collection with a cap.
// After graphql-js `validation/ValidationContext.ts` and `utilities/TypeInfo.ts`.

/// A variable used somewhere in an operation or fragment, with the input type its position
/// expects (nil when unknown) and whether that position has a default value.
struct VariableUsage {
    let node: Variable
    let type: TypeRef?
    let hasLocationDefault: Bool
}

final class ValidationContext {
    let schema: GraphQLSchema
    let document: Document
    let maxErrors: Int
    private(set) var errors: [GraphQLError] = []
    /// Set once the error cap was reached; the traversal stops.
    private(set) var isAborted = false

    init(schema: GraphQLSchema, document: Document, maxErrors: Int) {
        self.schema = schema
        self.document = document
        self.maxErrors = maxErrors
        var fragments: [String: FragmentDefinition] = [:]
        // As graphql-js's getFragment: of fragments sharing a name (UniqueFragmentNames reports
        // it), the last one is the one spreads mean.
        for case .fragment(let f) in document.definitions {
            fragments[f.name.value] = f
        }
        self.fragmentsByName = fragments
    }

    // MARK: Errors

    /// Records an error located at the start of each given node.
    func report(_ message: String, at nodes: [Location]) {
        guard !isAborted else { return }
        if errors.count >= maxErrors {
            errors.append(GraphQLError("Too many validation errors, error limit reached. Validation aborted."))
            isAborted = true
            return
        }
        errors.append(GraphQLError(message, locations: nodes.map { lineIndex.location(of: $0.start) }))
    }

    func report(_ message: String, at node: Location) { report(message, at: [node]) }

    /// Errors still allowed before the cap (rules that compute many errors up front stop early).
    var remainingErrorBudget: Int { isAborted ? 0 : max(0, maxErrors - errors.count + 1) }

    private lazy var lineIndex = LineIndex(document.source)

    // MARK: Type information of the current node (TypeInfo)

    private var typeStack: [TypeRef?] = []
    /// The named type of each typeStack entry, looked up once.
    private var typeDefStack: [NamedTypeDef?] = []
    private var parentTypeStack: [NamedTypeDef?] = []
    private var inputTypeStack: [TypeRef?] = []
    private var fieldDefStack: [FieldDef?] = []

    /// The output type of the current field, operation or fragment.
    var type: TypeRef? { typeStack.last ?? nil }
    /// The named type of `type`.
    var typeDef: NamedTypeDef? { typeDefStack.last ?? nil }
    /// The composite type whose selection set contains the current node.
    var parentType: NamedTypeDef? { parentTypeStack.last ?? nil }
    /// The expected type of the current value.
    var inputType: TypeRef? { inputTypeStack.last ?? nil }
    /// The expected type of the value enclosing the current value.
    var parentInputType: TypeRef? {
        inputTypeStack.count > 1 ? inputTypeStack[inputTypeStack.count - 2] : nil
    }
    var fieldDef: FieldDef? { fieldDefStack.last ?? nil }
    private(set) var directive: DirectiveDef?
    private(set) var argument: InputValueDef?
    /// True while the walker is inside a type-system definition.
    var isInTypeSystemDefinition = false

    func enterSelectionSet() {
        let named = typeDef
        parentTypeStack.append(named.flatMap { $0.kind.isComposite ? $0 : nil })
    }
    func leaveSelectionSet() { parentTypeStack.removeLast() }

    func enterField(_ node: Field) {
        var def: FieldDef?
        if let parent = parentType { def = schema.fieldDef(on: parent, name: node.name.value) }
        fieldDefStack.append(def)
        if let def, let named = schema.types[def.type.namedType], named.kind.isOutputType {
            typeStack.append(def.type)
            typeDefStack.append(named)
        } else {
            typeStack.append(nil)
            typeDefStack.append(nil)
        }
    }
    func leaveField() { fieldDefStack.removeLast(); popType() }

    private func pushType(_ ref: TypeRef?) {
        let named = ref.flatMap { schema.types[$0.namedType] }
        if let named, named.kind.isOutputType {
            typeStack.append(ref)
            typeDefStack.append(named)
        } else {
            typeStack.append(nil)
            typeDefStack.append(nil)
        }
    }
    private func popType() { typeStack.removeLast(); typeDefStack.removeLast() }

    func enterDirective(_ node: Directive) { directive = schema.directive(node.name.value) }
    func leaveDirective() { directive = nil }

    func enterOperation(_ node: OperationDefinition) {
        pushType(schema.rootType(node.operation).flatMap { $0.kind == .object ? .named($0.name) : nil })
    }
    func enterFragment(typeCondition: NamedType?) {
        if let cond = typeCondition {
            pushType(.named(cond.name.value))
        } else if let named = typeDef {
            typeStack.append(.named(named.name))
            typeDefStack.append(named)
        } else {
            typeStack.append(nil)
            typeDefStack.append(nil)
        }
    }
    /// Leaves an operation, inline fragment or fragment definition.
    func leaveTypedDefinition() { popType() }

    func enterVariableDefinition(_ node: VariableDefinition) {
        inputTypeStack.append(schema.inputTypeRef(TypeRef(node.type)))
    }
    func leaveVariableDefinition() { inputTypeStack.removeLast() }

    func enterArgument(_ node: Argument) {
        let def = (directive?.arguments ?? fieldDef?.arguments)?.first { $0.name == node.name.value }
        argument = def
        inputTypeStack.append(def.flatMap { schema.inputTypeRef($0.type) })
    }
    func leaveArgument() {
        argument = nil
        inputTypeStack.removeLast()
    }

    func enterList() {
        let listType = inputType?.nullable
        var item = listType
        if case .list(let inner)? = listType { item = inner }
        inputTypeStack.append(item.flatMap { schema.inputTypeRef($0) })
    }
    func enterObjectField(_ node: ObjectField) {
        var fieldType: TypeRef?
        if let t = inputType, let obj = schema.namedDef(of: t), obj.kind == .inputObject,
           let f = obj.inputField(node.name.value) {
            fieldType = schema.inputTypeRef(f.type)
        }
        inputTypeStack.append(fieldType)
    }
    /// Leaves a list value or an object field.
    func leaveListOrObjectField() {
        inputTypeStack.removeLast()
    }

    // MARK: Fragments

    private let fragmentsByName: [String: FragmentDefinition]
    private var spreadsCache: [ObjectIdentifier: [FragmentSpread]] = [:]
    private var referencedCache: [ObjectIdentifier: [FragmentDefinition]] = [:]

    /// The first fragment definition with this name.
    func fragment(_ name: String) -> FragmentDefinition? { fragmentsByName[name] }

    /// The fragment spreads in a selection set, nested fields and inline fragments included,
    /// not following spreads (order as graphql-js `getFragmentSpreads`).
    func fragmentSpreads(_ set: SelectionSet) -> [FragmentSpread] {
        let key = ObjectIdentifier(set)
        if let cached = spreadsCache[key] { return cached }
        var spreads: [FragmentSpread] = []
        var toVisit: [SelectionSet] = [set]
        while let s = toVisit.popLast() {
            for selection in s.selections {
                switch selection {
                case .fragmentSpread(let spread): spreads.append(spread)
                case .field(let f): if let sub = f.selectionSet { toVisit.append(sub) }
                case .inlineFragment(let i): toVisit.append(i.selectionSet)
                }
            }
        }
        spreadsCache[key] = spreads
        return spreads
    }

    /// Every fragment an operation uses, directly or through other fragments, each once.
    func recursivelyReferencedFragments(_ operation: OperationDefinition) -> [FragmentDefinition] {
        let key = ObjectIdentifier(operation)
        if let cached = referencedCache[key] { return cached }
        var fragments: [FragmentDefinition] = []
        var collected: Set<String> = []
        var toVisit: [SelectionSet] = [operation.selectionSet]
        while let set = toVisit.popLast() {
            for spread in fragmentSpreads(set) {
                let name = spread.name.value
                if collected.insert(name).inserted, let fragment = fragment(name) {
                    fragments.append(fragment)
                    toVisit.append(fragment.selectionSet)
                }
            }
        }
        referencedCache[key] = fragments
        return fragments
    }

    // MARK: Variable usages

    private var usagesCache: [ObjectIdentifier: [VariableUsage]] = [:]
    private lazy var documentMentionsVariables: Bool = document.source.body.contains(0x24)
    private var recursiveUsagesCache: [ObjectIdentifier: [VariableUsage]] = [:]

    /// Variables used in an operation or a fragment definition (not through spreads).
    func variableUsages(_ selectionSet: SelectionSet, directives: [Directive], rootType: NamedTypeDef?) -> [VariableUsage] {
        let key = ObjectIdentifier(selectionSet)
        if let cached = usagesCache[key] { return cached }
        var collector = VariableUsageCollector(schema: schema)
        collector.directives(directives, fieldDef: nil)
        collector.selectionSet(selectionSet, parent: rootType, fieldDef: nil)
        usagesCache[key] = collector.usages
        return collector.usages
    }

    /// Variables used by an operation, through every fragment it references.
    func recursiveVariableUsages(_ operation: OperationDefinition) -> [VariableUsage] {
        // A document without a `$` uses no variables.
        if !documentMentionsVariables { return [] }
        let key = ObjectIdentifier(operation)
        if let cached = recursiveUsagesCache[key] { return cached }
        let root = schema.rootType(operation.operation).flatMap { $0.kind == .object ? $0 : nil }
        var usages = variableUsages(operation.selectionSet, directives: operation.directives, rootType: root)
        for fragment in recursivelyReferencedFragments(operation) {
            let type = schema.type(fragment.typeCondition.name.value)
            usages += variableUsages(fragment.selectionSet, directives: fragment.directives,
                                     rootType: type.flatMap { $0.kind.isComposite ? $0 : nil })
        }
        recursiveUsagesCache[key] = usages
        return usages
    }
}

/// Walks one definition the way TypeInfo would and records each variable with the type its
/// position expects (graphql-js `getVariableUsages`). Variable definitions are not visited.
private struct VariableUsageCollector {
    let schema: GraphQLSchema
    var usages: [VariableUsage] = []

    init(schema: GraphQLSchema) { self.schema = schema }

    mutating func selectionSet(_ set: SelectionSet, parent: NamedTypeDef?, fieldDef: FieldDef?) {
        for selection in set.selections {
            switch selection {
            case .field(let field):
                let def = parent.flatMap { schema.fieldDef(on: $0, name: field.name.value) }
                for arg in field.arguments {
                    let argDef = def?.argument(arg.name.value)
                    value(arg.value, type: argDef.flatMap { schema.inputTypeRef($0.type) },
                          hasDefault: argDef?.defaultValue != nil)
                }
                directives(field.directives, fieldDef: def)
                if let sub = field.selectionSet {
                    let named = def.flatMap { schema.namedDef(of: $0.type) }
                    selectionSet(sub, parent: named.flatMap { $0.kind.isComposite ? $0 : nil }, fieldDef: def)
                }
            case .fragmentSpread(let spread):
                directives(spread.directives, fieldDef: fieldDef)
            case .inlineFragment(let inline):
                directives(inline.directives, fieldDef: fieldDef)
                let typeName = inline.typeCondition?.name.value ?? parent?.name
                let named = typeName.flatMap { schema.type($0) }
                let outputNamed = named.flatMap { $0.kind.isOutputType ? $0 : nil }
                selectionSet(inline.selectionSet, parent: outputNamed.flatMap { $0.kind.isComposite ? $0 : nil },
                             fieldDef: fieldDef)
            }
        }
    }

    mutating func directives(_ directives: [Directive], fieldDef: FieldDef?) {
        for directive in directives {
            // As TypeInfo: arguments of an unknown directive resolve against the enclosing field.
            let args = schema.directive(directive.name.value)?.arguments ?? fieldDef?.arguments
            for arg in directive.arguments {
                let argDef = args?.first { $0.name == arg.name.value }
                value(arg.value, type: argDef.flatMap { schema.inputTypeRef($0.type) },
                      hasDefault: argDef?.defaultValue != nil)
            }
        }
    }

    mutating func value(_ value: Value, type: TypeRef?, hasDefault: Bool) {
        switch value {
        case .variable(let v):
            usages.append(VariableUsage(node: v, type: type, hasLocationDefault: hasDefault))
        case .list(let items, _):
            var item = type?.nullable
            if case .list(let inner)? = item { item = inner }
            let itemType = item.flatMap { schema.inputTypeRef($0) }
            for element in items { self.value(element, type: itemType, hasDefault: false) }
        case .object(let fields, _):
            let obj = type.flatMap { schema.namedDef(of: $0) }
            for field in fields {
                if let obj, obj.kind == .inputObject, let def = obj.inputField(field.name.value) {
                    self.value(field.value, type: schema.inputTypeRef(def.type), hasDefault: def.defaultValue != nil)
                } else {
                    self.value(field.value, type: nil, hasDefault: false)
                }
            }
        default:
            break
        }
    }
}

/// Byte offset → line/column, with the line starts computed once.
struct LineIndex {
    private let source: Source
    private let lineStarts: [Int]

    init(_ source: Source) {
        self.source = source
        var starts = [0]
        let body = source.body
        var i = 0
        while i < body.count {
            let b = body[i]
            if b == 0x0A {
                starts.append(i + 1)
            } else if b == 0x0D {
                if i + 1 < body.count, body[i + 1] == 0x0A { i += 1 }
                starts.append(i + 1)
            }
            i += 1
        }
        lineStarts = starts
    }

    func location(of offset: Int) -> SourceLocation {
        // Last line start <= offset.
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= offset { lo = mid } else { hi = mid - 1 }
        }
        var column = 1
        let end = min(offset, source.body.count)
        var i = lineStarts[lo]
        while i < end {
            if source.body[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return SourceLocation(line: lo + 1, column: column)
    }
}

// MARK: Schema lookups used by validation and coercion

extension GraphQLSchema {
    /// `fieldDef(parent:name:)` for a parent already looked up.
    func fieldDef(on parent: NamedTypeDef, name: String) -> FieldDef? {
        if name.utf8.first == UInt8(ascii: "_") { return fieldDef(parent: parent.name, name: name) }
        return parent.field(name)
    }

    /// The named type a type reference ends in, when the schema defines it.
    func namedDef(of ref: TypeRef) -> NamedTypeDef? { types[ref.namedType] }

    /// `ref` when it names an input type of this schema, else nil (graphql-js `typeFromAST` + `isInputType`).
    func inputTypeRef(_ ref: TypeRef) -> TypeRef? {
        guard let t = types[ref.namedType], t.kind.isInputType else { return nil }
        return ref
    }

    /// Two composite types overlap when some object type can be both (graphql-js `doTypesOverlap`).
    func typesOverlap(_ a: NamedTypeDef, _ b: NamedTypeDef) -> Bool {
        if a.name == b.name { return true }
        if a.kind.isAbstract {
            if b.kind.isAbstract {
                return possibleTypes(a.name).contains { isSubType($0, of: b.name) }
            }
            return isSubType(b.name, of: a.name)
        }
        if b.kind.isAbstract { return isSubType(a.name, of: b.name) }
        return false
    }

    /// graphql-js `isTypeSubTypeOf`: whether a value of type `sub` may be used where `sup` is expected.
    func isTypeSubType(_ sub: TypeRef, of sup: TypeRef) -> Bool {
        if sub == sup { return true }
        if case .nonNull(let supInner) = sup {
            if case .nonNull(let subInner) = sub { return isTypeSubType(subInner, of: supInner) }
            return false
        }
        if case .nonNull(let subInner) = sub { return isTypeSubType(subInner, of: sup) }
        if case .list(let supInner) = sup {
            if case .list(let subInner) = sub { return isTypeSubType(subInner, of: supInner) }
            return false
        }
        if case .list = sub { return false }
        guard case .named(let supName) = sup, case .named(let subName) = sub,
              let supDef = types[supName], supDef.kind.isAbstract,
              let subDef = types[subName], subDef.kind == .interface || subDef.kind == .object
        else { return false }
        return isSubType(subName, of: supName) || subDef.interfaces.contains(supName)
    }
}
