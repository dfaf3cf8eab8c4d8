/// Executable Definitions (spec 5.1.1): a request holds only operations and fragments.
final class ExecutableDefinitionsRule: ValidationRule {
    let hooks: Hooks = [.enterDocument]
    private let context: ValidationContext
    init(_ context: ValidationContext) { self.context = context }

    func enter(_ node: Document) -> VisitAction {
        for case .typeSystem(let definition) in node.definitions {
            let name: String
            switch definition {
            case .schema: name = "schema"
            case .scalar(_, let n, _, _, _), .object(_, let n, _, _, _, _, _), .interface(_, let n, _, _, _, _, _),
                 .union(_, let n, _, _, _, _), .enumType(_, let n, _, _, _, _), .inputObject(_, let n, _, _, _, _),
                 .directive(_, let n, _, _, _, _):
                name = "\"\(n.value)\""
            }
            context.report("The \(name) definition is not executable.", at: definition.loc)
        }
        return .proceed
    }
}
