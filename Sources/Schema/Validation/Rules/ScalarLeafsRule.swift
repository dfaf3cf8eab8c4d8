/// Leaf Field Selections (spec 5.3.3): leaves have no selection, composites must have one.
final class ScalarLeafsRule: ValidationRule {
    let hooks: Hooks = [.enterField]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: Field) -> VisitAction {
        guard let type = context.type, let named = context.typeDef else { return .proceed }
        let name = node.name.value
        if named.kind.isLeaf {
            if let set = node.selectionSet {
                context.report(
                    "Field \"\(name)\" must not have a selection since type \"\(type)\" has no subfields.", at: set.loc)
            }
        } else if node.selectionSet == nil {
            context.report(
                "Field \"\(name)\" of type \"\(type)\" must have a selection of subfields. Did you mean \"\(name) { ... }\"?",
                at: node.loc)
        }
        return .proceed
    }
}
