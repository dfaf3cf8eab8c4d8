/// All Variable Uses Defined (spec 5.8.3): every variable an operation uses, through its
/// fragments, is defined by the operation.
final class NoUndefinedVariablesRule: ValidationRule {
    let hooks: Hooks = [.enterOperation, .enterVariableDefinition, .leaveOperation]
    private let context: ValidationContext
    private var defined: Set<String> = []
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: OperationDefinition) -> VisitAction {
        defined = []
        return .proceed
    }

    func enter(_ node: VariableDefinition) -> VisitAction {
        defined.insert(node.variable.name.value)
        return .proceed
    }

    func leave(_ node: OperationDefinition) {
        for usage in context.recursiveVariableUsages(node) {
            let name = usage.node.name.value
            guard !defined.contains(name) else { continue }
            let message = node.name.map { "Variable \"$\(name)\" is not defined by operation \"\($0.value)\"." }
                ?? "Variable \"$\(name)\" is not defined."
            context.report(message, at: [usage.node.loc, node.loc])
        }
    }
}
