/// Fragment spread target defined (spec 5.5.2.1).
final class KnownFragmentNamesRule: ValidationRule {
    let hooks: Hooks = [.enterFragmentSpread]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: FragmentSpread) -> VisitAction {
        if context.fragment(node.name.value) == nil {
            context.report("Unknown fragment \"\(node.name.value)\".", at: node.name.loc)
        }
        return .proceed
    }
}
