/// Directives Are Unique Per Location (spec 5.7.3): a non-repeatable directive appears at most
/// once on a node.
final class UniqueDirectivesPerLocationRule: ValidationRule {
    private let context: ValidationContext
    private var unique: [String: Bool] = [:]

    init(_ context: ValidationContext) {
        self.context = context
        for d in context.schema.directives { unique[d.name] = !d.isRepeatable }
        for case .typeSystem(.directive(_, let name, _, let repeatable, _, _)) in context.document.definitions {
            unique[name.value] = !repeatable
        }
    }

    private func check(_ directives: [Directive]) {
        guard directives.count > 1 else { return }
        var seen: [String: Directive] = [:]
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

    func enter(_ node: OperationDefinition) -> VisitAction { check(node.directives); return .proceed }
    func enter(_ node: VariableDefinition) -> VisitAction { check(node.directives); return .proceed }
    func enter(_ node: Field) -> VisitAction { check(node.directives); return .proceed }
    func enter(_ node: FragmentSpread) -> VisitAction { check(node.directives); return .proceed }
    func enter(_ node: InlineFragment) -> VisitAction { check(node.directives); return .proceed }
    func enter(_ node: FragmentDefinition) -> VisitAction { check(node.directives); return .proceed }
}
