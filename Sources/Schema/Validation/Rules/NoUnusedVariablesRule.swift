/// All Variables Used (spec 5.8.4): every variable an operation defines is used, directly or
/// through its fragments.
final class NoUnusedVariablesRule: ValidationRule {
    let hooks: Hooks = [.enterOperation, .enterVariableDefinition, .leaveOperation]
    private let context: ValidationContext
    private var definitions: [VariableDefinition] = []
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: OperationDefinition) -> VisitAction {
        definitions = []
        return .proceed
    }

    func enter(_ node: VariableDefinition) -> VisitAction {
        definitions.append(node)
        return .proceed
    }

    func leave(_ node: OperationDefinition) {
        var used: Set<String> = []
        for usage in context.recursiveVariableUsages(node) { used.insert(usage.node.name.value) }
        for def in definitions where !used.contains(def.variable.name.value) {
            let name = def.variable.name.value
            let message = node.name.map { "Variable \"$\(name)\" is never used in operation \"\($0.value)\"." }
                ?? "Variable \"$\(name)\" is never used."
            context.report(message, at: def.loc)
        }
    }
}
