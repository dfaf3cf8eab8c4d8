/// Fragment spread is possible (spec 5.5.2.3): the fragment's type can overlap the parent type.
final class PossibleFragmentSpreadsRule: ValidationRule {
    let hooks: Hooks = [.enterInlineFragment, .enterFragmentSpread]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: InlineFragment) -> VisitAction {
        guard let fragType = context.typeDef, fragType.kind.isComposite,
              let parent = context.parentType
        else { return .proceed }
        if !context.schema.typesOverlap(fragType, parent) {
            context.report(
                "Fragment cannot be spread here as objects of type \"\(parent.name)\" can never be of type \"\(fragType.name)\".",
                at: node.loc)
        }
        return .proceed
    }

    func enter(_ node: FragmentSpread) -> VisitAction {
        let name = node.name.value
        guard let fragment = context.fragment(name),
              let fragType = context.schema.type(fragment.typeCondition.name.value), fragType.kind.isComposite,
              let parent = context.parentType
        else { return .proceed }
        if !context.schema.typesOverlap(fragType, parent) {
            context.report(
                "Fragment \"\(name)\" cannot be spread here as objects of type \"\(parent.name)\" can never be of type \"\(fragType.name)\".",
                at: node.loc)
        }
        return .proceed
    }
}
