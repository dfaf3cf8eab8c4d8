/// Operation Name Uniqueness (spec 5.2.1.1).
final class UniqueOperationNamesRule: ValidationRule {
    let hooks: Hooks = [.enterOperation]
    private let context: ValidationContext
    private var known: [String: Name] = [:]
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: OperationDefinition) -> VisitAction {
        if let name = node.name {
            if let first = known[name.value] {
                context.report("There can be only one operation named \"\(name.value)\".", at: [first.loc, name.loc])
            } else {
                known[name.value] = name
            }
        }
        return .proceed
    }
}
