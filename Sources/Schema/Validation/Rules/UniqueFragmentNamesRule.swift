/// Fragment Name Uniqueness (spec 5.5.1.1).
final class UniqueFragmentNamesRule: ValidationRule {
    let hooks: Hooks = [.enterFragmentDefinition]
    private let context: ValidationContext
    private var known: [String: Name] = [:]
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: FragmentDefinition) -> VisitAction {
        let name = node.name.value
        if let first = known[name] {
            context.report("There can be only one fragment named \"\(name)\".", at: [first.loc, node.name.loc])
        } else {
            known[name] = node.name
        }
        return .proceed
    }
}
