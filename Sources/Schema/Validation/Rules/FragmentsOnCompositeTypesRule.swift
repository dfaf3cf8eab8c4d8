/// Fragments On Composite Types (spec 5.5.1.3).
final class FragmentsOnCompositeTypesRule: ValidationRule {
    let hooks: Hooks = [.enterInlineFragment, .enterFragmentDefinition]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: InlineFragment) -> VisitAction {
        if let cond = node.typeCondition, let t = context.schema.type(cond.name.value), !t.kind.isComposite {
            context.report("Fragment cannot condition on non composite type \"\(cond.name.value)\".", at: cond.loc)
        }
        return .proceed
    }

    func enter(_ node: FragmentDefinition) -> VisitAction {
        let cond = node.typeCondition
        if let t = context.schema.type(cond.name.value), !t.kind.isComposite {
            context.report(
                "Fragment \"\(node.name.value)\" cannot condition on non composite type \"\(cond.name.value)\".",
                at: cond.loc)
        }
        return .proceed
    }
}
