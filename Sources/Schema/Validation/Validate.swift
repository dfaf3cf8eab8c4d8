// Validation: every rule of the spec in one traversal of the document, errors collected in rule
// order per node, as graphql-js `validation/validate.ts` (visitInParallel + visitWithTypeInfo).

/// Validates an executable document against the schema. Returns no errors when it is valid.
/// After `maxErrors` errors, one more says validation was aborted, and validation stops.
public func validate(schema: GraphQLSchema, document: Document, maxErrors: Int = 100) -> [GraphQLError] {
    let context = ValidationContext(schema: schema, document: document, maxErrors: maxErrors)
    var walker = ValidationWalker(context: context, rules: specifiedRules(context))
    walker.visit(document)
    return context.errors
}

/// The rules of the spec's Validation section, in graphql-js `specifiedRules` order (which
/// decides the order of errors found at the same node).
func specifiedRules(_ context: ValidationContext) -> [any ValidationRule] {
    [
        ExecutableDefinitionsRule(context),
        UniqueOperationNamesRule(context),
        LoneAnonymousOperationRule(context),
        SingleFieldSubscriptionsRule(context),
        KnownTypeNamesRule(context),
        FragmentsOnCompositeTypesRule(context),
        VariablesAreInputTypesRule(context),
        ScalarLeafsRule(context),
        FieldsOnCorrectTypeRule(context),
        UniqueFragmentNamesRule(context),
        KnownFragmentNamesRule(context),
        NoUnusedFragmentsRule(context),
        PossibleFragmentSpreadsRule(context),
        NoFragmentCyclesRule(context),
        UniqueVariableNamesRule(context),
        NoUndefinedVariablesRule(context),
        NoUnusedVariablesRule(context),
        KnownDirectivesRule(context),
        UniqueDirectivesPerLocationRule(context),
        KnownArgumentNamesRule(context),
        UniqueArgumentNamesRule(context),
        ValuesOfCorrectTypeRule(context),
        ProvidedRequiredArgumentsRule(context),
        VariablesInAllowedPositionRule(context),
        OverlappingFieldsCanBeMergedRule(context),
        UniqueInputFieldNamesRule(context),
    ]
}

/// What a rule wants after entering a node: go on into its children, or skip them (for this
/// rule only; the node's `leave` is then not called for it either).
enum VisitAction {
    case proceed
    case skip
}

/// Directive locations (`__DirectiveLocation`).
enum DirectiveLocationName: String {
    case query = "QUERY"
    case mutation = "MUTATION"
    case subscription = "SUBSCRIPTION"
    case field = "FIELD"
    case fragmentDefinition = "FRAGMENT_DEFINITION"
    case fragmentSpread = "FRAGMENT_SPREAD"
    case inlineFragment = "INLINE_FRAGMENT"
    case variableDefinition = "VARIABLE_DEFINITION"
    case schema = "SCHEMA"
    case scalar = "SCALAR"
    case object = "OBJECT"
    case fieldDefinition = "FIELD_DEFINITION"
    case argumentDefinition = "ARGUMENT_DEFINITION"
    case interface = "INTERFACE"
    case union = "UNION"
    case enumType = "ENUM"
    case enumValue = "ENUM_VALUE"
    case inputObject = "INPUT_OBJECT"
    case inputFieldDefinition = "INPUT_FIELD_DEFINITION"

    init(_ operation: OperationType) {
        switch operation {
        case .query: self = .query
        case .mutation: self = .mutation
        case .subscription: self = .subscription
        }
    }
}

/// A type-system node that carries directives (type-system definitions are invalid in a request
/// but are still walked, as graphql-js does, so that their directives and types are reported).
enum TypeSystemNode {
    case definition(TypeSystemDefinition)
    case field(FieldDefinition)
    case inputValue(InputValueDefinition)
    case enumValue(EnumValueDefinition)
}

/// The callbacks a rule implements; the walker calls a rule only for those.
struct Hooks: OptionSet {
    let rawValue: UInt32
    static let enterDocument = Hooks(rawValue: 1 << 0)
    static let leaveDocument = Hooks(rawValue: 1 << 1)
    static let enterOperation = Hooks(rawValue: 1 << 2)
    static let leaveOperation = Hooks(rawValue: 1 << 3)
    static let enterVariableDefinition = Hooks(rawValue: 1 << 4)
    static let leaveVariableDefinition = Hooks(rawValue: 1 << 5)
    static let enterSelectionSet = Hooks(rawValue: 1 << 6)
    static let leaveSelectionSet = Hooks(rawValue: 1 << 7)
    static let enterField = Hooks(rawValue: 1 << 8)
    static let leaveField = Hooks(rawValue: 1 << 9)
    static let enterFragmentSpread = Hooks(rawValue: 1 << 10)
    static let leaveFragmentSpread = Hooks(rawValue: 1 << 11)
    static let enterInlineFragment = Hooks(rawValue: 1 << 12)
    static let leaveInlineFragment = Hooks(rawValue: 1 << 13)
    static let enterFragmentDefinition = Hooks(rawValue: 1 << 14)
    static let leaveFragmentDefinition = Hooks(rawValue: 1 << 15)
    static let enterDirective = Hooks(rawValue: 1 << 16)
    static let leaveDirective = Hooks(rawValue: 1 << 17)
    static let enterArgument = Hooks(rawValue: 1 << 18)
    static let leaveArgument = Hooks(rawValue: 1 << 19)
    static let enterValue = Hooks(rawValue: 1 << 20)
    static let leaveValue = Hooks(rawValue: 1 << 21)
    static let enterObjectField = Hooks(rawValue: 1 << 22)
    static let leaveObjectField = Hooks(rawValue: 1 << 23)
    static let enterNamedType = Hooks(rawValue: 1 << 24)
    static let enterTypeSystemNode = Hooks(rawValue: 1 << 25)
    static let count = 26

    var index: Int { rawValue.trailingZeroBitCount }
}

/// A validation rule: callbacks for the nodes it cares about, each defaulting to nothing, and
/// `hooks` naming the callbacks it implements. Rules hold the ValidationContext and ask it
/// about the current node.
protocol ValidationRule: AnyObject {
    var hooks: Hooks { get }
    func enter(_ node: Document) -> VisitAction
    func leave(_ node: Document)
    func enter(_ node: OperationDefinition) -> VisitAction
    func leave(_ node: OperationDefinition)
    func enter(_ node: VariableDefinition) -> VisitAction
    func leave(_ node: VariableDefinition)
    func enter(_ node: SelectionSet) -> VisitAction
    func leave(_ node: SelectionSet)
    func enter(_ node: Field) -> VisitAction
    func leave(_ node: Field)
    func enter(_ node: FragmentSpread) -> VisitAction
    func leave(_ node: FragmentSpread)
    func enter(_ node: InlineFragment) -> VisitAction
    func leave(_ node: InlineFragment)
    func enter(_ node: FragmentDefinition) -> VisitAction
    func leave(_ node: FragmentDefinition)
    func enter(_ node: Directive, location: DirectiveLocationName) -> VisitAction
    func leave(_ node: Directive)
    func enter(_ node: Argument) -> VisitAction
    func leave(_ node: Argument)
    /// Every value, variables included.
    func enter(_ node: Value) -> VisitAction
    func leave(_ node: Value)
    func enter(_ node: ObjectField) -> VisitAction
    func leave(_ node: ObjectField)
    /// Type conditions, the named type inside variable definitions' types, and named types of
    /// type-system definitions.
    func enter(_ node: NamedType) -> VisitAction
    func enter(_ node: TypeSystemNode) -> VisitAction
}

extension ValidationRule {
    func enter(_ node: Document) -> VisitAction { .proceed }
    func leave(_ node: Document) {}
    func enter(_ node: OperationDefinition) -> VisitAction { .proceed }
    func leave(_ node: OperationDefinition) {}
    func enter(_ node: VariableDefinition) -> VisitAction { .proceed }
    func leave(_ node: VariableDefinition) {}
    func enter(_ node: SelectionSet) -> VisitAction { .proceed }
    func leave(_ node: SelectionSet) {}
    func enter(_ node: Field) -> VisitAction { .proceed }
    func leave(_ node: Field) {}
    func enter(_ node: FragmentSpread) -> VisitAction { .proceed }
    func leave(_ node: FragmentSpread) {}
    func enter(_ node: InlineFragment) -> VisitAction { .proceed }
    func leave(_ node: InlineFragment) {}
    func enter(_ node: FragmentDefinition) -> VisitAction { .proceed }
    func leave(_ node: FragmentDefinition) {}
    func enter(_ node: Directive, location: DirectiveLocationName) -> VisitAction { .proceed }
    func leave(_ node: Directive) {}
    func enter(_ node: Argument) -> VisitAction { .proceed }
    func leave(_ node: Argument) {}
    func enter(_ node: Value) -> VisitAction { .proceed }
    func leave(_ node: Value) {}
    func enter(_ node: ObjectField) -> VisitAction { .proceed }
    func leave(_ node: ObjectField) {}
    func enter(_ node: NamedType) -> VisitAction { .proceed }
    func enter(_ node: TypeSystemNode) -> VisitAction { .proceed }
}

/// Walks an executable document once, keeping the context's type information current and
/// calling every rule that is not skipping the current subtree. Visit order follows graphql-js
/// (`QueryDocumentKeys`).
struct ValidationWalker {
    let context: ValidationContext
    let rules: [any ValidationRule]
    /// Per hook: the indexes of the rules implementing it.
    private let rulesFor: [[Int]]
    /// Per rule: the depth of the node whose subtree it skips, nil when not skipping.
    private var skipping: [Int?]
    private var skips = 0
    private var depth = 0

    init(context: ValidationContext, rules: [any ValidationRule]) {
        self.context = context
        self.rules = rules
        self.skipping = Array(repeating: nil, count: rules.count)
        var lists = [[Int]](repeating: [], count: Hooks.count)
        for (i, rule) in rules.enumerated() {
            for bit in 0..<Hooks.count where rule.hooks.contains(Hooks(rawValue: 1 << UInt32(bit))) {
                lists[bit].append(i)
            }
        }
        rulesFor = lists
    }

    private mutating func enter(_ hook: Hooks, _ call: (any ValidationRule) -> VisitAction) {
        depth += 1
        for i in rulesFor[hook.index] where skipping[i] == nil {
            if call(rules[i]) == .skip { skipping[i] = depth; skips += 1 }
            if context.isAborted { return }
        }
    }

    private mutating func leave(_ hook: Hooks, _ call: (any ValidationRule) -> Void) {
        if skips > 0 {
            for i in rules.indices where skipping[i] == depth {
                skipping[i] = nil
                skips -= 1
            }
        }
        for i in rulesFor[hook.index] where skipping[i] == nil {
            call(rules[i])
            if context.isAborted { break }
        }
        depth -= 1
    }

    /// Leaves a node kind that has no leave callbacks.
    private mutating func leaveWithoutCallbacks() {
        if skips > 0 {
            for i in rules.indices where skipping[i] == depth {
                skipping[i] = nil
                skips -= 1
            }
        }
        depth -= 1
    }

    mutating func visit(_ document: Document) {
        enter(.enterDocument) { $0.enter(document) }
        for definition in document.definitions {
            if context.isAborted { return }
            switch definition {
            case .operation(let op): visit(op)
            case .fragment(let fragment): visit(fragment)
            case .typeSystem(let def): visit(def)
            }
        }
        if context.isAborted { return }
        leave(.leaveDocument) { $0.leave(document) }
    }

    private mutating func visit(_ named: NamedType) {
        if context.isAborted { return }
        enter(.enterNamedType) { $0.enter(named) }
        leaveWithoutCallbacks()
    }

    private mutating func visit(_ type: TypeNode) { visit(type.namedType) }

    // Type-system definitions, keys as graphql-js `QueryDocumentKeys`.
    private mutating func visit(_ def: TypeSystemDefinition) {
        context.isInTypeSystemDefinition = true
        defer { context.isInTypeSystemDefinition = false }
        enter(.enterTypeSystemNode) { $0.enter(TypeSystemNode.definition(def)) }
        switch def {
        case .schema(_, let directives, let operationTypes, _, _):
            visit(directives, location: .schema)
            for op in operationTypes { visit(op.type) }
        case .scalar(_, _, let directives, _, _):
            visit(directives, location: .scalar)
        case .object(_, _, let interfaces, let directives, let fields, _, _),
             .interface(_, _, let interfaces, let directives, let fields, _, _):
            for i in interfaces { visit(i) }
            if case .object = def { visit(directives, location: .object) } else { visit(directives, location: .interface) }
            for field in fields {
                if context.isAborted { return }
                enter(.enterTypeSystemNode) { $0.enter(TypeSystemNode.field(field)) }
                for arg in field.arguments { visit(arg, location: .argumentDefinition) }
                visit(field.type)
                visit(field.directives, location: .fieldDefinition)
                if context.isAborted { return }
                leaveWithoutCallbacks()
            }
        case .union(_, _, let directives, let types, _, _):
            visit(directives, location: .union)
            for t in types { visit(t) }
        case .enumType(_, _, let directives, let values, _, _):
            visit(directives, location: .enumType)
            for value in values {
                if context.isAborted { return }
                enter(.enterTypeSystemNode) { $0.enter(TypeSystemNode.enumValue(value)) }
                visit(value.directives, location: .enumValue)
                if context.isAborted { return }
                leaveWithoutCallbacks()
            }
        case .inputObject(_, _, let directives, let fields, let isExtension, _):
            visit(directives, location: .inputObject)
            // As graphql-js: only fields of an input definition (not extension) are input fields.
            for field in fields { visit(field, location: isExtension ? .argumentDefinition : .inputFieldDefinition) }
        case .directive(_, _, let arguments, _, _, _):
            for arg in arguments { visit(arg, location: .argumentDefinition) }
        }
        if context.isAborted { return }
        leaveWithoutCallbacks()
    }

    private mutating func visit(_ value: InputValueDefinition, location: DirectiveLocationName) {
        if context.isAborted { return }
        enter(.enterTypeSystemNode) { $0.enter(TypeSystemNode.inputValue(value)) }
        visit(value.type)
        if let d = value.defaultValue { visit(d) }
        visit(value.directives, location: location)
        if context.isAborted { return }
        leaveWithoutCallbacks()
    }

    private mutating func visit(_ op: OperationDefinition) {
        context.enterOperation(op)
        defer { context.leaveTypedDefinition() }
        enter(.enterOperation) { $0.enter(op) }
        for v in op.variableDefinitions {
            if context.isAborted { return }
            visit(v)
        }
        visit(op.directives, location: DirectiveLocationName(op.operation))
        visit(op.selectionSet)
        if context.isAborted { return }
        leave(.leaveOperation) { $0.leave(op) }
    }

    private mutating func visit(_ node: VariableDefinition) {
        context.enterVariableDefinition(node)
        defer { context.leaveVariableDefinition() }
        enter(.enterVariableDefinition) { $0.enter(node) }
        visit(node.type)
        if let value = node.defaultValue { visit(value) }
        visit(node.directives, location: .variableDefinition)
        if context.isAborted { return }
        leave(.leaveVariableDefinition) { $0.leave(node) }
    }

    private mutating func visit(_ set: SelectionSet) {
        if context.isAborted { return }
        context.enterSelectionSet()
        defer { context.leaveSelectionSet() }
        enter(.enterSelectionSet) { $0.enter(set) }
        for selection in set.selections {
            if context.isAborted { return }
            switch selection {
            case .field(let f): visit(f)
            case .fragmentSpread(let s): visit(s)
            case .inlineFragment(let i): visit(i)
            }
        }
        if context.isAborted { return }
        leave(.leaveSelectionSet) { $0.leave(set) }
    }

    private mutating func visit(_ field: Field) {
        context.enterField(field)
        defer { context.leaveField() }
        enter(.enterField) { $0.enter(field) }
        for arg in field.arguments {
            if context.isAborted { return }
            visit(arg)
        }
        visit(field.directives, location: .field)
        if let sub = field.selectionSet { visit(sub) }
        if context.isAborted { return }
        leave(.leaveField) { $0.leave(field) }
    }

    private mutating func visit(_ spread: FragmentSpread) {
        enter(.enterFragmentSpread) { $0.enter(spread) }
        visit(spread.directives, location: .fragmentSpread)
        if context.isAborted { return }
        leave(.leaveFragmentSpread) { $0.leave(spread) }
    }

    private mutating func visit(_ inline: InlineFragment) {
        context.enterFragment(typeCondition: inline.typeCondition)
        defer { context.leaveTypedDefinition() }
        enter(.enterInlineFragment) { $0.enter(inline) }
        if let cond = inline.typeCondition { visit(cond) }
        visit(inline.directives, location: .inlineFragment)
        visit(inline.selectionSet)
        if context.isAborted { return }
        leave(.leaveInlineFragment) { $0.leave(inline) }
    }

    private mutating func visit(_ fragment: FragmentDefinition) {
        context.enterFragment(typeCondition: fragment.typeCondition)
        defer { context.leaveTypedDefinition() }
        enter(.enterFragmentDefinition) { $0.enter(fragment) }
        visit(fragment.typeCondition)
        visit(fragment.directives, location: .fragmentDefinition)
        visit(fragment.selectionSet)
        if context.isAborted { return }
        leave(.leaveFragmentDefinition) { $0.leave(fragment) }
    }

    private mutating func visit(_ directives: [Directive], location: DirectiveLocationName) {
        for directive in directives {
            if context.isAborted { return }
            context.enterDirective(directive)
            defer { context.leaveDirective() }
            enter(.enterDirective) { $0.enter(directive, location: location) }
            for arg in directive.arguments {
                if context.isAborted { return }
                visit(arg)
            }
            if context.isAborted { return }
            leave(.leaveDirective) { $0.leave(directive) }
        }
    }

    private mutating func visit(_ arg: Argument) {
        context.enterArgument(arg)
        defer { context.leaveArgument() }
        enter(.enterArgument) { $0.enter(arg) }
        visit(arg.value)
        if context.isAborted { return }
        leave(.leaveArgument) { $0.leave(arg) }
    }

    private mutating func visit(_ value: Value) {
        if context.isAborted { return }
        switch value {
        case .list(let items, _):
            context.enterList()
            defer { context.leaveListOrObjectField() }
            enter(.enterValue) { $0.enter(value) }
            for item in items {
                if context.isAborted { return }
                visit(item)
            }
            if context.isAborted { return }
            leave(.leaveValue) { $0.leave(value) }
            return
        case .object(let fields, _):
            enter(.enterValue) { $0.enter(value) }
            for field in fields {
                if context.isAborted { return }
                context.enterObjectField(field)
                defer { context.leaveListOrObjectField() }
                enter(.enterObjectField) { $0.enter(field) }
                visit(field.value)
                if context.isAborted { return }
                leave(.leaveObjectField) { $0.leave(field) }
            }
        default:
            enter(.enterValue) { $0.enter(value) }
        }
        if context.isAborted { return }
        leave(.leaveValue) { $0.leave(value) }
    }
}
