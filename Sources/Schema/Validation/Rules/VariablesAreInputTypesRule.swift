/// Variables Are Input Types (spec 5.8.2).
final class VariablesAreInputTypesRule: ValidationRule {
    let hooks: Hooks = [.enterVariableDefinition]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: VariableDefinition) -> VisitAction {
        let ref = TypeRef(node.type)
        if let t = context.schema.type(ref.namedType), !t.kind.isInputType {
            context.report(
                "Variable \"$\(node.variable.name.value)\" cannot be non-input type \"\(ref)\".", at: node.type.loc)
        }
        return .proceed
    }
}
