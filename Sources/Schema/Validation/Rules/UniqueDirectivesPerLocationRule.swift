/// Directives Are Unique Per Location (spec 5.7.3): a non-repeatable directive appears at most
/// once on a node.
final class UniqueDirectivesPerLocationRule: ValidationRule {
    let hooks: Hooks = [.enterOperation, .enterVariableDefinition, .enterField, .enterFragmentSpread, .enterInlineFragment, .enterFragmentDefinition, .enterTypeSystemNode]
    private let context: ValidationContext
    private var unique: [String: Bool] = [:]

    init(_ context: ValidationContext) {
        self.context = context
        for d in context.schema.directives { unique[d.name] = !d.isRepeatable }
        for case .typeSystem(.directive(_, let name, _, let repeatable, _, _)) in context.document.definitions {
            unique[name.value] = !repeatable
        }
    }

    /// Directives seen on the schema definition and its extensions, and per type name on a type's
    /// definition and extensions (type-system documents only).
    private var schemaSeen: [String: Directive] = [:]
    private var typeSeen: [String: [String: Directive]] = [:]

    private func check(_ directives: [Directive]) {
        guard directives.count > 1 else { return }
        var seen: [String: Directive] = [:]
        check(directives, &seen)
    }

    private func check(_ directives: [Directive], _ seen: inout [String: Directive]) {
        for directive in directives {
            let name = directive.name.value
            guard unique[name] == true else { continue }
            if let first = seen[name] {
                context.report("The directive \"@\(name)\" can only be used once at this location.",
                               at: [first.loc, directive.loc])
            } else {
                seen[name] = directive
            }
        }
    }

    func enter(_ node: TypeSystemNode) -> VisitAction {
        switch node {
        case .definition(let def):
            switch def {
            case .schema(_, let directives, _, _, _):
                check(directives, &schemaSeen)
            case .scalar(_, let n, let d, _, _), .object(_, let n, _, let d, _, _, _), .interface(_, let n, _, let d, _, _, _),
                 .union(_, let n, let d, _, _, _), .enumType(_, let n, let d, _, _, _), .inputObject(_, let n, let d, _, _, _):
                var seen = typeSeen[n.value] ?? [:]
                check(d, &seen)
                typeSeen[n.value] = seen
            case .directive:
                break
            }
        case .field(let f): check(f.directives)
        case .inputValue(let v): check(v.directives)
        case .enumValue(let v): check(v.directives)
        }
        return .proceed
    }

    func enter(_ node: OperationDefinition) -> VisitAction { check(node.directives); return .proceed }
    func enter(_ node: VariableDefinition) -> VisitAction { check(node.directives); return .proceed }
    func enter(_ node: Field) -> VisitAction { check(node.directives); return .proceed }
    func enter(_ node: FragmentSpread) -> VisitAction { check(node.directives); return .proceed }
    func enter(_ node: InlineFragment) -> VisitAction { check(node.directives); return .proceed }
    func enter(_ node: FragmentDefinition) -> VisitAction { check(node.directives); return .proceed }
}
