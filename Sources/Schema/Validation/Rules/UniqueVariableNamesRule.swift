/// Variable Uniqueness (spec 5.8.1).
final class UniqueVariableNamesRule: ValidationRule {
    let hooks: Hooks = [.enterOperation]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: OperationDefinition) -> VisitAction {
        var order: [String] = []
        var groups: [String: [VariableDefinition]] = [:]
        for def in node.variableDefinitions {
            let name = def.variable.name.value
            if groups[name] == nil { order.append(name) }
            groups[name, default: []].append(def)
        }
        for name in order {
            guard let defs = groups[name], defs.count > 1 else { continue }
            context.report("There can be only one variable named \"$\(name)\".", at: defs.map(\.variable.name.loc))
        }
        return .proceed
    }
}
