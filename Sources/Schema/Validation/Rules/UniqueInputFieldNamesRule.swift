/// Input Object Field Uniqueness (spec 5.6.3).
final class UniqueInputFieldNamesRule: ValidationRule {
    let hooks: Hooks = [.enterValue, .leaveValue, .enterObjectField]
    private let context: ValidationContext
    private var stack: [[String: Name]] = []
    private var known: [String: Name] = [:]
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: Value) -> VisitAction {
        if case .object = node {
            stack.append(known)
            known = [:]
        }
        return .proceed
    }

    func leave(_ node: Value) {
        if case .object = node, let previous = stack.popLast() { known = previous }
    }

    func enter(_ node: ObjectField) -> VisitAction {
        let name = node.name.value
        if let first = known[name] {
            context.report("There can be only one input field named \"\(name)\".", at: [first.loc, node.name.loc])
        } else {
            known[name] = node.name
        }
        return .proceed
    }
}
