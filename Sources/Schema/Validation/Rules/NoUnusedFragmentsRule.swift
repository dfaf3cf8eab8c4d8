/// Fragments Must Be Used (spec 5.5.1.4): every fragment is used by some operation.
final class NoUnusedFragmentsRule: ValidationRule {
    let hooks: Hooks = [.enterOperation, .enterFragmentDefinition, .leaveDocument]
    private let context: ValidationContext
    private var operations: [OperationDefinition] = []
    private var fragments: [FragmentDefinition] = []
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: OperationDefinition) -> VisitAction {
        operations.append(node)
        return .proceed
    }

    func enter(_ node: FragmentDefinition) -> VisitAction {
        fragments.append(node)
        return .proceed
    }

    func leave(_ node: Document) {
        var used: Set<String> = []
        for op in operations {
            for fragment in context.recursivelyReferencedFragments(op) { used.insert(fragment.name.value) }
        }
        for fragment in fragments where !used.contains(fragment.name.value) {
            context.report("Fragment \"\(fragment.name.value)\" is never used.", at: fragment.loc)
        }
    }
}
