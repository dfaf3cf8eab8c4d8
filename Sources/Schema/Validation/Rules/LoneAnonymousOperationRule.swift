/// Lone Anonymous Operation (spec 5.2.2.1): an anonymous operation must be the only one.
final class LoneAnonymousOperationRule: ValidationRule {
    let hooks: Hooks = [.enterDocument, .enterOperation]
    private let context: ValidationContext
    private var operationCount = 0
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: Document) -> VisitAction {
        operationCount = node.operations.count
        return .proceed
    }

    func enter(_ node: OperationDefinition) -> VisitAction {
        if node.name == nil && operationCount > 1 {
            context.report("This anonymous operation must be the only defined operation.", at: node.loc)
        }
        return .proceed
    }
}
