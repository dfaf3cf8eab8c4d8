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

/// The directive locations of executable documents (`__DirectiveLocation`).
enum ExecutableDirectiveLocation: String {
    case query = "QUERY"
    case mutation = "MUTATION"
    case subscription = "SUBSCRIPTION"
    case field = "FIELD"
    case fragmentDefinition = "FRAGMENT_DEFINITION"
    case fragmentSpread = "FRAGMENT_SPREAD"
    case inlineFragment = "INLINE_FRAGMENT"
    case variableDefinition = "VARIABLE_DEFINITION"

    init(_ operation: OperationType) {
        switch operation {
        case .query: self = .query
        case .mutation: self = .mutation
        case .subscription: self = .subscription
        }
    }
}

/// A validation rule: callbacks for the nodes it cares about, each defaulting to nothing.
/// Rules hold the ValidationContext and ask it about the current node.
protocol ValidationRule: AnyObject {
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
    func enter(_ node: Directive, location: ExecutableDirectiveLocation) -> VisitAction
    func leave(_ node: Directive)
    func enter(_ node: Argument) -> VisitAction
    func leave(_ node: Argument)
    /// Every value, variables included.
    func enter(_ node: Value) -> VisitAction
    func leave(_ node: Value)
    func enter(_ node: ObjectField) -> VisitAction
    func leave(_ node: ObjectField)
    /// Type conditions and the named type inside variable definitions' types.
    func enter(_ node: NamedType) -> VisitAction
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
    func enter(_ node: Directive, location: ExecutableDirectiveLocation) -> VisitAction { .proceed }
    func leave(_ node: Directive) {}
    func enter(_ node: Argument) -> VisitAction { .proceed }
    func leave(_ node: Argument) {}
    func enter(_ node: Value) -> VisitAction { .proceed }
    func leave(_ node: Value) {}
    func enter(_ node: ObjectField) -> VisitAction { .proceed }
    func leave(_ node: ObjectField) {}
    func enter(_ node: NamedType) -> VisitAction { .proceed }
}

/// Walks an executable document once, keeping the context's type information current and
/// calling every rule that is not skipping the current subtree. Visit order follows graphql-js
/// (`QueryDocumentKeys`). Type-system definitions are only seen by ExecutableDefinitions.
struct ValidationWalker {
    let context: ValidationContext
    let rules: [any ValidationRule]
    /// Per rule: the depth of the node whose subtree it skips, nil when not skipping.
    private var skipping: [Int?]
    private var depth = 0

    init(context: ValidationContext, rules: [any ValidationRule]) {
        self.context = context
        self.rules = rules
        self.skipping = Array(repeating: nil, count: rules.count)
    }

    private mutating func enter(_ call: (any ValidationRule) -> VisitAction) {
        depth += 1
        for i in rules.indices where skipping[i] == nil {
            if call(rules[i]) == .skip { skipping[i] = depth }
            if context.isAborted { return }
        }
    }

    private mutating func leave(_ call: (any ValidationRule) -> Void) {
        for i in rules.indices {
            if let d = skipping[i] {
                if d == depth { skipping[i] = nil }
            } else {
                call(rules[i])
                if context.isAborted { break }
            }
        }
        depth -= 1
    }

    mutating func visit(_ document: Document) {
        enter { $0.enter(document) }
        for definition in document.definitions {
            if context.isAborted { return }
            switch definition {
            case .operation(let op): visit(op)
            case .fragment(let fragment): visit(fragment)
            case .typeSystem: break
            }
        }
        if context.isAborted { return }
        leave { $0.leave(document) }
    }

    private mutating func visit(_ op: OperationDefinition) {
        context.enterOperation(op)
        defer { context.leaveTypedDefinition() }
        enter { $0.enter(op) }
        for v in op.variableDefinitions {
            if context.isAborted { return }
            visit(v)
        }
        visit(op.directives, location: ExecutableDirectiveLocation(op.operation))
        visit(op.selectionSet)
        if context.isAborted { return }
        leave { $0.leave(op) }
    }

    private mutating func visit(_ node: VariableDefinition) {
        context.enterVariableDefinition(node)
        defer { context.leaveVariableDefinition() }
        enter { $0.enter(node) }
        if context.isAborted { return }
        enter { $0.enter(node.type.namedType) }
        leave { _ in }
        if let value = node.defaultValue { visit(value) }
        visit(node.directives, location: .variableDefinition)
        if context.isAborted { return }
        leave { $0.leave(node) }
    }

    private mutating func visit(_ set: SelectionSet) {
        if context.isAborted { return }
        context.enterSelectionSet()
        defer { context.leaveSelectionSet() }
        enter { $0.enter(set) }
        for selection in set.selections {
            if context.isAborted { return }
            switch selection {
            case .field(let f): visit(f)
            case .fragmentSpread(let s): visit(s)
            case .inlineFragment(let i): visit(i)
            }
        }
        if context.isAborted { return }
        leave { $0.leave(set) }
    }

    private mutating func visit(_ field: Field) {
        context.enterField(field)
        defer { context.leaveField() }
        enter { $0.enter(field) }
        for arg in field.arguments {
            if context.isAborted { return }
            visit(arg)
        }
        visit(field.directives, location: .field)
        if let sub = field.selectionSet { visit(sub) }
        if context.isAborted { return }
        leave { $0.leave(field) }
    }

    private mutating func visit(_ spread: FragmentSpread) {
        enter { $0.enter(spread) }
        visit(spread.directives, location: .fragmentSpread)
        if context.isAborted { return }
        leave { $0.leave(spread) }
    }

    private mutating func visit(_ inline: InlineFragment) {
        context.enterFragment(typeCondition: inline.typeCondition)
        defer { context.leaveTypedDefinition() }
        enter { $0.enter(inline) }
        if let cond = inline.typeCondition, !context.isAborted {
            enter { $0.enter(cond) }
            leave { _ in }
        }
        visit(inline.directives, location: .inlineFragment)
        visit(inline.selectionSet)
        if context.isAborted { return }
        leave { $0.leave(inline) }
    }

    private mutating func visit(_ fragment: FragmentDefinition) {
        context.enterFragment(typeCondition: fragment.typeCondition)
        defer { context.leaveTypedDefinition() }
        enter { $0.enter(fragment) }
        if context.isAborted { return }
        enter { $0.enter(fragment.typeCondition) }
        leave { _ in }
        visit(fragment.directives, location: .fragmentDefinition)
        visit(fragment.selectionSet)
        if context.isAborted { return }
        leave { $0.leave(fragment) }
    }

    private mutating func visit(_ directives: [Directive], location: ExecutableDirectiveLocation) {
        for directive in directives {
            if context.isAborted { return }
            context.enterDirective(directive)
            defer { context.leaveDirective() }
            enter { $0.enter(directive, location: location) }
            for arg in directive.arguments {
                if context.isAborted { return }
                visit(arg)
            }
            if context.isAborted { return }
            leave { $0.leave(directive) }
        }
    }

    private mutating func visit(_ arg: Argument) {
        context.enterArgument(arg)
        defer { context.leaveArgument() }
        enter { $0.enter(arg) }
        visit(arg.value)
        if context.isAborted { return }
        leave { $0.leave(arg) }
    }

    private mutating func visit(_ value: Value) {
        if context.isAborted { return }
        switch value {
        case .list(let items, _):
            context.enterList()
            defer { context.leaveListOrObjectField() }
            enter { $0.enter(value) }
            for item in items {
                if context.isAborted { return }
                visit(item)
            }
            if context.isAborted { return }
            leave { $0.leave(value) }
            return
        case .object(let fields, _):
            enter { $0.enter(value) }
            for field in fields {
                if context.isAborted { return }
                context.enterObjectField(field)
                defer { context.leaveListOrObjectField() }
                enter { $0.enter(field) }
                visit(field.value)
                if context.isAborted { return }
                leave { $0.leave(field) }
            }
        default:
            enter { $0.enter(value) }
        }
        if context.isAborted { return }
        leave { $0.leave(value) }
    }
}
