/// Values of Correct Type (spec 5.6.1) and Input Object Required Fields (5.6.4): every literal
/// can be coerced to the type its position expects. Lists and objects in positions that are not
/// lists or input objects are checked as a whole and not entered.
final class ValuesOfCorrectTypeRule: ValidationRule {
    let hooks: Hooks = [.enterValue, .enterObjectField]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: Value) -> VisitAction {
        switch node {
        case .variable:
            return .proceed
        case .list:
            // TypeInfo has already stepped into the item type: the list's own position is the parent.
            if case .list? = context.parentInputType?.nullable { return .proceed }
            checkLeaf(node)
            return .skip
        case .object(let fields, _):
            guard let type = context.inputType, let named = context.schema.namedDef(of: type),
                  named.kind == .inputObject
            else {
                checkLeaf(node)
                return .skip
            }
            for field in named.inputFields where field.type.isNonNull && field.defaultValue == nil {
                if !fields.contains(where: { $0.name.value == field.name }) {
                    context.report(
                        "Field \"\(named.name).\(field.name)\" of required type \"\(field.type)\" was not provided.",
                        at: node.loc)
                }
            }
            return .proceed
        case .null:
            if let type = context.inputType, type.isNonNull {
                context.report("Expected value of type \"\(type)\", found null.", at: node.loc)
            }
            return .proceed
        default:
            checkLeaf(node)
            return .proceed
        }
    }

    func enter(_ node: ObjectField) -> VisitAction {
        guard context.inputType == nil,
              let parent = context.parentInputType.flatMap({ context.schema.namedDef(of: $0) }),
              parent.kind == .inputObject
        else { return .proceed }
        let name = node.name.value
        context.report(
            "Field \"\(name)\" is not defined by type \"\(parent.name)\"."
                + Suggestions.didYouMean(Suggestions.list(name, parent.inputFields.map(\.name))),
            at: node.loc)
        return .proceed
    }

    /// graphql-js `isValidValueNode`: the value against the (leaf) type of its position.
    private func checkLeaf(_ node: Value) {
        guard let locationType = context.inputType, let named = context.schema.namedDef(of: locationType) else { return }
        guard named.kind.isLeaf else {
            context.report("Expected value of type \"\(locationType)\", found \(Printer.print(node)).", at: node.loc)
            return
        }
        if case .failure(let error) = LeafCoercion.parseLiteral(node, type: named) {
            context.report(error.message, at: node.loc)
        }
    }
}
